"""STA-CoT: reasoning chain construction (Algorithm 1) and adaptive stepwise refinement (Algorithm 2).

`Engine.run()` plans, executes every plan step (one tool call per turn, each output checked by the
rule-based controller with at most `max_attempts` attempts and escalating feedback), verifies the
chain, re-executes the steps the verifier names (plus the later relation / integration steps that
read them) for up to `max_rounds` rounds, and settles the answer: the first verified candidate, else
a majority vote over the rounds' candidates, else "Failed".

Choices the paper leaves open, made here:
- the repairs of the last round are not run, since nothing would verify them;
- a vote tie goes to the tied answer of the latest round (its chain is the most corrected one);
- a step whose executor says Global_Inference "end" ends chain construction; steps not run are
  recorded as skipped;
- a back-end failure (`ReasonerError`) fails the step or round visibly in the chain; a spent budget
  (`BudgetExhausted`) stops all further model calls and the answer is settled from what exists.
"""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Callable

import geopandas as gpd

from ..errors import Cancelled, LodestarError
from ..labels import humanize, layer_of, roles_words
from ..pathfinders import model_layers, off_model_note
from ..progress import SILENT, Progress
from ..zones import zones_frame
from . import toolbox
from .contract import (
    FAILED,
    INSUFFICIENT,
    MAX_PLAN_STEPS,
    TOOLSET,
    ZONE_TOOLS,
    BudgetExhausted,
    ChainNode,
    Judgement,
    Observation,
    PlanStep,
    ReasonerError,
    Roles,
    ServerRefused,
    ToolOutcome,
    Verdict,
)
from .control import check_zones, limits_from
from .questions import yes_no_letters
from .workspace import Workspace, silent_note


@dataclass
class Outcome:
    """What the loop settled on."""

    answer: str
    valid: bool
    voted: bool
    rounds: int
    plan: list = field(default_factory=list)  # PlanStep
    verdicts: list = field(default_factory=list)  # {"round", "verdict", "reexecuted"}
    candidates: list = field(default_factory=list)  # (round, letter)
    votes: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    chains: list = field(default_factory=list)  # chain (list of ChainNode dicts) as verified in each round


