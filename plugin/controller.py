"""The rule-based output controller (STA-CoT: "Structured Target-Centric Agentic Chain-of-Thought", Appendix C.3).

It checks the regions a tool or a model proposes for one step: each region's size (too large, too
small), pairwise overlap, how many regions there are and how much of the image they cover together,
and whether the words that describe a region (left / right / top / bottom) match where it lies.
It returns a `Verdict` with structured errors and feedback text that grows more explicit with each
attempt: general on the first, operational (which region, which number, what to change) on the
next, and on the last attempt a checklist with the coordinate-system reference.

Models speak in normalised boxes [ymin, xmin, ymax, xmax] with (0, 0) at the top-left;
`boxes_to_polygons` turns them into map polygons on a RasterGrid (clamping what lies outside).
`enforce` is the deterministic fixer: it keeps the best regions that satisfy the limits.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from shapely.geometry import box as shapely_box
from shapely.geometry.base import BaseGeometry

from .errors import LodestarError
from .raster_io import RasterGrid
from .zones import position_word

if TYPE_CHECKING:
    from geopandas import GeoDataFrame


@dataclass(frozen=True)
class ControllerLimits:
    """Thresholds of the checks. The paper fixes overlap (50 %), count (5) and total area (70 %);
    it names the size checks without numbers, so the size limits here are this project's defaults."""

    min_area_fraction: float = 0.002   # a region smaller than 0.2 % of the reference area is a speck
    max_area_fraction: float = 0.4     # a region larger than 40 % is not specific
    max_overlap: float = 0.5           # intersection / smaller region's area above this is redundant
    max_regions: int = 5
    max_total_fraction: float = 0.7    # union of all regions / reference area
    max_attempts: int = 3
    min_area_m2: float | None = None   # on a georeferenced grid: a speck is smaller than this on the ground
    # (replaces min_area_fraction there, so the verdict does not depend on how much ground the map shows)

    def __post_init__(self):
        if not 0 <= self.min_area_fraction < self.max_area_fraction <= 1:
            raise LodestarError("Controller limits: need 0 <= min_area_fraction < max_area_fraction <= 1.")
        if not 0 < self.max_overlap <= 1 or not 0 < self.max_total_fraction <= 1:
            raise LodestarError("Controller limits: max_overlap and max_total_fraction must lie in (0, 1].")
        if self.min_area_m2 is not None and self.min_area_m2 < 0:
            raise LodestarError("Controller limits: min_area_m2 must be zero or positive.")
        if self.max_regions < 1 or self.max_attempts < 1:
            raise LodestarError("Controller limits: max_regions and max_attempts must be at least 1.")


@dataclass
class Region:
    """One proposed region: a polygon in the grid's CRS, what the proposer said about it, its score."""

    zone_id: str
    geometry: BaseGeometry
    description: str = ""
    location: str = ""
    score: float | None = None


@dataclass(frozen=True)
class ControllerError:
    code: str          # too_large, too_small, overlap, too_many, total_area, location_mismatch, empty_region
    zone_ids: tuple
    message: str


@dataclass
class Verdict:
    ok: bool
    errors: list[ControllerError]
    feedback: str
    attempt: int
    final: bool
    measures: dict = field(default_factory=dict)

    @property
    def codes(self) -> list[str]:
        return sorted({e.code for e in self.errors})

    def to_dict(self) -> dict:
        return {"ok": self.ok, "attempt": self.attempt, "final": self.final, "feedback": self.feedback,
                "errors": [{"code": e.code, "zone_ids": list(e.zone_ids), "message": e.message} for e in self.errors],
                "measures": self.measures}


COORDINATE_REFERENCE = (
    "Coordinates are normalised boxes [ymin, xmin, ymax, xmax] between 0 and 1; (0, 0) is the TOP-LEFT corner, "
    "x grows to the RIGHT, y grows DOWNWARD:\n"
    "  (0,0) ------> x (0,1)\n"
    "    |\n"
    "    v y\n"
    "  (1,0)         (1,1)\n"
    "So 'left' means small x, 'right' large x, 'top' small y, 'bottom' large y."
)

