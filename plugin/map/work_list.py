"""The targets a team can follow up: the top share of a surface delineated, ranked, the best judged by the chain, the
best `count` drawn with the prospects inside each, the rest said in one line.

Delineation (`favourability/targets.py`) cuts the top share at its peaks, none larger than the largest target nor
smaller than the smallest (`target_sizes`); ranking and fields are `target_table`'s. The work list is drawn from the
tiers of the top share (2, 5, 10 % of the area, none above the share asked for, then the share itself), tightest first:
the first tier drawn is the smallest that holds the best the chain judges (`judged`, as many as the report lists; or the
whole list when shorter), and while the list is short of `count` each wider tier adds its targets that share no cell
with those already drawn, ranked after them. Delineated on a wider share than they need, the best targets would reach
down into cells the surface ranks below cells left undrawn, which both dilutes what they hold per km2 (the ranking's
measure) and spends the field team's area on worse ground; the rest of the top share stays in the surface. Prospects:
inside each drawn target larger than one deposit's footprint (where the deposit model has one smaller than its largest
target: a camp and its prospects, a porphyry district and its systems), the target's own best cells (the share of it
asked for the targets, at least one smallest target) split at their peaks on the target's own ranks, none larger than
one deposit's footprint nor smaller than the smallest target, ranked by the same rule; a piece of those best cells apart
from the others, too small to be a prospect of its own, joins the nearest prospect (which it may take past one deposit's
footprint): no best cell of a target is left out of its prospects. A hole in a prospect stays a hole (a target's holes
under the smallest target are part of it): the camp already holds that ground, and a prospect marks the camp's best
cells, so a filled hole would add no ground to the work list and only dilute the prospect. Each knows its target's
rank (`camp`) and its own rank there. A target no larger than one deposit's footprint is itself prospect-sized.
"""
from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field

import geopandas as gpd
import numpy as np
from affine import Affine
from scipy import ndimage

from ..evaluation import cells_of
from ..favourability.outputs import top_share_mask
from ..favourability.targets import SADDLE_DEPTH, TIERS, Delineation, delineate
from ..judge.target_table import (
    JUDGED,
    PROSPECT_COLUMNS,
    TARGET_COLUMNS,
    VERDICT_FACTOR,
    empty_targets,
    polygons_of,
    prospect_words,
    rank_key,
    target_rows,
    typed,
    why_words,
    zones_inside,
)
from ..raster_io import RasterGrid
from .core_target import core_cells
from .target_sizes import MIN_TARGET_CELLS, WORK_LIST, TargetSizes


@dataclass
class WorkList:
    """`targets`: the drawn targets, best first (TARGET_COLUMNS); `prospects`: the prospects inside them, by target then
    rank (PROSPECT_COLUMNS); `shares`: the tiers of the top share they were drawn from, tightest first, the first the
    smallest holding the `first` best, and `added` how many targets each drew (`delineation`: theirs together, its
    counts the first tier's); `judgements`: the chain's judgement of the best, each with its rank; `left`: what the work
    list leaves in the top share ({"count": the targets of its tiers not drawn, "km2": the top share outside the drawn
    targets, "known": the known deposits there, None without deposits})."""

    targets: gpd.GeoDataFrame
    prospects: gpd.GeoDataFrame
    delineation: Delineation
    sizes: TargetSizes
    shares: tuple
    added: tuple
    first: int
    judgements: list = field(default_factory=list)
    left: dict = field(default_factory=lambda: {"count": 0, "km2": 0.0, "known": None})

    @property
    def share(self) -> float:
        """The tightest tier drawn: the one the best targets come from."""
        return self.shares[0]


def default_sizes(grid) -> TargetSizes:
    """No footprint: the smallest target MIN_TARGET_CELLS cells, no cap, no prospects, the work list WORK_LIST."""
    least = MIN_TARGET_CELLS * grid.pixel_area / 1e6
    return TargetSizes(least, None, None, WORK_LIST, f"{MIN_TARGET_CELLS} analysis cells", "no cap")