class Engine:
    """One STA-CoT run over a workspace. `emit(event_dict)` receives live events; `trace` the decisions."""

    def __init__(self, roles: Roles, ws: Workspace, *, max_rounds: int = 3, max_attempts: int = 3,
                 progress: Progress = SILENT, emit: Callable[[dict], None] | None = None,
                 controller: dict | None = None):
        if max_rounds < 1:
            raise LodestarError("The number of verification rounds must be at least 1.")
        self.roles = roles
        self.ws = ws
        self.max_rounds = int(max_rounds)
        self.max_attempts = max(1, int(max_attempts))
        self.progress = progress
        self._emit = emit
        self.limits = limits_from(controller, self.max_attempts, ws.raster_set.grid.crs is not None)
        self.budget_spent = False
        self.stop_reason = ""  # why no further model calls are made (a spent budget, a server that refused)
        self.server_refused = False  # the stop was a model server failing for good, not a spent budget
        self.trace: list[dict] = []  # every model decision in call order (for records and replay)
        self.timings: dict = {"tools_s": 0.0, "tool_calls": 0}
        self._percent = 0.0
        # tools report their own 0-100; the run's bar moves per step, so tools only get cancel and log
        self._tool_progress = Progress(on_log=progress.log, is_cancelled=progress.cancelled)

    # -- events and decisions -------------------------------------------------------------------
    def emit(self, kind: str, **payload) -> None:
        if self._emit is not None:
            self._emit(dict(kind=kind, **payload))

    def _ask(self, role: str, method: str, *args):
        """One model call through a role's reasoner, cancellation checked before and after."""
        if self.budget_spent:
            raise BudgetExhausted(self.stop_reason or "No further model calls in this run.")
        self.progress.check()
        reasoner = getattr(self.roles, role)
        try:
            value = getattr(reasoner, method)(self.ws, *args)
        except Cancelled:
            raise
        except LodestarError as exc:
            if isinstance(exc, BudgetExhausted):
                self.budget_spent = True
                self.stop_reason = str(exc)
                self.server_refused = isinstance(exc, ServerRefused)
                entry = {"role": role, "method": method, "error": str(exc), "budget": True}
                self.trace.append(dict(entry, server=True) if self.server_refused else entry)
                raise BudgetExhausted(str(exc)) from exc
            self.trace.append({"role": role, "method": method, "error": str(exc)})
            raise ReasonerError(str(exc)) from exc
        self.progress.check()
        self.trace.append({"role": role, "method": method, "value": _dump(value)})
        return value

    def ask_localization_params(self) -> dict:
        """The localization tool's question to the planner, asked like every decision (traced, cancellable,
        within the run's budget). Raises ReasonerError, or BudgetExhausted once the budget is spent."""
        return self._ask("planner", "localization_params")

    def ask_evidence_plan(self) -> list:
        """The planner's evidence specs for the favourability surface, asked like every decision."""
        return self._ask("planner", "evidence_plan")

    def ask_target_verdicts(self, measured: list) -> list:
        """The verifier's judgement of each target from the executor's measurements of it (`target_evidence`),
        asked like every decision: a list of {"items": [{"id", "status", "evidence"}], "verdict", "why"}."""
        return self._ask("verifier", "target_verdicts", measured)

    def _step_progress(self, fraction: float) -> None:
        self._percent = max(self._percent, min(95.0, fraction))
        self.progress.set(self._percent)

    # -- planning ---------------------------------------------------------------------------------
    def make_plan(self) -> list[PlanStep]:
        """Ask the planner and validate its plan: known tools and layers, 1-based indices."""
        raw = self._ask("planner", "plan")
        plan, notes = validate_plan(raw, self.ws)
        for note in notes:
            self.progress.log(note)
        self.emit("plan", steps=[s.to_dict() for s in plan], notes=notes)
        return plan

    # -- execution -------------------------------------------------------------------------------
    def execute_step(self, step: PlanStep, feedback: str = "", round_no: int = 0) -> ChainNode:
        """Run one plan step: propose -> tool -> controller, at most max_attempts, then observe."""
        started_step = time.perf_counter()
        verdicts, calls = [], []
        accepted = None
        error = ""
        external = feedback
        current = feedback
        for attempt in range(1, self.max_attempts + 1):
            try:
                call = self._ask("executor", "propose", step, current, attempt)
            except BudgetExhausted:
                error = f"Not executed: no further model calls ({self.stop_reason})."
                break
            except ReasonerError as exc:
                error = f"The executor gave no usable tool call: {exc}"
                current = _join(external, f"Your previous answer could not be used: {exc}")
                verdicts.append({"attempt": attempt, "ok": False, "errors": [{"code": "model_output",
                                                                              "message": str(exc)}]})
                continue
            calls.append(call.to_dict())
            started = time.perf_counter()
            run = toolbox.run_tool(self.ws, step.index, call, self._tool_progress)
            self.timings["tools_s"] += time.perf_counter() - started
            self.timings["tool_calls"] += 1
            if run.error:
                verdict: dict = {"attempt": attempt, "ok": False,
                                 "errors": [{"code": "tool_error", "message": run.error}], "feedback": run.error}
            else:
                verdict = check_zones(self.ws, call, run.zones, run.stated, attempt, self.limits)
            verdicts.append(verdict)
            self.emit("controller", round=round_no, step=step.index, attempt=attempt, verdict=verdict,
                      call=call.to_dict())
            accepted = (call, run, verdict)
            if verdict["ok"]:
                error = ""
                break
            error = "; ".join(e["message"] for e in verdict.get("errors", []))
            current = _join(external, verdict.get("feedback", error))
        if accepted is not None and not accepted[2]["ok"] and not accepted[1].error \
                and "enforced_ids" not in accepted[2]:
            # later attempts gave no tool call: the kept zones still go through the final enforcement
            call, run, verdict = accepted
            final = check_zones(self.ws, call, run.zones, run.stated, self.limits.max_attempts, self.limits)
            verdict.update({k: final[k] for k in ("enforced_ids", "enforced_dropped") if k in final})
        if accepted is not None and "enforced_ids" in accepted[2]:
            run = accepted[1]
            run.zones = run.zones[run.zones["zone_id"].isin(accepted[2]["enforced_ids"])].reset_index(drop=True)
            run.log.append("The controller's limits were enforced after the last attempt: dropped "
                           + ", ".join(f"{z} ({why})" for z, why in accepted[2]["enforced_dropped"].items()) + ".")
            error = ""
        observation = self._observe(step, accepted, verdicts, calls, error)
        zones = accepted[1].zones if accepted and not accepted[1].error else zones_frame([], self.ws.raster_set.crs)
        node = ChainNode(step, observation)
        self.ws.put(node, zones)
        self.emit("step", round=round_no, step=step.index, purpose=step.purpose, observation=observation.to_dict(),
                  seconds=round(time.perf_counter() - started_step, 3))
        return node

    def _observe(self, step: PlanStep, accepted, verdicts: list, calls: list, error: str) -> Observation:
        if accepted is None:
            return Observation(step.index, step.tool, list(step.layers), error or "The step could not be run.",
                               controller=verdicts, attempts=len(verdicts), error=error or "no tool call",
                               calls=calls)
        call, run, verdict = accepted
        mismatch = [self.ws.raster_set.role_warnings[n] for n in call.layers if n in self.ws.raster_set.role_warnings]
        run.log.extend(note for note in mismatch if note not in run.log)  # the executor judges knowing it
        evidence = ""
        if call.tool in ZONE_TOOLS and not run.error:
            path = self.ws.evidence_dir / f"step{step.index:02d}.png"
            try:
                evidence = toolbox.draw_evidence(self.ws, call.layers, run.zones, path)
            except LodestarError as exc:
                run.log.append(f"No evidence image: {exc}")
        outcome = ToolOutcome(call.tool, list(call.layers), _zone_rows(run.zones), run.stats, run.log, evidence,
                              verdict, run.error)
        zone_ids = list(run.zones["zone_id"]) if len(run.zones) else list(run.referenced)
        try:
            judgement = self._ask("executor", "observe", step, outcome)
        except (ReasonerError, BudgetExhausted) as exc:
            judgement = Judgement(f"The tool ran but its result could not be judged: {exc}", "No")
            error = error or str(exc)
        if judgement.sub_inference == "Yes" and not any(v.get("ok") for v in verdicts):
            judgement = Judgement(f"{judgement.rationale} The controller rejected all {len(verdicts)} attempts, so "
                                  "this step cannot support the answer.", "No", judgement.global_inference)
        rationale = " ".join(mismatch + [judgement.rationale])  # the step's text says it too
        return Observation(step.index, call.tool, list(call.layers), rationale, zone_ids, evidence,
                           judgement.sub_inference, judgement.global_inference, verdicts, len(verdicts),
                           error, calls, _small_stats(run.stats))

    def build_chain(self, plan: list[PlanStep], round_no: int = 0) -> None:
        """Algorithm 1: execute every plan step in order, appending each node to the memory cache."""
        for i, step in enumerate(plan):
            self.progress.check()
            self._step_progress(5 + 60 * i / max(1, len(plan)))
            node = self.execute_step(step, "", round_no)
            if self.budget_spent:
                break
            if node.observation.global_inference == "end" and i < len(plan) - 1:
                skipped = [s.index for s in plan[i + 1:]]
                self.progress.log(f"Step {step.index} concluded the chain; steps {skipped} were skipped.")
                self.emit("skipped", steps=skipped)
                break

    # -- verification and refinement ----------------------------------------------------------------
    def run(self) -> Outcome:
        """Algorithm 2 (with Algorithm 1 inside)."""
        outcome = Outcome(FAILED, False, False, 0)
        try:
            plan = self.make_plan()
        except (ReasonerError, BudgetExhausted) as exc:
            outcome.notes.append(f"No plan: {exc}")
            self.emit("done", answer=FAILED, valid=False, voted=False, rounds=0, reason=str(exc))
            return outcome
        outcome.plan = plan
        outcome.notes += [f"Warning: {info.name} {info.silent}: it shows no anomaly and can test no evidence item."
                          for info in self.ws.layers if info.silent]  # what it cannot show is no evidence either way
        if not plan:
            outcome.notes.append("The planner gave no usable step.")
            return self._settle(outcome)
        self.build_chain(plan, 0)
        for round_no in range(1, self.max_rounds + 1):
            if self.budget_spent:
                outcome.notes.append(f"No further model calls ({self.stop_reason}); the answer is settled from the "
                                     "rounds done.")
                break
            outcome.rounds = round_no
            self._step_progress(65 + 25 * (round_no - 1) / self.max_rounds)
            chain_now = [n.to_dict() for n in self.ws.chain]
            self.ws.last_round = round_no == self.max_rounds
            try:
                verdict = self._ask("verifier", "verify", list(self.ws.chain))
            except (ReasonerError, BudgetExhausted) as exc:
                outcome.notes.append(f"Round {round_no}: no verdict ({exc}).")
                outcome.verdicts.append({"round": round_no, "verdict": None, "error": str(exc), "reexecuted": []})
                outcome.chains.append(chain_now)
                self.emit("verdict", round=round_no, verdict=None, error=str(exc))
                continue
            verdict = _checked_verdict(verdict, self.ws)
            outcome.chains.append(chain_now)
            if verdict.answer is not None:
                outcome.candidates.append((round_no, verdict.answer))
            entry = {"round": round_no, "verdict": verdict.to_dict(), "reexecuted": []}
            outcome.verdicts.append(entry)
            self.emit("verdict", round=round_no, verdict=verdict.to_dict())
            if verdict.valid and verdict.answer is not None:
                outcome.answer, outcome.valid = verdict.answer, True
                return self._settle(outcome)
            if verdict.answer is None and verdict.missing:
                outcome.answer, outcome.valid = INSUFFICIENT, verdict.valid
                outcome.notes.append("Insufficient evidence: " + _insufficient_words(self.ws, verdict)
                                     + off_model_note(self.ws.layers, self.ws.deposit_model, verdict.missing)
                                     + silent_note(self.ws.layers, verdict.missing)
                                     + _unexamined_note(self.ws, verdict.missing))
                return self._settle(outcome)
            if round_no == self.max_rounds:
                break
            entry["reexecuted"] = self.refine(plan, verdict, round_no)
        return self._settle(outcome)

    def refine(self, plan: list[PlanStep], verdict: Verdict, round_no: int) -> list[int]:
        """Re-execute the named steps with their feedback (Eq. 7), then the later steps that read them."""
        by_index = {s.index: s for s in plan}
        named = sorted(i for i in verdict.feedback if i in by_index)
        unknown = sorted(set(verdict.feedback) - set(by_index))
        if unknown:
            self.progress.log(f"Verifier feedback names unknown steps {unknown}; ignored.")
        if not named:
            return []
        first = named[0]
        dependents = [s.index for s in plan if s.index > first and s.index not in named
                      and s.tool in ("spatial_relations", "integrate_evidence")
                      and self.ws.node(s.index) is not None]
        redo = sorted(set(named) | set(dependents))
        for index in redo:
            if self.budget_spent:
                break
            feedback = verdict.feedback.get(index, "An earlier step was revised; update this step to match it.")
            self.execute_step(by_index[index], feedback, round_no)
        return redo

    def _settle(self, outcome: Outcome) -> Outcome:
        if not outcome.valid:
            if outcome.candidates:
                counts = Counter(letter for _, letter in outcome.candidates)
                best = max(counts.values())
                tied = {letter for letter, n in counts.items() if n == best}
                latest = [letter for _, letter in outcome.candidates if letter in tied][-1]
                outcome.answer, outcome.voted = latest, True
                outcome.votes = dict(counts)
                self.emit("vote", candidates=[{"round": r, "answer": a} for r, a in outcome.candidates],
                          counts=dict(counts), answer=latest)
            else:
                outcome.answer = FAILED
        else:
            outcome.votes = dict(Counter(letter for _, letter in outcome.candidates))
        self.emit("usage", usage=self.roles.usage())
        return outcome


