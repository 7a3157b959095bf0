"""Real-data benchmark: Lodestar's favourability surfaces on two real gold districts, beside baselines computed
in the same run, scored as deposits captured in the top 2 / 5 / 10 / 20 % of the study area, success-rate
AUC (plugin.evaluation.evaluate_surface: ties count as expected values) and the prediction-area crossing
(the share a of the area, best first, holding 1 - a of the deposits; calibration._pa_crossing).

Districts (tests/data): Great Basin (32 Carlin-type deposits; the user names the carbonate host units LPZE,
UPZC, LPZ, as the legend gives bare DDS-41 codes), on which the knowledge-driven mode was tuned; Murchison
(255 orogenic gold deposits), held out: no parameter of Lodestar's knowledge-driven mode or of this benchmark
was tuned on it. The models fitted on known deposits have no constant tuned on either district: their
hyperparameters are chosen inside the training folds of each run (nested, from the fixed candidates of
models.GRIDS).

Rows:
- Lodestar knowledge-driven: knowledge_specs (deposit model retrieved from the question) and
  favourability_surface; no deposit data.
- Lodestar fitted on known deposits: one call `calibrate(measured layers, grid, deposits, "best",
  baselines=...)` per district on the measured evidence (measured.measured_evidence: unit codes, distances in
  m, values in the layer's units; no membership). Every model's out-of-fold surface (spatial block
  cross-validation, calibration.py defaults: 5 folds, seed 0, blocks 10 km or an eighth of the extent) as
  calibrate scores it in `comparison`, with the seconds of its own out-of-fold fitting; the baselines scored
  beside them in the same call (the knowledge-driven surface, and the equal-weight rank mean: the plain mean
  of the percentile ranks (0-1, ties at their mid-rank, over the cells where the map has data) of the
  knowledge-driven membership maps `membership_map(rs, spec)` of the knowledge specs, every map weighing the
  same, computed here); and the chosen model's full fit, fitted on the deposits it is scored on (not a skill
  figure); the two short scripts of short_scripts.py (plain scikit-learn logistic regression and gradient boosting)
  out of fold on calibrate's own blocks, scored by calibrate's scoring on its cells; then the chosen model alone
  again with the blocks dealt from seeds 1 and 2 and with blocks of 5, 20 and 40 km (notes: how far its figure
  rests on one draw of the folds and on the block size). The notes give the whole call's wall time and its peak
  memory: the tracemalloc peak of the allocations traced during the call (Python objects and NumPy arrays; native
  allocations inside scikit-learn that bypass Python's allocator are not counted), tracing on during the timed call.
- Baseline, equal-weight fuzzy overlay (no deposit data): the plain mean of favourable units = 1 else 0,
  ordered layers linearly scaled 0-1 over the study area (inverted where low is favourable), and fault
  proximity exp(-d / 3 km) from fault lines (the decay of the simple score quoted in the Murchison data's
  README, not fitted here).
- Baseline, leave-one-out weights of evidence on the same raw layers (unit maps multi-class, ordered layers
  and fault distance generalised at maximum studentised contrast): each deposit is scored on a surface whose
  weights were fitted without it.
- Lodestar end to end: the offline run's written surface, as the README's command makes it (`lodestar:analyze` on
  the case, its own favourable units: none named for Great Basin).
All surfaces of this module are scored over the same study area (cells where a raster of the case has data; a
surface's own nodata there ranks last); calibrate scores its rows over the cells where a measured layer has
data (the notes say when that differs). Seconds are wall time on a shared machine. Writes
build/bench/realdata.md, its figures in build/bench/realdata.json (the offline run's by the names of
tests/readme_figures.py, what the README quotes). Run: `.venv/bin/python tests/benchmarks/run_all.py realdata`.
"""
from __future__ import annotations

