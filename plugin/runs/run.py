"""`run_analysis`: one question over a set of layers, from the request to the files and the result.

The run is a chain of stages, each a function of the records the stages before it made: `_ask` (the request; a
replay's record read into its whole request) -> `_load` (the layers on one analysis grid, the known deposits, the
deposit models, the scenes' index rasters, the loop over its workspace) -> `_reason` (the STA-CoT loop, SAM when
asked, the spatial graph with the model's localization parameters, the evidence chosen for the map) -> `_map` (the
favourability surface and its targets, judged by the callable it is handed, scored against the known deposits) ->
`_report` (zones, graph nodes and edges, targets as GeoPackages, surfaces, the run record and the HTML report in
`request.output_dir`).

Live events go to `on_event` as dicts with a `kind`: plan, controller, step, skipped, verdict, vote,
usage, localization, done. `progress.check()` runs between every model call and tool call.
"""
from __future__ import annotations

import datetime as _dt
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..analysis import MAX_LAYERS, AnalysisRequest, AnalysisResult, BackendSettings
from ..errors import Cancelled, LodestarError
from ..favourability.model_file import save_model
from ..favourability.outputs import write_surface, write_weights_csv
from ..favourability.plan_file import plan_from_dict
from ..files import OutputSet
from ..judge.target_table import judge_targets, where_answer
from ..load import scenes
from ..map.prospectivity import ProspectivityMap, map_prospectivity
from ..progress import SILENT, Progress
from ..raster_io import RasterSet, crs_label
from ..reason.contract import FAILED, INSUFFICIENT, Backends, Roles
from ..reason.deposit_models import legend_units, ranked_models
from ..reason.evidence_choice import EvidenceChoice, chosen_evidence
from ..reason.knowledge import load_knowledge, model_by_id
from ..reason.loop import Engine, Outcome
from ..reason.offline_questions import offline_question_problem
from ..reason.questions import asks_where, positive_choice
from ..reason.toolbox import draw_evidence, jsonable
from ..reason.workspace import Workspace
from ..report.report import write_report
from ..report.report_prospectivity import method_label
from ..request import record as records
from ..vector_io import split_source, write_vector
from ..warning_summary import summarised_warnings
from ..zones import zones_frame

MAX_QUESTION_CHARS = 4000
"""The longest question a run takes (a question is words, not data: a 10 MB question once became one
request of 2.6 M prompt tokens)."""
OUTPUT_FILES = {
    "zones": "zones.gpkg",
    "nodes": "nodes.gpkg",
    "edges": "edges.gpkg",
    "prospectivity": "prospectivity.gpkg",
    "prospects": "prospects.gpkg",
    "favourability": "favourability.tif",
    "favourability_cv": "favourability_cv.tif",
    "uncertainty": "uncertainty.tif",
    "model": "prospectivity_model.pkl",
    "fold_models": "fold_models.pkl",
    "weights": "weights.csv",
    "record": "record.json",
    "report": "report.html",
    "map": "map.png",
}


def _stamp(record: dict | None) -> str:
    if record is not None:
        return record["created_utc"]
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def _recorded_knowledge(source: dict) -> list[dict]:
    """The deposit models a record's run followed, as it ranked them: a replay follows the same models whatever
    the retrieval of this version would rank first."""
    return [dict(k.get("model") or model_by_id(k["id"]), score=k["score"], testable=k["testable"],
                 names=k.get("names", []), **({"chosen": True} if k.get("chosen") else {}),
                 **({"stands_in": k["stands_in"]} if k.get("stands_in") else {}))
            for k in source["knowledge"]]


def run_analysis(request: AnalysisRequest, progress: Progress = SILENT,
                 on_event: Callable[[dict], None] | None = None, *, backends: Backends) -> AnalysisResult:
    """Run STA-CoT on the request with the reasoners and SAM of `backends` (`models.BACKENDS`; or call
    `models.run_analysis`); see the module docstring. Raises LodestarError on bad input. The warnings the libraries
    raise on the way reach the log once per kind, in words, at the end. Progress never steps back (each stage reports
    its own span: `Progress.monotone`)."""
    with summarised_warnings(progress.log):
        return _run_analysis(request, progress.monotone(), on_event, backends)


