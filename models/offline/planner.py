"""The offline planner: one step per layer that can test an evidence item of the deposit model (critical items
first), the tool chosen from the layer's kind and role, then the spatial relationship explorer and evidence
integration; within the loop's plan length, every role is examined once before any role twice (`_covering`).
A layer that cannot speak (one value over the data) is no evidence: an item only it could test is untestable."""
from __future__ import annotations

import math

from ...plugin.labels import article, kind_label, words
from ...plugin.reason.background import from_measure
from ...plugin.reason.contract import MAX_PLAN_STEPS, PlanStep
from .model_items import VECTOR_ROLES, centre_words, host_units, per_metre, seed_items
from .scene import Scene


def plan(scene: Scene) -> list[PlanStep]:
    """One step per layer that can test an evidence item (critical first), then relating and integrating."""
    ws, model = scene.ws, scene.ws.deposit_model
    steps: list[PlanStep] = []
    planned: dict = {}
    mapped_structure = any(info.role == "structure" for info in scene.evidence_layers())
    for item in model.get("evidence", []):
        for info in scene.evidence_layers():
            scene.progress.check()
            if info.role not in item["roles"]:
                continue
            if info.name in planned:
                planned[info.name]["items"].append(item)
                continue
            if item["kind"] == "structure" and info.role == "geological_map" and mapped_structure:
                continue  # mapped structures first; contacts stand in only when there are none
            tool = _tool_for(info, item)
            if tool is None:
                continue
            planned[info.name] = {"info": info, "tool": tool, "items": [item]}
    for name, entry in planned.items():
        scene.progress.check()
        info, tool, items = entry["info"], entry["tool"], entry["items"]
        first = items[0]
        level = "critical" if any(i["level"] == "critical" for i in items) else "secondary"
        params = _plan_params(scene, info, tool, items)
        if tool == "categorical" and not params.get("units") and params.get("output") == "units":
            continue
        steps.append(PlanStep(
            index=len(steps) + 1,
            purpose=_purpose(tool, info, first, params),
            layers=[name],
            layers_why=f"'{name}' is {article(words(info.role))} layer ({kind_label(info.kind)}); it tests "
                       + ", ".join(f"{words(i['id'])} ({i['level']})" for i in items) + ".",
            tool=tool,
            tool_why=_tool_why(tool, info),
            expected=_expected(items, model),
            params=params,
            evidence=first["id"],
            level=level,
        ))
    steps.sort(key=lambda s: (s.level != "critical", s.index))
    steps = _covering(ws, steps, MAX_PLAN_STEPS - 2)  # room for relating and integrating
    for i, step in enumerate(steps):
        step.index = i + 1
    zone_steps = len(steps)
    if zone_steps >= 2:
        steps.append(PlanStep(len(steps) + 1, "Relate the zones of all layers: overlaps, proximity, chains",
                              [], "All zones marked so far.", "spatial_relations",
                              "Coincidence across layers separates a mineral system from isolated or "
                              "lithological anomalies.",
                              f"Zones of different kinds of evidence overlapping or adjacent around the "
                              f"{centre_words(model)}.",
                              {}, "cross_layer_coincidence", "critical"))
    if zone_steps:
        steps.append(PlanStep(len(steps) + 1, "Integrate the evidence: critical and secondary items", [],
                              "The chain so far.", "integrate_evidence",
                              "The answer needs every critical item supported and secondary items present.",
                              f"A summary against the {model.get('name', 'deposit')} model.", {}, "", ""))
    return steps


def _purpose(tool: str, info, item: dict, params: dict) -> str:
    """What a step is for, in words: the evidence it marks on its layer and the item it tests."""
    name = info.name
    if tool == "categorical":
        units = ", ".join(params.get("units", [])) or "all units"
        return f"Map the favourable host units ({units}) and contacts on '{name}' ({words(item['id'])})"
    if info.kind == "vector" and info.role == "geological_map":
        return f"Map the units and their contacts on '{name}' ({words(item['id'])})"
    if tool in ("vector_evidence", "feature_regions") or info.role == "structure":
        return f"Mark faults and structural corridors on '{name}' ({words(item['id'])})"
    return f"Mark clear {words(info.role)} anomalies on '{name}' ({words(item['id'])}: {item['what']})"


def _tool_for(info, item) -> str | None:
    """The tool that marks an item on a layer of its kind and role (None: this layer cannot show it)."""
    if info.kind == "vector":  # fault lines or unit polygons, as the surface reads them
        return "vector_evidence" if info.role in VECTOR_ROLES else None
    if info.role == "geological_map":
        if info.kind == "categorical":
            return "categorical"
        return "feature_regions" if item["kind"] == "structure" else None
    if info.role == "structure":
        return "color_regions" if info.kind == "index" else "feature_regions"
    return "color_regions"