import sys
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import rasterio

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.evaluation import DEFAULT_SHARES, cells_of, deposit_points, evaluate_surface, score_positions
from lodestar.plugin.favourability.baseline import equal_weight_ranks
from lodestar.plugin.favourability.calibration import _pa_crossing, _score, calibrate, deposit_cells
from lodestar.plugin.favourability.evidence import membership_map
from lodestar.plugin.favourability.knowledge import knowledge_specs
from lodestar.plugin.favourability.measured import measured_evidence
from lodestar.plugin.favourability.models import ENSEMBLE, LABELS
from lodestar.plugin.favourability.overlay import favourability_surface
from lodestar.plugin.favourability.transforms import distance_to_features_m
from lodestar.plugin.favourability.wofe import (
    UNIT_AREA,
    best_pattern,
    class_breaks,
    class_weights,
    classify,
    cumulative_weights,
)
from lodestar.plugin.files import write_text_atomic
from lodestar.plugin.raster_io import RasterSet
from lodestar.plugin.reason.knowledge import retrieve
from lodestar.plugin.reason.workspace import describe_layers
from lodestar.plugin.request.case import read_case
from lodestar.plugin.tools.categorical import read_legend
from lodestar.plugin.vector_io import read_vector

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
import short_scripts  # noqa: E402  (the short scripts every fitted surface is scored beside)
from readme_figures import offline_figures, write_figures  # noqa: E402  (tests/: on the path through run_all)

ROOT = HERE.parents[1]
OUT = ROOT / "build" / "bench" / "realdata.md"
PROXIMITY_M = 3000.0
NO_DATA = "no deposit data"
FITTED = "fitted on these deposits: not a skill figure"
RANK_MEAN = "Baseline: equal-weight mean of the layers' ranks"
ROBUSTNESS_SEEDS = (1, 2)
ROBUSTNESS_BLOCKS_M = (5000.0, 20000.0, 40000.0)
"""Other fold draws and block sizes the chosen model is run again with (the headline: seed 0, 10 km blocks)."""


@dataclass(frozen=True)
class District:
    """A case folder, whether Lodestar's knowledge-driven mode was tuned on it, the units the user names, and
    the baselines' evidence: (layer, kind, units) with kind "units" (favourable units by legend name),
    "scale", "scale_low" or "proximity" (fault lines)."""

    folder: str
    title: str
    tuned: bool
    named_units: dict
    evidence: tuple

    @property
    def status(self) -> str:
        return "tuned on this district" if self.tuned else "held out: not tuned on this district"


GEOLOGY_GB = "geology (DDS-41 lithotectonic units)"
GREENSTONE = "Greenstone bedrock (1:500,000 geology)"
DISTRICTS = (
    District("great-basin-gold", "Great Basin, Nevada: Carlin-type gold",
             True,
             {GEOLOGY_GB: ["LPZE", "UPZC", "LPZ"]},
             ((GEOLOGY_GB, "units", ("LPZE", "UPZC", "LPZ")), ("stream-sediment arsenic (classes)", "scale", ()),
              ("stream-sediment antimony (classes)", "scale", ()), ("distance to faults (classes)", "scale_low", ()))),
    District("murchison-gold", "Murchison, Western Australia: orogenic gold",
             False,
             {},
             ((GREENSTONE, "units", ("greenstone (Archaean greenstone belt bedrock)",)),
              ("Mapped and interpreted faults", "proximity", ()))),
)
ACKNOWLEDGEMENT = {"murchison-gold": "Murchison data: Watkins and Hickman (1990) and the Geological Survey of "
                                     "Western Australia (via spatstat.data, GPL >= 2)."}


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    value = function(*args, **kwargs)
    return value, time.perf_counter() - start


def on_study_area(values: np.ma.MaskedArray, study: np.ndarray) -> np.ma.MaskedArray:
    """A surface over the study area: outside masked, its own nodata inside ranked last."""
    values = np.ma.masked_invalid(np.ma.asarray(values, dtype=float))
    floor = float(values.min()) - 1.0 if values.count() else 0.0
    return np.ma.masked_array(values.filled(floor), mask=~study)


