"""Calibration's cost (issue 62): time and peak memory of `calibrate(..., "best")` per model and in all, beside the
same figures for the short scripts (short_scripts.py), on Murchison, Great Basin (tests/data) and the generated
3-million-cell district of bench_models.py; the calibrated runs against the offline knowledge-driven runs of the
same cases, measured in this run; the background sample's size against the out-of-fold AUC; and the calibrated
surface of the generated district at twice its resolution, made block by block, against the in-memory prediction.

Rows and how they are measured (wall time on a machine of few cores shared with other work; the load average,
sampled every 5 s through the bench, is given, and at each case's start and end). No figure is asserted; every
ratio is over a baseline measured in this run.
- Per model: one `calibrate(measured layers, grid, deposits, "best")` with tracemalloc on. All four models' fits run
  in one pool of threads (calibration._out_of_fold), so a model has no wall-time span of its own: its figure is the
  calibration's own `seconds` of its comparison row (runs[name]["seconds"]: each of its inner and outer fits and
  predictions timed in the thread that ran it, summed over the threads; with several threads at once the models'
  figures add up to more than the wall time, and a fit sharing the cores is slower than alone); the ensemble's is
  its own (the mean of its members' out-of-fold ranks and its fold models). Memory cannot be split by model either
  (the models' fits share the threads at once): the same call's phases are given instead, cut at calibrate's own
  log lines and progress: set-up (study area, folds, design matrix) to "hyperparameters chosen inside the training
  folds: N inner fits", the inner fits to "M model(s) x 5 folds out of fold", the outer folds to the progress at
  OUT_OF_FOLD_SHARE, then the rest (the ensemble, the scores, the chosen model's full fit, importance, response,
  uncertainty); each its wall time and the tracemalloc peak over its span (allocations traced in every thread:
  Python objects and NumPy arrays, not native allocations inside scikit-learn); "in all" the whole call, and the
  process's peak resident set after it (maxrss: VmHWM, the interpreter and everything before it included).
- Short scripts: short_scripts.out_of_fold on calibrate's own blocks (their defaults: every training cell a row,
  scikit-learn's own threads), each timed and traced alone, scored as calibrate scores its models (each deposit
  cell once).
- Runs: lodestar's offline run (run_analysis, the case's deposits given, no calibration) and then the same with
  CALIBRATE best, untraced; the ratio is the calibrated run's time over the offline run's (the issue's target: at
  most 2.5). Training (Great Basin): what lodestar:train_prospectivity_model does with "best out of fold" (the
  rasters read, the layers measured, calibrate, the model file and the full and out-of-fold surfaces written; not
  its comparison table), untraced, right after, against the same offline run.
- Background sample (Murchison only, to keep the bench within about 15 minutes): calibrate "best", untraced, with
  BACKGROUND_CELLS of 5,000, 10,000, 20,000 (the setting) and 40,000: every model's out-of-fold AUC, and the
  seconds.
- Full resolution: the generated district's layers written at 50 m (each 100 m cell as 2 x 2: 3,464 x 3,464 = 12.0
  million cells, GeoTIFFs), the model its traced "best" chose (fitted on the 100 m district) saved as a model file
  and made into a surface block by block (blockwise_fitted.write_fitted_full_resolution, local threads) in a process
  of its own, whose wall time, tracemalloc peak and peak resident set (its own VmHWM, not ru_maxrss, which a child
  inherits from the process that started it) are given (target: under 2 GB); then the same model's in-memory
  prediction over the same 12 million cells (the float32 values the files hold), ranked as a calibration ranks its
  surface: the cells where the two differ are counted (target: none).
Writes build/bench/calibration.md, and build/bench/calibration.json the figures the README quotes. Run:
`.venv/bin/python tests/benchmarks/run_all.py calibration`.
"""
from __future__ import annotations

import inspect
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

