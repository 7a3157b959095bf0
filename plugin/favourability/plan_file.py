"""The evidence plan as a file (`lodestar-evidence-plan/1`): the layers' evidence specs and how they are combined.

A plan holds, per layer, its transformation, membership (parameters in the layer's own units: a midpoint and spread
in ppm, metres or nT; the favourable units of a unit map) and weight (`EvidenceSpec`), then the combination
(`overlay.METHODS`: weighted overlay or fuzzy AND / OR / product / sum / gamma, with its gamma) and who made it
(`by`: "agent" for the planner's plan, "geologist" once edited). Written as indented JSON; a plan read and written
again gives the same bytes.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import LodestarError
from ..files import write_text_atomic
from .evidence import EvidenceSpec
from .overlay import METHOD_LABELS, METHODS

FORMAT = "lodestar-evidence-plan/1"
AUTHORS = ("agent", "geologist")
DEFAULT_GAMMA = 0.8


@dataclass
class EvidencePlan:
    """The evidence specs, the combination (`method`, `gamma` for fuzzy gamma) and who made the plan."""

    specs: list = field(default_factory=list)
    method: str = "weighted"
    gamma: float = DEFAULT_GAMMA
    by: str = "agent"

    def __post_init__(self):
        if self.method not in METHODS:
            raise LodestarError(f"The plan's combination must be one of {', '.join(METHODS)}, not {self.method!r}.")
        try:
            self.gamma = float(self.gamma)
        except (TypeError, ValueError) as exc:
            raise LodestarError(f"The plan's gamma must be a number between 0 and 1, not {self.gamma!r}.") from exc
        if not 0.0 <= self.gamma <= 1.0:
            raise LodestarError(f"The plan's gamma must lie between 0 and 1, not {self.gamma:g}.")
        if self.by not in AUTHORS:
            raise LodestarError(f"The plan's author ('by') must be one of {', '.join(AUTHORS)}, not {self.by!r}.")
        if not self.specs:
            raise LodestarError("The evidence plan names no layer; give at least one layer with a positive weight.")
        layers = [spec.layer for spec in self.specs]
        repeated = sorted({name for name in layers if layers.count(name) > 1})
        if repeated:
            raise LodestarError(f"Each layer may enter the plan once; repeated: {', '.join(repeated)}.")
        if not any(spec.weight > 0 for spec in self.specs):
            raise LodestarError("No layer of the evidence plan has a positive weight; give at least one a weight.")

    @property
    def combination_text(self) -> str:
        """The combination in words, e.g. 'fuzzy gamma (gamma 0.9)'."""
        return METHOD_LABELS[self.method] + (f" (gamma {self.gamma:g})" if self.method == "gamma" else "")

    def to_dict(self) -> dict:
        return {"format": FORMAT, "by": self.by, "method": self.method, "gamma": self.gamma,
                "specs": [spec.to_dict() for spec in self.specs]}

    def check_layers(self, names) -> None:
        """Refuse a plan naming a layer that is not among `names` (the run's layers)."""
        names = list(names)
        unknown = [spec.layer for spec in self.specs if spec.layer not in names]
        if unknown:
            raise LodestarError(f"The evidence plan names layers the run does not have: {', '.join(unknown)}; the "
                                f"run's layers are: {', '.join(names)}. Rename them in the plan, or write the plan "
                                "from this run (the dock's evidence plan, Save...).")


def plan_from_dict(data) -> EvidencePlan:
    """The plan of a `lodestar-evidence-plan/1` dict, checked; a clear message says what is wrong."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise LodestarError(f"Not a Lodestar evidence plan: the file must be JSON with \"format\": \"{FORMAT}\" (save "
                            "one from the dock's evidence plan, or from a run record's plan).")
    specs = data.get("specs")
    if not isinstance(specs, list) or not all(isinstance(s, dict) for s in specs):
        raise LodestarError("The evidence plan's 'specs' must be a list of layers (layer, role, kind, transform, "
                            "membership, params, weight, why).")
    for i, spec in enumerate(specs, start=1):
        missing = [key for key in ("layer", "role", "kind", "transform") if key not in spec]
        if missing:
            raise LodestarError(f"Layer {i} of the evidence plan lacks {', '.join(missing)}.")
        if not isinstance(spec.get("params", {}), dict):
            raise LodestarError(f"{spec['layer']}: the plan's params must be a table (midpoint, spread, units...).")
    return EvidencePlan([EvidenceSpec.from_dict(s) for s in specs], data.get("method", "weighted"),
                        data.get("gamma", DEFAULT_GAMMA), data.get("by", "agent"))


def plan_text(plan: EvidencePlan) -> str:
    """The plan as the file holds it."""
    return json.dumps(plan.to_dict(), indent=1, ensure_ascii=False) + "\n"


def write_plan(plan: EvidencePlan, path) -> Path:
    """Write the plan to `path` (atomically)."""
    return write_text_atomic(Path(path), plan_text(plan))


def read_plan(path) -> EvidencePlan:
    """The plan of a file, checked."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LodestarError(f"Cannot read the evidence plan {path}: {exc}.") from exc
    try:
        return plan_from_dict(data)
    except LodestarError as exc:
        raise LodestarError(f"{path}: {exc}") from exc


def recorded_plan(record: dict) -> EvidencePlan:
    """The plan a run record's surface was made with: the geologist's plan when the run was given one, else the
    knowledge-driven surface's specs (the agent's plan, weighted overlay)."""
    given = ((record.get("parameters") or {}).get("favourability") or {}).get("evidence_plan")
    if given:
        return plan_from_dict(given)
    specs = (record.get("favourability") or {}).get("specs") or []
    if not specs:
        raise LodestarError("The run made no favourability surface (no layer could be evidence), so it has no "
                            "evidence plan to edit; name the favourable units or add evidence layers and run again.")
    return EvidencePlan([EvidenceSpec.from_dict(s) for s in specs])
