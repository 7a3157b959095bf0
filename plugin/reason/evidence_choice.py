"""The evidence the map is made of, chosen in the reason stage: the geologist's evidence plan when given, else the
planner's (asked within the run's budget), else the deposit model's rules; the map stage (`prospectivity.py`)
takes the choice as it stands and asks no model."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..errors import LodestarError
from ..favourability.knowledge import bounded_specs, knowledge_specs


@dataclass(frozen=True)
class EvidenceChoice:
    """The evidence specs of the surface, the layers left out with their reasons, who chose (the geologist, the
    planner's model, or the deposit model's rules), the notes saying why the choice fell back, and how the specs
    are combined when the geologist's plan says so ({"method", "gamma"}; {} for the map's own)."""

    specs: list
    left_out: list[dict]
    source: str
    notes: list[str] = field(default_factory=list)
    combination: dict = field(default_factory=dict)


def chosen_evidence(engine, evidence_plan=None) -> EvidenceChoice:
    """The evidence of `engine`'s run: the geologist's `evidence_plan` (`plan_file.EvidencePlan`) when given, else
    the planner's (one model call), else the deposit model's rules."""
    if evidence_plan is None:
        return EvidenceChoice(*_evidence_specs(engine))
    return EvidenceChoice(*_planned_specs(engine.ws, evidence_plan),
                          combination={"method": evidence_plan.method, "gamma": evidence_plan.gamma})


def _planned_specs(ws, plan) -> tuple[list, list, str, list]:
    """(specs, layers left out with reasons, who chose, notes) of the geologist's plan: its layers but colour
    renderings (`zone_specs` scores those by the chain's zones), the others left out with the reason."""
    plan.check_layers(ws.layer_names())
    specs = [replace(spec, params=dict(spec.params)) for spec in plan.specs if spec.kind != "rgb"]
    chosen = {spec.layer for spec in specs}
    _, rules_left = knowledge_specs(ws.layers, ws.deposit_model, ws.favourable_units)
    reasons = {row["layer"]: row["reason"] for row in rules_left}
    left = [{"layer": info.name, "reason": reasons.get(info.name, "The geologist's plan leaves it out.")}
            for info in ws.layers if info.name not in chosen]
    return specs, left, "geologist", []


def _evidence_specs(engine) -> tuple[list, list, str, list]:
    """(specs, layers left out with reasons, who chose, notes): the planner's plan, else the deposit model's rules."""
    ws = engine.ws
    defaults, left_out = knowledge_specs(ws.layers, ws.deposit_model, ws.favourable_units)
    rules = f"deposit model rules ({ws.deposit_model.get('name', 'no model')})"
    if engine.budget_spent:
        return defaults, left_out, rules, [f"No further model calls ({engine.stop_reason}): the evidence weights "
                                           "follow the deposit model's rules."]
    try:
        specs = list(engine.ask_evidence_plan())
    except (LodestarError, TypeError, ValueError) as exc:
        return defaults, left_out, rules, [f"The planner's evidence plan was not usable ({exc}); the deposit "
                                           "model's rules are used."]
    names = {info.name for info in ws.layers}
    layers = [spec.layer for spec in specs]
    if not specs or any(n not in names for n in layers) or len(set(layers)) != len(layers):
        return defaults, left_out, rules, ["The planner's evidence plan named unknown or repeated layers; the "
                                           "deposit model's rules are used."]
    specs = bounded_specs(specs)
    chosen = set(layers)
    left = [row for row in left_out if row["layer"] not in chosen]
    left += [{"layer": info.name, "reason": "The planner left it out of the surface."}
             for info in ws.layers if info.name not in chosen and info.name not in {r["layer"] for r in left}]
    return specs, left, getattr(engine.roles.planner, "name", "planner"), []
