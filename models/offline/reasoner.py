"""The offline back-end: a rule-based prospectivity reasoner (no network, deterministic) answering every model role
of the STA-CoT loop from the retrieved deposit model (`resources/knowledge/deposit_models.json`).

Each role lives in its own module: the planner (planner.py), the executor and observer (executor.py), the
verifier (verifier.py, its core search in cores.py). A run's measurements are kept in one `Scene` (scene.py),
made anew by each plan (or on first use for a workspace another back-end planned). Every decision number is a
field of `OfflineSettings` (settings.py) with its reason and provenance, listed in the run record."""
from __future__ import annotations

from dataclasses import replace

from shapely.geometry.base import BaseGeometry

from ...plugin.favourability.knowledge import knowledge_specs
from ...plugin.progress import SILENT, Progress
from ...plugin.reason.contract import Judgement, PlanStep, ToolCall, ToolOutcome, Verdict, empty_usage
from . import executor, planner, targets, verifier
from .cores import CoreSearch
from .scene import Scene
from .settings import OfflineSettings


class OfflineReasoner:
    """The rule-based reasoner; one instance answers planner, executor and verifier."""

    name = "offline"

    def __init__(self, settings: OfflineSettings | None = None, progress: Progress = SILENT, **overrides):
        """`overrides`: settings by name over `settings` (else the defaults), e.g. OfflineReasoner(alpha=0.01)."""
        self.settings = replace(settings or OfflineSettings(), **overrides)
        self.progress = progress  # the run's: cancel is checked in every loop over layers, zones, cores and places
        self._scene: Scene | None = None
        # the outline of the core the latest verdict weighed (refinements look around it)
        self._verdict_core: BaseGeometry | None = None

    def scene(self, ws) -> Scene:
        """The run's Scene: made by `plan`, or on first use when another back-end planned."""
        if self._scene is None or self._scene.ws is not ws:
            self._scene, self._verdict_core = Scene(ws, self.settings, self.progress), None
        return self._scene

    # -- interface bookkeeping ------------------------------------------------------------------------
    def usage(self) -> dict:
        return empty_usage()

    def public_settings(self) -> dict:
        named = ("anomaly_sigma", "colour_level", "min_area_m2", "max_regions", "marginal_factor", "refine_factor",
                 "geochem_percentile", "fault_buffer_m", "alpha")
        return {"backend": self.name, **{name: getattr(self.settings, name) for name in named}}

    def decision_settings(self) -> list[dict]:
        """Every decision threshold of this reasoner with its value, reason and provenance (for the run record)."""
        return self.settings.described()

    def prompt_hashes(self) -> dict:
        return {}

    # -- the roles --------------------------------------------------------------------------------------
    def plan(self, ws) -> list[PlanStep]:
        self._scene, self._verdict_core = Scene(ws, self.settings, self.progress), None
        return planner.plan(self._scene)

    def propose(self, ws, step: PlanStep, feedback: str, attempt: int) -> ToolCall:
        scene = self.scene(ws)
        return executor.propose(scene, step, feedback, attempt, lambda: self._core_bounds(scene))

    def observe(self, ws, step: PlanStep, outcome: ToolOutcome) -> Judgement:
        return executor.observe(self.scene(ws), step, outcome)

    def verify(self, ws, chain) -> Verdict:
        verdict, self._verdict_core = verifier.verify(self.scene(ws), chain)
        return verdict

    def _core_bounds(self, scene: Scene):
        """Map bounds around the core of this reasoner's latest verdict, else the best core now (the core grown by
        its size and the coincidence reach): every step of a refinement looks around the same core, whatever its
        own new zones change."""
        geometry = self._verdict_core
        if geometry is None:  # no verdict of this reasoner's yet (a model verifies): the best core now
            best = CoreSearch(scene).best()
            if best is None:
                return None
            geometry = best[0].geometry
        reach = scene.reach(max((scene.near_m(i) for i in scene.ws.deposit_model.get("evidence", [])),
                                default=self.settings.default_near_m))
        xmin, ymin, xmax, ymax = geometry.bounds
        pad = max(xmax - xmin, ymax - ymin) + reach
        gx0, gy0, gx1, gy1 = scene.ws.raster_set.grid.bounds
        return [max(gx0, xmin - pad), max(gy0, ymin - pad), min(gx1, xmax + pad), min(gy1, ymax + pad)]

    # -- favourability ---------------------------------------------------------------------------------
    def evidence_plan(self, ws) -> list:
        """Each layer's transformation, membership and weight from the deposit model (and the units the
        user named), with the reason; layers it cannot use are left out (the engine says why)."""
        return knowledge_specs(ws.layers, ws.deposit_model, ws.favourable_units)[0]

    def target_verdicts(self, ws, measured: list) -> list:
        """Each target judged by the test a candidate core is weighed by, made at the target (targets.py)."""
        return targets.judge_targets(self.scene(ws), measured)

    # -- localization -----------------------------------------------------------------------------------
    def localization_params(self, ws) -> dict:
        """The deposit model's localization defaults (seed C.4 parameters)."""
        params = dict(ws.deposit_model.get("localization", {}))
        params["area_type_weights"] = dict(params.get("area_type_weights", {}))
        return params
