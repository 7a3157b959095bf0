"""The runs of a QGIS project: a short entry per run (its folder, date, question, answer, deposit model, evidence plan
and evaluation) and per re-made surface of it (Re-run with this plan), kept as JSON text in the project file so the
project lists its runs wherever it is opened; the files stay in the run folders. QGIS-free: the dock reads and writes
the text through the project."""
from __future__ import annotations

import json
from pathlib import Path

from ..errors import LodestarError
from ..labels import targets_auc, targets_surface
from .run_history import read_record

FORMAT = "lodestar-project-runs/1"


def run_entry(folder) -> dict:
    """The entry of the run in `folder` (raises LodestarError when its record is unreadable); its `auc` is the
    success-rate AUC of the surface its targets came from (out of fold when calibrated: `labels.targets_auc`)."""
    record = read_record(folder)
    choices = record.get("choices") or {}
    answer = str(record["result"].get("answer", ""))
    knowledge = record.get("knowledge") or [{}]
    favourability = record.get("favourability") or {}
    given = ((record.get("parameters") or {}).get("favourability") or {}).get("evidence_plan")
    return {"folder": str(Path(folder).resolve()), "created_utc": record.get("created_utc", ""),
            "question": record.get("question", ""), "answer": answer, "answer_text": str(choices.get(answer, "")),
            "deposit_model": knowledge[0].get("name", ""), "chosen": bool(knowledge[0].get("chosen")),
            "plan": "geologist" if given else "agent", "parameters": _parameters(record),
            "auc": targets_auc(favourability.get("validation")),
            "auc_of": targets_surface(favourability.get("validation")),
            "targets": len(favourability.get("targets") or []), "replans": []}


def _parameters(record: dict) -> dict:
    mapping = (record.get("parameters") or {}).get("favourability") or {}
    return {"area_share": mapping.get("area_share"), "calibrate": mapping.get("calibrate", ""),
            "favourable_units": mapping.get("favourable_units") or {}}


def replan_entry(folder) -> dict:
    """The entry of a surface re-made with a plan (its replan.json)."""
    path = Path(folder) / "replan.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise LodestarError(f"Cannot read {path}: {exc}.") from exc
    plan = data.get("plan") or {}
    return {"folder": str(Path(folder).resolve()), "plan": plan.get("by", ""), "method": plan.get("method", ""),
            "gamma": plan.get("gamma"), "layers": [s.get("layer") for s in plan.get("specs") or []],
            "auc": ((data.get("validation") or {}).get("knowledge") or {}).get("auc"),
            "targets": len(data.get("targets") or [])}


def read_entries(text: str) -> list[dict]:
    """The entries of a project's text ('' or unreadable text: none)."""
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return []
    return list(data.get("runs") or []) if isinstance(data, dict) and data.get("format") == FORMAT else []


def entries_text(entries: list[dict]) -> str:
    return json.dumps({"format": FORMAT, "runs": entries}, ensure_ascii=False)


def with_run(entries: list[dict], folder) -> list[dict]:
    """`entries` with the run in `folder` added (or refreshed, keeping its re-made surfaces), newest first."""
    entry = run_entry(folder)
    old = next((e for e in entries if e.get("folder") == entry["folder"]), None)
    if old is not None:
        entry["replans"] = list(old.get("replans") or [])
    rest = [e for e in entries if e.get("folder") != entry["folder"]]
    return sorted([entry, *rest], key=lambda e: e.get("created_utc", ""), reverse=True)


def with_replan(entries: list[dict], run_folder, folder) -> list[dict]:
    """`entries` with the surface re-made in `folder` listed under its run (the run added when not yet listed)."""
    run = str(Path(run_folder).resolve())
    if not any(e.get("folder") == run for e in entries):
        entries = with_run(entries, run_folder)
    replan = replan_entry(folder)
    return [dict(e, replans=[*[r for r in e.get("replans") or [] if r["folder"] != replan["folder"]], replan])
            if e.get("folder") == run else e for e in entries]
