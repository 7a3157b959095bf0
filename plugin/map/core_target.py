"""The verified core on the map: the place a Yes rests on becomes a target, ranked first.

A verifier that answers Yes around a core may name it in its verdict (`Verdict.core`: a label and either the
outline as WKT in the analysis CRS, or the id of one of the chain's zones, as a model's verifier does). The
map then agrees with the answer: the core's cells join the top share of the favourability surface, and the
target holding them is ranked first. Further systems the verifier verified on their own (`others`) join it
too, ranked right after the core. Without this, a system whose outer shell scores higher than its centre
(a phyllic ring around a potassic core, where porphyry ore sits) gets targets on the ring and none on the
centre the verifier pointed at.

How the offline verifier outlines a system is its own (models/offline/outline.py); `filled` is shared.
"""
from __future__ import annotations

import numpy as np
from shapely import wkt
from shapely.errors import ShapelyError
from shapely.geometry import MultiPolygon, Polygon
from shapely.ops import unary_union

from ..decisions import CORE
from ..labels import humanize
from ..zones import polygon_cells

# decision numbers: their reasons and provenance are in plugin/decisions.py
SHARE_LIMIT = CORE.share_limit


def filled(geometry):
    """The polygons of a geometry (collections flattened, lines and points left out) with their holes filled."""
    parts = [p for p in getattr(geometry, "geoms", [geometry]) if not p.is_empty]
    polygons = [Polygon(p.exterior) for p in parts if isinstance(p, Polygon)]
    return unary_union(polygons + [filled(p) for p in parts if hasattr(p, "geoms")])


def core_outline(core: dict | None, zones=None):
    """The outline of a verdict's core (None when it names none), or a ValueError that says why it cannot be
    read. A core is an outline ("wkt", in the analysis CRS) or the id of one of the chain's `zones` ("zone", a
    model's verifier names one) with its holes filled: the zone as the verifier saw it (before any SAM
    refinement of the outlines)."""
    if not core or not (core.get("wkt") or core.get("zone")):
        return None
    if core.get("wkt"):
        try:
            geometry = wkt.loads(str(core["wkt"]))
        except (ShapelyError, ValueError, TypeError) as exc:
            raise ValueError(f"its outline is not readable WKT ({exc})") from exc
    else:
        found = zones[zones["zone_id"] == core["zone"]] if zones is not None and len(zones) else None
        if found is None or not len(found):
            raise ValueError(f"it names zone {core['zone']!r}, which no step of the chain marked")
        geometry = filled(found.geometry.iloc[0])
    if geometry.is_empty or geometry.area <= 0:
        raise ValueError("its outline is empty or has no area")
    return geometry


def target_outline(core: dict | None, analysed_m2: float, area_share: float, notes: list, zones=None,
                   largest_m2: float | None = None):
    """The verdict's core outline to make a target of, or None: when it names none, or (with a note) when its
    outline cannot be read, spans more than SHARE_LIMIT times the targets' share of the analysed area, or is larger
    than the largest target (`largest_m2`: one system's footprint; a core larger than that is not one system's)."""
    try:
        outline = core_outline(core, zones)
    except ValueError as exc:
        notes.append(f"The verdict's core is not drawn as a target: {exc}.")
        return None
    if outline is not None and largest_m2 and outline.area > largest_m2:
        notes.append(f"The outline the verdict gives for its core ({humanize((core or {}).get('label', ''))}) spans "
                     f"{outline.area / 1e6:,.1f} km2, more than the largest target ({largest_m2 / 1e6:g} km2): it is "
                     "not made a target of its own.")
        return None
    if outline is not None and outline.area > SHARE_LIMIT * area_share * analysed_m2:
        notes.append(f"The verified core ({humanize((core or {}).get('label', ''))}) spans "
                     f"{outline.area / analysed_m2:.1%} of the "
                     f"analysed area, more than {SHARE_LIMIT:g} times the targets' {area_share:.0%}: it is not "
                     "made a target of its own.")
        return None
    return outline


def other_outlines(core: dict | None, first, analysed_m2: float, area_share: float, notes: list,
                   largest_m2: float | None = None):
    """The further verified systems a verdict names (`others`: WKT in the analysis CRS, one polygon or multipolygon
    per system, in the verdict's order), as far as they fit with the `first` outline within SHARE_LIMIT times the
    targets' share of the analysed area; None when there are none (a note says why any are left out)."""
    if not core or not core.get("others"):
        return None
    if first is None:
        notes.append("The further verified systems are not drawn as targets: the core they rank after is not drawn "
                     "either.")
        return None
    try:
        named = wkt.loads(str(core["others"]))
    except (ShapelyError, ValueError, TypeError) as exc:
        notes.append(f"The further verified systems are not drawn as targets: their outline is not readable WKT "
                     f"({exc}).")
        return None
    kept, area, limit = [], first.area, SHARE_LIMIT * area_share * analysed_m2
    systems = [g for g in getattr(named, "geoms", [named]) if isinstance(g, (Polygon, MultiPolygon)) and g.area > 0]
    if largest_m2 and any(g.area > largest_m2 for g in systems):
        notes.append(f"{sum(g.area > largest_m2 for g in systems)} of the further verified systems are larger than the "
                     f"largest target ({largest_m2 / 1e6:g} km2) and are not made targets of their own.")
        systems = [g for g in systems if g.area <= largest_m2]
    for system in systems:
        if area + system.area <= limit:
            kept.append(system)
            area += system.area
    if len(kept) < len(systems):
        notes.append(f"{len(systems) - len(kept)} of the {len(systems)} further verified systems "
                     f"({humanize(core.get('others_label', ''))}) are not made targets: with the core they would span "
                     "more "
                     f"than {SHARE_LIMIT:g} times the targets' {area_share:.0%} of the analysed area.")
    return unary_union(kept) if kept else None


def core_cells(outline, grid) -> np.ndarray:
    """The cells of `grid` an outline touches."""
    return polygon_cells([outline], grid, all_touched=True)
