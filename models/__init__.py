"""Model back-ends: they implement the engine's contract (`plugin/engine/contract.py`) and depend on the core.

The core never imports them at load time: the engine (`plugin/engine/run.py`) reaches this package
lazily, for the reasoners of a run (`build_reasoners`) and for SAM outlines (`refine_zones`).
"""
from __future__ import annotations

from ..plugin.analysis import OFFLINE_MODEL, BackendSettings
from ..plugin.engine.contract import Roles
from ..plugin.errors import LodestarError
from ..plugin.progress import SILENT, Progress
from .offline import OfflineReasoner
from .openai_reasoner import OpenAIReasoner
from .replay import ReplayReasoner
from .sam import refine_zones

__all__ = ["OFFLINE_MODEL", "build_reasoners", "refine_zones"]

def build_reasoners(settings: BackendSettings, progress: Progress = SILENT, replay: dict | None = None) -> Roles:
    """The reasoner of each role: the decisions of the run record `replay` when given, else from the
    settings (the offline reasoner unless the back-end is openai)."""
    if replay is not None:
        return Roles(*([ReplayReasoner(replay)] * 3))
    offline = OfflineReasoner(progress=progress)
    if settings.backend == "offline":
        return Roles(offline, offline, offline)
    if settings.backend != "openai":
        raise LodestarError(f"Unknown back-end {settings.backend!r}; use 'offline' or 'openai'.")
    chosen = {role: offline if (settings.models or {}).get(role, "") == OFFLINE_MODEL else None
              for role in ("planner", "executor", "verifier")}
    if all(v is offline for v in chosen.values()):
        return Roles(offline, offline, offline)
    remote = OpenAIReasoner(settings, progress)
    return Roles(*(chosen[r] or remote for r in ("planner", "executor", "verifier")))
