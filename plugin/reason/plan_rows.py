"""The rows of the evidence plan editor: every layer of a run, in the plan or not, as an editable evidence spec.

A layer the run's plan weighs comes with its spec; a layer it left out comes with a starting spec of weight 0 (its
kind's usual transformation, the deposit model's fault distance for fault lines, no favourable unit yet) and the
reason it was left out, so the geologist can bring it in by giving it a weight (and naming its units). A plan is made
of the rows of positive weight (`plan_of_rows`); it is the agent's while it equals the run's plan, else the
geologist's.
"""
from __future__ import annotations

from dataclasses import replace

from ..decisions import CORE
from ..errors import LodestarError
from ..favourability.evidence import EvidenceSpec, Transform
from ..favourability.knowledge import DEFAULT_FAULT_DISTANCE, OTHER_UNITS
from ..favourability.overlay import OverlayMethod
from ..favourability.plan_file import EvidencePlan, recorded_plan
from .knowledge import load_knowledge

TRANSFORMS_OF_KIND: dict[str, tuple[Transform, ...]] = {
    "index": ("none", "percentile_rank", "log_percentile"), "categorical": ("units",),
    "vector": ("distance_m", "units"), "rgb": ("distance_m",)}
"""The transformations a layer of each kind can take."""
# decision numbers: their reasons and provenance are in plugin/decisions.py
MEMBERSHIP_DEFAULTS = CORE.membership_defaults


def plan_rows(record: dict) -> tuple[list[dict], EvidencePlan]:
    """([{"spec": a spec's dict (EvidenceSpec.to_dict), "reason": why it was left out ('' when in the plan), "units":
    the layer's legend names}], the run's plan) for every input layer of a run record: the plan's in its order, then
    the others in input order."""
    plan = recorded_plan(record)
    in_plan = {spec.layer: spec.to_dict() for spec in plan.specs}
    reasons = {row["layer"]: row["reason"] for row in (record.get("favourability") or {}).get("left_out") or []}
    infos = {info["name"]: info for info in record.get("layers") or []}
    knowledge = record.get("knowledge") or []
    fault = dict(DEFAULT_FAULT_DISTANCE)
    if knowledge:
        model = knowledge[0].get("model") or next((m for m in load_knowledge() if m["id"] == knowledge[0]["id"]), {})
        fault.update((model.get("favourability") or {}).get("fault_distance_m") or {})
    rows = []
    order = {name: i for i, name in enumerate(in_plan)}
    inputs = sorted(record.get("inputs") or [], key=lambda e: order.get(e["name"], len(order)))
    for entry in inputs:
        name = entry["name"]
        info = infos.get(name, {})
        units = list(dict.fromkeys(str(v) for v in (info.get("units") or {}).values()))
        spec = in_plan.get(name) or _starting_spec(name, entry.get("role", ""), info.get("kind") or entry.get("kind"),
                                                   info.get("favourable", "high"), fault)
        if spec is not None:
            rows.append({"spec": spec, "reason": "" if name in in_plan else reasons.get(name, ""), "units": units})
    return rows, plan


def _starting_spec(name: str, role: str, kind: str, favourable: str, fault: dict) -> dict | None:
    spec = {"layer": name, "role": role, "kind": kind, "weight": 0.0, "why": BROUGHT_IN}
    if kind == "index":
        return dict(spec, transform="percentile_rank", membership="invert" if favourable == "low" else "identity",
                    params={})
    if kind == "vector" and role == "structure":
        return dict(spec, transform="distance_m", membership="small",
                    params={"midpoint": float(fault["midpoint"]), "spread": float(fault["spread"])})
    if kind in ("categorical", "vector"):
        return dict(spec, transform="units", membership="identity", params={"units": [], "outside": OTHER_UNITS})
    return None  # a colour rendering: scored only by the zones the chain marks on it


AGENT_SAID = " The agent's reason, for its own setting: "
"""Joins the geologist's setting of an edited spec to the agent's reason for its own (`edited`)."""
SET_BY_YOU = "Set by you: "
BROUGHT_IN = "Left out of the run's plan; brought in by you."
"""The reason of a layer the plan left out, until it is edited (then its setting says LEFT_OUT)."""
LEFT_OUT = " (left out of the run's plan)"