import numpy as np
import rasterio
from rasterio.transform import from_origin

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.evaluation import deposit_points
from lodestar.plugin.favourability import calibration
from lodestar.plugin.favourability.baseline import ORDERED_RANK_MEAN, ordered_rank_mean
from lodestar.plugin.favourability.calibration import _ranks, calibrate, deposit_cells
from lodestar.plugin.favourability.measured import measured_evidence
from lodestar.plugin.favourability.model_file import save_model
from lodestar.plugin.favourability.models import ENSEMBLE, LABELS, cores
from lodestar.plugin.favourability.outputs import NODATA, write_bands
from lodestar.plugin.files import write_text_atomic
from lodestar.plugin.progress import Progress
from lodestar.plugin.raster_io import LayerSpec, RasterSet
from lodestar.plugin.reason.workspace import describe_layers
from lodestar.plugin.request.case import read_case

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
import bench_models  # noqa: E402  (the generated 3-million-cell district)
import short_scripts  # noqa: E402
from readme_figures import write_figures  # noqa: E402  (tests/: on the path through run_all)

ROOT = HERE.parents[1]
OUT = ROOT / "build" / "bench" / "calibration.md"
CASES = (("murchison-gold", "Murchison, Western Australia: orogenic gold"),
         ("great-basin-gold", "Great Basin, Nevada: Carlin-type gold"))
BACKGROUNDS = (5_000, 10_000, 20_000, 40_000)
SAMPLED = ("murchison-gold",)
"""The cases whose background sizes are measured (each size a calibrate of its own)."""
TRAINED = "great-basin-gold"
TARGET_RATIO = 2.5
REFUSED = "; its targets come from the knowledge-driven one, which beats the fit out of fold"
TARGET_BYTES = 2 * 1024 ** 3
MIB = 2 ** 20


def maxrss() -> int:
    """The process's peak resident set: /proc's VmHWM (its own address space's high-water mark) where there is one;
    ru_maxrss, which on Linux also keeps the peak of the process it was started from (a child's reads as its
    parent's), elsewhere."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    value = function(*args, **kwargs)
    return value, time.perf_counter() - start


def traced(function, *args, **kwargs):
    """(value, seconds, tracemalloc peak) of one call, tracing on."""
    tracemalloc.start()
    try:
        value, seconds = timed(function, *args, **kwargs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return value, seconds, peak


SETUP = "set-up (study area, folds, design matrix)"
INNER = "inner fits of every model's hyperparameter search (one pool of threads)"
OUTER = "every model's outer folds: choice, fit, prediction (one pool of threads)"
REST = "the rest (ensemble, scores, the chosen model's full fit, importance, response, uncertainty)"


def phases(layers, grid, xy) -> tuple:
    """(the calibration, [(phase, wall seconds, tracemalloc peak)], seconds in all, peak in all) of one traced "best".
    The phases are cut at calibrate's own log lines ("hyperparameters chosen inside the training folds", "model(s) x
    n folds out of fold") and where its progress reaches OUT_OF_FOLD_SHARE (the out-of-fold fits done)."""
    marks, lock = [], threading.Lock()

    def mark(name: str) -> None:  # the progress is reported from the fits' threads
        with lock:
            if any(m[0] == name for m in marks):
                return
            peak = tracemalloc.get_traced_memory()[1]  # the peak of the span that ends here
            tracemalloc.reset_peak()
            if marks:
                marks[-1] = marks[-1][:2] + (peak,)
            marks.append((name, time.perf_counter(), 0))

    def logged(line: str) -> None:
        if line.startswith("Calibration: hyperparameters chosen inside the training folds"):
            mark(INNER)
        elif line.startswith("Calibration: ") and " folds out of fold: " in line:
            mark(OUTER)

    def moved(percent: float) -> None:
        if percent >= calibration.OUT_OF_FOLD_SHARE - 1e-6:
            mark(REST)

    tracemalloc.start()
    try:
        mark(SETUP)
        cal = calibrate(layers, grid, xy, "best", progress=Progress(moved, logged))
        end = time.perf_counter()
        marks[-1] = marks[-1][:2] + (tracemalloc.get_traced_memory()[1],)
    finally:
        tracemalloc.stop()
    rows = [(name, (marks[k + 1][1] if k + 1 < len(marks) else end) - at, peak)
            for k, (name, at, peak) in enumerate(marks)]
    return cal, rows, end - marks[0][1], max(m[2] for m in marks)


