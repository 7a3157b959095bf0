"""The offline verifier: the chain judged by the deposit model's rule (STA-CoT, Appendix C.4).

The answer is "Yes" only when, around the best candidate core (`CoreSearch`), every testable critical item is
supported and at least one secondary item is present; a Yes names its system, and every other core that gives a
Yes on its own outside it, as targets (plugin.map.core_target). A No that rests only on critical items unseen at
the core (none of their layers holds data there) is no answer: the evidence is insufficient. The chain goes back
for repair when a step failed, when a step's inference contradicts its own zones, or when a critical item is
marginal (its steps take a zoomed look around the core)."""
from __future__ import annotations

from dataclasses import replace

from shapely.geometry import GeometryCollection
from shapely.geometry.base import BaseGeometry
from shapely.ops import unary_union

from ...plugin.labels import layer_of, zone_label
from ...plugin.pathfinders import off_model_note
from ...plugin.reason.contract import Verdict
from ...plugin.reason.questions import alteration_choices, yes_no_letters
from ...plugin.reason.workspace import silent_note
from .cores import JOINT_PLACE, THREE_FAMILIES, ZONE_CORE, CoreSearch
from .findings import Core, Zone, answers_yes
from .looks import refined, steps_for
from .model_items import FAMILY, per_metre, seeds_are_areas
from .outline import system_outline
from .scene import Scene

NO_CORE = "no core"
"""No candidate core: no clear zone of the first critical item or its partner, nor a place found by a scan."""
UNTESTABLE = "first item untestable"
"""No layer can test the deposit model's first critical item."""
CLEAREST_FAMILY = "clearest alteration family"
"""A which-alteration question: the family whose strongest zone stands clearest above its background."""
ROUTES = (ZONE_CORE, JOINT_PLACE, THREE_FAMILIES, NO_CORE, UNTESTABLE, CLEAREST_FAMILY)
"""Every route a verdict of this reasoner names (`Verdict.route`): how its place was found, or why there is none."""


def verify(scene: Scene, chain) -> tuple[Verdict, BaseGeometry | None]:
    """The verdict on the chain and the outline of the core it weighed (None when none): a yes / no question
    from the best candidate core (`CoreSearch`), a which-alteration question from the clearest family."""
    ws = scene.ws
    yes, no = yes_no_letters(ws.choices)
    feedback: dict = {}
    for node in chain:
        obs = node.observation
        if obs.error:
            feedback[node.step.index] = f"The step failed ({obs.error}); run it again."
    if yes is None:
        families = alteration_choices(ws.choices)
        if families:
            _check_consistency(scene, chain, feedback)
            return _which_alteration(scene, families, feedback)
        return Verdict(False, None, feedback, {}, {},
                       "The offline verifier answers yes / no and which-alteration questions only; the choices "
                       "are " + ", ".join(f"{k}: {v}" for k, v in ws.choices.items()) + "."), None
    _check_consistency(scene, chain, feedback)
    search = CoreSearch(scene)
    best = search.best()
    model = ws.deposit_model
    if best is None:
        return _no_core(scene, search, no, feedback), None
    core, assessment = best
    critical = {k: a.status == "supported" for k, a in assessment.items()
                if a.level == "critical" and a.status not in ("untestable", "unseen")}
    secondary = {k: a.status == "supported" for k, a in assessment.items()
                 if a.level == "secondary" and a.status not in ("untestable", "unseen")}
    marginal = [k for k, a in assessment.items() if a.status == "marginal" and a.level == "critical"]
    answer = yes if answers_yes(assessment) else no
    unseen = [k for k, a in assessment.items() if a.status == "unseen" and a.level == "critical"]
    if answer == no and unseen and answers_yes({k: replace(a, status="supported") if k in unseen else a
                                                for k, a in assessment.items()}):
        answer = None  # the No would rest on critical items the core hides from their layers alone
    _ask_for_looks(chain, ws, core, marginal, feedback)
    verdict_text = f"Core: {core.zone_id} ({core.position}). " + "; ".join(_item_lines(assessment, ws))
    conclusion = _conclusion(chain, answer, yes, unseen, critical, secondary)
    named: dict = {}
    others = ""
    if answer == yes and seeds_are_areas(model):  # a fault corridor or a map unit outlines no system
        named, others = _named_systems(scene, search.verified, core, assessment)
    untested = [item for item in model["evidence"] if getattr(assessment.get(item["id"]), "status", "") == "untestable"
                and silent_note(ws.layers, item["roles"])]
    quiet = "".join(f" {item['id']} [{item['level']}] is untestable.{silent_note(ws.layers, item['roles'])}"
                    for item in untested)
    roles = {item["id"]: item["roles"] for item in model["evidence"]}
    hidden = sorted({role for k in unseen for role in roles[k]}) if answer is None else []
    verdict = Verdict(not feedback, answer, feedback, critical, secondary,
                      f"{verdict_text}. {conclusion}{others}{search.lithology_note(core)}{quiet}", hidden, core=named,
                      place=search.place_words(core), route=search.route)
    return verdict, core.geometry


