"""Every decision number of the offline reasoner (`models/offline/`) in one frozen object, each with the reason
for it and where its value came from (`REASONS`), so that the rules can be printed with their reasons (`described`)
and an experiment changes one number in one place. The defaults are the values the reasoner was developed with."""
from __future__ import annotations

from dataclasses import dataclass, fields

from ...plugin.decisions import described


@dataclass(frozen=True)
class OfflineSettings:
    """The offline reasoner's decision numbers (reasons and provenance: `REASONS`; with their values: `described`)."""

    # executor: where a marking step cuts its layer
    anomaly_sigma: float = 4.0
    colour_level: float = 0.2
    geochem_percentile: float = 90.0
    ceiling_margin: float = 0.05
    smooth_px: float = 1.5
    min_area_m2: float = 70_000.0
    min_zone_px: int = 4
    max_regions: int = 5
    fault_buffer_m: float = 50.0
    # executor: controller retries and zoomed looks
    retry_sigma_step: float = 0.75
    retry_level_step: float = 0.15
    retry_level_cap: float = 0.9
    retry_region_step: int = 1
    refine_factor: float = 0.75
    # observer and verifier: what counts as a clear zone
    min_area_slack: float = 0.999
    ceiling_clear_margin: float = 0.1
    # verifier: reaches and candidate cores
    default_near_m: float = 1000.0
    min_reach_px: int = 2
    marginal_factor: float = 2.0
    centre_overlap_parts: int = 3
    max_cores: int = 8
    hull_growth: float = 2.0
    # verifier: measurement and scans at a place
    alpha: float = 0.05
    joint_radii_m: tuple[float, ...] = (250.0, 500.0, 1000.0)
    # verifier: the measure of a layer at a place (coincidence.py, joint_places.py)
    contrast_scales: tuple[float, ...] = (0.5, 1.0, 2.0)
    ring_outer: float = 2.0
    partner_slack: float = 0.5
    min_radius_px: float = 1.5
    max_radius_parts: float = 6.0
    min_cover: float = 0.5
    seen_share: float = 0.5
    # verifier: fault corridors on a structure raster (corridors.py)
    corridor_percentile: float = 85.0
    # verifier: a map unit raised as a whole (lithology.py)
    filled_share: float = 0.5
    filled_unit_min_m2: float = 1_000_000.0
    inside_share: float = 0.5
    lifted_spreads: float = 2.0
    lifted_unit_min_m2: float = 10_000_000.0
    rise_spreads: float = 2.0
    coloured_scene_share: float = 0.5
    coloured_unit_share: float = 0.5

    def __post_init__(self):
        """Each value of its field's own type (3 given for a float is 3.0), as the reasoner has always taken them."""
        for field in fields(self):
            kind, value = type(field.default), getattr(self, field.name)
            if type(value) is not kind:
                object.__setattr__(self, field.name, kind(value))

    def described(self) -> list[dict]:
        """[{"name", "value", "reason", "provenance"}] of every setting, in field order, as JSON holds them."""
        return described(self, REASONS)