def model_seconds(cal) -> dict:
    """{label: seconds} from the calibration's comparison rows: each model's out-of-fold fits' own time (its inner
    and outer fits and predictions, each timed in the thread that ran it, summed over the threads); the ensemble's
    its own (the mean of the members' ranks and its fold models)."""
    suffix = ", out of fold"
    return {row["surface"][:-len(suffix)]: row["seconds"] for row in cal.comparison
            if row["surface"].endswith(suffix) and row["seconds"] is not None}


def scripts(layers, grid, xy, cal) -> list:
    """[(label, seconds, peak bytes, out-of-fold AUC)] of the short scripts on calibrate's blocks, scored as calibrate
    scores its models (against each deposit cell's centre once)."""
    valid = np.logical_or.reduce([~np.ma.getmaskarray(layer.values) for layer in layers])
    counts = deposit_cells(xy, grid, valid, [])
    rows, cols = np.nonzero(counts > 0)
    x, y = grid.pixel_to_map(cols + 0.5, rows + 0.5)
    cells = np.column_stack([np.asarray(x, dtype=float), np.asarray(y, dtype=float)])
    out = []
    for script, label in short_scripts.SCRIPTS.items():
        surface, seconds, peak = traced(short_scripts.out_of_fold, script, layers, valid, counts, cal.folds.fold)
        row = calibration._score(label, "", surface, grid, cells, valid, seconds)
        out.append((label, seconds, peak, row["auc"]))
    return out


def cost_table(title: str, cal, rows, seconds, peak, rss, script_rows, began: float) -> list:
    aucs = {LABELS[name]: run["auc"] for name, run in cal.out_of_fold.items()}
    spent = model_seconds(cal)
    lines = [f"#### {title}", "", f"Load average (1 min) {began:.2f} when this case began, {os.getloadavg()[0]:.2f} "
             "when its short scripts ended.", "",
             "| model | fits' own seconds (summed over threads) | out-of-fold AUC |", "|---|---:|---:|"]
    for label, auc in aucs.items():
        note = " (its own: mean of the members' ranks)" if label == LABELS[ENSEMBLE] else ""
        figure = spent.get(label)
        lines.append(f"| {label}{note} | {'-' if figure is None else f'{figure:.1f}'} | {auc:.4f} |")
    lines += ["", "| phase of the same call | wall seconds | tracemalloc peak |", "|---|---:|---:|"]
    for name, wall, high in rows:
        lines.append(f"| {name} | {wall:.1f} | {high / MIB:,.0f} MiB |")
    lines.append(f"| **calibrate \"best\" in all** (chosen: {LABELS[cal.method]}, out-of-fold AUC "
                 f"{cal.out_of_fold[cal.method]['auc']:.4f}) | **{seconds:.1f}** | **{peak / MIB:,.0f} MiB** "
                 f"(process peak {rss / MIB:,.0f} MiB) |")
    lines += ["", "| short script on the same blocks (alone) | wall seconds | tracemalloc peak | out-of-fold AUC |",
              "|---|---:|---:|---:|"]
    for label, wall, high, auc in script_rows:
        lines.append(f"| {label} | {wall:.1f} | {high / MIB:,.0f} MiB | {auc:.4f} |")
    return lines + [""]


def case_inputs(folder: str):
    case = read_case(ROOT / "tests" / "data" / folder)
    raster_set = RasterSet(case.layers)
    xy = [(p.x, p.y) for p in deposit_points(case.deposits, raster_set.crs, [])]
    layers, _ = measured_evidence(raster_set, describe_layers(raster_set))
    return case, raster_set, layers, xy