def _run_analysis(request: AnalysisRequest, progress: Progress, on_event, backends: Backends) -> AnalysisResult:
    """The chain: request -> load -> reason -> map (its targets judged) -> report, each stage a function of the
    records the stages before it made. A failure after the load stage leaves a run record saying what was done."""
    run = _ask(request, progress, on_event, backends)
    loaded = _load(run)
    try:
        reasoned = _reason(run, loaded)
        mapped = _map(run, loaded, reasoned)
        return _report(run, loaded, reasoned, mapped)
    except Cancelled:
        _discard(loaded.made)
        raise
    except Exception as exc:
        if progress.cancelled():  # a write that failed because the run was being torn down
            _discard(loaded.made)
            raise Cancelled() from exc
        message = str(exc) if isinstance(exc, LodestarError) else f"Unexpected error: {type(exc).__name__}: {exc}"
        path = _write_failure_record(loaded.head, loaded.engine, run.events, Path(run.request.output_dir), message,
                                     run.started, run.request, run.source)
        raise RunFailed(message, path) from exc


@dataclass(frozen=True)
class _Run:
    """The request stage's record, which every later stage reads: the request (a replay's: the whole request its
    record holds), the record it replays (None when none), the reasoners, its favourability settings and its SAM
    refinement (None when off), its progress, back-ends and start time, and its events so far and where they go."""

    request: AnalysisRequest
    source: dict | None
    roles: Roles
    mapping_parameters: dict
    sam: dict | None
    progress: Progress
    backends: Backends
    started: float
    events: list[dict]
    emit: Callable[[dict], None]


@dataclass(frozen=True)
class _Loaded:
    """The load stage's record: the layers as the planner sees them (a scene's index layers in its place), the known
    deposits' points and the reader's notes on them, the folders the run made, the loop over its workspace, and the
    run record's head (what was given, the scenes' index step and the deposit models retrieved)."""

    raster_set: RasterSet
    deposit_xy: list
    deposit_notes: list
    made: list[Path]
    engine: Engine
    head: dict


@dataclass(frozen=True)
class _Reasoned:
    """The reason stage's record: the settled outcome of the chain, its zones (refined by SAM when asked), the spatial
    graph and the localization section, whether the answer draws targets, and the evidence chosen for the map."""

    outcome: Outcome
    zones: Any
    graph: Any
    localization: dict
    draw_targets: bool
    evidence: EvidenceChoice


@dataclass(frozen=True)
class _Mapped:
    """The map stage's record: the surface and its targets with their verdicts, their scores against the known
    deposits, and the run's notes."""

    mapping: ProspectivityMap
    metrics: dict
    notes: list


def _ask(request: AnalysisRequest, progress: Progress, on_event, backends: Backends) -> _Run:
    """The request stage: a replay reads its record into the whole request it holds; the reasoners are built and the
    question checked before any layer is read."""
    started = time.perf_counter()
    source = records.read_replayed(request.replay) if request.replay else None
    if source is not None:  # a replay runs the whole request its record holds, with the recorded answers
        request = records.replayed_request(request, source)
    roles = backends.build_reasoners(request.settings, progress, replay=source)
    _check_question(request.question, dict(request.choices), list(request.layers),
                    offline=source is None and getattr(roles.verifier, "name", "") == "offline")
    progress.set(1)
    events: list[dict] = []

    def emit(event: dict) -> None:
        events.append(event)
        if on_event is not None:
            on_event(event)

    sam = {"checkpoint": str(request.sam_checkpoint), "device": request.sam_device} if request.refine_with_sam else None
    return _Run(request, source, roles, _mapping_parameters(request), sam, progress, backends, started, events, emit)


def _load(run: _Run) -> _Loaded:
    """The load stage: the layers on one analysis grid, the known deposits (read before the first model call and
    before any file is written: no token is spent, and no folder left, for a run whose deposits cannot be read), the
    deposit models, the output folders, the scenes' index rasters (every raster is read here, block by block: a
    damaged file is found before any model call) and the loop over the workspace."""
    request, progress, layers = run.request, run.progress, list(run.request.layers)
    given_set = RasterSet(layers, progress=progress)
    for line in given_set.log:
        progress.log(line)
    ranking_roles = scenes.ranking_roles(layers)  # a scene whose sensor cannot be told is refused here, before any
    # folder is made
    deposit_notes: list = []
    deposit_xy = _deposit_points(request.deposits, given_set.grid, run.mapping_parameters["calibrate"],
                                 run.mapping_parameters.get("cross_validation") or {}, deposit_notes)
    knowledge = (_recorded_knowledge(run.source) if run.source is not None
                 else ranked_models(request.question, ranking_roles, [spec.name for spec in layers],
                                    request.deposit_model, request.user_models, units=legend_units(layers)))
    made = _output_folders(Path(request.output_dir))  # removed again if the run is cancelled, or refused before its
    # first model call
    try:
        raster_set, scene_run, engine = _start_engine(run, given_set, knowledge)
    except BaseException:
        _discard(made)
        raise
    head = _record_head(run, given_set, raster_set, engine, knowledge, scene_run)
    return _Loaded(raster_set, deposit_xy, deposit_notes, made, engine, head)


