"""Does an anomaly fill a geological unit? Alteration that raises a whole map unit is lithology (a clay-rich stratum,
a weathering profile), not a hydrothermal system, whose zones lie around a centre or a structure and cut across
units."""
from __future__ import annotations

import numpy as np

FILLED_SHARE = 0.5
"""A unit is filled by a layer's anomalies when at least this share of its area is anomalous."""
UNIT_MIN_M2 = 1_000_000.0
"""Units smaller than this (a stock under a system) are never called lithological controls."""
INSIDE_SHARE = 0.5
"""An anomaly with at least this share of its cells in filled units follows lithology."""


def _cells(polygons: list, grid) -> np.ndarray:
    from rasterio.features import rasterize

    return rasterize([(g, 1) for g in polygons], out_shape=(grid.height, grid.width), transform=grid.transform,
                     fill=0, dtype="uint8").astype(bool)


def filled_units(codes: np.ma.MaskedArray, polygons: list, grid) -> list[int]:
    """Codes of the units of a categorical map (on `grid`) that `polygons` (one layer's anomalies over the whole
    scene) cover for at least FILLED_SHARE of their area; units under UNIT_MIN_M2 are left out."""
    if not polygons:
        return []
    covered = _cells(polygons, grid)
    valid = ~np.ma.getmaskarray(codes)
    data = np.ma.filled(codes, 0)
    filled = []
    for code in np.unique(data[valid]):
        unit = valid & (data == code)
        if unit.sum() * grid.pixel_area >= UNIT_MIN_M2 and covered[unit].mean() >= FILLED_SHARE:
            filled.append(int(code))
    return filled


def follows_units(polygon, codes: np.ma.MaskedArray, units: list, grid) -> bool:
    """Whether at least INSIDE_SHARE of a polygon's cells lie in the given (filled) units."""
    if not units:
        return False
    cells = _cells([polygon], grid)
    if not cells.any():
        return False
    return float(np.isin(np.ma.filled(codes, 0)[cells], units).mean()) >= INSIDE_SHARE
