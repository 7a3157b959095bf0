"""Rendering of raster layers to 8-bit RGB images and PNGs for vision models and reports.

`to_rgb` turns a masked array into an RGB image (percentile stretch; a colour map for single-band
index rasters; per-band stretch for multi-band rasters; nodata in a neutral grey). `render_png`
renders a layer (or a map window of it) to PNG bytes, with an optional coordinate grid and north
arrow, and returns the grid that maps the PNG's pixels back to map coordinates.
"""
from __future__ import annotations

import math

import numpy as np

from .errors import LodestarError

NODATA_RGB = (128, 128, 128)
"""Neutral grey drawn where a pixel has no data."""

_SAMPLE_LIMIT = 1_000_000
"""Percentiles are taken on at most about this many valid values (a regular subsample)."""


def _as_bands(data) -> np.ma.MaskedArray:
    data = np.ma.masked_invalid(np.ma.asarray(data, dtype="float32"))
    if data.ndim == 2:
        data = data[np.newaxis]
    if data.ndim != 3 or data.shape[0] < 1:
        raise LodestarError(f"Cannot render an array of shape {data.shape}; expected (rows, cols) or "
                            "(bands, rows, cols).")
    return data


def stretch_limits(band: np.ma.MaskedArray, stretch: tuple[float, float] | None) -> tuple[float, float]:
    """(low, high) of a band's valid values at the stretch percentiles (min/max when stretch is None)."""
    valid = band.compressed()
    if valid.size == 0:
        return 0.0, 1.0
    if valid.size > _SAMPLE_LIMIT:
        valid = valid[:: int(math.ceil(valid.size / _SAMPLE_LIMIT))]
    if stretch is None:
        low, high = float(valid.min()), float(valid.max())
    else:
        low, high = (float(v) for v in np.percentile(valid, [stretch[0], stretch[1]]))
    if high <= low:
        high = low + 1.0
    return low, high


def _scale(band: np.ma.MaskedArray, low: float, high: float) -> np.ndarray:
    """Band values linearly mapped to 0..1 between low and high (clipped); masked cells become 0."""
    scaled = (band.filled(low) - low) / (high - low)
    return np.clip(scaled, 0.0, 1.0)


def colormap_lut(name: str) -> np.ndarray:
    """A matplotlib colour map as a (256, 3) uint8 look-up table."""
    from matplotlib import colormaps

    try:
        cmap = colormaps[name]
    except KeyError as exc:
        raise LodestarError(f"Unknown colour map {name!r}; use a matplotlib name such as magma, viridis, "
                            "inferno or gray.") from exc
    return (cmap(np.linspace(0.0, 1.0, 256))[:, :3] * 255 + 0.5).astype(np.uint8)


def to_rgb(data: np.ma.MaskedArray, stretch: tuple[float, float] | None = (2, 98),
           colormap: str | None = "magma") -> np.ndarray:
    """An (H, W, 3) uint8 image of a masked (rows, cols) or (bands, rows, cols) array.

    One band: stretched between the `stretch` percentiles of its valid values and coloured with
    `colormap` (grey ramp when None). Two bands or more: the first three bands (the last one repeated
    when there are only two) are stretched each on its own, except that `stretch=None` on an 8-bit
    rendering keeps its values as they are. Pixels masked in every band are drawn in NODATA_RGB.
    """
    data = _as_bands(data)
    nodata = np.ma.getmaskarray(data).all(axis=0)
    if data.shape[0] == 1:
        band = data[0]
        low, high = stretch_limits(band, stretch)
        index = (_scale(band, low, high) * 255 + 0.5).astype(np.uint8)
        if colormap is None:
            rgb = np.repeat(index[..., np.newaxis], 3, axis=2)
        else:
            rgb = colormap_lut(colormap)[index]
    else:
        picks = [0, 1, 2] if data.shape[0] >= 3 else [0, 1, 1]
        channels = []
        for i in picks:
            band = data[i]
            if stretch is None and _is_byte_range(band):
                channels.append(np.clip(np.rint(band.filled(0)), 0, 255).astype(np.uint8))
                continue
            low, high = stretch_limits(band, stretch)
            channels.append((_scale(band, low, high) * 255 + 0.5).astype(np.uint8))
        rgb = np.stack(channels, axis=-1)
    rgb[nodata] = NODATA_RGB
    return np.ascontiguousarray(rgb)


def _is_byte_range(band: np.ma.MaskedArray) -> bool:
    valid = band.compressed()
    return valid.size == 0 or (float(valid.min()) >= 0.0 and float(valid.max()) <= 255.0)
