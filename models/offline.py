"""The offline back-end: a rule-based prospectivity reasoner (no network, deterministic).

It answers every model role of the STA-CoT loop from the retrieved deposit model
(`resources/knowledge/deposit_models.json`):

- planner: one step per layer that can test an evidence item of the deposit model (critical items
  first), the tool chosen from the layer's kind and role, then the spatial relationship explorer
  and evidence integration; within the loop's plan length, every role is examined once before any role
  twice (`_covering`: the layers of a role left without a step are named, grouped, under its first); a layer
  that cannot speak (one value over the data, `workspace.silence`) is no evidence: evidence that cannot vary
  cannot test an item, so an item only it could test is untestable, never missing, and the verdict says why;
- executor: deterministic tool calls. Index anomalies are cut at the layer's median plus
  `anomaly_sigma` robust standard deviations (1.4826 * MAD), so only a clear departure from the
  background counts; renderings keep colours above `colour_level` of their colour bar (every such number is a
  field of `OfflineSettings`, models/offline_settings.py, with its reason and provenance); stricter
  settings on each controller retry; on a re-execution asked by the verifier, the step looks again
  around the candidate core at a lower threshold (a zoomed, confirmatory look);
- observer: judges a tool result from the zones' contrast, size and cross-layer coincidence;
- verifier: evaluates the deposit model's evidence items around each candidate core zone (a clear anomaly of the
  first critical item or of its critical coincidence partner): anomaly, coincidence with another alteration family,
  halo, structure and host unit, each within the deposit model's distance in metres (at least two pixels of the
  analysis grid; in pixel space a pixel counts as NOMINAL_PIXEL_M). An anomaly or coincidence item with no zone
  within reach (a marginal critical one once its zoomed look has not brought a zone within reach, a marginal
  secondary one at once) is measured on its layers at the core, leaving out a layer whose own zone lies just off the
  core (that zone's flank, already weighed; not so for a shell around a partner's core), and counts when significant
  against the rest of the scene (plugin.engine.coincidence; `coincidence_alpha` shared among the layers and cores
  tried; the first item around a partner's core at the shell scale too, a phyllic shell wrapping a potassic centre).
  When no zone core gives a Yes, a partner's core where every layer of the first item is a rendering colouring
  nothing nearby (a picture's blank, not a measured absence) may have that item stood in for by a zone of a second
  core signature coinciding with it (`_stood_in`); then the place where a layer of the first critical item and one
  of its partner stand out together (each at least the refinement level above its surroundings) is weighed as a core
  too, when rarer by chance than `joint_alpha` expected places (plugin.engine.joint_places), else the place where
  layers of three alteration families of the model stand out together, rarer than `triple_alpha` (a zoned system
  even where the first item's layers show nothing: a blank rendering, or a scene so small that two layers cannot be
  rare enough), and its steps are asked for a zoomed look there. The answer is "Yes" only when every testable
  critical item is supported and at least one secondary item is present (seed 000, C.4 verifier rule); a Yes names
  its system, and every other core that gives a Yes on its own outside it, as targets (plugin.engine.core_target);
  the chain is invalid when a step failed, when a step's inference contradicts its own zones, or when a critical
  coincidence is marginal (then the partner steps are re-executed with a zoomed look).
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..plugin.engine.background import from_measure, to_measure
from ..plugin.engine.coincidence import SCALES, SHELL_SCALES
from ..plugin.engine.contract import (
    MAX_PLAN_STEPS,
    Judgement,
    PlanStep,
    ToolCall,
    ToolOutcome,
    Verdict,
    empty_usage,
)
from ..plugin.engine.corridors import CORRIDOR_PERCENTILE, corridor_distance, gap_to_corridor
from ..plugin.engine.questions import alteration_choices, yes_no_letters
from ..plugin.engine.workspace import NOMINAL_PIXEL_M, silent_note
from ..plugin.pathfinders import model_layers, off_model_note
from ..plugin.progress import SILENT, Progress
from .offline_settings import OfflineSettings

VECTOR_ROLES = ("structure", "geological_map")
"""Roles a vector layer is evidence in: fault lines and unit polygons (the surface reads no other)."""
FAMILY = {
    "hydrothermal_alteration": "clay",
    "argillic_alteration": "clay",
    "silicification": "silica",
    "propylitic_alteration": "propylitic",
    "iron_oxide": "iron",
    "false_color_composite": "iron",
    "structure": "structure",
    "geological_map": "geology",
    "geochemistry": "geochemistry",
    "geophysics": "geophysics",
    "other": "other",
}
"""Alteration family of each role: coincidence counts only between different families (composites: `seen_again`)."""
COMPOSITE_SHOWS = {"false_color_composite": ("clay", "iron")}
"""Families a composite's colours show: a SWIR-NIR-red picture is made of the bands the AlOH (clay) and
ferric-iron indices are computed from, so its zone over a clay or iron anomaly is that anomaly seen again."""

ZONE_KINDS_STRUCTURE = ("fault", "lineament_density", "contact")


def _families(role: str) -> set:
    return set(COMPOSITE_SHOWS.get(role, (FAMILY.get(role, "other"),)))


def seen_again(role: str, core_role: str) -> bool:
    """Whether an anomaly of `role` at a core of `core_role` may be the core's own signal seen again, not a
    second kind of evidence: the same alteration family, or a composite showing the core's family."""
    return bool(_families(role) & _families(core_role))


def _per_metre(ws) -> float:
    """Map units per metre on the ground (analysis grids are projected in metres; pixel space: 1 / 30 m)."""
    return 1.0 if ws.raster_set.grid.crs is not None else 1.0 / NOMINAL_PIXEL_M


