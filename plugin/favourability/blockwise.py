"""Full-resolution favourability surfaces, block by block on Dask arrays over windowed raster reads.

The reasoning chain works on its budget grid (raster_io.RasterSet, a few million pixels); the surface it
chose (its evidence specs, overlay method and weights) is then made again at the layers' finest resolution
(or a resolution the user sets) over any extent, with memory bounded by the block size, not the raster
size: each block reads only its window of every layer (plus a margin for the interpolation), and is written
to a tiled, deflate-compressed GeoTIFF with overviews as soon as it is done.

Pointwise steps (fuzzy memberships, inversion, favourable units, the overlay) are the in-memory functions
applied to each block. Steps that look at the whole layer get their global figures first, in one blockwise
pass reduced as a tree:
- percentile rank and the log percentile stretch: the layer's value distribution, exact (distinct values and
  counts) on grids up to EXACT_CELLS cells, else a histogram of 2**20 bins over the float32 values' order
  (a rank within 1/2**20 of the layer's range in order, a percentile within 1/2048 of its value);
- favourable units: the codes present in the map;
- distance to features: each block's own distance transform over a window grown until every cell's nearest
  feature cell provably lies inside it (the whole-grid transform's value, but where GDAL's all-touched
  burning of a line differs by a pixel between the window and the whole canvas); a cell whose nearest
  feature lies beyond MAX_WINDOW_BLOCKS block areas takes the distance from a coarse whole-canvas transform
  (within one coarse cell);
- the weighted mean of ranks: each membership's distribution, in a second pass over the memberships (exact or a
  histogram as above), by which each block's memberships are ranked before they are combined.
A run whose surface is calibrated (fitted on deposits) gets its model's surface instead, with its uncertainty
(blockwise_fitted.py, which makes a run's surface either way).

`schedule`: "" computes on local threads (dask's threaded scheduler), an address (tcp://host:8786) on that
cluster (the layers must be at the same paths on its workers). Progress reports blocks done; a cancel stops
submitting blocks and cancels those in flight (on local threads, once the blocks in progress are done).
"""
from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from affine import Affine
from rasterio.enums import Resampling
from rasterio.features import rasterize
from rasterio.transform import array_bounds
from rasterio.warp import reproject
from rasterio.windows import Window
from scipy import ndimage
from shapely.ops import clip_by_rect

from ..errors import Cancelled, LodestarError
from ..progress import SILENT, Progress
from ..raster_blocks import block_windows
from ..raster_io import LayerSpec, RasterGrid, RasterSet, resampling_of
from ..raster_writer import build_overviews, new_raster
from ..tools.categorical import read_legend
from ..tools.vector_evidence import VectorEvidenceParams, unit_names
from . import transforms as tf
from .evidence import EvidenceSpec, membership_of
from .evidence_layers import polygon_codes, vector_features
from .outputs import NODATA
from .overlay import METHODS, OverlayMethod, combine

DEFAULT_BLOCK = 1024
"""Block edge in pixels: a few tens of MB of working memory per block and thread."""
EXACT_CELLS = 16_000_000
"""Grids up to this many cells get exact ranks and percentiles; larger ones a 2**20-bin histogram."""
HIST_SHIFT = 12
HIST_BINS = 1 << (32 - HIST_SHIFT)
MAX_WINDOW_BLOCKS = 9
COARSE_CELLS = 4_000_000
FULL_TILE = 512


def full_resolution_grid(layers: list, resolution: float | None = None,
                         progress: Progress = SILENT) -> tuple[RasterSet, RasterGrid]:
    """The layers' common extent at their finest resolution (`resolution` map units per pixel when given):
    a RasterSet for the layers' metadata (only where each raster holds data is read, decimated, `progress.check()`
    between blocks) and the full-resolution grid."""
    raster_set = RasterSet([s if isinstance(s, LayerSpec) else LayerSpec(**s) for s in layers], max_pixels=sys.maxsize,
                           progress=progress)
    grid = raster_set.grid
    if resolution:
        if not resolution > 0:
            raise LodestarError(f"The resolution must be positive, not {resolution}.")
        xmin, ymin, xmax, ymax = grid.bounds
        width = max(1, int(round((xmax - xmin) / resolution)))
        height = max(1, int(round((ymax - ymin) / resolution)))
        grid = RasterGrid(Affine((xmax - xmin) / width, 0, xmin, 0, -(ymax - ymin) / height, ymax), width, height,
                          grid.crs)
    raster_set.grid = grid
    return raster_set, grid