REASONS: dict[str, tuple[str, str]] = {
    "anomaly_sigma": (
        "An index anomaly is cut this many robust background spreads above its background's centre: only a clear "
        "departure from the background counts.",
        "set by hand while developing on the first generator (scripts/synthetic_cases.py) (suite seed 1000; "
        "58815b1)"),
    "colour_level": (
        "A rendering's colours count above this share of its colour bar, a zone at it is clear, and a map unit "
        "coloured this much above the scene's typical level is raised as a whole.",
        "set by hand while developing on the first generator (scripts/synthetic_cases.py) (58815b1; its use for "
        "raised units on worlds_b seeds, e56a549)"),
    "geochem_percentile": (
        "A classed layer or a geochemical survey with no fitted background is cut at its top decile: ordered "
        "classes carry no spread to test against.",
        "a statistical convention (the survey's top decile; b89aa1a)"),
    "ceiling_margin": (
        "On a clipped rendering (a display stretch's end) anomalies are cut this many background spreads under "
        "where it stops, since a cut above it would mark nothing.",
        "set by hand while developing on the second generator (scripts/worlds_b.py) (seed 777; cd5691e)"),
    "smooth_px": (
        "Pixels of Gaussian smoothing before a marking step's threshold, so single noisy pixels make no zone.",
        "set by hand while developing on the first generator (scripts/synthetic_cases.py) (58815b1)"),
    "min_area_m2": (
        "The smallest zone that counts, on the ground (a square about 265 m on a side).",
        "set by hand while developing on the first generator (scripts/synthetic_cases.py) (0.2 % of a scene "
        "until 81d3e5e; 40,000 m2 tried on worlds_b seeds 777 and 4242 and not kept, docs/worlds_b_log.md)"),
    "min_zone_px": (
        "The smallest zone that counts is never under this many pixels of the analysis grid: a speck on a coarse "
        "grid is noise.",
        "set by hand while developing on the first generator (scripts/synthetic_cases.py) (81d3e5e)"),
    "max_regions": (
        "At most this many zones a marking step keeps, strongest first (the controller's default limit).",
        "set by hand while developing on the first generator (scripts/synthetic_cases.py) (58815b1)"),
    "fault_buffer_m": (
        "A mapped fault line becomes a corridor this many metres either side (at least a pixel wide).",
        "set by hand while developing on the first generator (scripts/synthetic_cases.py) (0.4 % of the scene's "
        "diagonal until 81d3e5e, then metres)"),
    "retry_sigma_step": (
        "Each controller retry of an index step raises its cut by this many spreads: fewer, stricter zones.",
        "set by hand while developing on the first generator (scripts/synthetic_cases.py) (58815b1)"),
    "retry_level_step": (
        "Each controller retry of a rendering raises its colour level by this share of the bar.",
        "set by hand while developing on the first generator (scripts/synthetic_cases.py) (58815b1)"),
    "retry_level_cap": (
        "A retry's colour level never passes this share of the bar, so some colour is left to mark.",
        "set by hand while developing on the first generator (scripts/synthetic_cases.py) (58815b1)"),
    "retry_region_step": (
        "Each controller retry keeps this many fewer zones (never under one).",
        "set by hand while developing on the first generator (scripts/synthetic_cases.py) (58815b1)"),
    "refine_factor": (
        "A zoomed look cuts at this share of anomaly_sigma; that refinement level also makes a zone clear and is "
        "the least height of each layer of a joint place.",
        "set by hand while developing on the first generator (scripts/synthetic_cases.py) (58815b1)"),
    "hull_growth": (
        "A verified system whose convex hull is at most this many times its own area (an arc of alteration and the "
        "cap within it) is outlined by the hull; a sprawling one is closed over its gaps instead, keeping its shape.",
        "set by hand while developing on the second generator (scripts/worlds_b.py) (seed 777; 310f7b6)"),
    "min_area_slack": (
        "A zone measuring a hair under the smallest area still counts: its area comes from a pixel outline in "
        "floating point.",
        "set by hand while developing on the first generator (scripts/synthetic_cases.py) (58815b1)"),
    "ceiling_clear_margin": (
        "On a clipped rendering a zone is clear from this many spreads under where the rendering stops, a cut "
        "margin under the cut: it cannot show more.",
        "set by hand while developing on the second generator (scripts/worlds_b.py) (twice ceiling_margin; "
        "cd5691e)"),
    "default_near_m": (
        "The reach in metres of an evidence item whose deposit model gives it no near_m.",
        "set by hand while developing on the first generator (scripts/synthetic_cases.py) (81d3e5e; 25 of the "
        "32 items of resources/knowledge/deposit_models.json give their own)"),
    "min_reach_px": (
        "A reach is never under this many pixels of the analysis grid: neighbours on a coarse grid still touch.",
        "set by hand while developing on the first generator (scripts/synthetic_cases.py) (81d3e5e)"),
    "marginal_factor": (
        "An item found within this many times its reach is marginal: a zoomed look is asked before it is called "
        "missing.",
        "set by hand while developing on the first generator (scripts/synthetic_cases.py) (58815b1)"),
    "centre_overlap_parts": (
        "A partner anomaly overlapping at least one part in this many of the smaller of it and the core lies at "
        "the core.",
        "set by hand while developing on the first generator (scripts/synthetic_cases.py) (81d3e5e)"),
    "max_cores": (
        "At most this many candidate cores, strongest first, are assessed; each tried core shares alpha.",
        "set by hand while developing on the first generator (scripts/synthetic_cases.py) (58815b1)"),
    "alpha": (
        "Measured evidence counts when fewer than this many places are expected to show it as strongly by chance "
        "over everything tried: a layer at a core or a target (its p-value times the layers and places tried), "
        "layers standing out together at a scanned place (their joint chance, their dependence counted, times the "
        "scene's places and the groups tried).",
        "a statistical convention (the 5 % level, Bonferroni-shared; 92d2afe); the scans' own levels, 0.005 and "
        "0.001 fitted on worlds_b diagnosis seeds, gave way to it once a scan counted the layers' dependence"),
    "joint_radii_m": (
        "Core radii in metres at which the joint scan looks for a place: alteration cores of porphyry and "
        "epithermal systems span a few hundred metres to a couple of kilometres.",
        "deposit-model knowledge (the size of porphyry and epithermal alteration cores; fe0498c)"),
    "contrast_scales": (
        "Disc radii, in multiples of a place's radius, at which a layer's contrast with its surroundings is "
        "measured: a partner anomaly may be smaller or larger than the place it coincides with.",
        "set by hand while developing on the second generator (scripts/worlds_b.py) (92d2afe)"),
    "ring_outer": (
        "The ring a disc is compared with reaches this many of the disc's radii (its surroundings); pixels nearer "
        "the scene's edge than that are not scanned.",
        "set by hand while developing on the second generator (scripts/worlds_b.py) (92d2afe)"),
    "partner_slack": (
        "A partner's centre may lie this many of the place's radii from it: offsets between the zones of one "
        "system (faults, zoning, an outline's wobble).",
        "set by hand while developing on the second generator (scripts/worlds_b.py) (half a radius, was a whole "
        "one; da90ba5)"),
    "min_radius_px": (
        "The smallest disc radius measured, in pixels: a disc of one pixel measures noise.",
        "set by hand while developing on the second generator (scripts/worlds_b.py) (92d2afe)"),
    "max_radius_parts": (
        "A disc's radius is at most the scene's shorter side divided by this: its ring must fit the scene with "
        "surroundings to spare.",
        "set by hand while developing on the second generator (scripts/worlds_b.py) (92d2afe)"),
    "min_cover": (
        "A disc or ring with less than this share of valid cells measures nothing there.",
        "set by hand while developing on the second generator (scripts/worlds_b.py) (92d2afe)"),
    "seen_share": (
        "A layer sees a place when it holds data over at least this share of the place's cells; an item none of "
        "whose layers sees the place it is tested at can be neither supported nor missing there (a hole or "
        "non-finite cells over a core hide what it seeks).",
        "a statistical convention (most of the place's cells; issue 60, scenario 6)"),
    "corridor_percentile": (
        "A structure raster's favourable share is its cells at or above this percentile (the cut its step marks "
        "zones at); a core's fault control is its distance to the nearest of them.",
        "set by hand while developing on the second generator (scripts/worlds_b.py) (625af56)"),
    "filled_share": (
        "A map unit is filled by a layer's anomalies when at least this share of its area is anomalous.",
        "set by hand while developing on the second generator (scripts/worlds_b.py) (7a03afc)"),
    "filled_unit_min_m2": (
        "Units smaller than this (a stock under a system) are never called filled: the system fills them.",
        "set by hand while developing on the second generator (scripts/worlds_b.py) (7a03afc)"),
    "inside_share": (
        "An anomaly with at least this share of its cells in filled or raised units follows lithology.",
        "set by hand while developing on the second generator (scripts/worlds_b.py) (7a03afc)"),
    "lifted_spreads": (
        "A unit over which a layer's median stands this many background spreads high is raised as a whole.",
        "set by hand while developing on the second generator (scripts/worlds_b.py) (cc32d96)"),
    "lifted_unit_min_m2": (
        "Units smaller than this are never called raised as a whole: an alteration core with its stock spans a "
        "few square kilometres at most.",
        "set by hand while developing on the second generator (scripts/worlds_b.py) (cc32d96)"),
    "rise_spreads": (
        "An anomaly standing this many of its unit's own spreads above the unit's level is more than the unit's "
        "rise: a system on a raised unit.",
        "set by hand while developing on the second generator (scripts/worlds_b.py) (e56a549)"),
    "coloured_scene_share": (
        "A unit is raised as a whole when its typical (median) cell departs from the scene's typical cell. On a "
        "rendering that departure is read in colour level, unless the scene's typical cell is the grey backdrop "
        "(under this share of the scene coloured): then being coloured at all is the departure.",
        "a statistical convention (the median cell, as every unit test of lithology.py reads a unit; the rule "
        "was added while diagnosing worlds_b case 1111-019 and checked on seeds 777, 4242, 2222, the first "
        "generator, Great Basin and Murchison, where it changed nothing; dd72bcb)"),
    "coloured_unit_share": (
        "On such a rendering, a map unit whose typical (median) cell is coloured (over this share of its area) "
        "departs from the backdrop scene as a whole: it is lithology, however low on its colour bar.",
        "a statistical convention (the median cell, as for coloured_scene_share; dd72bcb)"),
}
"""Setting name -> (why the reasoner uses it, where its value came from: one of the PROVENANCES of plugin/decisions.py,
then details)."""


DEFAULT = OfflineSettings()
"""The settings the reasoner was developed with (the helpers' default)."""