class OfflineReasoner:
    """The rule-based reasoner; one instance answers planner, executor and verifier."""

    name = "offline"

    def __init__(self, settings: OfflineSettings | None = None, progress: Progress = SILENT, **overrides):
        """`overrides`: settings by name over `settings` (else the defaults), e.g. OfflineReasoner(joint_alpha=0.0)."""
        self.settings = replace(settings or OfflineSettings(), **overrides)
        self.progress = progress  # the run's: cancel is checked in every loop over layers, zones, cores and places
        self._features: dict = {}  # vector layer name -> its features in the analysis CRS (read once per run)
        self._corridors: dict = {}  # structure raster name -> distance to its favourable share (once per run)
        self._filled = None  # (map codes, layer -> codes of the units its scene-wide anomalies fill, intrusive codes)
        self._lifted: dict = {}  # layer name -> codes of the map units it stands high over as a whole, once per run
        self._lithology_zones: set = set()  # zones left out as cores because they fill a map unit
        self._unit_measures: dict = {}  # core zone id -> layers not measured there: they raise its map unit as a whole
        self._spreads: dict = {}  # layer name -> the layer in background spreads on the analysis grid, once per run
        self._coloured: dict = {}  # rendering name -> where it is coloured (off its bar, with data), with _spreads
        self._contrasts: dict = {}  # (layer, radius in pixels, scales) -> its contrast map (engine.coincidence)
        self._places = 1  # candidate cores the verifier weighs: each is one more chance of a partner by chance
        self._joint: dict = {}  # the place where the core's layers stand out together, once per run
        self._verdict_core = None  # the geometry of the core the latest verdict weighed (refinements look around it)
        self._verified: list = []  # (core, assessment) of every zone core the latest verdict found giving a Yes

    @property
    def refinement_level(self) -> float:
        """Spreads above background of an anomaly on a zoomed look (`anomaly_sigma` x `refine_factor`)."""
        return self.settings.anomaly_sigma * self.settings.refine_factor

    # -- interface bookkeeping ------------------------------------------------------------------------
    def usage(self) -> dict:
        return empty_usage()

    def public_settings(self) -> dict:
        named = ("anomaly_sigma", "colour_level", "min_area_m2", "max_regions", "marginal_factor", "refine_factor",
                 "geochem_percentile", "fault_buffer_m", "coincidence_alpha", "joint_alpha", "triple_alpha")
        return {"backend": self.name, **{name: getattr(self.settings, name) for name in named}}

    def decision_settings(self) -> list[dict]:
        """Every decision threshold of this reasoner with its value, reason and provenance (for the run record)."""
        return self.settings.described()

    def prompt_hashes(self) -> dict:
        return {}

    # -- planner ----------------------------------------------------------------------------------
    def plan(self, ws) -> list[PlanStep]:
        self._filled, self._lithology_zones, self._spreads, self._coloured, self._contrasts = None, set(), {}, {}, {}
        self._lifted, self._joint, self._verdict_core, self._verified, self._unit_measures = {}, {}, None, [], {}
        model = ws.deposit_model
        steps: list[PlanStep] = []
        planned: dict = {}
        mapped_structure = any(info.role == "structure" for info in self._evidence_layers(ws))
        for item in model.get("evidence", []):
            for info in self._evidence_layers(ws):
                self.progress.check()
                if info.role not in item["roles"]:
                    continue
                if info.name in planned:
                    planned[info.name]["items"].append(item)
                    continue
                if item["kind"] == "structure" and info.role == "geological_map" and mapped_structure:
                    continue  # mapped structures first; contacts stand in only when there are none
                tool = self._tool_for(info, item)
                if tool is None:
                    continue
                planned[info.name] = {"info": info, "tool": tool, "items": [item]}
        for name, entry in planned.items():
            self.progress.check()
            info, tool, items = entry["info"], entry["tool"], entry["items"]
            first = items[0]
            level = "critical" if any(i["level"] == "critical" for i in items) else "secondary"
            params = self._plan_params(ws, info, tool, items)
            if tool == "categorical" and not params.get("units") and params.get("output") == "units":
                continue
            steps.append(PlanStep(
                index=len(steps) + 1,
                purpose=self._purpose(tool, info, first, params),
                layers=[name],
                layers_why=f"'{name}' is a {info.role.replace('_', ' ')} layer ({info.kind}); it tests "
                           + ", ".join(f"{i['id']} ({i['level']})" for i in items) + ".",
                tool=tool,
                tool_why=self._tool_why(tool, info),
                expected=self._expected(items, model),
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
                                  f"{_centre_words(model)}.",
                                  {}, "cross_layer_coincidence", "critical"))
        if zone_steps:
            steps.append(PlanStep(len(steps) + 1, "Integrate the evidence: critical and secondary items", [],
                                  "The chain so far.", "integrate_evidence",
                                  "The answer needs every critical item supported and secondary items present.",
                                  f"A summary against the {model.get('name', 'deposit')} model.", {}, "", ""))
        return steps

    @staticmethod
    def _purpose(tool: str, info, item: dict, params: dict) -> str:
        name = info.name
        if tool == "categorical":
            units = ", ".join(params.get("units", [])) or "all units"
            return f"Map the favourable host units ({units}) and contacts on '{name}' ({item['id']})"
        if info.kind == "vector" and info.role == "geological_map":
            return f"Map the units and their contacts on '{name}' ({item['id']})"
        if tool in ("vector_evidence", "feature_regions") or info.role == "structure":
            return f"Mark faults and structural corridors on '{name}' ({item['id']})"
        return f"Mark clear {info.role.replace('_', ' ')} anomalies on '{name}' ({item['id']}: {item['what']})"

    @staticmethod
    def _tool_for(info, item) -> str | None:
        if info.kind == "vector":  # fault lines or unit polygons, as the surface reads them
            return "vector_evidence" if info.role in VECTOR_ROLES else None
        if info.role == "geological_map":
            if info.kind == "categorical":
                return "categorical"
            return "feature_regions" if item["kind"] == "structure" else None
        if info.role == "structure":
            return "color_regions" if info.kind == "index" else "feature_regions"
        return "color_regions"

    def _plan_params(self, ws, info, tool, items) -> dict:
        if tool == "categorical":
            wants_units = any(i["kind"] == "host_unit" for i in items)
            wants_contacts = any(i["kind"] == "structure" for i in items)
            named = list(ws.favourable_units.get(info.name) or [])
            units = named or (favourable_units(info, ws.deposit_model) if legend_informative(info) else [])
            units = units if wants_units else []
            output = "both" if (units and wants_contacts) else ("contacts" if wants_contacts else "units")
            return {"units": units, "output": output}
        if tool == "feature_regions":
            return {"mode": "auto", "max_zones": self.settings.max_regions}
        if tool == "vector_evidence":
            pixel = max(abs(v) for v in ws.raster_set.grid.pixel_size)  # a corridor at least a pixel wide
            buffer = max(self.settings.fault_buffer_m * _per_metre(ws), pixel)
            return {"max_zones": self.settings.max_regions, "buffer_m": round(buffer, 3)}
        return self._colour_params(ws, info, self.settings.anomaly_sigma)

    def _min_area(self, ws) -> float:
        """The smallest zone that counts, in square map units (at least `min_zone_px` pixels)."""
        grid = ws.raster_set.grid
        return max(self.settings.min_area_m2 * _per_metre(ws) ** 2, self.settings.min_zone_px * grid.pixel_area)

    def _colour_params(self, ws, info, sigma: float) -> dict:
        """color_regions parameters: renderings by colour level; classed layers (and structure indices) by their top
        share; measured indices against their background model, `sigma` spreads above its centre."""
        settings = self.settings
        min_px = int(math.ceil(self._min_area(ws) / ws.raster_set.grid.pixel_area))
        params = {"max_regions": settings.max_regions, "min_area_px": min_px, "min_area_fraction": 0.0,
                  "smooth_px": settings.smooth_px}
        stats = info.stats or {}
        if info.kind == "rgb":
            params.update(mode="rgb", level=round(settings.colour_level, 4))
        elif info.role == "structure":
            params.update(mode="index", method="percentile", percentile=CORRIDOR_PERCENTILE)
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

    @staticmethod
    def _tool_why(tool: str, info) -> str:
        return {
            "color_regions": "Threshold the layer against its own background to mark clear anomalies as polygons.",
            "feature_regions": "Structural and textural features (faults, lineaments, contacts) of an image.",
            "categorical": "Unit polygons and contacts of the categorical geological map.",
            "vector_evidence": "Mapped faults or units as zones in the analysis CRS.",
        }.get(tool, "")

    @staticmethod
    def _expected(items, model: dict) -> str:
        """What a step should find, in the deposit model's own words (no alteration core in an orogenic chain)."""
        kinds = {i["kind"] for i in items}
        centre = _centre_words(model)
        if "host_unit" in kinds:
            return f"Favourable host units mapped near the {centre}, if any."
        if "structure" in kinds:
            seeds = _seed_items(model)
            on_structure = bool(seeds) and (seeds[0]["kind"] == "structure" or "structure" in seeds[0]["roles"])
            return ("Faults or structural corridors." if on_structure else
                    f"Faults or structural corridors through or next to the {centre}.")
        return "A few compact anomalies clearly above background, or none if the ground is barren."

    # -- executor ------------------------------------------------------------------------------------
    def propose(self, ws, step: PlanStep, feedback: str, attempt: int) -> ToolCall:
        settings, params = self.settings, dict(step.params)
        if step.tool == "color_regions" and step.layers:
            info = ws.layer(step.layers[0])
            sigma = settings.anomaly_sigma
            refining = bool(feedback) and attempt == 1
            if refining:
                sigma = self.refinement_level
                around = self._core_bounds(ws, step)
                params = self._colour_params(ws, info, sigma)
                if around is not None:
                    params["bounds"] = around
            elif attempt > 1:
                params = self._colour_params(ws, info, sigma + settings.retry_sigma_step * (attempt - 1))
                if info.kind == "rgb":
                    level = settings.colour_level + settings.retry_level_step * (attempt - 1)
                    params["level"] = round(min(settings.retry_level_cap, level), 4)
                params["max_regions"] = max(1, settings.max_regions - settings.retry_region_step * (attempt - 1))
        elif attempt > 1 and step.tool in ("feature_regions", "vector_evidence", "categorical"):
            params["max_zones"] = max(1, settings.max_regions - settings.retry_region_step * (attempt - 1))
        return ToolCall(step.tool, list(step.layers), params)

    def _core_bounds(self, ws, step: PlanStep):
        """Map bounds around the core of this reasoner's latest verdict, else the best core now (the core grown by
        its size and the coincidence reach): every step of a refinement looks around the same core, whatever its
        own new zones change."""
        geometry = self._verdict_core
        if geometry is None:  # no verdict of this reasoner's yet (a model verifies): the best core now
            best = self._best_core(ws)
            if best is None:
                return None
            geometry = best[0]["geometry"]
        reach = self._reach(ws, max((self._near_m(i) for i in ws.deposit_model.get("evidence", [])),
                                    default=self.settings.default_near_m))
        xmin, ymin, xmax, ymax = geometry.bounds
        pad = max(xmax - xmin, ymax - ymin) + reach
        gx0, gy0, gx1, gy1 = ws.raster_set.grid.bounds
        return [max(gx0, xmin - pad), max(gy0, ymin - pad), min(gx1, xmax + pad), min(gy1, ymax + pad)]

    def observe(self, ws, step: PlanStep, outcome: ToolOutcome) -> Judgement:
        if outcome.error:
            return Judgement(f"The tool failed: {outcome.error}", "No", "continue")
        if outcome.tool == "spatial_relations":
            stats = outcome.stats
            multi = stats.get("multi_role_components", 0)
            text = (f"{stats.get('nodes', 0)} zones, {stats.get('edges', 0)} relations; {multi} groups join "
                    f"zones of two or more roles (largest: {stats.get('max_roles', 0)} roles).")
            return Judgement(text, "Yes" if multi else "No", "continue")
        if outcome.tool == "integrate_evidence":
            stats = outcome.stats
            ok = bool(stats.get("all_critical_supported"))
            missing = [f"step {s['step']} ({s['evidence']})" for s in stats.get("critical_missing", [])]
            text = ("Every critical step found clear evidence." if ok else
                    "Critical evidence is missing: " + (", ".join(missing) or "no critical step succeeded") + ".")
            return Judgement(text, "Yes" if ok else "No", "end")
        strong = [z for z in outcome.zones if self._strength(ws, z) >= 1.0]
        if not outcome.zones:
            return Judgement(f"No zone stands out on {', '.join(outcome.layers)}: no evidence for this step.", "No")
        parts = [self._zone_phrase(ws, zone) for zone in strong[:3]]
        together = self._coincident_roles(outcome)
        text = (f"{len(outcome.zones)} zones on {', '.join(outcome.layers)}; clear: " + ("; ".join(parts) or "none")
                + (f". Coincides with {', '.join(together)}." if together else "."))
        return Judgement(text, "Yes" if strong else "No", "continue")

    def _zone_phrase(self, ws, zone: dict) -> str:
        info = ws.layer(zone["layer"])
        share = zone["area_m2"] / max(ws.valid_area, 1e-9)
        if info.kind == "rgb":
            measure = f", colour level {float(zone['score_mean']):.2f}"
        elif info.kind == "index" and info.role != "structure" and "bg_sigma" in (info.stats or {}):
            unit = " (log units)" if info.stats["model"] == "lognormal" else ""
            measure = f", {self._contrast(ws, zone):.1f} sigma above background{unit}"
            if "ceiling" in info.stats:
                stops = self._clear_level(info) + self.settings.ceiling_clear_margin
                measure += f"; the rendering stops at {stops:.1f} sigma, so that is as clear as it can show"
        else:
            measure = ""
        return f"{zone['zone_id']} ({zone['position']}, {share:.1%} of the area{measure})"

    @staticmethod
    def _coincident_roles(outcome: ToolOutcome) -> list[str]:
        roles = set()
        for entry in outcome.stats.get("coincidence", []):
            roles |= {role for role, share in entry.get("overlap", {}).items() if share > 0}
        return sorted(roles)

    def _contrast(self, ws, zone: dict) -> float:
        """Zone mean above the layer's background in background spreads (colour fraction for renderings)."""
        info = ws.layer(zone["layer"])
        stats = info.stats or {}
        if info.kind == "rgb" or "bg_sigma" not in stats:
            return float(zone["score_mean"])
        # score_mean is on the evidence scale (the value, negated for favourable-low layers)
        sign = -1.0 if info.favourable == "low" else 1.0
        measure = to_measure(sign * float(zone["score_mean"]), stats)
        if measure != measure:  # not positive on a lognormal layer: no departure upwards
            return 0.0
        return sign * (measure - stats["bg_centre"]) / max(stats["bg_sigma"], 1e-12)

    def _strength(self, ws, zone: dict) -> float:
        """1.0 or more for a clear zone of its kind (contrast relative to the clear-anomaly level)."""
        info = ws.layer(zone["layer"])
        if zone["area_m2"] < self._min_area(ws) * self.settings.min_area_slack:
            return 0.0
        if zone.get("kind") in ZONE_KINDS_STRUCTURE or info.role in ("structure", "geological_map"):
            return 1.0
        if info.kind == "rgb":
            return float(zone["score_mean"]) / self.settings.colour_level
        if info.kind in ("vector", "categorical") or "bg_sigma" not in (info.stats or {}):
            return 1.0  # classed and vector evidence: present or not, no significance to measure
        return self._contrast(ws, zone) / self._clear_level(info)

    def _clear_level(self, info) -> float:
        """Spreads above background of a clear zone: the refinement level, or just under where a clipped
        rendering stops (it cannot show more)."""
        level = self.refinement_level
        stats = info.stats or {}
        if "ceiling" in stats:
            sign = -1.0 if info.favourable == "low" else 1.0
            reach = sign * (stats["ceiling"] - stats["bg_centre"]) / max(stats["bg_sigma"], 1e-12)
            level = min(level, reach - self.settings.ceiling_clear_margin)
        return max(level, 1e-6)

    # -- verifier ------------------------------------------------------------------------------------
    def _zones(self, ws) -> list[dict]:
        zones = ws.zones
        if not len(zones):
            return []
        rows = zones.to_dict("records")
        return [z for z in rows if z["geometry"] is not None and not z["geometry"].is_empty]

    def _reach(self, ws, metres: float) -> float:
        """A ground distance in map units, never under `min_reach_px` pixels of the analysis grid."""
        pixel = max(abs(v) for v in ws.raster_set.grid.pixel_size)
        return max(float(metres) * _per_metre(ws), self.settings.min_reach_px * pixel)

    def _near_m(self, item: dict) -> float:
        """An evidence item's reach in metres: its own `near_m`, else `default_near_m`."""
        return item.get("near_m", self.settings.default_near_m)

    def _cores(self, ws) -> list[dict]:
        """Candidate core zones, strongest first, each with the item it stands for ("seed"): clear zones of the
        deposit model's first critical anomaly item, and of its critical partner (the coincidence item "with" it),
        so a system whose clearest sign is the partner (silica or gossan over a porphyry's core) is weighed too;
        a partner's roles that form a halo around the core are no centre, nor are zones of a zoomed look (a lower
        threshold around a core confirms a partner there; it does not find new cores)."""
        zoomed = set()
        for node in ws.chain:
            if node.observation.calls and "bounds" in node.observation.calls[-1].get("params", {}):
                zoomed |= set(ws.zones_of(node.step.index)["zone_id"])
        items = _seed_items(ws.deposit_model)
        if items and not {info.role for info in self._evidence_layers(ws)}.intersection(items[0]["roles"]):
            items = items[:1]  # the first item cannot be tested at all: no partner stands in for it
        out = []
        for item in items:
            for zone in self._zones(ws):
                self.progress.check()
                if zone["zone_id"] in zoomed:
                    continue
                if zone["role"] in item["roles"] and self._supports(ws, zone, item):
                    if self._lithological(ws, zone):
                        self._lithology_zones.add(zone["zone_id"])
                    else:
                        out.append(dict(zone, seed=item["id"]))
        out.sort(key=lambda z: (-self._strength(ws, z) * math.sqrt(z["area_m2"]), z["zone_id"]))
        return out

    def _lithology_note(self, core: dict | None = None) -> str:
        zones = sorted(self._lithology_zones)
        note = "" if not zones else (
            f" Not taken as a core: {', '.join(zones[:3])}{' and more' if len(zones) > 3 else ''}, anomalies of a map "
            "unit raised as a whole (lithology, not a zoned system).")
        layers = sorted(self._unit_measures.get(core["zone_id"], ())) if core is not None else []
        if layers:
            note += (f" Not measured at the core: {', '.join(layers)}, which stand{'s' if len(layers) == 1 else ''} "
                     "high over the whole map unit the core lies in (lithology, not the system's own zoning).")
        return note

    def _lithological(self, ws, zone: dict) -> bool:
        """Whether a zone lies in a map unit that its layer's anomalies fill, or in one over which the layer itself
        stands high at the median without standing clearly higher over the zone (plugin.engine.lithology): the
        unit is raised as a whole, which is lithology, not a zoned system; an intrusive unit never is (the system's
        centre). Filled units are found from the first verdict's zones, the scene-wide looks, before any zoomed
        look."""
        from ..plugin.engine import lithology

        maps = [info for info in ws.layers if info.kind == "categorical" and info.role == "geological_map"
                and not info.silent]
        if not maps:
            return False
        grid = ws.raster_set.grid
        if self._filled is None:
            codes = ws.raster_set.read(maps[0].name)[0]
            polygons: dict = {}
            for row in self._zones(ws):
                if row.get("kind") not in ("unit", "contact"):
                    polygons.setdefault(row["layer"], []).append(row["geometry"])
            intrusive = lithology.intrusive_units(maps[0].units)
            self._filled = (codes, {layer: lithology.filled_units(codes, shapes, grid, intrusive)
                                   for layer, shapes in polygons.items()}, intrusive)
        codes, filled, intrusive = self._filled
        layer, geometry, info = zone["layer"], zone["geometry"], ws.layer(zone["layer"])
        if lithology.follows_units(geometry, codes, filled.get(layer, []), grid):
            return True
        if not self._measurable(info):
            return False
        spreads = self._in_spreads(ws, info)
        if layer not in self._lifted:
            # a rendering: its colour level a fifth of the bar above the scene's typical level (0 on a grey backdrop),
            # or coloured over most of the unit where most of the scene is backdrop
            level = (float(np.ma.median(spreads)) + self.settings.colour_level if info.kind == "rgb"
                     else lithology.LIFTED_SPREADS)
            lifted = set(lithology.lifted_units(codes, spreads, grid, level, intrusive))
            if info.kind == "rgb":
                coloured = np.ma.masked_array(self._coloured[layer].astype("float64"), np.ma.getmaskarray(spreads))
                if float(np.ma.median(coloured)) < self.settings.coloured_scene_share:
                    share = self.settings.coloured_unit_share
                    lifted |= set(lithology.lifted_units(codes, coloured, grid, share, intrusive))
            self._lifted[layer] = sorted(lifted)
        lifted = self._lifted[layer]
        # a system on a raised unit stands clearly above the unit's own level
        return (lithology.follows_units(geometry, codes, lifted, grid)
                and lithology.rise_above_units(geometry, codes, spreads, lifted, grid) < lithology.RISE_SPREADS)

    def _supports(self, ws, zone: dict, item: dict) -> bool:
        kind = item["kind"]
        if kind == "host_unit":
            return zone.get("kind") == "unit" and float(zone["score_mean"]) >= 1.0
        if kind == "structure":
            return zone.get("kind") in ZONE_KINDS_STRUCTURE or zone["role"] == "structure"
        return self._strength(ws, zone) >= 1.0 and zone.get("kind") not in ("unit", "contact")

    def _assess(self, ws, core: dict, zones: list[dict]) -> dict:
        """Evidence items around one core zone: item id -> {"level", "status", "gap", "zones", "measured"}. The
        item the core stands for is supported by it; when the core is the partner's, the first critical item
        is sought at or around it as a coincidence (at the partner's distance)."""
        model = ws.deposit_model
        out: dict = {}
        present_roles = {info.role for info in self._evidence_layers(ws)}
        items = _seed_items(model)
        seeds, first = {item["id"]: item for item in items}, items[0]
        for item in model["evidence"]:
            self.progress.check()
            if not present_roles.intersection(item["roles"]) or (item["kind"] == "host_unit"
                                                                 and not self._units_named(ws)):
                out[item["id"]] = {"level": item["level"], "status": "untestable", "gap": None, "zones": []}
                continue
            if item["id"] == core["seed"]:
                out[item["id"]] = {"level": item["level"], "status": "supported", "gap": 0.0,
                                   "zones": [core["zone_id"]]}
                continue
            if item["kind"] == "anomaly" and core["role"] in item["roles"] and first["id"] in out:
                # the core itself is this item's anomaly, over the first item's core as far as that was found
                out[item["id"]] = dict(out[first["id"]], level=item["level"], zones=[core["zone_id"]], measured=None)
                continue
            kind, near_m = item["kind"], self._near_m(item)
            if item["id"] in seeds:  # the core item around a partner's core
                kind, near_m = "coincidence", seeds[core["seed"]].get("near_m", near_m)
            reach = self._reach(ws, near_m)
            best_gap, best_zone, near_layers = math.inf, None, set()
            for zone in zones:
                self.progress.check()
                if zone["role"] not in item["roles"] or zone["zone_id"] == core["zone_id"]:
                    continue
                repeat = seen_again(zone["role"], core["role"])  # a composite repeats whatever it shows
                if repeat and (kind == "coincidence" or zone["role"] in COMPOSITE_SHOWS):
                    continue
                if not self._supports(ws, zone, item) or zone["zone_id"] in self._lithology_zones:
                    continue
                if kind == "halo" and zone["geometry"].convex_hull.contains(core["geometry"].centroid):
                    gap = 0.0
                elif kind == "coincidence":
                    gap = self._centre_gap(core["geometry"], zone["geometry"])
                else:
                    gap = float(core["geometry"].distance(zone["geometry"]))
                if gap < best_gap:
                    best_gap, best_zone = gap, zone["zone_id"]
                if gap <= reach * self.settings.marginal_factor:
                    near_layers.add(zone["layer"])
            if kind == "structure":
                for measured_on, gap in self._feature_gaps(ws, core["geometry"], item["roles"]):
                    if gap < best_gap:
                        best_gap, best_zone = gap, measured_on
            measured = None
            if kind in ("coincidence", "anomaly") and not best_gap <= reach and (
                    not best_gap <= reach * self.settings.marginal_factor or self._looked_again(ws, item)):
                # a marginal one awaits a zoomed look, then is measured as a missing one is; the model's centre
                # item around a partner's core may wrap it
                shell = item["id"] == first["id"]  # around a partner's core, a zone just off it is its shell
                found = self._measured_over(ws, core, item["roles"], shell=shell,
                                            besides=frozenset() if shell else near_layers)
                if found is not None:
                    (best_zone, measured), best_gap = found, 0.0
            if best_zone is None:
                status = "missing"
            elif best_gap <= reach:
                status = "supported"
            elif best_gap <= reach * self.settings.marginal_factor:
                status = "marginal"
            else:
                status = "missing"
            out[item["id"]] = {"level": item["level"], "status": status,
                               "gap": None if best_zone is None else round(best_gap, 3),
                               "zones": [best_zone] if best_zone else [], "measured": measured, "reach": reach}
        return out

    def _measured_over(self, ws, core: dict, roles, shell: bool = False,
                       besides: set = frozenset()) -> tuple[str, str] | None:
        """(name, the measurement in words) of a layer of `roles` (not the core's signal seen again, `seen_again`)
        that stands out from its surroundings at the core (plugin.engine.coincidence), significant at
        `coincidence_alpha` shared among every layer and candidate core tried; else None. `shell`: the layer may
        wrap the core as a shell reaching several of its radii out (a porphyry's phyllic shell around a potassic
        centre found on silica, magnetics or a gossan), so the measure takes in the shell scale too. `besides`:
        layers not measured, those whose own zone lies just off the core (marginal, and settled): what
        such a layer shows at the core is that zone's flank, already weighed (not so for a shell, whose zone
        beside the centre is the shell itself). Nor is a layer that raises the whole map unit the core lies in
        (`_lithological`, the core's outline taken as the layer's zone): it stands out there through the unit."""
        from ..plugin.engine.coincidence import place_radius_px, quantised, significance

        layers = [info for info in self._evidence_layers(ws) if info.role in roles and info.name not in besides
                  and not seen_again(info.role, core["role"]) and self._measurable(info)]
        raised = set()
        for info in layers:
            self.progress.check()
            if self._lithological(ws, dict(core, layer=info.name)):
                raised.add(info.name)
        if raised:
            self._unit_measures.setdefault(core["zone_id"], set()).update(raised)
        layers = [info for info in layers if info.name not in raised]
        if not layers:
            return None
        grid = ws.raster_set.grid
        radius = quantised(place_radius_px(core["geometry"], grid))
        bound = self.settings.coincidence_alpha / (len(layers) * max(self._places, 1))
        scales = SHELL_SCALES if shell else SCALES
        for info in layers:
            self.progress.check()
            found = significance(self._contrast_map(ws, info, radius, scales), core["geometry"], grid, radius, scales)
            if found is not None and found.p <= bound:
                return info.name, (f"{info.name} (measured at the core: it stands above its surroundings there "
                                   f"more than at all but a share p = {found.p:.4f} of {found.pixels} places of "
                                   f"the scene; bound {bound:.4f})")
        return None

    def _contrast_map(self, ws, info, radius_px: float, scales=SCALES) -> np.ndarray:
        """A layer's contrast map at a radius over `scales` (plugin.engine.coincidence), computed once per run; a
        set holding the usual SCALES reuses their map and adds only its other scales (the best over the union of
        scales is the larger of the two maps)."""
        from ..plugin.engine.coincidence import contrast_map

        key = (info.name, radius_px, scales)
        self.progress.check()
        if key not in self._contrasts:
            extra = tuple(s for s in scales if s not in SCALES)
            if extra and set(SCALES) <= set(scales):
                self._contrasts[key] = np.fmax(self._contrast_map(ws, info, radius_px),
                                               contrast_map(self._in_spreads(ws, info), radius_px, extra))
            else:
                self._contrasts[key] = contrast_map(self._in_spreads(ws, info), radius_px, scales)
        return self._contrasts[key]

    def _joint_core(self, ws) -> dict | None:
        """A candidate core where no zone is: the place where a layer of the first critical item and one of its
        critical partner stand out from their surroundings together, rarer than `joint_alpha` expected places
        by chance (plugin.engine.joint_places), else (no such place, or one that is lithology) the place where
        layers of three families the deposit model names (`_triple_groups`) do so, rarer than `triple_alpha`; at
        core radii of `joint_radii_m`, each layer at least the refinement level (`anomaly_sigma` x `refine_factor`
        spreads) above its surroundings there. None when there is none, when it is lithology (`_lithological`),
        or when the model's core is no area with a critical partner (`_seed_items`); no three-family place when no
        layer can test the first item (the model's core is then untested, as without any zone core). Worked out
        once per run."""
        if "core" in self._joint:
            return self._joint["core"]
        from ..plugin.engine.coincidence import MIN_RADIUS_PX, quantised
        from ..plugin.engine.joint_places import best_joint_place

        self._joint["core"] = None
        items = _seed_items(ws.deposit_model)
        if len(items) < 2:
            return None
        first, partner = items[0], items[1]
        grid = ws.raster_set.grid
        pixel = max(abs(v) for v in grid.pixel_size)
        radii = sorted({quantised(max(m * _per_metre(ws) / pixel, MIN_RADIUS_PX)) for m in self.settings.joint_radii_m})
        cores = [i for i in self._evidence_layers(ws) if i.role in first["roles"] and self._measurable(i)]
        partners = [i for i in self._evidence_layers(ws) if i.role in partner["roles"] and self._measurable(i)]
        pairs = [(a.name, b.name, r) for r in radii for a in cores for b in partners
                 if not seen_again(b.role, a.role)]
        testable = any(info.role in first["roles"] for info in self._evidence_layers(ws))
        triples = self._triple_groups(ws, first, radii) if testable else []
        for groups, bound in ((pairs, self.settings.joint_alpha), (triples, self.settings.triple_alpha)):
            if not groups:
                continue
            maps = {}
            for group in groups:
                for name in group[:-1]:
                    if (name, group[-1]) not in maps:
                        maps[(name, group[-1])] = self._contrast_map(ws, ws.layer(name), group[-1])
            place = best_joint_place(maps, groups, grid, floor=self.refinement_level, progress=self.progress)
            if place is None or place.expected > bound:
                continue
            core = dict(self._place_record(ws, place), seed=first["id"], partner=partner["id"], bound=bound,
                        joint=place)
            if self._lithological(ws, core):
                self._lithology_zones.add(core["zone_id"])
                continue
            self._joint["core"] = core
            return core
        return None

    def _triple_groups(self, ws, first: dict, radii: list) -> list:
        """(layer, layer, layer, radius) groups for the scan of three families: measurable layers of the roles the
        deposit model's anomaly, coincidence and halo items name (alteration, geophysics, soil geochemistry; no
        composite, which repeats the bands of others), three different families in each group, a layer of the
        first critical item first where one is in it. A soil anomaly or a halo fixes no place alone, but three
        kinds of evidence rare at one place are a zoned system, whatever each shows elsewhere."""
        from itertools import combinations

        named = {role for item in ws.deposit_model.get("evidence", [])
                 if item["kind"] in ("anomaly", "coincidence", "halo") for role in item["roles"]}
        named -= set(VECTOR_ROLES) | set(COMPOSITE_SHOWS)
        layers = [info for info in self._evidence_layers(ws) if info.role in named and self._measurable(info)]
        layers.sort(key=lambda info: info.role not in first["roles"])  # stable: a first-item layer leads
        groups = []
        for count, trio in enumerate(combinations(layers, 3)):
            if count % 1024 == 0:
                self.progress.check()
            if len(set.union(*(_families(info.role) for info in trio))) == 3:
                groups += [(*(info.name for info in trio), r) for r in radii]
        return groups

    @staticmethod
    def _place_record(ws, place) -> dict:
        """A joint place's zone record: a disc of the place's radius on its first layer."""
        from shapely.geometry import Point

        from ..plugin.zones import zone_record

        pixel = max(abs(v) for v in ws.raster_set.grid.pixel_size)
        names = list(place.layers)
        together = ", ".join(names[:-1]) + " and " + names[-1]
        return zone_record(Point(place.x, place.y).buffer(place.radius_px * pixel), ws.raster_set.grid,
                           zone_id=f"place where {together} stand out together",
                           layer=names[0], role=ws.layer(names[0]).role, kind="place",
                           score_mean=place.scores[0], score_max=place.scores[0], what="joint contrast")

    def _assess_joint(self, ws, core: dict, zones: list[dict]) -> dict:
        """Evidence items around a joint place: as around a zone core, with every anomaly or coincidence item of
        the role of another of the place's layers (the partner among them) supported by the joint measurement
        unless a zone supports it (a place found by scanning the scene is not measured again as if it had been
        fixed beforehand). A place of three families none of which is the first critical item's stands in for
        it: three kinds of evidence rare at one place are a zoned system, whatever the first item's layers show."""
        out = self._assess(ws, core, zones)
        place = core["joint"]
        names = list(place.layers)
        heights = [f"{name} {score:.1f}" for name, score in zip(names, place.scores)]
        measure = (f"{', '.join(heights[:-1])} and {heights[-1]} spreads above their surroundings, each rarer than a "
                   f"share {place.share:.4f} of the scene; chance count {place.expected:.3g}, bound {core['bound']}")
        first = _seed_items(ws.deposit_model)[0]
        if core["role"] not in first["roles"]:
            out[first["id"]] = dict(out[first["id"]], measured=f"three other kinds of evidence standing in, measured "
                                                                f"together at the place: {measure}")
        placed: set = set()  # items the place's measurement supports, each by the first of its layers there
        for name in names:
            role = ws.layer(name).role
            if role in first["roles"]:  # the core itself (`_assess`)
                continue
            others = " and ".join(n for n in names if n != name)
            for item in ws.deposit_model["evidence"]:
                if item["kind"] not in ("anomaly", "coincidence") or role not in item["roles"] or item["id"] in placed:
                    continue
                placed.add(item["id"])
                found = out.get(item["id"], {})
                if found.get("status") != "supported" or found.get("measured"):
                    out[item["id"]] = {"level": item["level"], "status": "supported", "gap": 0.0, "zones": [name],
                                       "measured": f"{name} (measured with {others} at the place: {measure})"}
        return out

    @staticmethod
    def _evidence_layers(ws) -> list:
        """The layers that may be evidence for the deposit model: all but geochemistry of elements that are not
        its pathfinders (plugin.pathfinders), vector layers other than fault lines or unit polygons, and
        layers that cannot speak (a single value over the data, `workspace.silence`): evidence that cannot vary
        cannot test an item, so an item only they could test is untestable, never missing."""
        return [info for info in model_layers(ws.layers, ws.deposit_model)
                if (info.kind != "vector" or info.role in VECTOR_ROLES) and not info.silent]

    @staticmethod
    def _measurable(info) -> bool:
        """Whether a layer can be measured at a place: a rendering, or an index with a fitted background."""
        return info.kind == "rgb" or (info.kind == "index" and "bg_sigma" in (info.stats or {}))

    def _in_spreads(self, ws, info) -> np.ma.MaskedArray:
        """A layer on the analysis grid in background spreads, favourable side up (a rendering: its colour level,
        0 on the grey backdrop), read once per run."""
        if info.name in self._spreads:
            return self._spreads[info.name]
        self.progress.check()
        if info.kind == "rgb":
            from ..plugin.tools.color_regions import colour_levels

            levels = colour_levels(ws.raster_set, info.name)
            self._coloured[info.name] = levels.coloured
            spreads = levels.level_map()
        else:
            stats = info.stats
            band = ws.raster_set.read(info.name)[0].astype("float64")
            measure = np.ma.log(band) if stats.get("model") == "lognormal" else band
            sign = -1.0 if info.favourable == "low" else 1.0
            spreads = sign * (measure - stats["bg_centre"]) / max(stats["bg_sigma"], 1e-12)
        self._spreads[info.name] = spreads
        return spreads

    def _feature_gaps(self, ws, geometry, roles) -> list:
        """(what was measured, distance) from `geometry` to the nearest feature of each vector layer of `roles`, and
        to the nearest corridor of each structure raster among them: whether the core lies near a fault does not
        depend on which few faults or corridor pieces a step marked as zones."""
        gaps = []
        for info in ws.layers:
            if info.role not in roles or info.silent:
                continue
            if info.kind == "index" and info.role == "structure":
                if info.name not in self._corridors:
                    self._corridors[info.name] = corridor_distance(ws.raster_set.read(info.name)[0], info.favourable,
                                                                   ws.raster_set.grid.pixel_size)
                gaps.append((f"{info.name} (nearest of its most favourable {100 - CORRIDOR_PERCENTILE:.0f} %)",
                             gap_to_corridor(self._corridors[info.name], geometry, ws.raster_set.grid)))
                continue
            if info.kind != "vector" or ws.raster_set.crs is None:
                continue
            if info.name not in self._features:
                frame = ws.raster_set.features(info.name)
                self._features[info.name] = frame[~(frame.geometry.isna() | frame.geometry.is_empty)]
            frame = self._features[info.name]
            if len(frame):
                gaps.append((f"{info.name} (nearest of all its features)", float(frame.distance(geometry).min())))
        return gaps

    def _centre_gap(self, core, zone) -> float:
        """How far a partner anomaly's centre lies beyond the core (0 when it overlaps one part in
        `centre_overlap_parts`, a third, of the smaller of the two): centres hardly move when a threshold or the
        pixel size grows both outlines, while the gap between outlines closes, so two anomalies kilometres apart
        never become neighbours that way."""
        smaller = min(core.area, zone.area)
        if core.intersects(zone) and core.intersection(zone).area >= smaller / self.settings.centre_overlap_parts:
            return 0.0
        radius = math.sqrt(core.area / math.pi)
        return max(0.0, float(core.centroid.distance(zone.centroid)) - radius)

    def _best_core(self, ws):
        """(core zone, assessment) of the candidate core with the most support, or None. The other zone cores
        that give a Yes on their own are kept (`_verified`): further systems of the scene."""
        zones = self._zones(ws)
        best, best_key = None, None
        cores = self._cores(ws)[:self.settings.max_cores]
        self._places = len(cores)
        assessed = [(core, self._assess(ws, core, zones)) for core in cores]  # each checks for cancel
        self._verified = [(core, assessment) for core, assessment in assessed if _answers_yes(assessment)]
        for core, assessment in assessed:
            key = self._score(ws, assessment)
            if best_key is None or key > best_key:
                best, best_key = (core, assessment), key
        if best is not None and not _answers_yes(best[1]):
            for core, assessment in assessed:
                stood_in = self._stood_in(ws, core, assessment, zones)
                key = self._score(ws, stood_in) if stood_in is not None and _answers_yes(stood_in) else None
                if key is not None and key > best_key:
                    best, best_key = (core, stood_in), key
        if best is None or not _answers_yes(best[1]):
            joint = self._joint_core(ws)
            if joint is not None:
                assessment = self._assess_joint(ws, joint, zones)
                if best_key is None or self._score(ws, assessment) > best_key:
                    best = (joint, assessment)
        return best

    def _stood_in(self, ws, core: dict, assessment: dict, zones: list[dict]) -> dict | None:
        """A partner's core assessed again with the first critical item stood in for by a second core signature
        (another family of the partner's core roles: silica, gossan, magnetite), a zone coinciding with the core or,
        with no such zone, a layer measured at the core (`_measured_over`), when every layer of the first item is a
        rendering showing no colour within the item's reach of the core: a picture's blank is not a measured
        absence, while two core signatures at one place are a zoned system. None when that does not apply or no
        second signature is there."""
        from ..plugin.zones import polygon_cells

        items = _seed_items(ws.deposit_model)
        first, found = items[0], assessment.get(items[0]["id"], {})
        if len(items) < 2 or core["seed"] == first["id"] or found.get("status") != "missing":
            return None
        renderings = [info for info in self._evidence_layers(ws) if info.role in first["roles"]]
        if not renderings or any(info.kind != "rgb" for info in renderings):
            return None
        reach = found.get("reach") or self._reach(ws, self._near_m(items[1]))
        around = polygon_cells([core["geometry"].buffer(reach)], ws.raster_set.grid, all_touched=True)
        for info in renderings:
            self._in_spreads(ws, info)
            if self._coloured[info.name][around].any():  # any colour, even the bottom of its scale, is a reading
                return None
        best_gap, best_zone = math.inf, None
        for zone in zones:
            if (zone["role"] not in items[1]["roles"] or seen_again(zone["role"], core["role"])
                    or zone["zone_id"] in self._lithology_zones or not self._supports(ws, zone, items[1])):
                continue
            gap = self._centre_gap(core["geometry"], zone["geometry"])
            if gap <= reach and gap < best_gap:
                best_gap, best_zone = gap, zone
        names = ", ".join(info.name for info in renderings) + (" shows" if len(renderings) == 1 else " show")
        blank = f"a second core signature; {names} no colour within reach, a rendering's blank, not a measured absence"
        if best_zone is None:
            measured = self._measured_over(ws, core, items[1]["roles"])
            if measured is None:
                return None
            (name, words), best_gap = measured, 0.0
            text = f"{words} standing in ({blank})"
        else:
            name = best_zone["zone_id"]
            text = f"{name} standing in ({best_zone['role'].replace('_', ' ')} coinciding with the core, {blank})"
        out = dict(assessment)
        out[first["id"]] = dict(found, status="supported", gap=round(best_gap, 3), zones=[name], measured=text)
        for item in ws.deposit_model["evidence"]:  # the core's own anomaly items follow the first item (`_assess`)
            if item["kind"] == "anomaly" and item["id"] != first["id"] and core["role"] in item["roles"]:
                out[item["id"]] = dict(out[first["id"]], level=item["level"], zones=[core["zone_id"]], measured=None)
        return out

    @staticmethod
    def _units_named(ws) -> bool:
        """Whether some categorical map's legend names rock types (not only unit codes)."""
        return any(legend_informative(info) or ws.favourable_units.get(info.name)
                   for info in ws.layers if info.kind == "categorical" and not info.silent)

    def _score(self, ws, assessment: dict) -> tuple:
        """A core's support, for choosing among cores: critical items short of support (a marginal one counts as
        supported while steps that can take a zoomed look at it have not had one and a round is left for it: the
        look settles it), then secondary items present, then fewer critical items still to be settled (a core
        already supported beats one that may be) or, once looked at, more marginal ones (nearer support)."""
        critical = [a for a in assessment.values() if a["level"] == "critical" and a["status"] != "untestable"]
        secondary = [a for a in assessment.values() if a["level"] == "secondary" and a["status"] != "untestable"]
        marginal = [k for k, a in assessment.items() if a["level"] == "critical" and a["status"] == "marginal"]
        pending = bool(marginal) and not self._settled(ws, marginal)
        settled = ("supported", "marginal") if pending else ("supported",)
        return (sum(a["status"] in settled for a in critical) - len(critical),
                sum(a["status"] == "supported" for a in secondary),
                -len(marginal) if pending else len(marginal))

    def verify(self, ws, chain) -> Verdict:
        yes, no = yes_no_letters(ws.choices)
        feedback: dict = {}
        for node in chain:
            obs = node.observation
            if obs.error:
                feedback[node.step.index] = f"The step failed ({obs.error}); run it again."
        if yes is None:
            families = alteration_choices(ws.choices)
            if families:
                self._check_consistency(ws, chain, feedback)
                return self._which_alteration(ws, families, feedback)
            return Verdict(False, None, feedback, {}, {},
                           "The offline verifier answers yes / no and which-alteration questions only; the choices "
                           "are " + ", ".join(f"{k}: {v}" for k, v in ws.choices.items()) + ".")
        self._check_consistency(ws, chain, feedback)
        best = self._best_core(ws)
        self._verdict_core = best[0]["geometry"] if best is not None else None
        model = ws.deposit_model
        if best is None:
            items = {i["id"]: i for i in model.get("evidence", [])}
            critical = {i: False for i, item in items.items() if item["level"] == "critical"}
            secondary = {i: False for i, item in items.items() if item["level"] == "secondary"}
            core_item = items[next(iter(critical))] if critical else None
            present = {info.role for info in self._evidence_layers(ws)}
            if core_item is not None and not present.intersection(core_item["roles"]):
                rationale = (f"The critical evidence of the {model.get('name', 'deposit')} model ({core_item['what']}) "
                             f"cannot be tested: it needs a layer with role {' or '.join(core_item['roles'])}."
                             + off_model_note(ws.layers, model, core_item["roles"])
                             + silent_note(ws.layers, core_item["roles"])
                             + " Without it the deposit can be neither confirmed nor ruled out.")
                return Verdict(not feedback, None, feedback, critical, secondary, rationale,
                               list(core_item["roles"]))
            else:
                wanted = core_item["what"] if core_item else "an anomaly"
                rationale = (f"No clear evidence of {wanted} was found: the critical evidence of the "
                             f"{model.get('name', 'deposit')} model is missing." + self._lithology_note())
            return Verdict(not feedback, no, feedback, critical, secondary, rationale)
        core, assessment = best
        critical = {k: a["status"] == "supported" for k, a in assessment.items()
                    if a["level"] == "critical" and a["status"] != "untestable"}
        secondary = {k: a["status"] == "supported" for k, a in assessment.items()
                     if a["level"] == "secondary" and a["status"] != "untestable"}
        marginal = [k for k, a in assessment.items() if a["status"] == "marginal" and a["level"] == "critical"]
        answer = yes if _answers_yes(assessment) else no
        if marginal and not self._refined(chain, marginal, ws):
            for index in self._steps_for(chain, marginal, ws):
                feedback.setdefault(index, "The coincidence with the core is marginal; look again around the core "
                                           "at a lower threshold.")
        joint = [core["seed"], core["partner"]] if "joint" in core else []
        if joint and not self._refined(chain, joint, ws):
            placed = [n.step.index for n in chain if n.step.tool == "color_regions" and n.step.layers
                      and n.step.layers[0] in core["joint"].layers]  # a third family's step too
            for index in sorted(set(self._steps_for(chain, joint, ws) + placed)):
                feedback.setdefault(index, "Layers of the core and its partner stand out together at a place where "
                                           "no zone was marked; look again around it at a lower threshold.")
        items = []
        for k, a in assessment.items():
            if a["status"] != "untestable":
                gap = "" if a["gap"] is None else (" at the core" if a["gap"] <= 0 else
                                                    f", {a['gap'] / _per_metre(ws):,.0f} m from the core")
                how = f", by {a['measured']}" if a.get("measured") else gap
                items.append(f"{k} [{a['level']}]: {a['status']}{how}")
        verdict_text = f"Core: {core['zone_id']} ({core['position']}). " + "; ".join(items)
        if answer == yes:
            conclusion = ("All critical evidence is supported and secondary evidence is present." if secondary else
                          "All critical evidence is supported; no secondary item can be tested with these layers.")
        else:
            missing = [k for k, ok in critical.items() if not ok]
            conclusion = (f"Critical evidence lacks support: {', '.join(missing)}." if missing else
                          "No secondary evidence is present.")
        named, others = {}, ""
        if answer == yes and _seeds_are_areas(model):  # a fault corridor or a map unit outlines no system
            named, others = self._named_systems(ws, core, assessment)
        untested = [item for item in model["evidence"] if assessment.get(item["id"], {}).get("status") == "untestable"
                    and silent_note(ws.layers, item["roles"])]
        quiet = "".join(f" {item['id']} [{item['level']}] is untestable.{silent_note(ws.layers, item['roles'])}"
                        for item in untested)
        return Verdict(not feedback, answer, feedback, critical, secondary,
                       f"{verdict_text}. {conclusion}{others}{self._lithology_note(core)}{quiet}", core=named)

    def _named_systems(self, ws, core: dict, assessment: dict) -> tuple[dict, str]:
        """(Verdict.core, a sentence naming the others): the outline of the system the Yes rests on and those of
        the other zone cores that give a Yes on their own and lie outside it (further systems of the scene, drawn
        as targets after it), each simplified to the analysis grid's pixel."""
        from shapely.geometry import GeometryCollection
        from shapely.ops import unary_union

        pixel = max(abs(v) for v in ws.raster_set.grid.pixel_size)
        outline = self._system_outline(ws, core, assessment).simplify(pixel)
        named = {"label": core["zone_id"], "wkt": outline.wkt}
        covered, labels, systems = outline, [], []
        for other, found in self._verified:
            if other["zone_id"] == core["zone_id"] or covered.contains(other["geometry"].representative_point()):
                continue
            system = self._system_outline(ws, other, found).simplify(pixel).difference(covered)
            pieces = [p for p in getattr(system, "geoms", [system])
                      if p.geom_type == "Polygon" and p.area >= pixel ** 2]
            if pieces:
                labels.append(other["zone_id"])
                systems.append(unary_union(pieces))
                covered = unary_union([covered] + pieces)
        if not systems:
            return named, ""
        named.update(others=GeometryCollection(systems).wkt, others_label=", ".join(labels))
        return named, (f" Also verified on their own: {', '.join(labels)} (every critical item supported around "
                       "each), drawn as targets after the core.")

    def _system_outline(self, ws, core: dict, assessment: dict):
        """The system a Yes rests on (plugin.engine.core_target): the core and the zones supporting its anomaly
        and coincidence items, each cut to within the item's reach of the core."""
        from ..plugin.engine.core_target import system_outline

        zones = {z["zone_id"]: z for z in self._zones(ws)}
        items = {i["id"]: i for i in ws.deposit_model.get("evidence", [])}
        partners = []
        for key, found in assessment.items():
            item = items.get(key, {})
            if found["status"] != "supported" or item.get("kind") not in ("anomaly", "coincidence"):
                continue
            reach = found.get("reach") or self._reach(ws, self._near_m(item))  # as the item was judged
            partners += [(zones[z]["geometry"], reach) for z in found["zones"] if z in zones and z != core["zone_id"]]
        return system_outline(core["geometry"], partners)

    def _which_alteration(self, ws, families: dict, feedback: dict) -> Verdict:
        """The alteration family with the clearest zones in the chain (the "none" choice when no family
        shows a clear one); Insufficient evidence when no layer can show any asked family."""
        asked = {family: letter for letter, family in families.items() if family != "none"}
        testable = {FAMILY.get(info.role) for info in ws.layers if not info.silent} & set(asked)
        if not testable:
            roles = sorted(role for role, family in FAMILY.items() if family in asked)
            return Verdict(not feedback, None, feedback, {}, {}, "No layer can show any of the asked alteration "
                           f"kinds: it needs a layer with role {' or '.join(roles)}.", roles)
        strength: dict = {}
        for zone in self._zones(ws):
            family = FAMILY.get(zone["role"])
            if family in testable and zone.get("kind") not in ("unit", "contact"):
                strength[family] = max(strength.get(family, 0.0), self._strength(ws, zone))
        present = sorted((f for f, value in strength.items() if value >= 1.0), key=lambda f: (-strength[f], f))
        critical = {f"{family}_alteration": family in present for family in sorted(testable)}
        untested = sorted(set(asked) - testable)
        caveat = f" Not testable with these layers: {', '.join(untested)}." if untested else ""
        if present:
            best = present[0]
            others = [f"{f} ({strength[f]:.1f})" for f in present[1:]]
            rationale = (f"The clearest alteration is {best}: its strongest zone is {strength[best]:.1f} times the "
                         "clear-anomaly level" + (f"; also clear: {', '.join(others)}" if others else "") + "."
                         + caveat)
            return Verdict(not feedback, asked[best], feedback, critical, {}, rationale)
        none_letter = next((letter for letter, family in families.items() if family == "none"), None)
        rationale = ("No alteration layer shows a zone clearly above its background (tested: "
                     + ", ".join(sorted(testable)) + ")." + caveat)
        return Verdict(not feedback and none_letter is not None, none_letter, feedback, critical, {}, rationale)

    def _check_consistency(self, ws, chain, feedback: dict) -> None:
        """A marking step whose Sub_Inference contradicts its own zones is sent back (not one the controller rejected
        every time: the engine holds it unsupporting whatever its zones show)."""
        for node in chain:
            obs = node.observation
            if obs.error or node.step.tool not in ("color_regions", "mark_boxes"):
                continue
            if obs.controller and not any(v.get("ok") for v in obs.controller):
                continue
            zones = ws.zones_of(node.step.index)
            rows = zones.drop(columns="geometry").to_dict("records") if len(zones) else []
            clear = any(self._strength(ws, z) >= 1.0 for z in rows)
            if (obs.sub_inference == "Yes") != clear:
                said = "claims clear evidence" if obs.sub_inference == "Yes" else "sees no evidence"
                feedback.setdefault(node.step.index, f"Step {node.step.index} {said}, but its zones "
                                    f"{'do not show' if not clear else 'show'} a clear anomaly; re-examine it.")

    def _looked_again(self, ws, item: dict) -> bool:
        """Whether a marginal item is settled: a secondary one at once (the verifier asks a zoomed look for
        critical items only), a critical one as `_settled`."""
        return item["level"] != "critical" or self._settled(ws, [item["id"]])

    def _settled(self, ws, items: list) -> bool:
        """Whether marginal items can have no further look: their steps had their zoomed look, none can have
        one, or no round is left."""
        return ws.last_round or not self._steps_for(ws.chain, items, ws) or self._refined(ws.chain, items, ws)

    @staticmethod
    def _refined(chain, items: list, ws) -> bool:
        """Whether the steps testing these items were already re-executed with a zoomed look."""
        wanted = _roles_of(ws, items)
        for node in chain:
            if node.step.layers and ws.layer(node.step.layers[0]).role in wanted and node.observation.calls:
                if "bounds" in node.observation.calls[-1].get("params", {}):
                    return True
        return False

    @staticmethod
    def _steps_for(chain, items: list, ws) -> list[int]:
        wanted = _roles_of(ws, items)
        return [n.step.index for n in chain if n.step.tool == "color_regions" and n.step.layers
                and ws.layer(n.step.layers[0]).role in wanted]

    # -- favourability ---------------------------------------------------------------------------------
    def evidence_plan(self, ws) -> list:
        """Each layer's transformation, membership and weight from the deposit model (and the units the
        user named), with the reason; layers it cannot use are left out (the engine says why)."""
        from ..plugin.favourability.knowledge import knowledge_specs

        return knowledge_specs(ws.layers, ws.deposit_model, ws.favourable_units)[0]

    def target_verdicts(self, ws, measured: list) -> list:
        """Each target judged by the rules of `target_evidence.judge` on the executor's measurements of it."""
        from ..plugin.engine.target_evidence import judge

        return [judge(target) for target in measured]

    # -- localization -----------------------------------------------------------------------------------
    def localization_params(self, ws) -> dict:
        """The deposit model's localization defaults (seed C.4 parameters)."""
        params = dict(ws.deposit_model.get("localization", {}))
        params["area_type_weights"] = dict(params.get("area_type_weights", {}))
        return params


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