def read_block(raster_set: RasterSet, name: str, window: Window) -> np.ma.MaskedArray:
    """One layer on a window of the raster set's grid, float32 masked (bands, rows, cols): only the source pixels
    that window touches (plus one on each side) are read, resampled as RasterSet.read does."""
    reader = raster_set.readers.get(name)
    if reader is None:
        raise LodestarError(f"{name} is not a raster layer of this analysis.")
    grid = raster_set.grid
    block = grid.window_grid(window)
    resampling = resampling_of(reader, raster_set.spec(name))
    bands = list(range(1, reader.count + 1))
    if grid.crs is None:
        sy, sx = reader.grid.height / grid.height, reader.grid.width / grid.width
        src = Window(window.col_off * sx, window.row_off * sy, window.width * sx, window.height * sy)
        return reader.read(bands, window=src, out_shape=(int(window.height), int(window.width)),
                           resampling=resampling)
    aligned = _aligned_window(reader.grid, block)
    if aligned is not None:  # the same pixels: a plain windowed read, as the warp would give them
        return reader.read(bands, window=aligned)
    try:
        win = reader.grid.source_window(block)
    except LodestarError:
        return np.ma.masked_all((len(bands), block.height, block.width), dtype="float32")
    decimation = Resampling.nearest if resampling == Resampling.nearest else Resampling.average
    src, src_grid = reader.read_overview(max(4 * grid.width * grid.height, 1), bands, window=win,
                                         resampling=decimation)
    out = np.full((len(bands), block.height, block.width), np.nan, dtype="float32")
    filled = src.filled(np.nan).astype("float32")
    assert src_grid.crs is not None  # source_window has placed the grid's bounds in it
    for i in range(len(bands)):
        reproject(filled[i], out[i], src_transform=src_grid.transform, src_crs=src_grid.crs.to_wkt(), src_nodata=np.nan,
                  dst_transform=block.transform, dst_crs=grid.crs.to_wkt(), dst_nodata=np.nan, resampling=resampling)
    return np.ma.masked_invalid(out)


def _aligned_window(source: RasterGrid, block: RasterGrid) -> Window | None:
    """The source window holding exactly the block's pixels when both grids share CRS, pixel size and pixel
    edges and the block lies inside the source; else None."""
    if source.crs is None or not source.crs.equals(block.crs):
        return None
    s, b = source.transform, block.transform
    if abs(s.a - b.a) > 1e-9 * abs(s.a) or abs(s.e - b.e) > 1e-9 * abs(s.e) or s.b or s.d:
        return None
    col, row = (b.c - s.c) / s.a, (b.f - s.f) / s.e
    if abs(col - round(col)) > 1e-6 or abs(row - round(row)) > 1e-6:
        return None
    col, row = int(round(col)), int(round(row))
    if col < 0 or row < 0 or col + block.width > source.width or row + block.height > source.height:
        return None
    return Window(col, row, block.width, block.height)


def block_reads(raster_set: RasterSet, window: Window) -> dict:
    """Every raster layer on the window, read once for the block."""
    return {name: read_block(raster_set, name, window) for name in raster_set.readers}


def block_valid(reads: dict, shape: tuple) -> np.ndarray:
    """Cells where at least one raster layer has data (RasterSet.valid_mask of one block), from block_reads."""
    mask = np.zeros(shape, dtype=bool)
    for data in reads.values():
        mask |= ~np.ma.getmaskarray(data).all(axis=0)
    return mask


# -- value distributions (percentile rank, log percentile) --------------------------------------------------

def _sort_keys(values: np.ndarray) -> np.ndarray:
    """uint32 keys in the order of the float32 values (negative values flipped)."""
    bits = np.ascontiguousarray(values, dtype="float32").view("uint32")
    return np.where(bits & 0x80000000, ~bits, bits | 0x80000000).astype("uint32")


def _key_values(keys: np.ndarray) -> np.ndarray:
    keys = np.asarray(keys, dtype="uint32")
    bits = np.where(keys & 0x80000000, keys & 0x7FFFFFFF, ~keys).astype("uint32")
    return bits.view("float32").astype("float64")