_GENERAL = {
    "too_large": "Some regions are too large: mark the specific features, not broad areas.",
    "too_small": "Some regions are tiny specks: leave out isolated spots that are not clear evidence.",
    "overlap": "Some regions largely overlap: keep one box per distinct feature.",
    "too_many": "There are too many regions: keep only the most important ones.",
    "total_area": "Together the regions cover too much of the image: concentrate on the strongest evidence.",
    "location_mismatch": "Some location words do not match where the boxes are: check left/right and top/bottom.",
    "empty_region": "Some regions have no area: give boxes with ymin < ymax and xmin < xmax.",
}

_PLAIN = (("y", "top", r"\btop\b"), ("y", "bottom", r"\bbottom\b"),
          ("x", "left", r"\bleft\b"), ("x", "right", r"\bright\b"))
_MORE = (("y", "top", r"\b(upper|north|northern)\b|\bnorth(?=[ -]?(east|west))"),
         ("y", "bottom", r"\b(lower|south|southern)\b|\bsouth(?=[ -]?(east|west))"),
         ("x", "left", r"\b(west|western)\b|(?<=north|south)[ -]?west"),
         ("x", "right", r"\b(east|eastern)\b|(?<=north|south)[ -]?east"))


def stated_sides(text: str, plain_only: bool = False) -> dict:
    """The sides a location text claims: {'x': 'left'|'right', 'y': 'top'|'bottom'}; contradictory words drop out.

    plain_only: only the words top, bottom, left and right count (for free descriptions, where
    'upper' or 'east' often mean something else).
    """
    text = (text or "").lower()
    found: dict = {}
    for axis, side, pattern in _PLAIN + (() if plain_only else _MORE):
        if re.search(pattern, text):
            found.setdefault(axis, set()).add(side)
    return {axis: sides.pop() for axis, sides in found.items() if len(sides) == 1}


def regions_from_frame(frame) -> list[Region]:
    """Regions of a zones GeoDataFrame (zones.ZONE_COLUMNS): position as location, score_mean as score."""
    regions = []
    for i, row in enumerate(frame.itertuples(index=False)):
        data = row._asdict()
        regions.append(Region(str(data.get("zone_id", i)), data["geometry"], str(data.get("description", "") or ""),
                              str(data.get("position", "") or ""), data.get("score_mean")))
    return regions


def _as_regions(regions) -> list[Region]:
    if hasattr(regions, "geometry") and hasattr(regions, "itertuples"):
        return regions_from_frame(regions)
    return list(regions)


def _reference(grid: RasterGrid, reference_area: float | None) -> float:
    area = reference_area if reference_area is not None else grid.width * grid.height * grid.pixel_area
    if area <= 0:
        raise LodestarError("The reference area of the controller is zero; check the analysis grid.")
    return float(area)


def _overlap(a: BaseGeometry, b: BaseGeometry) -> float:
    """Intersection area over the smaller region's area (1 when one region lies inside the other)."""
    smaller = min(a.area, b.area)
    if smaller <= 0 or not a.envelope.intersects(b.envelope):
        return 0.0
    return a.intersection(b).area / smaller


def _centre_fractions(geometry: BaseGeometry, grid: RasterGrid) -> tuple[float, float]:
    point = geometry.centroid
    fx, fy = grid.fractions(point.x, point.y)
    return float(fx), float(fy)


def _ground(grid: RasterGrid, limits: ControllerLimits) -> float | None:
    """The least area on the ground (m2) a region covers; None where a speck is told by its share of the image."""
    return limits.min_area_m2 if grid.crs is not None else None


