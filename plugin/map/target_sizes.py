"""How large the targets are and how many are drawn, from the deposit model's footprints and the user's settings.

- The largest target (a camp where the model gives both scales): the user's (MAX_TARGET_KM2), else the model's camp
  footprint (`footprints.camp`), else its one footprint (`footprint`, a user's model of the older form).
- Prospects: where the model's deposit footprint (`footprints.deposit`) is smaller than the largest target, each
  target holds its prospects, none larger than one deposit's footprint.
- The smallest target: the user's (MIN_TARGET_KM2), else MIN_FOOTPRINT_SHARE of one deposit's footprint, lowered
  where the top share could not hold the work list's count of targets that large (a scene smaller than a district:
  its top share divided by the count) and never over half the largest target; never under MIN_TARGET_CELLS
  analysis cells.
- The work list: the best `count` targets (WORK_LIST unless set); the rest of the top share stays in the surface.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..decisions import CORE
from ..errors import LodestarError

# decision numbers: their reasons and provenance are in plugin/decisions.py
MIN_TARGET_CELLS = CORE.min_target_cells
MIN_FOOTPRINT_SHARE = CORE.min_footprint_share
WORK_LIST = CORE.work_list


@dataclass(frozen=True)
class TargetSizes:
    """The sizes the targets are drawn at (km2) and the work list's length, each with where it comes from.
    `prospect_km2`: the largest prospect inside a target (None: targets hold no prospects)."""

    min_km2: float
    max_km2: float | None
    prospect_km2: float | None
    count: int
    min_source: str
    max_source: str

    def least_cells(self, pixel_area_m2: float) -> int:
        """The smallest target in whole analysis cells (rounded up), never under MIN_TARGET_CELLS."""
        return max(math.ceil(self.min_km2 * 1e6 / pixel_area_m2 - 1e-9), MIN_TARGET_CELLS)

    def most_cells(self, km2: float | None, pixel_area_m2: float) -> int | None:
        """A cap of `km2` in whole analysis cells (rounded down; None: no cap), never under twice the smallest target
        (a target cut in two leaves no speck)."""
        if km2 is None:
            return None
        return max(math.floor(km2 * 1e6 / pixel_area_m2 + 1e-9), 2 * self.least_cells(pixel_area_m2))


def target_sizes(deposit_model: dict, pixel_area_m2: float, selected_m2: float, *, min_km2: float | None = None,
                 max_km2: float | None = None, count: int | None = None,
                 prospect_km2: float | None = None) -> TargetSizes:
    """The targets' sizes and count for a run (see the module docstring): `selected_m2` is the area of the top share,
    `min_km2` / `max_km2` / `count` / `prospect_km2` the user's settings (None: the deposit model's and
    WORK_LIST)."""
    count = WORK_LIST if count is None else int(count)
    if count < 1:
        raise LodestarError(f"Draw at least 1 target, not {count}.")
    if prospect_km2 is not None and not prospect_km2 > 0:
        raise LodestarError(f"The largest prospect must be above 0 km2, not {prospect_km2:g}.")
    largest, max_source = target_cap(deposit_model, max_km2)
    deposit: dict = ({"km2": float(prospect_km2), "of": "one prospect as set"} if prospect_km2 else
                     _footprint(deposit_model, "deposit"))
    prospect = deposit["km2"] if deposit and (largest is None or deposit["km2"] < largest) else None
    floor_km2 = MIN_TARGET_CELLS * pixel_area_m2 / 1e6
    if min_km2 is not None:
        if not min_km2 > 0:
            raise LodestarError(f"The smallest target must be above 0 km2, not {min_km2:g}.")
        if largest and min_km2 > largest:
            raise LodestarError(f"The smallest target ({min_km2:g} km2) is larger than the largest ({largest:g} "
                                "km2): lower it, or raise the largest target.")
        smallest, min_source = float(min_km2), "set for this run"
    else:
        single = deposit or _footprint(deposit_model, "")
        smallest = MIN_FOOTPRINT_SHARE * single["km2"] if single else floor_km2
        min_source = (f"a quarter of the footprint of {single.get('of', 'one deposit')}" if single
                      else "no footprint known for this deposit model")
        share = selected_m2 / 1e6 / count
        if share < smallest:
            smallest, min_source = share, (f"the top share ({selected_m2 / 1e6:,.3g} km2) divided by the "
                                           f"{count} targets of the work list")
        if largest and smallest > largest / 2:
            smallest, min_source = largest / 2, "half the largest target"
    if smallest < floor_km2:
        smallest, min_source = floor_km2, f"{MIN_TARGET_CELLS} analysis cells, the least a target can be"
    if prospect is not None and prospect <= smallest:
        prospect = None
    return TargetSizes(smallest, largest, prospect, count, min_source, max_source)


def target_cap(deposit_model: dict, asked_km2: float | None) -> tuple:
    """(the largest target in km2, where that figure comes from): the user's, else the deposit model's camp footprint,
    else its one footprint."""
    if asked_km2:
        if asked_km2 <= 0:
            raise LodestarError(f"The largest target must be above 0 km2, not {asked_km2:g}.")
        return float(asked_km2), "set for this run"
    footprint = _footprint(deposit_model, "camp") or _footprint(deposit_model, "")
    if footprint:
        return float(footprint["km2"]), (f"the footprint of {footprint.get('of', 'one system')} "
                                         f"({footprint.get('source', 'the deposit model')})")
    return None, "no footprint known for this deposit model"


def _footprint(deposit_model: dict, scale: str) -> dict:
    """The model's footprint at `scale` ('deposit', 'camp'; '' for its one `footprint`), {} when it gives none."""
    footprint = ((deposit_model.get("footprints") or {}).get(scale) if scale else deposit_model.get("footprint")) or {}
    return footprint if footprint.get("km2") else {}
