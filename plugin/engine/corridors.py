"""How far a place lies from a structure raster's corridors: the most favourable share of the whole layer.

A structure raster (a distance-to-faults map, favourable low; a lineament density, favourable high) is marked by
a step as at most a few zones, the largest pieces of its favourable share; a fault network cut into corridors
makes many more pieces than that. Whether a place lies near a fault must not depend on which pieces a step kept,
so the gap is taken to the nearest cell of the whole favourable share, as for a vector layer's nearest feature.
"""
from __future__ import annotations

import numpy as np
from rasterio.features import geometry_mask
from scipy import ndimage

CORRIDOR_PERCENTILE = 85.0
"""A structure raster's favourable share is its most favourable 15 % of valid cells (the share its step marks)."""


def corridor_distance(values: np.ma.MaskedArray, favourable: str, pixel_size: tuple) -> np.ndarray:
    """Map units from each cell's centre to the nearest cell of the layer's favourable share (0 inside it); an
    array of inf when the layer has no valid cell."""
    data = np.ma.getdata(values).astype("float64")
    valid = ~np.ma.getmaskarray(values) & np.isfinite(data)
    if not valid.any():
        return np.full(values.shape, np.inf)
    evidence = -data if favourable == "low" else data
    cut = float(np.percentile(evidence[valid], CORRIDOR_PERCENTILE))
    corridor = valid & (evidence >= cut)
    width, height = pixel_size
    return ndimage.distance_transform_edt(~corridor, sampling=(height, width))


def gap_to_corridor(distance: np.ndarray, geometry, grid) -> float:
    """The least distance (map units) from the cells `geometry` touches to a corridor; inf off the grid."""
    touched = ~geometry_mask([geometry], out_shape=distance.shape, transform=grid.transform, all_touched=True)
    if not touched.any():
        col, row = grid.map_to_pixel(geometry.centroid.x, geometry.centroid.y)
        if not (0 <= row < distance.shape[0] and 0 <= col < distance.shape[1]):
            return float("inf")
        touched[int(row), int(col)] = True
    return float(distance[touched].min())
