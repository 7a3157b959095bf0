"""Rendering of raster layers to 8-bit RGB images and PNGs for vision models and reports.

`to_rgb` turns a masked array into an RGB image (percentile stretch; a colour map for single-band
index rasters; per-band stretch for multi-band rasters; nodata in a neutral grey). `render_png`
renders a layer (or a map window of it) to PNG bytes, with an optional coordinate grid and north
arrow, and returns the grid that maps the PNG's pixels back to map coordinates.
"""
from __future__ import annotations

import io
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont
from rasterio.windows import Window

from .errors import LodestarError
from .files import PNG_OPTIONS, write_bytes_atomic
from .raster_io import RasterGrid, RasterReader, RasterSet

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


@dataclass(frozen=True)
class RenderedImage:
    """A PNG rendering; `grid` maps the PNG's pixels (col, row) to map coordinates of the source."""

    png_bytes: bytes
    grid: RasterGrid
    path: Path | None = None

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) of the PNG in pixels."""
        return self.grid.width, self.grid.height


def pixel_window(grid: RasterGrid, bounds: tuple[float, float, float, float] | None) -> Window:
    """The pixel window of `grid` covering map bounds (xmin, ymin, xmax, ymax), clipped to it (None: the whole
    grid); zero-area bounds are an error. The window maths is RasterGrid.bounds_window's."""
    if bounds is None:
        return Window(0, 0, grid.width, grid.height)
    xmin, ymin, xmax, ymax = (float(v) for v in bounds)
    if not (xmax > xmin and ymax > ymin):
        raise LodestarError(f"The window {bounds} has zero area; give xmin < xmax and ymin < ymax.")
    return grid.bounds_window((xmin, ymin, xmax, ymax))


def layer_pixels(source, layer: str | None, bounds, max_size: int):
    """(masked data, grid of the data) of a layer window, read at no more than about max_size per side."""
    if isinstance(source, RasterSet):
        if layer is None:
            raise LodestarError("Name the layer to render from the raster set.")
        grid = source.grid
        win = pixel_window(grid, bounds)
        data = source.read(layer)
        r0, c0 = int(win.row_off), int(win.col_off)
        data = data[:, r0:r0 + int(win.height), c0:c0 + int(win.width)]
        return data, grid.window_grid(win)
    if isinstance(source, RasterReader):
        win = pixel_window(source.grid, bounds)
        longest = max(int(win.width), int(win.height))
        if longest <= max_size:
            return source.read(window=win), source.grid.window_grid(win)
        bands = [1, 2, 3] if source.is_rgb else None
        return source.read_overview(max_size * max_size, bands=bands, window=win)
    raise LodestarError(f"Cannot render a {type(source).__name__}; give a RasterSet or a RasterReader.")