def _too_small(area: float, fraction: float, grid: RasterGrid, limits: ControllerLimits) -> bool:
    ground = _ground(grid, limits)
    return area < ground if ground is not None else fraction < limits.min_area_fraction


def _speck_size(grid: RasterGrid, limits: ControllerLimits) -> str:
    ground = _ground(grid, limits)
    return f"{ground / 1e6:.3g} km2" if ground is not None else f"{limits.min_area_fraction:.1%}"


def _small_message(zone_id: str, area: float, fraction: float, grid: RasterGrid, limits: ControllerLimits) -> str:
    if _ground(grid, limits) is not None:
        return f"Region {zone_id} covers only {area / 1e6:.3g} km2 (at least {_speck_size(grid, limits)})."
    return f"Region {zone_id} covers only {fraction:.2%} of the image (at least {_speck_size(grid, limits)})."


def validate(regions, grid: RasterGrid, attempt: int = 1, limits: ControllerLimits | None = None,
             reference_area: float | None = None) -> Verdict:
    """Check proposed regions (a list of Region or a zones GeoDataFrame) on the analysis grid.

    reference_area: the area fractions refer to (default: the grid's whole extent; pass
    RasterSet.valid_area() to measure against the area with data). attempt counts from 1.
    """
    limits = limits or ControllerLimits()
    regions = _as_regions(regions)
    reference = _reference(grid, reference_area)
    errors: list[ControllerError] = []
    fractions = {}
    for region in regions:
        area = region.geometry.area if region.geometry is not None else 0.0
        fraction = area / reference
        fractions[region.zone_id] = fraction
        if area <= 0:
            errors.append(ControllerError("empty_region", (region.zone_id,), f"Region {region.zone_id} has no area."))
            continue
        if fraction > limits.max_area_fraction:
            errors.append(ControllerError(
                "too_large", (region.zone_id,),
                f"Region {region.zone_id} covers {fraction:.1%} of the image (limit {limits.max_area_fraction:.0%})."))
        elif _too_small(area, fraction, grid, limits):
            errors.append(ControllerError("too_small", (region.zone_id,), _small_message(region.zone_id, area, fraction,
                                                                                          grid, limits)))
        errors.extend(_location_errors(region, grid))
    sized = [r for r in regions if r.geometry is not None and r.geometry.area > 0]
    for i, first in enumerate(sized):
        for second in sized[i + 1:]:
            share = _overlap(first.geometry, second.geometry)
            if share > limits.max_overlap:
                errors.append(ControllerError(
                    "overlap", (first.zone_id, second.zone_id),
                    f"Regions {first.zone_id} and {second.zone_id} overlap by {share:.0%} of the smaller one "
                    f"(limit {limits.max_overlap:.0%})."))
    if len(regions) > limits.max_regions:
        errors.append(ControllerError(
            "too_many", tuple(r.zone_id for r in regions),
            f"{len(regions)} regions marked; at most {limits.max_regions} are allowed."))
    total = _union_area(sized) / reference
    if total > limits.max_total_fraction:
        errors.append(ControllerError(
            "total_area", tuple(r.zone_id for r in sized),
            f"The regions together cover {total:.0%} of the image (limit {limits.max_total_fraction:.0%})."))
    final = attempt >= limits.max_attempts
    feedback = compose_feedback(errors, attempt, limits, _speck_size(grid, limits))
    return Verdict(not errors, errors, feedback, attempt, final,
                   {"area_fractions": fractions, "total_fraction": total, "regions": len(regions)})


def _union_area(regions: list[Region]) -> float:
    from shapely.ops import unary_union

    if not regions:
        return 0.0
    return float(unary_union([r.geometry for r in regions]).area)


