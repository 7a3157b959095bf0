"""The offline planner's evidence choice: a transformation, membership and weight per layer, and why.

Weights by layer role and the fault proximity (metres) come from the deposit model's
`favourability` entry; the reasons quote the model's evidence items. Layers that cannot be scored
(renderings, unit maps with no recognisable favourable unit, roles the model does not use, geochemistry of
elements that are not its pathfinders) are returned with the reason, so every layer either feeds the surface
or is accounted for.
"""
from __future__ import annotations

import re
from dataclasses import replace

from ..pathfinders import off_model_reason
from ..tools.lithology_words import matched_units
from .evidence import EvidenceSpec

OTHER_UNITS = 0.1
"""Membership of units that are not favourable: maps are approximate and deposits sit at contacts, so
other units lower favourability without zeroing it (a fuzzy gamma product would otherwise be 0 there)."""
DEFAULT_FAULT_DISTANCE = {"midpoint": 2000.0, "spread": 3.0}
_CLASS_NAME = re.compile(r"class|rcl|reclass", re.IGNORECASE)
_MAX_CLASSES = 32


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
        off_model = off_model_reason(info.name, info.role, deposit_model)
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
        self.weights = settings.get("weights")
        self.fault = {**DEFAULT_FAULT_DISTANCE, **settings.get("fault_distance_m", {})}
        self.hosts = list(self.model.get("favourable_units", []))

    def weight(self, role: str) -> float | None:
        if self.weights is None:
            return 1.0
        return self.weights.get(role)

    def says(self, role: str, kind: str | None = None) -> str:
        """The model's evidence item for a role (of a kind when given), as a clause."""
        items = [i for i in self.model.get("evidence", []) if role in i.get("roles", ())]
        item = next((i for i in items if kind is None or i.get("kind") == kind), items[0] if items else None)
        if item is None:
            return f"the {self.name} model weighs {role.replace('_', ' ')} evidence"
        return f"{self.name}: {item['what']} ({item['level']} evidence)"


def _spec(info, weight: float, model: _Model, named) -> tuple[EvidenceSpec | None, str]:
    make = {"index": _index_spec, "categorical": _unit_spec, "vector": _vector_spec}[info.kind]
    return make(info, weight, model, named)


def _index_spec(info, weight, model, _named):
    low = info.favourable == "low"
    stats = info.stats or {}
    if info.role == "geochemistry" and not _classed(info) and stats.get("min", 0) > 0:
        transform, how = "log_percentile", ("concentrations are lognormal, so log10 values are stretched "
                                            "between their 2nd and 98th percentiles")
    elif _classed(info):
        transform, how = "percentile_rank", "ordered classes (few integer values), ranked over the analysed area"
    else:
        transform, how = "percentile_rank", "values ranked over the analysed area (robust to outliers and units)"
    if low:
        how += "; low is favourable (e.g. near a fault), so the ranks are inverted"
    kind = "structure" if info.role == "structure" else None
    spec = EvidenceSpec(info.name, info.role, info.kind, transform, "invert" if low else "identity", {}, weight,
                        f"{how[0].upper() + how[1:]}. {model.says(info.role, kind)}; weight {weight:g}.")
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
    why = (f"Favourable units ({source}): {', '.join(matched.values())} ({len(matched)} of {len(units)} units) "
           f"score 1, the others {OTHER_UNITS:g}. {model.says(info.role, 'host_unit')}; weight {weight:g}.")
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
               f"weight {weight:g}.")
        return EvidenceSpec(info.name, info.role, info.kind, "distance_m", "small",
                            {"midpoint": mid, "spread": spread}, weight, why), ""
    words = list(named) if named else model.hosts
    if not words:
        return None, ("no favourable units are known: the deposit model names no host rocks; name the favourable "
                      "units to use it")
    source = "named by you" if named else f"host rocks of the {model.name} model"
    why = (f"Unit polygons whose names match the favourable units ({source}: {', '.join(map(str, words[:6]))}) "
           f"score 1, the others {OTHER_UNITS:g}. {model.says(info.role, 'host_unit')}; weight {weight:g}.")
    return EvidenceSpec(info.name, info.role, info.kind, "units", "identity",
                        {"units": words, "outside": OTHER_UNITS}, weight, why), ""
