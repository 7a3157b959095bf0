"""Colour / anomaly regions: the box maker in colour mode, as polygons in map coordinates.

Two paths, chosen from the layer (or forced with `mode`):

* index: a single-band evidence raster is thresholded (percentile, mean + k*sigma, Otsu or a
  value; `favourable: low` layers are inverted), smoothed, cleaned of small specks and split into
  connected components, each turned into a polygon (kind "anomaly").
* rgb: an 8-bit rendering with coloured anomalies over a grey-scale background (MineBench style):
  saturated colour is separated from the grey background, the colour bar is found and left out,
  and colours are turned into a 0-1 value by reading the colour bar (low end 0, high end 1); the
  regions whose value reaches `level` are kept (kind "colour_anomaly").

Memory: when the layer lies on the analysis grid itself (one layer at full resolution, as
`single_layer_set` builds it), the layer is read in row blocks from the file and only a boolean
mask of the whole window is held in memory (components are labelled coarse to fine), so a
10,000 x 10,000 float32 raster needs well under 1.5 GB. Otherwise the layer is resampled onto the
RasterSet's analysis grid (its `max_pixels`).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal, get_args

import numpy as np
from rasterio.enums import Resampling
from rasterio.warp import transform
from rasterio.windows import Window
from scipy import ndimage

from ..errors import LodestarError
from ..progress import SILENT, Progress
from ..raster_blocks import block_windows
from ..raster_io import LayerSpec, RasterGrid, RasterReader, RasterSet, data_box
from ..render import pixel_window
from ..roles import guess_role
from ..zones import labelled_polygons, zone_record, zones_frame
from .result import ToolResult

ThresholdMethod = Literal["percentile", "sigma", "otsu", "value"]
"""How an index layer is thresholded: at a percentile, at mean + k sigma, by Otsu's method, or at a value."""
ColorMode = Literal["auto", "index", "rgb"]
"""What a layer is read as: from the layer itself, an index (one band of values), or a colour rendering."""
METHODS: tuple[ThresholdMethod, ...] = get_args(ThresholdMethod)
MODES: tuple[ColorMode, ...] = get_args(ColorMode)
FULL_RESOLUTION_LIMIT = 150_000_000
"""`single_layer_set` keeps a single-band layer at full resolution up to this many pixels (mask: 1 B/px)."""
RENDERING_LIMIT = 8_000_000
"""`single_layer_set` decimates multi-band rasters (renderings, analysed in memory) to this many pixels."""
SAMPLE_PIXELS = 4_000_000
"""Threshold statistics come from a regular sample of at most this many pixels."""
BLOCK_PIXELS = 8_000_000
"""Pixels read per row block on the blockwise path."""
SMOOTH_TRUNCATE = 3.0
"""The Gaussian kernel reaches this many sigmas (and the block halo with it)."""


@dataclass
class ColorRegionParams:
    """Settings of `color_regions`; the defaults suit an alteration index map."""

    mode: ColorMode = "auto"
    method: ThresholdMethod = "percentile"  # sigma: mean + k*sigma
    percentile: float = 95.0        # keep the most favourable (100 - percentile) % of valid pixels
    k_sigma: float = 2.0            # k of mean + k*sigma
    value: float | None = None      # threshold in layer units (method "value"); low layers keep <= value
    band: int | None = None         # band of a multi-band raster to treat as the index (1-based)
    smooth_px: float = 1.0          # Gaussian smoothing sigma in pixels before the threshold (0: none)
    min_area_px: int = 9            # smallest region kept, in analysis-grid pixels ...
    min_area_fraction: float = 1e-3  # ... or this fraction of the valid pixels, whichever is larger
    simplify_px: float = 1.5        # topology-preserving simplification tolerance in pixels
    max_regions: int | None = None  # keep only the best regions (by mean score); None: all
    saturation_min: float = 0.3     # rgb: HSV saturation above which a pixel is coloured
    brightness_min: float = 0.15    # rgb: HSV value below which a pixel is too dark to be coloured
    level: float = 0.5              # rgb: keep colours at or above this fraction of the colour bar
    colorbar: bool = True           # rgb: find, exclude and read the colour bar

    def __post_init__(self):
        if self.mode not in MODES:
            raise LodestarError(f"Unknown mode {self.mode!r}; use one of {', '.join(MODES)}.")
        if self.method not in METHODS:
            raise LodestarError(f"Unknown threshold method {self.method!r}; use one of {', '.join(METHODS)}.")
        if self.method == "value" and self.value is None:
            raise LodestarError("Threshold method 'value' needs a value: set the threshold value.")
        if not 0.0 < self.percentile < 100.0:
            raise LodestarError(f"Percentile must lie between 0 and 100 (exclusive), not {self.percentile}.")
        if not 0.0 <= self.level <= 1.0:
            raise LodestarError(f"Colour level must lie between 0 and 1, not {self.level}.")
        if self.smooth_px < 0 or self.simplify_px < 0 or self.min_area_px < 0 or self.min_area_fraction < 0:
            raise LodestarError("Smoothing, simplification and minimum area must not be negative.")
        if self.max_regions is not None and self.max_regions < 1:
            raise LodestarError("max_regions must be at least 1 (or empty for all regions).")


