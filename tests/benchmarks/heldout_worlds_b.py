"""The offline back-end on every held-out seed of the independent generator (`scripts/worlds_b.py`), pooled.

Sixty cases of one seed leave macro F1 within about +-0.07, so whether the reasoner meets a target on worlds it
was not developed on is judged on many seeds together. HELDOUT lists the seeds whose cases were never opened
while developing, each with how it has been used (docs/worlds_b_log.md); the diagnosis seeds, opened to find the
verifier's failures (777, 4242, 1111 to 6666 in steps of 1111, 9001 to 9006), are not among them, though any seed
given on the command line is run. Each seed's 60 cases are generated into build/bench/heldout, run with
`plugin.runs.batch.run_batch` (offline back-end, K = 3: the settings of `bench_worlds_b`), and scored per seed and
pooled, with bootstrap intervals (`plugin.runs.batch.summarize`). Writes:

  build/bench/worlds_b_heldout.csv   one row per seed and one for the pool
  build/bench/worlds_b_heldout.md    the table, with the pooled per-kind breakdown
  build/bench/worlds_b_heldout.json  the pooled figures; the README's marked ones are rewritten from it

Not part of `make bench` (about 2-3 s a case on 2 cores: the 2,400 cases of the 40 seeds take about 100 minutes):
`make bench-heldout`, or `.venv/bin/python tests/benchmarks/heldout_worlds_b.py [seed ...]`; LODESTAR_BENCH_WORKERS
sets the processes (default: one per core).
"""
from __future__ import annotations

import csv
import os
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BENCH_DIR = ROOT / "build" / "bench"
OUT_DIR = BENCH_DIR / "heldout"
CASES = 60
HELDOUT = {
    2026: "the headline seed of `make bench`; run after the changes of several sessions, one decision used it",
    5150: "run after the changes of several sessions",
    8080: "run after the changes of the eleventh to thirteenth and the sixteenth sessions, one decision used it",
    **{seed: "first run in the fourteenth session, with its rule set beforehand; run again in the fifteenth and "
             "sixteenth" for seed in (1357, 2468, 3579, 4680, 5791, 6802, 7913, 8024, 9135, 1246)},
    **{seed: "first run in the fifteenth session, with its rule set beforehand; run again in the sixteenth"
       for seed in (3141, 2718, 1618, 1414, 1732, 2236, 2646, 3317, 3606, 4123)},
    **{seed: "first run in the sixteenth session, with its rule set beforehand"
       for seed in (1123, 5813, 2134, 3455, 8914)},
    **{seed: "first run in the session of 2026-11-29, before and after the offline reasoner became a package "
             "(identical answers)" for seed in (1729, 6174, 8128)},
    4096: "first run in the session of 2026-11-29, before and after the offline reasoner became a package (identical "
          "answers); again in the fifth session of that day, before and after the stood-in route was removed",
    **{seed: "first run in the third session of 2026-11-29, before (c4ea4ac) and after the one significance level "
             "with the layers' dependence counted (3397c60), and again after review fixes (0152904)"
       for seed in (2719, 3142, 5772, 6283)},
    **{seed: "first run in the fifth session of 2026-11-29, before (46c4c7c) and after the stood-in route was removed"
       for seed in (1337, 2448, 3559, 4661)},
}
"""Held-out seeds and how each has been used (docs/worlds_b_log.md)."""

for entry in (str(HERE), str(HERE.parent)):
    if entry not in sys.path:
        sys.path.insert(0, entry)
import conftest  # noqa: E402,F401  (links the checkout as the `lodestar` package before anything imports it)
from readme_figures import refresh_documents, write_figures  # noqa: E402

# isort: split
import bench_suite as suite  # noqa: E402  (package link, number format, machine line)


