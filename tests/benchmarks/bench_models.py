"""Speed benchmark of the models fitted on known deposits: `calibrate(..., "best")` (all four models, nested
hyperparameter choice inside 5-fold spatial block cross-validation, the chosen model's full fit, importance,
response and uncertainty) on a 3-million-cell district with 5 measured layers.

Target: <= 90 s wall on 2 cores and <= 2 GB peak memory. This module reports; it asserts nothing.

The district is generated, seeded (SEED): a 1732 x 1732 grid of 100 m pixels in EPSG:32611 (3.0 million cells,
all in the study area) holding
- a categorical map of 20 units (Voronoi cells of 90 seeds on gently warped coordinates, each seed given one
  of the 20 unit codes);
- three continuous layers with spatial structure: Gaussian-smoothed noise at 1.5, 4 and 8 km (one of them, the
  "geochemistry", without data over about 5 % of the district in blotches);
- the distance in metres to 40 random straight "faults" (Euclidean distance transform of the rasterised
  lines);
and N_DEPOSITS deposits drawn, without replacement, cell by cell with probability proportional to a known
favourability (exp of a logit from two favourable units, two of the continuous layers and fault proximity;
the third continuous layer is noise), each placed at a random point of its cell. The MeasuredLayer objects
are built directly (no files).

Memory: the tracemalloc peak (allocations traced while the call runs: Python objects and NumPy arrays, not
native allocations inside scikit-learn or OpenMP that bypass Python's allocator) and the process's peak
resident set (resource ru_maxrss, which includes the generated district and the interpreter; before and after
the call). Tracing is on during the timed call. Baselines timed in the same run: the equal-weight mean of the
ordered layers' percentile ranks (each turned so that its favourable side ranks high; the unit map has no
order and is left out), and one plain scikit-learn LogisticRegression (default C, lbfgs) fitted on all the
cells (standardised values, units one-hot) and predicted over them, run after the call so that its memory is
not counted as the call's. The rank mean and the generator's own favourability are passed to calibrate as
baselines and scored beside the models; the plain logistic regression is scored the same way (fitted on the
deposits it is scored on: not a skill figure).
Writes build/bench/models.md. Run: `.venv/bin/python tests/benchmarks/run_all.py bench_models`.
"""
from __future__ import annotations

import os
import platform
import resource
import time
import tracemalloc
from pathlib import Path

import numpy as np
from affine import Affine
from pyproj import CRS
from scipy.ndimage import distance_transform_edt, gaussian_filter
from scipy.spatial import cKDTree
from scipy.stats import rankdata

from lodestar.plugin.evaluation import DEFAULT_SHARES, evaluate_surface
from lodestar.plugin.favourability.baseline import ordered_rank_mean
from lodestar.plugin.favourability.calibration import _pa_crossing, calibrate
from lodestar.plugin.favourability.measured import CATEGORICAL, ORDERED, MeasuredLayer
from lodestar.plugin.favourability.models import LABELS
from lodestar.plugin.files import write_text_atomic
from lodestar.plugin.raster_io import RasterGrid

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "build" / "bench" / "models.md"
SEED = 20240611
SIDE = 1732
PIXEL_M = 100.0
UNITS = 20
N_DEPOSITS = 200
FAULTS = 40
TARGET_S = 90.0
TARGET_BYTES = 2 * 1024 ** 3
FITTED = "fitted on these deposits: not a skill figure"


def smooth_noise(rng: np.random.Generator, sigma_px: float) -> np.ndarray:
    """Gaussian-smoothed white noise, standardised (mean 0, sd 1)."""
    field = gaussian_filter(rng.standard_normal((SIDE, SIDE)), sigma_px, mode="reflect")
    return (field - field.mean()) / field.std()


def unit_map(rng: np.random.Generator) -> np.ndarray:
    """Unit codes 1..UNITS: Voronoi cells of 90 seeds on warped coordinates, each seed one unit."""
    rows, cols = np.mgrid[0:SIDE, 0:SIDE].astype(np.float32)
    rows += 60 * smooth_noise(rng, 120).astype(np.float32)
    cols += 60 * smooth_noise(rng, 120).astype(np.float32)
    seeds = rng.uniform(0, SIDE, (90, 2))
    unit_of_seed = np.concatenate([np.arange(1, UNITS + 1), rng.integers(1, UNITS + 1, 90 - UNITS)])
    _, nearest = cKDTree(seeds).query(np.column_stack([rows.ravel(), cols.ravel()]), workers=2)
    return unit_of_seed[nearest].reshape(SIDE, SIDE).astype(float)


def fault_distance(rng: np.random.Generator) -> np.ndarray:
    """Distance in metres to FAULTS straight segments (2-40 km long) rasterised on the grid."""
    lines = np.ones((SIDE, SIDE), dtype=bool)
    for _ in range(FAULTS):
        r0, c0 = rng.uniform(0, SIDE, 2)
        angle, length = rng.uniform(0, np.pi), rng.uniform(20, 400)
        t = np.linspace(-0.5, 0.5, int(length * 2) + 2)
        r = np.clip(np.round(r0 + t * length * np.sin(angle)), 0, SIDE - 1).astype(int)
        c = np.clip(np.round(c0 + t * length * np.cos(angle)), 0, SIDE - 1).astype(int)
        lines[r, c] = False
    return distance_transform_edt(lines) * PIXEL_M