@dataclass
class Distribution:
    """The valid values of one layer: exact (sorted distinct values and counts) or a histogram of sort keys."""

    n: int = 0
    values: np.ndarray | None = None
    counts: np.ndarray | None = None
    hist: np.ndarray | None = None
    min_positive: float = math.inf

    @classmethod
    def of(cls, data: np.ndarray, exact: bool) -> Distribution:
        data = np.asarray(data, dtype="float64")
        positive = data[data > 0]
        low = float(positive.min()) if positive.size else math.inf
        if exact:
            values, counts = np.unique(data, return_counts=True)
            return cls(int(data.size), values, counts.astype("int64"), None, low)
        hist = np.bincount(_sort_keys(data) >> HIST_SHIFT, minlength=HIST_BINS).astype("int64")
        return cls(int(data.size), None, None, hist, low)

    def merge(self, other: Distribution) -> Distribution:
        low = min(self.min_positive, other.min_positive)
        if self.hist is not None or other.hist is not None:
            hist = (self.hist if self.hist is not None else 0) + (other.hist if other.hist is not None else 0)
            assert isinstance(hist, np.ndarray)  # one of them at least is a histogram
            return Distribution(self.n + other.n, None, None, hist, low)
        values, inverse = np.unique(np.concatenate([self.values, other.values]), return_inverse=True)
        counts = np.bincount(inverse, weights=np.concatenate([self.counts, other.counts]),
                             minlength=values.size).astype("int64")
        return Distribution(self.n + other.n, values, counts, None, low)

    @property
    def exact(self) -> bool:
        return self.hist is None

    def ranks(self, data: np.ndarray) -> np.ndarray:
        """percentile_rank of `data` among the layer's values: (average rank - 1) / (n - 1)."""
        if self.n == 1:
            return np.full(np.shape(data), 0.5)
        return np.clip((self._average_ranks(data) - 1.0) / (self.n - 1.0), 0.0, 1.0)

    def mid_ranks(self, data: np.ndarray) -> np.ndarray:
        """The share of the values below each of `data`, ties at their mid-rank: (average rank - 0.5) / n, as
        calibration.py ranks a surface over the study area."""
        return np.clip((self._average_ranks(data) - 0.5) / self.n, 0.0, 1.0)

    def _average_ranks(self, data: np.ndarray) -> np.ndarray:
        """Each of `data`'s average rank among the values (1-based, ties averaged; within a bin of a histogram, its
        place in the bin)."""
        data = np.asarray(data, dtype="float64")
        if self.exact:
            assert self.values is not None and self.counts is not None
            cum = np.cumsum(self.counts)
            i = np.searchsorted(self.values, data)
            i = np.clip(i, 0, self.values.size - 1)
            before = np.where(i > 0, cum[np.maximum(i - 1, 0)], 0)
            return 0.5 * (cum[i] + before + 1)
        assert self.hist is not None
        cum = np.cumsum(self.hist)
        keys = _sort_keys(data)
        b = (keys >> HIST_SHIFT).astype("int64")
        below = np.where(b > 0, cum[np.maximum(b - 1, 0)], 0)
        within = ((keys & ((1 << HIST_SHIFT) - 1)).astype("float64") + 0.5) / (1 << HIST_SHIFT)
        return below + within * self.hist[b] + 0.5

    def order_stat(self, k: int) -> float:
        """The k-th smallest value (0-based)."""
        if self.exact:
            assert self.values is not None and self.counts is not None
            return float(self.values[np.searchsorted(np.cumsum(self.counts), k + 1)])
        assert self.hist is not None
        b = int(np.searchsorted(np.cumsum(self.hist), k + 1))
        return float(_key_values(np.array([(b << HIST_SHIFT) | (1 << (HIST_SHIFT - 1))]))[0])

    def percentile(self, q: float, mapped=None) -> float:
        """np.percentile (linear) of the values, `mapped` (a non-decreasing function) applied to each first."""
        mapped = mapped or (lambda v: v)
        virtual = (self.n - 1) * (q / 100.0)
        lo = int(math.floor(virtual))
        hi = min(lo + 1, self.n - 1)
        t = virtual - lo
        a, b = mapped(self.order_stat(lo)), mapped(self.order_stat(hi))
        diff = b - a
        return float(b - diff * (1 - t)) if t >= 0.5 else float(a + diff * t)


def _log_stretch(dist: Distribution, data: np.ndarray, low: float = 2.0, high: float = 98.0) -> np.ndarray:
    """transforms.log_percentile of `data` given the layer's distribution."""
    if not math.isfinite(dist.min_positive):
        raise LodestarError("A log scaling needs positive values (concentrations); this layer has none.")
    floor = dist.min_positive / 2.0

    def logged(v):
        return math.log10(v if v > 0 else floor)

    lo, hi = dist.percentile(low, logged), dist.percentile(high, logged)
    data = np.asarray(data, dtype="float64")
    values = np.log10(np.where(data > 0, data, floor))
    if hi <= lo:
        if dist.exact:
            assert dist.values is not None
            logs = np.unique(np.log10(np.where(dist.values > 0, dist.values, floor)))
            merged = Distribution(dist.n, logs)
            merged.counts = np.bincount(np.searchsorted(logs, np.log10(
                np.where(dist.values > 0, dist.values, floor))), weights=dist.counts,
                minlength=logs.size).astype("int64")
            return merged.ranks(values)
        return dist.ranks(data)
    return np.clip((values - lo) / (hi - lo), 0.0, 1.0)


# -- the plan: what every block needs --------------------------------------------------------------------