def _reason(run: _Run, loaded: _Loaded) -> _Reasoned:
    """The reason stage: the STA-CoT loop to its settled answer, its zones refined by SAM when asked, the spatial
    graph with the model's localization parameters, and the evidence the model chooses for the map (the last model
    calls but the targets' verdicts, in this order)."""
    engine, progress = loaded.engine, run.progress
    outcome = engine.run()
    if engine.budget_spent and not engine.server_refused and not any("value" in entry for entry in engine.trace):
        raise LodestarError(f"The run could not start: no model call fits its budget. {engine.stop_reason}")
    progress.set(90)
    zones, sam_note = engine.ws.zones, ""
    if run.sam:
        zones, sam_note = _refine_with_sam(zones, loaded.raster_set, run.sam["checkpoint"], run.sam["device"],
                                           progress, run.backends)
    draw_targets = _draws_targets(outcome.answer, dict(run.request.choices))
    localization = _localize(engine, engine.ws, zones, draw_targets, run.request.localization)
    graph = localization.pop("graph")
    localization.pop("scores")
    if sam_note:
        localization["note"] = f"{localization['note']} {sam_note}".strip()
    parameters = run.mapping_parameters
    evidence_plan = plan_from_dict(parameters["evidence_plan"]) if parameters.get("evidence_plan") else None
    return _Reasoned(outcome, zones, graph, localization, draw_targets, chosen_evidence(engine, evidence_plan))


def _map(run: _Run, loaded: _Loaded, reasoned: _Reasoned) -> _Mapped:
    """The map stage: the favourability surface and its targets (`map_prospectivity`) at the run's favourability
    settings, each of the best judged by the chain's verifier (the `judge` callable it is handed), then the targets
    scored against the known deposits."""
    engine, outcome, parameters = loaded.engine, reasoned.outcome, run.mapping_parameters
    mapping = map_prospectivity(engine.ws, reasoned.graph, outcome.plan, reasoned.evidence,
                                lambda measured, notes: judge_targets(engine, measured, notes),
                                draw_targets=reasoned.draw_targets, area_share=parameters["area_share"],
                                calibrate=parameters["calibrate"],
                                cross_validation=parameters.get("cross_validation") or {},
                                max_target_km2=parameters.get("max_target_km2"),
                                min_target_km2=parameters.get("min_target_km2"),
                                max_targets=parameters.get("max_targets"),
                                deposit_xy=loaded.deposit_xy, core=_settled_core(outcome),
                                progress=run.progress.scaled(92, 97), answer=outcome.answer)
    run.emit({"kind": "localization", "polygons": len(mapping.targets), "params": reasoned.localization["params"],
              "source": reasoned.localization["source"], "basis": mapping.basis})
    metrics = _evaluate(mapping.targets, run.request.deposits, loaded.raster_set, run.progress, mapping.surface,
                        loaded.deposit_xy)
    return _Mapped(mapping, metrics, _run_notes(engine.ws, outcome, mapping, loaded.deposit_notes))