def district(seed: int = SEED):
    """(grid, measured layers, deposit map points, the generator's favourability logit)."""
    rng = np.random.default_rng(seed)
    grid = RasterGrid(Affine(PIXEL_M, 0.0, 500_000.0, 0.0, -PIXEL_M, 4_300_000.0), SIDE, SIDE,
                      CRS.from_epsg(32611))
    units = unit_map(rng)
    geochem, magnetics, gravity = smooth_noise(rng, 15), smooth_noise(rng, 40), smooth_noise(rng, 80)
    gaps = smooth_noise(rng, 25) > 1.65
    faults = fault_distance(rng)
    logit = (1.6 * np.isin(units, (3, 11)) + 0.9 * geochem + 0.6 * magnetics - faults / 2500.0)
    weight = np.exp(logit - logit.max()).ravel()
    cells = rng.choice(weight.size, N_DEPOSITS, replace=False, p=weight / weight.sum())
    rows, cols = np.divmod(cells, SIDE)
    x, y = grid.pixel_to_map(cols + rng.uniform(0.05, 0.95, N_DEPOSITS), rows + rng.uniform(0.05, 0.95, N_DEPOSITS))
    full = np.zeros((SIDE, SIDE), dtype=bool)
    legend = {code: f"unit {code}" for code in range(1, UNITS + 1)}
    layers = [
        MeasuredLayer("geology (20 units)", CATEGORICAL, np.ma.masked_array(units, mask=full), "unit", "", legend),
        MeasuredLayer("geochemistry (5 % without data)", ORDERED,
                      np.ma.masked_array(np.where(gaps, np.nan, 50.0 + 12.0 * geochem), mask=gaps), "ppb", "high", {}),
        MeasuredLayer("magnetics", ORDERED, np.ma.masked_array(200.0 * magnetics, mask=full.copy()), "nT", "high", {}),
        MeasuredLayer("gravity (noise)", ORDERED, np.ma.masked_array(3.0 * gravity, mask=full.copy()), "mGal", "high",
                      {}),
        MeasuredLayer("distance to faults", ORDERED, np.ma.masked_array(faults, mask=full.copy()), "m", "low", {}),
    ]
    return grid, layers, list(zip(x.tolist(), y.tolist())), logit


def plain_logistic(layers, grid: RasterGrid, deposit_xy) -> np.ma.MaskedArray:
    """One plain LogisticRegression (default C, lbfgs) on every cell: standardised values (missing at the mean,
    with an indicator), units one-hot; cells holding a deposit positive; predicted over every cell."""
    from sklearn.linear_model import LogisticRegression

    columns = []
    for layer in layers:
        values = layer.values.filled(np.nan).ravel()
        if layer.categorical:
            codes = np.unique(values[~np.isnan(values)])
            columns.extend((values == code).astype(np.float32) for code in codes[1:])
            continue
        missing = np.isnan(values)
        mean, sd = np.nanmean(values), np.nanstd(values)
        columns.append(np.where(missing, 0.0, (values - mean) / sd).astype(np.float32))
        if missing.any():
            columns.append(missing.astype(np.float32))
    design = np.column_stack(columns)
    del columns
    cols, rows = grid.map_to_pixel(*np.asarray(deposit_xy).T)
    label = np.zeros(design.shape[0], dtype=bool)
    label[np.floor(rows).astype(int) * grid.width + np.floor(cols).astype(int)] = True
    model = LogisticRegression(max_iter=1000).fit(design, label)
    score = model.decision_function(design).reshape(grid.height, grid.width)
    return np.ma.masked_array(score, mask=np.zeros(score.shape, dtype=bool))


