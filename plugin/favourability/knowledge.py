"""The offline planner's evidence choice: a transformation, membership and weight per layer, and why.

The knowledge-driven surface is the equal-weight mean of the layers' ranks that every surface is scored beside
(baseline.py), plus what the deposit model knows, within bounds (docs/engine.md, "The knowledge-driven surface"):
- which layers are evidence: every layer of a role one of the model's evidence items names, but geochemistry of
  elements the model does not read (neither pathfinders nor depleted) and geophysics of a property its signature
  does not list; colour renderings, unit maps with no favourable unit and vector layers other than fault lines and
  unit polygons cannot be scaled; each layer left out says why, and the geologist may bring it in;
- each layer's favourable side: the geologist's setting when it is low (a distance), else the model's (a depleted
  element, a magnetic or resistivity low), else high;
- how a layer enters: ordered values by their percentile rank (scale-free), fault lines by their distance in metres
  with the model's reach (fuzzy small), a unit map by its favourable units (the geologist's, else the model's host
  rocks), every unit of its legend considered and named;
- its weight: the model's own weights by role where it gives them (a model written by the geologist), never more
  than MAX_WEIGHT_RATIO apart; else the same weight for every layer the model's items (or its geophysical
  signature) name, critical and secondary alike: the items' levels say what the verifier must find, not how much a
  layer predicts, and weighting secondary layers down lost on every set of districts it was tried on
  (docs/results.md).
"""
from __future__ import annotations

import re
from dataclasses import replace

from ..decisions import CORE
from ..geophysics import measured_property, signature
from ..pathfinders import ELEMENTS, named_elements, off_model_reason
from ..tools.lithology_words import matched_units
from .evidence import EvidenceSpec

# decision numbers: their reasons and provenance are in plugin/decisions.py
ITEM_WEIGHT = CORE.item_weight
MAX_WEIGHT_RATIO = CORE.max_weight_ratio
OTHER_UNITS = CORE.other_units
DEFAULT_FAULT_DISTANCE = CORE.fault_distance
_CLASS_NAME = re.compile(r"class|rcl|reclass", re.IGNORECASE)
# decision numbers: their reasons and provenance are in plugin/decisions.py
_MAX_CLASSES = CORE.classed_max


def knowledge_specs(layer_infos, deposit_model: dict, favourable_units: dict | None = None
                    ) -> tuple[list[EvidenceSpec], list[dict]]:
    """Evidence specs for the usable layers and [{layer, reason}] for the others.

    `layer_infos`: LayerInfo-like objects (name, role, kind, favourable, stats, units);
    `deposit_model`: a knowledge-base model ({} for none: every role weighs 1 and no host rocks are known);
    `favourable_units`: {layer name: [unit codes or names]} given by the user, which take precedence
    over the model's host-rock words.
    """
    favourable_units = favourable_units or {}
    model = _Model(deposit_model)
    specs, left_out = [], []
    distance_rasters = [i.name for i in layer_infos
                        if i.role == "structure" and i.kind == "index" and i.favourable == "low"]
    for info in layer_infos:
        weight = model.weight(info.role)
        off_model = model.off_model(info)
        if off_model:
            reason = off_model
        elif info.kind == "rgb":
            reason = ("an RGB rendering: its colours are a picture, not measured values, so it cannot be scaled "
                      "into favourability (the executor's colour tools still read it)")
        elif not weight:
            reason = f"the {model.name} model does not use {info.role.replace('_', ' ')} evidence"
        elif info.kind == "vector" and info.role == "structure" and distance_rasters:
            reason = (f"fault proximity is already given by {distance_rasters[0]} (a distance map, near is "
                      "favourable); the same evidence is counted once")
        elif info.kind == "vector" and info.role not in ("structure", "geological_map"):
            reason = "a vector layer is scored only as fault lines (structure) or unit polygons (geological map)"
        else:
            spec, reason = _spec(info, weight, model, favourable_units.get(info.name))
            if spec is not None:
                specs.append(spec)
                continue
        left_out.append({"layer": info.name, "reason": reason[0].upper() + reason[1:] + "."})
    return _maps_share_their_weight(specs), left_out


def _maps_share_their_weight(specs: list[EvidenceSpec]) -> list[EvidenceSpec]:
    """Several maps of the host units (one map as a unit raster and as polygons, or two maps) are one criterion:
    they share its weight, so the surface weighs the host rocks as with one map."""
    maps = [s for s in specs if s.role == "geological_map"]
    if len(maps) < 2:
        return specs
    shared = []
    for spec in specs:
        if spec.role == "geological_map":
            weight = spec.weight / len(maps)
            spec = replace(spec, weight=weight, why=f"{spec.why} {len(maps)} maps of the host units share its "
                                                    f"weight: {weight:g} each.")
        shared.append(spec)
    return shared