def _location_errors(region: Region, grid: RasterGrid) -> list[ControllerError]:
    """Location words (the stated location, else the description) against the region's centre."""
    claimed = stated_sides(region.location) or stated_sides(region.description, plain_only=True)
    if not claimed:
        return []
    fx, fy = _centre_fractions(region.geometry, grid)
    actual = position_word(fx, fy)
    wrong = []
    if claimed.get("x") == "left" and fx > 0.5:
        wrong.append("left")
    if claimed.get("x") == "right" and fx < 0.5:
        wrong.append("right")
    if claimed.get("y") == "top" and fy > 0.5:
        wrong.append("top")
    if claimed.get("y") == "bottom" and fy < 0.5:
        wrong.append("bottom")
    if not wrong:
        return []
    return [ControllerError(
        "location_mismatch", (region.zone_id,),
        f"Region {region.zone_id} is described as {'/'.join(wrong)} but its centre is at x={fx:.2f}, y={fy:.2f} "
        f"({actual}).")]


def compose_feedback(errors: list[ControllerError], attempt: int, limits: ControllerLimits, speck: str) -> str:
    """Feedback for the proposer: general (attempt 1), operational (later), checklist + reference (last)."""
    if not errors:
        return "All regions pass the checks."
    codes = []
    for error in errors:
        if error.code not in codes:
            codes.append(error.code)
    if attempt >= limits.max_attempts:
        lines = [
            "This is your final attempt. Make sure that:",
            f"1. every region is neither too large (over {limits.max_area_fraction:.0%} of the image) nor a tiny "
            f"speck (under {speck});",
            f"2. there are at most {limits.max_regions} regions, none overlapping another by more than "
            f"{limits.max_overlap:.0%}, together covering less than {limits.max_total_fraction:.0%} of the image;",
            "3. each location word matches its box ([ymin, xmin, ymax, xmax], (0, 0) at the top-left);",
            "4. if nothing salient is there, leave the coordinates empty and say so in the description.",
            "Problems found:",
        ]
        lines += [f"- {e.message}" for e in errors]
        lines.append(COORDINATE_REFERENCE)
        return "\n".join(lines)
    if attempt <= 1:
        return " ".join(_GENERAL[c] for c in codes)
    lines = ["Please fix these problems and propose the regions again:"]
    lines += [f"- {e.message} {_ACTION[e.code]}" for e in errors]
    if "location_mismatch" in codes:
        lines.append(COORDINATE_REFERENCE)
    return "\n".join(lines)


_ACTION = {
    "too_large": "Shrink it to the part where the evidence is strongest.",
    "too_small": "Remove it, or widen it if it is a real feature.",
    "overlap": "Keep the one that frames the feature better and delete the other.",
    "too_many": "Delete the weakest regions.",
    "total_area": "Tighten the boxes around the strongest evidence.",
    "location_mismatch": "Correct either the box or its location word.",
    "empty_region": "Give a box with ymin < ymax and xmin < xmax.",
}


# --------------------------------------------------------------------------------------- boxes <-> polygons

@dataclass
class BoxPolygons:
    """Normalised boxes as map polygons: one entry per input box (None where dropped), with notes."""

    polygons: list
    clamped: list[int]
    dropped: list[int]
    notes: list[str]


