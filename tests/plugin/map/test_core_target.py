"""The verified core on the map: a ring filled, and reading a verdict's core."""
from __future__ import annotations

import pytest
from affine import Affine
from shapely.geometry import Point, box

from lodestar.plugin.map.core_target import core_cells, core_outline, filled
from lodestar.plugin.raster_io import RasterGrid


def test_a_ring_of_alteration_encloses_its_centre():
    ring = Point(0, 0).buffer(1000).difference(Point(0, 0).buffer(600))
    assert not ring.contains(Point(0, 0))
    assert filled(ring).contains(Point(0, 0)) and filled(ring).area == pytest.approx(Point(0, 0).buffer(1000).area)


def test_a_verdict_core_is_read_or_refused_with_the_reason():
    assert core_outline({}) is None and core_outline({"label": "x"}) is None
    assert core_outline({"wkt": box(0, 0, 10, 10).wkt}).area == 100
    with pytest.raises(ValueError, match="not readable WKT"):
        core_outline({"wkt": "POLYGON ((0 0, 1"})
    with pytest.raises(ValueError, match="no area"):
        core_outline({"wkt": "POINT (1 1)"})


def test_core_cells_are_the_cells_it_touches():
    grid = RasterGrid(Affine(100.0, 0, 0.0, 0, -100.0, 1000.0), 10, 10, None)
    cells = core_cells(box(0, 850, 250, 1000), grid)
    assert cells.sum() == 6 and cells[:2, :3].all()


def test_filled_keeps_the_polygons_of_nested_collections_and_leaves_lines_out():
    from shapely.geometry import GeometryCollection, LineString, MultiPolygon

    ring = Point(0, 0).buffer(100).difference(Point(0, 0).buffer(50))
    nested = GeometryCollection([MultiPolygon([ring, box(500, 500, 600, 600)]), LineString([(0, 0), (900, 0)])])
    assert filled(nested).area == pytest.approx(Point(0, 0).buffer(100).area + 10_000)
    assert filled(LineString([(0, 0), (1, 1)])).is_empty
    with pytest.raises(ValueError, match="empty or has no area"):  # a zone that is a line makes no core
        import geopandas as gpd

        core_outline({"zone": "z"}, gpd.GeoDataFrame({"zone_id": ["z"]}, geometry=[LineString([(0, 0), (1, 1)])]))


def test_a_core_named_by_zone_id_is_that_zone_with_its_holes_filled():
    import geopandas as gpd

    ring = Point(0, 0).buffer(1000).difference(Point(0, 0).buffer(600))
    zones = gpd.GeoDataFrame({"zone_id": ["s1:a:1", "s2:b:1"]}, geometry=[ring, box(5000, 0, 5100, 100)])
    outline = core_outline({"label": "s1:a:1", "zone": "s1:a:1"}, zones)
    assert outline.contains(Point(0, 0)) and outline.area == pytest.approx(Point(0, 0).buffer(1000).area)
    with pytest.raises(ValueError, match="names zone 's3:c:1', which no step of the chain marked"):
        core_outline({"zone": "s3:c:1"}, zones)
    with pytest.raises(ValueError, match="which no step of the chain marked"):
        core_outline({"zone": "s1:a:1"}, None)
