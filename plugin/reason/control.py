"""The executor's guard: every zone-marking tool output goes through the rule-based controller.

Thin glue between the loop and `plugin/controller.py`: regions are the tool's zones with the words
the proposer stated about them (vision path), area fractions refer to the area with data, and on the
final attempt the controller's deterministic `enforce` keeps the best regions within the limits.
"""
from __future__ import annotations

import geopandas as gpd

from ..controller import ControllerLimits, Region, enforce, validate
from ..decisions import CORE
from .contract import ZONE_TOOLS, ToolCall
from .workspace import Workspace

# decision numbers: their reasons and provenance are in plugin/decisions.py
SPECK_M2 = CORE.speck_m2


def limits_from(settings: dict | None, max_attempts: int, georeferenced: bool = True) -> ControllerLimits:
    """Controller limits from the run's settings (paper defaults for what is not given; specks measured on the
    ground when the analysis grid is georeferenced, as a share of the image otherwise)."""
    known = set(ControllerLimits.__dataclass_fields__)
    values = {k: v for k, v in (settings or {}).items() if k in known}
    values["max_attempts"] = max_attempts
    if georeferenced:
        values.setdefault("min_area_m2", SPECK_M2)
    return ControllerLimits(**values)


def _regions(zones: gpd.GeoDataFrame, call: ToolCall, stated: dict) -> list[Region]:
    regions = []
    for zone_id, geometry, score, description in zip(zones["zone_id"], zones.geometry, zones["score_mean"],
                                                     zones["description"]):
        if call.tool == "mark_boxes":
            regions.append(Region(zone_id, geometry, call.description, stated.get(zone_id, ""), float(score)))
        else:
            regions.append(Region(zone_id, geometry, str(description), "", float(score)))
    return regions


def check_zones(ws: Workspace, call: ToolCall, zones: gpd.GeoDataFrame, stated: dict, attempt: int,
                limits: ControllerLimits) -> dict:
    """The controller verdict (a dict) of one attempt's zones.

    On a failing final attempt the verdict also carries `enforced_ids`: the zones `enforce` keeps.
    """
    if call.tool not in ZONE_TOOLS or not len(zones):
        return {"ok": True, "attempt": attempt, "final": attempt >= limits.max_attempts, "errors": [],
                "feedback": "", "measures": {"regions": int(len(zones))}}
    regions = _regions(zones, call, stated)
    grid = ws.view_grid(call.view_bounds) if call.tool == "mark_boxes" else ws.raster_set.grid
    reference = ws.valid_area
    verdict = validate(regions, grid, attempt, limits, reference_area=reference).to_dict()
    verdict["measures"] = {k: v for k, v in verdict["measures"].items() if k != "area_fractions"}
    if not verdict["ok"] and attempt >= limits.max_attempts:
        kept = enforce(regions, grid, limits, reference_area=reference)
        verdict["enforced_ids"] = [r.zone_id for r in kept.regions]
        verdict["enforced_dropped"] = dict(kept.dropped)
    return verdict