def _output_shape(width: int, height: int, max_size: int, min_size: int) -> tuple[int, int]:
    longest = max(width, height)
    scale = 1.0
    if longest > max_size:
        scale = max_size / longest
    elif longest < min_size:
        scale = float(min_size // longest) if longest * 2 <= min_size else 1.0
    return max(1, int(round(width * scale))), max(1, int(round(height * scale)))


def source_stretch(source, layer: str | None, stretch):
    """Resolve stretch "auto": 8-bit RGB renderings are shown as they are (None), other rasters at (2, 98)."""
    if stretch != "auto":
        return stretch
    reader = source
    if isinstance(source, RasterSet):
        reader = source.readers.get(layer) if layer is not None else None
    return None if isinstance(reader, RasterReader) and reader.is_rgb else (2, 98)


def render_png(source, layer: str | None = None, bounds: tuple[float, float, float, float] | None = None,
               max_size: int = 1024, grid: bool | str = True, north_arrow: bool = True,
               stretch: tuple[float, float] | None | str = "auto", colormap: str | None = "magma",
               path=None, min_size: int = 256) -> RenderedImage:
    """Render a layer (a RasterSet and a layer name, or a RasterReader) or a map window of it to PNG.

    bounds: (xmin, ymin, xmax, ymax) in the source's CRS (the analysis CRS for a RasterSet).
    The image's longest side is at most max_size; small windows are enlarged by a whole factor up to
    min_size so a model can see them. grid: True or "map" draws map-coordinate lines with labels,
    "fraction" draws normalised 0-1 lines (0.1 apart, (0, 0) top-left), False none. north_arrow is
    drawn on georeferenced layers. stretch: percentiles, None (min-max; 8-bit RGB kept as is) or
    "auto" (None for 8-bit RGB renderings, (2, 98) otherwise). The PNG is also written to `path`.
    """
    data, data_grid = layer_pixels(source, layer, bounds, max_size)
    if np.ma.getmaskarray(data).all():
        name = layer if layer is not None else getattr(source, "name", "the layer")
        raise LodestarError(f"{name} has no valid pixels in the requested window; choose another window or layer.")
    rgb = to_rgb(data, stretch=source_stretch(source, layer, stretch), colormap=colormap)
    width, height = _output_shape(data_grid.width, data_grid.height, max_size, min_size)
    image = Image.fromarray(rgb, mode="RGB")
    if (width, height) != image.size:
        enlarge = width > data_grid.width
        image = image.resize((width, height), Image.NEAREST if enlarge else Image.LANCZOS)
    out_grid = data_grid.resized(width, height)
    annotate(image, out_grid, grid, north_arrow)
    png = png_bytes(image)
    written = None
    if path is not None:
        written = write_bytes_atomic(path, png)
    return RenderedImage(png, out_grid, written)


def annotate(image: Image.Image, grid: RasterGrid, lines: bool | str, north_arrow: bool) -> None:
    """Draw grid lines (True or "map": map coordinates, "fraction": 0-1, False: none) and, on a
    georeferenced image, a north arrow."""
    if lines:
        draw_grid(image, grid, "fraction" if lines == "fraction" else "map")
    if north_arrow and grid.georeferenced:
        draw_north_arrow(image)


def png_bytes(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", **PNG_OPTIONS)
    return buffer.getvalue()


def text_font(size: int):
    """DejaVu Sans at `size` points (any script it covers), else PIL's default bitmap font."""
    try:
        from matplotlib import font_manager

        return ImageFont.truetype(font_manager.findfont("DejaVu Sans"), size)
    except (OSError, ValueError, ImportError):
        return ImageFont.load_default()


def nice_step(span: float, target: int = 5) -> float:
    """A 1-2-5 x 10^k step that cuts `span` into about `target` intervals."""
    if span <= 0:
        return 1.0
    raw = span / target
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= factor * power:
            return factor * power
    return 10 * power


def _label(value: float, step: float) -> str:
    decimals = max(0, -int(math.floor(math.log10(step)))) if step < 1 else 0
    return f"{value:.{decimals}f}"


def _draw_text(draw, xy, text, font):
    box = draw.textbbox(xy, text, font=font)
    draw.rectangle((box[0] - 2, box[1] - 1, box[2] + 2, box[3] + 1), fill=(255, 255, 255))
    draw.text(xy, text, fill=(0, 0, 0), font=font)


def draw_grid(image: Image.Image, grid: RasterGrid, mode: str) -> None:
    """Grid lines with labels, drawn over the image (the pixel -> map mapping is unchanged)."""
    draw = ImageDraw.Draw(image)
    font = text_font(max(9, min(image.size) // 45))
    line = (255, 255, 255)
    w, h = image.size
    if mode == "fraction":
        for i in range(1, 10):
            x, y = round(i * w / 10), round(i * h / 10)
            draw.line([(x, 0), (x, h)], fill=line, width=1)
            draw.line([(0, y), (w, y)], fill=line, width=1)
            if i % 2 == 0 or min(w, h) >= 600:
                _draw_text(draw, (x + 2, 2), f"{i / 10:.1f}", font)
                _draw_text(draw, (2, y + 2), f"{i / 10:.1f}", font)
        return
    xmin, ymin, xmax, ymax = grid.bounds
    step = nice_step(max(xmax - xmin, ymax - ymin))
    x = math.ceil(xmin / step) * step
    while x < xmax:
        col, _ = grid.map_to_pixel(x, grid.transform.f)
        px = int(round(float(col)))
        if 0 < px < w:
            draw.line([(px, 0), (px, h)], fill=line, width=1)
            _draw_text(draw, (px + 2, h - font.size - 6), _label(x, step), font)
        x += step
    y = math.ceil(ymin / step) * step
    while y < ymax:
        _, row = grid.map_to_pixel(grid.transform.c, y)
        py = int(round(float(row)))
        if 0 < py < h:
            draw.line([(0, py), (w, py)], fill=line, width=1)
            _draw_text(draw, (2, py + 2), _label(y, step), font)
        y += step


def draw_north_arrow(image: Image.Image) -> None:
    """A north arrow in the top-right corner (the analysis grids are north-up)."""
    draw = ImageDraw.Draw(image)
    w, _ = image.size
    size = max(12, min(image.size) // 16)
    cx, top = w - size, size // 2
    font = text_font(max(9, size // 2))
    draw.polygon([(cx, top), (cx - size // 3, top + size), (cx, top + 2 * size // 3), (cx + size // 3, top + size)],
                 fill=(0, 0, 0), outline=(255, 255, 255))
    _draw_text(draw, (cx - font.size // 3, top + size + 2), "N", font)