def maxrss_bytes() -> int:
    """The process's peak resident set so far (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if platform.system() == "Darwin" else peak * 1024


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    value = function(*args, **kwargs)
    return value, time.perf_counter() - start


def to_unit(values: np.ma.MaskedArray) -> np.ma.MaskedArray:
    """A surface as 0-1 ranks (what calibrate's baselines are)."""
    out = np.ma.masked_array(np.zeros(values.shape), mask=np.ma.getmaskarray(values))
    out[~out.mask] = (rankdata(values.compressed(), method="average") - 0.5) / values.count()
    return out


def main() -> None:
    (grid, layers, deposit_xy, logit), t_make = timed(district)
    ranks, t_ranks = timed(ordered_rank_mean, layers)
    truth = to_unit(np.ma.masked_array(logit, mask=np.zeros(logit.shape, dtype=bool)))
    baselines = {"Baseline: equal-weight rank mean of the ordered layers": ranks,
                 "The generator's favourability (the truth; no model can know it)": truth}
    rss_before = maxrss_bytes()
    load_before = os.getloadavg()
    tracemalloc.start()
    try:
        cal, seconds = timed(calibrate, layers, grid, deposit_xy, "best", baselines=baselines)
        traced_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    rss_after = maxrss_bytes()
    load_after = os.getloadavg()
    plain, t_plain = timed(plain_logistic, layers, grid, deposit_xy)  # after the call: its memory is not the call's
    metrics = evaluate_surface(plain, grid, deposit_xy)
    shares = np.array([p for p in metrics["deposit_area_shares"] if p is not None])
    plain_row = {"surface": "Baseline: one plain logistic regression on every cell", "basis": FITTED,
                 "auc": metrics["auc"], "capture": {f"{s:g}": metrics["capture"][s] for s in DEFAULT_SHARES},
                 "pa_crossing": _pa_crossing(shares), "seconds": round(t_plain, 2)}
    text = report(grid, layers, cal, seconds, traced_peak, rss_before, rss_after, t_make, t_ranks, t_plain,
                  load_before, load_after, plain_row)
    print(text, flush=True)
    write_text_atomic(OUT, text)
    print(f"written {OUT.relative_to(ROOT)}")


def report(grid, layers, cal, seconds, traced_peak, rss_before, rss_after, t_make, t_ranks, t_plain, load_before,
           load_after, plain_row) -> str:
    mib = 2 ** 20
    cells = grid.width * grid.height
    speed = "meets" if seconds <= TARGET_S else "misses"
    memory = "meets" if max(traced_peak, rss_after) <= TARGET_BYTES else "misses"
    lines = [
        "## Models fitted on known deposits: speed on a 3-million-cell district", "",
        f"Generated district (seed {SEED}): {grid.width} x {grid.height} = {cells:,} cells of {PIXEL_M:g} m "
        f"(EPSG:32611), {len(layers)} measured layers (" + ", ".join(f"{layer.name}: {layer.kind}, {layer.units}"
                                                                     for layer in layers) +
        f"), {N_DEPOSITS} deposits drawn from a known favourability. Made in {t_make:.1f} s (not timed below).",
        "",
        f"Machine: {os.cpu_count()} CPUs, shared; load average {load_before[0]:.2f} before the call, "
        f"{load_after[0]:.2f} after it.", "",
        "| figure | value | target |", "|---|---:|---:|",
        f"| calibrate(..., \"best\") wall time, all models, nested CV, full fit, importance, response, "
        f"uncertainty (tracemalloc on) | {seconds:.1f} s | <= {TARGET_S:g} s ({speed}) |",
        f"| tracemalloc peak during the call (Python objects and NumPy arrays) | {traced_peak / mib:,.0f} MiB | "
        f"<= {TARGET_BYTES / mib:,.0f} MiB |",
        f"| process peak resident set (ru_maxrss) before the call | {rss_before / mib:,.0f} MiB | |",
        f"| process peak resident set (ru_maxrss) after the call | {rss_after / mib:,.0f} MiB | "
        f"<= {TARGET_BYTES / mib:,.0f} MiB ({memory}) |",
        f"| baseline: equal-weight rank mean of the ordered layers | {t_ranks:.1f} s | |",
        f"| baseline: one plain LogisticRegression fitted and predicted on all {cells:,} cells | {t_plain:.1f} s | |",
        f"| of which the models' out-of-fold runs (nested inside each outer fold; the ensemble's own combining) "
        f"| {sum(r['seconds'] for r in cal.comparison if r['seconds'] is not None):.1f} s | |",
        f"| calibrate / rank mean | {seconds / t_ranks:,.0f} x | |",
        f"| calibrate / plain logistic regression | {seconds / t_plain:,.1f} x | |",
        "",
        "The process's peak resident set includes the generated district, the baselines made before the call and "
        "the interpreter; if 'after' equals 'before', the call never rose above the earlier peak.", "",
        f"| surface | basis | {' | '.join(f'{s:.0%}' for s in DEFAULT_SHARES)} | AUC | P-A crossing | seconds |",
        "|---|---|" + "---:|" * len(DEFAULT_SHARES) + "---:|---:|---:|",
    ]
    for row in [*cal.comparison, plain_row]:
        captured = " | ".join(f"{row['capture'][f'{s:g}']:.1f}" for s in DEFAULT_SHARES)
        pa = row["pa_crossing"]
        crossing = f"{pa['deposit_share']:.0%} in {pa['area_share']:.0%}" if pa else "-"
        spent = f"{row['seconds']:.1f}" if row["seconds"] is not None else "-"
        lines.append(f"| {row['surface']} | {row['basis']} | {captured} | {row['auc']:.3f} | {crossing} | {spent} |")
    lines += ["", f"Chosen: {LABELS[cal.method]}. {cal.why}", ""]
    lines += [f"- {line}" for line in cal.log if line != cal.why]
    lines += [f"- {LABELS[name]}: hyperparameters per outer fold {run['params']}"
              for name, run in cal.out_of_fold.items() if any(run["params"])]
    lines += [f"- importance ({LABELS[cal.method]}): " +
              ", ".join(f"{row['layer']} {row['importance']:+.3f}" for row in cal.table)]
    return "\n".join(lines) + "\n"
