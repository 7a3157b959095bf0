"""`run_analysis`: one question over a set of layers, from the request to the files and the result.

Steps: open the layers on one analysis grid; retrieve deposit models; run the STA-CoT loop
(`loop.Engine`); localize deposits through the spatial graph with parameters from the model (the
localization tool) or the deposit model; optionally refine zone outlines with SAM; write zones,
graph nodes and edges, prospectivity polygons (GeoPackage), the run record (JSON) and the HTML
report into `request.output_dir`; evaluate against known deposits when the request names them.

Live events go to `on_event` as dicts with a `kind`: plan, controller, step, skipped, verdict, vote,
usage, localization, done. `progress.check()` runs between every model call and tool call.
"""
from __future__ import annotations

import datetime as _dt
import time
from pathlib import Path
from typing import Callable

import fiona

from ..analysis import AnalysisRequest, AnalysisResult, BackendSettings
from ..errors import LodestarError
from ..progress import SILENT, Progress
from ..raster_io import RasterSet, crs_label
from ..vector_io import write_vector
from ..zones import zones_frame
from . import record as records
from .contract import Roles
from .knowledge import retrieve
from .loop import FAILED, Engine
from .questions import positive_choice
from .report import write_report
from .toolbox import draw_evidence, jsonable
from .workspace import Workspace

OUTPUT_FILES = {
    "zones": "zones.gpkg",
    "nodes": "nodes.gpkg",
    "edges": "edges.gpkg",
    "prospectivity": "prospectivity.gpkg",
    "record": "record.json",
    "report": "report.html",
    "map": "map.png",
}


def _backends():
    """models/, the back-ends, imported on first use: the engine's one way into them (the core loads,
    and runs its tests, without importing a back-end)."""
    from ... import models

    return models


