"""The offline verifier's judgement of each target: the test it weighs a candidate core by, made at the target.

A target is a place like a core, only no item stands for it: every item of the deposit model is sought around its
outline (`CoreSearch.assess`): a zone of the item within the item's reach (a fault or a host unit also as the
distance to the nearest of all the layer's features or host-unit cells), else, for an anomaly or coincidence item,
a layer of its roles measured at the target (coincidence.py) and counted when rarer than `alpha` shared among the
layers and the targets judged. No zoomed look follows, so a zone only just out of reach does not count. The verdict
then follows the rule the answer follows (target_evidence.verdict_of). The targets come from the surface, which
weighs the same layers: a layer that stands out at a target was expected to; what the test adds is which items the
chain's own zones and measure hold there, and which they do not.
"""
from __future__ import annotations

from shapely import wkt

from ...plugin.judge.target_evidence import verdict_of, verdict_words
from ...plugin.labels import zone_label
from ...plugin.zones import zone_record
from .cores import CoreSearch
from .findings import Core, Zone
from .model_items import per_metre
from .scene import Scene

STATUS = {"supported": "supported", "missing": "absent", "unseen": "untestable", "untestable": "untestable"}
"""A settled finding's status as a target's item status (target_evidence.STATUSES)."""


def judge_targets(scene: Scene, measured: list) -> list[dict]:
    """{"items": [{"id", "level", "status", "layer", "evidence"}], "verdict", "why"} for each measured target (its
    `outline`, WKT in the analysis CRS, is the place weighed)."""
    search = CoreSearch(scene)
    search.places = max(len(measured), 1)
    zones = scene.zones()
    by_id = {zone.zone_id: zone for zone in zones}
    items = {item["id"]: item for item in scene.ws.deposit_model.get("evidence", [])}
    out = []
    for target in measured:
        scene.progress.check()
        place = _place(scene, target)
        findings = search.assess(place, zones, settled=True)
        judged = [{"id": key, "level": found.level, "status": STATUS[found.status],
                   "layer": _layer(scene, found, by_id), "evidence": _words(scene, items[key], found, by_id)}
                  for key, found in findings.items()]
        verdict = verdict_of(judged)
        out.append({"items": judged, "verdict": verdict, "why": verdict_words(verdict, judged)})
    return out


def _place(scene: Scene, target: dict) -> Core:
    """A target as a place no item stands for."""
    outline = wkt.loads(target["outline"])
    record = zone_record(outline, scene.ws.raster_set.grid, zone_id=f"target {target['target']}", layer="", role="",
                         kind="target", score_mean=0.0, score_max=0.0, what="target")
    return Core(Zone.of(record), seed="")


def _layer(scene: Scene, found, by_id: dict) -> str:
    """The layer the evidence lies on: a zone's, else the layer measured or measured to."""
    if not found.zones:
        return ""
    zone = by_id.get(found.zones[0])
    if zone is not None:
        return zone.layer
    said = str(found.zones[0])  # a layer's name, or its name and what was measured on it in brackets
    names = {info.name for info in scene.ws.layers}
    return said if said in names else said.rsplit(" (", 1)[0]


def _words(scene: Scene, item: dict, found, by_id: dict) -> str:
    """What was found for one item at a target, with the figure."""
    metres = per_metre(scene.ws)
    if found.status == "untestable":
        return "no layer of its roles can test it"
    if found.measured:
        return found.measured
    reach = f"{(found.reach or 0.0) / metres:,.0f} m"
    if found.status == "supported":
        where = "at the target" if not found.gap else f"{found.gap / metres:,.0f} m from the target"
        zone = by_id.get(found.zones[0])
        what = f"{zone_label(found.zones[0])}: {zone.description}" if zone is not None else found.zones[0]
        return f"{what}, {where} (reach {reach})"
    nearest = ("" if found.gap is None else
               f"; the nearest, {zone_label(found.zones[0])}, lies {found.gap / metres:,.0f} m away")
    measured = (" and no layer of its roles stands out at the target" if item["kind"] in ("anomaly", "coincidence")
                else "")
    return f"no zone of {item.get('what', item['id'])} within {reach}{measured}{nearest}"