def runs(case, training: bool) -> dict:
    """Seconds of the offline run, the calibrated run and (`training`) the training, one after the other, untraced,
    and the calibrated run's figures."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for key, calibrate_as in (("offline", ""), ("calibrated", "best")):
            request = AnalysisRequest(case.layers, case.question, Path(tmp) / key, dict(case.choices),
                                      case_id=case.id, deposits=case.deposits, calibrate=calibrate_as)
            result, out[key] = timed(run_analysis, request)
            if calibrate_as:
                section = json.loads(result.outputs["record"].read_text(encoding="utf-8"))["favourability"]
                out["method"] = section["calibration"]["method"]
                out["auc"] = section["calibration"]["out_of_fold"][out["method"]]["auc"]
                out["basis"] = section["basis"]
                out["refused"] = bool(section["calibration"].get("refused"))
        if training:
            _, out["training"] = timed(train, case, Path(tmp) / "train")
    return out


def train(case, folder: Path) -> None:
    """What lodestar:train_prospectivity_model does with "best out of fold", its outputs into `folder`."""
    folder.mkdir(parents=True)
    raster_set = RasterSet(case.layers)
    layers, _ = measured_evidence(raster_set, describe_layers(raster_set))
    xy = [(p.x, p.y) for p in deposit_points(case.deposits, raster_set.crs, [])]
    plain = ordered_rank_mean(layers)
    fit = calibrate(layers, raster_set.grid, xy, "best", baselines={ORDERED_RANK_MEAN: plain} if plain is not None
                    else None)
    save_model(folder / "model.pkl", fit.model, {"why": fit.why})
    write_bands({LABELS[fit.method]: fit.full}, raster_set.grid, folder / "favourability.tif", LABELS[fit.method])
    write_bands({f"{LABELS[n]}, out of fold": v for n, v in fit.surfaces.items()}, raster_set.grid,
                folder / "cv.tif", "out of fold (spatial blocks)")


def backgrounds(layers, grid, xy) -> list:
    """[(background cells, {model: out-of-fold AUC}, seconds)]."""
    out = []
    setting = calibration.BACKGROUND_CELLS
    try:
        for cells in BACKGROUNDS:
            calibration.BACKGROUND_CELLS = cells
            cal, seconds = timed(calibrate, layers, grid, xy, "best")
            out.append((cells, {n: r["auc"] for n, r in cal.out_of_fold.items()}, seconds))
    finally:
        calibration.BACKGROUND_CELLS = setting
    return out


def background_table(rows) -> list:
    names = list(rows[0][1])
    lines = ["| background cells | " + " | ".join(LABELS[n] for n in names) + " | seconds |",
             "|---:|" + "---:|" * (len(names) + 1)]
    for cells, aucs, seconds in rows:
        mark = " (the setting)" if cells == calibration.BACKGROUND_CELLS else ""
        lines.append(f"| {cells:,}{mark} | " + " | ".join(f"{aucs[n]:.4f}" for n in names) + f" | {seconds:.1f} |")
    return lines + [""]


def doubled(values: np.ndarray) -> np.ndarray:
    return np.repeat(np.repeat(values, 2, axis=0), 2, axis=1)


def write_doubled(layers, grid, folder: Path) -> list:
    """The district's layers at 50 m as GeoTIFFs (float32; the unit map uint8), as LayerSpecs."""
    transform = from_origin(grid.transform.c, grid.transform.f, grid.pixel_size[0] / 2, grid.pixel_size[1] / 2)
    specs = []
    for k, layer in enumerate(layers):
        path = folder / f"layer{k}.tif"
        if layer.categorical:
            data, dtype, nodata = doubled(layer.values.filled(0).astype("uint8")), "uint8", 0
        else:
            data = doubled(layer.values.filled(np.nan).astype("float32"))
            data[np.isnan(data)] = NODATA
            dtype, nodata = "float32", NODATA
        with rasterio.open(path, "w", driver="GTiff", width=data.shape[1], height=data.shape[0], count=1, dtype=dtype,
                           crs=grid.crs.to_wkt(), transform=transform, nodata=nodata, tiled=True, compress="deflate",
                           blockxsize=512, blockysize=512) as dst:
            dst.write(data, 1)
        specs.append(LayerSpec(path, "geological_map" if layer.categorical else "geochemistry", layer.name,
                               favourable=layer.favourable or "high"))
    return specs