# -- helpers --------------------------------------------------------------------------------------------
def validate_plan(raw, ws: Workspace) -> tuple[list[PlanStep], list[str]]:
    """Keep the usable steps of a planner's output: known tools, known layers; renumbered 1..N."""
    notes: list[str] = []
    plan: list[PlanStep] = []
    names = set(ws.layer_names())
    for number, item in enumerate(list(raw or [])[:MAX_PLAN_STEPS * 2], start=1):
        try:
            step = item if isinstance(item, PlanStep) else PlanStep.from_dict(item)
        except (TypeError, ValueError, AttributeError) as exc:
            notes.append(f"Plan item {number} is malformed ({exc}); dropped.")
            continue
        layers = [name for name in step.layers if name in names]
        dropped = [name for name in step.layers if name not in names]
        if dropped:
            notes.append(f"Plan step {step.index}: unknown layers {dropped} dropped.")
        if step.tool not in TOOLSET:
            notes.append(f"Plan step {step.index}: unknown tool {step.tool!r}; the step is dropped.")
            continue
        if step.tool in ZONE_TOOLS and not layers:
            notes.append(f"Plan step {step.index}: no known layer for {step.tool}; the step is dropped.")
            continue
        plan.append(PlanStep(len(plan) + 1, step.purpose, layers, step.layers_why, step.tool, step.tool_why,
                             step.expected, dict(step.params or {}), step.evidence, step.level))
        if len(plan) == MAX_PLAN_STEPS:
            notes.append(f"The plan is cut to {MAX_PLAN_STEPS} steps.")
            break
    return plan, notes