def _no_core(scene: Scene, search: CoreSearch, no: str | None, feedback: dict) -> Verdict:
    """The verdict when no candidate core was found: Insufficient evidence when no layer can test the first
    critical item, else No (the critical evidence is missing)."""
    ws = scene.ws
    model = ws.deposit_model
    items = {i["id"]: i for i in model.get("evidence", [])}
    critical = {i: False for i, item in items.items() if item["level"] == "critical"}
    secondary = {i: False for i, item in items.items() if item["level"] == "secondary"}
    core_item = items[next(iter(critical))] if critical else None
    present = {info.role for info in scene.evidence_layers()}
    if core_item is not None and not present.intersection(core_item["roles"]):
        rationale = (f"The critical evidence of the {model.get('name', 'deposit')} model ({core_item['what']}) "
                     f"cannot be tested: it needs {layer_of(core_item['roles'])}."
                     + off_model_note(ws.layers, model, core_item["roles"])
                     + silent_note(ws.layers, core_item["roles"])
                     + " Without it the deposit can be neither confirmed nor ruled out.")
        return Verdict(not feedback, None, feedback, critical, secondary, rationale, list(core_item["roles"]),
                       route=UNTESTABLE)
    wanted = core_item["what"] if core_item else "an anomaly"
    rationale = (f"No clear evidence of {wanted} was found: the critical evidence of the "
                 f"{model.get('name', 'deposit')} model is missing." + search.lithology_note())
    return Verdict(not feedback, no, feedback, critical, secondary, rationale, route=NO_CORE)


def _ask_for_looks(chain, ws, core: Core, marginal: list, feedback: dict) -> None:
    """Send back for a zoomed look around the core the steps of its marginal critical items, and, at a scanned
    place, those of the core and its partner (a third family's marking step too), unless they have had one."""
    if marginal and not refined(chain, marginal, ws):
        for index in steps_for(chain, marginal, ws):
            feedback.setdefault(index, "The coincidence with the core is marginal; look again around the core "
                                       "at a lower threshold.")
    if core.joint is None:
        return
    place = core.joint
    joint = [core.seed, core.partner]
    if not refined(chain, joint, ws):
        placed = [n.step.index for n in chain if n.step.tool == "color_regions" and n.step.layers
                  and n.step.layers[0] in place.layers]  # a third family's step too
        for index in sorted(set(steps_for(chain, joint, ws) + placed)):
            feedback.setdefault(index, "Layers of the core and its partner stand out together at a place where "
                                       "no zone was marked; look again around it at a lower threshold.")


def _item_lines(assessment: dict, ws) -> list[str]:
    """Each testable item's finding at the core, in words (how it was measured, or its distance from the core)."""
    lines = []
    for k, a in assessment.items():
        if a.status == "unseen":
            lines.append(f"{k} [{a.level}] cannot be tested at the core: {a.measured}")
        elif a.status != "untestable":
            gap = "" if a.gap is None else (" at the core" if a.gap <= 0 else
                                            f", {a.gap / per_metre(ws):,.0f} m from the core")
            how = f", by {a.measured}" if a.measured else gap
            lines.append(f"{k} [{a.level}]: {a.status}{how}")
    return lines


def _conclusion(chain, answer: str | None, yes: str | None, unseen: list, critical: dict, secondary: dict) -> str:
    """The verdict's conclusion in words: why it is neither confirmed nor ruled out, a Yes, or a No."""
    if answer is None:
        return (f"Neither confirmed nor ruled out: {', '.join(unseen)} can be tested only where a layer of "
                "its roles holds data, and the core is hidden from them; every other critical item there is "
                "supported.")
    if answer == yes:
        conclusion = ("All critical evidence is supported and secondary evidence is present." if secondary else
                      "All critical evidence is supported; no secondary item can be tested with these layers.")
        return conclusion + _graph_note(chain)
    missing = [k for k, ok in critical.items() if not ok]
    return (f"Critical evidence lacks support: {', '.join(missing)}." if missing else
            "No secondary evidence is present.")


def _graph_note(chain) -> str:
    """Why a Yes stands when the chain's spatial graph joined no zones of two roles (its step said No, and the
    summing-up step counts it as missing): the graph's edges and the deposit model's reaches measure differently."""
    steps = [n.step.index for n in chain if n.step.tool == "spatial_relations" and n.observation.sub_inference == "No"]
    if not steps:
        return ""
    return (f" The spatial graph (step {steps[0]}) joined no zones of two roles, and the summing-up counts it as "
            "missing: its edges link zones that overlap or lie as close as they are wide, while each item is "
            "measured here from the core out to the reach the deposit model gives it, and these reaches are met.")


