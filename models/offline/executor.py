"""The offline executor: deterministic tool calls and the observer's judgement of their results.

Index anomalies are cut at the layer's background centre plus `anomaly_sigma` robust spreads, renderings keep
colours above `colour_level` of their colour bar; each controller retry is stricter; on a re-execution the
verifier asked for, the step looks again around the candidate core at the refinement level (a zoomed,
confirmatory look)."""
from __future__ import annotations

from ...plugin.labels import plural, words
from ...plugin.reason.contract import Judgement, PlanStep, ToolCall, ToolOutcome
from .findings import Zone
from .planner import colour_params
from .scene import Scene


def propose(scene: Scene, step: PlanStep, feedback: str, attempt: int, around) -> ToolCall:
    """The step's tool call: its planned parameters, stricter on a controller retry; on the verifier's
    re-execution, a zoomed look at the refinement level within `around()` (map bounds, or None for the whole
    scene)."""
    ws, settings, params = scene.ws, scene.settings, dict(step.params)
    if step.tool == "color_regions" and step.layers:
        info = ws.layer(step.layers[0])
        sigma = settings.anomaly_sigma
        refining = bool(feedback) and attempt == 1
        if refining:
            sigma = scene.refinement_level
            bounds = around()
            params = colour_params(scene, info, sigma)
            if bounds is not None:
                params["bounds"] = bounds
        elif attempt > 1:
            params = colour_params(scene, info, sigma + settings.retry_sigma_step * (attempt - 1))
            if info.kind == "rgb":
                level = settings.colour_level + settings.retry_level_step * (attempt - 1)
                params["level"] = round(min(settings.retry_level_cap, level), 4)
            params["max_regions"] = max(1, settings.max_regions - settings.retry_region_step * (attempt - 1))
    elif attempt > 1 and step.tool in ("feature_regions", "vector_evidence", "categorical"):
        params["max_zones"] = max(1, settings.max_regions - settings.retry_region_step * (attempt - 1))
    return ToolCall(step.tool, list(step.layers), params)


def observe(scene: Scene, step: PlanStep, outcome: ToolOutcome) -> Judgement:
    """A tool result judged from its zones' contrast, size and cross-layer coincidence."""
    if outcome.error:
        return Judgement(f"The tool failed: {outcome.error}", "No", "continue")
    if outcome.tool == "spatial_relations":
        stats = outcome.stats
        multi = stats.get("multi_role_components", 0)
        text = (f"{plural(stats.get('nodes', 0), 'zone')}, {plural(stats.get('edges', 0), 'relation')}; "
                f"{plural(multi, 'group')} {'joins' if multi == 1 else 'join'} zones of two or more roles (largest: "
                f"{plural(stats.get('max_roles', 0), 'role')}).")
        return Judgement(text, "Yes" if multi else "No", "continue")
    if outcome.tool == "integrate_evidence":
        stats = outcome.stats
        ok = bool(stats.get("all_critical_supported"))
        missing = [f"step {s['step']} ({words(s['evidence'])})" for s in stats.get("critical_missing", [])]
        text = ("Every critical step found clear evidence." if ok else
                "Critical evidence is missing: " + (", ".join(missing) or "no critical step succeeded") + ".")
        return Judgement(text, "Yes" if ok else "No", "end")
    strong = [z for z in map(Zone.of, outcome.zones) if scene.strength(z) >= 1.0]
    if not outcome.zones:
        return Judgement(f"No zone stands out on {', '.join(outcome.layers)}: no evidence for this step.", "No")
    parts = [_zone_phrase(scene, zone) for zone in strong[:3]]
    together = _coincident_roles(outcome)
    text = (f"{plural(len(outcome.zones), 'zone')} on {', '.join(outcome.layers)}; clear: "
            + ("; ".join(parts) or "none")
            + (f". Coincides with {', '.join(together)}." if together else "."))
    return Judgement(text, "Yes" if strong else "No", "continue")


def _zone_phrase(scene: Scene, zone: Zone) -> str:
    """A clear zone in words: its id, position, share of the area and how far it stands above background."""
    ws = scene.ws
    info = ws.layer(zone.layer)
    share = zone.area_m2 / max(ws.valid_area, 1e-9)
    if info.kind == "rgb":
        measure = f", colour level {zone.score_mean:.2f}"
    elif info.kind == "index" and info.role != "structure" and "bg_sigma" in (info.stats or {}):
        unit = " (log units)" if info.stats["model"] == "lognormal" else ""
        measure = f", {scene.contrast(zone):.1f} sigma above background{unit}"
        if "ceiling" in info.stats:
            stops = scene.clear_level(info) + scene.settings.ceiling_clear_margin
            measure += (f"; its values stop at {stops:.1f} sigma (a top class, or where a rendering clips), so that "
                        "is as clear as it can show")
    else:
        measure = ""
    return f"{zone.zone_id} ({zone.position}, {share:.1%} of the area{measure})"


def _coincident_roles(outcome: ToolOutcome) -> list[str]:
    """The roles of other layers whose zones overlap the step's."""
    roles = set()
    for entry in outcome.stats.get("coincidence", []):
        roles |= {role for role, share in entry.get("overlap", {}).items() if share > 0}
    return sorted(roles)