def _report(run: _Run, loaded: _Loaded, reasoned: _Reasoned, mapped: _Mapped) -> AnalysisResult:
    """The report stage: the run record, then every output written together (`_write_outputs`), and the result."""
    request, engine, head, outcome = run.request, loaded.engine, loaded.head, reasoned.outcome
    ws, out, prospectivity, mapping = engine.ws, Path(request.output_dir), mapped.mapping.targets, mapped.mapping
    index_steps = scenes.chain_nodes(head.get("scenes"))
    stopped = engine.stop_reason if engine.server_refused else ""
    record = dict(head)
    record.update({
        "plan": [n["step"] for n in index_steps] + [s.to_dict() for s in outcome.plan],
        "trace": engine.trace,
        "events": [_relative(e, out) for e in run.events],
        "rounds": [dict(v, chain=_relative(c, out)) for v, c in zip(outcome.verdicts, outcome.chains)],
        "chain": index_steps + _relative([n.to_dict() for n in ws.chain], out),
        "result": _result_section(outcome, mapped.notes, stopped, where_answer(prospectivity)
                                  if asks_where(request.question) and reasoned.draw_targets else ""),
        "localization": reasoned.localization,
        "favourability": records.scrub(jsonable(mapping.section())),
        "metrics": mapped.metrics,
        "usage": engine.roles.usage(),
        "timings": _timings(engine, run.started),
        "replayed_from": _replayed_from(request, run.source),
    })
    outputs = _write_outputs(record, out, reasoned.zones, reasoned.graph, mapping, ws, request.settings.api_key,
                             loaded.deposit_xy, run.source, request.output_names)
    run.progress.set(100)
    run.emit({"kind": "done", "answer": outcome.answer, "valid": outcome.valid, "voted": outcome.voted,
              "rounds": outcome.rounds})
    choices = head["choices"]
    return AnalysisResult(
        answer=outcome.answer,
        answer_text=record["result"].get("where") or choices.get(
            outcome.answer, outcome.answer if outcome.answer in (FAILED, INSUFFICIENT) else ""),
        valid=outcome.valid, voted=outcome.voted, rounds=outcome.rounds,
        zones=reasoned.zones, nodes=reasoned.graph.nodes, edges=reasoned.graph.edges, prospectivity=prospectivity,
        chain=index_steps + [n.to_dict() for n in ws.chain], verdicts=outcome.verdicts,
        usage=record["usage"],
        outputs=outputs, metrics=mapped.metrics, notes=mapped.notes, weights=list(mapping.weights),
        unused=list(mapping.unused), validation=record["favourability"]["validation"], stopped=stopped,
        prospects=mapping.prospects,
    )


def _mapping_parameters(request: AnalysisRequest) -> dict:
    """The request's favourability settings, as the record holds them."""
    return {"favourable_units": dict(request.favourable_units), "calibrate": request.calibrate,
            "cross_validation": dict(request.cross_validation),
            "area_share": float(request.area_share), "max_target_km2": request.max_target_km2,
            "min_target_km2": request.min_target_km2, "max_targets": request.max_targets,
            **({"evidence_plan": request.evidence_plan} if request.evidence_plan else {})}


def _check_question(question: str, choices: dict, layers: list, *, offline: bool) -> None:
    """Refuse an empty or overlong question, fewer than two choices, too many layers, and (`offline`: answered by
    the offline reasoner) a question it cannot answer."""
    if not str(question or "").strip():
        raise LodestarError("The question is empty: ask what to look for, e.g. 'Can porphyry Cu deposits be "
                            "detected here? A. Yes B. No'.")
    if len(choices) < 2:
        raise LodestarError("Give at least two answer choices (e.g. A: Yes, B: No).")
    if len(question) > MAX_QUESTION_CHARS:
        raise LodestarError(f"The question is {len(question):,} characters long; keep it under "
                            f"{MAX_QUESTION_CHARS:,} (a question, its choices and any context a geologist would "
                            "write), and put data into layers.")
    if len(layers) > MAX_LAYERS:
        raise LodestarError(f"The run has {len(layers):,} layers; Lodestar takes at most {MAX_LAYERS} (each is held "
                            "whole in memory and weighed against the others). Keep the layers that carry distinct "
                            "evidence (the best index of each mineral, one geological map, the faults), or split "
                            "the area into several cases.")
    if offline:
        problem = offline_question_problem(question, choices, load_knowledge())
        if problem:
            raise LodestarError(problem)


def _output_folders(out: Path) -> list[Path]:
    """Make the output folder and its evidence folder; the folders of the run (the index folder too) that it made."""
    evidence_dir = out / "evidence"
    made = [folder for folder in (out, evidence_dir, out / scenes.INDEX_FOLDER) if not folder.exists()]
    out.mkdir(parents=True, exist_ok=True)
    evidence_dir.mkdir(exist_ok=True)
    return made


def _start_engine(run: _Run, raster_set: RasterSet, knowledge: list[dict]
                  ) -> tuple[RasterSet, scenes.SceneRun | None, Engine]:
    """(the layers the planner sees, the scenes' index step or None, the loop) of a run: the scenes' indices derived
    first, then the workspace over the layers."""
    request, progress, out = run.request, run.progress, Path(run.request.output_dir)
    scene_run = None
    if any(scenes.is_scene(spec) for spec in request.layers):  # the index step, before the planner sees the layers
        scene_run = scenes.derive(list(request.layers), knowledge, out, progress)
        raster_set = RasterSet(scene_run.layers, progress=progress)
        for line in scene_run.log:
            progress.log(line)
    ws = Workspace(request.question, dict(request.choices), raster_set, out / "evidence", case_id=request.case_id,
                   knowledge=knowledge, favourable_units=run.mapping_parameters["favourable_units"])
    progress.check()
    engine = Engine(run.roles, ws, max_rounds=request.max_rounds, progress=progress, emit=run.emit,
                    controller=request.controller)
    return raster_set, scene_run, engine