def boxes_to_polygons(boxes, grid: RasterGrid, scale: float = 1.0) -> BoxPolygons:
    """Map polygons of normalised [ymin, xmin, ymax, xmax] boxes ((0, 0) top-left) on `grid`.

    scale: the value of the image's far edge in the boxes (1 for 0-1 boxes, 1000 for 0-1000 boxes).
    Boxes reaching outside the image are clamped to it; swapped corners are put in order; boxes
    with no area inside the image are dropped. Every change is reported in `notes`.
    """
    polygons: list[BaseGeometry | None] = []
    clamped: list[int] = []
    dropped: list[int] = []
    notes: list[str] = []
    for index, raw in enumerate(boxes):
        try:
            ymin, xmin, ymax, xmax = (float(v) / scale for v in raw)
        except (TypeError, ValueError):
            polygons.append(None)
            dropped.append(index)
            notes.append(f"Box {index + 1} {raw!r} is not four numbers [ymin, xmin, ymax, xmax]; dropped.")
            continue
        if ymin > ymax or xmin > xmax:
            ymin, ymax = sorted((ymin, ymax))
            xmin, xmax = sorted((xmin, xmax))
            notes.append(f"Box {index + 1} had its corners swapped; read as [ymin, xmin, ymax, xmax] = "
                         f"[{ymin:.3f}, {xmin:.3f}, {ymax:.3f}, {xmax:.3f}].")
        inside = [min(1.0, max(0.0, v)) for v in (ymin, xmin, ymax, xmax)]
        if inside != [ymin, xmin, ymax, xmax]:
            clamped.append(index)
            notes.append(f"Box {index + 1} reached outside the image and was clamped to "
                         f"[{inside[0]:.3f}, {inside[1]:.3f}, {inside[2]:.3f}, {inside[3]:.3f}].")
        ymin, xmin, ymax, xmax = inside
        if ymax <= ymin or xmax <= xmin:
            polygons.append(None)
            dropped.append(index)
            notes.append(f"Box {index + 1} has no area inside the image; dropped.")
            continue
        xs, ys = grid.pixel_to_map([xmin * grid.width, xmax * grid.width], [ymin * grid.height, ymax * grid.height])
        polygons.append(shapely_box(float(min(xs)), float(min(ys)), float(max(xs)), float(max(ys))))
    return BoxPolygons(polygons, clamped, dropped, notes)


# -------------------------------------------------------------------------------------------- enforcement

@dataclass
class Enforced:
    """Regions kept by `enforce` (the input's type: list or GeoDataFrame) and why the others went."""

    regions: list[Region] | GeoDataFrame
    dropped: dict


def enforce(regions, grid: RasterGrid, limits: ControllerLimits | None = None,
            reference_area: float | None = None) -> Enforced:
    """Keep the best regions within the limits, deterministically.

    Regions that are empty, too small or too large are dropped; the rest are taken best first (score,
    then area, then zone id) and each is kept unless it overlaps a kept region more than allowed,
    the count limit is reached, or it would push the union past the total-area limit.
    """
    limits = limits or ControllerLimits()
    frame = regions if hasattr(regions, "itertuples") and hasattr(regions, "geometry") else None
    items = _as_regions(regions)
    reference = _reference(grid, reference_area)
    dropped: dict = {}
    candidates = []
    for region in items:
        area = region.geometry.area if region.geometry is not None else 0.0
        if area <= 0:
            dropped[region.zone_id] = "empty_region"
        elif _too_small(area, area / reference, grid, limits):
            dropped[region.zone_id] = "too_small"
        elif area / reference > limits.max_area_fraction:
            dropped[region.zone_id] = "too_large"
        else:
            candidates.append(region)
    score = [float("-inf") if r.score is None else float(r.score) for r in candidates]
    order = sorted(range(len(candidates)), key=lambda i: (-score[i], -candidates[i].geometry.area,
                                                          candidates[i].zone_id))
    kept: list[Region] = []
    union = None
    for i in order:
        region = candidates[i]
        if len(kept) >= limits.max_regions:
            dropped[region.zone_id] = "too_many"
            continue
        if any(_overlap(region.geometry, k.geometry) > limits.max_overlap for k in kept):
            dropped[region.zone_id] = "overlap"
            continue
        grown = region.geometry if union is None else union.union(region.geometry)
        if grown.area / reference > limits.max_total_fraction:
            dropped[region.zone_id] = "total_area"
            continue
        kept.append(region)
        union = grown
    ids = [r.zone_id for r in kept]
    if frame is not None:
        chosen = frame[frame["zone_id"].astype(str).isin(ids)]
        ordered = chosen.set_index(chosen["zone_id"].astype(str)).loc[ids].reset_index(drop=True)
        return Enforced(ordered, dropped)
    return Enforced(kept, dropped)
