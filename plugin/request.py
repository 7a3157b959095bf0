"""The one request builder: plain values from the dock or a Processing algorithm in, an AnalysisRequest out.

The rules live here once: choices parsed from the question unless given, executor and verifier models
falling back to the planner's, the same token budget, a layer's legend and favourable side, and messages
that say what to do and where (each caller names its own places: a parameter key, a settings page).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .analysis import ROLES_OF_MODELS, AnalysisRequest, BackendSettings
from .engine.questions import parse_choices
from .errors import LodestarError
from .raster_io import LayerSpec
from .roles import check_role, guess_favourable

BACKENDS = ("offline", "openai")
WHERE = {"question": "in the request", "base_url": "in the settings", "planner": "in the settings",
         "sam_checkpoint": "in the settings"}
"""Where each value is given, as the messages name it; a caller passes its own names to replace these."""


@dataclass
class BackendValues:
    """The back-end as the user gave it, before any fallback applies."""

    backend: str = "offline"
    base_url: str = ""
    api_key: str = field(default="", repr=False)
    models: dict = field(default_factory=dict)  # role -> model name; a role left empty takes the planner's
    temperature: float = 0.05
    max_tokens: int | None = None  # None: the engine's default budget


def backend_problem(values: BackendValues, where: dict | None = None) -> str:
    """What stops `values` from reaching a model server, said as what to do; '' when nothing."""
    where = {**WHERE, **(where or {})}
    if values.backend not in BACKENDS:
        return f"Unknown back-end {values.backend!r}; choose {' or '.join(BACKENDS)}."
    if values.backend == "offline":
        return ""
    if not values.base_url.strip():
        return f"Set the model server's endpoint base URL {where['base_url']}."
    if not str(values.models.get("planner") or "").strip():
        return f"Name the planner model {where['planner']} (the executor and verifier take it when left empty)."
    return ""


def backend_settings(values: BackendValues, where: dict | None = None, *, checked: bool = True) -> BackendSettings:
    """The engine's settings for `values` (checked with `backend_problem` unless `checked` is False). Offline
    keeps the temperature and budget only; for a model server the executor and verifier models default to the
    planner's."""
    problem = backend_problem(values, where) if checked else ""
    if problem:
        raise LodestarError(problem)
    budget = {} if values.max_tokens is None else {"max_tokens": int(values.max_tokens)}
    if values.backend == "offline":
        return BackendSettings(temperature=float(values.temperature), **budget)
    planner = str(values.models.get("planner") or "").strip()
    models = {role: str(values.models.get(role) or "").strip() or planner for role in ROLES_OF_MODELS}
    return BackendSettings(backend=values.backend, base_url=values.base_url.strip(), api_key=values.api_key.strip(),
                           models=models, temperature=float(values.temperature), **budget)


def legend_beside(path) -> Path | None:
    """A categorical map's legend CSV kept beside it as `<stem>_legend.csv` (as in a case folder), or None."""
    legend = Path(path).with_name(f"{Path(path).stem}_legend.csv")
    return legend if legend.is_file() else None


def evidence_spec(path, role: str, name: str, favourable: str | None = None) -> LayerSpec:
    """A layer of an analysis: its legend beside it is used; `favourable` ('high' or 'low') when given, else
    guessed from its name (`guess_favourable`)."""
    path = Path(path)
    role = check_role(role)
    return LayerSpec(path, role, name, favourable or guess_favourable(path, role, name), legend_beside(path))


def build_request(layers: list[LayerSpec], question: str, output_dir, backend: BackendValues, *,
                  choices: dict | None = None, max_rounds: int = 3, case_id: str = "", deposits=None,
                  refine_with_sam: bool = False, sam_checkpoint=None, where: dict | None = None) -> AnalysisRequest:
    """The request for one question over `layers`; choices are parsed from the question unless given."""
    names = {**WHERE, **(where or {})}
    question = (question or "").strip()
    if not question:
        raise LodestarError(f"Ask a question {names['question']}, e.g. 'Can porphyry copper deposits be detected? "
                            "Answer: A. Yes B. No'.")
    settings = backend_settings(backend, where)
    return AnalysisRequest(layers=list(layers), question=question, output_dir=Path(output_dir),
                           choices=dict(choices) if choices else parse_choices(question), settings=settings,
                           max_rounds=int(max_rounds), case_id=case_id, deposits=Path(deposits) if deposits else None,
                           **_sam(refine_with_sam, sam_checkpoint, names))


def replay_request(record, output_dir, *, max_rounds: int = 3, refine_with_sam: bool = False, sam_checkpoint=None,
                   where: dict | None = None) -> AnalysisRequest:
    """The request that replays a run record with no model call."""
    names = {**WHERE, **(where or {})}
    return AnalysisRequest(layers=[], question="(replayed)", output_dir=Path(output_dir), max_rounds=int(max_rounds),
                           replay=Path(record), **_sam(refine_with_sam, sam_checkpoint, names))


def _sam(refine: bool, checkpoint, names: dict) -> dict:
    if refine and not checkpoint:
        raise LodestarError(f"Zone refinement with Segment Anything needs a checkpoint file {names['sam_checkpoint']}.")
    return {"refine_with_sam": bool(refine), "sam_checkpoint": Path(checkpoint) if refine else None}
