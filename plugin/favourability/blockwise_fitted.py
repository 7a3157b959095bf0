"""Calibrated favourability surfaces at full resolution, block by block (blockwise.py's blocks, reads and runs on
Dask): a model fitted on known deposits (models.py; a run's chosen model, read from its model file) predicted over
the layers' finest grid (or a resolution the user sets), memory bounded by the block.

Each block measures its evidence as measured.py and derived.py do on the analysis grid, column by column of the
model: a raster's values or unit codes read for the block; unit polygons burnt on it; the distance to lines or
points (blockwise.py's window grown until every cell's nearest feature provably lies inside it); the distance to
a unit contact, from the contacts of the unit codes on a window grown the same way; the fault density, from the
line cells on the window grown by the density's radius (the counts in each disc are whole numbers: exactly the
whole grid's). On the cells where a layer has data (the study area, as calibrate's) it predicts the model's
scores; a first pass gathers their distribution over the whole grid (exact up to blockwise.EXACT_CELLS cells, else
a histogram), by which the second ranks each block's scores as the analysis grid's surface is ranked: the share of
the study area scoring lower, ties at their mid-rank. Where the full-resolution grid is the analysis grid, the
surface is the run's full fit cell for cell.

The second band is the model's uncertainty as calibration.py defines it: the ensemble's spread of its members' ranks,
weights of evidence's posterior standard deviation, or (a single other model) the spread of its fold models' ranks
(`spread`, the run's second model file).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from rasterio.windows import Window
from scipy import ndimage

from ..errors import LodestarError
from ..progress import SILENT, Progress
from ..raster_blocks import block_windows
from ..raster_io import RasterSet
from ..raster_writer import new_raster
from ..tools.categorical import categorical_labels
from ..tools.vector_evidence import VectorEvidenceParams, unit_names
from .blockwise import (
    DEFAULT_BLOCK,
    EXACT_CELLS,
    FULL_TILE,
    Distribution,
    LayerPlan,
    add_overviews,
    block_distance,
    block_reads,
    block_valid,
    burn_shapes,
    full_resolution_grid,
    merge_stats,
    plan_distances,
    run_blocks,
    write_knowledge_run_surface,
)
from .derived import contact_edges, density_disc, density_of, derivation, lines_of
from .evidence_layers import polygon_codes, vector_features
from .model_file import load_model
from .models import ENSEMBLE, LABELS, serial
from .outputs import NODATA


@dataclass
class ColumnPlan:
    """How one model column is measured on a block: `how` is "values", "codes" (a raster's units), "polygons",
    "distance", "contact" (the distance to a unit contact of the column `of`) or "density" (of the lines of
    `layer`, within `radius` m)."""

    name: str
    layer: str
    how: str
    of: int = -1
    radius: float = 0.0
    frame_codes: tuple = ()
    frame_bounds: tuple = ()
    distance: LayerPlan | None = None
    lines: list = field(default_factory=list)


FITTED_BLOCK = 512
"""Block edge in pixels of a calibrated surface: a model predicts a block (a quarter of a million cells) in about
a second, the longest a cancel waits for on local threads."""


def column_plans(raster_set: RasterSet, columns, block: int = FITTED_BLOCK) -> list:
    """The plan of every column of a model (`columns`: models.Columns) over the raster set's grid; a column no layer
    of the set can give is refused, naming it."""
    layers = columns.layers
    names = [layer.name for layer in layers]
    plans = []
    for j, layer in enumerate(layers):
        if layer.source:
            how = derivation(layer.name, layer.source)
            if how is None or layer.source not in names:
                raise LodestarError(f"The model's layer {layer.name} is derived from {layer.source} by no rule this "
                                    "version knows; train the model again.")
            kind, radius = how
            plan = ColumnPlan(layer.name, layer.source, kind, of=names.index(layer.source), radius=radius)
            if kind == "density":
                plan.lines = lines_of(raster_set, layer.source)
            plans.append(plan)
            continue
        try:
            spec = raster_set.spec(layer.name)
        except LodestarError as exc:
            raise LodestarError(f"The model's layer {layer.name} is not among the run's layers ({exc}).") from None
        if not spec.is_vector:
            plans.append(ColumnPlan(layer.name, layer.name, "codes" if columns.categorical[j] else "values"))
            continue
        frame = vector_features(raster_set, layer.name)
        frame = frame[frame.geometry.notna() & ~frame.geometry.is_empty]
        if columns.categorical[j]:  # unit polygons, coded as measured.py codes them (evidence_layers.unit_codes)
            names_of = unit_names(frame, spec, VectorEvidenceParams())
            code = {name: k for k, name in enumerate(sorted(set(names_of)), start=1)}
            plans.append(ColumnPlan(layer.name, layer.name, "polygons",
                                    frame_codes=(list(frame.geometry), [code[n] for n in names_of]),
                                    frame_bounds=tuple(frame.total_bounds)))
            continue
        distance = LayerPlan(spec=None)  # type: ignore[arg-type]  # distances from its shapes alone: no spec
        distance.shapes = list(frame.geometry)
        if not distance.shapes:
            raise LodestarError(f"{layer.name} has no features to measure distances from.")
        plan_distances(distance, raster_set.grid, block)
        plans.append(ColumnPlan(layer.name, layer.name, "distance", distance=distance))
    return plans


def measure_block(window: Window, raster_set: RasterSet, plans: list, block: int) -> tuple[np.ndarray, np.ndarray]:
    """(the design matrix of the block's study-area cells, row-major; where they lie in the block): every column
    as measured.py and derived.py measure it on the analysis grid, NaN where it has no data."""
    reads = block_reads(raster_set, window)
    shape = (int(window.height), int(window.width))
    valid = block_valid(reads, shape)
    values: list[np.ndarray | None] = [None] * len(plans)
    for j, plan in enumerate(plans):
        if plan.how in ("values", "codes", "polygons"):
            values[j] = _measured(raster_set, plan, window, reads, valid)
    for j, plan in enumerate(plans):
        if plan.how == "distance":
            values[j] = np.where(valid, block_distance(plan.distance, raster_set.grid, window, block).astype(
                "float64"), np.nan)
        elif plan.how == "contact":
            values[j] = np.where(valid, _contact_block(raster_set, plans[plan.of], window).astype("float64"), np.nan)
        elif plan.how == "density":
            values[j] = np.where(valid, _density_block(raster_set, plan, window).astype("float64"), np.nan)
    measured = [v for v in values if v is not None]
    assert len(measured) == len(plans)  # every column measured, by one of the ways above
    inside = np.logical_or.reduce([~np.isnan(v) for v in measured])
    return np.column_stack([v[inside] for v in measured]), inside


def _measured(raster_set: RasterSet, plan: ColumnPlan, window: Window, reads: dict, valid: np.ndarray) -> np.ndarray:
    """A raster's values or unit codes, or unit polygons' codes, on a window: float64, NaN where no data or outside
    the study area (`valid`), as measured.py masks them."""
    if plan.how == "polygons":
        shapes, codes = plan.frame_codes
        transform = raster_set.grid.window_grid(window).transform
        burnt = burn_shapes(shapes, codes, valid.shape, transform, False, "int32")
        data = polygon_codes(burnt, plan.frame_bounds, transform)
        out = np.asarray(data.data, dtype="float64")
        mask = np.ma.getmaskarray(data)
    elif plan.how == "codes":
        codes, known = categorical_labels(reads[plan.layer])
        out, mask = codes.astype("float64"), ~known
    else:
        band = np.ma.masked_invalid(np.ma.asarray(reads[plan.layer][0], dtype=float))
        out, mask = band.filled(np.nan), np.ma.getmaskarray(band)
    out = np.where(mask | ~valid, np.nan, out)
    return np.where(np.isfinite(out), out, np.nan)


def _grown(raster_set: RasterSet, window: Window, halo_rows: int, halo_cols: int) -> tuple[Window, int, int]:
    """The window grown by a halo, within the grid; (grown window, the block's row and column offset in it)."""
    grid = raster_set.grid
    r0, c0 = int(window.row_off), int(window.col_off)
    top, left = max(0, r0 - halo_rows), max(0, c0 - halo_cols)
    bottom = min(grid.height, r0 + int(window.height) + halo_rows)
    right = min(grid.width, c0 + int(window.width) + halo_cols)
    return Window(left, top, right - left, bottom - top), r0 - top, c0 - left


def _contact_block(raster_set: RasterSet, units: ColumnPlan, window: Window) -> np.ndarray:
    """derived.contact_distance_m of the whole grid, on one window: the contacts of the unit codes on a window grown
    (doubling a halo) until each cell's nearest contact in it is no farther than the grown window's open sides,
    whose outermost ring is left out (a contact there may lie with a cell outside)."""
    grid = raster_set.grid
    h, w = int(window.height), int(window.width)
    ph, pw = abs(grid.pixel_size[1]), abs(grid.pixel_size[0])
    halo = max(16, min(h, w) // 4)
    while True:
        grown, dr, dc = _grown(raster_set, window, halo + 1, halo + 1)
        reads = block_reads(raster_set, grown)
        valid = block_valid(reads, (int(grown.height), int(grown.width)))
        codes = _measured(raster_set, units, grown, reads, valid)
        edge = contact_edges(np.nan_to_num(codes, nan=-1.0), ~np.isnan(codes))
        top, left = int(grown.row_off) > 0, int(grown.col_off) > 0
        bottom = int(grown.row_off + grown.height) < grid.height
        right = int(grown.col_off + grown.width) < grid.width
        edge[:1 if top else 0, :] = False  # the open sides' outermost ring: its contacts are not all known
        edge[:, :1 if left else 0] = False
        if bottom:
            edge[-1:, :] = False
        if right:
            edge[:, -1:] = False
        rows = np.arange(h)[:, None] + dr
        cols = np.arange(w)[None, :] + dc
        if edge.any():
            dist = ndimage.distance_transform_edt(~edge, sampling=(ph, pw))[dr:dr + h, dc:dc + w]
        else:
            dist = np.full((h, w), np.inf)
        bound = np.full((h, w), np.inf)
        if top:
            bound = np.minimum(bound, rows * ph)
        if bottom:
            bound = np.minimum(bound, (int(grown.height) - 1 - rows) * ph)
        if left:
            bound = np.minimum(bound, cols * pw)
        if right:
            bound = np.minimum(bound, (int(grown.width) - 1 - cols) * pw)
        if not (dist > bound).any() or not (top or bottom or left or right):
            return dist.astype("float32")
        halo *= 2


def _density_block(raster_set: RasterSet, plan: ColumnPlan, window: Window) -> np.ndarray:
    """derived.line_density_km_per_km2 of the whole grid, on one window: the line cells of the window grown by the
    disc's radius (within the grid), counted over each cell's disc."""
    grid = raster_set.grid
    disc = density_disc(grid.pixel_size, plan.radius)
    ry, rx = disc.shape[0] // 2, disc.shape[1] // 2
    grown, dr, dc = _grown(raster_set, window, ry, rx)
    transform = grid.window_grid(grown).transform
    burnt = burn_shapes(plan.lines, [1] * len(plan.lines), (int(grown.height), int(grown.width)), transform, True,
                        "uint8")
    density = density_of(burnt, grid.pixel_size, plan.radius)
    return density[dr:dr + int(window.height), dc:dc + int(window.width)]


def _scores(model, spread, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the scores the surface ranks, the uncertainty) of rows `x`, as calibration.py makes them."""
    if model.method == ENSEMBLE:
        ranks = model.member_ranks(x)
        return ranks.mean(axis=0), ranks.std(axis=0)
    if model.method == "wofe":
        return model.predict(x), model.posterior_sd(x)
    if spread is None:
        raise LodestarError(f"A {LABELS[model.method]} surface's uncertainty needs its fold models; train it again.")
    return model.predict(x), spread.member_ranks(x).std(axis=0)


def _score_block(window: Window, raster_set: RasterSet, plans: list, model, exact: bool, block: int) -> dict:
    x, _ = measure_block(window, raster_set, plans, block)
    if not len(x):
        return {}
    with serial():  # the blocks run in threads of their own
        scores = model.member_ranks(x).mean(axis=0) if model.method == ENSEMBLE else model.predict(x)
    return {"scores": Distribution.of(scores, exact)}


def surface_block(window: Window, raster_set: RasterSet, plans: list, model, spread, distribution: Distribution,
                  block: int) -> np.ndarray:
    """One block of the two bands, float32 (2, rows, cols): favourability (the scores' mid-ranks over the whole
    grid) and uncertainty, NODATA outside the study area."""
    x, inside = measure_block(window, raster_set, plans, block)
    out = np.full((2,) + inside.shape, NODATA, dtype="float32")
    if len(x):
        with serial():
            scores, uncertainty = _scores(model, spread, x)
        out[0][inside] = distribution.mid_ranks(scores).astype("float32")
        out[1][inside] = uncertainty.astype("float32")
    return out


def uncertainty_label(model) -> str:
    """The uncertainty band's description, as the run's OUTPUT_UNCERTAINTY says it (calibration.py)."""
    if model.method == ENSEMBLE:
        return "standard deviation of the ensemble's member models' favourability (0-1 rank scale)"
    if model.method == "wofe":
        return "posterior probability standard deviation (weights and missing data; per unit cell)"
    return "standard deviation of the fold models' favourability (0-1 rank scale)"


def write_fitted_full_resolution(layers: list, model, path, spread=None, resolution: float | None = None,
                                 block: int = FITTED_BLOCK, scheduler: str = "", progress: Progress = SILENT) -> Path:
    """The calibrated surface of `model` (its uncertainty in a second band) at full resolution, written block by
    block as a tiled, deflate-compressed float32 GeoTIFF with average overviews (see the module docstring)."""
    if block < 16:
        raise LodestarError(f"A block must be at least 16 pixels a side, not {block}.")
    raster_set, grid = full_resolution_grid(layers, resolution, progress)
    progress.log(f"Full-resolution calibrated surface ({LABELS[model.method]}): {grid.width} x {grid.height} pixels "
                 f"in blocks of {block}")
    plans = column_plans(raster_set, model.columns, block)
    exact = grid.width * grid.height <= EXACT_CELLS
    windows = block_windows((grid.height, grid.width), block)
    progress.log("Full resolution: the model's scores over the whole grid")
    parts = run_blocks(_score_block, (raster_set, plans, model, exact, block), windows, scheduler,
                       progress.scaled(0, 45), reduce=merge_stats)
    if "scores" not in parts:
        raise LodestarError("No layer of the model has data on the full-resolution grid.")
    profile = {"driver": "GTiff", "width": grid.width, "height": grid.height, "count": 2, "dtype": "float32",
               "nodata": NODATA, "transform": grid.transform, "tiled": True, "blockxsize": FULL_TILE,
               "blockysize": FULL_TILE, "compress": "deflate", "predictor": 3, "BIGTIFF": "IF_SAFER"}
    if grid.crs is not None:
        profile["crs"] = grid.crs.to_wkt()
    path = Path(path)
    with new_raster(path, profile, gdal={"GDAL_CACHEMAX": 128},
                    finish=lambda tmp: add_overviews(tmp, grid, progress)) as dst:
        run_blocks(surface_block, (raster_set, plans, model, spread, parts["scores"], block), windows,
                   scheduler, progress.scaled(45, 90), consume=lambda win, data: dst.write(data, window=win))
        dst.update_tags(LODESTAR_METHOD=f"calibrated: {LABELS[model.method]}, full fit",
                        LODESTAR_LAYERS=", ".join(model.columns.names),
                        LODESTAR_RESOLUTION=f"{grid.pixel_size[0]:g} x {grid.pixel_size[1]:g}")
        dst.set_band_description(1, f"favourability (0-1), full resolution: calibrated "
                                    f"({LABELS[model.method]}, full fit)")
        dst.set_band_description(2, f"uncertainty: {uncertainty_label(model)}")
    progress.set(100)
    return path



def write_run_surface(record_path, layers: list, zones, path, resolution: float | None = None,
                      block: int | None = None, scheduler: str = "", progress: Progress = SILENT) -> Path:
    """The surface of a finished run at full resolution: its calibrated model's, with its uncertainty (from the model
    files beside its record), when the run's surface is calibrated, else the knowledge-driven one
    (blockwise.write_knowledge_run_surface). `layers`: the run's layers (LayerSpec); `zones`: its zones; `block`:
    None for each kind's own block size."""
    try:
        record = json.loads(Path(record_path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise LodestarError(f"Cannot read the run record {record_path}: {exc}.") from exc
    if (record.get("favourability") or {}).get("basis") != "calibrated":
        return write_knowledge_run_surface(record, layers, zones, path, resolution, block or DEFAULT_BLOCK, scheduler,
                                           progress)
    model, spread = run_models(record, Path(record_path).parent)
    return write_fitted_full_resolution(layers, model, path, spread, resolution, block or FITTED_BLOCK, scheduler,
                                        progress)


def run_models(record: dict, folder: Path) -> tuple:
    """(the calibrated surface's model, its fold models or None) of a run, from the model files its record lists
    in its folder, each with the checksum the record holds."""
    outputs = record.get("outputs") or {}
    if "model" not in outputs:
        raise LodestarError("The run's record lists no model file for its calibrated surface (a run of an earlier "
                            "version): run the analysis again to make that surface at full resolution.")
    return _run_model(outputs["model"], folder), (_run_model(outputs["fold_models"], folder)
                                                  if "fold_models" in outputs else None)


def _run_model(entry, folder: Path):
    name = entry.get("file") if isinstance(entry, dict) else None
    if not isinstance(name, str) or not name or Path(name).name != name:
        raise LodestarError(f"The run's record names its model file as {name!r}, not a file of its folder.")
    path = folder / name
    if not path.is_file():
        raise LodestarError(f"The run's model file {name} is not beside its record in {folder}: keep the run folder "
                            "whole, or run the analysis again.")
    if hashlib.sha256(path.read_bytes()).hexdigest() != entry.get("sha256"):
        raise LodestarError(f"The run's model file {path} is not the one the run wrote (its sha256 differs): run the "
                            "analysis again.")
    return load_model(path)[1]