class _Model:
    """The parts of a deposit model the planner reads, with defaults when the model says nothing."""

    def __init__(self, model: dict):
        self.model = model or {}
        self.name = self.model.get("name", "generic")
        settings = self.model.get("favourability", {})
        self.fault = {**DEFAULT_FAULT_DISTANCE, **settings.get("fault_distance_m", {})}
        self.hosts = list(self.model.get("favourable_units", []))
        self.depleted = {e.lower() for e in self.model.get("depleted", [])}
        self.given = settings.get("weights")
        self.weights = bounded(self.given if self.given is not None else self._item_weights())

    def _item_weights(self) -> dict | None:
        """{role: ITEM_WEIGHT} of the roles the evidence items (or the geophysical signature) name; None when the
        model names no items (every role weighs the same)."""
        items = self.model.get("evidence") or []
        if not items:
            return None
        roles = {role for item in items for role in item.get("roles", ())}
        if self.model.get("geophysics"):
            roles.add("geophysics")
        return dict.fromkeys(sorted(roles), ITEM_WEIGHT)

    def weight(self, role: str) -> float | None:
        if self.weights is None:
            return 1.0
        return self.weights.get(role)

    def weight_words(self, role: str) -> str:
        """'weight 1', and why when the model's own weight was raised to stay within MAX_WEIGHT_RATIO."""
        weight = self.weight(role)
        assert weight is not None  # asked only of the roles the model weighs
        given = float((self.given or {}).get(role, weight) or 0.0)
        if given >= weight:
            return f"weight {weight:g}"
        return (f"weight {weight:g} (the model gives {given:g}, raised to half its largest weight: without deposits "
                f"no weight is known better than within a factor of {MAX_WEIGHT_RATIO:g})")

    def off_model(self, info) -> str:
        """Why a layer is no evidence for the model although its role is ('' when it is): geochemistry of elements
        the model reads neither as pathfinders nor as depleted; geophysics of a property its signature leaves out."""
        if info.role == "geochemistry":
            reason = off_model_reason(info.name, info.role, self.model)
            elements = named_elements(info.name)
            return "" if reason and elements and elements <= self.depleted else reason
        if info.role == "geophysics" and self.model.get("geophysics"):
            prop, _ = measured_property(info.name)
            if prop and signature(self.model, prop) is None:
                listed = ", ".join(e["property"].replace("_", " ") for e in self.model["geophysics"])
                return (f"the {self.name} model gives no {prop.replace('_', ' ')} signature (its geophysics: "
                        f"{listed})")
        return ""

    def side(self, info) -> tuple[str, str]:
        """(the layer's favourable side, why when the model decides it): a low setting (a distance) stands; a
        depleted element or a geophysical signature's low (a resistivity's high) makes a layer low; else high."""
        if info.favourable == "low":
            return "low", ""
        if info.role == "geochemistry":
            elements = named_elements(info.name)
            if elements and elements <= self.depleted:
                names = " and ".join(ELEMENTS.get(e, e) for e in sorted(elements))
                return "low", f"the {self.name} model reads depletion of {names}"
        if info.role == "geophysics":
            prop, inverse = measured_property(info.name)
            entry = signature(self.model, prop) if prop else None
            if entry is not None and (entry.get("sign") == "low") != inverse:
                what = f" ({entry['what']})" if entry.get("what") else ""
                if inverse:
                    return "low", (f"a resistivity: the {self.name} model's conductivity signature is a high{what}, "
                                   "a resistivity low")
                return "low", f"the {self.name} model's {prop.replace('_', ' ')} signature is a low{what}"
        return "high", ""

    def says(self, role: str, kind: str | None = None) -> str:
        """The model's evidence item for a role (of a kind when given), as a clause."""
        items = [i for i in self.model.get("evidence", []) if role in i.get("roles", ())]
        item = next((i for i in items if kind is None or i.get("kind") == kind), items[0] if items else None)
        if item is None:
            return f"the {self.name} model weighs {role.replace('_', ' ')} evidence"
        return f"{self.name}: {item['what']} ({item['level']} evidence)"


def role_weight(deposit_model: dict, role: str) -> float | None:
    """The weight the knowledge-driven surface gives a layer of `role` under `deposit_model` (None: no evidence)."""
    return _Model(deposit_model).weight(role)


def bounded_specs(specs: list[EvidenceSpec]) -> list[EvidenceSpec]:
    """An agent's specs with every positive weight raised to at least the largest over MAX_WEIGHT_RATIO, each raised
    one saying so (a model server's plan is held to the bound the rules keep)."""
    top = max((spec.weight for spec in specs), default=0.0)
    floor = top / MAX_WEIGHT_RATIO
    return [replace(spec, weight=floor, why=f"{spec.why} Weight {floor:g}: the planner gave {spec.weight:g}, raised to "
                                            f"half the largest weight (without deposits no weight is known better "
                                            f"than within a factor of {MAX_WEIGHT_RATIO:g}).")
            if 0 < spec.weight < floor else spec for spec in specs]


def bounded(weights: dict | None) -> dict | None:
    """The positive weights raised to at least the largest over MAX_WEIGHT_RATIO (zero stays zero: no evidence)."""
    if not weights:
        return weights
    top = max((float(w) for w in weights.values()), default=0.0)
    return {role: max(float(w), top / MAX_WEIGHT_RATIO) if float(w) > 0 else 0.0 for role, w in weights.items()}


