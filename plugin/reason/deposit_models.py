"""The deposit models a run may follow: the shipped ones and the user's own, and the one the geologist picks.

A user model is one JSON file per model (the knowledge base's model schema, `knowledge.py`), kept in the user's
profile (the dock and Processing pass its folder); it is checked as the shipped ones are, and may not reuse a shipped
model's id. `ranked_models` ranks all of them for a question as `retrieve` does; a model the geologist picks comes
first whatever the ranking (marked `chosen`), followed by the automatic choice, so the runner-up and why stay shown.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from ..errors import LodestarError
from ..files import write_text_atomic
from ..json_file import read_json
from ..tools.categorical import read_legend
from .knowledge import check_model, load_knowledge, retrieve
from .model_numbers import check_numbers

AUTOMATIC = ""
"""The request's `deposit_model` when the run chooses the model from the question and the layers."""
_ID = re.compile(r"^[a-z][a-z0-9_]{1,63}$")
MAX_MODEL_BYTES = 2 ** 20
"""The largest deposit model file: a model is a few KB (the shipped ones 5 to 10 KB)."""


def check_user_model(model, where: str, shipped_ids=None) -> dict:
    """The model, checked: the knowledge base's schema (a user's model may leave out the fields only shipped models
    must hold, and its numbers need no source: they are the user's), an id of lower-case letters, digits and '_'
    that no shipped model has, weights (0 or more) by known roles; raises LodestarError saying what to fix."""
    if not isinstance(model, dict):
        raise LodestarError(f"{where}: a deposit model is a JSON object (id, name, keywords, evidence, ...).")
    model_id = str(model.get("id", ""))
    if not _ID.match(model_id):
        raise LodestarError(f"{where}: the model's id must be 2-64 lower-case letters, digits or '_', starting with "
                            f"a letter (e.g. 'my_carlin'), not {model_id!r}.")
    shipped = set(shipped_ids if shipped_ids is not None else (m["id"] for m in load_knowledge()))
    if model_id in shipped:
        raise LodestarError(f"{where}: {model_id!r} is a shipped model's id; give your model its own id.")
    check_model(model, where, shipped=False)
    weights = (model.get("favourability") or {}).get("weights") or {}
    bad = {role: w for role, w in weights.items() if not isinstance(w, (int, float)) or w < 0}
    if bad:
        raise LodestarError(f"{where}: weights must be numbers of 0 or more; fix {', '.join(bad)}.")
    check_numbers(model, where)
    return model


def load_user_models(folder) -> tuple[list[dict], list[str]]:
    """(the models of `folder`'s *.json files, in name order, each tagged "source": "user"; a message per file
    refused). A missing folder holds none."""
    folder = Path(folder) if folder else None
    if folder is None or not folder.is_dir():
        return [], []
    shipped = [m["id"] for m in load_knowledge()]
    models, problems, seen = [], [], set()
    for path in sorted(folder.glob("*.json")):
        try:
            model = read_json(path, "the deposit model", MAX_MODEL_BYTES, "a model is a few KB")
        except LodestarError as exc:
            problems.append(f"{path.name}: not readable as JSON ({exc}); fix or remove it.")
            continue
        try:
            check_user_model(model, path.name, shipped)
        except LodestarError as exc:
            problems.append(str(exc))
            continue
        if model["id"] in seen:
            problems.append(f"{path.name}: another file already holds a model {model['id']!r}; give it its own id.")
            continue
        seen.add(model["id"])
        models.append(dict(model, source="user"))
    return models, problems


def save_user_model(model: dict, folder) -> Path:
    """Check `model` and write it to `folder`/<id>.json (atomically); returns the file."""
    model = {k: v for k, v in model.items() if k not in ("source", "score", "testable", "names", "chosen")}
    check_user_model(model, "The deposit model")
    path = Path(folder) / f"{model['id']}.json"
    return write_text_atomic(path, json.dumps(model, indent=1, ensure_ascii=False) + "\n")


def model_ids(user_models=()) -> list[str]:
    """The ids a run may be asked to follow: the shipped models', then the user's."""
    return [m["id"] for m in load_knowledge()] + [m["id"] for m in user_models]


def legend_units(layers) -> list[str]:
    """The unit names of the legends of the geological maps among `layers` (LayerSpecs), for ranking the deposit
    models by their host rocks; a legend that cannot be read names none here (the run says why when it reads it)."""
    units: list[str] = []
    for spec in layers:
        if spec.role == "geological_map" and spec.legend is not None:
            try:
                units += list(read_legend(spec.legend).values())
            except (LodestarError, OSError):
                continue
    return units


def ranked_models(question: str, roles, names=(), chosen: str = AUTOMATIC, user_models=(), top: int = 3,
                  units=()) -> list:
    """The deposit models for a run, best first (`retrieve` over the shipped and the user's models, with the
    legends' unit names `units`); `chosen`: a model id the geologist picked, put first and marked `chosen`, the
    automatic ranking after it."""
    models = load_knowledge() + [dict(m) for m in user_models]
    ranked = retrieve(question, roles, models, top=len(models), names=names, units=units)
    if not chosen:
        return ranked[:top]
    picked = next((m for m in ranked if m["id"] == chosen), None)
    if picked is None:
        raise LodestarError(f"No deposit model {chosen!r}; choose one of: {', '.join(m['id'] for m in models)}.")
    picked = {k: v for k, v in picked.items() if k != "stands_in"}  # the geologist's pick stands in for nothing
    return [dict(picked, chosen=True)] + [m for m in ranked if m["id"] != picked["id"]][:top - 1]