def raw_layer(rs: RasterSet, name: str) -> np.ma.MaskedArray:
    """A raster layer on the analysis grid, or the distance (m) to a vector layer's lines."""
    spec = rs.spec(name)
    if spec.is_vector:
        return np.ma.masked_array(distance_to_features_m(read_vector(spec.path, crs=rs.crs).geometry, rs.grid))
    return rs.read(name)[0]


def unit_codes(rs: RasterSet, name: str, units) -> list[int]:
    legend = read_legend(rs.spec(name).legend)
    codes = [code for code, unit in legend.items() if unit in units]
    if len(codes) != len(units):
        raise SystemExit(f"{name}: units {units} not all in its legend")
    return codes


def overlay_baseline(rs: RasterSet, district: District, study: np.ndarray) -> np.ma.MaskedArray:
    """Equal-weight fuzzy overlay: the plain mean of the evidence memberships (no deposit data)."""
    maps = []
    for name, kind, units in district.evidence:
        values = raw_layer(rs, name)
        if kind == "units":
            maps.append(np.ma.masked_array(np.isin(values.filled(-1), unit_codes(rs, name, units)).astype(float),
                                           mask=np.ma.getmaskarray(values)))
        elif kind == "proximity":
            maps.append(np.exp(-values / PROXIMITY_M))
        else:
            known = values[study & ~np.ma.getmaskarray(values)]
            scaled = (values - known.min()) / (known.max() - known.min())
            maps.append(1.0 - scaled if kind == "scale_low" else scaled)
    return np.ma.stack(maps).mean(axis=0)