def rank_targets(values: np.ma.MaskedArray, grid, crs, area_share: float, *, sizes: TargetSizes | None = None,
                 nodes=None, core=None, core_label: str = "", others=None, saddle_depth: float = SADDLE_DEPTH,
                 probability: bool = False, expected=None, deposit_xy=None, uncertainty=None,
                 contributions: dict | None = None, judge=None, judged: int = JUDGED) -> WorkList:
    """The work list of the top `area_share` of `values` (module docstring: drawn tier by tier, the best from the
    smallest tier holding them), drawn at `sizes` (`default_sizes` when None); `core`: the outline of the verified
    core, whose cells join the selection as one target that comes first; `others`: outlines of further verified
    systems, each piece one target; `probability`: `values` are a fitted model's, and `expected` its expected
    deposits per cell (`favourability/expected.py`), which rank the targets; `judge(labels, label ids best first)`:
    the chain's judgement of the best `judged` targets (a list of {"items", "verdict", "why"}), None to judge none."""
    sizes = sizes or default_sizes(grid)
    whole = tuple(core_cells(g, grid) for g in (core, others) if g is not None)
    first = max(1, min(judged, sizes.count))
    shares, added, delineation = _drawn_tiers(values, grid, area_share, sizes, saddle_depth, whole, first)
    last_of_tier = np.cumsum(added).tolist()
    rows = target_rows(delineation, values, grid, shares[-1], expected=expected, uncertainty=uncertainty,
                       deposit_xy=deposit_xy, contributions=contributions)
    polygons = polygons_of(delineation.labels, grid)
    rows = [dict(row, geometry=polygons[row["label"]]) for row in rows if row["label"] in polygons]
    if not rows:
        return WorkList(empty_targets(crs), empty_targets(crs, PROSPECT_COLUMNS), delineation, sizes, shares, added,
                        first)
    frame = gpd.GeoDataFrame(rows, geometry="geometry", crs=crs)
    holds_core = _holding(frame, core, first_only=True)
    holds_other = _holding(frame, others) & ~holds_core
    order = sorted(range(len(rows)), key=lambda i: (not holds_core[i], bisect_left(last_of_tier, rows[i]["label"]),
                                                    *rank_key(rows[i])))
    best = order[:min(judged, sizes.count)]
    judgements = list(judge(delineation.labels, [rows[i]["label"] for i in best])) if judge and best else []
    verdict_of = {i: j for i, j in zip(best, judgements)}
    fixed = [i for i in best if holds_core[i]]
    free = sorted((i for i in best if i not in fixed),  # stable: size still breaks ties
                  key=lambda i: -rows[i]["score"] * VERDICT_FACTOR[verdict_of.get(i, {}).get("verdict", "")])
    order = fixed + free + order[len(best):]
    drawn, rest = order[:sizes.count], order[sizes.count:]
    tops = {share: top_share_mask(values, share) for share in TIERS if share < area_share} if sizes.prospect_km2 else {}
    prospects = []
    for rank, i in enumerate(drawn, start=1):
        row = rows[i]
        judgement = verdict_of.get(i)
        row["rank"] = rank
        row["verdict"] = judgement["verdict"] if judgement else ""
        row["n_zones"] = zones_inside(row["geometry"], nodes)
        inside = (_prospects(values, grid, delineation.labels, row["label"], rank, area_share, sizes, saddle_depth,
                             probability, expected, uncertainty, deposit_xy, contributions, tops)
                  if sizes.prospect_km2 and row["area_km2"] > sizes.prospect_km2 else [])
        row["prospects"] = len(inside)
        prospects += inside
        label = (f"holds the verified core ({core_label or 'named by the verifier'})" if holds_core[i] else
                 "holds a further system verified on its own" if holds_other[i] else "")
        row["why"] = why_words(row, judgement, row["n_zones"], probability, label)
    targets = typed(gpd.GeoDataFrame([rows[i] for i in drawn], geometry="geometry", crs=crs)
                    [list(TARGET_COLUMNS) + ["geometry"]])
    prospect_frame = (typed(gpd.GeoDataFrame(prospects, geometry="geometry", crs=crs)
                            [list(PROSPECT_COLUMNS) + ["geometry"]]) if prospects
                      else empty_targets(crs, PROSPECT_COLUMNS))
    ranks = {i: order.index(i) + 1 for i in verdict_of}
    return WorkList(targets, prospect_frame, delineation, sizes, shares, added, first,
                    [dict(judgement, rank=ranks[i]) for i, judgement in verdict_of.items() if ranks[i] <= len(drawn)],
                    _left_over(values, grid, area_share, delineation.labels, [rows[i]["label"] for i in drawn],
                               len(rest), deposit_xy, whole))


def _drawn_tiers(values, grid, area_share: float, sizes: TargetSizes, saddle_depth: float, whole: tuple,
                 first: int) -> tuple[tuple, tuple, Delineation]:
    """(the tiers that drew targets, tightest first; how many each added; their targets as one delineation, its
    counts the first tier's): from the smallest tier of the top share (TIERS below `area_share`, then `area_share`)
    holding `first` targets, each wider tier adding its targets that share no cell with those drawn until the list
    holds `sizes.count` (module docstring)."""
    least = sizes.least_cells(grid.pixel_area)
    most = sizes.most_cells(sizes.max_km2, grid.pixel_area)
    shares = [tier for tier in sorted(TIERS) if tier < area_share] + [area_share]
    drawn: list = []
    added: list = []
    labels = np.zeros(values.shape, dtype=np.int64)
    tiers: dict = {}
    counts: tuple = ()
    for share in shares:
        found = delineate(values, share, max_cells=most, saddle_depth=saddle_depth, whole=whole, min_cells=least)
        ids = np.setdiff1d(found.labels, np.append(found.labels[labels > 0], 0))
        if not counts and len(ids) < first and share < area_share:
            continue
        counts = counts or (found.split_at_peaks, found.cut_to_cap, found.specks, found.speck_cells, found.merged)
        if drawn and not len(ids):
            continue
        renumbered = np.zeros(int(found.labels.max()) + 1, dtype=np.int64)
        renumbered[ids] = int(labels.max()) + np.arange(1, len(ids) + 1)
        labels = np.where(renumbered[found.labels] > 0, renumbered[found.labels], labels)
        tiers.update({int(renumbered[i]): found.tiers[int(i)] for i in ids})
        drawn.append(share)
        added.append(len(ids))
        if int(labels.max()) >= sizes.count:
            break
    return tuple(drawn), tuple(added), Delineation(labels, tiers, *counts)


