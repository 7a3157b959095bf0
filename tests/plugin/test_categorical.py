"""Categorical geological maps: legend reading, unit polygons, favourable units, contacts; real Great Basin data."""
from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from rasterio.transform import from_origin

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.raster_io import LayerSpec, RasterSet
from lodestar.plugin.tools.categorical import UnitRegionParams, match_units, read_legend, unit_regions

X0, Y0, PX = 300_000.0, 5_000_000.0, 100.0
GREAT_BASIN = Path(__file__).resolve().parents[1] / "data" / "great-basin-gold"


def write_codes(path, codes, crs="EPSG:32612", transform=None, nodata=0):
    with rasterio.open(path, "w", driver="GTiff", width=codes.shape[1], height=codes.shape[0], count=1,
                       dtype="uint8", crs=crs, transform=transform or from_origin(X0, Y0, PX, PX), nodata=nodata) as ds:
        ds.write(codes.astype("uint8"), 1)
    return path


@pytest.fixture
def geology(tmp_path):
    """60 x 90 map: limestone (1) left, shale (2) middle, granite (3) right; two limestone patches."""
    codes = np.full((60, 90), 2, dtype="uint8")
    codes[:, :30] = 1
    codes[:, 60:] = 3
    codes[20:30, 40:45] = 1          # an isolated limestone patch inside the shale
    codes[55:, :] = 0                # nodata strip at the bottom
    legend = tmp_path / "legend.csv"
    legend.write_text("value,name,age\n1,Limestone (carbonate),Ordovician\n2,Shale,Devonian\n3,Granite,Cretaceous\n")
    return write_codes(tmp_path / "geo.tif", codes), legend


def test_read_legend_forms(tmp_path):
    plain = tmp_path / "a.csv"
    plain.write_text("value,name\n1,Limestone\n2, Shale \n")
    assert read_legend(plain) == {1: "Limestone", 2: "Shale"}
    arcgis = tmp_path / "b.csv"
    arcgis.write_text("VALUE,COUNT,CODE\n1,31211,TPC\n38,76271,LPZE\n")
    assert read_legend(arcgis) == {1: "TPC", 38: "LPZE"}
    unnamed = tmp_path / "c.csv"
    unnamed.write_text("id;x\n".replace(";", ",") + "5,Dolomite\n")
    assert read_legend(unnamed) == {5: "Dolomite"}
    bad = tmp_path / "d.csv"
    bad.write_text("value,count\n1,10\n")
    with pytest.raises(LodestarError, match="no column of unit names"):
        read_legend(bad)
    with pytest.raises(LodestarError, match="not found"):
        read_legend(tmp_path / "missing.csv")


def test_read_legend_in_a_windows_code_page(tmp_path):
    legend = tmp_path / "legend.csv"
    legend.write_bytes("value,name\n1,Calcário\n2,Granito\n".encode("cp1252"))
    assert read_legend(legend) == {1: "Calcário", 2: "Granito"}


def test_match_units_exact_wildcard_and_error():
    names = {1: "Limestone (carbonate)", 2: "Shale", 3: "Granite"}
    assert match_units(names, ["shale"]) == {2}
    assert match_units(names, ["*carbonate*", "3"]) == {1, 3}
    with pytest.raises(LodestarError, match="No unit named 'Basalt'.*Granite, Limestone \\(carbonate\\), Shale"):
        match_units(names, ["Basalt"])
    # as the favourability surface matches them (before, names and wildcards only: the step mapped nothing where
    # the surface weighed a unit): a rock synonym, never a negated name; unit names as keys kept as given
    belts = {1: "greenstone (Archaean greenstone belt bedrock)", 2: "outside the greenstone belts"}
    assert match_units(belts, ["basalt"]) == {1} and match_units(belts, ["greenstone"]) == {1}
    assert match_units({"LPZE": "LPZE", "Qal": "Qal"}, ["lpze"]) == {"LPZE"}