def _record_head(run: _Run, given_set: RasterSet, raster_set: RasterSet, engine: Engine, knowledge: list[dict],
                 scene_run: scenes.SceneRun | None) -> dict:
    """The run record's first part: what was asked, on which inputs and grid, with which parameters, back-end and
    deposit models."""
    request, source, ws = run.request, run.source, engine.ws
    return {
        "format": records.FORMAT,
        "created_utc": _stamp(source),
        "case_id": request.case_id,
        "question": request.question,
        "choices": dict(request.choices),
        "inputs": records.input_entries(given_set, scenes.input_infos(given_set, ws.layers)),
        "analysis": {"crs": crs_label(raster_set.crs), "grid": [raster_set.grid.width, raster_set.grid.height],
                     "bounds": [round(v, 3) for v in raster_set.grid.bounds], "log": list(raster_set.log)},
        "parameters": {"max_rounds": request.max_rounds, "max_attempts": engine.max_attempts,
                       "controller": {k: getattr(engine.limits, k) for k in engine.limits.__dataclass_fields__},
                       "localization": request.localization,
                       **records.deposits_entry(request.deposits),
                       "sam": run.sam, "favourability": run.mapping_parameters},
        "backend": source["backend"] if source else _backend_section(request.settings, engine.roles),
        "prompt_hashes": source["prompt_hashes"] if source else _prompt_hashes(engine.roles),
        "knowledge": [_knowledge_entry(k) for k in knowledge],
        "layers": [info.to_dict() for info in ws.layers],
        **({"scenes": scene_run.entries} if scene_run else {}),
    }


def _knowledge_entry(model: dict) -> dict:
    """A ranked deposit model as the record holds it (a user's model whole)."""
    return {"id": model["id"], "name": model["name"], "score": round(model["score"], 4), "testable": model["testable"],
            "names": model.get("names", []), **({"chosen": True} if model.get("chosen") else {}),
            **({"stands_in": model["stands_in"]} if model.get("stands_in") else {}),
            **({"model": {n: v for n, v in model.items() if n not in ("score", "testable", "names", "chosen")}}
               if model.get("source") == "user" else {})}


class RunFailed(LodestarError):
    """A run that reached the engine and failed; `record` is the run record written before raising (what was done,
    the model decisions and usage up to the failure, and why), None when even that could not be written."""

    def __init__(self, message: str, record: Path | None):
        where = f" The run record is {record}." if record is not None else ""
        super().__init__(" ".join(f"{message.rstrip()}{where}".split()))
        self.cause = message
        self.record = record


def _discard(paths: list) -> None:
    """Remove what a run made (folders it created, output files), so a cancelled run leaves nothing half-done."""
    for path in sorted({Path(p) for p in paths}, key=lambda p: len(p.parts), reverse=True):
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        elif path.exists():
            path.unlink()


def _write_failure_record(head: dict, engine: Engine, events: list, out: Path, message: str, started: float,
                          request: AnalysisRequest, source: dict | None) -> Path | None:
    """The record of a run that failed after reaching the engine: its inputs and parameters, the decisions and
    usage up to the failure (nothing spent is lost), and why it failed."""
    record = dict(head)
    record.update({
        "plan": [],
        "trace": engine.trace,
        "events": [_relative(e, out) for e in events],
        "rounds": [],
        "chain": _relative([n.to_dict() for n in engine.ws.chain], out),
        "result": {"answer": FAILED, "valid": False, "voted": False, "rounds": 0, "votes": {}, "candidates": [],
                   "notes": [message], "stopped": engine.stop_reason if engine.server_refused else "",
                   "error": message},
        "usage": engine.roles.usage(),
        "timings": _timings(engine, started),
        "replayed_from": _replayed_from(request, source),
    })
    secrets = (request.settings.api_key,) if request.settings.api_key else ()
    try:
        return records.write_record(record, out / OUTPUT_FILES["record"], secrets)
    except OSError:
        return None


def _run_notes(ws: Workspace, outcome, mapping, deposit_notes: list) -> list:
    """The run's notes: why its deposit model stands in for the one asked (when it does), the layers' and the
    deposits' warnings, the loop's and the map's notes, then the layers used nowhere."""
    unused = [f"{row['layer']} was not used: {row['reason']}" for row in mapping.unused]
    stands_in = [ws.knowledge[0]["stands_in"]] if ws.knowledge and ws.knowledge[0].get("stands_in") else []
    return stands_in + list(ws.raster_set.warnings) + deposit_notes + list(outcome.notes) + mapping.notes + unused