def _named_systems(scene: Scene, verified: list, core: Core, assessment: dict) -> tuple[dict, str]:
    """(Verdict.core, a sentence naming the others): the outline of the system the Yes rests on and those of
    the other zone cores that give a Yes on their own and lie outside it (further systems of the scene, drawn
    as targets after it), each simplified to the analysis grid's pixel."""
    pixel = scene.pixel
    outline = _system_outline(scene, core, assessment).simplify(pixel)
    named = {"label": zone_label(core.zone_id), "wkt": outline.wkt}  # the zone in words, as shown
    covered, labels, systems = outline, [], []
    for other, found in verified:
        if other.zone_id == core.zone_id or covered.contains(other.geometry.representative_point()):
            continue
        system = _system_outline(scene, other, found).simplify(pixel).difference(covered)
        pieces = [p for p in getattr(system, "geoms", [system])
                  if p.geom_type == "Polygon" and p.area >= pixel ** 2]
        if pieces:
            labels.append(other.zone_id)
            systems.append(unary_union(pieces))
            covered = unary_union([covered] + pieces)
    if not systems:
        return named, ""
    named.update(others=GeometryCollection(systems).wkt, others_label=", ".join(labels))
    return named, (f" Also verified on their own: {', '.join(labels)} (every critical item supported around "
                   "each), drawn as targets after the core.")


def _system_outline(scene: Scene, core: Core, assessment: dict):
    """The system a Yes rests on (outline.py): the core and the zones supporting its anomaly
    and coincidence items, each cut to within the item's reach of the core."""
    zones = {z.zone_id: z for z in scene.zones()}
    items = {i["id"]: i for i in scene.ws.deposit_model.get("evidence", [])}
    partners = []
    for key, found in assessment.items():
        item = items.get(key, {})
        if found.status != "supported" or item.get("kind") not in ("anomaly", "coincidence"):
            continue
        reach = found.reach or scene.reach(scene.near_m(item))  # as the item was judged
        partners += [(zones[z].geometry, reach) for z in found.zones if z in zones and z != core.zone_id]
    return system_outline(core.geometry, partners, scene.settings)


def _which_alteration(scene: Scene, families: dict, feedback: dict) -> tuple[Verdict, None]:
    """The alteration family with the clearest zones in the chain (the "none" choice when no family
    shows a clear one); Insufficient evidence when no layer can show any asked family."""
    asked = {family: letter for letter, family in families.items() if family != "none"}
    testable = set(asked) & {FAMILY.get(info.role) for info in scene.ws.layers if not info.silent}
    if not testable:
        roles = sorted(role for role, family in FAMILY.items() if family in asked)
        return Verdict(not feedback, None, feedback, {}, {}, "No layer can show any of the asked alteration "
                       f"kinds: it needs {layer_of(roles)}.", roles, route=CLEAREST_FAMILY), None
    strength: dict[str, float] = {}
    strongest: dict[str, Zone] = {}  # family -> its strongest zone
    for zone in scene.zones():
        family = FAMILY.get(zone.role)
        if family is not None and family in testable and zone.kind not in ("unit", "contact"):
            if scene.strength(zone) > strength.get(family, 0.0) or family not in strongest:
                strongest[family] = zone
            strength[family] = max(strength.get(family, 0.0), scene.strength(zone))
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
        zone = strongest[best]
        return Verdict(not feedback, asked[best], feedback, critical, {}, rationale, route=CLEAREST_FAMILY,
                       place=f"{zone.zone_id} ({zone.position}), the strongest {best} zone"), None
    none_letter = next((letter for letter, family in families.items() if family == "none"), None)
    rationale = ("No alteration layer shows a zone clearly above its background (tested: "
                 + ", ".join(sorted(testable)) + ")." + caveat)
    return Verdict(not feedback and none_letter is not None, none_letter, feedback, critical, {}, rationale,
                   route=CLEAREST_FAMILY), None


def _check_consistency(scene: Scene, chain, feedback: dict) -> None:
    """A marking step whose Sub_Inference contradicts its own zones is sent back (not one the controller rejected
    every time: the engine holds it unsupporting whatever its zones show)."""
    for node in chain:
        obs = node.observation
        if obs.error or node.step.tool not in ("color_regions", "mark_boxes"):
            continue
        if obs.controller and not any(v.get("ok") for v in obs.controller):
            continue
        zones = scene.ws.zones_of(node.step.index)
        clear = any(scene.strength(Zone.of(z)) >= 1.0 for z in zones.to_dict("records"))
        if (obs.sub_inference == "Yes") != clear:
            said = "claims clear evidence" if obs.sub_inference == "Yes" else "sees no evidence"
            feedback.setdefault(node.step.index, f"Step {node.step.index} {said}, but its zones "
                                f"{'do not show' if not clear else 'show'} a clear anomaly; re-examine it.")
