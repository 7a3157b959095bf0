"""The rule-based output controller: every error type, feedback escalation, boxes, enforcement."""
from __future__ import annotations

import geopandas as gpd
import pytest
from affine import Affine
from pyproj import CRS
from shapely.geometry import box

from lodestar.plugin.controller import (
    COORDINATE_REFERENCE,
    ControllerLimits,
    Region,
    boxes_to_polygons,
    enforce,
    stated_sides,
    validate,
)
from lodestar.plugin.errors import LodestarError
from lodestar.plugin.raster_io import RasterGrid
from lodestar.plugin.zones import zone_record, zones_frame

# 1000 x 1000 pixels of 10 m: x 500000-510000, y 3990000-4000000 (top edge at y = 4000000).
GRID = RasterGrid(Affine(10, 0, 500_000, 0, -10, 4_000_000), 1000, 1000, CRS.from_epsg(32611))


def frac_box(zone_id, ymin, xmin, ymax, xmax, **kw):
    """A Region from a normalised [ymin, xmin, ymax, xmax] box."""
    polygon = boxes_to_polygons([[ymin, xmin, ymax, xmax]], GRID).polygons[0]
    return Region(zone_id, polygon, **kw)


def codes(verdict):
    return verdict.codes


def test_clean_regions_pass():
    regions = [frac_box("a", 0.1, 0.1, 0.3, 0.3, location="top-left"),
               frac_box("b", 0.6, 0.6, 0.9, 0.9, location="bottom-right", description="bright anomaly")]
    verdict = validate(regions, GRID)
    assert verdict.ok and verdict.errors == [] and verdict.feedback == "All regions pass the checks."
    assert verdict.measures["total_fraction"] == pytest.approx(0.04 + 0.09)
    assert verdict.measures["area_fractions"]["a"] == pytest.approx(0.04)


def test_too_large_and_too_small():
    verdict = validate([frac_box("big", 0.0, 0.0, 0.7, 0.7), frac_box("tiny", 0.9, 0.9, 0.92, 0.92)], GRID)
    assert codes(verdict) == ["too_large", "too_small"]
    large = next(e for e in verdict.errors if e.code == "too_large")
    assert large.zone_ids == ("big",) and "49.0%" in large.message
    small = next(e for e in verdict.errors if e.code == "too_small")
    assert small.zone_ids == ("tiny",) and "0.04%" in small.message


def test_overlap_uses_the_smaller_region():
    outer = frac_box("outer", 0.1, 0.1, 0.5, 0.5)
    inner = frac_box("inner", 0.2, 0.2, 0.3, 0.3)        # fully inside: 100 % of the smaller one
    apart = frac_box("apart", 0.6, 0.6, 0.8, 0.8)
    verdict = validate([outer, inner, apart], GRID)
    assert codes(verdict) == ["overlap"]
    assert verdict.errors[0].zone_ids == ("outer", "inner") and "100%" in verdict.errors[0].message
    half = frac_box("half", 0.1, 0.3, 0.5, 0.7)          # shares exactly 50 %: allowed
    assert validate([outer, half], GRID).ok


def test_too_many_and_total_area():
    many = [frac_box(f"r{i}", 0.1 * i, 0.0, 0.1 * i + 0.05, 0.05) for i in range(6)]
    verdict = validate(many, GRID)
    assert codes(verdict) == ["too_many"] and len(verdict.errors[0].zone_ids) == 6
    wide = [frac_box("w1", 0.0, 0.0, 0.5, 0.75), frac_box("w2", 0.5, 0.0, 1.0, 0.75)]   # 37.5 % each, 75 % total
    verdict = validate(wide, GRID)
    assert codes(verdict) == ["total_area"] and "75%" in verdict.errors[0].message


def test_location_mismatch_from_location_or_description():
    right_box = frac_box("r", 0.4, 0.7, 0.6, 0.9, location="center-left")
    verdict = validate([right_box], GRID)
    assert codes(verdict) == ["location_mismatch"]
    assert "left" in verdict.errors[0].message and "center-right" in verdict.errors[0].message
    described = frac_box("d", 0.7, 0.1, 0.9, 0.3, description="a dense patch at the top left")
    assert codes(validate([described], GRID)) == ["location_mismatch"]
    north = frac_box("n", 0.05, 0.4, 0.2, 0.6, location="north")
    assert validate([north], GRID).ok
    south = frac_box("s", 0.05, 0.4, 0.2, 0.6, location="southern margin")
    assert codes(validate([south], GRID)) == ["location_mismatch"]
    # Free descriptions only count the plain words: 'lower' and 'east' there mean other things.
    assert validate([frac_box("x", 0.1, 0.1, 0.3, 0.3, description="lower values east of the fault")], GRID).ok