def test_unit_polygons_with_names_and_favourable_selection(geology):
    path, legend = geology
    rs = RasterSet([LayerSpec(path, "geological_map", legend=legend)])
    everything = unit_regions(rs, "geo").zones
    assert len(everything) == 4 and set(everything.kind) == {"unit"}
    assert set(everything.score_mean) == {0.0}
    by_area = everything.sort_values("area_m2", ascending=False)
    assert by_area.area_m2.tolist() == [30 * 55 * PX * PX, 30 * 55 * PX * PX, 30 * 55 * PX * PX - 50 * PX * PX,
                                        50 * PX * PX]
    result = unit_regions(rs, "geo", UnitRegionParams(units="*carbonate*"))
    zones = result.zones
    assert len(zones) == 2 and set(zones.score_mean) == {1.0}
    left = zones.iloc[0]
    assert left.geometry.bounds == (X0, Y0 - 55 * PX, X0 + 30 * PX, Y0)
    assert left.description.startswith("Favourable unit Limestone (carbonate) (code 1) in the")
    assert left.position == "center-left"
    patch = zones.iloc[1]
    assert patch.geometry.bounds == (X0 + 40 * PX, Y0 - 30 * PX, X0 + 45 * PX, Y0 - 20 * PX)
    assert result.stats["selected"] == ["Limestone (carbonate)"]


def test_unit_positions_with_bounds_are_words_within_the_analysis_extent(geology):
    """The limestone patch (rows 20-29, columns 40-44) lies at the bottom of the window of rows 0-29 and
    columns 30-59, but in the center of the map: positions follow the analysis extent."""
    path, legend = geology
    rs = RasterSet([LayerSpec(path, "geological_map", legend=legend)])
    bounds = (X0 + 30 * PX, Y0 - 30 * PX, X0 + 60 * PX, Y0)
    zones = unit_regions(rs, "geo", UnitRegionParams(units="*carbonate*", output="both"), bounds=bounds).zones
    patch = zones[zones.kind == "unit"]
    assert len(patch) == 1 and patch.position.iloc[0] == "center"
    assert set(zones[zones.kind == "contact"].position) == {"center"}


def test_contacts_involving_selected_units(geology):
    path, legend = geology
    rs = RasterSet([LayerSpec(path, "geological_map", legend=legend)])
    params = UnitRegionParams(units="Granite", output="contacts", contact_buffer_px=1.0)
    zones = unit_regions(rs, "geo", params).zones
    assert len(zones) == 1                                   # only the shale/granite contact at column 60
    assert zones.geometry.iloc[0].bounds == (X0 + 59 * PX, Y0 - 55 * PX, X0 + 61 * PX, Y0)
    assert zones.description.iloc[0].startswith("Contact zone Shale/Granite (5.5 km of contact)")
    both = unit_regions(rs, "geo", UnitRegionParams(output="both", contact_buffer_px=2.0)).zones
    contacts = both[both.kind == "contact"]
    assert len(contacts) == 3 and len(both[both.kind == "unit"]) == 4
    widths = sorted(round(g.bounds[2] - g.bounds[0]) for g in contacts.geometry)
    assert widths == [4 * PX, 4 * PX, 9 * PX]  # two pixels each side; the 5-pixel patch ring is 9 wide
    patch_ring = contacts[contacts.description.str.contains("Limestone \\(carbonate\\)/Shale \\(3 km")]
    assert len(patch_ring) == 1  # 10 + 10 + 5 + 5 pixel edges of 100 m around the 10 x 5 patch


def test_geographic_categorical_layer_is_resampled_by_nearest(tmp_path):
    """A unit map in EPSG:4326 analysed on a UTM grid: codes stay codes, the contact lands at its longitude."""
    base = tmp_path / "base.tif"
    with rasterio.open(base, "w", driver="GTiff", width=80, height=80, count=1, dtype="float32", crs="EPSG:32611",
                       transform=from_origin(440_000, 4_420_000, 100, 100)) as ds:
        ds.write(np.ones((1, 80, 80), dtype="float32"))
    from pyproj import Transformer

    lon_c, lat_c = Transformer.from_crs("EPSG:32611", "EPSG:4326", always_xy=True).transform(444_000, 4_416_000)
    d = 0.001
    lon0, lat1 = lon_c - 60 * d, lat_c + 60 * d
    codes = np.full((120, 120), 4, dtype="uint8")
    codes[:, 60:] = 7
    path = write_codes(tmp_path / "units_wgs84.tif", codes, crs="EPSG:4326", transform=from_origin(lon0, lat1, d, d))
    rs = RasterSet([LayerSpec(base, "other"), LayerSpec(path, "geological_map")])
    assert rs.crs.to_epsg() == 32611
    result = unit_regions(rs, "units_wgs84", UnitRegionParams(output="contacts", contact_buffer_px=1.0))
    zones = result.zones
    assert len(zones) == 1 and zones.description.iloc[0].startswith("Contact zone 4/7")
    to_utm = Transformer.from_crs("EPSG:4326", "EPSG:32611", always_xy=True)
    zone = zones.geometry.iloc[0]
    apx = rs.grid.pixel_size[0]
    for lat in np.linspace(lat1 - 0.03, lat1 - 0.09, 7):
        x, y = to_utm.transform(lon0 + 60 * d, lat)
        if rs.grid.bounds[1] < y < rs.grid.bounds[3]:
            assert zone.distance(gpd.points_from_xy([x], [y])[0]) <= apx
    assert result.stats["units_present"] == ["4", "7"]


