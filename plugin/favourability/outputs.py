"""What a favourability surface is written as (a GeoTIFF, its weights table), its top share and the pinholes in a
selection."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from scipy import ndimage

from ..csv_table import write_csv
from ..errors import LodestarError
from ..raster_writer import new_raster
from .overlay import Surface

NODATA = -9999.0
TABLE_COLUMNS = ("layer", "role", "transformation", "membership", "weight", "why")


def write_surface(surface: Surface, path, description: str = "favourability (0-1)") -> Path:
    """Write the surface as a float32 GeoTIFF (NODATA outside the analysed area) on its grid, its band described
    by `description` (an uncertainty surface says what its values are).

    Tiled, deflate-compressed, with provenance tags: LODESTAR_METHOD, LODESTAR_LAYERS and
    LODESTAR_WEIGHTS (JSON {layer: weight}).
    """
    grid = surface.grid
    data = np.ma.filled(surface.values.astype("float32"), NODATA)
    method = surface.method + (f" (gamma {surface.gamma:g})" if surface.gamma is not None else "")
    with new_raster(path, _profile(grid, surface.crs, 1)) as dst:
        dst.write(data, 1)
        dst.update_tags(LODESTAR_METHOD=method, LODESTAR_LAYERS=", ".join(s.layer for s in surface.specs),
                        LODESTAR_WEIGHTS=json.dumps({s.layer: s.weight for s in surface.specs}))
        dst.set_band_description(1, description)
    return Path(path)


def write_bands(bands: dict, grid, path, method: str) -> Path:
    """Several surfaces on one grid as the bands of one float32 GeoTIFF ({band description: masked values}, in
    order; NODATA where masked), tagged LODESTAR_METHOD."""
    with new_raster(path, _profile(grid, grid.crs, len(bands))) as dst:
        for band, (description, values) in enumerate(bands.items(), start=1):
            dst.write(np.ma.filled(values.astype("float32"), NODATA), band)
            dst.set_band_description(band, description)
        dst.update_tags(LODESTAR_METHOD=method)
    return Path(path)


def _profile(grid, crs, count: int) -> dict:
    """The GeoTIFF profile of Lodestar's surfaces: float32, NODATA, tiled and deflate-compressed."""
    profile = {"driver": "GTiff", "width": grid.width, "height": grid.height, "count": count, "dtype": "float32",
               "nodata": NODATA, "transform": grid.transform, "tiled": True, "blockxsize": 256, "blockysize": 256,
               "compress": "deflate", "predictor": 3}
    if crs is not None:
        profile["crs"] = crs.to_wkt()
    return profile


def write_weights_csv(rows: list[dict], path) -> Path:
    """Write a weights table as UTF-8 CSV: TABLE_COLUMNS first, then any further keys the rows carry
    (a calibration's W+ / W- / contrast or coefficients), in order of first appearance; a layer name or a reason
    that a spreadsheet would run as a formula is written as text (`csv_table.safe_cell`)."""
    columns = list(TABLE_COLUMNS)
    for row in rows:
        columns += [key for key in row if key not in columns]
    return write_csv(path, columns, rows)


def top_share_mask(values: np.ma.MaskedArray, area_share: float) -> np.ndarray:
    """Cells of the top `area_share` of the valid cells by value.

    Cells of equal value are taken or left together: of the cut just above and just below the tied
    value, the one whose share is nearer the asked share.
    """
    if not 0.0 < area_share <= 1.0:
        raise LodestarError(f"The area share must be above 0 and at most 1, not {area_share}.")
    valid = ~np.ma.getmaskarray(values)
    scores = np.sort(np.asarray(values.filled(0.0), dtype="float64")[valid])[::-1]
    if not scores.size:
        raise LodestarError("The surface has no valid cells.")
    wanted = max(1, int(round(area_share * scores.size)))
    threshold = scores[wanted - 1]
    above = int(np.sum(scores > threshold))
    with_ties = int(np.sum(scores >= threshold))
    take_ties = above == 0 or abs(with_ties - wanted) <= abs(above - wanted)
    filled = np.asarray(values.filled(-np.inf), dtype="float64")
    return valid & ((filled >= threshold) if take_ties else (filled > threshold))


def pinholes(selected: np.ndarray, under_cells: int) -> np.ndarray:
    """A boolean array of `selected`'s shape: the cells of the holes in `selected` (a boolean grid; a hole is an
    8-connected run of unselected cells, the complement of 4-connected patches, not touching the grid's edge) of
    fewer than `under_cells` cells."""
    holes, count = ndimage.label(~selected, structure=np.ones((3, 3), dtype=bool))
    if not count:
        return np.zeros_like(selected)
    sizes = np.bincount(holes.ravel(), minlength=count + 1)[1:]
    edge = np.unique(np.concatenate([holes[0], holes[-1], holes[:, 0], holes[:, -1]]))
    small = np.flatnonzero(sizes < under_cells) + 1
    return np.isin(holes, np.setdiff1d(small, edge))
