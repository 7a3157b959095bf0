"""How far a place lies from a structure raster's corridors: the most favourable share of the whole layer.

A structure raster (a distance-to-faults map, favourable low; a lineament density, favourable high) is marked by
a step as at most a few zones, the largest pieces of its favourable share; a fault network cut into corridors
makes many more pieces than that. Whether a place lies near a fault must not depend on which pieces a step kept,
so the gap is taken to the nearest cell of the whole favourable share, as for a vector layer's nearest feature.
"""
from __future__ import annotations

import numpy as np
from affine import Affine
from rasterio.features import geometry_mask
from scipy import ndimage


def corridor_distance(values: np.ma.MaskedArray, favourable: str, pixel_size: tuple,
                      percentile: float) -> np.ndarray:
    """Map units from each cell's centre to the nearest cell of the layer's favourable share, its cells at or above
    `percentile` of its evidence (0 inside it); an array of inf when the layer has no valid cell or no cell stands
    above the rest (a constant layer)."""
    data = np.ma.getdata(values).astype("float64")
    valid = ~np.ma.getmaskarray(values) & np.isfinite(data)
    if not valid.any():
        return np.full(values.shape, np.inf)
    evidence = -data if favourable == "low" else data
    cut = float(np.percentile(evidence[valid], percentile))
    # a cut on the lowest value (a 0 / 1 fault mask with faults on under the top share of it) would take in every
    # cell: keep what exceeds it, as the step does
    corridor = valid & ((evidence > cut) if cut <= float(evidence[valid].min()) else (evidence >= cut))
    if not corridor.any():
        return np.full(values.shape, np.inf)
    width, height = pixel_size
    return ndimage.distance_transform_edt(~corridor, sampling=(height, width))


def gap_to_corridor(distance: np.ndarray, geometry, grid) -> float:
    """The least distance (map units) from the cells `geometry` touches to a corridor; inf for an empty geometry or
    one off the grid."""
    if geometry.is_empty:
        return float("inf")
    xmin, ymin, xmax, ymax = geometry.bounds
    cols, rows = grid.map_to_pixel(np.array([xmin, xmax, xmin, xmax]), np.array([ymin, ymin, ymax, ymax]))
    r0, r1 = max(0, int(np.floor(rows.min()))), min(distance.shape[0], int(np.floor(rows.max())) + 1)
    c0, c1 = max(0, int(np.floor(cols.min()))), min(distance.shape[1], int(np.floor(cols.max())) + 1)
    if r0 >= r1 or c0 >= c1:
        return float("inf")
    window = distance[r0:r1, c0:c1]
    touched = ~geometry_mask([geometry], out_shape=window.shape, all_touched=True,
                             transform=grid.transform * Affine.translation(c0, r0))
    return float(window[touched].min()) if touched.any() else float(window.min())
