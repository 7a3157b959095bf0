"""The offline verifier's search for the candidate core with the most support, and the evidence items around it.

Cores are clear zones of the deposit model's first critical anomaly item and of its critical coincidence partner
(`seed_items`). Around each, every evidence item is looked for within the model's distance in metres (at least
`min_reach_px` pixels of the analysis grid): anomaly, coincidence with another alteration family, halo, structure
and host unit; a fault and a host unit are measured to the nearest of all the layer's features or host-unit cells,
not only to the few a step marked (Scene.feature_gaps, Scene.unit_gaps). An anomaly or coincidence item with no
zone within reach (a marginal critical one once its zoomed look has not brought a zone within reach, a marginal
secondary one at once) is measured on its layers at the core (coincidence.py, `alpha` shared among the layers and
cores tried), leaving out a layer whose own zone lies just off the core (that zone's flank, already weighed; not so
for a shell around a partner's core). A rendering that shows no colour around a zone core shows the item absent
there, as its maker's scale says: no second core signature stands in for it. An item found nowhere near a place
none of its layers holds data over (`Scene.unseen`) is unseen there, not missing. When no zone core gives a Yes, the
place where a layer of the first critical item and one of its partner stand out together (joint_places.py), else
the place where layers of three alteration families do, is weighed as a core too, when fewer than `alpha` such
places are expected by chance: one level for every measurement. A target is weighed as a core is (`assess` with
no item standing for it; targets.py)."""
from __future__ import annotations

import math
from dataclasses import replace
from itertools import combinations
from typing import AbstractSet

from shapely.geometry import Point

from ...plugin.zones import zone_record
from .coincidence import place_radius_px, quantised, significance
from .findings import Core, Finding, Zone, answers_yes
from .joint_places import JointPlace, best_joint_place
from .looks import looked_again, settled
from .model_items import (
    COMPOSITE_SHOWS,
    VECTOR_ROLES,
    families_of,
    per_metre,
    seed_items,
    seen_again,
)
from .scene import Scene

ZONE_CORE = "zone core"
"""A clear zone of the first critical item or of its partner, the items sought around it."""
JOINT_PLACE = "joint place"
"""The place where a layer of the first critical item and one of its partner stand out together, found by a scan."""
THREE_FAMILIES = "three-family place"
"""The place where layers of three alteration families stand out together, found by a scan."""