@dataclass
class LayerPlan:
    """One spec's global figures: a distribution, the selected unit codes, or features to measure from."""

    spec: EvidenceSpec
    distribution: Distribution | None = None
    selected: list = field(default_factory=list)
    legend: dict = field(default_factory=dict)
    frame_codes: tuple | None = None  # unit polygons: (geometries, codes)
    frame_bounds: tuple = ()  # unit polygons: the map's extent (minx, miny, maxx, maxy)
    shapes: list = field(default_factory=list)
    pads: tuple = (0, 0, 0, 0)  # left, right, top, bottom: the whole-grid distance canvas around the grid
    coarse: tuple | None = None  # (distances, canvas factor) of a coarse whole-canvas transform
    memberships: Distribution | None = None  # the weighted mean of ranks: the membership's distribution


def _stats_block(window: Window, raster_set: RasterSet, specs: list, exact: bool) -> dict:
    out: dict[str, set | Distribution] = {}
    for spec in specs:
        band = read_block(raster_set, spec.layer, window)[0]
        if spec.transform == "units":
            valid = ~np.ma.getmaskarray(band)
            out[spec.layer] = set(np.unique(np.rint(band.filled(0)[valid])).astype(int).tolist())
        else:
            data = np.ma.masked_invalid(np.ma.array(band, dtype="float64"))
            out[spec.layer] = Distribution.of(data.compressed(), exact)
    return out


def merge_stats(parts: list) -> dict:
    """Blocks' statistics ({layer or "scores": a Distribution, or a set of unit codes}) merged into one such dict:
    distributions merged, sets joined."""
    out = {}
    for part in parts:
        for key, value in part.items():
            if key not in out:
                out[key] = value
            elif isinstance(value, set):
                out[key] = out[key] | value
            else:
                out[key] = out[key].merge(value)
    return out


def plan_distances(plan: LayerPlan, grid: RasterGrid, block: int) -> None:
    """Sets the plan's `pads` (the whole-grid distance canvas around `grid`, for its `shapes`) and, when the canvas
    exceeds MAX_WINDOW_BLOCKS blocks of `block` pixels a side, `coarse` (a coarse whole-canvas distance transform);
    refused when no shape lies on or near the grid. block_distance then measures a window."""
    shapes = plan.shapes
    width, height = grid.pixel_size
    plan.pads = tf.feature_pads(shapes, grid)
    left, right, top, bottom = plan.pads
    rows, cols = grid.height + top + bottom, grid.width + left + right
    factor = max(1, int(math.ceil(math.sqrt(rows * cols / COARSE_CELLS))))
    transform = grid.transform * Affine.translation(-left, -top) * Affine.scale(factor)
    shape = (int(math.ceil(rows / factor)), int(math.ceil(cols / factor)))
    burnt = rasterize(((g, 1) for g in shapes), out_shape=shape, transform=transform, fill=0, all_touched=True,
                      dtype="uint8")
    if not burnt.any():
        raise LodestarError("No feature lies on or near the analysis area; check the layer's extent and CRS.")
    if factor > 1 and rows * cols > (MAX_WINDOW_BLOCKS * block * block):
        plan.coarse = (ndimage.distance_transform_edt(burnt == 0, sampling=(height * factor, width * factor))
                       .astype("float32"), factor)


def burn_shapes(shapes: list, values: list, shape: tuple, transform: Affine, all_touched: bool,
                dtype: str) -> np.ndarray:
    """rasterize of the shapes (each burnt with its value of `values`) on a window of `shape` (rows, cols) at
    `transform`: a `dtype` array, 0 where no shape lies. Each shape is clipped to the window grown by two
    pixels first, since GDAL walks a line's whole length, so a fault crossing a province costs as much on every
    small window as on the whole canvas (and holds Python's lock while it does)."""
    height, width = shape
    west, south, east, north = array_bounds(height, width, transform)
    margin_x, margin_y = 2 * abs(transform.a), 2 * abs(transform.e)
    box = (west - margin_x, south - margin_y, east + margin_x, north + margin_y)
    parts = []
    for geometry, value in zip(shapes, values):
        xmin, ymin, xmax, ymax = geometry.bounds
        if xmin > box[2] or xmax < box[0] or ymin > box[3] or ymax < box[1]:
            continue
        part = clip_by_rect(geometry, *box)
        if not part.is_empty:
            parts.append((part, value))
    if not parts:
        return np.zeros(shape, dtype=dtype)
    return rasterize(parts, out_shape=shape, transform=transform, fill=0, all_touched=all_touched, dtype=dtype)


