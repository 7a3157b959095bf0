"""vector_evidence: fault lines and unit polygons become zones in the analysis CRS and extent."""
from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from pyproj import Transformer
from rasterio.transform import from_origin
from shapely.geometry import LineString, Point, box

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.raster_io import LayerSpec, RasterSet
from lodestar.plugin.tools.feature_regions import feature_regions
from lodestar.plugin.tools.vector_evidence import VectorEvidenceParams, vector_evidence

X0, Y0, PX = 500_000.0, 4_000_000.0, 30.0
GREAT_BASIN = Path(__file__).resolve().parents[1] / "data" / "great-basin-gold"
TO_GEO = Transformer.from_crs("EPSG:32611", "EPSG:4326", always_xy=True)


def base_raster(tmp_path, size=100):
    path = tmp_path / "base.tif"
    with rasterio.open(path, "w", driver="GTiff", width=size, height=size, count=1, dtype="float32",
                       crs="EPSG:32611", transform=from_origin(X0, Y0, PX, PX)) as ds:
        ds.write(np.ones((1, size, size), dtype="float32"))
    return path


def utm_line(*points):
    return LineString(points)


def to_wgs84(line):
    return LineString([TO_GEO.transform(x, y) for x, y in line.coords])


@pytest.fixture
def faults(tmp_path):
    """Faults in EPSG:4326 (GeoJSON): a lone E-W fault, two close parallel E-W faults, a NE fault running out."""
    cy = lambda row: Y0 - (row + 0.5) * PX  # noqa: E731 (pixel-centre y of a row)
    lone = utm_line((X0 + 10 * PX, cy(20)), (X0 + 60 * PX, cy(20)))
    pair_a = utm_line((X0 + 10 * PX, cy(60)), (X0 + 90 * PX, cy(60)))
    pair_b = utm_line((X0 + 10 * PX, cy(62)), (X0 + 90 * PX, cy(62)))
    ne = utm_line((X0 + 70 * PX, cy(95)), (X0 + 130 * PX, cy(35)))   # leaves the extent on the right
    frame = gpd.GeoDataFrame({"id": [1, 2, 3, 4]}, geometry=[to_wgs84(g) for g in (lone, pair_a, pair_b, ne)],
                             crs="EPSG:4326")
    path = tmp_path / "faults.geojson"
    frame.to_file(path, driver="GeoJSON")
    return path, {"lone": lone, "pair": (pair_a, pair_b), "ne": ne}


def test_fault_lines_become_buffered_clusters_in_analysis_crs(tmp_path, faults):
    path, lines = faults
    rs = RasterSet([LayerSpec(base_raster(tmp_path), "other"), LayerSpec(path, "structure")])
    result = vector_evidence(rs, "faults")
    zones = result.zones
    assert result.stats["features"] == 4 and result.stats["buffer_m"] == pytest.approx(1.5 * PX)
    assert len(zones) == 3 and set(zones.kind) == {"fault"} and zones.crs.to_epsg() == 32611
    lone = zones[zones.description.str.contains(r"\(1 fault, 1\.5 km\)")]
    assert len(lone) == 1
    geom = lone.geometry.iloc[0]
    xmin, ymin, xmax, ymax = geom.bounds
    assert ymax - ymin == pytest.approx(3 * PX, abs=0.5)  # 1.5 pixels each side of the line
    assert geom.buffer(0.5).contains(lines["lone"]) and geom.hausdorff_distance(lines["lone"]) <= 1.5 * PX + 1
    assert lone.description.iloc[0].startswith("E-W-trending fault zone")
    pair = zones[zones.description.str.contains("2 faults")]
    assert len(pair) == 1 and pair.geometry.iloc[0].contains(lines["pair"][0].union(lines["pair"][1]))
    # Fault density in an 11 x 11 pixel window: one line burns 11 pixels of 30 m in 0.1089 km2 = 3.03 km/km2.
    single = 11 * 30 / 1000 / (121 * 900 / 1e6)
    assert lone.score_max.iloc[0] == pytest.approx(single, rel=1e-3)
    assert pair.score_max.iloc[0] == pytest.approx(2 * single, rel=1e-3)
    assert zones.score_max.iloc[0] == pytest.approx(2 * single, rel=1e-3)   # densest first
    ne = zones[zones.description.str.contains("NE-SW")]
    assert len(ne) == 1 and ne.geometry.iloc[0].bounds[2] <= X0 + 100 * PX + 1e-6  # clipped to the extent


def test_positions_with_bounds_are_words_within_the_analysis_extent(tmp_path, faults):
    """The lone fault (row 20 of 100) is in the middle of the window of rows 0-39 but at the top of the map."""
    path, _ = faults
    rs = RasterSet([LayerSpec(base_raster(tmp_path), "other"), LayerSpec(path, "structure")])
    zones = vector_evidence(rs, "faults", bounds=(X0, Y0 - 40 * PX, X0 + 100 * PX, Y0)).zones
    lone = zones[zones.description.str.contains("1 fault")]
    assert len(lone) == 1 and lone.position.iloc[0] == "top-center"