FULL_SCRIPT = """
import json, resource, sys, time, tracemalloc
sys.path.insert(0, {tests!r})
import conftest  # noqa
{maxrss}
from lodestar.plugin.favourability.blockwise_fitted import write_fitted_full_resolution
from lodestar.plugin.favourability.model_file import load_model
from lodestar.plugin.raster_io import LayerSpec
specs = [LayerSpec(**s) for s in json.loads({specs!r})]
_, model = load_model({model!r})
spread = load_model({spread!r})[1] if {spread!r} else None
tracemalloc.start()
start = time.perf_counter()
write_fitted_full_resolution(specs, model, {out!r}, spread=spread)
seconds = time.perf_counter() - start
print(json.dumps({{"seconds": seconds, "traced": tracemalloc.get_traced_memory()[1],
                  "rss": maxrss()}}))
"""


def full_resolution(cal, layers, grid, folder: Path) -> dict:
    """The district's calibrated surface at 50 m block by block (a process of its own) against the in-memory
    prediction of the same model over the same cells."""
    specs = write_doubled(layers, grid, folder)
    save_model(folder / "model.pkl", cal.model, {})
    spread = ""
    if cal.spread is not None:
        spread = str(folder / "spread.pkl")
        save_model(spread, cal.spread, {})
    out = folder / "full.tif"
    script = FULL_SCRIPT.format(tests=str(ROOT / "tests"), maxrss=inspect.getsource(maxrss), specs=json.dumps(
        [{"path": str(s.path), "role": s.role, "name": s.name, "favourable": s.favourable} for s in specs]),
        model=str(folder / "model.pkl"), spread=spread, out=str(out))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    with rasterio.open(out) as src:
        favourability = src.read(1)
        figures["shape"] = (src.width, src.height)
    x = np.column_stack([doubled(layer.values.filled(np.nan).astype("float32")).astype("float64").ravel()
                         for layer in layers])
    start = time.perf_counter()
    if cal.model.method == ENSEMBLE:
        scores = cal.model.member_ranks(x).mean(axis=0)
    else:
        scores = cal.model.predict(x)
    want = _ranks(scores).astype("float32")
    figures["in_memory_seconds"] = time.perf_counter() - start
    got = favourability.ravel()
    figures["cells"] = int(got.size)
    figures["different"] = int((got != want).sum())
    figures["max_difference"] = float(np.abs(got.astype("float64") - want).max())
    return figures


class Load:
    """The 1-minute load average sampled every few seconds in a thread of its own while the bench runs."""

    def __init__(self, every: float = 5.0):
        self.samples = [os.getloadavg()[0]]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(every,), daemon=True)
        self.thread.start()

    def _run(self, every: float) -> None:
        while not self.stop.wait(every):
            self.samples.append(os.getloadavg()[0])

    def done(self) -> str:
        self.stop.set()
        self.thread.join()
        return (f"load average (1 min) {self.samples[0]:.2f} at the start, {self.samples[-1]:.2f} at the end, mean "
                f"{np.mean(self.samples):.2f} and highest {max(self.samples):.2f} over {len(self.samples)} samples "
                f"taken every 5 s")