def edited(spec: dict, **changes) -> dict:
    """A copy of a spec's dict with `changes` (weight, transform, membership, or the params midpoint, spread, units,
    outside); a new membership gets its usual spread, a units transformation its identity membership. A spec that
    changed says so in its `why` (the agent's reason was for the agent's setting)."""
    original = spec
    spec = dict(spec, params=dict(spec.get("params") or {}))
    for key, value in changes.items():
        if key in ("weight", "transform", "membership"):
            spec[key] = value
        else:
            spec["params"][key] = value
    if "weight" in changes:
        spec["weight"] = float(changes["weight"])
        if not spec["weight"] >= 0:
            raise LodestarError(f"{spec['layer']}: the weight must be zero or positive, not {spec['weight']:g}.")
    if spec["transform"] == "units":
        spec["membership"] = "identity"
        spec["params"] = {"units": list(spec["params"].get("units") or []),
                          "outside": spec["params"].get("outside", OTHER_UNITS)}
    elif "membership" in changes or "transform" in changes:
        spec["params"] = {k: v for k, v in spec["params"].items() if k in ("midpoint", "spread", "low", "high")}
        if spec["membership"] in MEMBERSHIP_DEFAULTS:
            spec["params"] = {**MEMBERSHIP_DEFAULTS[spec["membership"]], "midpoint": 1.0, **spec["params"]}
    if {k: v for k, v in spec.items() if k != "why"} != {k: v for k, v in original.items() if k != "why"}:
        spec["why"] = _edited_why(spec, str(original.get("why") or ""))
    return spec


def _edited_why(spec: dict, before: str) -> str:
    """The reason of a spec the geologist changed: its setting in words, then the agent's reason for its own."""
    try:
        made = EvidenceSpec.from_dict(spec)
        setting = f"{made.transformation_text}, {made.membership_text}"
    except LodestarError:  # a unit map whose units are still to be named
        setting = f"{spec['transform']}, {spec['membership']}"
    if AGENT_SAID in before:
        agent = before.split(AGENT_SAID, 1)[1]
    else:  # the agent's own reason, unless the geologist's (an earlier edit) or a left-out layer's stock reason
        agent = "" if before.startswith(SET_BY_YOU) or before == BROUGHT_IN else before
    mine = before.split(AGENT_SAID, 1)[0]
    left_out = LEFT_OUT if before == BROUGHT_IN or (before.startswith(SET_BY_YOU) and LEFT_OUT in mine) else ""
    return (f"{SET_BY_YOU}{setting}, weight {float(spec['weight']):g}{left_out}."
            + (f"{AGENT_SAID}{agent}" if agent else ""))



def usable_specs(rows: list[dict]) -> list[EvidenceSpec]:
    """The specs of the rows of positive weight, checked (a unit map with no unit named is refused, saying what
    to do)."""
    specs = []
    for row in rows:
        spec = row["spec"]
        if float(spec.get("weight", 0)) <= 0:
            continue
        if spec["transform"] == "units" and not (spec.get("params") or {}).get("units"):
            raise LodestarError(f"{spec['layer']}: name its favourable units (a weighted unit map needs them), or "
                                "give it weight 0.")
        specs.append(EvidenceSpec.from_dict(spec))
    return specs


def plan_of_rows(rows: list[dict], method: OverlayMethod, gamma: float, agent: EvidencePlan) -> EvidencePlan:
    """The plan of the rows of positive weight, combined by `method` (and `gamma`); the agent's when it equals
    `agent`, else the geologist's."""
    plan = EvidencePlan(usable_specs(rows), method, gamma)
    return agent if _setting(plan) == _setting(agent) else replace(plan, by="geologist")


def _setting(plan: EvidencePlan) -> dict:
    """A plan's dict without its reasons: an edit undone gives the agent's plan back, whatever its reasons say."""
    data = plan.to_dict()
    return dict(data, by="", specs=[{k: v for k, v in spec.items() if k != "why"} for spec in data["specs"]])