def single_layer_set(path, role: str | None = None, favourable: str = "high", name: str = "",
                     max_pixels: int | None = None) -> RasterSet:
    """A RasterSet of one raster for standalone use: single-band rasters at full resolution (up to
    FULL_RESOLUTION_LIMIT pixels, read blockwise), multi-band renderings up to RENDERING_LIMIT pixels
    (they are analysed in memory); `max_pixels` overrides both."""
    path = Path(path)
    reader = RasterReader(path)
    limit = FULL_RESOLUTION_LIMIT if reader.count == 1 else RENDERING_LIMIT
    budget = max_pixels or min(limit, reader.grid.width * reader.grid.height)
    spec = LayerSpec(path, role or guess_role(path.stem), name=name, favourable=favourable)
    return RasterSet([spec], max_pixels=max(1, int(budget)))


def color_regions(raster_set: RasterSet, layer: str, params: ColorRegionParams | None = None,
                  bounds: tuple[float, float, float, float] | None = None, progress: Progress = SILENT) -> ToolResult:
    """Mark the anomalous (index) or coloured (rendering) regions of `layer` as polygons.

    bounds: optional (xmin, ymin, xmax, ymax) in the analysis CRS limiting the search.
    Returns zones in the analysis CRS (zones.ZONE_COLUMNS); stats hold the threshold used.
    """
    params = params or ColorRegionParams()
    spec = raster_set.spec(layer)
    reader = raster_set.readers.get(layer)
    if reader is None:
        raise LodestarError(f"{layer} is a vector layer; the colour-region tool needs a raster.")
    mode = _resolve_mode(reader, spec, params)
    window = pixel_window(raster_set.grid, bounds)
    if mode == "rgb":
        return _rgb_regions(raster_set, spec, reader, params, window, progress)
    return _index_regions(raster_set, spec, reader, params, window, progress)


def _resolve_mode(reader: RasterReader, spec: LayerSpec, params: ColorRegionParams) -> str:
    categorical = reader.is_integer and reader.count == 1 and (spec.role == "geological_map" or spec.legend)
    if categorical:
        raise LodestarError(f"{spec.name} is a categorical map (unit codes, not magnitudes); select favourable "
                            "units by name with the geological-unit tools instead of the anomaly tool.")
    if params.mode == "rgb":
        if reader.count < 3:
            raise LodestarError(f"{spec.name} has {reader.count} band(s), not an RGB rendering; use mode 'index' "
                                "(or 'auto') for a single-band index raster.")
        return "rgb"
    if params.mode == "index" or params.band is not None:
        if reader.count > 1 and params.band is None:
            what = "an RGB rendering" if reader.is_rgb else f"a {reader.count}-band raster"
            hint = "use mode 'rgb' (or 'auto') to read its colours" if reader.is_rgb else \
                "choose the band to use, or compute an index first (lodestar:alteration_indices)"
            raise LodestarError(f"{spec.name} is {what}, not a single-band index; {hint}.")
        if params.band is not None and not 1 <= params.band <= reader.count:
            raise LodestarError(f"{spec.name} has {reader.count} band(s); band {params.band} does not exist.")
        return "index"
    if reader.is_rgb:
        return "rgb"
    if reader.count > 1:
        raise LodestarError(f"{spec.name} has {reader.count} bands; choose the band to use as the index, or compute "
                            "an index first (lodestar:alteration_indices).")
    return "index"


# ---------------------------------------------------------------------------------------------- index path

