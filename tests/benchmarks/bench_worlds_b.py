"""Benchmark: the offline back-end on the independent generator (`scripts/worlds_b.py`), one the reasoner
was NOT developed on.

Generates 60 cases (seed 2026, held out: never opened while developing; seed 777 was used to diagnose
failures of the verifier's rules) into build/bench/worlds_b, runs each through the engine with
`plugin.runs.batch.run_batch` (offline back-end, K = 3 rounds), and scores them with the same functions and
baselines as the suite bench (`bench_suite`: `plugin.runs.batch.summarize` -> `classification_metrics`,
"always yes", "any anomaly"), measured in the same run. Writes:

  build/bench/worlds_b_results.csv   one row per case
  build/bench/worlds_b_metrics.csv   the figures, engine and baselines
  build/bench/worlds_b_metrics.md    the table, with the per-kind breakdown

Tune on `scripts/synthetic_cases.py`, report here. Run: `.venv/bin/python tests/benchmarks/run_all.py worlds_b`
(LODESTAR_WORLDS_B_CASES / LODESTAR_WORLDS_B_SEED change the suite).
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BENCH_DIR = ROOT / "build" / "bench"
WORLDS_DIR = BENCH_DIR / "worlds_b"
RUNS_DIR = BENCH_DIR / "runs_worlds_b"
CASES = int(os.environ.get("LODESTAR_WORLDS_B_CASES", "60"))
SEED = int(os.environ.get("LODESTAR_WORLDS_B_SEED", "2026"))
LABEL = ("independent generator (worlds_b): the reasoner was NOT developed on it"
         + (", and this seed was never opened while developing" if SEED == 2026 else
            f"; seed {SEED} was used to diagnose the verifier's failures" if SEED in (777, 4242) else ""))

if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
import bench_suite as suite  # noqa: E402  (scoring, baselines and table rows shared with the suite bench)


def kind_rows(outcomes, kinds: dict) -> list[tuple]:
    """(kind, cases, correct, answered yes, mean recall) per generator kind."""
    rows = []
    for kind, n, correct, recall in suite.per_kind(outcomes, kinds):
        yes = sum(1 for o in outcomes if kinds.get(o.case_id) == kind and o.answer == "A")
        rows.append((kind, n, correct, yes, recall))
    return rows


def write_outputs(engine: dict, baselines: dict, kinds_rows, elapsed: float) -> str:
    names = ["offline engine"] + list(baselines)
    with open(BENCH_DIR / "worlds_b_metrics.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["metric"] + names)
        for key, _ in suite.METRIC_ROWS:
            writer.writerow([key] + [suite.fmt(engine.get(key))] + [suite.fmt(b.get(key)) for b in baselines.values()])
    lines = [
        f"{LABEL[0].upper()}{LABEL[1:]}. {engine['cases']} cases (seed {SEED}, scripts/worlds_b.py), offline back-end, "
        f"K = 3; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; total {elapsed:.0f} s; {suite.machine()}.",
        "",
        "| metric | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for key, label in suite.METRIC_ROWS:
        values = [suite.fmt(engine.get(key))] + [suite.fmt(b.get(key)) if key in b else "-" for b in baselines.values()]
        lines.append(f"| {label} | " + " | ".join(values) + " |")
    lines += ["", "| kind | cases | correct | answered Yes | mean recall |", "|---|---|---|---|---|"]
    lines += [f"| {k} | {n} | {c} | {y} | {suite.fmt(r)} |" for k, n, c, y, r in kinds_rows]
    text = "\n".join(lines) + "\n"
    (BENCH_DIR / "worlds_b_metrics.md").write_text(text, encoding="utf-8")
    print(text, end="")
    return text


def main(argv=None) -> dict:
    suite._package()
    import worlds_b

    from lodestar.models import run_analysis
    from lodestar.plugin.analysis import BackendSettings
    from lodestar.plugin.progress import Progress
    from lodestar.plugin.runs.batch import run_batch, summarize

    start = time.perf_counter()
    for folder in (WORLDS_DIR, RUNS_DIR):
        if folder.exists():
            shutil.rmtree(folder)
    paths = [folder / "case.json" for folder in worlds_b.generate(WORLDS_DIR, count=CASES, seed=SEED)]
    print(f"worlds_b: {len(paths)} cases generated in {time.perf_counter() - start:.1f} s", flush=True)
    with open(WORLDS_DIR / "suite.csv", newline="", encoding="utf-8") as fh:
        kinds = {row["id"]: row["kind"] for row in csv.DictReader(fh)}
    progress = Progress(on_log=lambda m: print(m, flush=True) if m.startswith("    answer") else None)
    result = run_batch(paths, RUNS_DIR, BackendSettings(), 3, progress, analyse=run_analysis)
    shutil.copyfile(result.table, BENCH_DIR / "worlds_b_results.csv")
    baselines = {
        "always yes": summarize(suite.baseline_rows(paths, lambda case: case.positive_choice), paths),
        "any anomaly": summarize(suite.baseline_rows(paths, suite.any_anomaly_answer), paths),
    }
    for figures in baselines.values():  # a baseline neither localizes nor runs a model
        for key in ("seconds_per_case", "model_calls_per_case", "tokens_per_case", "valid_share", "recall",
                    "area_reduction", "success_auc", "deposits", "deposits_found", "localized_cases"):
            figures.pop(key, None)
    write_outputs(result.summary, baselines, kind_rows(result.outcomes, kinds), time.perf_counter() - start)
    (BENCH_DIR / "worlds_b_summary.json").write_text(
        json.dumps({"label": LABEL, "seed": SEED, "engine": result.summary, "baselines": baselines}, indent=1,
                   default=str) + "\n", encoding="utf-8")
    print(f"tables: {BENCH_DIR / 'worlds_b_metrics.md'}, {BENCH_DIR / 'worlds_b_results.csv'}")
    return result.summary


if __name__ == "__main__":
    main(sys.argv[1:])
