"""Raster access, the only place that opens rasters and maps pixels to map coordinates.

`RasterReader` opens one GDAL raster and reads it (whole, a window, or decimated under a memory
budget) as masked arrays that honour nodata and masks. `RasterGrid` is a pixel grid in a CRS and the
one home of pixel <-> map transforms. `RasterSet` brings the layers of one analysis onto one
analysis grid (one CRS, the common extent) following the `lodestar-case/1` rules.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import rasterio
from affine import Affine
from pyproj import CRS
from rasterio.errors import NotGeoreferencedWarning
from rasterio.warp import Resampling, reproject, transform_bounds
from rasterio.windows import Window

from .confinement import dataset_driver, guarded_gdal, referenced_files
from .decisions import CORE
from .errors import Cancelled, LodestarError
from .progress import SILENT, Progress
from .raster_blocks import block_windows
from .vector_io import check_vector_input, holds_points, read_vector, split_source

MIN_ANALYSIS_PIXELS = 64
"""Fewer pixels of common ground (8 x 8), left by a layer much smaller than the others, is no area to analyse."""
# decision numbers: their reasons and provenance are in plugin/decisions.py
OVERLAP_WARNING_SHARE = CORE.overlap_warning_share
DATA_BOUNDS_PIXELS = 4_000_000
"""Value budget (pixels x bands) of the read that finds where a raster holds data (its nodata border left out)."""
DEFAULT_MAX_PIXELS = 4_000_000
"""Default pixel budget of one analysis grid (about 16 MB per float32 layer)."""
BLOCK_SOURCE_PIXELS = 1 << 22
"""Source pixels (per band) one block of a read covers: reads go block by block, cancellation checked between
blocks, so a 20,000 x 20,000 raster stops loading within a fraction of a second of a cancel."""
INDEX_ROLES = ("hydrothermal_alteration", "silicification", "propylitic_alteration", "argillic_alteration",
               "iron_oxide", "geochemistry", "geophysics")
"""Roles whose layer is one band of values (an index, a ratio, a concentration, a field)."""
# decision numbers: their reasons and provenance are in plugin/decisions.py
RAMP_MAX_COLOURS = CORE.ramp_max_colours


@dataclass(frozen=True)
class RasterGrid:
    """A north-up pixel grid: `transform` maps (col, row) to map (x, y); `crs` is None in pixel space."""

    transform: Affine
    width: int
    height: int
    crs: CRS | None

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """(xmin, ymin, xmax, ymax) in map units."""
        x0, y0 = self.transform * (0, 0)
        x1, y1 = self.transform * (self.width, self.height)
        return min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)

    @property
    def pixel_size(self) -> tuple[float, float]:
        """(width, height) of one pixel in map units, both positive."""
        return abs(self.transform.a), abs(self.transform.e)

    @property
    def pixel_area(self) -> float:
        return abs(self.transform.a * self.transform.e - self.transform.b * self.transform.d)

    @property
    def georeferenced(self) -> bool:
        return self.crs is not None

    def pixel_to_map(self, col, row):
        """Map coordinates of pixel positions (fractional; pixel centres are at +0.5)."""
        col = np.asarray(col, dtype=float)
        row = np.asarray(row, dtype=float)
        t = self.transform
        return t.a * col + t.b * row + t.c, t.d * col + t.e * row + t.f

    def map_to_pixel(self, x, y):
        """Fractional (col, row) of map coordinates."""
        inv = ~self.transform
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        return inv.a * x + inv.b * y + inv.c, inv.d * x + inv.e * y + inv.f

    def fractions(self, x, y):
        """Normalised image position (fx, fy) of map points: (0, 0) top-left, (1, 1) bottom-right."""
        col, row = self.map_to_pixel(x, y)
        return col / self.width, row / self.height

    def bounds_window(self, bounds: tuple[float, float, float, float]) -> Window:
        """The integer pixel window of this grid covering map bounds (xmin, ymin, xmax, ymax), clipped to it."""
        xmin, ymin, xmax, ymax = bounds
        cols, rows = self.map_to_pixel([xmin, xmax, xmin, xmax], [ymin, ymin, ymax, ymax])
        c0, c1 = max(0, int(math.floor(cols.min() + 1e-9))), min(self.width, int(math.ceil(cols.max() - 1e-9)))
        r0, r1 = max(0, int(math.floor(rows.min() + 1e-9))), min(self.height, int(math.ceil(rows.max() - 1e-9)))
        if c1 <= c0 or r1 <= r0:
            raise LodestarError(f"The area {tuple(bounds)} does not overlap the extent {self.bounds} (it does not "
                                "cover any of its pixels); choose an area inside it.")
        return Window(c0, r0, c1 - c0, r1 - r0)

    def source_window(self, target: RasterGrid) -> Window:
        """The window of this (source) grid under a target grid's extent, in any CRS, with one more pixel on each
        side for interpolation at the edges; LodestarError when they do not overlap."""
        win = self.bounds_window(transform_bounds(target.crs, self.crs, *target.bounds, densify_pts=21))
        c0, r0 = max(0, int(win.col_off) - 1), max(0, int(win.row_off) - 1)
        c1 = min(self.width, int(win.col_off + win.width) + 1)
        r1 = min(self.height, int(win.row_off + win.height) + 1)
        return Window(c0, r0, c1 - c0, r1 - r0)

    def resized(self, width: int, height: int) -> RasterGrid:
        """The same extent cut into width x height pixels (a decimated read, a resized image)."""
        return RasterGrid(self.transform * Affine.scale(self.width / width, self.height / height), int(width),
                          int(height), self.crs)

    def window_grid(self, window: Window) -> RasterGrid:
        """The grid of a pixel window of this grid."""
        return RasterGrid(
            rasterio.windows.transform(window, self.transform), int(window.width), int(window.height), self.crs
        )


def crs_label(crs: CRS | None) -> str:
    """Short human name of a CRS: an authority code where there is one, else its name; a CRS named 'unnamed' (a
    WKT of parameters only) by its projection and ellipsoid: 'Lambert Conic Conformal (2SP) on the Clarke 1866
    ellipsoid'."""
    if crs is None:
        return "pixel space (not georeferenced)"
    auth = crs.to_authority()
    if auth:
        return f"{auth[0]}:{auth[1]}"
    if crs.name and crs.name.strip().lower() not in ("unnamed", "unknown", "undefined"):
        return crs.name
    operation = crs.coordinate_operation.method_name if crs.coordinate_operation else "geographic coordinates"
    ellipsoid = crs.ellipsoid.name if crs.ellipsoid else ""
    return f"{operation} on the {ellipsoid} ellipsoid" if ellipsoid else operation