class _IndexSource:
    """Reads a window of the layer's evidence (value, or -value for `favourable: low`) in row blocks."""

    def __init__(self, raster_set: RasterSet, spec: LayerSpec, reader: RasterReader, band: int, window: Window):
        self.sign = -1.0 if spec.favourable == "low" else 1.0
        self.window = window
        self.rows, self.cols = int(window.height), int(window.width)
        self.reader = reader if _on_analysis_grid(reader, raster_set.grid) else None
        self.band = band
        self.memory = None
        if self.reader is None:
            data = raster_set.read(spec.name)[band - 1]
            r0, c0 = int(window.row_off), int(window.col_off)
            self.memory = data[r0:r0 + self.rows, c0:c0 + self.cols]

    def block(self, r0: int, r1: int, c0: int = 0, c1: int | None = None) -> np.ma.MaskedArray:
        """Evidence of window rows r0:r1 and columns c0:c1 (rows clipped to the window)."""
        r0, r1 = max(0, r0), min(self.rows, r1)
        c1 = self.cols if c1 is None else c1
        if self.memory is not None:
            return self.memory[r0:r1, c0:c1] * self.sign
        assert self.reader is not None  # read into memory when not on the analysis grid
        win = Window(self.window.col_off + c0, self.window.row_off + r0, c1 - c0, r1 - r0)
        data = self.reader.read([self.band], window=win)[0]
        if self.sign < 0:
            np.negative(data.data, out=data.data)
        return data

    def sample(self) -> np.ndarray:
        """Valid evidence values of a regular sample of at most SAMPLE_PIXELS pixels."""
        step = max(1, int(math.ceil(math.sqrt(self.rows * self.cols / SAMPLE_PIXELS))))
        if self.memory is not None:
            data = self.memory[::step, ::step]
        else:
            assert self.reader is not None  # read into memory when not on the analysis grid
            shape = (max(1, self.rows // step), max(1, self.cols // step))
            data = self.reader.read([self.band], window=self.window, out_shape=shape)[0]
        return (data.compressed() * self.sign).astype("float64")


def _on_analysis_grid(reader: RasterReader, grid: RasterGrid) -> bool:
    """True when the reader's own pixels are the analysis grid's pixels (no resampling needed)."""
    g = reader.grid
    if (g.width, g.height) != (grid.width, grid.height):
        return False
    if (g.crs is None) != (grid.crs is None) or (g.crs is not None and not g.crs.equals(grid.crs)):
        return False
    tolerance = 1e-6 * max(abs(grid.transform.a), abs(grid.transform.e))
    return all(abs(a - b) <= tolerance for a, b in zip(g.transform[:6], grid.transform[:6]))


def otsu_threshold(values: np.ndarray, bins: int = 256) -> float:
    """Otsu's threshold of a 1-D sample: the cut maximising the between-class variance."""
    hist, edges = np.histogram(values, bins=bins)
    centres = (edges[:-1] + edges[1:]) / 2
    weight0 = np.cumsum(hist)
    weight1 = weight0[-1] - weight0
    sum0 = np.cumsum(hist * centres)
    mean0 = sum0 / np.maximum(weight0, 1)
    mean1 = (sum0[-1] - sum0) / np.maximum(weight1, 1)
    between = weight0 * weight1 * (mean0 - mean1) ** 2
    return float(edges[int(np.argmax(between[:-1])) + 1])


def evidence_threshold(sample: np.ndarray, params: ColorRegionParams, sign: float) -> float:
    """The threshold on the evidence scale (value, or -value for low-favourable layers)."""
    if params.method == "value":
        assert params.value is not None  # refused by ColorRegionParams without one
        return float(params.value) * sign
    if params.method == "percentile":
        return float(np.percentile(sample, params.percentile))
    if params.method == "sigma":
        return float(sample.mean() + params.k_sigma * sample.std())
    return otsu_threshold(sample)


def smoothed(block: np.ma.MaskedArray, sigma: float) -> np.ndarray:
    """Gaussian-smoothed evidence; nodata does not bleed in (normalised convolution); nodata stays NaN."""
    mask = np.ma.getmaskarray(block)
    values = block.filled(0).astype("float32", copy=False)
    if sigma <= 0:
        out = values.copy()
    elif mask.any():
        weights = ndimage.gaussian_filter((~mask).astype("float32"), sigma, truncate=SMOOTH_TRUNCATE)
        out = ndimage.gaussian_filter(values, sigma, truncate=SMOOTH_TRUNCATE)
        np.divide(out, weights, out=out, where=weights > 1e-6)
    else:
        out = ndimage.gaussian_filter(values, sigma, truncate=SMOOTH_TRUNCATE)
    out[mask] = np.nan
    return out


def _index_regions(raster_set: RasterSet, spec: LayerSpec, reader: RasterReader, params: ColorRegionParams,
                   window: Window, progress: Progress) -> ToolResult:
    band = params.band or 1
    source = _IndexSource(raster_set, spec, reader, band, window)
    log = list(raster_set.log)
    sample = source.sample()
    if sample.size == 0:
        raise LodestarError(f"{spec.name} has no valid pixels in the analysis area (all nodata); check its nodata "
                            "value and extent, or choose another layer.")
    threshold = evidence_threshold(sample, params, source.sign)
    # A statistical threshold on the lowest value (a sparse or flat layer) would mark everything: keep what exceeds it.
    strict = params.method != "value" and threshold <= float(sample.min())
    if strict:
        threshold = float(sample.min())
    progress.set(5)
    mask, valid_count = _threshold_blocks(source, threshold, params.smooth_px, strict, progress.scaled(5, 55))
    grid = raster_set.grid.window_grid(window)
    min_px = max(params.min_area_px, int(math.ceil(params.min_area_fraction * valid_count)))
    kept = connected_components(mask, min_px)
    del mask
    progress.set(65)
    records = []
    for number, (slices, component) in enumerate(kept):
        progress.check()
        values = _block_values(source, slices, component)
        geometry = mask_polygon(component, grid, slices, params.simplify_px)
        records.append((float(values.mean()), float(values.max()), float(values.min()), geometry))
        progress.set(65 + 30 * (number + 1) / max(1, len(kept)))
    low = source.sign < 0
    records.sort(key=lambda r: (-r[0], -r[3].area))
    if params.max_regions is not None:
        records = records[: params.max_regions]
    rows = []
    for i, (mean_e, max_e, min_e, geometry) in enumerate(records, start=1):
        lo, hi = sorted((min_e * source.sign, max_e * source.sign))
        word = "low-value" if low else "high-value"
        what = f"{word} anomaly, values {lo:.4g} to {hi:.4g} (threshold {threshold * source.sign:.4g})"
        rows.append(zone_record(geometry, raster_set.grid, zone_id=f"{spec.name}:{i}", layer=spec.name,
                                role=spec.role, kind="anomaly", score_mean=mean_e, score_max=max_e, what=what))
    zones = zones_frame(rows, raster_set.crs)
    stats = {
        "mode": "index",
        "threshold": threshold * source.sign,
        "threshold_method": params.method,
        "favourable": spec.favourable,
        "valid_pixels": int(valid_count),
        "min_area_px": int(min_px),
        "regions": len(rows),
        "blockwise": source.reader is not None,
        "strict": strict,
    }
    cmp = ("<" if low else ">") + ("" if strict else "=")
    log.append(f"{spec.name}: {params.method} threshold {threshold * source.sign:.4g} (keep values {cmp} it); "
               f"{len(rows)} region(s) of at least {min_px} pixels.")
    if low:
        log.append(f"{spec.name} is favourable where low: scores are negated values (higher = more favourable).")
    progress.set(100)
    return ToolResult("color_regions", spec.name, zones, params=asdict(params), stats=stats, log=log)


def _threshold_blocks(source: _IndexSource, threshold: float, sigma: float, strict: bool, progress: Progress):
    """Boolean mask of smoothed evidence >= threshold (> when strict) over the window, in row blocks with a halo."""
    rows, cols = source.rows, source.cols
    mask = np.zeros((rows, cols), dtype=bool)
    halo = int(math.ceil(SMOOTH_TRUNCATE * sigma)) + 1 if sigma > 0 else 0
    step = max(1, BLOCK_PIXELS // max(1, cols))
    valid = 0
    for strip in block_windows((rows, cols), step, strips=True):
        progress.check()
        r0, r1 = strip.row_off, strip.row_off + strip.height
        top, bottom = max(0, r0 - halo), min(rows, r1 + halo)
        block = source.block(top, bottom)
        valid += int(np.count_nonzero(~np.ma.getmaskarray(block)[r0 - top:r0 - top + (r1 - r0)]))
        smooth = smoothed(block, sigma)[r0 - top:r0 - top + (r1 - r0)]
        with np.errstate(invalid="ignore"):
            if strict:   # above the lowest value by more than float rounding of the smoothing
                np.greater(smooth, threshold + 1e-6 * max(1.0, abs(threshold)), out=mask[r0:r1])
            else:
                np.greater_equal(smooth, threshold, out=mask[r0:r1])
        progress.set(100 * r1 / rows)
    return mask, valid


COARSE_CELL = 8
"""Large masks are first labelled on cells of COARSE_CELL x COARSE_CELL pixels (any pixel set)."""
DIRECT_LABEL_PIXELS = 4_000_000
"""Masks up to this size are labelled directly."""
MAX_COARSE_CANDIDATES = 2000
"""Above this many candidate cell groups, labelling the whole mask at once is quicker."""


def connected_components(mask: np.ndarray, min_px: int) -> list:
    """[(slices, component mask cut to slices)] of the 4-connected components of at least min_px pixels.

    Large masks are labelled coarse to fine: a component always lies inside one 4-connected group of
    cells that contain set pixels, and groups with too few cells to hold min_px pixels are skipped, so
    only the candidate groups are labelled at full resolution (no full-size label image).
    """
    min_px = max(1, int(min_px))
    if mask.size <= DIRECT_LABEL_PIXELS:
        return _label_within(mask, min_px, 0, 0)
    f = COARSE_CELL
    coarse_labels, count = ndimage.label(_coarse_any(mask, f))
    if count == 0:
        return []
    cells = np.bincount(coarse_labels.ravel(), minlength=count + 1)
    candidates = [k for k in range(1, count + 1) if cells[k] * f * f >= min_px]
    if len(candidates) > MAX_COARSE_CANDIDATES:
        return _label_within(mask, min_px, 0, 0)
    objects = ndimage.find_objects(coarse_labels)
    rows, cols = mask.shape
    found = []
    for k in candidates:
        cell_rows, cell_cols = objects[k - 1]
        r0, r1 = cell_rows.start * f, min(rows, cell_rows.stop * f)
        c0, c1 = cell_cols.start * f, min(cols, cell_cols.stop * f)
        own = coarse_labels[cell_rows, cell_cols] == k
        own = np.repeat(np.repeat(own, f, axis=0), f, axis=1)[: r1 - r0, : c1 - c0]
        found.extend(_label_within(mask[r0:r1, c0:c1] & own, min_px, r0, c0))
    return found


def _coarse_any(mask: np.ndarray, f: int) -> np.ndarray:
    """Cells of f x f pixels that contain a set pixel (edge cells may be smaller)."""
    rows, cols = mask.shape
    full_rows, full_cols = rows // f * f, cols // f * f
    out = np.zeros((-(-rows // f), -(-cols // f)), dtype=bool)
    if full_rows and full_cols:
        block = mask[:full_rows, :full_cols].reshape(full_rows // f, f, full_cols // f, f)
        out[: full_rows // f, : full_cols // f] = block.any(axis=(1, 3))
    if full_cols < cols:
        out[:, -1] |= np.logical_or.reduceat(mask[:, full_cols:].any(axis=1), np.arange(0, rows, f))
    if full_rows < rows:
        out[-1, :] |= np.logical_or.reduceat(mask[full_rows:, :].any(axis=0), np.arange(0, cols, f))
    return out


def _label_within(mask: np.ndarray, min_px: int, row_offset: int, col_offset: int) -> list:
    labels, count = ndimage.label(mask)
    found = []
    for label, (rows, cols) in enumerate(ndimage.find_objects(labels) if count else [], start=1):
        if (rows.stop - rows.start) * (cols.stop - cols.start) < min_px:
            continue  # a component never covers more pixels than its bounding box
        component = labels[rows, cols] == label
        if np.count_nonzero(component) >= min_px:
            found.append(((slice(rows.start + row_offset, rows.stop + row_offset),
                           slice(cols.start + col_offset, cols.stop + col_offset)), component))
    return found


def _block_values(source: _IndexSource, slices, component: np.ndarray) -> np.ndarray:
    """Evidence values of one component (its bounding box read from the source)."""
    rows, cols = slices
    block = source.block(rows.start, rows.stop, cols.start, cols.stop)
    values = block.data[component & ~np.ma.getmaskarray(block)]
    return values if values.size else block.data[component]


def mask_polygon(component: np.ndarray, grid: RasterGrid, slices, simplify_px: float):
    """The polygon (holes kept) of a boolean component cut out at `slices` of `grid`, simplified."""
    rows, cols = slices
    sub = grid.window_grid(Window(cols.start, rows.start, cols.stop - cols.start, rows.stop - rows.start))
    return labelled_polygons(component.astype("int32"), sub, simplify_px)[1]


# ------------------------------------------------------------------------------------------------ rgb path

def rgb_to_hsv(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hue (degrees 0-360), saturation (0-1) and value (0-1) of an (H, W, 3) array in 0-255."""
    rgb = rgb.astype("float32") / 255.0
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    high = rgb.max(axis=-1)
    low = rgb.min(axis=-1)
    delta = high - low
    saturation = np.where(high > 0, delta / np.maximum(high, 1e-6), 0.0)
    safe = np.maximum(delta, 1e-6)
    hue = np.where(high == r, ((g - b) / safe) % 6, np.where(high == g, (b - r) / safe + 2, (r - g) / safe + 4))
    hue = np.where(delta > 0, hue * 60.0, 0.0)
    return hue.astype("float32"), saturation.astype("float32"), high.astype("float32")


@dataclass
class ColorBar:
    """A colour bar found in a rendering: its pixel box and its colours from the low to the high end."""

    rows: slice
    cols: slice
    colours: np.ndarray  # (n, 3) float RGB, low end first
    vertical: bool

    def values(self, rgb: np.ndarray) -> np.ndarray:
        """0-1 position on the bar of the nearest bar colour of each (..., 3) pixel colour."""
        flat = rgb.reshape(-1, 3)
        quantised = (flat // 8).astype(np.int32)
        keys = quantised[:, 0] * 1024 + quantised[:, 1] * 32 + quantised[:, 2]
        unique, inverse = np.unique(keys, return_inverse=True)
        centres = np.stack([unique // 1024, (unique // 32) % 32, unique % 32], axis=1).astype("float32") * 8 + 4
        picks = np.linspace(0, len(self.colours) - 1, min(len(self.colours), 128)).round().astype(int)
        lut = self.colours[picks]
        distances = ((centres[:, None, :] - lut[None, :, :]) ** 2).sum(axis=2)
        positions = picks[distances.argmin(axis=1)] / max(1, len(self.colours) - 1)
        return positions[inverse].reshape(rgb.shape[:-1]).astype("float32")


def find_colorbar(rgb: np.ndarray, coloured: np.ndarray, hue: np.ndarray, nodata: np.ndarray) -> ColorBar | None:
    """The colour bar of a rendering: a thin, elongated, well-filled strip near an edge of its data whose hue moves
    one way along it through 60 degrees or more (a coloured stratum along an edge has as many hues but wanders).

    Sizes and edges are those of the box holding the data, not of the image: a nodata border around a map moves
    its bar away from the image's edges and makes it short against the image."""
    top, bottom, left, right = data_box(nodata)
    height, width = bottom - top, right - left
    labels, count = ndimage.label(coloured)
    best = None
    for index, slices in enumerate(ndimage.find_objects(labels), start=1):
        rows, cols = slices
        h, w = rows.stop - rows.start, cols.stop - cols.start
        long_side, short_side = max(h, w), min(h, w)
        if long_side < 0.25 * min(height, width) or long_side < 4 * short_side:
            continue
        component = labels[slices] == index
        if component.mean() < 0.6:  # well filled, allowing for a bar slightly turned by reprojection
            continue
        edge_gap = min(rows.start - top, cols.start - left, bottom - rows.stop, right - cols.stop)
        if edge_gap > 0.15 * max(height, width):
            continue
        vertical = h > w
        profile_hue = _profile(hue[slices], component, vertical)
        if _hue_span(profile_hue) < 60 or _one_way(profile_hue) < 0.6:
            continue
        if best is None or long_side > best[0]:
            colours = np.stack([_profile(rgb[slices][..., c].astype("float32"), component, vertical)
                                for c in range(3)], axis=1)
            best = (long_side, ColorBar(rows, cols, colours[::-1] if vertical else colours, vertical))
    return None if best is None else best[1]


def _profile(values: np.ndarray, component: np.ndarray, vertical: bool) -> np.ndarray:
    """Median of each row (vertical bar) or column (horizontal bar) of a component."""
    axis = 1 if vertical else 0
    filled = np.where(component, values, np.nan)
    covered = component.any(axis=axis)
    return np.nanmedian(filled[covered] if vertical else filled[:, covered], axis=axis)


def _hue_span(hues: np.ndarray) -> float:
    """Degrees of hue a sequence sweeps through (circular, summed step by step)."""
    steps = np.diff(hues)
    steps = (steps + 180) % 360 - 180
    return float(np.abs(np.cumsum(steps)).max()) if steps.size else 0.0


def _one_way(hues: np.ndarray, pieces: int = 16) -> float:
    """How much of a hue sequence's path goes one way: |net change| / path length over the circular mean hues of
    `pieces` stretches of it (1 for a colour bar's ramp; stretches, so that pixel noise of a scanned or resampled
    bar does not count as path)."""
    angles = np.deg2rad(np.asarray(hues, dtype="float64"))
    stretches = [part for part in np.array_split(angles, min(pieces, len(angles))) if part.size]
    means = np.rad2deg([np.arctan2(np.sin(part).mean(), np.cos(part).mean()) for part in stretches])
    steps = (np.diff(means) + 180) % 360 - 180
    path = float(np.abs(steps).sum())
    return abs(float(steps.sum())) / path if path > 0 else 0.0


def hue_ramp_values(hue: np.ndarray) -> np.ndarray:
    """0-1 value of hues on a blue (low) to red (high) rainbow ramp, used when no colour bar is found."""
    return np.clip((240.0 - np.where(hue > 300, hue - 360, hue)) / 240.0, 0.0, 1.0).astype("float32")


def _colour_planes(rgb: np.ndarray, params: ColorRegionParams, nodata: np.ndarray):
    """(hue, coloured mask) of an (H, W, 3) image: saturated and bright enough, with data."""
    hue, saturation, brightness = rgb_to_hsv(rgb)
    return hue, (saturation >= params.saturation_min) & (brightness >= params.brightness_min) & ~nodata


def locate_colorbar(raster_set: RasterSet, reader: RasterReader, window: Window, rgb: np.ndarray,
                    coloured: np.ndarray, hue: np.ndarray, params: ColorRegionParams):
    """(colour bar, the (rows, cols) box it covers in the analysis window or None).

    The bar is looked for in the layer's own pixels first, where it is whole even when the analysis
    area (the layers' common extent) cuts it off; its box is then carried to the analysis window.
    Bar positions are given in the layer's own pixels.
    """
    native, native_grid = reader.read_overview(RENDERING_LIMIT, bands=[1, 2, 3], resampling=Resampling.nearest)
    native_rgb = np.clip(np.moveaxis(native.filled(0), 0, -1), 0, 255)
    native_nodata = np.ma.getmaskarray(native).any(axis=0)
    native_hue, native_coloured = _colour_planes(native_rgb, params, native_nodata)
    bar = find_colorbar(native_rgb, native_coloured, native_hue, native_nodata)
    if bar is None:
        return None, None
    box = _box_on_window(bar, native_grid, reader, raster_set.grid, window)
    scale_r, scale_c = reader.grid.height / native_grid.height, reader.grid.width / native_grid.width
    bar.rows = slice(int(bar.rows.start * scale_r), int(math.ceil(bar.rows.stop * scale_r)))
    bar.cols = slice(int(bar.cols.start * scale_c), int(math.ceil(bar.cols.stop * scale_c)))
    return bar, box


def _box_on_window(bar: ColorBar, native_grid: RasterGrid, reader: RasterReader, grid: RasterGrid, window: Window,
                   margin: int = 2):
    """The bar's box (plus a margin) in analysis-window pixels, or None when it lies outside the window."""
    cols = [bar.cols.start, bar.cols.stop, bar.cols.start, bar.cols.stop]
    rows = [bar.rows.start, bar.rows.start, bar.rows.stop, bar.rows.stop]
    xs, ys = native_grid.pixel_to_map(cols, rows)
    if grid.crs is None:   # unreferenced: every layer is stretched over the first layer's pixel space
        c = np.asarray(xs) * grid.width / reader.grid.width
        r = np.asarray(ys) * grid.height / reader.grid.height
    else:
        assert reader.grid.crs is not None  # on a georeferenced grid every layer is georeferenced
        if not reader.grid.crs.equals(grid.crs):
            xs, ys = transform(reader.grid.crs.to_wkt(), grid.crs.to_wkt(), list(map(float, xs)), list(map(float, ys)))
        c, r = grid.map_to_pixel(xs, ys)
    c0 = int(math.floor(np.min(c))) - margin - int(window.col_off)
    c1 = int(math.ceil(np.max(c))) + margin - int(window.col_off)
    r0 = int(math.floor(np.min(r))) - margin - int(window.row_off)
    r1 = int(math.ceil(np.max(r))) + margin - int(window.row_off)
    c0, c1 = max(0, c0), min(int(window.width), c1)
    r0, r1 = max(0, r0), min(int(window.height), r1)
    if c1 <= c0 or r1 <= r0:
        return None
    return slice(r0, r1), slice(c0, c1)


@dataclass
class ColourLevels:
    """A rendering read on the analysis grid (or a window of it)."""

    values: np.ndarray    # each pixel's position on the colour bar (or a blue-to-red ramp when there is none)
    coloured: np.ndarray  # saturated and bright enough, with data, off the colour bar
    nodata: np.ndarray
    bar: ColorBar | None  # the ColorBar found, or None
    box: tuple | None     # the (rows, cols) the bar covers in the window, or None
    log: list

    def level_map(self) -> np.ma.MaskedArray:
        """Colour level where coloured, 0 on the grey backdrop; no data and the bar masked."""
        left_out = self.nodata.copy()
        if self.box is not None:
            left_out[self.box] = True
        return np.ma.masked_array(np.where(self.coloured, self.values, 0.0), mask=left_out)


def colour_levels(raster_set: RasterSet, layer: str, params: ColorRegionParams | None = None,
                  window: Window | None = None) -> ColourLevels:
    """A rendering's colours read on its colour bar, on the analysis grid or a window of it."""
    params = params or ColorRegionParams()
    spec = raster_set.spec(layer)
    reader = raster_set.readers[layer]
    window = window or pixel_window(raster_set.grid, None)
    log = list(raster_set.log)
    data = raster_set.read(spec.name)
    r0, c0 = int(window.row_off), int(window.col_off)
    data = data[:3, r0:r0 + int(window.height), c0:c0 + int(window.width)]
    nodata = np.ma.getmaskarray(data).any(axis=0)
    if nodata.all():
        raise LodestarError(f"{spec.name} has no valid pixels in the analysis area (all nodata); check its extent.")
    rgb = np.clip(np.moveaxis(data.filled(0), 0, -1), 0, 255)
    hue, coloured = _colour_planes(rgb, params, nodata)
    bar, box = locate_colorbar(raster_set, reader, window, rgb, coloured, hue, params) if params.colorbar \
        else (None, None)
    if bar is not None:
        if box is not None:
            coloured[box] = False
        values = bar.values(rgb)
        where = "inside" if box is not None else "outside"
        log.append(f"{spec.name}: colour bar found at rows {bar.rows.start}-{bar.rows.stop}, columns "
                   f"{bar.cols.start}-{bar.cols.stop} of the layer ({'vertical' if bar.vertical else 'horizontal'}, "
                   f"{where} the analysis area); colours read on it"
                   + (" and the bar left out." if box is not None else "."))
    else:
        values = hue_ramp_values(hue)
        log.append(f"{spec.name}: no colour bar found; colours read on a blue (low) to red (high) ramp.")
    return ColourLevels(values, coloured, nodata, bar, box, log)


def _rgb_regions(raster_set: RasterSet, spec: LayerSpec, reader: RasterReader, params: ColorRegionParams,
                 window: Window, progress: Progress) -> ToolResult:
    read = colour_levels(raster_set, spec.name, params, window)
    values, coloured, nodata, bar, box, log = read.values, read.coloured, read.nodata, read.bar, read.box, read.log
    progress.set(40)
    mask = coloured & (values >= params.level)
    if params.smooth_px > 0:
        mask = ndimage.binary_opening(mask, structure=np.ones((3, 3), bool))
    valid_count = int((~nodata).sum())
    min_px = max(params.min_area_px, int(math.ceil(params.min_area_fraction * valid_count)))
    kept = connected_components(mask, min_px)
    grid = raster_set.grid.window_grid(window)
    records = []
    for slices, component in kept:
        progress.check()
        inside = values[slices][component]
        geometry = mask_polygon(component, grid, slices, params.simplify_px)
        records.append((float(inside.mean()), float(inside.max()), geometry))
    records.sort(key=lambda r: (-r[0], -r[2].area))
    if params.max_regions is not None:
        records = records[: params.max_regions]
    rows_out = []
    for i, (mean, peak, geometry) in enumerate(records, start=1):
        what = f"coloured anomaly at {mean:.0%} of the colour scale (peak {peak:.0%})"
        rows_out.append(zone_record(geometry, raster_set.grid, zone_id=f"{spec.name}:{i}", layer=spec.name,
                                    role=spec.role, kind="colour_anomaly", score_mean=mean, score_max=peak, what=what))
    zones = zones_frame(rows_out, raster_set.crs)
    stats = {
        "mode": "rgb",
        "colorbar": None if bar is None else [bar.rows.start, bar.cols.start, bar.rows.stop, bar.cols.stop],
        "colorbar_excluded": None if box is None else [box[0].start, box[1].start, box[0].stop, box[1].stop],
        "level": params.level,
        "coloured_pixels": int(coloured.sum()),
        "min_area_px": int(min_px),
        "regions": len(rows_out),
    }
    log.append(f"{spec.name}: {len(rows_out)} coloured region(s) at or above {params.level:.0%} of the colour scale.")
    progress.set(100)
    return ToolResult("color_regions", spec.name, zones, params=asdict(params), stats=stats, log=log)
