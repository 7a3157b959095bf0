"""The replay back-end: every role answered with the decisions of a run record, in call order.

It makes no model call; fed back through the same loop, the recorded decisions give the same tools,
controller verdicts, graph and localization, so a replay's output files match the recorded run's.
"""
from __future__ import annotations

import json

from ..plugin.errors import LodestarError
from ..plugin.favourability.evidence import EvidenceSpec
from ..plugin.reason.contract import (
    BudgetExhausted,
    ChainNode,
    Judgement,
    PlanStep,
    ReasonerError,
    ServerRefused,
    ToolCall,
    Verdict,
)

_DECODE = {
    "plan": lambda v: [PlanStep.from_dict(s) for s in v],
    "propose": ToolCall.from_dict,
    "observe": Judgement.from_dict,
    "verify": Verdict.from_dict,
    "localization_params": dict,
    "evidence_plan": lambda v: [EvidenceSpec.from_dict(s) for s in v],
    "target_verdicts": list,
}


class ReplayReasoner:
    """Answers every role with the decisions of a record, in call order; makes no model call.

    Its `name` is the recorded planner back-end's, so everything derived from it comes out the same.
    """

    def __init__(self, record: dict):
        self.record = record
        self.name = str(record.get("backend", {}).get("planner", {}).get("backend", "replay"))
        self._queue: dict[tuple[str, str], list[dict]] = {}
        for entry in record.get("trace", []):
            self._queue.setdefault((entry["role"], entry["method"]), []).append(entry)
        self._used = {key: 0 for key in self._queue}

    def _next(self, role: str, method: str):
        key = (role, method)
        entries = self._queue.get(key, [])
        position = self._used.get(key, 0)
        if position >= len(entries):
            raise ReasonerError(f"The record holds no further {role} {method} decision; the replay diverged.")
        self._used[key] = position + 1
        entry = entries[position]
        if "error" in entry:
            if entry.get("server"):
                raise ServerRefused(entry["error"])
            if entry.get("budget"):
                raise BudgetExhausted(entry["error"])
            raise ReasonerError(entry["error"])
        try:
            return _DECODE[method](entry["value"])
        except (KeyError, TypeError, ValueError, AttributeError, LodestarError) as exc:
            raise ReasonerError(f"The run record's {role} {method} decision {position + 1} cannot be read "
                                f"({type(exc).__name__}: {str(exc)[:200]}); replay the record.json a run wrote, "
                                "unedited.") from None

    def plan(self, ws):
        return self._next("planner", "plan")

    def propose(self, ws, step, feedback, attempt):
        return self._next("executor", "propose")

    def observe(self, ws, step, outcome):
        return self._next("executor", "observe")

    def verify(self, ws, chain: list[ChainNode]):
        return self._next("verifier", "verify")

    def localization_params(self, ws):
        return self._next("planner", "localization_params")

    def evidence_plan(self, ws):
        return self._next("planner", "evidence_plan")

    def target_verdicts(self, ws, measured):
        return self._next("verifier", "target_verdicts")

    def usage(self) -> dict:
        return json.loads(json.dumps(self.record.get("usage", {})))

    def public_settings(self) -> dict:
        return {"backend": "replay", "of": self.name}

    def prompt_hashes(self) -> dict:
        return dict(self.record.get("prompt_hashes", {}))
