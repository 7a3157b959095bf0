"""A layer's data as the evidence readers take it: evidence.py (memberships on the analysis grid), measured.py
(measured values for the fitted models), blockwise.py and blockwise_fitted.py (the same, block by block at full
resolution). A vector layer's features, a unit map's codes with their names, and unit polygons burnt on a grid
masked beyond the map's extent, so that every reader codes a unit map alike."""
from __future__ import annotations

import numpy as np
from rasterio.features import rasterize

from ..errors import LodestarError
from ..raster_io import RasterSet
from ..tools.categorical import categorical_labels, read_legend
from ..tools.vector_evidence import VectorEvidenceParams, unit_names


def vector_features(raster_set: RasterSet, layer: str):
    """The features of the vector layer `layer` of the raster set (a GeoDataFrame in the analysis CRS); refused
    (LodestarError) when the layer is a raster or the raster set has no CRS."""
    spec = raster_set.spec(layer)
    if not spec.is_vector:
        raise LodestarError(f"{layer} is a raster; distances are measured from vector features (fault lines).")
    if raster_set.crs is None:
        raise LodestarError("Vector layers need georeferenced rasters to define the analysis area.")
    return raster_set.features(layer)


def unit_codes(raster_set: RasterSet, layer: str, given) -> tuple[np.ma.MaskedArray, dict]:
    """(unit codes on the analysis grid, masked where the map has no data; their legend, code -> name) of the unit
    map `layer`: `given` (codes on the grid, named by the layer's legend) when not None, else a raster's codes and
    legend, else the layer's unit polygons rasterized, coded 1, 2, ... in the order of their names (polygon_codes)."""
    spec = next((s for s in raster_set.layers if s.name == layer), None)
    legend = read_legend(spec.legend) if spec is not None and spec.legend is not None else {}
    if given is not None:
        return np.ma.asarray(given), legend
    if not raster_set.spec(layer).is_vector:
        codes, valid = categorical_labels(raster_set.read(layer))
        return np.ma.masked_array(codes, mask=~valid), legend
    frame = vector_features(raster_set, layer)
    frame = frame[frame.geometry.notna() & ~frame.geometry.is_empty]
    if frame.empty:
        raise LodestarError(f"{layer} has no unit polygons.")
    names = unit_names(frame, spec, VectorEvidenceParams())
    legend = {i: name for i, name in enumerate(sorted(set(names)), start=1)}
    index = {name: code for code, name in legend.items()}
    grid = raster_set.grid
    burnt = rasterize(((g, index[n]) for g, n in zip(frame.geometry, names)), out_shape=(grid.height, grid.width),
                      transform=grid.transform, fill=0, dtype="int32")
    return polygon_codes(burnt, frame.total_bounds, grid.transform), legend


def polygon_codes(burnt: np.ndarray, bounds, transform) -> np.ma.MaskedArray:
    """Rasterized unit polygons (0 where no polygon lies) masked beyond the map's extent (`bounds`, its bounding box:
    minx miny maxx maxy). Within its extent a map of unit polygons says where its units are: a cell no polygon holds
    (ground outside the mapped greenstone belts) is in none of them, not without data."""
    rows = np.arange(burnt.shape[0])[:, None] + 0.5
    cols = np.arange(burnt.shape[1])[None, :] + 0.5
    if transform.b == 0 and transform.d == 0:  # north up: a row and a column of centres
        xs, ys = transform.c + cols * transform.a, transform.f + rows * transform.e
    else:
        xs = transform.c + cols * transform.a + rows * transform.b
        ys = transform.f + cols * transform.d + rows * transform.e
    minx, miny, maxx, maxy = bounds
    within = (xs >= minx) & (xs <= maxx) & (ys >= miny) & (ys <= maxy)
    return np.ma.masked_array(burnt, mask=(burnt == 0) & ~within)