def _result_section(outcome, notes: list, stopped: str, where: str) -> dict:
    """The run record's result: the answer, how it was reached, the notes, and the targets' places for a "where"
    question ('' otherwise)."""
    return {"answer": outcome.answer, "valid": outcome.valid, "voted": outcome.voted,
            "rounds": outcome.rounds, "votes": outcome.votes,
            "candidates": [{"round": r, "answer": a} for r, a in outcome.candidates],
            "notes": notes, "stopped": stopped, "where": where}


def _timings(engine: Engine, started: float) -> dict:
    """The run's time so far, in total and in tool calls (seconds), and its number of tool calls."""
    return {"total_s": round(time.perf_counter() - started, 3),
            "tools_s": round(engine.timings["tools_s"], 3), "tool_calls": engine.timings["tool_calls"]}


def _replayed_from(request: AnalysisRequest, source: dict | None) -> str | None:
    """The full path of the record a replay follows; None for a run that is no replay."""
    if source is None:
        return None
    assert request.replay is not None  # a replay's request names its record
    return str(Path(request.replay).resolve())


def _backend_section(settings: BackendSettings, roles: Roles) -> dict:
    """The back-end's public settings, each role's, and the decision thresholds of a reasoner that has them (the
    offline reasoner's OfflineSettings, each with its reason and provenance)."""
    section: dict = {"settings": settings.public()}
    for role in ("planner", "executor", "verifier"):
        section[role] = getattr(roles, role).public_settings()
    thresholds = [row for reasoner in roles.distinct() for row in getattr(reasoner, "decision_settings", list)()]
    if thresholds:
        section["decision_settings"] = thresholds
    return section


def _prompt_hashes(roles: Roles) -> dict:
    hashes: dict = {}
    for reasoner in roles.distinct():
        hashes.update(reasoner.prompt_hashes() or {})
    return dict(sorted(hashes.items()))


def _relative(value, out: Path):
    """Paths under the output folder written relative to it (records of a replay elsewhere match)."""
    prefix = str(out.resolve())
    if isinstance(value, dict):
        return {k: _relative(v, out) for k, v in value.items()}
    if isinstance(value, list):
        return [_relative(v, out) for v in value]
    if isinstance(value, str) and value.startswith(prefix):
        return value[len(prefix):].lstrip("/\\")
    if isinstance(value, str) and value.startswith(str(out)):
        return value[len(str(out)):].lstrip("/\\")
    return value


def _refine_with_sam(zones, raster_set, checkpoint, device, progress, backends: Backends):
    if not len(zones):
        return zones, "No zones to refine with SAM."
    if not checkpoint or checkpoint == "None":
        raise LodestarError("SAM refinement needs a checkpoint file (SAM_CHECKPOINT).")
    refined = backends.refine_zones(zones, raster_set, checkpoint, device=device, progress=progress)
    return refined, f"Zone outlines refined with SAM ({int(refined['sam_refined'].sum())} of {len(refined)})."


def _settled_core(outcome) -> dict:
    """The core named by the latest verdict that gave the settled answer ({} when none names one)."""
    for entry in reversed(outcome.verdicts):
        verdict = entry.get("verdict") or {}
        if verdict.get("answer") == outcome.answer:
            return dict(verdict.get("core") or {})
    return {}


def _draws_targets(answer: str, choices: dict) -> bool:
    """Targets when an answer was reached that neither rules deposits out nor lacks the evidence to say: for a yes /
    no question (a "where" question too) its yes, for other questions any answer. Insufficient evidence, No and no
    answer draw none: targets the answer does not stand behind are not to be walked to."""
    if answer in (FAILED, INSUFFICIENT):
        return False
    positive = positive_choice(choices)
    return positive is None or answer == positive


