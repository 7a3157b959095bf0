"""Batch runs: every case of a folder through the engine, one after another, into one results table.

Used by `lodestar:analyze_cases` and by the benchmark. Each case writes its outputs into
`<output folder>/<case id>/`; a case that fails (bad case.json, missing layer, engine error) is
recorded with its error and the batch goes on. Cancellation stops the batch.

With a Dask scheduler address (`scheduler`, e.g. tcp://host:8786) the cases go to that cluster, one
task per case (plugin.cluster): the table keeps the cases' order and says which worker ran each; a
case whose worker dies is retried once elsewhere, then recorded as failed with the reason. Empty runs
the cases here, one after another.

Scoring (plugin.evaluation.classification_metrics): answers are compared as yes / no (each case's
own 'yes' letter); an answer that is not one of the choices ("Failed", or an error) counts as wrong.
Macro F1 and MCC come with 95 % bootstrap intervals over the cases (`macro_f1_interval`, `mcc_interval`).
"""
from __future__ import annotations

import json
import math
import re
import time
import traceback
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Callable

from ..analysis import AnalysisRequest, BackendSettings
from ..csv_table import write_csv
from ..errors import Cancelled, LodestarError
from ..evaluation import answer_intervals, classification_metrics
from ..files import write_text_atomic
from ..progress import SILENT, Progress
from ..request.case import Case, read_case

ERROR = "Error"


@dataclass
class CaseOutcome:
    """One row of the batch table."""

    case_id: str
    answer: str = ""
    answer_text: str = ""
    truth: str = ""
    correct: str = ""  # "yes" / "no" / "" (no ground truth)
    valid: str = ""
    voted: str = ""
    rounds: int | None = None
    seconds: float = 0.0
    model_calls: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    tokens: int | None = None
    deposits: int | None = None
    deposits_found: int | None = None
    recall: float | None = None
    area_reduction: float | None = None
    success_auc: float | None = None
    calibrated_with: str = ""  # the model fitted on the deposits ('' knowledge-driven)
    fit_used: str = ""  # "yes" / "no" (its out-of-fold AUC did not beat the baseline's) / "" (no fit)
    cv_auc: float | None = None  # the fitted model's out-of-fold AUC
    knowledge_auc: float | None = None  # the knowledge-driven surface's AUC (no deposit data)
    baseline_auc: float | None = None  # the equal-weight mean of the layers' ranks (no deposit data)
    prospectivity_polygons: int | None = None
    timings: str = ""  # per role seconds, "planner=0.1; executor=1.2; ..."
    output_dir: str = ""
    case_path: str = ""
    worker: str = ""  # the Dask worker that ran the case ("" when run here)
    error: str = ""


BATCH_COLUMNS = tuple(f.name for f in fields(CaseOutcome))


@dataclass
class BatchResult:
    outcomes: list
    table: Path
    summary: dict


def find_cases(folder) -> list[Path]:
    """The case.json files of a folder: the folder itself if it is a case, else its subfolders (sorted,
    searched two levels deep)."""
    folder = Path(folder)
    if folder.is_file():
        return [folder]
    if not folder.is_dir():
        raise LodestarError(f"Case folder not found: {folder}. Choose a folder that holds case folders.")
    if (folder / "case.json").exists():
        return [folder / "case.json"]
    found = sorted(folder.glob("*/case.json")) or sorted(folder.glob("*/*/case.json"))
    if not found:
        raise LodestarError(f"No case.json found in {folder} or its subfolders; each case is a folder with a "
                            "case.json (lodestar-case/1).")
    return found