class CoreSearch:
    """One search of the scene for the best candidate core (`best`); `route` then says how it was found
    (ZONE_CORE, JOINT_PLACE or THREE_FAMILIES), `verified` holds every zone core that gives a Yes on its
    own, `places` the number of cores weighed (each one more chance of a partner by chance). What the search leaves
    out as lithology is its own finding (`lithology_note`), not the scene's: a search depends only on the chain's
    zones, never on which searches ran before it."""

    def __init__(self, scene: Scene):
        self.scene, self.ws, self.settings = scene, scene.ws, scene.settings
        self.places = 1
        self.route = ""
        self.verified: list = []  # (core, assessment) of every zone core found giving a Yes
        # (candidate cores, ids of zones left out as lithology), found once
        self._candidates: tuple[list[Core], set] | None = None
        self.unit_measures: dict = {}  # core id -> layers not measured there: they raise its map unit as a whole
        self._scanned = False  # whether this search consulted the scan for a joint place (`_joint_core`)

    def best(self) -> tuple[Core, dict] | None:
        """(core zone, assessment) of the candidate core with the most support, or None. The other zone cores
        that give a Yes on their own are kept (`verified`): further systems of the scene."""
        zones = self.scene.zones()
        best, best_key = None, None
        cores = self._cores()[:self.settings.max_cores]
        self.places = len(cores)
        assessed = [(core, self.assess(core, zones)) for core in cores]  # each checks for cancel
        self.verified = [(core, assessment) for core, assessment in assessed if answers_yes(assessment)]
        for core, assessment in assessed:
            key = self._score(assessment)
            if best_key is None or key > best_key:
                best, best_key, self.route = (core, assessment), key, ZONE_CORE
        if best is None or not answers_yes(best[1]):
            joint = self._joint_core()
            if joint is not None:
                assessment = self._assess_joint(joint, zones)
                if best_key is None or self._score(assessment) > best_key:
                    best = (joint, assessment)
                    self.route = THREE_FAMILIES if len(_scanned_place(joint).layers) >= 3 else JOINT_PLACE
        return best

    def place_words(self, core: Core) -> str:
        """The place the best core is, in words, with the figure that made it one."""
        if core.joint is not None:
            return (f"the {core.zone_id} ({core.position}), chance count {core.joint.expected:.3g} "
                    f"({_dependence(core.joint)}; bound {core.bound})")
        seed = core.seed.replace("_", " ")
        return (f"{core.zone_id} ({core.position}), a clear zone of {seed} on {core.layer}, "
                f"{self.scene.strength(core.zone):.1f} times the clear-anomaly level")

    def _cores(self) -> list[Core]:
        """The candidate cores (`_find_cores`), found once per search."""
        return self._found()[0]

    def _lithology_zones(self) -> set:
        """Ids of the zones that would be candidate cores but fill or follow a map unit raised as a whole."""
        return self._found()[1]

    def _found(self) -> tuple[list[Core], set]:
        """`_find_cores`, worked out once per search."""
        if self._candidates is None:
            self._candidates = self._find_cores()
        return self._candidates

    def lithology_note(self, core: Core | None = None) -> str:
        """Why zones or a scanned place were not taken as cores, and (for `core`) which layers were not measured at
        it."""
        place = self.scene.joint.get("lithology") if self._scanned else None
        zones = sorted(self._lithology_zones() | ({place} if place else set()))
        note = "" if not zones else (
            f" Not taken as a core: {', '.join(zones[:3])}{' and more' if len(zones) > 3 else ''}, anomalies of a map "
            "unit raised as a whole (lithology, not a zoned system).")
        layers = sorted(self.unit_measures.get(core.zone_id, ())) if core is not None else []
        if layers:
            note += (f" Not measured at the core: {', '.join(layers)}, which stand{'s' if len(layers) == 1 else ''} "
                     "high over the whole map unit the core lies in (lithology, not the system's own zoning).")
        return note

    def _find_cores(self) -> tuple[list[Core], set]:
        """(candidate core zones, ids of zones left out as lithology): candidates strongest first, each with the item
        it stands for ("seed"): clear zones of the deposit model's first critical anomaly item, and of its critical
        partner (the coincidence item "with" it), so a system whose clearest sign is the partner (silica or gossan
        over a porphyry's core) is weighed too; a partner's roles that form a halo around the core are no centre, nor
        are zones of a zoomed look (a lower threshold around a core confirms a partner there; it does not find new
        cores). A zone that fills or follows a map unit raised as a whole is left out (`Scene.lithological`)."""
        zoomed = set()
        for node in self.ws.chain:
            if node.observation.calls and "bounds" in node.observation.calls[-1].get("params", {}):
                zoomed |= set(self.ws.zones_of(node.step.index)["zone_id"])
        items = seed_items(self.ws.deposit_model)
        if items and not {info.role for info in self.scene.evidence_layers()}.intersection(items[0]["roles"]):
            items = items[:1]  # the first item cannot be tested at all: no partner stands in for it
        out, left_out = [], set()
        for item in items:
            for zone in self.scene.zones():
                self.scene.progress.check()
                if zone.zone_id in zoomed:
                    continue
                if zone.role in item["roles"] and self.scene.supports(zone, item):
                    if self.scene.lithological(zone):
                        left_out.add(zone.zone_id)
                    else:
                        out.append(Core(zone, item["id"]))
        out.sort(key=lambda c: (-self.scene.strength(c.zone) * math.sqrt(c.zone.area_m2), c.zone_id))
        return out, left_out

    def assess(self, core: Core, zones: list[Zone], settled: bool = False) -> dict:
        """Evidence items around one place: item id -> its Finding (findings.py). The item a core stands for is
        supported by it; when the core is the partner's, the first critical item is sought at or around it as a
        coincidence (at the partner's distance). A place no item stands for (a target: `seed` empty) has every item
        sought around it. `settled`: no zoomed look will follow, so an item with a zone only just out of reach is
        measured at once, as a missing one is."""
        model = self.ws.deposit_model
        out: dict = {}
        present_roles = {info.role for info in self.scene.evidence_layers()}
        items = seed_items(model)
        seeds, first = {item["id"]: item for item in items}, items[0]
        for item in model["evidence"]:
            self.scene.progress.check()
            if not present_roles.intersection(item["roles"]) or (item["kind"] == "host_unit"
                                                                 and not self.scene.units_named()):
                out[item["id"]] = Finding(item["level"], "untestable")
                continue
            if item["id"] == core.seed:
                out[item["id"]] = Finding(item["level"], "supported", 0.0, (core.zone_id,))
                continue
            if item["kind"] == "anomaly" and core.role in item["roles"] and first["id"] in out:
                # the core itself is this item's anomaly, over the first item's core as far as that was found
                found = out[first["id"]]
                out[item["id"]] = replace(found, level=item["level"]) if found.status == "unseen" else replace(
                    found, level=item["level"], zones=(core.zone_id,), measured=None)
                continue
            out[item["id"]] = self._sought(core, item, zones, seeds, first, settled)
        return out

    def _sought(self, core: Core, item: dict, zones: list[Zone], seeds: dict, first: dict, settled: bool) -> Finding:
        """One evidence item sought around a place (`assess`): its nearest supporting zone, fault or host-unit
        patch within reach, else its layers measured at the place (an anomaly or coincidence item); unseen when
        none of its layers holds data there."""
        kind, near_m = item["kind"], self.scene.near_m(item)
        if item["id"] in seeds and core.seed in seeds:  # the core item around a partner's core
            kind, near_m = "coincidence", seeds[core.seed].get("near_m", near_m)
        reach = self.scene.reach(near_m)
        best_gap, best_zone, near_layers = self._nearest(core, item, kind, zones, reach)
        measured: str | None = None
        if kind in ("coincidence", "anomaly") and not best_gap <= reach and (
                settled or not best_gap <= reach * self.settings.marginal_factor or looked_again(self.ws, item)):
            # a marginal one awaits a zoomed look, then is measured as a missing one is; the model's centre
            # item around a partner's core may wrap it
            shell = item["id"] == first["id"] and core.seed in seeds  # around a partner's core: its shell
            found = self._measured_over(core, item["roles"], shell_scale=item.get("shell_scale") if shell else None,
                                        besides=frozenset() if shell else near_layers)
            if found is not None:
                (best_zone, measured), best_gap = found, 0.0
        if best_zone is None:
            status = "missing"
        elif best_gap <= reach:
            status = "supported"
        elif best_gap <= reach * self.settings.marginal_factor and not settled:
            status = "marginal"
        else:
            status = "missing"
        unseen = "" if status == "supported" else self.scene.unseen(item["roles"], core.geometry)
        if unseen:  # what its layers would show at the place is hidden: neither there nor missing
            return Finding(item["level"], "unseen", measured=unseen, reach=reach)
        return Finding(item["level"], status, None if best_zone is None else round(best_gap, 3),
                       (best_zone,) if best_zone else (), measured, reach)

    def _nearest(self, core: Core, item: dict, kind: str, zones: list[Zone],
                 reach: float) -> tuple[float, str | None, set[str]]:
        """(gap, name) of the zone, fault or host-unit patch nearest a place that supports an item sought as
        `kind` (math.inf and None when there is none), and the layers with such a zone within `marginal_factor`
        reaches of it."""
        best_gap, best_zone, near_layers = math.inf, None, set()
        for zone in zones:
            self.scene.progress.check()
            if zone.role not in item["roles"] or zone.zone_id == core.zone_id:
                continue
            repeat = seen_again(zone.role, core.role)  # a composite repeats whatever it shows
            if repeat and (kind == "coincidence" or zone.role in COMPOSITE_SHOWS):
                continue
            if not self.scene.supports(zone, item) or zone.zone_id in self._lithology_zones():
                continue
            if kind == "halo" and zone.geometry.convex_hull.contains(core.geometry.centroid):
                gap = 0.0
            elif kind == "coincidence":
                gap = self.scene.centre_gap(core.geometry, zone.geometry)
            else:
                gap = float(core.geometry.distance(zone.geometry))
            if gap < best_gap:
                best_gap, best_zone = gap, zone.zone_id
            if gap <= reach * self.settings.marginal_factor:
                near_layers.add(zone.layer)
        # a fault is a feature of its layer whichever item names it: the nearest of all, not of those marked
        features = item["roles"] if kind == "structure" else [role for role in item["roles"] if role == "structure"]
        gaps = self.scene.feature_gaps(core.geometry, features)
        if kind == "host_unit":  # so is a host unit's every patch
            gaps += self.scene.unit_gaps(core.geometry, item["roles"])
        for measured_on, gap in gaps:
            if gap < best_gap:
                best_gap, best_zone = gap, measured_on
        return best_gap, best_zone, near_layers

    def _measured_over(self, core: Core, roles, shell_scale: float | None = None,
                       besides: AbstractSet[str] = frozenset()) -> tuple[str, str] | None:
        """(name, the measurement in words) of a layer of `roles` (not the core's signal seen again, `seen_again`)
        that stands out from its surroundings at the core (coincidence.py), significant at
        `alpha` shared among every layer and candidate core tried; else None. `shell_scale`: the layer
        may wrap the core as a shell reaching that many of its radii out (the deposit model's item says so: a
        porphyry's phyllic shell around a potassic centre found on silica, magnetics or a gossan), so the measure
        takes in that scale too. `besides`:
        layers not measured, those whose own zone lies just off the core (marginal, and settled): what
        such a layer shows at the core is that zone's flank, already weighed (not so for a shell, whose zone
        beside the centre is the shell itself). Nor is a layer that raises the whole map unit the core lies in
        (`Scene.lithological`, the core's outline taken as the layer's zone): it stands out there through the unit."""
        layers = [info for info in self.scene.evidence_layers() if info.role in roles and info.name not in besides
                  and not seen_again(info.role, core.role) and self.scene.measurable(info)]
        raised = set()
        for info in layers:
            self.scene.progress.check()
            if self.scene.lithological(replace(core.zone, layer=info.name)):
                raised.add(info.name)
        if raised:
            self.unit_measures.setdefault(core.zone_id, set()).update(raised)
        layers = [info for info in layers if info.name not in raised]
        if not layers:
            return None
        grid = self.ws.raster_set.grid
        radius = quantised(place_radius_px(core.geometry, grid, self.settings))
        bound = self.settings.alpha / (len(layers) * max(self.places, 1))
        scales = self.settings.contrast_scales + ((float(shell_scale),) if shell_scale else ())
        for info in layers:
            self.scene.progress.check()
            found = significance(self.scene.contrast_map(info, radius, scales), core.geometry, grid, radius, scales,
                                 self.settings)
            if found is not None and found.p <= bound:
                where = "target" if core.zone.kind == "target" else "core"
                return info.name, (f"{info.name} (measured at the {where}: it stands above its surroundings there "
                                   f"more than at all but a share p = {found.p:.4f} of {found.pixels} places of "
                                   f"the scene; bound {bound:.4f})")
        return None

    def _joint_core(self) -> Core | None:
        """A candidate core where no zone is: the place found by one scan of the scene where layers stand out from
        their surroundings together (joint_places.py), a layer of the first critical item with one of its critical
        partner, or layers of three families the deposit model names (`_triple_groups`), when fewer than `alpha`
        such places are expected by chance over every group tried; at core radii of `joint_radii_m`, each layer at
        least the refinement level (`anomaly_sigma` x `refine_factor` spreads) above its surroundings there. None
        when there is none, when it is lithology (`Scene.lithological`), or when the model's core is no area with a
        critical partner (`seed_items`); no three-family group when no layer can test the first item (the model's
        core is then untested, as without any zone core). Worked out once per run."""
        self._scanned = True
        if "core" in self.scene.joint:
            return self.scene.joint["core"]
        self.scene.joint["core"] = None
        items = seed_items(self.ws.deposit_model)
        if len(items) < 2:
            return None
        first, partner = items[0], items[1]
        grid = self.ws.raster_set.grid
        pixel = max(abs(v) for v in grid.pixel_size)
        radii = sorted({quantised(max(m * per_metre(self.ws) / pixel, self.settings.min_radius_px))
                        for m in self.settings.joint_radii_m})
        cores = [i for i in self.scene.evidence_layers() if i.role in first["roles"] and self.scene.measurable(i)]
        partners = [i for i in self.scene.evidence_layers() if i.role in partner["roles"] and self.scene.measurable(i)]
        pairs = [(a.name, b.name, r) for r in radii for a in cores for b in partners
                 if not seen_again(b.role, a.role)]
        testable = any(info.role in first["roles"] for info in self.scene.evidence_layers())
        triples = self._triple_groups(first, radii) if testable else []
        groups = pairs + triples
        if not groups:
            return None
        maps = {}
        for group in groups:
            for name in group[:-1]:
                if (name, group[-1]) not in maps:
                    maps[(name, group[-1])] = self.scene.contrast_map(self.ws.layer(name), group[-1])
        place = best_joint_place(maps, groups, grid, floor=self.scene.refinement_level, progress=self.scene.progress,
                                 settings=self.settings)
        if place is None or place.expected > self.settings.alpha:
            return None
        core = Core(self._place_zone(place), first["id"], partner["id"], self.settings.alpha, place)
        if self.scene.lithological(core.zone):
            self.scene.joint["lithology"] = core.zone_id
            return None
        self.scene.joint["core"] = core
        return core

    def _triple_groups(self, first: dict, radii: list) -> list:
        """(layer, layer, layer, radius) groups for the scan of three families: measurable layers of the roles the
        deposit model's anomaly, coincidence and halo items name (alteration, geophysics, soil geochemistry; no
        composite, which repeats the bands of others), three different families in each group, a layer of the
        first critical item first where one is in it. A soil anomaly or a halo fixes no place alone, but three
        kinds of evidence rare at one place are a zoned system, whatever each shows elsewhere."""
        named = {role for item in self.ws.deposit_model.get("evidence", [])
                 if item["kind"] in ("anomaly", "coincidence", "halo") for role in item["roles"]}
        named -= set(VECTOR_ROLES) | set(COMPOSITE_SHOWS)
        layers = [info for info in self.scene.evidence_layers() if info.role in named and self.scene.measurable(info)]
        layers.sort(key=lambda info: info.role not in first["roles"])  # stable: a first-item layer leads
        groups = []
        for count, trio in enumerate(combinations(layers, 3)):
            if count % 1024 == 0:
                self.scene.progress.check()
            if len(set.union(*(families_of(info.role) for info in trio))) == 3:
                groups += [(*(info.name for info in trio), r) for r in radii]
        return groups

    def _place_zone(self, place) -> Zone:
        """A joint place's zone: a disc of the place's radius on its first layer."""
        pixel = max(abs(v) for v in self.ws.raster_set.grid.pixel_size)
        names = list(place.layers)
        together = ", ".join(names[:-1]) + " and " + names[-1]
        return Zone.of(zone_record(Point(place.x, place.y).buffer(place.radius_px * pixel), self.ws.raster_set.grid,
                                   zone_id=f"place where {together} stand out together",
                                   layer=names[0], role=self.ws.layer(names[0]).role, kind="place",
                                   score_mean=place.scores[0], score_max=place.scores[0], what="joint contrast"))

    def _assess_joint(self, core: Core, zones: list[Zone]) -> dict:
        """Evidence items around a joint place: as around a zone core, with every anomaly or coincidence item of
        the role of another of the place's layers (the partner among them) supported by the joint measurement
        unless a zone supports it (a place found by scanning the scene is not measured again as if it had been
        fixed beforehand). A place of three families none of which is the first critical item's stands in for
        it: three kinds of evidence rare at one place are a zoned system, whatever the first item's layers show."""
        out = self.assess(core, zones)
        place = _scanned_place(core)
        names = list(place.layers)
        heights = [f"{name} {score:.1f}" for name, score in zip(names, place.scores)]
        measure = (f"{', '.join(heights[:-1])} and {heights[-1]} spreads above their surroundings, each rarer than a "
                   f"share {place.share:.4f} of the scene; chance count {place.expected:.3g} ({_dependence(place)}), "
                   f"bound {core.bound}")
        first = seed_items(self.ws.deposit_model)[0]
        if core.role not in first["roles"]:
            out[first["id"]] = replace(out[first["id"]], measured="three other kinds of evidence standing in, "
                                                                  f"measured together at the place: {measure}")
        placed: set = set()  # items the place's measurement supports, each by the first of its layers there
        for name in names:
            role = self.ws.layer(name).role
            if role in first["roles"]:  # the core itself (`assess`)
                continue
            others = " and ".join(n for n in names if n != name)
            for item in self.ws.deposit_model["evidence"]:
                if item["kind"] not in ("anomaly", "coincidence") or role not in item["roles"] or item["id"] in placed:
                    continue
                placed.add(item["id"])
                found = out.get(item["id"])
                if found is None or found.status != "supported" or found.measured:
                    out[item["id"]] = Finding(item["level"], "supported", 0.0, (name,),
                                              f"{name} (measured with {others} at the place: {measure})")
        return out

    def _score(self, assessment: dict) -> tuple:
        """A core's support, for choosing among cores: critical items short of support (a marginal one counts as
        supported while steps that can take a zoomed look at it have not had one and a round is left for it: the
        look settles it), then secondary items present, then fewer critical items still to be settled (a core
        already supported beats one that may be) or, once looked at, more marginal ones (nearer support)."""
        critical = [a for a in assessment.values() if a.level == "critical" and a.status != "untestable"]
        secondary = [a for a in assessment.values() if a.level == "secondary" and a.status != "untestable"]
        marginal = [k for k, a in assessment.items() if a.level == "critical" and a.status == "marginal"]
        pending = bool(marginal) and not settled(self.ws, marginal)
        counted = ("supported", "marginal") if pending else ("supported",)
        return (sum(a.status in counted for a in critical) - len(critical),
                sum(a.status == "supported" for a in secondary),
                -len(marginal) if pending else len(marginal))


def _scanned_place(core: Core) -> JointPlace:
    """The place a scan found, of a core that is one (`_joint_core`)."""
    assert core.joint is not None, f"{core.zone_id} is no scanned place"
    return core.joint


def _dependence(place) -> str:
    """The layers' dependence a scanned place's chance count took in, in words."""
    pairs = ", ".join(f"{round(r, 2) + 0.0:.2f}" for r in place.correlation)  # + 0.0: no "-0.00"
    return f"the layers' rank correlation away from it, {pairs}, counted where positive"