def _localize(engine: Engine, ws: Workspace, zones, draw_targets: bool, overrides) -> dict:
    """The spatial graph of all zones and its node scores; parameters: deposit model < model's choice <
    overrides. The scores rank and explain the targets drawn from the favourability surface."""
    from ..graph import GraphParams, build_graph
    from ..localization import LocalizationParams, node_scores

    crs = ws.raster_set.crs
    graph = build_graph(zones if len(zones) else zones_frame([], crs), GraphParams(), crs=crs)
    base = LocalizationParams.from_dict(ws.deposit_model.get("localization", {}))
    source_name = f"deposit model {ws.deposit_model.get('id', '-')}" if ws.deposit_model else "defaults"
    params, note = base, ""
    if draw_targets and len(graph.nodes) and not engine.budget_spent:
        try:
            chosen = engine.ask_localization_params()
            params = LocalizationParams.from_dict(chosen, base)
            source_name = f"{getattr(engine.roles.planner, 'name', 'model')} (over {source_name})"
        except (LodestarError, TypeError, ValueError) as exc:
            note = f"The model's localization parameters were not usable ({exc}); the deposit model's are used."
    if overrides:
        params = LocalizationParams.from_dict(overrides, params)
        source_name += " with user overrides"
    return {"params": params.as_dict(), "source": source_name, "note": note, "graph": graph,
            "scores": node_scores(graph, params)}


def _evaluate(prospectivity, deposits, raster_set, progress, surface=None, deposit_xy=None) -> dict:
    """The targets scored against the known deposits, beside the surface they come from at equal area."""
    if not deposits:
        return {}
    from ..evaluation import beside_surface, evaluate_localization

    metrics = evaluate_localization(prospectivity, deposits, valid_mask=raster_set.valid_mask(), grid=raster_set.grid,
                                    progress=progress.scaled(90, 95))
    if surface is not None and deposit_xy:
        metrics = beside_surface(metrics, surface.values, surface.grid, deposit_xy)
    return records.scrub(jsonable(metrics))


def _map_layers(ws: Workspace) -> list[str]:
    """Layers to draw the map on: evidence rasters first, then the rest."""
    order = sorted(ws.layers, key=lambda info: (info.kind not in ("index", "rgb"), info.role == "structure"))
    return [info.name for info in order]


def _deposit_points(deposits, grid, calibrate: str = "", cross_validation: dict | None = None,
                    notes: list | None = None) -> list:
    """(x, y) of the known deposits in the analysis CRS, the reader's warnings (shapes taken at a point, copies
    counted once) added to `notes`; a deposits file that cannot be read or holds no point is refused, and so are
    deposits a calibration needs of which fewer than 2 lie within the analysed extent (`grid`: its grid) or all in
    one of its cells, and a calibration block size under the smallest (`cross_validation`: the calibration's
    settings). Deposits given for validation only may lie outside it: the run goes on and the validation says which
    it left out (`evaluation.left_out_deposits`)."""
    if not deposits:
        return []
    from ..evaluation import deposit_coordinates

    if not split_source(deposits)[0].is_file():
        raise LodestarError(f"The known deposits file {deposits} does not exist (or is a folder): give a point layer "
                            "(GeoPackage, Shapefile, GeoJSON, or a CSV with longitude and latitude columns), or leave "
                            "the deposits out.")
    log: list[str] = []
    try:
        xy = deposit_coordinates(deposits, grid.crs, log)
    except LodestarError as exc:
        raise LodestarError(f"The known deposits {deposits} cannot be read: {exc}") from exc
    read = f" ({' '.join(log)})" if log else ""
    if not len(xy):
        raise LodestarError(f"The known deposits {deposits} hold no points{read}: give a layer with at least one "
                            "deposit, or leave the deposits out.")
    xmin, ymin, xmax, ymax = grid.bounds
    within = int(((xy[:, 0] >= xmin) & (xy[:, 0] <= xmax) & (xy[:, 1] >= ymin) & (xy[:, 1] <= ymax)).sum())
    if calibrate and within < 2:
        raise LodestarError(f"Calibration needs at least 2 known deposits within the analysed extent "
                            f"{tuple(round(v) for v in grid.bounds)}, and {within} of the {len(xy)} in {deposits} "
                            f"lie there{read}: check the layer's CRS (coordinates in degrees need longitude and "
                            "latitude columns, projected ones x and y), or turn calibration off to validate on the "
                            "deposits inside.")
    if calibrate:  # refused here, before any model call, as the calibration would refuse them
        from ..favourability.blocks import checked_block_size
        from ..favourability.calibration import deposit_cells

        deposit_cells(xy, grid, None, [])
        checked_block_size(grid, (cross_validation or {}).get("block_size_m"))
    if notes is not None:
        notes.extend(line for line in log if line.startswith("Warning:"))
    return list(map(tuple, xy.tolist()))