def safe_name(text: str) -> str:
    """A file-system-safe folder name for a case id."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._")
    return name or "case"


def _usage_totals(usage: dict) -> tuple[int, int, int, str]:
    calls = prompt = completion = 0
    timings = []
    for role, item in sorted((usage or {}).items()):
        if not isinstance(item, dict):
            continue
        calls += int(item.get("calls", 0) or 0)
        prompt += int(item.get("prompt_tokens", 0) or 0)
        completion += int(item.get("completion_tokens", 0) or 0)
        if item.get("seconds") is not None:
            timings.append(f"{role}={float(item['seconds']):.2f}")
    return calls, prompt, completion, "; ".join(timings)


def _number(metrics: dict, *keys):
    for key in keys:
        value = metrics.get(key)
        if isinstance(value, (int, float)) and not (isinstance(value, float) and math.isnan(value)):
            return value
    return None


def analyse_case(case: Case, case_path: Path, output_dir: Path, settings: BackendSettings, max_rounds: int,
                 progress: Progress, analyse: Callable, localization: dict | None = None,
                 surface: dict | None = None) -> CaseOutcome:
    """Run one read case and fill its table row (errors of the engine propagate to the caller).
    `surface`: the favourability surface's AnalysisRequest fields ("calibrate", "area_share", "max_target_km2",
    "cross_validation"; the request's defaults when absent)."""
    row = CaseOutcome(case_id=case.id, truth=case.answer or "", case_path=str(case_path),
                      output_dir=str(output_dir))
    request = AnalysisRequest(layers=case.layers, question=case.question, output_dir=output_dir,
                              choices=dict(case.choices), settings=settings, max_rounds=max_rounds,
                              case_id=case.id, deposits=case.deposits, localization=localization,
                              favourable_units=dict(case.favourable_units), **(surface or {}))
    start = time.perf_counter()
    result = analyse(request, progress)
    row.seconds = round(time.perf_counter() - start, 3)
    row.answer = result.answer
    row.answer_text = result.answer_text
    row.valid = "yes" if result.valid else "no"
    row.voted = "yes" if result.voted else "no"
    row.rounds = int(result.rounds)
    row.model_calls, row.prompt_tokens, row.completion_tokens, row.timings = _usage_totals(result.usage)
    row.tokens = row.prompt_tokens + row.completion_tokens
    row.prospectivity_polygons = int(len(result.prospectivity)) if result.prospectivity is not None else 0
    metrics = result.metrics or {}
    row.recall = _number(metrics, "recall")
    row.area_reduction = _number(metrics, "area_reduction")
    row.success_auc = _number(metrics, "auc", "success_auc")
    deposits = _number(metrics, "inside", "deposits")  # deposits inside the analysed area
    found = _number(metrics, "found")
    row.deposits = int(deposits) if deposits is not None else None
    row.deposits_found = int(found) if found is not None else None
    figures = result.validation or {}
    row.calibrated_with = figures.get("method") or ""
    row.fit_used = ("no" if figures.get("refused") else "yes") if row.calibrated_with else ""
    row.cv_auc = (figures.get("cv") or {}).get("auc")
    row.knowledge_auc = (figures.get("knowledge") or {}).get("auc")
    row.baseline_auc = (figures.get("equal_weight") or {}).get("auc")
    if row.truth:
        row.correct = "yes" if row.answer == row.truth else "no"
    return row


def run_case_file(path: Path, case_out: Path, settings: BackendSettings, max_rounds: int, progress: Progress,
                  analyse: Callable, localization: dict | None = None, surface: dict | None = None) -> CaseOutcome:
    """Read and run one case.json into `case_out` and return its row; any failure but a cancel becomes an error
    row (with error.txt beside the outputs for an unexpected one). The unit of work of a batch, here or on a
    cluster worker."""
    path, case_out = Path(path), Path(case_out)
    label = path.parent.name if path.name == "case.json" else path.stem
    try:
        case = read_case(path)
    except LodestarError as exc:
        return CaseOutcome(case_id=label, answer=ERROR, case_path=str(path), error=str(exc))
    start = time.perf_counter()
    try:
        return analyse_case(case, path, case_out, settings, max_rounds, progress, analyse, localization, surface)
    except Cancelled:
        raise
    except Exception as exc:  # one broken case must not stop the batch
        detail = str(exc) if isinstance(exc, LodestarError) else f"{type(exc).__name__}: {exc}"
        row = CaseOutcome(case_id=case.id, answer=ERROR, truth=case.answer or "", case_path=str(path),
                          output_dir=str(case_out), error=detail, seconds=round(time.perf_counter() - start, 3))
        if case.answer:
            row.correct = "no"
        if not isinstance(exc, LodestarError):
            case_out.mkdir(parents=True, exist_ok=True)
            (case_out / "error.txt").write_text(traceback.format_exc(), encoding="utf-8")
        return row