def _spec(info, weight: float, model: _Model, named) -> tuple[EvidenceSpec | None, str]:
    make = {"index": _index_spec, "categorical": _unit_spec, "vector": _vector_spec}[info.kind]
    return make(info, weight, model, named)


def _index_spec(info, weight, model, _named):
    side, decided = model.side(info)
    how = ("ordered classes (few integer values), ranked over the analysed area" if _classed(info) else
           "values ranked over the analysed area (scale-free: robust to outliers and units)")
    if side == "low":
        how += (f"; low is favourable ({decided})" if decided else
                "; low is favourable (e.g. near a fault), so the ranks are inverted")
    kind = "structure" if info.role == "structure" else None
    why = f"{how[0].upper() + how[1:]}. {model.says(info.role, kind)}; {model.weight_words(info.role)}."
    spec = EvidenceSpec(info.name, info.role, info.kind, "percentile_rank", "invert" if side == "low" else "identity",
                        {}, weight, why)
    return spec, ""


def _classed(info) -> bool:
    """Ordered classes rather than measurements: named so, or integer limits a few classes apart."""
    stats = info.stats or {}
    if _CLASS_NAME.search(info.name):
        return True
    lo, hi, mid = stats.get("min"), stats.get("max"), stats.get("p50")
    if lo is None or hi is None or mid is None:
        return False
    return all(float(v).is_integer() for v in (lo, hi, mid)) and hi - lo <= _MAX_CLASSES


def _unit_spec(info, weight, model, named):
    units = info.units or {}
    words = list(named) if named else model.hosts
    source = "named by you" if named else f"host rocks of the {model.name} model"
    matched = matched_units(units, words) if words else {}
    if not matched:
        return None, _no_units_reason(info, units, words, named, model)
    others = [name for code, name in units.items() if code not in matched]
    rest = (f"; the other unit ({others[0]}) scores {OTHER_UNITS:g}" if len(others) == 1 else
            f"; the other {len(others)} units ({', '.join(others)}) score {OTHER_UNITS:g}" if others else "")
    why = (f"Favourable units ({source}): {', '.join(matched.values())} ({len(matched)} of {len(units)} units) "
           f"score 1{rest}. {model.says(info.role, 'host_unit')}; {model.weight_words(info.role)}.")
    spec = EvidenceSpec(info.name, info.role, info.kind, "units", "identity",
                        {"units": words, "outside": OTHER_UNITS}, weight, why)
    return spec, ""


def _no_units_reason(info, units: dict, words, named, model: _Model) -> str:
    shown = ", ".join(list(dict.fromkeys(units.values()))[:12]) + (", ..." if len(units) > 12 else "")
    if named:
        return f"none of the units named for it ({', '.join(map(str, named))}) is in its legend; units present: {shown}"
    if not words:
        return ("no favourable units are known: the deposit model names no host rocks; name the favourable units "
                "(codes or names) to use it")
    if units and all(_code_like(name) for name in units.values()):
        return (f"its legend gives only unit codes ({shown}), not rock names, so the {model.name} host rocks "
                f"({', '.join(words[:5])}) cannot be recognised in it; name the favourable units (codes or names) "
                "to use it")
    return (f"none of its units ({shown}) is a host rock of the {model.name} model ({', '.join(words[:5])}); "
            "name the favourable units to use it")


def _code_like(name: str) -> bool:
    """A legend entry that is a code (TPC, LPZE, 38, 'unit 4') rather than a rock name."""
    text = str(name).strip()
    return not any(ch.islower() for ch in text) or text.lower().startswith("unit ")


def _vector_spec(info, weight, model, named):
    if info.role == "structure":
        mid, spread = float(model.fault["midpoint"]), float(model.fault["spread"])
        why = (f"Distance to the fault lines in metres, fuzzy small: 1 on a fault, 0.5 at {mid:g} m, "
               f"{1 / (1 + 2 ** spread):.2f} at {2 * mid:g} m. {model.says('structure', 'structure')}; "
               f"{model.weight_words(info.role)}.")
        return EvidenceSpec(info.name, info.role, info.kind, "distance_m", "small",
                            {"midpoint": mid, "spread": spread}, weight, why), ""
    words = list(named) if named else model.hosts
    if not words:
        return None, ("no favourable units are known: the deposit model names no host rocks; name the favourable "
                      "units to use it")
    source = "named by you" if named else f"host rocks of the {model.name} model"
    why = (f"Unit polygons whose names match the favourable units ({source}: {', '.join(map(str, words[:6]))}) "
           f"score 1, the others {OTHER_UNITS:g}. {model.says(info.role, 'host_unit')}; "
           f"{model.weight_words(info.role)}.")
    return EvidenceSpec(info.name, info.role, info.kind, "units", "identity",
                        {"units": words, "outside": OTHER_UNITS}, weight, why), ""