def _write_outputs(record: dict, out: Path, zones, graph, mapping, ws: Workspace, api_key: str,
                   deposit_xy: list, source: dict | None = None, output_names: dict | None = None) -> dict:
    """Vector layers (fixed GeoPackage timestamp: same content, same bytes; the targets and their prospects only
    when any is drawn), surfaces, weights, map, record, report: written together (`files.OutputSet`: staged, then
    moved into `out` at once, so a run sharing the folder never leaves a mix of two runs' files), cancel checked
    between them. The report names the outputs by
    `output_names` (the names the user finds them by) where given."""
    outputs: dict = {}
    prospectivity = mapping.targets
    check = ws.raster_set.progress.check
    with OutputSet() as staged:
        def at(name: str) -> Path:
            check()
            return staged.path(out / OUTPUT_FILES[name])

        outputs.update(_write_layers(at, record["created_utc"], zones, graph, mapping))
        outputs.update(_write_surfaces(at, record["created_utc"], mapping))
        map_png = None
        try:
            shown = prospectivity if len(prospectivity) else zones
            drawn = draw_evidence(ws, _map_layers(ws), shown, at("map"), max_size=900, points=deposit_xy)
            map_png = Path(drawn) if drawn else None
        except LodestarError:
            map_png = None
        if map_png:
            outputs["map"] = map_png
        record["outputs"] = {name: {"file": path.name, "sha256": records.sha256_file(path)}
                             for name, path in outputs.items()}
        if source is not None:  # a replay checks every output it rewrote against the recorded checksums
            _check_replay(record, source)
        secrets = (api_key,) if api_key else ()
        outputs["report"] = write_report(dict(records.scrub(record, secrets), output_names=dict(output_names or {})),
                                         at("report"), ws.evidence_dir, map_png)
        outputs["record"] = records.write_record(record, at("record"), secrets)
        check()
    return {name: out / Path(path).name for name, path in outputs.items()}


def _write_layers(at: Callable[[str], Path], stamp: str, zones, graph, mapping) -> dict:
    """The zones, graph nodes and edges, and the targets and their prospects when any is drawn, written at `at(name)`
    with the GeoPackage timestamp `stamp`: {name: path}."""
    written = {}
    for name, frame in (("zones", zones), ("nodes", graph.nodes), ("edges", graph.edges),
                        ("prospectivity", mapping.targets), ("prospects", mapping.prospects)):
        if name in ("prospectivity", "prospects") and (frame is None or not len(frame)):
            continue  # no target drawn (Insufficient evidence, No, nothing standing out): no targets layer
        written[name] = write_vector(frame, at(name), stamp=stamp)
    return written


def _write_surfaces(at: Callable[[str], Path], stamp: str, mapping) -> dict:
    """The favourability surface and its weights, the out-of-fold surface, the uncertainty and the calibrated
    surface's models (`stamp`: when they were written), those the map has, at `at(name)`: {name: path}."""
    written = {}
    if mapping.surface is not None:
        made = (f"calibrated: {method_label({'method': mapping.surface.method})}" if mapping.basis == "calibrated"
                else "knowledge-driven")
        written["favourability"] = write_surface(mapping.surface, at("favourability"),
                                                 description=f"favourability (0-1): {made}")
        written["weights"] = write_weights_csv(mapping.weights, at("weights"))
    if mapping.cv is not None:
        written["favourability_cv"] = write_surface(mapping.cv, at("favourability_cv"),
                                                    description="favourability (0-1): calibrated: "
                                                    f"{method_label({'method': mapping.cv.method})}")
    if mapping.uncertainty is not None:
        written["uncertainty"] = write_surface(mapping.uncertainty, at("uncertainty"),
                                               description=mapping.uncertainty.method)
    for name, key in (("model", "model"), ("fold_models", "spread")):  # the calibrated surface's, as data
        if mapping.fitted.get(key) is not None:
            written[name] = at(name)
            save_model(written[name], mapping.fitted[key], {"basis": f"the run's calibrated surface ({name})"},
                       written=stamp)
    return written


def _check_replay(record: dict, source: dict) -> None:
    """The replay's check of its outputs (and its index rasters) against the recorded run's checksums, in `record`,
    and a note of those that differ."""
    record["replay_check"] = records.compare_outputs(source.get("outputs") or {}, record["outputs"])
    if record["replay_check"]["different"]:
        record["result"]["notes"].append(records.replay_note(record["replay_check"]))
    if record.get("scenes"):  # the index rasters the replay computed again from the recorded scenes
        changed = scenes.replay_differences(source.get("scenes"), record["scenes"])
        record["replay_check"]["indices_different"] = changed
        if changed:
            record["result"]["notes"].append(f"Replay check: the index rasters {', '.join(changed)} differ "
                                             "from the recorded run's (sha256).")
