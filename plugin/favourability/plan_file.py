"""The evidence plan as a file (`lodestar-evidence-plan/1`): the layers' evidence specs and how they are combined.

A plan holds, per layer, its transformation, membership (parameters in the layer's own units: a midpoint and spread
in ppm, metres or nT; the favourable units of a unit map) and weight (`EvidenceSpec`), then the combination
(`overlay.METHODS`: weighted overlay or fuzzy AND / OR / product / sum / gamma, with its gamma) and who made it
(`by`: "agent" for the planner's plan, "geologist" once edited). Written as indented JSON; a plan read and written
again gives the same bytes.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

from ..analysis import MAX_LAYERS
from ..decisions import CORE
from ..errors import LodestarError
from ..files import write_text_atomic
from ..json_file import read_json, shown
from ..tools.scene_indices import KINDS
from .evidence import EvidenceSpec
from .overlay import METHOD_LABELS, METHODS, OverlayMethod

FORMAT = "lodestar-evidence-plan/1"
PlanAuthor = Literal["agent", "geologist"]
"""Who made a plan: the agent (the run's planner) or the geologist (edited or written by hand)."""
AUTHORS: tuple[PlanAuthor, ...] = get_args(PlanAuthor)
# decision numbers: their reasons and provenance are in plugin/decisions.py
DEFAULT_GAMMA = CORE.gamma
MAX_SPECS = MAX_LAYERS * len(KINDS)
"""The most specs a plan may hold: each layer enters once, and a run has at most MAX_LAYERS layers, a scene among
them turned into up to one index layer per scene index kind."""
MAX_PLAN_BYTES = 4 * 2 ** 20
"""The largest plan file: MAX_SPECS specs of 16 KB each (a spec with a long list of favourable units and reasons is
a few KB)."""
FIELDS = ("format", "by", "method", "gamma", "specs")
SPEC_FIELDS = ("layer", "role", "kind", "transform", "membership", "params", "weight", "why")
SHOWN = 5
"""How many offenders a message names before it counts the rest."""


@dataclass
class EvidencePlan:
    """The evidence specs, the combination (`method`, `gamma` for fuzzy gamma) and who made the plan."""

    specs: list = field(default_factory=list)
    method: OverlayMethod = "weighted"
    gamma: float = DEFAULT_GAMMA
    by: PlanAuthor = "agent"

    def __post_init__(self):
        if self.method not in METHODS:
            raise LodestarError(f"The plan's combination must be one of {', '.join(METHODS)}, not "
                                f"{shown(self.method)}.")
        if isinstance(self.gamma, bool) or not isinstance(self.gamma, (int, float)):
            raise LodestarError(f"The plan's gamma must be a number between 0 and 1, not {shown(self.gamma)}.")
        self.gamma = float(self.gamma)
        if not 0.0 <= self.gamma <= 1.0:
            raise LodestarError(f"The plan's gamma must lie between 0 and 1, not {self.gamma:g}.")
        if self.by not in AUTHORS:
            raise LodestarError(f"The plan's author ('by') must be one of {', '.join(AUTHORS)}, not {shown(self.by)}.")
        if not self.specs:
            raise LodestarError("The evidence plan names no layer; give at least one layer with a positive weight.")
        _check_count(len(self.specs))
        counts = Counter(spec.layer for spec in self.specs)
        repeated = sorted(name for name, count in counts.items() if count > 1)
        if repeated:
            raise LodestarError(f"Each layer may enter the plan once; repeated: {listed(repeated)}.")
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
        names = set(names)
        unknown = [spec.layer for spec in self.specs if spec.layer not in names]
        if unknown:
            raise LodestarError(f"The evidence plan names layers the run does not have: {listed(unknown)}; the "
                                f"run's layers are: {listed(sorted(names))}. Rename them in the plan, or write the "
                                "plan from this run (the dock's evidence plan, Save...).")


def listed(names: list) -> str:
    """The first SHOWN names (each at most 60 characters), and how many more."""
    text = ", ".join(name if len(name) <= 60 else name[:57] + "..." for name in map(str, names[:SHOWN]))
    return text + (f" and {len(names) - SHOWN:,} more" if len(names) > SHOWN else "")


def _check_count(count: int) -> None:
    if count > MAX_SPECS:
        raise LodestarError(f"The evidence plan holds {count:,} specs; a plan holds at most {MAX_SPECS} (one per "
                            f"layer of a run, which takes at most {MAX_LAYERS} layers, a scene among them giving up to "
                            f"{len(KINDS)} index layers): write one spec per layer of the run.")


def plan_from_dict(data) -> EvidencePlan:
    """The plan of a `lodestar-evidence-plan/1` dict, checked field by field; a problem is one line naming the spec
    (by its layer) and the field, and what it must be."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise LodestarError(f"Not a Lodestar evidence plan: the file must be JSON with \"format\": \"{FORMAT}\" (save "
                            "one from the dock's evidence plan, or from a run record's plan).")
    unknown = [str(key) for key in data if key not in FIELDS]
    if unknown:
        raise LodestarError(f"The evidence plan has no field {listed(unknown)}; its fields are {', '.join(FIELDS)}.")
    specs = data.get("specs")
    if not isinstance(specs, list):
        raise LodestarError(f"The evidence plan's 'specs' must be a list of layers ({', '.join(SPEC_FIELDS)}), not "
                            f"{shown(specs)}.")
    _check_count(len(specs))
    made = []
    for i, spec in enumerate(specs, start=1):
        if not isinstance(spec, dict):
            raise LodestarError(f"Spec {i} of the evidence plan must be a table ({', '.join(SPEC_FIELDS)}), not "
                                f"{shown(spec)}.")
        name = f"{spec['layer']}" if isinstance(spec.get("layer"), str) and spec["layer"].strip() else f"Spec {i}"
        missing = [key for key in ("layer", "role", "kind", "transform") if key not in spec]
        if missing:
            raise LodestarError(f"{name} of the evidence plan lacks {', '.join(missing)}.")
        unknown = [str(key) for key in spec if key not in SPEC_FIELDS]
        if unknown:
            raise LodestarError(f"{name}: a spec has no field {listed(unknown)}; its fields are "
                                f"{', '.join(SPEC_FIELDS)}.")
        made.append(EvidenceSpec.from_dict(spec))
    return EvidencePlan(made, data.get("method", "weighted"), data.get("gamma", DEFAULT_GAMMA), data.get("by", "agent"))


def plan_text(plan: EvidencePlan) -> str:
    """The plan as the file holds it."""
    return json.dumps(plan.to_dict(), indent=1, ensure_ascii=False) + "\n"


def write_plan(plan: EvidencePlan, path) -> Path:
    """Write the plan to `path` (atomically)."""
    return write_text_atomic(Path(path), plan_text(plan))


def read_plan(path) -> EvidencePlan:
    """The plan of a file, checked."""
    path = Path(path)
    data = read_json(path, "the evidence plan", MAX_PLAN_BYTES, f"a plan holds at most {MAX_SPECS} specs")
    try:
        return plan_from_dict(data)
    except LodestarError as exc:
        raise LodestarError(f"{path}: {exc}") from exc


def recorded_plan(record: dict) -> EvidencePlan:
    """The plan a run record's surface was made with: the geologist's plan when the run was given one, else the
    knowledge-driven surface's specs combined as the run combined them (the agent's plan; records written before the
    combination was recorded: weighted overlay)."""
    given = ((record.get("parameters") or {}).get("favourability") or {}).get("evidence_plan")
    if given:
        return plan_from_dict(given)
    specs = (record.get("favourability") or {}).get("specs") or []
    if not specs:
        raise LodestarError("The run made no favourability surface (no layer could be evidence), so it has no "
                            "evidence plan to edit; name the favourable units or add evidence layers and run again.")
    combined = (record.get("favourability") or {}).get("knowledge_method") or {}
    return EvidencePlan([EvidenceSpec.from_dict(s) for s in specs], combined.get("method") or "weighted",
                        combined.get("gamma") or DEFAULT_GAMMA)