def _checked_verdict(verdict: Verdict, ws: Workspace) -> Verdict:
    """The verifier's claims checked against the chain itself.

    A verdict whose answer is not one of the choices carries no candidate; a chain whose steps all
    failed cannot be verified; evidence claimed as supported needs zones marked in the chain.
    """
    if verdict.answer is not None and verdict.answer not in ws.choices:
        return replace(verdict, valid=False, answer=None, core={}, rationale=f"{verdict.rationale} (answer "
                       f"{verdict.answer!r} is not one of {sorted(ws.choices)})")
    if ws.chain and all(node.observation.error for node in ws.chain):
        return replace(verdict, valid=False, answer=None, core={}, rationale=f"{verdict.rationale} (rejected: every "
                       "step of the chain failed, so nothing in it can support an answer)")
    if any(verdict.critical.values()) and not len(ws.zones):
        return replace(verdict, valid=False, answer=None, core={}, rationale=f"{verdict.rationale} (rejected: "
                       "evidence is claimed as supported but the chain marked no zone)")
    untested = _untested(verdict, ws)
    if untested:
        roles = sorted({role for item in untested for role in item["roles"]})
        return replace(verdict, answer=None, core={}, missing=roles, rationale=f"{verdict.rationale} (not an "
                       f"answer: it rests on {', '.join(item['id'] for item in untested)}, which no layer could test)")
    return verdict


