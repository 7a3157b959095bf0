"""The answer follows the STA-CoT paper's C.4 rule from the items' findings: every testable critical item supported and,
when any secondary item is testable, at least one of them present; an untestable item neither helps nor hurts."""
from __future__ import annotations

import pytest

from lodestar.models.offline.findings import Finding, answers_yes


def _items(*pairs) -> dict:
    return {f"i{n}": Finding(level, status) for n, (level, status) in enumerate(pairs)}


def test_a_yes_needs_every_testable_critical_item_supported_and_a_secondary_one_present():
    assert answers_yes(_items(("critical", "supported"), ("critical", "supported"), ("secondary", "supported")))
    assert answers_yes(_items(("critical", "supported"), ("secondary", "missing"), ("secondary", "supported")))
    assert answers_yes(_items(("critical", "supported"), ("critical", "untestable"), ("secondary", "untestable")))
    assert not answers_yes(_items(("critical", "supported"), ("critical", "marginal"), ("secondary", "supported")))
    assert not answers_yes(_items(("critical", "supported"), ("secondary", "missing")))
    assert not answers_yes(_items(("critical", "untestable"), ("secondary", "supported")))  # nothing critical tested
    assert not answers_yes({})


def test_a_finding_holds_one_of_four_statuses_and_its_evidence_as_a_tuple():
    found = Finding("critical", "supported", 0.0, ["s1:aloh:1"], "aloh (measured at the core)", 450.0)
    assert found.zones == ("s1:aloh:1",) and found.measured.startswith("aloh")
    with pytest.raises(ValueError, match="unknown status 'present'"):
        Finding("secondary", "present")


def test_a_zone_is_read_from_a_zones_frame_row_and_from_a_tool_outcome_without_geometry():
    from affine import Affine
    from rasterio.crs import CRS
    from shapely.geometry import box

    from lodestar.models.offline.findings import Zone
    from lodestar.plugin.raster_io import RasterGrid
    from lodestar.plugin.zones import zone_record, zones_frame

    grid = RasterGrid(Affine(30, 0, 500_000, 0, -30, 4_000_000), 100, 100, CRS.from_epsg(32612))
    record = zone_record(box(501_200, 3_998_200, 501_800, 3_998_800), grid, zone_id="aloh:1", layer="aloh",
                         role="hydrothermal_alteration", kind="anomaly", score_mean=1.25, score_max=1.5, what="anomaly")
    (row,) = zones_frame([record], grid.crs).to_dict("records")
    zone = Zone.of(row)
    assert (zone.zone_id, zone.layer, zone.role, zone.kind, zone.position) == (
        "aloh:1", "aloh", "hydrothermal_alteration", "anomaly", "center")
    assert (zone.area_m2, zone.score_mean, zone.score_max) == (360_000.0, 1.25, 1.5)
    assert zone.geometry.equals(record["geometry"]) and zone.description.startswith("anomaly in the center")
    assert Zone.of({k: v for k, v in record.items() if k != "geometry"}).geometry is None
