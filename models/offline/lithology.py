"""Does an anomaly fill a geological unit? Alteration that raises a whole map unit is lithology (a clay-rich stratum,
a weathering profile), not a hydrothermal system, whose zones lie around a centre or a structure and cut across
units. An intrusive unit (a stock, a granitoid, a porphyry) is never such a control: alteration centred on an
intrusion is the system's own centre, the heat and fluid source it is zoned around."""
from __future__ import annotations

import numpy as np

from ...plugin.reason.background import robust_spread
from ...plugin.tools.lithology_words import matched_units
from ...plugin.zones import polygon_cells
from .settings import DEFAULT, OfflineSettings

INTRUSIVE_WORDS = ("granitoid", "intermediate intrusive", "mafic intrusive", "intrusive", "intrusion", "stock",
                   "pluton", "dyke", "dike")
"""Words naming intrusive rocks; the first three are groups of resources/knowledge/lithology_synonyms.json and
stand for every rock word of their group (granite, granodiorite, monzonite, porphyry, diorite, gabbro, ...)."""


def intrusive_units(units: dict) -> set[int]:
    """Codes of a categorical map's units (code -> legend name) whose name holds an intrusive rock word, matched
    as favourable units are (whole words, plurals, synonyms, not negated)."""
    return set(matched_units(units, INTRUSIVE_WORDS))


def filled_units(codes: np.ma.MaskedArray, polygons: list, grid, skip=(),
                 settings: OfflineSettings = DEFAULT) -> list[int]:
    """Codes of the units of a categorical map (on `grid`) that `polygons` (one layer's anomalies over the whole
    scene) cover for at least `filled_share` of their area; units under `filled_unit_min_m2` and codes in `skip`
    (intrusive units) are left out."""
    if not polygons:
        return []
    covered = polygon_cells(polygons, grid)
    valid = ~np.ma.getmaskarray(codes)
    return _units_where(codes, valid, grid, skip, settings.filled_unit_min_m2,
                        lambda unit: covered[unit].mean() >= settings.filled_share)


def lifted_units(codes: np.ma.MaskedArray, spreads: np.ma.MaskedArray, grid, level: float, skip=(),
                 settings: OfflineSettings = DEFAULT) -> list[int]:
    """Codes of the units of a categorical map (on `grid`) over which a layer (`spreads`: in background spreads,
    favourable side up; a rendering: its colour level, 0 on the backdrop) stands above `level` at the median: the
    layer is high over the unit as a whole, whether or not its zones were marked there. Units under
    `lifted_unit_min_m2` and codes in `skip` (intrusive units) are left out."""
    values = np.ma.getdata(spreads)
    valid = ~np.ma.getmaskarray(codes) & ~np.ma.getmaskarray(spreads) & np.isfinite(values)
    return _units_where(codes, valid, grid, skip, settings.lifted_unit_min_m2,
                        lambda unit: float(np.median(values[unit])) > level)


def _units_where(codes: np.ma.MaskedArray, valid: np.ndarray, grid, skip, min_m2: float, holds) -> list[int]:
    """Codes of the units (their `valid` cells) of at least `min_m2`, not in `skip`, for whose cells `holds`."""
    data = np.ma.filled(codes, 0)
    found = []
    for code in np.unique(data[valid]):
        if int(code) in skip:
            continue
        unit = valid & (data == code)
        if unit.sum() * grid.pixel_area >= min_m2 and holds(unit):
            found.append(int(code))
    return found


def follows_units(polygon, codes: np.ma.MaskedArray, units: list, grid,
                  settings: OfflineSettings = DEFAULT) -> bool:
    """Whether at least `inside_share` of a polygon's cells lie in the given (filled) units."""
    if not units:
        return False
    cells = polygon_cells([polygon], grid)
    if not cells.any():
        return False
    return float(np.isin(np.ma.filled(codes, 0)[cells], units).mean()) >= settings.inside_share


def rise_above_units(polygon, codes: np.ma.MaskedArray, spreads: np.ma.MaskedArray, units: list, grid) -> float:
    """How far a layer (`spreads`) stands higher over a polygon than over the rest of the unit (of `units`) holding
    most of its cells, in that unit's own robust spreads (medians): an anomaly in a raised unit that stands clearly
    above the unit's own level is more than the unit's rise. Scale-free, so a rendering's colour levels and an
    index's spreads read alike."""
    values = np.ma.getdata(spreads)
    data = np.ma.filled(codes, 0)
    scored = ~np.ma.getmaskarray(codes) & ~np.ma.getmaskarray(spreads) & np.isfinite(values)
    cells = polygon_cells([polygon], grid) & scored
    held = data[cells][np.isin(data[cells], units)]
    if not held.size:
        return 0.0
    codes_held, counts = np.unique(held, return_counts=True)
    rest = scored & (data == codes_held[counts.argmax()]) & ~cells
    if not rest.any():
        return 0.0
    level = float(np.median(values[rest]))
    return (float(np.median(values[cells])) - level) / robust_spread(values[rest], level)