def block_distance(plan: LayerPlan, grid: RasterGrid, window: Window, block: int) -> np.ndarray:
    """transforms.distance_to_features_m of the whole grid (metres, float32 of the window's shape) from the plan's
    shapes (planned by plan_distances with the same `block`), on one window: the distance transform of a window
    grown (doubling a halo) until each cell's nearest feature cell in it is no farther than the window's open
    sides (so none outside can be nearer)."""
    left, right, top, bottom = plan.pads
    ph, pw = grid.pixel_size[1], grid.pixel_size[0]
    rows, cols = grid.height + top + bottom, grid.width + left + right
    r0, c0 = int(window.row_off) + top, int(window.col_off) + left
    h, w = int(window.height), int(window.width)
    limit = MAX_WINDOW_BLOCKS * block * block
    widest = max(16, int((math.sqrt((h - w) ** 2 + 4 * limit) - h - w) / 4))  # (h + 2 halo)(w + 2 halo) <= limit
    halo = max(16, min(h, w) // 4)
    if plan.coarse is not None:  # start from the coarse transform's farthest cell of the block
        coarse, factor = plan.coarse
        far = float(coarse[r0 // factor:(r0 + h - 1) // factor + 1, c0 // factor:(c0 + w - 1) // factor + 1].max())
        halo = min(widest, max(16, int(math.ceil(far / min(ph, pw))) + 3 * factor + 2))
    while True:
        wr0, wc0 = max(0, r0 - halo), max(0, c0 - halo)
        wr1, wc1 = min(rows, r0 + h + halo), min(cols, c0 + w + halo)
        transform = grid.transform * Affine.translation(wc0 - left, wr0 - top)
        burnt = burn_shapes(plan.shapes, [1] * len(plan.shapes), (wr1 - wr0, wc1 - wc0), transform, True, "uint8")
        if burnt.any():
            dist = ndimage.distance_transform_edt(burnt == 0, sampling=(ph, pw))[r0 - wr0:r0 - wr0 + h,
                                                                                 c0 - wc0:c0 - wc0 + w]
        else:
            dist = np.full((h, w), np.inf)
        ii = np.arange(h)[:, None] + (r0 - wr0)
        jj = np.arange(w)[None, :] + (c0 - wc0)
        bound = np.full((h, w), np.inf)
        if wr0 > 0:
            bound = np.minimum(bound, (ii + 1) * ph)
        if wr1 < rows:
            bound = np.minimum(bound, ((wr1 - wr0) - ii) * ph)
        if wc0 > 0:
            bound = np.minimum(bound, (jj + 1) * pw)
        if wc1 < cols:
            bound = np.minimum(bound, ((wc1 - wc0) - jj) * pw)
        unresolved = dist > bound
        whole = wr0 == 0 and wc0 == 0 and wr1 == rows and wc1 == cols
        if not unresolved.any() or whole:
            return dist.astype("float32")
        if halo >= widest and plan.coarse is not None:
            coarse, factor = plan.coarse
            rr = np.minimum((np.arange(h)[:, None] + r0) // factor, coarse.shape[0] - 1)
            cc = np.minimum((np.arange(w)[None, :] + c0) // factor, coarse.shape[1] - 1)
            return np.where(unresolved, coarse[rr, cc], dist).astype("float32")
        halo = min(2 * halo, widest) if plan.coarse is not None else 2 * halo


def plan_surface(raster_set: RasterSet, specs: list, extra: dict | None = None, block: int = DEFAULT_BLOCK,
                 scheduler: str = "", progress: Progress = SILENT, method: OverlayMethod = "weighted") -> list:
    """Every spec's global figures (see the module docstring), the statistics computed blockwise; with `method`
    "rank" the memberships' distributions too."""
    grid = raster_set.grid
    exact = grid.width * grid.height <= EXACT_CELLS
    windows = block_windows((grid.height, grid.width), block)
    plans = [LayerPlan(spec) for spec in specs]
    stats_specs = []
    for plan in plans:
        spec = plan.spec
        given = (extra or {}).get(spec.layer)
        if spec.transform == "distance_m":
            geometries = given if given is not None else vector_features(raster_set, spec.layer).geometry
            plan.shapes = [g for g in geometries if g is not None and not g.is_empty]
            if not plan.shapes:
                raise LodestarError("There are no features to measure distances from; give a layer with fault lines.")
            plan_distances(plan, grid, block)
        elif given is not None:
            raise LodestarError(f"{spec.layer}: data given as an array on the analysis grid has no full resolution; "
                                "give the layer's file.")
        elif spec.transform == "units":
            layer = raster_set.spec(spec.layer)
            plan.legend = read_legend(layer.legend) if layer.legend is not None else {}
            if layer.is_vector:
                frame = vector_features(raster_set, spec.layer)
                frame = frame[frame.geometry.notna() & ~frame.geometry.is_empty]
                if frame.empty:
                    raise LodestarError(f"{spec.layer} has no unit polygons.")
                names = unit_names(frame, layer, VectorEvidenceParams())
                plan.legend = {i: name for i, name in enumerate(sorted(set(names)), start=1)}
                index = {name: code for code, name in plan.legend.items()}
                plan.frame_codes = (list(frame.geometry), [index[n] for n in names])
                plan.frame_bounds = tuple(frame.total_bounds)
                _select_units(plan, sorted(plan.legend))
            else:
                stats_specs.append(spec)
        elif spec.transform in ("percentile_rank", "log_percentile"):
            stats_specs.append(spec)
    if stats_specs:
        progress.log(f"Full resolution: the value distributions of {', '.join(s.layer for s in stats_specs)}")
        parts = run_blocks(_stats_block, (raster_set, stats_specs, exact), windows, scheduler,
                           progress.scaled(0, 30), reduce=merge_stats)
        for plan in plans:
            if plan.spec in stats_specs:
                found = parts.get(plan.spec.layer)
                if plan.spec.transform == "units":
                    _select_units(plan, sorted(found or ()))
                else:
                    plan.distribution = found if found is not None else Distribution(0, np.array([]), np.array([]))
    if method == "rank":
        progress.log("Full resolution: the memberships' distributions (the weighted mean of ranks)")
        parts = run_blocks(_membership_stats_block, (raster_set, plans, exact, block), windows, scheduler,
                           progress.scaled(30, 45), reduce=merge_stats)
        for plan in plans:
            plan.memberships = parts.get(plan.spec.layer) or Distribution(0, np.array([]), np.array([]))
    return plans


def _membership_stats_block(window: Window, raster_set: RasterSet, plans: list, exact: bool, block: int) -> dict:
    reads = block_reads(raster_set, window)
    valid = block_valid(reads, (int(window.height), int(window.width)))
    return {plan.spec.layer: Distribution.of(
        _block_membership(raster_set, plan, window, valid, block, reads).compressed(), exact) for plan in plans}


def _select_units(plan: LayerPlan, present: list) -> None:
    names = {int(c): plan.legend.get(int(c), str(int(c))) for c in present}
    selected = tf.matched_units(names, plan.spec.params["units"])
    if not selected:
        raise LodestarError(f"None of the favourable units {', '.join(map(str, plan.spec.params['units']))} is in "
                            f"this map; units present: {', '.join(sorted(set(names.values())))}.")
    plan.selected = sorted(selected)


def _block_membership(raster_set: RasterSet, plan: LayerPlan, window: Window, valid: np.ndarray, block: int,
                      reads: dict) -> np.ma.MaskedArray:
    spec = plan.spec
    grid = raster_set.grid
    if spec.transform == "distance_m":
        values: np.ma.MaskedArray = np.ma.masked_array(block_distance(plan, grid, window, block))
    elif spec.transform == "units":
        if plan.frame_codes is not None:
            shapes, codes = plan.frame_codes
            transform = grid.window_grid(window).transform
            burnt = burn_shapes(shapes, codes, (int(window.height), int(window.width)), transform, False, "int32")
            codes = polygon_codes(burnt, plan.frame_bounds, transform)
            data: np.ma.MaskedArray = np.ma.masked_array(codes.data.astype("float64"), mask=np.ma.getmaskarray(codes))
        else:
            band = reads[spec.layer][0]
            ok = ~np.ma.getmaskarray(band)
            data = np.ma.masked_array(np.where(ok, np.rint(band.filled(0)), 0).astype("float64"), mask=~ok)
        hit = np.isin(np.rint(data.filled(-1)).astype(int), plan.selected)
        values = np.ma.masked_array(np.where(hit, 1.0, float(spec.params.get("outside", 0.0))).astype("float32"),
                                    mask=np.ma.getmaskarray(data))
    else:
        band = reads[spec.layer][0]
        data = np.ma.masked_invalid(np.ma.array(band, dtype="float64"))
        mask = np.ma.getmaskarray(data)
        if spec.transform == "none":
            values = data
        else:
            out = np.zeros(data.shape, dtype="float64")
            assert plan.distribution is not None  # plan_surface's, for every ranked or logged layer
            if spec.transform == "percentile_rank":
                out[~mask] = plan.distribution.ranks(data.compressed())
            else:
                out[~mask] = _log_stretch(plan.distribution, data.compressed())
            values = np.ma.masked_array(out.astype("float32"), mask=mask)
    return membership_of(values, spec, valid)


def surface_block(window: Window, raster_set: RasterSet, plans: list, method: OverlayMethod, gamma: float,
                  block: int) -> np.ndarray:
    """One block of the surface: float32, NODATA outside the analysed area."""
    reads = block_reads(raster_set, window)
    valid = block_valid(reads, (int(window.height), int(window.width)))
    maps = {plan.spec.layer: _block_membership(raster_set, plan, window, valid, block, reads) for plan in plans}
    if method == "rank":  # ranked among the whole layer's memberships, not the block's
        maps = {plan.spec.layer: _ranked(maps[plan.spec.layer], plan.memberships) for plan in plans}
        method = "weighted"
    values = combine(maps, {plan.spec.layer: plan.spec.weight for plan in plans}, method, gamma)
    values = np.ma.masked_where(~valid, values)
    return np.ma.filled(values.astype("float32"), NODATA)


def _ranked(membership: np.ma.MaskedArray, distribution: Distribution) -> np.ma.MaskedArray:
    mask = np.ma.getmaskarray(membership)
    out = np.zeros(membership.shape, dtype="float64")
    if distribution.n:
        out[~mask] = distribution.ranks(membership.compressed())
    return np.ma.masked_array(out.astype("float32"), mask=mask)


# -- running blocks here or on a cluster -------------------------------------------------------------------

def run_blocks(function, args: tuple, windows: list, scheduler: str = "", progress: Progress = SILENT, reduce=None,
               consume=None):
    """`function(window, *args)` (a module-level function) over every window as Dask tasks (the arguments sent
    to a cluster's workers once): reduced with `reduce(list)` (a tree of 8), or each
    result handed to `consume(window, result)` in completion order. Progress counts blocks; a cancel stops
    submitting and cancels what is in flight."""
    total = len(windows)
    client, threads = _dask_client(scheduler, total, progress)
    shared = client.scatter(list(args), broadcast=True) if client is not None else list(args)
    done, partials, pending = 0, [], list(enumerate(windows))
    in_flight: dict = {}
    try:
        while pending or in_flight:
            if progress.cancelled():
                raise Cancelled()
            finished = _finished_blocks(function, shared, pending, in_flight, client, threads)
            if finished is None:
                continue
            for win, result in finished:
                if consume is not None:
                    consume(win, result)
                else:
                    partials.append(result)
                    if reduce is not None and len(partials) >= 8:
                        partials = [reduce(partials)]
                done += 1
                if done == total or done % max(1, total // 10) == 0:
                    progress.log(f"    blocks done: {done}/{total}")
            progress.set(100.0 * done / total)
        if reduce is not None:
            return reduce(partials) if partials else {}
        return partials
    except BaseException:
        if client is not None and in_flight:
            client.cancel(list(in_flight), force=True)
        raise
    finally:
        if client is not None:
            client.close()


def _dask_client(scheduler: str, total: int, progress: Progress) -> tuple:
    """(the Dask client of the cluster at `scheduler`, None to run here; the blocks run at once: the cluster's worker
    threads, or this machine's cores), a cluster's size said in the log."""
    import dask

    if not (scheduler or "").strip():
        return None, max(1, dask.system.CPU_COUNT)
    from ..cluster import connect, worker_threads

    client = connect(scheduler.strip(), progress)
    threads = worker_threads(client)
    progress.log(f"Dask cluster {scheduler.strip()}: {len(client.scheduler_info().get('workers', {}))} worker(s), "
                 f"{total} block(s)")
    return client, threads


def _finished_blocks(function, shared: list, pending: list, in_flight: dict, client, threads: int) -> list | None:
    """The next blocks done, as (window, result): here, the next `threads` of `pending` computed at once in threads;
    on a cluster, `pending` submitted while fewer than 2 x `threads` are `in_flight`, and those done (None, after a
    short wait, while none is)."""
    import dask

    if client is None:
        batch = [pending.pop(0) for _ in range(min(threads, len(pending)))]
        results = dask.compute(*[dask.delayed(function)(win, *shared) for _, win in batch],
                               scheduler="threads", num_workers=threads)
        return [(win, res) for (_, win), res in zip(batch, results)]
    limit = 2 * threads
    while pending and len(in_flight) < limit:
        i, win = pending.pop(0)
        in_flight[client.submit(function, win, *shared, pure=False)] = win
    ready = [f for f in in_flight if f.done()]
    if not ready:
        time.sleep(0.05)
        return None
    return [(in_flight.pop(f), f.result()) for f in ready]


def surface_array(raster_set: RasterSet, plans: list, method: OverlayMethod = "weighted", gamma: float = 0.8,
                  block: int = DEFAULT_BLOCK):
    """The surface as a lazy Dask array (float32, NODATA outside the analysed area), one chunk per block."""
    import dask.array as da

    grid = raster_set.grid

    def chunk(block_info=None):
        (r0, r1), (c0, c1) = block_info[None]["array-location"]
        return surface_block(Window(c0, r0, c1 - c0, r1 - r0), raster_set, plans, method, gamma, block)

    blocks = block_windows((grid.height, grid.width), block)
    rows = tuple(int(w.height) for w in blocks if w.col_off == 0)
    cols = tuple(int(w.width) for w in blocks if w.row_off == 0)
    return da.map_blocks(chunk, chunks=(rows, cols), dtype="float32", meta=np.empty((0, 0), dtype="float32"))


def _overview_factors(width: int, height: int) -> list:
    factors, f = [], 2
    while max(width, height) / f >= 256:
        factors.append(f)
        f *= 2
    return factors or [2]


def add_overviews(path, grid: RasterGrid, progress: Progress) -> None:
    """Average overviews (halving down to about 256 cells a side) added to a written full-resolution surface."""
    progress.check()
    progress.log("Full-resolution surface: overviews")
    build_overviews(path, _overview_factors(grid.width, grid.height))


def write_full_resolution(layers: list, specs: list, path, method: OverlayMethod = "weighted", gamma: float = 0.8,
                          resolution: float | None = None, extra: dict | None = None, block: int = DEFAULT_BLOCK,
                          scheduler: str = "", progress: Progress = SILENT) -> Path:
    """The favourability surface of `specs` (combined by `method`) at full resolution, written block by block
    as a tiled, deflate-compressed float32 GeoTIFF with average overviews and the provenance tags of
    outputs.write_surface (plus LODESTAR_RESOLUTION)."""
    if method not in METHODS:
        raise LodestarError(f"The overlay method must be one of {', '.join(METHODS)}, not {method!r}.")
    if not specs:
        raise LodestarError("No evidence layer to combine; give at least one usable layer.")
    if block < 16:
        raise LodestarError(f"A block must be at least 16 pixels a side, not {block}.")
    raster_set, grid = full_resolution_grid(layers, resolution, progress)
    progress.log(f"Full-resolution surface: {grid.width} x {grid.height} pixels in blocks of {block}")
    plans = plan_surface(raster_set, specs, extra, block, scheduler, progress, method)
    profile = {"driver": "GTiff", "width": grid.width, "height": grid.height, "count": 1, "dtype": "float32",
               "nodata": NODATA, "transform": grid.transform, "tiled": True, "blockxsize": FULL_TILE,
               "blockysize": FULL_TILE, "compress": "deflate", "predictor": 3, "BIGTIFF": "IF_SAFER"}
    if grid.crs is not None:
        profile["crs"] = grid.crs.to_wkt()
    windows = block_windows((grid.height, grid.width), block)
    method_text = method + (f" (gamma {gamma:g})" if method == "gamma" else "")
    path = Path(path)
    with new_raster(path, profile, gdal={"GDAL_CACHEMAX": 128},
                    finish=lambda tmp: add_overviews(tmp, grid, progress)) as dst:
        run_blocks(surface_block, (raster_set, plans, method, gamma, block), windows, scheduler,
                   progress.scaled(45 if method == "rank" else 30, 90),
                   consume=lambda win, data: dst.write(data, 1, window=win))
        dst.update_tags(LODESTAR_METHOD=method_text, LODESTAR_LAYERS=", ".join(s.layer for s in specs),
                        LODESTAR_WEIGHTS=json.dumps({s.layer: s.weight for s in specs}),
                        LODESTAR_RESOLUTION=f"{grid.pixel_size[0]:g} x {grid.pixel_size[1]:g}")
        dst.set_band_description(1, "favourability (0-1), full resolution")
    progress.set(100)
    return path


def write_knowledge_run_surface(record: dict, layers: list, zones, path, resolution: float | None = None,
                                block: int = DEFAULT_BLOCK, scheduler: str = "", progress: Progress = SILENT) -> Path:
    """The knowledge-driven surface of a finished run (its record's favourability specs, combined as the run did) at
    full resolution: `layers` the run's layers (LayerSpec), `zones` its zones (for the renderings that enter as
    nearness to the zones marked on them). Records written before the combination was recorded made it as a
    weighted overlay. A run's surface, calibrated or not: blockwise_fitted.write_run_surface."""
    section = record.get("favourability") or {}
    specs = [EvidenceSpec.from_dict(item) for item in section.get("specs") or []]
    if not specs:
        raise LodestarError("The run made no favourability surface (no layer could be evidence), so there is none "
                            "to make at full resolution.")
    layers = [s if isinstance(s, LayerSpec) else LayerSpec(**s) for s in layers]
    vectors = {s.name for s in layers if s.is_vector}
    extra = {}
    for spec in specs:
        if spec.transform == "distance_m" and spec.layer not in vectors:
            extra[spec.layer] = list(zones[zones["layer"] == spec.layer].geometry) if len(zones) else []
    combined = section.get("knowledge_method") or {}
    return write_full_resolution(layers, specs, path, combined.get("method", "weighted"),
                                 float(combined.get("gamma") or 0.8), resolution=resolution, extra=extra, block=block,
                                 scheduler=scheduler, progress=progress)