def failed_row(path: Path, case_out: Path, error: str, worker: str = "") -> CaseOutcome:
    """The error row of a case that could not be run (its id and ground truth from its case.json when readable)."""
    path = Path(path)
    row = CaseOutcome(case_id=path.parent.name if path.name == "case.json" else path.stem, answer=ERROR,
                      case_path=str(path), output_dir=str(case_out), worker=worker, error=error)
    try:
        case = read_case(path)
    except LodestarError:
        return row
    row.case_id, row.truth = case.id, case.answer or ""
    row.correct = "no" if case.answer else ""
    return row


def plan_cases(paths: list, output_dir: Path) -> list[tuple[Path, Path, CaseOutcome | None, str]]:
    """(case.json, its output folder, error row or None, case id) per case in order: folders named after the case ids,
    made unique; a case.json that cannot be read has its error row already."""
    planned, used = [], set()
    for path in paths:
        label = path.parent.name if path.name == "case.json" else path.stem
        row = None
        try:
            label = read_case(path).id
        except LodestarError as exc:
            row = CaseOutcome(case_id=label, answer=ERROR, case_path=str(path), error=str(exc))
        name = safe_name(label)
        while name in used:
            name += "_"
        used.add(name)
        planned.append((path, output_dir / name, row, label))
    return planned


def run_batch(source, output_dir, settings: BackendSettings | None = None, max_rounds: int = 3,
              progress: Progress = SILENT, *, analyse: Callable, localization: dict | None = None,
              table_name: str = "results.csv", surface: dict | None = None, scheduler: str = "") -> BatchResult:
    """Run every case of `source` (a folder of cases, one case folder, or a list of case.json paths) with
    `analyse(request, progress) -> AnalysisResult` (`models.run_analysis`; a module-level function, so that a
    cluster worker can import it), and write `<output_dir>/<table_name>` and the summary figures beside it
    (`<table stem>_summary.json`); returns the rows and the summary. `surface`: the calibration method and target
    area share of every case's favourability surface (a case without deposits cannot be calibrated and is recorded
    as an error).
    `scheduler`: a Dask scheduler address to send the cases to (one task per case; the case folders and the
    output folder must be at the same paths on every worker); empty runs them here, one after another."""
    paths = [Path(p) for p in source] if isinstance(source, (list, tuple)) else find_cases(source)
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    settings = settings or BackendSettings()
    planned = plan_cases(paths, output_dir)
    if (scheduler or "").strip():
        outcomes = _run_on_cluster(scheduler.strip(), planned, settings, max_rounds, progress, analyse, localization,
                                   surface)
    else:
        outcomes = []
        for i, (path, case_out, row, label) in enumerate(planned):
            progress.check()
            step = progress.scaled(100.0 * i / len(planned), 100.0 * (i + 1) / len(planned))
            if row is None:
                progress.log(f"[{i + 1}/{len(planned)}] {label}")
                row = run_case_file(path, case_out, settings, max_rounds, step, analyse, localization, surface)
            log_outcome(progress, row)
            outcomes.append(row)
            step.set(100)
    table = write_table(outcomes, output_dir / table_name)
    summary = summarize(outcomes, paths)
    write_text_atomic(table.with_name(table.stem + "_summary.json"), json.dumps(summary, indent=1) + "\n")
    return BatchResult(outcomes, table, summary)


def _cluster_case(path: str, case_out: str, settings, max_rounds, analyse, localization, surface) -> CaseOutcome:
    """One case as a cluster task (its progress stays on the worker)."""
    return run_case_file(Path(path), Path(case_out), settings, max_rounds, SILENT, analyse, localization, surface)


def _cluster_gave_up(workers: list, worker: str, path: str, case_out: str, *_) -> CaseOutcome:
    return failed_row(Path(path), Path(case_out), f"Failed: the worker running it died ({', '.join(workers)}), "
                                                  "after one retry elsewhere.", worker)