def loo_wofe(rs: RasterSet, district: District, study: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> dict:
    """Leave-one-out weights of evidence: each deposit's rank position on the surface fitted without it."""
    cell_units = rs.grid.pixel_area / UNIT_AREA
    layers = []
    for name, kind, _ in district.evidence:
        values = raw_layer(rs, name)
        known = study & ~np.ma.getmaskarray(values)
        data = values.filled(np.nan)
        if kind == "units":
            codes, index = np.unique(data[known], return_inverse=True)
        else:
            breaks = class_breaks(data[known])
            index = classify(data[known], breaks)
            codes = breaks
        classes = np.full(study.shape, -1)
        classes[known] = index
        layers.append((kind, classes, len(codes)))
    cells = np.stack([classes[study] + 1 for _, classes, _ in layers])
    sizes = [n + 1 for _, _, n in layers]
    combined = np.ravel_multi_index(tuple(cells), sizes)
    conditions, inverse, counts = np.unique(combined, return_inverse=True, return_counts=True)
    condition_classes = np.stack(np.unravel_index(conditions, sizes)) - 1
    cell_condition = np.full(study.shape, -1)
    cell_condition[study] = inverse
    deposit_conditions = cell_condition[rows, cols]
    found = [np.bincount(classes[rows, cols][classes[rows, cols] >= 0], minlength=n) for _, classes, n in layers]
    areas = [np.bincount(classes[study][classes[study] >= 0], minlength=n) * cell_units for _, classes, n in layers]
    above, tied = [], []
    for k, condition in enumerate(deposit_conditions):
        logit = np.zeros(len(conditions))
        for (kind, classes, _), deposits, area, cls in zip(layers, found, areas, condition_classes):
            left = deposits.astype(float).copy()
            own = classes[rows[k], cols[k]]
            if own >= 0:
                left[own] -= 1
            weight = _class_weight(kind, area, left)
            logit += np.where(cls >= 0, weight[np.maximum(cls, 0)], 0.0)
        mine = logit[condition]
        above.append(counts[logit > mine].sum() / counts.sum())
        tied.append(counts[logit == mine].sum() / counts.sum())
    above, tied = np.array(above), np.array(tied)
    return {**score_positions(above, tied), "pa_crossing": _pa_crossing(above + tied / 2)}


def _class_weight(kind: str, area: np.ndarray, deposits: np.ndarray) -> np.ndarray:
    """Each class's weight: its own W+ (units), or W+ inside the best cumulative pattern and W- outside."""
    if kind == "units":
        return class_weights(area, deposits).w_plus
    ascending = kind in ("scale_low", "proximity")
    table = cumulative_weights(area, deposits, ascending)
    best = best_pattern(table)
    if best is None:
        return np.zeros(len(area))
    index = np.arange(len(area))
    inside = index <= best if ascending else index >= best
    return np.where(inside, table.w_plus[best], table.w_minus[best])


def pa_crossing(metrics: dict) -> dict | None:
    return _pa_crossing(np.array([p for p in metrics["deposit_area_shares"] if p is not None]))


def run_district(district: District) -> tuple[list[dict], list[str]]:
    case = read_case(ROOT / "tests" / "data" / district.folder)
    rs = RasterSet(case.layers)
    study = rs.valid_mask()
    xy = [(p.x, p.y) for p in deposit_points(case.deposits, rs.crs, [])]
    dep_rows, dep_cols, inside = cells_of(xy, rs.grid, study)
    dep_rows, dep_cols = dep_rows[inside], dep_cols[inside]
    notes = [f"{len(xy)} deposits, {int(inside.sum())} inside the study area of {int(study.sum()):,} cells of "
             f"{rs.grid.pixel_size[0]:g} m. Lodestar's knowledge-driven mode: {district.status}"
             f"{'' if district.tuned else '; no parameter of Lodestar or of this benchmark was tuned on it'}. "
             "Models fitted on known deposits: no constant tuned on this or the other district (hyperparameters "
             "chosen inside the training folds)."]
    results = []

    def score(label: str, basis: str, values, seconds):
        metrics = evaluate_surface(on_study_area(values, study), rs.grid, xy)
        results.append({"surface": label, "basis": basis, "auc": metrics["auc"], "capture": metrics["capture"],
                        "pa_crossing": pa_crossing(metrics), "seconds": seconds})

    infos = describe_layers(rs)
    model = retrieve(case.question, [i.role for i in infos], top=1, names=[i.name for i in infos])[0]
    (specs, left_out), t_specs = timed(knowledge_specs, infos, model, district.named_units)
    surface, t_surface = timed(favourability_surface, rs, specs)
    knowledge_label = f"Lodestar knowledge-driven ({district.status})"
    score(knowledge_label, NO_DATA, surface.values, t_specs + t_surface)
    notes.append(f"Knowledge-driven: {model['name']} model; evidence " +
                 ", ".join(f"{s.layer} ({s.transform}, {s.membership}, weight {s.weight:g})" for s in specs) +
                 "".join(f"; left out {x['layer']}: {x['reason']}" for x in left_out))
    results.extend(fitted_models(rs, infos, specs, surface, knowledge_label, study, xy, notes))
    results.append(end_to_end(case, district, rs, xy, notes))
    overlay, seconds = timed(overlay_baseline, rs, district, study)
    score("Baseline: equal-weight fuzzy overlay", NO_DATA, overlay, seconds)
    loo, seconds = timed(loo_wofe, rs, district, study, dep_rows, dep_cols)
    results.append({"surface": "Baseline: leave-one-out weights of evidence", "basis": "each deposit left out of "
                    "its own fit", "auc": loo["auc"], "capture": loo["capture"], "pa_crossing": loo["pa_crossing"],
                    "seconds": seconds})
    return results, notes


def fitted_models(rs: RasterSet, infos, specs, surface, knowledge_label: str, study: np.ndarray, xy: list,
                  notes: list) -> list[dict]:
    """One `calibrate(..., "best")` on the measured layers with the two no-deposit-data baselines: every row of
    its comparison (out of fold, and the baselines as it scores them), then the chosen model's full fit."""
    (layers, not_measured), t_measure = timed(measured_evidence, rs, infos)
    maps, t_maps = timed(lambda: {s.layer: membership_map(rs, s) for s in specs})
    ranks, t_ranks = timed(equal_weight_ranks, maps)
    baselines = {knowledge_label: surface.values, RANK_MEAN: ranks}
    tracemalloc.start()
    try:
        cal, seconds = timed(calibrate, layers, rs.grid, xy, "best", baselines=baselines)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    area = np.logical_or.reduce([~np.ma.getmaskarray(layer.values) for layer in layers])
    notes.append(f"Fitted on known deposits: calibrate(..., \"best\") on {len(layers)} measured layers (" +
                 ", ".join(f"{layer.name}: {layer.kind}, {layer.units}" for layer in layers) + ")" +
                 "".join(f"; not measured {x['layer']}: {x['reason']}" for x in not_measured) +
                 f"; the call took {seconds:.1f} s wall, tracemalloc peak {peak / 2**20:,.0f} MiB (traced "
                 f"allocations during the call; measured evidence {t_measure:.1f} s and the rank-mean baseline's "
                 f"membership maps and ranks {t_maps + t_ranks:.1f} s before it, not included).")
    if not np.array_equal(area, study):
        notes.append(f"  calibrate's study area (a measured layer has data) holds {int(area.sum()):,} cells, this "
                     f"module's {int(study.sum()):,}: its rows are scored on its own.")
    notes.append(f"  {cal.why}")
    notes.extend(f"  {line}" for line in cal.log if line != cal.why)
    notes.extend(f"  {LABELS[name]}: hyperparameters per outer fold {run['params']}"
                 for name, run in cal.out_of_fold.items() if any(run["params"]))
    notes.append(f"  {robustness(layers, rs.grid, xy, cal)}")
    rows = []
    for row in cal.comparison:
        baseline = row["basis"] == "no deposit data"
        rows.append({"surface": (f"{row['surface']} (calibrate's baseline)" if baseline
                                 else f"Fitted on deposits: {row['surface']}"),
                     "basis": NO_DATA if baseline else row["basis"], "auc": row["auc"],
                     "capture": {share: row["capture"][f"{share:g}"] for share in DEFAULT_SHARES},
                     "pa_crossing": row["pa_crossing"],
                     "seconds": (t_maps + t_ranks if row["surface"] == RANK_MEAN else None) if baseline
                     else row["seconds"]})
    counts = deposit_cells(xy, rs.grid, area, [])
    for script, label in short_scripts.SCRIPTS.items():
        surface, seconds = timed(short_scripts.out_of_fold, script, layers, area, counts, cal.folds.fold)
        row = _score(label, "out of fold (the same blocks)", surface, rs.grid, xy, area, seconds)
        rows.append(dict(row, capture={share: row["capture"][f"{share:g}"] for share in DEFAULT_SHARES}))
    metrics = evaluate_surface(on_study_area(cal.full, study), rs.grid, xy)
    rows.append({"surface": f"Fitted on deposits: {LABELS[cal.method]} (the chosen model), full fit", "basis": FITTED,
                 "auc": metrics["auc"], "capture": metrics["capture"], "pa_crossing": pa_crossing(metrics),
                 "seconds": None})
    return rows


def robustness(layers: list, grid, xy: list, cal) -> str:
    """The chosen model's out-of-fold AUC with the blocks dealt to folds from other seeds, and with other block sizes
    (seed 0): how far the headline figure rests on one draw of the folds and on the 10 km blocks."""
    method = cal.method if cal.method != ENSEMBLE else "best"
    auc = cal.out_of_fold[cal.method]["auc"]

    def again(**kwargs) -> float:
        return calibrate(layers, grid, xy, method, **kwargs).out_of_fold[cal.method]["auc"]

    draws = [again(seed=seed) for seed in ROBUSTNESS_SEEDS]
    sizes = [again(block_size_m=size) for size in ROBUSTNESS_BLOCKS_M]
    return (f"The chosen model's out-of-fold AUC ({auc:.3f} with the blocks of seed 0): with the blocks dealt from "
            "seeds " + ", ".join(f"{seed}: {value:.3f}" for seed, value in zip(ROBUSTNESS_SEEDS, draws)) +
            "; with blocks of " + ", ".join(f"{size / 1000:g} km: {value:.3f}"
                                            for size, value in zip(ROBUSTNESS_BLOCKS_M, sizes)) + " (seed 0).")


def end_to_end(case, district: District, rs: RasterSet, xy: list, notes: list) -> dict:
    """The whole offline run (chain, graph, surface, targets) as a user gets it: its written surface scored,
    its targets' capture and area in the notes."""
    import tempfile

    with tempfile.TemporaryDirectory() as out:
        request = AnalysisRequest(case.layers, case.question, Path(out), dict(case.choices), case_id=case.id,
                                  deposits=case.deposits, favourable_units=dict(case.favourable_units or {}))
        result, seconds = timed(run_analysis, request)
        with rasterio.open(result.outputs["favourability"]) as ds:
            values = ds.read(1, masked=True)
    metrics = evaluate_surface(values, rs.grid, xy)
    share = 1.0 - (result.metrics.get("area_reduction") or 1.0)
    answer = result.answer_text or result.answer
    notes.append(f"End to end (offline lodestar:analyze, {seconds:.1f} s): answer {answer}; "
                 f"{len(result.prospectivity)} targets cover {share:.1%} of the study area and hold "
                 f"{result.metrics.get('found', 0)} of {result.metrics.get('deposits', len(xy))} deposits.")
    return {"surface": f"Lodestar end to end: the run's surface ({district.status})", "basis": NO_DATA,
            "auc": metrics["auc"], "capture": metrics["capture"], "pa_crossing": pa_crossing(metrics),
            "seconds": seconds, "offline": dict(offline_figures(result), **{"offline.seconds": seconds})}


def table(district: District, results: list[dict], notes: list[str]) -> str:
    overlay = next(r for r in results if r["surface"].startswith("Baseline: equal-weight"))
    shares = " | ".join(f"{s:.0%}" for s in DEFAULT_SHARES)
    lines = [f"### {district.title}", "", *notes, "",
             f"| surface | deposit data | {shares} | AUC | AUC - overlay | P-A crossing | seconds |",
             "|---|---|" + "---:|" * len(DEFAULT_SHARES) + "---:|---:|---:|---:|"]
    for r in results:
        captured = " | ".join(f"{r['capture'][s]:.1f}" for s in DEFAULT_SHARES)
        seconds = f"{r['seconds']:.1f}" if r["seconds"] is not None else "-"
        pa = r["pa_crossing"]
        crossing = f"{pa['deposit_share']:.0%} in {pa['area_share']:.0%}" if pa else "-"
        lines.append(f"| {r['surface']} | {r['basis']} | {captured} | {r['auc']:.3f} | "
                     f"{r['auc'] - overlay['auc']:+.3f} | {crossing} | {seconds} |")
    if district.folder in ACKNOWLEDGEMENT:
        lines += ["", ACKNOWLEDGEMENT[district.folder]]
    return "\n".join(lines) + "\n"


def main() -> None:
    sections = ["## Real districts", "", "Deposits captured in the top 2 / 5 / 10 / 20 % of the study area (by "
                "surface value, ties counted as expected values), success-rate AUC, AUC - overlay against the "
                "equal-weight fuzzy overlay computed in the same run, and the prediction-area crossing (x % of "
                "the deposits in the best 100 - x % of the area). Seconds: wall time of making the surface (a "
                "fitted model's row: its own out-of-fold fitting inside the calibrate call; '-': none of its own "
                "or given in the row above/notes).", ""]
    figures = {}
    for district in DISTRICTS:
        results, notes = run_district(district)
        text = table(district, results, notes)
        print(text, flush=True)
        sections.append(text)
        figures[district.folder] = {"rows": [{k: v for k, v in r.items() if k != "offline"} for r in results],
                                    "notes": notes, **next(r["offline"] for r in results if "offline" in r)}
    write_text_atomic(OUT, "\n".join(sections))
    offline = {f"{folder.rsplit('-', 1)[0]}.{name}": value for folder, district in figures.items()
               for name, value in district.items() if name.startswith("offline.")}
    print(f"written {OUT.relative_to(ROOT)} and {write_figures('realdata', figures, offline).relative_to(ROOT)}")