@dataclass
class RasterReader:
    """One opened raster. Reads return float32 masked arrays of shape (bands, rows, cols), in physical values:
    a band's GDAL scale and offset are applied (Landsat Collection 2 reflectance is DN x 0.0000275 - 0.2), every
    data type is read as the values it stores (signed bytes too), and non-finite values (NaN, +/-inf) are no data.
    A raster is opened only when every file it reads (GDAL's own list: a VRT's sources, an ERS header's data file,
    sidecars) lies inside `root` (the case folder; default: its own folder), a network path never (`confinement`),
    then only by the driver its files were checked for and with GDAL's guards on (no server is reached)."""

    path: Path
    root: Path | None = None
    grid: RasterGrid = field(init=False)
    count: int = field(init=False)
    dtype: str = field(init=False)
    nodata: float | None = field(init=False)
    descriptions: tuple = field(init=False)
    tags: dict = field(init=False)
    scales: tuple = field(init=False)
    offsets: tuple = field(init=False)
    sources: list = field(init=False)  # the files it reads besides itself (a VRT's sources), all inside `root`
    driver: str | None = field(init=False)  # the GDAL driver the files were checked for, the only one that opens it
    signed_bytes: bool = field(init=False)  # signed 8-bit bands (`_read_part`)

    def __post_init__(self):
        self.path = Path(self.path)
        if not self.path.exists():
            referenced_files(self.path, self.root)  # a network path is named as such, not as a missing file
            raise LodestarError(f"Raster not found: {self.path}. Check the path.")
        if self.path.is_dir():
            raise LodestarError(f"{self.path} is a folder, not a raster file; give the raster file itself.")
        self.sources = referenced_files(self.path, self.root)  # before GDAL opens it
        self.driver = dataset_driver(self.path)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NotGeoreferencedWarning)
                with guarded_gdal(), rasterio.open(self.path, driver=self.driver) as ds:
                    georef = ds.crs is not None and not (ds.transform == Affine.identity() and ds.gcps[1] is None)
                    crs = CRS.from_wkt(ds.crs.to_wkt()) if georef else None
                    transform = ds.transform if georef else Affine.identity()
                    self.grid = RasterGrid(transform, ds.width, ds.height, crs)
                    self.count = ds.count
                    self.signed_bytes = ds.dtypes[0] == "int8" or any(
                        ds.tags(i + 1, ns="IMAGE_STRUCTURE").get("PIXELTYPE") == "SIGNEDBYTE" for i in range(ds.count))
                    self.dtype = "int8" if self.signed_bytes else ds.dtypes[0]
                    self.nodata = ds.nodata
                    self.descriptions = ds.descriptions
                    self.tags = ds.tags()
                    self.band_tags = [ds.tags(i + 1) for i in range(ds.count)]
                    self.colorinterp = tuple(ci.name for ci in ds.colorinterp)
                    self.scales = tuple(1.0 if s is None else float(s) for s in ds.scales)
                    self.offsets = tuple(0.0 if o is None else float(o) for o in ds.offsets)
        except (rasterio.errors.RasterioIOError, rasterio.errors.RasterioError) as exc:
            raise LodestarError(f"GDAL cannot read {self.path}: {str(exc).rstrip('. ')}. Is it a raster file (a "
                                "complete copy)?") from exc
        if self.grid.transform.b or self.grid.transform.d:
            raise LodestarError(
                f"{self.path.name} is rotated or sheared; warp it to a north-up grid first "
                "(Raster > Projections > Warp)."
            )
        for band, (scale, offset) in enumerate(zip(self.scales, self.offsets), start=1):
            if not (math.isfinite(scale) and math.isfinite(offset)) or scale == 0:
                raise LodestarError(f"{self.path.name}: band {band}'s GDAL scale {scale:g} and offset {offset:g} "
                                    "cannot scale its values (a scale must be finite and not 0, an offset finite); "
                                    "correct them in the file's metadata (Layer Properties > Information), or remove "
                                    "them.")

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def scaled(self) -> bool:
        """Whether any band carries a GDAL scale or offset (its pixel values are codes of physical values)."""
        return any(s != 1.0 for s in self.scales) or any(o != 0.0 for o in self.offsets)

    @property
    def is_rgb(self) -> bool:
        """3- or 4-band 8-bit raster: a rendering (colour anomalies, false colour, coloured map)."""
        return self.count in (3, 4) and self.dtype == "uint8"

    @property
    def is_integer(self) -> bool:
        """Whether the values read are whole numbers (codes); a scaled integer band holds physical values."""
        return np.issubdtype(np.dtype(self.dtype), np.integer) and not self.scaled

    def role_mismatch(self, role: str, name: str = "") -> str:
        """A sentence when the data cannot be what the role says ('' when they agree): a multi-band image (a
        false-colour composite) given a one-band role such as an alteration index, or a single band given the
        false-colour composite role."""
        name = name or self.name
        if role in INDEX_ROLES and self.count >= 3:
            if self.is_rgb:
                spread = self.colour_spread()
                if spread <= RAMP_MAX_COLOURS:
                    return ""  # an index rendered through a colour ramp: its colours stand for values
                kind = (f"a false-colour composite ({spread} distinct colours, not the few of a colour ramp that "
                        "renders index values)")
            else:
                kind = "a multi-band image (only its first band would be read as the index)"
            return (f"Warning: {name} has {self.count} bands, {kind}, but its role is {role}, which means one band "
                    "of index values; zones marked on it are colours, not index values. Give it the role "
                    "false_color_composite, or compute the index first (Lodestar > Alteration indices).")
        if role == "false_color_composite" and self.count < 3:
            return (f"Warning: {name} has {self.count} band(s) of {self.dtype} values, but its role is "
                    "false_color_composite, which means a 3-band colour image; a single band has no colours. Give "
                    "it the role of what its values measure (an alteration index, geochemistry, geophysics).")
        return ""

    def colour_spread(self, size: int = 512) -> int:
        """How many colours (RGB quantised to 5 bits a channel) the central size x size pixels of an RGB image hold:
        a colour ramp rendering values holds at most a few hundred (a palette has 256 entries), a false-colour
        composite thousands. One small window at full resolution: cheap on any size of file."""
        width, height = min(size, self.grid.width), min(size, self.grid.height)
        window = Window((self.grid.width - width) // 2, (self.grid.height - height) // 2, width, height)
        data = self.read([1, 2, 3], window=window)
        valid = ~np.ma.getmaskarray(data).any(axis=0)
        codes = np.clip(data.filled(0), 0, 255).astype(np.int64) >> 3
        packed = (codes[0] << 10) | (codes[1] << 5) | codes[2]
        return int(np.unique(packed[valid]).size)

    def read(self, bands=None, window: Window | None = None, out_shape: tuple[int, int] | None = None,
             resampling: Resampling = Resampling.nearest, progress: Progress = SILENT) -> np.ma.MaskedArray:
        """Read bands (1-based list, default all) of a window, optionally decimated to out_shape, in physical
        values (scale and offset applied). The read goes block by block of rows (each block covering about
        BLOCK_SOURCE_PIXELS source pixels, the same values as one read), `progress.check()` between blocks."""
        wanted = list(bands) if bands is not None else list(range(1, self.count + 1))
        # a rendering's masks take every band into account (`_rendering_masks`), whichever bands are asked for
        bands = list(range(1, self.count + 1)) if self._masks_span_bands else wanted
        win = window if window is not None else Window(0, 0, self.grid.width, self.grid.height)
        rows, cols = (int(win.height), int(win.width)) if out_shape is None else (int(out_shape[0]),
                                                                                  int(out_shape[1]))
        source_rows_per_row = float(win.height) / max(1, rows)
        step = max(1, int(BLOCK_SOURCE_PIXELS / max(1.0, float(win.width) * source_rows_per_row)))
        blocks = []
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NotGeoreferencedWarning)
                with guarded_gdal(), rasterio.open(self.path, driver=self.driver) as ds:
                    for strip in block_windows((rows, cols), step, strips=True):
                        progress.check()
                        start, stop = strip.row_off, strip.row_off + strip.height
                        if out_shape is None:
                            part = Window(win.col_off, win.row_off + start, win.width, stop - start)
                            shape = None
                        else:
                            top = win.row_off + start * source_rows_per_row
                            part = Window(win.col_off, top, win.width, (stop - start) * source_rows_per_row)
                            shape = (len(bands), stop - start, cols)
                        blocks.append(self._read_part(ds, bands, part, shape, resampling))
        except Cancelled:
            raise
        except (rasterio.errors.RasterioIOError, rasterio.errors.RasterioError) as exc:
            raise LodestarError(f"GDAL cannot read the pixels of {self.path.name}: {str(exc).rstrip('. ')}. The file "
                                "is damaged or incomplete (a truncated copy or download?): copy or export it "
                                "again.") from exc
        progress.check()
        data = np.ma.concatenate(blocks, axis=1) if len(blocks) != 1 else blocks[0]
        data = self._rendering_masks(data, bands)
        if bands != wanted:
            data = data[[bands.index(band) for band in wanted]]
        if self.scaled:
            scale = np.array([self.scales[b - 1] for b in wanted], dtype="float32")[:, None, None]
            offset = np.array([self.offsets[b - 1] for b in wanted], dtype="float32")[:, None, None]
            data = data * scale + offset
        return np.ma.masked_invalid(data)

    def _read_part(self, ds, bands: list, window: Window, shape, resampling: Resampling) -> np.ma.MaskedArray:
        """One block of `read` from the open dataset, float32 masked. Signed bytes are read as stored and taken as
        signed (GDAL before 3.7 holds them as bytes marked PIXELTYPE=SIGNEDBYTE, which it converts to other types
        and resamples as unsigned: -1 as 255); resampled other than by nearest neighbour, from their values at full
        resolution."""
        if not self.signed_bytes:
            return ds.read(bands, window=window, out_shape=shape, resampling=resampling, masked=True,
                           out_dtype="float32")
        if shape is None or resampling == Resampling.nearest:
            raw = ds.read(bands, window=window, out_shape=shape, resampling=resampling, masked=True)
            values = raw.data.view(np.int8)
            mask = np.ma.getmaskarray(raw) | (values == self.nodata if self.nodata is not None else False)
            return np.ma.masked_array(values.astype("float32"), mask=mask)  # GDAL compares nodata unsigned
        # the window and the pixels around it that a resampling kernel reaches (3 output pixels: Lanczos)
        margin = 3 * math.ceil(max(1.0, float(window.width) / shape[2], float(window.height) / shape[1]))
        c0, r0 = max(0, math.floor(window.col_off) - margin), max(0, math.floor(window.row_off) - margin)
        whole = Window(c0, r0, min(ds.width, math.ceil(window.col_off + window.width) + margin) - c0,
                       min(ds.height, math.ceil(window.row_off + window.height) + margin) - r0)
        source = self._read_part(ds, bands, whole, None, resampling).filled(np.nan)
        out = np.full(shape, np.nan, dtype="float32")
        scale = Affine.scale(float(window.width) / shape[2], float(window.height) / shape[1])
        for i in range(len(bands)):  # pixel space taken as map space: one CRS, no reprojection
            reproject(source[i], out[i], src_transform=Affine.translation(c0, r0), src_crs=_PIXEL_CRS,
                      src_nodata=np.nan, dst_transform=Affine.translation(window.col_off, window.row_off) * scale,
                      dst_crs=_PIXEL_CRS, dst_nodata=np.nan, resampling=resampling)
        return np.ma.masked_invalid(out)

    @property
    def _masks_span_bands(self) -> bool:
        """Whether one band's mask depends on the others: an image with an alpha band, or a rendering with a nodata
        value."""
        return "alpha" in self.colorinterp or (self.is_rgb and self.nodata is not None)

    def _rendering_masks(self, data: np.ma.MaskedArray, bands: list[int]) -> np.ma.MaskedArray:
        """Masks of an image read as a pixel's (`bands`: every band of the file when `_masks_span_bands`): a
        rendering's colour bands are no data only where all of them hold the nodata value (with nodata 0, per-band
        masks would blank pure red (255, 0, 0), the top of a jet or hot ramp), and a transparent pixel (alpha 0) is
        no data in every band, the alpha band included (GDAL never masks the alpha band, and ignores it when a
        nodata value is set)."""
        if not self._masks_span_bands:
            return data
        alpha = [k for k, band in enumerate(bands) if self.colorinterp[band - 1] == "alpha"]
        colour = [k for k in range(len(bands)) if k not in alpha] if self.is_rgb and self.nodata is not None else []
        mask = np.ma.getmaskarray(data).copy()
        if len(colour) > 1:
            mask[colour] = mask[colour].all(axis=0)
        if alpha:
            mask |= (data.data[alpha] == 0).any(axis=0)
        return np.ma.masked_array(data.data, mask=mask)

    def data_bounds(self, progress: Progress = SILENT) -> tuple[float, float, float, float]:
        """(xmin, ymin, xmax, ymax), in this raster's CRS, of the cells holding data in any band: its frame less a
        nodata border, on its own pixel edges; the frame when every cell or none holds data. Read once under a pixel
        budget, averaged (a decimated cell holds data when any of its pixels does) and grown by one decimated cell,
        so it never cuts data off."""
        data, grid = self.read_overview(max(1, DATA_BOUNDS_PIXELS // self.count), resampling=Resampling.average,
                                        progress=progress)
        top, bottom, left, right = data_box(np.ma.getmaskarray(data).all(axis=0))
        sx, sy = self.grid.width / grid.width, self.grid.height / grid.height
        margin = 0 if (grid.width, grid.height) == (self.grid.width, self.grid.height) else 1
        c0, r0 = max(0, math.floor((left - margin) * sx)), max(0, math.floor((top - margin) * sy))
        c1 = min(self.grid.width, math.ceil((right + margin) * sx))
        r1 = min(self.grid.height, math.ceil((bottom + margin) * sy))
        return self.grid.window_grid(Window(c0, r0, c1 - c0, r1 - r0)).bounds

    def decimated_shape(self, max_pixels: int, window: Window | None = None) -> tuple[int, int]:
        """Rows and columns of a read of `window` that fits in max_pixels, keeping the aspect ratio."""
        height = int(window.height) if window is not None else self.grid.height
        width = int(window.width) if window is not None else self.grid.width
        if height * width <= max_pixels:
            return height, width
        factor = math.sqrt(height * width / max_pixels)
        return max(1, int(height / factor)), max(1, int(width / factor))

    def read_overview(self, max_pixels: int = DEFAULT_MAX_PIXELS, bands=None, window: Window | None = None,
                      resampling: Resampling = Resampling.average,
                      progress: Progress = SILENT) -> tuple[np.ma.MaskedArray, RasterGrid]:
        """Read under a pixel budget; returns the data and the grid its pixels lie on."""
        shape = self.decimated_shape(max_pixels, window)
        data = self.read(bands, window=window, out_shape=shape, resampling=resampling, progress=progress)
        base = self.grid.window_grid(window) if window is not None else self.grid
        return data, base.resized(shape[1], shape[0])


_PIXEL_CRS = CRS.from_epsg(3857)
"""A stand-in CRS for resampling arrays in pixel space (`RasterReader._read_part`): both sides share it."""


def data_box(nodata: np.ndarray) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) pixel bounds (end exclusive) of the cells with data; the whole image if none."""
    rows, cols = np.nonzero(~nodata)
    if not rows.size:
        return 0, nodata.shape[0], 0, nodata.shape[1]
    return int(rows.min()), int(rows.max()) + 1, int(cols.min()), int(cols.max()) + 1


_MISMATCHES: dict = {}


def role_mismatches(specs) -> list[str]:
    """The warnings of `RasterReader.role_mismatch` for analysis layers, before a run (the dock shows them while
    the user chooses roles); cached per file state and role, files that cannot be read are left to the run."""
    notes = []
    for spec in specs:
        path = Path(spec.path)
        if spec.is_vector or not path.is_file():
            continue
        stat = path.stat()
        key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size, spec.role, spec.name)
        if key not in _MISMATCHES:
            try:
                _MISMATCHES[key] = RasterReader(path).role_mismatch(spec.role, spec.name)
            except LodestarError:
                _MISMATCHES[key] = ""
        if _MISMATCHES[key]:
            notes.append(_MISMATCHES[key])
    return notes


@dataclass
class LayerSpec:
    """One analysis input: a raster (or vector) file and what it means. `layer` names one layer of a vector file
    of several (a path given as QGIS writes it, 'two.gpkg|layername=faults', is split into both); `root` is the
    folder every file the input reads must lie in (the case folder; None: the file's own folder)."""

    path: Path
    role: str
    name: str = ""
    favourable: str = "high"
    legend: Path | None = None
    layer: str | None = None
    root: Path | None = field(default=None, compare=False)
    sensor: str = ""  # a multispectral scene's sensor the user chose ('aster', 'landsat_oli', 'sentinel2')

    def __post_init__(self) -> None:
        from .roles import check_role

        self.path, named = split_source(self.path)
        self.layer = self.layer or named
        self.role = check_role(self.role)
        self.name = self.name or self.layer or self.path.stem
        if self.root is not None:
            self.root = Path(self.root)
        if self.favourable not in ("high", "low"):
            raise LodestarError(
                f"Layer {self.name}: favourable must be 'high' or 'low', not {self.favourable!r}."
            )
        if self.legend is not None:
            self.legend = Path(self.legend)

    @property
    def is_vector(self) -> bool:
        return self.path.suffix.lower() in VECTOR_SUFFIXES


VECTOR_SUFFIXES = {".gpkg", ".shp", ".geojson", ".json", ".gml", ".kml", ".fgb", ".sqlite"}


def holds_classes(reader: RasterReader, spec: LayerSpec) -> bool:
    """Whether a raster's values are classes, not magnitudes: whole-number codes (an integer data type with no
    scale: map units, the classes of a reclassified map, colours), or a layer given a legend or the geological-map
    role. Such a layer is resampled by nearest neighbour wherever it is read onto another grid (`resampling_of`)."""
    return reader.is_integer or reader.is_rgb or spec.legend is not None or spec.role == "geological_map"


def resampling_of(reader: RasterReader, spec: LayerSpec) -> Resampling:
    """How a raster goes onto another grid (the analysis grid, a block of the full-resolution surface): a class
    raster (`holds_classes`) by nearest neighbour, so it holds only its own classes there (an interpolated class
    6.9 is no class); magnitudes bilinearly."""
    return Resampling.nearest if holds_classes(reader, spec) else Resampling.bilinear


def _is_projected(crs: CRS) -> bool:
    return crs.is_projected and not crs.is_geographic


def utm_crs_for(lon: float, lat: float) -> CRS:
    """The WGS 84 UTM zone CRS containing a lon/lat point."""
    zone = int((lon + 180) // 6) % 60 + 1
    return CRS.from_epsg((32600 if lat >= 0 else 32700) + zone)


@dataclass
class RasterSet:
    """The layers of one analysis on one analysis grid (CRS, common extent, resolution).

    The analysis CRS is the first georeferenced layer's CRS when it is projected, else the UTM zone
    of the common extent's centre, so areas and distances are in metres. When no layer is
    georeferenced, all are taken to cover the first layer's extent, in its pixel space.
    """

    layers: list[LayerSpec]
    max_pixels: int = DEFAULT_MAX_PIXELS
    log: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # what the user must hear (also in `log`)
    progress: Progress = field(default=SILENT, repr=False, compare=False)  # reads check it between blocks

    def __post_init__(self) -> None:
        if not self.layers:
            raise LodestarError("No layers given: choose at least one raster or vector layer.")
        names = [spec.name for spec in self.layers]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise LodestarError(f"Layer names must be unique; rename: {', '.join(duplicates)}.")
        for spec in self.layers:  # every vector checked before any model call: a folder, an empty file or layer, a
            # file of several layers without a name, a dataset reading outside the case
            if spec.is_vector:
                check_vector_input(spec.path, spec.layer, spec.root, f"Layer {spec.name}")
        points = [s.name for s in self.layers
                  if s.is_vector and s.role != "other" and holds_points(s.path, layer=s.layer)]
        if points:
            raise LodestarError(
                f"{', '.join(points)} {'holds' if len(points) == 1 else 'hold'} points; vector evidence is read as "
                "fault lines (structure) or unit polygons (geological map). Give known deposits as the deposits "
                "layer (they validate the map), and grid point samples into a raster first (Processing Toolbox > "
                "Interpolation > IDW interpolation), then give that raster the geochemistry role.")
        self.readers: dict[str, RasterReader] = {
            spec.name: RasterReader(spec.path, spec.root) for spec in self.layers if not spec.is_vector
        }
        self.grid = self._analysis_grid()
        self._cache: dict[str, np.ma.MaskedArray] = {}
        self._features: dict = {}
        self.role_warnings: dict[str, str] = {}  # layer name -> why its data disagree with its role
        for spec in self.layers:
            note = self.readers[spec.name].role_mismatch(spec.role, spec.name) if spec.name in self.readers else ""
            if note:
                self.role_warnings[spec.name] = note
                self.log.append(note)
                self.warnings.append(note)

    def spec(self, name: str) -> LayerSpec:
        for spec in self.layers:
            if spec.name == name:
                return spec
        raise LodestarError(f"No layer named {name!r}; known layers: {', '.join(s.name for s in self.layers)}.")

    @property
    def crs(self) -> CRS | None:
        return self.grid.crs

    def _analysis_grid(self) -> RasterGrid:
        referenced = {n: r for n, r in self.readers.items() if r.grid.georeferenced}
        vectors = [s for s in self.layers if s.is_vector]
        if not self.readers:
            raise LodestarError("At least one raster layer is needed to define the analysis area.")
        if not referenced:
            if vectors:
                raise LodestarError(
                    "Vector layers need georeferenced rasters; the rasters given have no georeferencing."
                )
            first = self.readers[self.layers[0].name] if self.layers[0].name in self.readers else next(
                iter(self.readers.values()))
            self.log.append("No layer is georeferenced: all layers are taken to cover the same extent, "
                            f"in the pixel space of {first.name}.")
            return self._budget(RasterGrid(Affine.identity(), first.grid.width, first.grid.height, None))
        if len(referenced) != len(self.readers):
            missing = sorted(set(self.readers) - set(referenced))
            raise LodestarError(
                f"Layers {', '.join(missing)} have no georeferencing while others do. Georeference them "
                "(Raster > Georeferencer) or use only unreferenced images."
            )
        first = next(iter(referenced.values()))
        crs = first.grid.crs
        assert crs is not None  # a referenced layer's grid has its CRS
        if not _is_projected(crs):
            lon0, lat0, lon1, lat1 = transform_bounds(crs, "EPSG:4326", *first.grid.bounds)
            crs = utm_crs_for((lon0 + lon1) / 2, (lat0 + lat1) / 2)
            self.log.append(f"{first.name} is in geographic {crs_label(first.grid.crs)}; analysing in "
                            f"{crs_label(crs)} so areas and distances are in metres.")
        xmin, ymin, xmax, ymax = -math.inf, -math.inf, math.inf, math.inf
        res = math.inf
        areas, boxes = {}, {}
        for name, reader in referenced.items():
            assert reader.grid.crs is not None
            if not reader.grid.crs.equals(crs):
                self.log.append(f"{name} is in {crs_label(reader.grid.crs)}; reprojected to {crs_label(crs)}.")
            frame = transform_bounds(reader.grid.crs, crs, *reader.grid.bounds, densify_pts=21)
            res = min(res, math.sqrt((frame[2] - frame[0]) * (frame[3] - frame[1])
                                     / (reader.grid.width * reader.grid.height)))
            # Several layers meet where each holds data: a nodata border around one must not let the others' data
            # beyond it in (a padded copy of a case is the same case).
            b = frame if len(referenced) == 1 else transform_bounds(
                reader.grid.crs, crs, *reader.data_bounds(self.progress), densify_pts=21)
            areas[name] = (b[2] - b[0]) * (b[3] - b[1])
            boxes[name] = b
            xmin, ymin, xmax, ymax = max(xmin, b[0]), max(ymin, b[1]), min(xmax, b[2]), min(ymax, b[3])
        if xmin >= xmax or ymin >= ymax:
            raise LodestarError(_no_common_area(boxes))
        width = max(1, int(round((xmax - xmin) / res)))
        height = max(1, int(round((ymax - ymin) / res)))
        self._check_overlap(areas, (xmax - xmin) * (ymax - ymin), width * height)
        grid = RasterGrid(Affine(res, 0, xmin, 0, -res, ymax), width, height, crs)
        return self._budget(grid)

    def _check_overlap(self, areas: dict, common: float, pixels: int) -> None:
        """When the layers' overlap is a small part of the largest layer: refuse it if it leaves too few pixels to
        analyse, else say what is left out (a small layer silently shrinking the analysis looks like a barren area)."""
        smallest = min(areas, key=areas.__getitem__)
        largest = max(areas, key=areas.__getitem__)
        share = common / areas[largest]
        if share >= OVERLAP_WARNING_SHARE:
            return
        if pixels < MIN_ANALYSIS_PIXELS:
            raise LodestarError(
                f"The layers overlap in only {pixels} pixel(s) ({common / 1e6:.3g} km2): {smallest} covers "
                f"{areas[smallest] / 1e6:.3g} km2 against {areas[largest] / 1e6:.3g} km2 for {largest}. Leave the "
                "small layer out, or check its georeferencing.")
        note = (f"Warning: the analysis covers only where all layers overlap: {common / 1e6:.3g} km2, "
                f"{share:.1%} of {largest}; the rest of it is not analysed (the smallest layer, {smallest}, covers "
                f"{areas[smallest] / 1e6:.3g} km2).")
        self.log.append(note)
        self.warnings.append(note)

    def _budget(self, grid: RasterGrid) -> RasterGrid:
        if grid.width * grid.height <= self.max_pixels:
            return grid
        factor = math.sqrt(grid.width * grid.height / self.max_pixels)
        width, height = max(1, int(grid.width / factor)), max(1, int(grid.height / factor))
        self.log.append(f"Analysis grid decimated to {width} x {height} pixels to stay within "
                        f"{self.max_pixels:,} pixels per layer.")
        return grid.resized(width, height)

    def read(self, name: str, bands=None) -> np.ma.MaskedArray:
        """A raster layer resampled onto the analysis grid: float32 masked (bands, rows, cols)."""
        key = f"{name}|{bands}"
        if key in self._cache:
            return self._cache[key]
        reader = self.readers.get(name)
        if reader is None:
            raise LodestarError(f"{name} is not a raster layer of this analysis.")
        resampling = resampling_of(reader, self.spec(name))
        bands = list(bands) if bands is not None else list(range(1, reader.count + 1))
        if self.grid.crs is None:
            data = reader.read(bands, out_shape=(self.grid.height, self.grid.width), resampling=resampling,
                               progress=self.progress)
        else:
            data = self._warp(reader, bands, resampling)
        self._cache[key] = data
        return data

    def features(self, name: str):
        """A vector layer's features (GeoDataFrame) in the analysis CRS: the one reader of vector evidence. The file
        is read once per raster set; each caller gets its own copy."""
        if name not in self._features:
            spec = self.spec(name)
            self._features[name] = read_vector(spec.path, crs=self.crs, layer=spec.layer, root=spec.root)
        return self._features[name].copy()

    def read_window(self, name: str, bounds=None, bands=None) -> tuple[np.ma.MaskedArray, RasterGrid]:
        """A layer on the analysis grid cropped to map bounds (analysis CRS); the whole grid when None."""
        data = self.read(name, bands)
        if bounds is None:
            return data, self.grid
        win = self.grid.bounds_window(bounds)
        rows, cols = win.toslices()
        return data[:, rows, cols], self.grid.window_grid(win)

    def _warp(self, reader: RasterReader, bands, resampling) -> np.ma.MaskedArray:
        g = self.grid
        try:  # every source pixel the grid touches, plus one on each side
            win = reader.grid.source_window(g)
        except LodestarError:
            win = Window(0, 0, reader.grid.width, reader.grid.height)
        # Read the source at no more than about twice the output resolution: codes and colours by nearest
        # neighbour, magnitudes averaged (a decimation by picking pixels would alias fine detail).
        decimation = Resampling.nearest if resampling == Resampling.nearest else Resampling.average
        src, src_grid = reader.read_overview(max(4 * g.width * g.height, 1), bands, window=win,
                                             resampling=decimation, progress=self.progress)
        out = np.full((len(bands), g.height, g.width), np.nan, dtype="float32")
        filled = src.filled(np.nan).astype("float32")
        # Warped in strips of whole rows (the same values as one warp), cancellation checked between strips.
        step = max(1, BLOCK_SOURCE_PIXELS // 16 // max(1, g.width))
        assert src_grid.crs is not None and g.crs is not None  # warped only onto a georeferenced grid (`read`)
        src_crs, dst_crs = src_grid.crs.to_wkt(), g.crs.to_wkt()
        for i in range(len(bands)):
            for strip in block_windows((g.height, g.width), step, strips=True):
                self.progress.check()
                reproject(filled[i], out[i][strip.toslices()], src_transform=src_grid.transform, src_crs=src_crs,
                          src_nodata=np.nan, dst_transform=g.transform * Affine.translation(0, strip.row_off),
                          dst_crs=dst_crs,
                          dst_nodata=np.nan, resampling=resampling)
        self.progress.check()
        return np.ma.masked_invalid(out)

    def valid_mask(self) -> np.ndarray:
        """Pixels of the analysis grid where at least one raster layer has data."""
        mask = np.zeros((self.grid.height, self.grid.width), dtype=bool)
        for name in self.readers:
            data = self.read(name)
            mask |= ~np.ma.getmaskarray(data).all(axis=0)
        return mask

    def valid_area(self) -> float:
        """Area (square map units) with data in at least one raster layer: nodata is not area."""
        return float(self.valid_mask().sum()) * self.grid.pixel_area


def _no_common_area(boxes: dict) -> str:
    """What to say when the layers' extents ({name: (xmin, ymin, xmax, ymax)}) share no area: the layers that meet
    no other layer are named as lying apart, when some others do meet."""
    def meet(a, b) -> bool:
        return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]

    met = {name: sum(meet(box, other) for key, other in boxes.items() if key != name) for name, box in boxes.items()}
    apart = [name for name in boxes if met[name] == 0]
    if apart and len(apart) < len(boxes):
        rest = [name for name in boxes if name not in apart]
        return (f"The layers do not overlap: {', '.join(apart)} {'lies' if len(apart) == 1 else 'lie'} apart from "
                f"{', '.join(rest)}. Untick {'it' if len(apart) == 1 else 'them'}, or choose layers that cover a "
                "common area.")
    return "The layers do not overlap: " + ", ".join(boxes) + ". Choose layers that cover a common area."
