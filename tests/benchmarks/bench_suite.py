"""Benchmark: the offline back-end over a synthetic MineBench-style suite, and the real Great Basin case.

Generates the suite (60 cases, fixed seed, `scripts/synthetic_cases.py`) into build/bench/suite, runs
every case through the engine with `plugin.runs.batch.run_batch` (offline back-end, K = 3 rounds) and writes:

  build/bench/suite_results.csv   one row per case (answer, truth, rounds, seconds, recall, ...)
  build/bench/suite_metrics.csv   the figures, for the engine and two baselines measured in the same run
  build/bench/suite_metrics.md    the same as a Markdown table, with the per-kind breakdown
  build/bench/great_basin.csv/.md the real case, reported apart (deposits captured vs area selected)

Baselines: "always yes", and "any anomaly" (yes as soon as one alteration layer shows an anomaly:
what a reader that ignores cross-layer coincidence would answer). The cases are synthetic; the
Great Basin case is real data (USGS DDS-41). Run: `make bench` or
`.venv/bin/python tests/benchmarks/run_all.py suite`.
"""
from __future__ import annotations

import csv
import json
import os
import platform
import shutil
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
BENCH_DIR = ROOT / "build" / "bench"
SUITE_DIR = BENCH_DIR / "suite"
RUNS_DIR = BENCH_DIR / "runs"
GREAT_BASIN = ROOT / "tests" / "data" / "great-basin-gold"
# Another suite, one the offline reasoner was not developed on: LODESTAR_SUITE_SEED=4242 make bench
SUITE_SIZE = int(os.environ.get("LODESTAR_SUITE_CASES", "60"))
SUITE_SEED = int(os.environ.get("LODESTAR_SUITE_SEED", "1000"))
CASE_SIZE = int(os.environ.get("LODESTAR_SUITE_CASE_PX", "200"))
ALTERATION_ROLES = ("hydrothermal_alteration", "argillic_alteration", "silicification", "propylitic_alteration",
                    "iron_oxide")

for entry in (str(ROOT / "scripts"), str(ROOT / "build" / "testpkg")):
    if entry not in sys.path:
        sys.path.insert(0, entry)


def _package():
    """The checkout imported as the `lodestar` package (tests/conftest.py makes the link)."""
    sys.path.insert(0, str(ROOT / "tests"))
    import conftest  # noqa: F401

    import lodestar

    return lodestar


def any_anomaly_answer(case) -> str:
    """Baseline: 'yes' when any single alteration layer shows an anomaly, ignoring coincidence.

    Index layer: cells more than 4 robust standard deviations above the median, at least 0.3% of the
    cells. Colour rendering: saturated cells (colour bars in an 8% edge band ignored), at least 0.3%."""
    from lodestar.plugin.raster_io import RasterSet

    negative = next(letter for letter in case.choices if letter != case.positive_choice)
    specs = [s for s in case.layers if not s.is_vector and s.role in ALTERATION_ROLES]
    if not specs:
        return negative
    rs = RasterSet(specs)
    for spec in specs:
        data = rs.read(spec.name)
        if data.shape[0] >= 3:
            rgb = data[:3].filled(0)
            hot = (rgb.max(axis=0) - rgb.min(axis=0)) > 80
            edge = int(0.08 * max(hot.shape))
            hot[:edge], hot[-edge:], hot[:, :edge], hot[:, -edge:] = False, False, False, False
        else:
            band = data[0]
            median = float(np.ma.median(band))
            spread = 1.4826 * float(np.ma.median(np.abs(band - median))) or 1e-9
            hot = ((band - median) / spread > 4).filled(False)
        if hot.mean() >= 0.003:
            return case.positive_choice
    return negative


def baseline_rows(paths, answer_of):
    from lodestar.plugin.request.case import read_case
    from lodestar.plugin.runs.batch import CaseOutcome

    rows = []
    for path in paths:
        case = read_case(path)
        row = CaseOutcome(case_id=case.id, answer=answer_of(case), truth=case.answer or "")
        row.correct = "yes" if row.answer == row.truth else "no"
        rows.append(row)
    return rows