def test_empty_region():
    verdict = validate([Region("e", box(500_000, 3_999_000, 500_000, 3_999_500))], GRID)
    assert codes(verdict) == ["empty_region"]


def test_feedback_escalates_with_attempts():
    regions = [frac_box("big", 0.0, 0.0, 0.7, 0.7, location="bottom-right"), frac_box("big2", 0.1, 0.1, 0.6, 0.6)]
    first = validate(regions, GRID, attempt=1)
    second = validate(regions, GRID, attempt=2)
    last = validate(regions, GRID, attempt=3)
    assert not first.final and not second.final and last.final
    assert "too large" in first.feedback and "big" not in first.feedback and "[ymin" not in first.feedback
    assert "Region big covers 49.0%" in second.feedback and "Shrink it" in second.feedback
    assert COORDINATE_REFERENCE in second.feedback          # a location problem shows the reference from attempt 2
    assert last.feedback.startswith("This is your final attempt")
    assert "[ymin, xmin, ymax, xmax], (0, 0) at the top-left" in last.feedback
    assert COORDINATE_REFERENCE in last.feedback and "leave the coordinates empty" in last.feedback
    assert len(first.feedback) < len(second.feedback) < len(last.feedback)
    sized_only = [frac_box("big", 0.0, 0.0, 0.7, 0.7)]
    assert COORDINATE_REFERENCE not in validate(sized_only, GRID, attempt=2).feedback
    assert COORDINATE_REFERENCE in validate(sized_only, GRID, attempt=3).feedback


def test_limits_are_parameters():
    limits = ControllerLimits(max_regions=2, max_attempts=2, max_area_fraction=0.6)
    regions = [frac_box(f"r{i}", 0.3 * i, 0.0, 0.3 * i + 0.1, 0.1) for i in range(3)]
    verdict = validate(regions, GRID, attempt=2, limits=limits)
    assert codes(verdict) == ["too_many"] and verdict.final
    assert validate([frac_box("big", 0.0, 0.0, 0.7, 0.7)], GRID, limits=limits).ok
    with pytest.raises(LodestarError):
        ControllerLimits(min_area_fraction=0.5, max_area_fraction=0.4)
    # Fractions against the area with data: a 0.3 x 0.3 box is 36 % of a 25 % data area.
    assert codes(validate([frac_box("a", 0.0, 0.0, 0.3, 0.3)], GRID, reference_area=0.25 * 1e8)) == []
    assert codes(validate([frac_box("a", 0.0, 0.0, 0.35, 0.35)], GRID, reference_area=0.25 * 1e8)) == ["too_large"]


def test_zones_frame_input():
    geometry = boxes_to_polygons([[0.1, 0.6, 0.3, 0.9]], GRID).polygons[0]
    record = zone_record(geometry, GRID, zone_id="aloh:1", layer="aloh", role="argillic_alteration", kind="anomaly",
                         score_mean=2.0, score_max=3.0, what="high-value anomaly")
    frame = zones_frame([record], GRID.crs)
    verdict = validate(frame, GRID)
    assert verdict.ok and verdict.measures["regions"] == 1


def test_boxes_to_polygons_maps_clamps_and_drops():
    result = boxes_to_polygons([[0.0, 0.0, 0.5, 0.25], [-0.1, 0.8, 0.2, 1.3], [0.5, 0.5, 0.4, 0.4],
                                [1.2, 0.1, 1.5, 0.2], ["a", 1]], GRID)
    first = result.polygons[0]
    assert first.bounds == (500_000.0, 3_995_000.0, 502_500.0, 4_000_000.0)
    assert result.polygons[1].bounds == (508_000.0, 3_998_000.0, 510_000.0, 4_000_000.0)
    assert result.clamped == [1, 3] and result.dropped == [3, 4]
    assert result.polygons[2].bounds == (504_000.0, 3_995_000.0, 505_000.0, 3_996_000.0)   # corners put in order
    assert result.polygons[3] is None and result.polygons[4] is None
    assert any("clamped" in n for n in result.notes) and any("swapped" in n for n in result.notes)
    permille = boxes_to_polygons([[0, 0, 500, 250]], GRID, scale=1000)
    assert permille.polygons[0].equals(first)