def test_buffer_in_metres_and_bounds(tmp_path, faults):
    path, lines = faults
    rs = RasterSet([LayerSpec(base_raster(tmp_path), "other"), LayerSpec(path, "structure")])
    zones = vector_evidence(rs, "faults", VectorEvidenceParams(buffer_m=100.0),
                            bounds=(X0, Y0 - 40 * PX, X0 + 100 * PX, Y0)).zones
    assert len(zones) == 1   # only the lone fault: the NE fault stays below row 65 inside the extent
    lone = zones[zones.description.str.contains("E-W")].geometry.iloc[0]
    assert lone.bounds[3] - lone.bounds[1] == pytest.approx(200, abs=1)
    assert all(g.bounds[1] >= Y0 - 40 * PX - 1e-6 for g in zones.geometry)


def test_feature_regions_delegates_vector_layers(tmp_path, faults):
    path, _ = faults
    rs = RasterSet([LayerSpec(base_raster(tmp_path), "other"), LayerSpec(path, "structure")])
    zones = feature_regions(rs, "faults").zones
    assert len(zones) == 3 and set(zones.kind) == {"fault"}


def test_unit_polygons_by_name_field_and_legend(tmp_path):
    rs_base = base_raster(tmp_path)
    a = box(X0, Y0 - 50 * PX, X0 + 50 * PX, Y0)
    b = box(X0 + 50 * PX, Y0 - 50 * PX, X0 + 200 * PX, Y0)       # runs past the extent
    c = box(X0, Y0 - 100 * PX, X0 + 100 * PX, Y0 - 50 * PX)
    frame = gpd.GeoDataFrame({"unit_code": [1, 2, 1], "NAME": ["Carbonate A", "Volcanics", "Carbonate A"]},
                             geometry=[a, b, c], crs="EPSG:32611")
    path = tmp_path / "units.gpkg"
    frame.to_file(path, driver="GPKG")
    rs = RasterSet([LayerSpec(rs_base, "other"), LayerSpec(path, "geological_map")])
    zones = vector_evidence(rs, "units").zones
    assert list(zones.description.str.split(" in the").str[0]) == ["Unit Carbonate A", "Unit Volcanics"]
    assert zones.area_m2.tolist() == [pytest.approx(7500 * PX * PX), pytest.approx(2500 * PX * PX)]
    favourable = vector_evidence(rs, "units", VectorEvidenceParams(units="carbonate*")).zones
    assert len(favourable) == 1 and favourable.score_mean.iloc[0] == 1.0
    legend = tmp_path / "legend.csv"
    legend.write_text("value,name\n1,Limestone\n2,Basalt\n")
    rs = RasterSet([LayerSpec(rs_base, "other"), LayerSpec(path, "geological_map", legend=legend)])
    named = vector_evidence(rs, "units", VectorEvidenceParams(name_field="unit_code")).zones
    assert sorted(named.description.str.split(" in the").str[0]) == ["Unit Basalt", "Unit Limestone"]
    with pytest.raises(LodestarError, match="no field 'rock'"):
        vector_evidence(rs, "units", VectorEvidenceParams(name_field="rock"))


def test_errors(tmp_path):
    rs_base = base_raster(tmp_path)
    mixed = gpd.GeoDataFrame(geometry=[Point(X0 + 10, Y0 - 10), LineString([(X0, Y0 - 5), (X0 + 50, Y0 - 5)])],
                             crs="EPSG:32611")
    mixed.to_file(tmp_path / "mixed.gpkg", driver="GPKG")
    rs = RasterSet([LayerSpec(rs_base, "other"), LayerSpec(tmp_path / "mixed.gpkg", "structure")])
    with pytest.raises(LodestarError, match="mixes geometry types"):
        vector_evidence(rs, "mixed")
    with pytest.raises(LodestarError, match="raster layer"):
        vector_evidence(rs, "base")
    with pytest.raises(LodestarError, match="positive"):
        VectorEvidenceParams(buffer_m=0)


def test_great_basin_faults_near_carlin_deposits():
    """Real data: 1,674 mapped faults clipped to a 60 x 60 km window around the Carlin trend; deposits lie in
    or near the fault zones far more often than the zones' share of the window would give by chance."""
    rs = RasterSet([LayerSpec(GREAT_BASIN / "geologia.tif", "geological_map",
                              legend=GREAT_BASIN / "geologia_legend.csv"),
                    LayerSpec(GREAT_BASIN / "gbfaults3.gpkg", "structure")])
    deposits = gpd.read_file(GREAT_BASIN / "TrainGP.gpkg").to_crs(rs.crs)
    x, y = deposits.geometry.x.median(), deposits.geometry.y.median()
    bounds = (x - 30_000, y - 30_000, x + 30_000, y + 30_000)
    result = vector_evidence(rs, "gbfaults3", VectorEvidenceParams(buffer_m=1000), bounds=bounds)
    zones = result.zones
    assert 0 < result.stats["features"] < 1674 and len(zones) > 0
    window = box(*bounds)
    assert all(window.buffer(250).contains(g) for g in zones.geometry)  # the window snaps to 250 m pixels
    footprint = zones.unary_union
    near = deposits[deposits.within(window)]
    hit = near.within(footprint).mean()
    share = footprint.area / window.area
    assert len(near) >= 10 and hit > 1.5 * share
    assert zones.description.str.contains("-trending fault zone").all() and (zones.score_max > 0).all()
