"""Shared test helpers: small synthetic GeoTIFFs (tests/ is on sys.path through conftest.py)."""
from __future__ import annotations

import numpy as np
import rasterio


def write_geotiff(path, data, transform, crs="EPSG:32611", nodata=None, dtype=None):
    """Write a 2-D (one band) or 3-D (bands, rows, cols) array as a GeoTIFF; returns the path."""
    data = np.asarray(data)
    if data.ndim == 2:
        data = data[np.newaxis]
    dtype = dtype or data.dtype
    with rasterio.open(path, "w", driver="GTiff", width=data.shape[2], height=data.shape[1], count=data.shape[0],
                       dtype=dtype, crs=crs, transform=transform, nodata=nodata) as dst:
        dst.write(data.astype(dtype))
    return path
