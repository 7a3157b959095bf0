"""Model back-ends: they implement the engine's contract (`plugin/reason/contract.py`) and depend on the core.

The core never imports them: an analysis is given them (`BACKENDS`: the reasoners of a run, `build_reasoners`,
and SAM outlines, `refine_zones`). `run_analysis` here is the engine's with these back-ends, the one the dock,
the Processing algorithms, batch runs and scripts call.
"""
from __future__ import annotations

from ..plugin.analysis import OFFLINE_MODEL, AnalysisRequest, AnalysisResult, BackendSettings
from ..plugin.errors import LodestarError
from ..plugin.progress import SILENT, Progress
from ..plugin.reason.contract import Backends, Roles
from ..plugin.runs import run as engine_run
from .offline import OfflineReasoner
from .openai_reasoner import OpenAIReasoner
from .replay import ReplayReasoner
from .sam import refine_zones

__all__ = ["BACKENDS", "OFFLINE_MODEL", "build_reasoners", "refine_zones", "run_analysis"]

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


BACKENDS = Backends(build_reasoners, refine_zones)
"""The back-ends an analysis runs with."""


def run_analysis(request: AnalysisRequest, progress: Progress = SILENT, on_event=None) -> AnalysisResult:
    """`plugin.runs.run.run_analysis` with these back-ends (BACKENDS)."""
    return engine_run.run_analysis(request, progress, on_event, backends=BACKENDS)
