"""Evidence views: zoomed, sharpened, contrast-enhanced, georeferenced crops of a layer.

GeoScout's zoom: a window given by a map bbox, or by a normalised centre (fx, fy), (0, 0) top-left,
and a zoom factor (window = layer size / factor). A window reaching past the layer's edge is shifted
back inside, never shrunk, so every view shows the same amount of ground. The crop is rendered
(percentile stretch, colour map for index layers), resized to `out_size` on its longest side,
optionally sharpened with an unsharp mask and contrast-enhanced, and written as a PNG with a world
file (.pgw) and its CRS (.aux.xml), or as a GeoTIFF. The result's `grid` maps the view's pixels to
map coordinates.
"""
from __future__ import annotations

import shutil
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from affine import Affine
from PIL import Image, ImageEnhance, ImageFilter
from rasterio.errors import NotGeoreferencedWarning
from rasterio.windows import Window

from ..errors import LodestarError
from ..raster_io import RasterGrid, RasterReader, RasterSet
from ..raster_writer import new_raster
from ..render import annotate, layer_pixels, png_bytes, source_stretch, to_rgb

SHARPEN_RADIUS = 2
SHARPEN_THRESHOLD = 3


@dataclass
class EvidenceView:
    """A rendered view: PNG bytes, the grid of its pixels, the map window shown, files written."""

    png_bytes: bytes
    grid: RasterGrid
    bounds: tuple[float, float, float, float]
    path: Path | None = None
    world_file: Path | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def size(self) -> tuple[int, int]:
        return self.grid.width, self.grid.height


def _source_grid(source, layer: str | None) -> RasterGrid:
    if isinstance(source, RasterSet):
        if layer is None:
            raise LodestarError("Name the layer to view from the raster set.")
        source.spec(layer)
        return source.grid
    if isinstance(source, RasterReader):
        return source.grid
    raise LodestarError(f"Cannot view a {type(source).__name__}; give a RasterSet or a RasterReader.")


def _shift_inside(start: float, length: float, limit: float) -> float:
    """Start of a span of `length` moved (not shrunk) to lie within [0, limit]."""
    if length >= limit:
        return 0.0
    return min(max(start, 0.0), limit - length)


def view_window(grid: RasterGrid, bbox=None, center=None, zoom: float = 2.0) -> tuple[tuple, list[str]]:
    """The pixel window (col0, row0, cols, rows) to show and notes on any adjustment.

    bbox: map bounds (xmin, ymin, xmax, ymax) in the grid's CRS; center: normalised (fx, fy) with
    `zoom` >= 1. A window past the edge is shifted inside; one larger than the layer is cut to it.
    """
    notes = []
    if bbox is not None and center is not None:
        raise LodestarError("Give either a bbox or a centre and zoom factor, not both.")
    if bbox is not None:
        xmin, ymin, xmax, ymax = (float(v) for v in bbox)
        if not (xmax > xmin and ymax > ymin):
            raise LodestarError(f"The view window {tuple(bbox)} has zero area; give xmin < xmax and ymin < ymax.")
        cols, rows = grid.map_to_pixel([xmin, xmax], [ymin, ymax])
        c0, c1, r0, r1 = float(min(cols)), float(max(cols)), float(min(rows)), float(max(rows))
        if c1 <= 0 or r1 <= 0 or c0 >= grid.width or r0 >= grid.height:
            raise LodestarError(f"The view window {tuple(bbox)} lies outside the layer (extent {grid.bounds}); "
                                "choose a window that overlaps it.")
        width, height = max(1.0, c1 - c0), max(1.0, r1 - r0)
    else:
        fx, fy = center if center is not None else (0.5, 0.5)
        if zoom < 1:
            raise LodestarError(f"Zoom factor {zoom} is below 1; use 1 for the whole layer or more to zoom in.")
        if not (0 <= fx <= 1 and 0 <= fy <= 1):
            raise LodestarError(f"Centre ({fx}, {fy}) is not a normalised position; use values from 0 to 1.")
        width, height = grid.width / zoom, grid.height / zoom
        c0, r0 = fx * grid.width - width / 2, fy * grid.height - height / 2
    cols = min(grid.width, max(1, int(round(width))))
    rows = min(grid.height, max(1, int(round(height))))
    if cols < round(width) or rows < round(height):
        notes.append("The window is larger than the layer; the whole layer is shown along that side.")
    col0 = int(round(_shift_inside(c0, cols, grid.width)))
    row0 = int(round(_shift_inside(r0, rows, grid.height)))
    if abs(col0 - c0) > 0.5 or abs(row0 - r0) > 0.5:
        notes.append(f"The window reached past the layer's edge and was shifted by ({col0 - c0:+.0f}, "
                     f"{row0 - r0:+.0f}) pixels to stay inside, keeping its size.")
    col0 = min(max(0, col0), grid.width - cols)
    row0 = min(max(0, row0), grid.height - rows)
    return (col0, row0, cols, rows), notes