def main() -> None:
    load, begun = Load(), time.perf_counter()
    summary = ["| case | offline run | calibrated run (best) | calibrated / offline | chosen, out-of-fold AUC |",
               "|---|---:|---:|---:|---|"]
    trained, lines, samples, quoted = [], [], [], {}
    for folder, title in CASES:
        began = os.getloadavg()[0]
        case, raster_set, layers, xy = case_inputs(folder)
        figures = runs(case, folder == TRAINED)
        ratio = figures["calibrated"] / figures["offline"]
        name = f"calibration.{folder.rsplit('-', 1)[0]}"
        quoted.update({f"{name}.offline_s": figures["offline"], f"{name}.calibrated_s": figures["calibrated"],
                       f"{name}.ratio": ratio, f"{name}.auc": figures["auc"]})
        summary.append(f"| {title} | {figures['offline']:.1f} s | {figures['calibrated']:.1f} s | {ratio:.2f} "
                       f"({'meets' if ratio <= TARGET_RATIO else 'misses'} <= {TARGET_RATIO:g}) | "
                       f"{LABELS[figures['method']]} {figures['auc']:.4f} (the run maps the {figures['basis']} "
                       f"surface{REFUSED if figures['refused'] else ''}) |")
        if "training" in figures:
            share = figures["training"] / figures["offline"]
            quoted.update({f"{name}.training_s": figures["training"], f"{name}.training_ratio": share})
            trained.append(f"| {title} | {figures['offline']:.1f} s | {figures['training']:.1f} s | {share:.2f} "
                           f"({'meets' if share <= TARGET_RATIO else 'misses'} <= {TARGET_RATIO:g}) |")
        cal, rows, seconds, peak = phases(layers, raster_set.grid, xy)
        area = int(np.logical_or.reduce([~np.ma.getmaskarray(layer.values) for layer in layers]).sum())
        script_rows = scripts(layers, raster_set.grid, xy, cal)
        quoted.update({f"{name}.script_{script}.auc": row[3]
                       for script, row in zip(short_scripts.SCRIPTS, script_rows)})
        lines += cost_table(f"{title}: {area:,} cells, {len(layers)} measured layers, {len(xy)} deposits", cal, rows,
                            seconds, peak, maxrss(), script_rows, began)
        if folder in SAMPLED:
            samples.append((title, backgrounds(layers, raster_set.grid, xy)))
    began = os.getloadavg()[0]
    grid, layers, xy, _ = bench_models.district()
    cal, rows, seconds, peak = phases(layers, grid, xy)
    quoted.update({"calibration.district.cells": grid.width * grid.height, "calibration.district.seconds": seconds})
    lines += cost_table(f"Generated district (bench_models.py): {grid.width * grid.height:,} cells of 100 m, "
                        f"{len(layers)} layers, {len(xy)} deposits", cal, rows, seconds, peak, maxrss(),
                        scripts(layers, grid, xy, cal), began)
    bench = ROOT / "build" / "bench"
    bench.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(dir=bench))
    try:
        full = full_resolution(cal, layers, grid, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    quoted.update({"calibration.full.cells": full["cells"], "calibration.full.seconds": full["seconds"],
                   "calibration.full.rss_mib": full["rss"] / MIB, "calibration.full.different": full["different"]})
    lines += ["#### The generated district's calibrated surface at twice the resolution, block by block", "",
              f"{full['shape'][0]:,} x {full['shape'][1]:,} = {full['cells']:,} cells of 50 m "
              f"({LABELS[cal.method]}, fitted on the 100 m district): written in {full['seconds']:.1f} s, "
              f"tracemalloc peak {full['traced'] / MIB:,.0f} MiB, process peak {full['rss'] / MIB:,.0f} MiB "
              f"({'meets' if max(full['traced'], full['rss']) < TARGET_BYTES else 'misses'} < 2 GB); against the "
              f"in-memory prediction of the same model over the same cells ({full['in_memory_seconds']:.1f} s): "
              f"{full['different']:,} cells differ (largest difference {full['max_difference']:.3g}).", ""]
    lines += ["#### Background sample size against the out-of-fold AUC", "",
              f"calibrate \"best\", untraced, on {' and '.join(t for f, t in CASES if f in SAMPLED)} only (the "
              f"other cases left out to keep the bench within about 15 minutes).", ""]
    for title, rows in samples:
        lines += [title, ""] + background_table(rows)
    head = ["## Calibration: time and memory (issue 62)", "",
            f"Machine: {os.cpu_count()} CPUs, shared; {load.done()}; the bench took "
            f"{time.perf_counter() - begun:.0f} s. BACKGROUND_CELLS {calibration.BACKGROUND_CELLS:,}; calibrate's fits "
            f"in {calibration.FOLD_WORKERS or cores()} threads at once. How each figure is measured: this module's "
            "docstring (tests/benchmarks/bench_calibration.py).", "",
            "#### Runs, measured in this bench run, one after the other", ""] + summary + [""]
    if trained:
        head += ["| case | offline run | training (lodestar:train_prospectivity_model, best out of fold) | "
                 "training / offline |", "|---|---:|---:|---:|"] + trained + [""]
    text = "\n".join(head + lines) + "\n"
    print(text, flush=True)
    write_text_atomic(OUT, text)
    print(f"written {OUT.relative_to(ROOT)} and {write_figures('calibration', {}, quoted).relative_to(ROOT)}")


if __name__ == "__main__":
    main()