def _examined(ws: Workspace) -> set:
    """Names of the layers a step of the chain looked at."""
    return {name for node in ws.chain for name in list(node.step.layers) + list(node.observation.layers)}


def _untested(verdict: Verdict, ws: Workspace) -> list[dict]:
    """The deposit model's critical items a "No" rests on when every one of them could not be tested: no layer of
    the item's roles both varies over the data (`workspace.silence`) and was looked at by a step of the chain.
    Empty when the answer is not "No", or when some critical item held unsupported could be tested (the "No" then
    rests on that one): evidence that cannot speak is never taken as absent."""
    no = yes_no_letters(ws.choices)[1]
    if no is None or verdict.answer != no:
        return []
    items = {item["id"]: item for item in ws.deposit_model.get("evidence", []) if item.get("level") == "critical"}
    unsupported = [items[key] for key, ok in verdict.critical.items() if not ok and key in items]
    examined = _examined(ws)
    untested = [item for item in unsupported
                if not any(info.role in item["roles"] and not info.silent and info.name in examined
                           for info in model_layers(ws.layers, ws.deposit_model))]
    return untested if unsupported and len(untested) == len(unsupported) else []


def _insufficient_words(ws: Workspace, verdict: Verdict) -> str:
    """Why the critical evidence of `verdict.missing`'s roles is untested: no layer given can test it, or the layers
    of those roles that vary and were looked at could not test it where the verifier weighed it (one holding no data
    there)."""
    examined = _examined(ws)
    tried = [info.name for info in model_layers(ws.layers, ws.deposit_model)
             if info.role in verdict.missing and not info.silent and info.name in examined]
    if not tried:
        return f"the critical evidence needs {layer_of(verdict.missing)}; add one to answer the question."
    where = f" ({humanize(verdict.place)})" if verdict.place else ""
    return (f"the critical evidence of {roles_words(verdict.missing)} cannot be tested where the verifier weighed "
            f"it{where}: {', '.join(tried)} could not show it there (the verdict says why); give "
            f"{layer_of(verdict.missing)} that covers the place to answer the question.")


def _unexamined_note(ws: Workspace, roles) -> str:
    """A sentence naming the layers of `roles` that vary but that no step of the chain looked at; '' when none."""
    examined = _examined(ws)
    left = [info.name for info in model_layers(ws.layers, ws.deposit_model)
            if info.role in roles and not info.silent and info.name not in examined]
    return f" Layers of that role no step looked at: {', '.join(left)}." if left else ""


def _join(*parts: str) -> str:
    return "\n".join(p for p in parts if p)


def _zone_rows(zones: gpd.GeoDataFrame) -> list[dict]:
    if not len(zones):
        return []
    return [{k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()}
            for row in zones.drop(columns="geometry").to_dict("records")]


def _small_stats(stats: dict) -> dict:
    """The statistics kept in the chain (bounded size)."""
    out = {}
    for key, value in stats.items():
        if key == "relations":
            value = value[:20]
        out[key] = value
    return toolbox.jsonable(out)


def _dump(value):
    if isinstance(value, list):
        return [_dump(v) for v in value]
    if hasattr(value, "to_dict"):
        return value.to_dict()
    return toolbox.jsonable(value)