def _run_on_cluster(address: str, planned: list, settings, max_rounds, progress: Progress, analyse, localization,
                    surface) -> list:
    """The rows of `planned` run on the Dask cluster at `address`, one task per case, in case order."""
    from ..cluster import map_on_cluster

    rows = [row for _, _, row, _ in planned]
    done = [sum(row is not None for row in rows)]

    def finished(index: int, row: CaseOutcome, worker: str) -> None:
        row.worker = row.worker or worker
        rows[index] = row
        done[0] += 1
        progress.log(f"[{done[0]}/{len(rows)}] {row.case_id}")
        log_outcome(progress, row)
        progress.set(100.0 * done[0] / len(rows))

    def broke(index: int, exc: BaseException) -> None:
        path, case_out, _, _ = planned[index]
        finished(index, failed_row(path, case_out, f"Failed on the cluster: {type(exc).__name__}: {exc}"), "")

    calls = [(i, (str(path), str(case_out), settings, max_rounds, analyse, localization, surface))
             for i, (path, case_out, row, _) in enumerate(planned) if row is None]
    map_on_cluster(address, _cluster_case, _cluster_gave_up, calls, progress, finished, broke, label="case")
    return rows


def log_outcome(progress: Progress, row: CaseOutcome) -> None:
    progress.log(f"    answer {row.answer}" + (f" (truth {row.truth})" if row.truth else "")
                 + (f" on {row.worker}" if row.worker else "") + (f"; error: {row.error}" if row.error else ""))


def write_table(outcomes: list[CaseOutcome], path) -> Path:
    """Write the rows as CSV (columns BATCH_COLUMNS), replacing the file only when complete; a case id, answer or
    error that a spreadsheet would run as a formula is written as text (`csv_table.safe_cell`)."""
    return write_csv(path, BATCH_COLUMNS, [{k: ("" if v is None else v) for k, v in asdict(row).items()}
                                           for row in outcomes])


def _mean(values) -> float | None:
    values = [float(v) for v in values if v is not None]
    return sum(values) / len(values) if values else None


def answer_labels(outcomes: list[CaseOutcome], positive: dict | None = None) -> tuple[list[str], list[str]]:
    """(truth, prediction) as "yes" / "no" for the rows with ground truth; `positive` maps a case id to
    its 'yes' letter (default "A"; None for a question that is not yes / no, whose row is not scored).
    An answer outside the choices ("Failed", "Error") is kept as is, and the evaluation counts it as wrong."""
    truth, pred = [], []
    for row in outcomes:
        yes = (positive or {}).get(row.case_id, "A")
        if not row.truth or yes is None:
            continue
        truth.append("yes" if row.truth == yes else "no")
        if row.answer in (ERROR, "Failed", ""):
            pred.append(row.answer or ERROR)
        else:
            pred.append("yes" if row.answer == yes else "no")
    return truth, pred


def summarize(outcomes: list[CaseOutcome], paths=None) -> dict:
    """Batch figures: counts, classification metrics over the rows with ground truth, mean recall,
    area reduction and success-rate AUC over the rows with deposits, seconds per case, calls, tokens."""
    positive = {}
    for path in paths or []:
        try:
            case = read_case(path)
        except LodestarError:
            continue
        positive[case.id] = case.positive_choice
    truth, pred = answer_labels(outcomes, positive)
    figures: dict[str, object] = {"cases": len(outcomes), "errors": sum(1 for r in outcomes if r.answer == ERROR),
               "failed": sum(1 for r in outcomes if r.answer == "Failed"), "scored": len(truth)}
    if truth:
        scores = classification_metrics(truth, pred, positive="yes", labels=["yes", "no"])
        figures.update({key: scores[key] for key in ("accuracy", "pos_f1", "macro_f1", "mcc", "tp", "tn", "fp",
                                                     "fn")})
        intervals = answer_intervals(truth, pred, positive="yes", labels=["yes", "no"])
        figures.update({f"{key}_interval": list(bounds) for key, bounds in intervals.items()})
    located = [r for r in outcomes if r.recall is not None]
    figures["localized_cases"] = len(located)
    figures["recall"] = _mean(r.recall for r in located)
    figures["area_reduction"] = _mean(r.area_reduction for r in located)
    figures["success_auc"] = _mean(r.success_auc for r in located)
    found = sum(r.deposits_found or 0 for r in located)
    total = sum(r.deposits or 0 for r in located)
    figures["deposits_found"] = found
    figures["deposits"] = total
    ran = [r for r in outcomes if r.answer != ERROR]
    figures["seconds_per_case"] = _mean(r.seconds for r in ran)
    figures["model_calls_per_case"] = _mean(r.model_calls for r in ran)
    figures["tokens_per_case"] = _mean(r.tokens for r in ran)
    figures["valid_share"] = _mean(1.0 if r.valid == "yes" else 0.0 for r in ran)
    return figures