def _left_over(values, grid, area_share: float, labels: np.ndarray, drawn: list, undrawn: int, deposit_xy,
               whole: tuple) -> dict:
    """What the work list leaves in the top share: the targets of its tiers not drawn (`undrawn`), the km2 of the top
    share (and the places kept whole) outside the drawn targets and the known deposits there (None without
    deposits)."""
    rest = (top_share_mask(values, area_share) | _any(whole, labels.shape)) & ~np.isin(labels, drawn)
    rest &= ~np.ma.getmaskarray(values)
    known = None
    if deposit_xy is not None:
        _, _, inside = cells_of(deposit_xy, grid, rest)
        known = int(inside.sum())
    return {"count": undrawn, "km2": float(rest.sum()) * grid.pixel_area / 1e6, "known": known}


def _any(masks: tuple, shape: tuple) -> np.ndarray:
    """The union of `masks` (none: all False)."""
    out = np.zeros(shape, dtype=bool)
    for mask in masks:
        out |= mask.astype(bool)
    return out


def _prospects(values, grid, labels, label: int, camp: int, area_share: float, sizes: TargetSizes,
               saddle_depth: float, probability: bool, expected, uncertainty, deposit_xy, contributions,
               tops: dict) -> list:
    """The prospect rows (with geometry) of target `label`, ranked 1.. (module docstring); `tops`: {tier share: the
    surface's top cells of that share}, whose smallest a prospect reaches is its tier."""
    rows_at, cols_at = np.nonzero(labels == label)
    box = (slice(rows_at.min(), rows_at.max() + 1), slice(cols_at.min(), cols_at.max() + 1))
    inside = labels[box] == label
    window: np.ma.MaskedArray = np.ma.masked_array(np.asarray(values.data, dtype="float64")[box],
                                                   mask=np.ma.getmaskarray(values)[box] | ~inside)
    least = sizes.least_cells(grid.pixel_area)
    cells = int(window.count())
    if cells < least:
        return []
    share = min(1.0, max(area_share, least / cells))
    most = sizes.most_cells(sizes.prospect_km2, grid.pixel_area)
    found = delineate(window, share, max_cells=most, saddle_depth=saddle_depth, min_cells=least, fill_holes=False)
    found.labels = _joined_specks(found.labels, top_share_mask(window, share) & ~np.ma.getmaskarray(window))
    if not found.labels.any():
        return []
    tiers = {int(k): area_share for k in np.unique(found.labels[found.labels > 0])}
    for share in sorted(tops, reverse=True):  # the smallest share wins
        tiers.update({int(k): share for k in np.unique(found.labels[tops[share][box] & (found.labels > 0)])})
    sub = RasterGrid(grid.transform * Affine.translation(box[1].start, box[0].start), inside.shape[1],
                     inside.shape[0], grid.crs)
    rows = target_rows(Delineation(found.labels, tiers), window, sub, area_share,
                       expected=None if expected is None else expected[box],
                       uncertainty=None if uncertainty is None else uncertainty[box], deposit_xy=deposit_xy,
                       contributions={name: (weight, np.ma.asarray(m)[box])
                                      for name, (weight, m) in (contributions or {}).items()})
    polygons = polygons_of(found.labels, sub)
    rows = sorted((row for row in rows if row["label"] in polygons), key=rank_key)
    for rank, row in enumerate(rows, start=1):
        row.update(camp=camp, rank=rank, geometry=polygons[row["label"]])
        row["why"] = prospect_words(row, probability)
    return rows


def _joined_specks(labels: np.ndarray, best: np.ndarray) -> np.ndarray:
    """`labels` with each piece of the target's best cells (`best`) that no prospect holds (a speck apart from the
    others, too small to be a prospect) given to the nearest prospect, which it may take past one deposit's
    footprint: no best cell of a target is left out of its prospects."""
    left = best & (labels == 0)
    if not left.any() or not labels.any():
        return labels
    _, (rows, cols) = ndimage.distance_transform_edt(labels == 0, return_indices=True)
    pieces, _ = ndimage.label(left)
    out = labels.copy()
    for piece, box in enumerate(ndimage.find_objects(pieces), start=1):
        cells = pieces[box] == piece
        out[box][cells] = int(np.bincount(labels[rows[box][cells], cols[box][cells]]).argmax())
    return out


def _holding(frame: gpd.GeoDataFrame, outline, first_only: bool = False) -> np.ndarray:
    """Which targets hold part of `outline` (`first_only`: only the one holding most of it)."""
    held = np.zeros(len(frame), dtype=bool)
    if outline is None or not len(frame):
        return held
    shared = frame.geometry.intersection(outline).area.to_numpy()
    if first_only:
        if shared.max() > 0:
            held[int(np.argmax(shared))] = True
        return held
    return shared > 0