def _stamp(record: dict | None) -> str:
    if record is not None:
        return record["created_utc"]
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_analysis(request: AnalysisRequest, progress: Progress = SILENT,
                 on_event: Callable[[dict], None] | None = None) -> AnalysisResult:
    """Run STA-CoT on the request; see the module docstring. Raises LodestarError on bad input."""
    started = time.perf_counter()
    source = records.read_record(request.replay) if request.replay else None
    if source is not None:
        layers = records.layers_from_record(source)
        question, choices = source["question"], dict(source["choices"])
        max_rounds = int(source["parameters"]["max_rounds"])
        localization_overrides = source["parameters"].get("localization")
        case_id = source.get("case_id", "")
        deposits = Path(source["parameters"]["deposits"]) if source["parameters"].get("deposits") else None
    else:
        layers, question, choices = list(request.layers), request.question, dict(request.choices)
        max_rounds, localization_overrides, case_id = request.max_rounds, request.localization, request.case_id
        deposits = request.deposits
    roles = _backends().build_reasoners(request.settings, progress, replay=source)
    if not str(question or "").strip():
        raise LodestarError("The question is empty: ask what to look for, e.g. 'Can porphyry Cu deposits be "
                            "detected here? A. Yes B. No'.")
    if len(choices) < 2:
        raise LodestarError("Give at least two answer choices (e.g. A: Yes, B: No).")
    out = Path(request.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    evidence_dir = out / "evidence"
    evidence_dir.mkdir(exist_ok=True)
    created = _stamp(source)
    events: list[dict] = []

    def emit(event: dict) -> None:
        events.append(event)
        if on_event is not None:
            on_event(event)

    progress.set(1)
    raster_set = RasterSet(layers)
    for line in raster_set.log:
        progress.log(line)
    knowledge = retrieve(question, [spec.role for spec in layers])
    ws = Workspace(question, choices, raster_set, evidence_dir, case_id=case_id, knowledge=knowledge)
    progress.check()
    engine = Engine(roles, ws, max_rounds=max_rounds, progress=progress, emit=emit)
    outcome = engine.run()
    progress.set(90)

    zones = ws.zones
    sam_note = ""
    sam = source["parameters"].get("sam") if source is not None else (
        {"checkpoint": str(request.sam_checkpoint), "device": request.sam_device} if request.refine_with_sam else None)
    if sam:
        zones, sam_note = _refine_with_sam(zones, raster_set, sam["checkpoint"], sam["device"], progress)
    localization = _localize(engine, ws, zones, outcome.answer, choices, localization_overrides, progress, emit)
    graph, prospectivity = localization.pop("graph"), localization.pop("frame")
    if sam_note:
        localization["note"] = f"{localization['note']} {sam_note}"
    metrics = _evaluate(prospectivity, deposits, raster_set, progress)

    record = {
        "format": records.FORMAT,
        "created_utc": created,
        "case_id": case_id,
        "question": question,
        "choices": choices,
        "inputs": records.input_entries(raster_set, ws.layers),
        "analysis": {"crs": crs_label(raster_set.crs), "grid": [raster_set.grid.width, raster_set.grid.height],
                     "bounds": [round(v, 3) for v in raster_set.grid.bounds], "log": list(raster_set.log)},
        "parameters": {"max_rounds": max_rounds, "max_attempts": engine.max_attempts,
                       "controller": {k: getattr(engine.limits, k) for k in engine.limits.__dataclass_fields__},
                       "localization": localization_overrides,
                       "deposits": str(Path(deposits).resolve()) if deposits else None,
                       "sam": sam},
        "backend": source["backend"] if source else _backend_section(request.settings, roles),
        "prompt_hashes": source["prompt_hashes"] if source else _prompt_hashes(roles),
        "knowledge": [{"id": k["id"], "name": k["name"], "score": round(k["score"], 4), "testable": k["testable"]}
                      for k in knowledge],
        "layers": [info.to_dict() for info in ws.layers],
        "plan": [s.to_dict() for s in outcome.plan],
        "trace": engine.trace,
        "events": [_relative(e, out) for e in events],
        "rounds": [dict(v, chain=_relative(c, out)) for v, c in zip(outcome.verdicts, outcome.chains)],
        "chain": _relative([n.to_dict() for n in ws.chain], out),
        "result": {"answer": outcome.answer, "valid": outcome.valid, "voted": outcome.voted,
                   "rounds": outcome.rounds, "votes": outcome.votes,
                   "candidates": [{"round": r, "answer": a} for r, a in outcome.candidates],
                   "notes": outcome.notes},
        "localization": localization,
        "metrics": metrics,
        "usage": roles.usage(),
        "timings": {"total_s": round(time.perf_counter() - started, 3),
                    "tools_s": round(engine.timings["tools_s"], 3), "tool_calls": engine.timings["tool_calls"]},
        "replayed_from": str(Path(request.replay).resolve()) if source is not None else None,
    }
    outputs = _write_outputs(record, out, zones, graph, prospectivity, ws, request.settings.api_key, deposits)
    progress.set(100)
    emit({"kind": "done", "answer": outcome.answer, "valid": outcome.valid, "voted": outcome.voted,
          "rounds": outcome.rounds})
    return AnalysisResult(
        answer=outcome.answer,
        answer_text=choices.get(outcome.answer, FAILED if outcome.answer == FAILED else ""),
        valid=outcome.valid, voted=outcome.voted, rounds=outcome.rounds,
        zones=zones, nodes=graph.nodes, edges=graph.edges, prospectivity=prospectivity,
        chain=[n.to_dict() for n in ws.chain], verdicts=outcome.verdicts, usage=record["usage"],
        outputs=outputs, metrics=metrics, notes=list(outcome.notes),
    )


def _backend_section(settings: BackendSettings, roles: Roles) -> dict:
    section = {"settings": settings.public()}
    for role in ("planner", "executor", "verifier"):
        section[role] = getattr(roles, role).public_settings()
    return section


def _prompt_hashes(roles: Roles) -> dict:
    hashes = {}
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


def _refine_with_sam(zones, raster_set, checkpoint, device, progress):
    if not len(zones):
        return zones, "No zones to refine with SAM."
    if not checkpoint or checkpoint == "None":
        raise LodestarError("SAM refinement needs a checkpoint file (SAM_CHECKPOINT).")
    refined = _backends().refine_zones(zones, raster_set, checkpoint, device=device, progress=progress)
    return refined, f"Zone outlines refined with SAM ({int(refined['sam_refined'].sum())} of {len(refined)})."


def _localize(engine: Engine, ws: Workspace, zones, answer: str, choices: dict, overrides, progress, emit) -> dict:
    """Spatial graph and prospectivity polygons; parameters: deposit model < model's choice < overrides."""
    from ..graph import GraphParams, build_graph
    from ..localization import LocalizationParams, localize

    crs = ws.raster_set.crs
    graph = build_graph(zones if len(zones) else zones_frame([], crs), GraphParams(), crs=crs)
    base = LocalizationParams.from_dict(ws.deposit_model.get("localization", {}))
    source_name = f"deposit model {ws.deposit_model.get('id', '-')}" if ws.deposit_model else "defaults"
    params, note = base, ""
    positive = positive_choice(choices)
    supported = answer != FAILED and (positive is None or answer == positive)
    if supported and len(graph.nodes) and not engine.budget_spent:
        try:
            chosen = engine.ask_localization_params()
            params = LocalizationParams.from_dict(chosen, base)
            source_name = f"{getattr(engine.roles.planner, 'name', 'model')} (over {source_name})"
        except (LodestarError, TypeError, ValueError) as exc:
            note = f"The model's localization parameters were not usable ({exc}); the deposit model's are used. "
    if overrides:
        params = LocalizationParams.from_dict(overrides, params)
        source_name += " with user overrides"
    if supported:
        frame = localize(graph, params, progress.scaled(92, 96))
        note += f"{len(frame)} prospectivity polygon(s) from {len(graph.nodes)} zones."
    else:
        frame = localize(build_graph(zones_frame([], crs), GraphParams(), crs=crs), params)
        note += ("No prospectivity polygons: the answer is not a positive one, so no deposit area is proposed "
                 "(the candidate zones and the graph are still written).")
    polygons = [{"rank": int(r["rank"]), "score": float(r["score"]), "roles": r["roles"], "n_zones": int(r["n_zones"]),
                 "area_m2": float(r["area_m2"])} for r in frame.drop(columns="geometry").to_dict("records")]
    emit({"kind": "localization", "polygons": len(frame), "params": params.as_dict(), "source": source_name})
    return {"params": params.as_dict(), "source": source_name, "note": note.strip(), "polygons": polygons,
            "graph": graph, "frame": frame}


def _evaluate(prospectivity, deposits, raster_set, progress) -> dict:
    if not deposits:
        return {}
    from ..evaluation import evaluate_localization

    metrics = evaluate_localization(prospectivity, deposits, valid_mask=raster_set.valid_mask(), grid=raster_set.grid,
                                    progress=progress.scaled(90, 95))
    return records.scrub(jsonable(metrics))


def _map_layers(ws: Workspace) -> list[str]:
    """Layers to draw the map on: evidence rasters first, then the rest."""
    order = sorted(ws.layers, key=lambda info: (info.kind not in ("index", "rgb"), info.role == "structure"))
    return [info.name for info in order]


def _deposit_points(deposits, crs) -> list:
    """(x, y) of the known deposits in the analysis CRS, to draw on the map ([] when they cannot be read)."""
    if not deposits:
        return []
    from ..evaluation import deposit_points

    try:
        return [(p.x, p.y) for p in deposit_points(deposits, crs, [])]
    except LodestarError:
        return []


def _write_outputs(record: dict, out: Path, zones, graph, prospectivity, ws: Workspace, api_key: str,
                   deposits=None) -> dict:
    """Vector layers (fixed GeoPackage timestamp: same content, same bytes), map, record, report."""
    outputs = {}
    with fiona.Env(OGR_CURRENT_DATE=record["created_utc"].replace("Z", ".000Z")):
        for name, frame in (("zones", zones), ("nodes", graph.nodes), ("edges", graph.edges),
                            ("prospectivity", prospectivity)):
            outputs[name] = write_vector(frame, out / OUTPUT_FILES[name])
    map_png = None
    try:
        shown = prospectivity if len(prospectivity) else zones
        drawn = draw_evidence(ws, _map_layers(ws), shown, out / OUTPUT_FILES["map"], max_size=900,
                              points=_deposit_points(deposits, ws.raster_set.crs))
        map_png = Path(drawn) if drawn else None
    except LodestarError:
        map_png = None
    if map_png:
        outputs["map"] = map_png
    record["outputs"] = {name: {"file": path.name, "sha256": records.sha256_file(path)}
                         for name, path in outputs.items()}
    secrets = (api_key,) if api_key else ()
    outputs["report"] = write_report(records.scrub(record, secrets), out / OUTPUT_FILES["report"], ws.evidence_dir,
                                     map_png)
    outputs["record"] = records.write_record(record, out / OUTPUT_FILES["record"], secrets)
    return outputs