def evidence_view(source, layer: str | None = None, bbox=None, center=None, zoom: float = 2.0,
                  sharpen: float = 0.0, contrast: float = 1.0, out_path=None, out_size: int = 448,
                  stretch: tuple[float, float] | None | str = "auto", colormap: str | None = "magma",
                  grid: bool | str = False, north_arrow: bool = False) -> EvidenceView:
    """A zoomed view of a layer (RasterSet + layer name, or a RasterReader), optionally written to a file.

    sharpen: unsharp-mask intensity (0: none; 2 is GeoScout's default, i.e. 200 %); contrast: PIL
    contrast factor (1: unchanged). out_path: .png (with .pgw world file and .aux.xml CRS) or .tif.
    stretch "auto" shows 8-bit RGB renderings as they are and stretches other rasters at (2, 98).
    """
    if out_size < 16:
        raise LodestarError(f"Output size {out_size} is too small; use at least 16 pixels.")
    if sharpen < 0 or contrast <= 0:
        raise LodestarError("Sharpen intensity must be >= 0 and the contrast factor > 0.")
    base = _source_grid(source, layer)
    (col0, row0, cols, rows), notes = view_window(base, bbox, center, zoom)
    window_grid = base.window_grid(Window(col0, row0, cols, rows))
    bounds = window_grid.bounds
    inner = _inset(bounds, base)
    data, data_grid = layer_pixels(source, layer, inner, max(out_size, 1))
    if np.ma.getmaskarray(data).all():
        raise LodestarError("The view window has no valid pixels (all nodata); choose another place or layer.")
    image = Image.fromarray(to_rgb(data, stretch=source_stretch(source, layer, stretch), colormap=colormap),
                            mode="RGB")
    scale = out_size / max(data_grid.width, data_grid.height)
    width = max(1, int(round(data_grid.width * scale)))
    height = max(1, int(round(data_grid.height * scale)))
    if (width, height) != image.size:
        image = image.resize((width, height), Image.LANCZOS)
    if sharpen > 0:
        image = image.filter(ImageFilter.UnsharpMask(radius=SHARPEN_RADIUS, percent=int(round(sharpen * 100)),
                                                     threshold=SHARPEN_THRESHOLD))
    if contrast != 1.0:
        image = ImageEnhance.Contrast(image).enhance(contrast)
    out_grid = data_grid.resized(width, height)
    annotate(image, out_grid, grid, north_arrow)
    if out_path is None:
        return EvidenceView(png_bytes(image), out_grid, bounds, notes=notes)
    path, world = write_view(image, out_grid, Path(out_path))
    png = path.read_bytes() if path.suffix.lower() == ".png" else png_bytes(image)
    return EvidenceView(png, out_grid, bounds, path, world, notes)


def _inset(bounds, grid: RasterGrid) -> tuple:
    """Bounds pulled in by a tiny fraction of a pixel so the window read is exactly the one chosen."""
    dx, dy = grid.pixel_size
    xmin, ymin, xmax, ymax = bounds
    return xmin + dx * 1e-6, ymin + dy * 1e-6, xmax - dx * 1e-6, ymax - dy * 1e-6


def world_file_text(transform: Affine) -> str:
    """The six lines of an ESRI world file (the upper-left pixel's centre)."""
    centre_x, centre_y = transform * (0.5, 0.5)
    values = (transform.a, transform.d, transform.b, transform.e, centre_x, centre_y)
    return "\n".join(repr(float(v)) for v in values) + "\n"


def write_view(image: Image.Image, grid: RasterGrid, path: Path) -> tuple[Path, Path | None]:
    """Write a view as PNG (+ .pgw, + .aux.xml with the CRS) or GeoTIFF; files appear whole or not at all."""
    suffix = path.suffix.lower()
    if suffix not in (".png", ".tif", ".tiff"):
        raise LodestarError(f"Evidence views are written as .png or .tif, not {suffix or 'no extension'}: {path.name}.")
    path.parent.mkdir(parents=True, exist_ok=True)
    pixels = np.moveaxis(np.asarray(image, dtype=np.uint8), -1, 0)
    profile = {"driver": "PNG" if suffix == ".png" else "GTiff", "width": grid.width, "height": grid.height,
               "count": 3, "dtype": "uint8"}
    if grid.crs is not None:  # georeferenced
        profile.update(crs=grid.crs.to_wkt(), transform=grid.transform)
    if suffix != ".png":
        profile.update(photometric="RGB", compress="deflate")
    world = path.with_suffix(".pgw") if suffix == ".png" and grid.georeferenced else None
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".lodestar-") as tmp:
        tmp_path = Path(tmp) / path.name
        # The PNG's CRS lives in its .aux.xml sidecar: write it even where sidecars are switched off.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotGeoreferencedWarning)
            with new_raster(tmp_path, profile, staged=True, gdal={"GDAL_PAM_ENABLED": "YES"}) as dst:
                dst.write(pixels)
        if world is not None:
            (Path(tmp) / world.name).write_text(world_file_text(grid.transform))
        for part in Path(tmp).iterdir():
            target = path.parent / part.name
            if target.exists():
                target.unlink()
            shutil.move(str(part), str(target))
    return path, world