def test_not_categorical_and_unknown_output(tmp_path):
    path = tmp_path / "float.tif"
    with rasterio.open(path, "w", driver="GTiff", width=5, height=5, count=1, dtype="float32", crs="EPSG:32611",
                       transform=from_origin(1000, 1000, 1, 1)) as ds:
        ds.write(np.ones((1, 5, 5), dtype="float32"))
    with pytest.raises(LodestarError, match="not a categorical map"):
        unit_regions(RasterSet([LayerSpec(path, "geological_map")]), "float")
    with pytest.raises(LodestarError, match="'units', 'contacts' or 'both'"):
        UnitRegionParams(output="lines")


def test_great_basin_carbonate_units_hold_most_carlin_deposits():
    """Real data: the lower Paleozoic eastern (carbonate) assemblage LPZE covers ~8 % of the study area and
    holds 19 of the 32 Carlin-type deposits; its contacts are named with the neighbouring units."""
    rs = RasterSet([LayerSpec(GREAT_BASIN / "geologia.tif", "geological_map",
                              legend=GREAT_BASIN / "geologia_legend.csv")])
    result = unit_regions(rs, "geologia", UnitRegionParams(units="LPZE", output="both"))
    units = result.zones[result.zones.kind == "unit"]
    assert set(units.description.str.extract(r"unit (\w+)")[0]) == {"LPZE"}
    deposits = gpd.read_file(GREAT_BASIN / "TrainGP.gpkg").to_crs(rs.crs)
    footprint = units.unary_union
    share_area = footprint.area / rs.valid_area()
    inside = int(deposits.within(footprint).sum())
    assert 0.07 < share_area < 0.10 and inside == 19
    contacts = result.zones[result.zones.kind == "contact"]
    assert len(contacts) > 0 and contacts.description.str.contains("LPZE").all()
    assert "LPZE" in result.stats["units_present"] and len(result.stats["units_present"]) == 25


def test_great_basin_classes_through_color_regions_honour_favourable_low():
    """Geochemistry classes (high = favourable) and distance-to-fault classes (low = favourable) go through the
    anomaly tool next to the categorical map without being taken for unit codes."""
    from lodestar.plugin.tools.color_regions import ColorRegionParams, color_regions

    rs = RasterSet([
        LayerSpec(GREAT_BASIN / "geologia.tif", "geological_map", legend=GREAT_BASIN / "geologia_legend.csv"),
        LayerSpec(GREAT_BASIN / "as_rcl.tif", "geochemistry"),
        LayerSpec(GREAT_BASIN / "falha_rcl.tif", "structure", favourable="low"),
    ])
    near = color_regions(rs, "falha_rcl", ColorRegionParams(method="value", value=1, smooth_px=0)).zones
    falha = rs.read("falha_rcl")[0]
    assert len(near) > 0
    for geom in near.geometry[:5]:
        c, r = rs.grid.map_to_pixel(geom.representative_point().x, geom.representative_point().y)
        assert falha[int(r), int(c)] == 1          # class 1: nearest to a fault
    assert (near.score_max <= -1 + 1e-6).all()     # negated values: higher score = closer
    arsenic = color_regions(rs, "as_rcl", ColorRegionParams(method="value", value=20, smooth_px=0)).zones
    assert len(arsenic) > 0 and (arsenic.score_mean >= 20).all()
    with pytest.raises(LodestarError, match="categorical map"):
        color_regions(rs, "geologia")