def test_stated_sides():
    assert stated_sides("top-left") == {"y": "top", "x": "left"}
    assert stated_sides("North-East corner") == {"y": "top", "x": "right"}
    assert stated_sides("south west") == {"y": "bottom", "x": "left"}
    assert stated_sides("center") == {}
    assert stated_sides("left and right") == {}
    assert stated_sides("upper right", plain_only=True) == {"x": "right"}


def test_enforce_keeps_the_best_regions_within_limits():
    regions = [
        frac_box("huge", 0.0, 0.0, 0.8, 0.8, score=9.0),          # too large
        frac_box("speck", 0.95, 0.95, 0.96, 0.96, score=8.0),     # too small
        frac_box("a", 0.1, 0.1, 0.3, 0.3, score=5.0),
        frac_box("a_dup", 0.12, 0.12, 0.3, 0.3, score=4.0),       # inside a
        frac_box("b", 0.5, 0.5, 0.6, 0.6, score=3.0),
        frac_box("c", 0.7, 0.1, 0.8, 0.2, score=2.0),
        frac_box("d", 0.1, 0.7, 0.2, 0.8, score=1.5),
        frac_box("e", 0.4, 0.1, 0.5, 0.2, score=1.0),
        frac_box("f", 0.85, 0.5, 0.95, 0.6, score=0.5),           # sixth valid one: over the count
    ]
    result = enforce(regions, GRID)
    assert [r.zone_id for r in result.regions] == ["a", "b", "c", "d", "e"]
    assert result.dropped == {"huge": "too_large", "speck": "too_small", "a_dup": "overlap", "f": "too_many"}
    assert validate(result.regions, GRID).ok
    total = enforce([frac_box("w1", 0.0, 0.0, 0.5, 0.75, score=2), frac_box("w2", 0.5, 0.0, 1.0, 0.75, score=1)],
                    GRID)
    assert [r.zone_id for r in total.regions] == ["w1"] and total.dropped == {"w2": "total_area"}


def test_enforce_on_a_zones_frame_returns_a_frame():
    records = []
    for i, (score, bounds) in enumerate([(1.0, [0.1, 0.1, 0.3, 0.3]), (3.0, [0.6, 0.6, 0.8, 0.8]),
                                         (2.0, [0.15, 0.15, 0.3, 0.3])], start=1):
        geometry = boxes_to_polygons([bounds], GRID).polygons[0]
        records.append(zone_record(geometry, GRID, zone_id=f"L:{i}", layer="L", role="other", kind="anomaly",
                                   score_mean=score, score_max=score, what="anomaly"))
    frame = zones_frame(records, GRID.crs)
    result = enforce(frame, GRID)
    assert isinstance(result.regions, gpd.GeoDataFrame)
    assert list(result.regions.zone_id) == ["L:2", "L:3"] and result.dropped == {"L:1": "overlap"}
    assert list(result.regions.columns) == list(frame.columns)


def test_specks_are_measured_on_the_ground_when_a_ground_size_is_given():
    """A 200 m x 200 m region is 0.04 % of this 100 km2 grid: a speck by the image rule (0.2 %), and by a
    0.05 km2 ground rule too; a 300 m x 300 m one is a speck by the image rule only."""
    small = Region("small", box(501_000, 3_995_000, 501_200, 3_995_200), location="center-left")
    medium = Region("medium", box(505_000, 3_995_000, 505_300, 3_995_300), location="center")
    image = validate([small, medium], GRID)
    assert [e.zone_ids for e in image.errors if e.code == "too_small"] == [("small",), ("medium",)]
    ground = ControllerLimits(min_area_m2=50_000.0)
    verdict = validate([small, medium], GRID, limits=ground)
    assert [e.zone_ids for e in verdict.errors if e.code == "too_small"] == [("small",)]
    assert "covers only 0.04 km2 (at least 0.05 km2)" in verdict.errors[0].message
    assert [r.zone_id for r in enforce([small, medium], GRID, ground).regions] == ["medium"]
    pixel_space = RasterGrid(GRID.transform, 1000, 1000, None)  # no CRS: the image rule applies
    assert "too_small" in validate([medium], pixel_space, limits=ground).codes