def fmt(value, digits=3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    if isinstance(value, (list, tuple)):  # an interval
        return " to ".join(fmt(v, digits) for v in value)
    return str(value)


METRIC_ROWS = (
    ("accuracy", "Accuracy"), ("pos_f1", "Pos.F1"), ("macro_f1", "Macro F1"),
    ("macro_f1_interval", "Macro F1, 95 % bootstrap interval (cases resampled)"), ("mcc", "MCC"),
    ("mcc_interval", "MCC, 95 % bootstrap interval"),
    ("recall", "Localization recall (mean per case)"), ("area_reduction", "Area reduction (mean per case)"),
    ("success_auc", "Success-rate AUC (mean per case)"), ("deposits_found", "Deposits found"),
    ("deposits", "Deposits"), ("valid_share", "Verifier accepted a chain (share)"),
    ("seconds_per_case", "Seconds per case"), ("model_calls_per_case", "Model calls per case"),
    ("tokens_per_case", "Tokens per case"), ("errors", "Cases with an error"), ("failed", "Cases answered Failed"),
)


def per_kind(outcomes, kinds: dict) -> list[tuple]:
    """(kind, cases, correct, mean recall) per generator kind."""
    rows = []
    for kind in dict.fromkeys(kinds.values()):
        mine = [o for o in outcomes if kinds.get(o.case_id) == kind]
        recalls = [o.recall for o in mine if o.recall is not None]
        rows.append((kind, len(mine), sum(o.correct == "yes" for o in mine),
                     sum(recalls) / len(recalls) if recalls else None))
    return rows


def machine() -> str:
    """CPU model and core count of this machine, for the record beside the figures."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}"


def write_outputs(engine: dict, baselines: dict, kinds_rows, elapsed: float) -> None:
    names = ["offline engine"] + list(baselines)
    with open(BENCH_DIR / "suite_metrics.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["metric"] + names)
        for key, _ in METRIC_ROWS:
            writer.writerow([key] + [fmt(engine.get(key))] + [fmt(b.get(key)) for b in baselines.values()])
    lines = [
        f"Generator the reasoner was developed on (scripts/synthetic_cases.py): {engine['cases']} cases "
        f"(seed {SUITE_SEED}), offline back-end, K = 3; "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; total {elapsed:.0f} s; {machine()}.",
        "",
        "| metric | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for key, label in METRIC_ROWS:
        values = [fmt(engine.get(key))] + [fmt(b.get(key)) if key in b else "-" for b in baselines.values()]
        lines.append(f"| {label} | " + " | ".join(values) + " |")
    lines += ["", "| kind | cases | correct | mean recall |", "|---|---|---|---|"]
    lines += [f"| {k} | {n} | {c} | {fmt(r)} |" for k, n, c, r in kinds_rows]
    (BENCH_DIR / "suite_metrics.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


def great_basin(settings) -> dict:
    from lodestar.models import run_analysis
    from lodestar.plugin.runs.batch import run_batch

    out = RUNS_DIR / "great-basin"
    result = run_batch([GREAT_BASIN / "case.json"], out, settings, 3, analyse=run_analysis, table_name="results.csv")
    row = result.outcomes[0]
    from lodestar.plugin.vector_io import read_vector

    known = len(read_vector(GREAT_BASIN / "TrainGP.gpkg"))
    figures = {"known_deposits": known, "deposits": row.deposits, "deposits_found": row.deposits_found,
               "recall": row.recall, "area_reduction": row.area_reduction,
               "area_selected": None if row.area_reduction is None else 1 - row.area_reduction,
               "success_auc": row.success_auc, "seconds": row.seconds, "answer": row.answer, "error": row.error}
    with open(BENCH_DIR / "great_basin.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(list(figures))
        writer.writerow([fmt(v) for v in figures.values()])
    text = (f"Great Basin (real, USGS DDS-41), 'Where are Carlin-type gold deposits likely?': "
            f"{fmt(row.deposits_found)} of the {fmt(row.deposits)} deposits in the analysed area ({known} known) "
            f"inside the prospectivity polygons "
            f"(recall {fmt(row.recall)}) covering {fmt(figures['area_selected'])} of the study area "
            f"(area reduction {fmt(row.area_reduction)}); success-rate AUC {fmt(row.success_auc)}; "
            f"{row.seconds:.1f} s." + (f" Error: {row.error}" if row.error else ""))
    (BENCH_DIR / "great_basin.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    return figures


def main(argv=None) -> dict:
    _package()
    import synthetic_cases
    from readme_figures import write_figures

    from lodestar.models import run_analysis
    from lodestar.plugin.analysis import BackendSettings
    from lodestar.plugin.progress import Progress
    from lodestar.plugin.runs.batch import run_batch, summarize

    start = time.perf_counter()
    if SUITE_DIR.exists():
        shutil.rmtree(SUITE_DIR)
    if RUNS_DIR.exists():
        shutil.rmtree(RUNS_DIR)
    paths = synthetic_cases.make_suite(SUITE_DIR, n=SUITE_SIZE, seed=SUITE_SEED, size=CASE_SIZE)
    print(f"suite: {len(paths)} cases generated in {time.perf_counter() - start:.1f} s", flush=True)
    with open(SUITE_DIR / "suite.csv", newline="", encoding="utf-8") as fh:
        kinds = {row["id"]: row["kind"] for row in csv.DictReader(fh)}
    settings = BackendSettings()
    progress = Progress(on_log=lambda m: print(m, flush=True) if m.startswith("    answer") else None)
    result = run_batch(paths, RUNS_DIR / "suite", settings, 3, progress, analyse=run_analysis)
    shutil.copyfile(result.table, BENCH_DIR / "suite_results.csv")
    baselines = {
        "always yes": summarize(baseline_rows(paths, lambda case: case.positive_choice), paths),
        "any anomaly": summarize(baseline_rows(paths, any_anomaly_answer), paths),
    }
    for figures in baselines.values():
        for key in ("seconds_per_case", "model_calls_per_case", "tokens_per_case", "valid_share", "recall",
                    "area_reduction", "success_auc", "deposits", "deposits_found", "localized_cases"):
            figures.pop(key, None)
    elapsed = time.perf_counter() - start
    write_outputs(result.summary, baselines, per_kind(result.outcomes, kinds), elapsed)
    if baselines["any anomaly"].get("mcc") is not None and result.summary.get("mcc") is not None:
        print(f"MCC: engine {result.summary['mcc']:.3f} vs any-anomaly baseline "
              f"{baselines['any anomaly']['mcc']:.3f}")
    basin = great_basin(settings)
    (BENCH_DIR / "suite_summary.json").write_text(
        json.dumps({"suite": result.summary, "baselines": baselines, "great_basin": basin}, indent=1, default=str)
        + "\n", encoding="utf-8")
    write_figures("suite", {}, {"suite.macro_f1": result.summary.get("macro_f1")})
    print(f"tables: {BENCH_DIR / 'suite_metrics.md'}, {BENCH_DIR / 'suite_results.csv'}, "
          f"{BENCH_DIR / 'great_basin.md'}")
    return result.summary


if __name__ == "__main__":
    main(sys.argv[1:])