def run_seed(seed: int) -> tuple[int, list, list, dict]:
    """Generate and run one seed's cases: (seed, outcomes, case paths, case id -> kind)."""
    suite._package()
    import worlds_b

    from lodestar.models import run_analysis
    from lodestar.plugin.analysis import BackendSettings
    from lodestar.plugin.runs.batch import run_batch

    cases, runs = OUT_DIR / f"worlds_b_{seed}", OUT_DIR / f"runs_{seed}"
    for folder in (cases, runs):
        if folder.exists():
            shutil.rmtree(folder)
    paths = [folder / "case.json" for folder in worlds_b.generate(cases, count=CASES, seed=seed)]
    with open(cases / "suite.csv", newline="", encoding="utf-8") as fh:
        kinds = {row["id"]: row["kind"] for row in csv.DictReader(fh)}
    result = run_batch(paths, runs, BackendSettings(), 3, analyse=run_analysis)
    print(f"seed {seed}: macro F1 {result.summary.get('macro_f1', 0):.3f}, MCC {result.summary.get('mcc', 0):.3f}",
          flush=True)
    return seed, result.outcomes, paths, kinds


COLUMNS = (("cases", "cases"), ("right", "right"), ("fn", "missed positives"), ("fp", "false Yes"),
           ("macro_f1", "macro F1"), ("macro_f1_interval", "macro F1, 95 % interval"), ("mcc", "MCC"),
           ("mcc_interval", "MCC, 95 % interval"), ("recall", "localization recall"),
           ("area_reduction", "area reduction"))


def table_row(name: str, figures: dict) -> list[str]:
    figures = dict(figures, right=figures.get("tp", 0) + figures.get("tn", 0))
    return [name] + [suite.fmt(figures.get(key)) for key, _ in COLUMNS]


def main(argv=None) -> dict:
    suite._package()
    from lodestar.plugin.runs.batch import summarize

    seeds = [int(a) for a in (argv or [])] or list(HELDOUT)
    workers = int(os.environ.get("LODESTAR_BENCH_WORKERS", "0")) or os.cpu_count() or 1
    start = time.perf_counter()
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    workers = min(workers, len(seeds))
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        done = {seed: (outcomes, paths, kinds) for seed, outcomes, paths, kinds in pool.map(run_seed, seeds)}
    rows, pooled, pooled_paths, pooled_kinds = [], [], [], {}
    for seed in seeds:
        outcomes, paths, kinds = done[seed]
        rows.append(table_row(str(seed), summarize(outcomes, paths)))
        pooled += outcomes
        pooled_paths += paths
        pooled_kinds.update(kinds)
    figures = summarize(pooled, pooled_paths)
    rows.append(table_row(f"pooled ({len(seeds)} seed{'s' if len(seeds) > 1 else ''})", figures))
    with open(BENCH_DIR / "worlds_b_heldout.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["seed"] + [key for key, _ in COLUMNS])
        writer.writerows(rows)
    lines = [
        f"Independent generator (worlds_b), held-out seeds only: {len(pooled)} cases ({CASES} per seed), offline "
        f"back-end, K = 3; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; total "
        f"{time.perf_counter() - start:.0f} s in {workers} process{'es' if workers > 1 else ''}; {suite.machine()}.",
        "",
        "| seed | " + " | ".join(label for _, label in COLUMNS) + " |",
        "|---|" + "---|" * len(COLUMNS),
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    lines += ["", "| kind | cases | correct | mean recall |", "|---|---|---|---|"]
    lines += [f"| {k} | {n} | {c} | {suite.fmt(r)} |" for k, n, c, r in suite.per_kind(pooled, pooled_kinds)]
    lines += ["", "How each seed has been used:"] + [f"- {seed}: {HELDOUT.get(seed, 'not a listed held-out seed')}"
                                                    for seed in seeds]
    text = "\n".join(lines) + "\n"
    (BENCH_DIR / "worlds_b_heldout.md").write_text(text, encoding="utf-8")
    print(text, end="")
    always_yes = summarize(suite.baseline_rows(pooled_paths, lambda case: case.positive_choice), pooled_paths)
    quoted = {f"worlds_b_heldout.{key}": figures.get(key) for key in ("cases", "macro_f1", "mcc", "recall",
                                                                      "area_reduction")}
    quoted.update({"worlds_b_heldout.seeds": len(seeds), "worlds_b_heldout.always_yes.macro_f1":
                   always_yes.get("macro_f1")})
    write_figures("worlds_b_heldout", {"pooled": figures}, quoted)
    for document, changed in refresh_documents("worlds_b_heldout").items():
        print(f"{document}: " + ", ".join(f"{name} {was} -> {now}" for name, (was, now) in changed.items()))
    return figures


if __name__ == "__main__":
    main(sys.argv[1:])