def _plan_params(scene: Scene, info, tool, items) -> dict:
    """The step's tool parameters: units and contacts of a map, the count of features, a fault corridor's width,
    or the colour and index cuts of `colour_params`."""
    ws = scene.ws
    if tool == "categorical":
        wants_units = any(i["kind"] == "host_unit" for i in items)
        wants_contacts = any(i["kind"] == "structure" for i in items)
        units = host_units(info, ws) if wants_units else []
        output = "both" if (units and wants_contacts) else ("contacts" if wants_contacts else "units")
        return {"units": units, "output": output}
    if tool == "feature_regions":
        return {"mode": "auto", "max_zones": scene.settings.max_regions}
    if tool == "vector_evidence":
        pixel = max(abs(v) for v in ws.raster_set.grid.pixel_size)  # a corridor at least a pixel wide
        buffer = max(scene.settings.fault_buffer_m * per_metre(ws), pixel)
        return {"max_zones": scene.settings.max_regions, "buffer_m": round(buffer, 3)}
    return colour_params(scene, info, scene.settings.anomaly_sigma)


def colour_params(scene: Scene, info, sigma: float) -> dict:
    """color_regions parameters: renderings by colour level; classed layers (and structure indices) by their top
    share; measured indices against their background model, `sigma` spreads above its centre."""
    ws, settings = scene.ws, scene.settings
    min_px = int(math.ceil(scene.min_area() / ws.raster_set.grid.pixel_area))
    params: dict[str, object] = {"max_regions": settings.max_regions, "min_area_px": min_px, "min_area_fraction": 0.0,
              "smooth_px": settings.smooth_px}
    stats = info.stats or {}
    if info.kind == "rgb":
        params.update(mode="rgb", level=round(settings.colour_level, 4))
    elif info.role == "structure":
        params.update(mode="index", method="percentile", percentile=settings.corridor_percentile)
    elif stats.get("model") == "classed" or (info.role == "geochemistry" and "bg_sigma" not in stats):
        # ordered classes carry no spread to test against: the survey's top classes
        params.update(mode="index", method="percentile", percentile=settings.geochem_percentile)
    elif "bg_sigma" in stats:
        sign = -1.0 if info.favourable == "low" else 1.0
        measure = stats["bg_centre"] + sign * sigma * stats["bg_sigma"]
        if "ceiling" in stats and sign * (measure - stats["ceiling"]) > 0:  # a clipped rendering: cut just
            measure = stats["ceiling"] - sign * settings.ceiling_margin * stats["bg_sigma"]  # under where it stops
        params.update(mode="index", method="value", value=round(from_measure(measure, stats), 6))
    else:
        params.update(mode="index", method="sigma", k_sigma=round(sigma, 4))
    return params


def _tool_why(tool: str, info) -> str:
    """Why the tool suits the layer, in words."""
    return {
        "color_regions": "Threshold the layer against its own background to mark clear anomalies as polygons.",
        "feature_regions": "Structural and textural features (faults, lineaments, contacts) of an image.",
        "categorical": "Unit polygons and contacts of the categorical geological map.",
        "vector_evidence": "Mapped faults or units as zones in the analysis CRS.",
    }.get(tool, "")


def _expected(items, model: dict) -> str:
    """What a step should find, in the deposit model's own words (no alteration core in an orogenic chain)."""
    kinds = {i["kind"] for i in items}
    centre = centre_words(model)
    if "host_unit" in kinds:
        return f"Favourable host units mapped near the {centre}, if any."
    if "structure" in kinds:
        seeds = seed_items(model)
        on_structure = bool(seeds) and (seeds[0]["kind"] == "structure" or "structure" in seeds[0]["roles"])
        return ("Faults or structural corridors." if on_structure else
                f"Faults or structural corridors through or next to the {centre}.")
    return "A few compact anomalies clearly above background, or none if the ground is barren."


def _covering(ws, steps: list, budget: int) -> list:
    """At most `budget` of the layer steps (in their order, critical first), chosen so that every role they
    examine is examined once before any role is examined twice: the first layer of each role, then the second,
    and so on. The layers of a role left without a step of their own are grouped under the role's first step,
    which names them (the verifier may still measure them at a candidate core)."""
    if len(steps) <= budget:
        return steps
    seen: dict = {}
    rank = []
    for order, step in enumerate(steps):
        role = ws.layer(step.layers[0]).role
        rank.append((seen.get(role, 0), order))
        seen[role] = seen.get(role, 0) + 1
    kept = sorted(sorted(range(len(steps)), key=rank.__getitem__)[:budget])
    left: dict = {}
    for order in sorted(set(range(len(steps))) - set(kept)):
        left.setdefault(ws.layer(steps[order].layers[0]).role, []).append(steps[order].layers[0])
    out = [steps[order] for order in kept]
    for role, names in left.items():
        first = next((step for step in out if ws.layer(step.layers[0]).role == role), None)
        if first is not None:
            plural = len(names) > 1
            first.layers_why += (f" The plan holds at most {MAX_PLAN_STEPS} steps, so {len(names)} more "
                                 f"{role.replace('_', ' ')} layer{'s' if plural else ''} ({', '.join(names)}) "
                                 f"{'are' if plural else 'is'} grouped with this one: not marked step by step, "
                                 "though the verifier may measure them at a candidate core.")
    return out