def _centre_words(model: dict) -> str:
    """What the deposit model's evidence gathers around, in its own words: its first critical item ('shear
    corridor' for orogenic gold, 'phyllic core' for a porphyry), 'main evidence' for a model without one."""
    seeds = _seed_items(model)
    return seeds[0]["id"].replace("_", " ") if seeds else "main evidence"


def _answers_yes(assessment: dict) -> bool:
    """Whether an assessment gives a Yes: every testable critical item supported, a secondary one present."""
    critical = [a for a in assessment.values() if a["level"] == "critical" and a["status"] != "untestable"]
    secondary = [a for a in assessment.values() if a["level"] == "secondary" and a["status"] != "untestable"]
    return (bool(critical) and all(a["status"] == "supported" for a in critical)
            and (not secondary or any(a["status"] == "supported" for a in secondary)))


def _seeds_are_areas(model: dict) -> bool:
    """Whether the deposit model's cores are areas (an alteration or geochemical anomaly), not lines or units."""
    core = next((i for i in model.get("evidence", []) if i["level"] == "critical"), None)
    return core is not None and core["kind"] == "anomaly" and not set(core["roles"]) & {"structure", "geological_map"}


def _seed_items(model: dict) -> list[dict]:
    """The items a candidate core may stand for: the first critical item and, when that is an alteration or
    geochemical anomaly (an area), its critical coincidence partner, less the partner's roles that form a halo
    item around the core, composites and soil surveys."""
    evidence = model.get("evidence", [])
    core = next((i for i in evidence if i["level"] == "critical"), None)
    if core is None:
        return []
    if not _seeds_are_areas(model):
        return [core]  # a line or a map unit is no place to measure around: only the first item seeds
    # a halo's roles ring the core, a false-colour composite is a picture, not one mineral's measure, and a soil
    # anomaly spreads downslope and through cover: it confirms a place found otherwise, it does not fix one
    left_out = ({role for i in evidence if i["kind"] == "halo" for role in i["roles"]}
                | {"false_color_composite", "geochemistry"})
    partners = [dict(i, roles=[r for r in i["roles"] if r not in left_out]) for i in evidence
                if i["level"] == "critical" and i["kind"] == "coincidence" and i.get("with") == core["id"]]
    return [core] + [p for p in partners[:1] if p["roles"]]


def _roles_of(ws, item_ids: list) -> set:
    roles = set()
    for item in ws.deposit_model.get("evidence", []):
        if item["id"] in item_ids:
            roles |= set(item["roles"])
    return roles


def legend_informative(info) -> bool:
    """Whether a categorical layer's unit names describe rocks ('Cretaceous limestone', 'Monzonite'), not bare
    codes ('LPZ'): some name has several words or a known lithology word."""
    from ..plugin.tools.lithology_words import lithology_groups

    words = {w for group in lithology_groups().values() for w in group} | set(lithology_groups())
    return any(len(str(name).split()) > 1 or str(name).strip().lower().rstrip("s") in words
               for name in info.units.values())


def favourable_units(info, model: dict) -> list[str]:
    """Legend names of a categorical layer that match the deposit model's favourable unit keywords."""
    keywords = [k.lower() for k in model.get("favourable_units", [])]
    names = []
    for name in info.units.values():
        text = " " + " ".join(str(name).lower().replace("-", " ").split()) + " "
        if any(f" {k} " in text or f" {k}s " in text for k in keywords):
            names.append(str(name))
    return sorted(set(names))

