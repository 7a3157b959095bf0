"""lodestar:feature_regions, lodestar:unit_regions and lodestar:alteration_indices through real Processing."""
from __future__ import annotations

import json
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from lodestar_testdata import write_geotiff
from rasterio.transform import from_origin
from shapely.geometry import LineString

X0, Y0, PX = 500_000.0, 4_000_000.0, 30.0
GREAT_BASIN = Path(__file__).resolve().parents[2] / "tests" / "data" / "great-basin-gold"


def write_tif(path, data, crs="EPSG:32611", nodata=None):
    return str(write_geotiff(path, data, from_origin(X0, Y0, PX, PX), crs, nodata))


def test_feature_regions_finds_the_dark_line(tmp_path, run):
    image = (0.6 + np.random.default_rng(0).normal(0, 0.03, (80, 100))).astype("float32")
    image[30, 10:90] = 0.1
    source = write_tif(tmp_path / "fault_map.tif", image)
    out = tmp_path / "zones.gpkg"
    result = run("lodestar:feature_regions", {"INPUT": source, "MODE": 1, "ROLE": 0, "BUFFER_PX": 1.0,
                                              "MAX_ZONES": 5, "OUTPUT": str(out)})
    zones = gpd.read_file(result["OUTPUT"])
    assert len(zones) == 1 and zones.kind[0] == "fault" and zones.role[0] == "structure"  # role guessed
    xmin, ymin, xmax, ymax = zones.geometry[0].bounds
    assert abs((ymin + ymax) / 2 - (Y0 - 30.5 * PX)) <= PX and ymax - ymin <= 3 * PX + 1e-6
    assert zones.description[0].startswith("E-W-trending dark linear feature")


def test_feature_regions_on_vector_faults_with_reference_and_extent(tmp_path, run):
    base = write_tif(tmp_path / "base.tif", np.ones((100, 100), dtype="float32"))
    faults = gpd.GeoDataFrame(geometry=[LineString([(X0 + 300, Y0 - 600), (X0 + 2700, Y0 - 600)]),
                                        LineString([(X0 + 300, Y0 - 2400), (X0 + 2700, Y0 - 2400)])],
                              crs="EPSG:32611").to_crs("EPSG:4326")
    path = tmp_path / "faults.gpkg"
    faults.to_file(path, driver="GPKG")
    out = tmp_path / "fz.gpkg"
    extent = f"{X0},{X0 + 3000},{Y0 - 1500},{Y0} [EPSG:32611]"
    result = run("lodestar:feature_regions", {"INPUT": str(path), "REFERENCE": base, "EXTENT": extent,
                                              "BUFFER_PX": 2.0, "OUTPUT": str(out)})
    zones = gpd.read_file(result["OUTPUT"])
    assert len(zones) == 1 and zones.kind[0] == "fault"
    assert zones.crs.to_epsg() == 32611
    ymin, ymax = zones.geometry[0].bounds[1], zones.geometry[0].bounds[3]
    assert (ymin + ymax) / 2 == pytest.approx(Y0 - 600, abs=1) and ymax - ymin == pytest.approx(4 * PX, abs=1)


def test_vector_input_without_reference_is_an_error(tmp_path, run):
    from qgis.core import QgsProcessingException

    path = tmp_path / "faults.gpkg"
    gpd.GeoDataFrame(geometry=[LineString([(X0, Y0 - 10), (X0 + 100, Y0 - 10)])], crs="EPSG:32611").to_file(path)
    with pytest.raises(QgsProcessingException, match="choose a reference raster"):
        run("lodestar:feature_regions", {"INPUT": str(path), "OUTPUT": str(tmp_path / "x.gpkg")})
    assert not (tmp_path / "x.gpkg").exists()


def test_unit_regions_selects_units_and_contacts(tmp_path, run):
    codes = np.full((50, 60), 2, dtype="uint8")
    codes[:, :20] = 1
    source = write_tif(tmp_path / "geology.tif", codes, nodata=0)
    legend = tmp_path / "legend.csv"
    legend.write_text("value,name\n1,Dolomite\n2,Quartzite\n")
    out = tmp_path / "units.gpkg"
    result = run("lodestar:unit_regions", {"INPUT": source, "LEGEND": str(legend), "UNITS": "dolo*",
                                           "OUTPUT_KIND": 2, "CONTACT_BUFFER_PX": 1.0, "OUTPUT": str(out)})
    zones = gpd.read_file(result["OUTPUT"])
    units = zones[zones.kind == "unit"]
    contacts = zones[zones.kind == "contact"]
    assert len(units) == 1 and units.geometry.iloc[0].bounds == (X0, Y0 - 50 * PX, X0 + 20 * PX, Y0)
    assert units.description.iloc[0].startswith("Favourable unit Dolomite") and units.score_mean.iloc[0] == 1.0
    assert len(contacts) == 1 and contacts.geometry.iloc[0].bounds[0::2] == (X0 + 19 * PX, X0 + 21 * PX)
    assert "Dolomite/Quartzite" in contacts.description.iloc[0]
    from qgis.core import QgsProcessingException

    with pytest.raises(QgsProcessingException, match="No unit named 'granite' in this map. Units present: Dolomite"):
        run("lodestar:unit_regions", {"INPUT": source, "LEGEND": str(legend), "UNITS": "granite",
                                      "OUTPUT": str(tmp_path / "none.gpkg")})


def test_alteration_indices_writes_tagged_rasters(tmp_path, run):
    rng = np.random.default_rng(1)
    data = rng.uniform(0.25, 0.3, (9, 30, 40)).astype("float32")
    data[5, 10:15, 20:25] *= 0.7                          # AlOH absorption at 2.21 um (ASTER band 6)
    source = write_tif(tmp_path / "aster.tif", data)
    folder = tmp_path / "indices"
    result = run("lodestar:alteration_indices", {"INPUT": source, "SENSOR": 1, "INDICES": "aloh, ferric_iron",
                                                 "OUTPUT_FOLDER": str(folder)})
    roles = json.loads(result["ROLES"])
    assert sorted(Path(p).name for p in result["OUTPUT_LAYERS"]) == ["aster_aloh.tif", "aster_ferric_iron.tif"]
    assert {Path(p).name: r for p, r in roles.items()} == {"aster_aloh.tif": "hydrothermal_alteration",
                                                           "aster_ferric_iron.tif": "iron_oxide"}
    with rasterio.open(folder / "aster_aloh.tif") as ds:
        aloh = ds.read(1, masked=True)
        assert ds.tags()["LODESTAR_ROLE"] == "hydrothermal_alteration" and ds.crs.to_epsg() == 32611
    row, col = np.unravel_index(np.ma.argmax(aloh), aloh.shape)
    assert 10 <= row < 15 and 20 <= col < 25
    np.testing.assert_allclose(aloh, (data[4] + data[6]) / data[5], rtol=1e-5)
    # The index feeds the next tool directly: its role comes from the LODESTAR_ROLE tag.
    texture = run("lodestar:feature_regions", {"INPUT": str(folder / "aster_aloh.tif"), "MODE": 4,
                                               "OUTPUT": str(tmp_path / "texture.gpkg")})
    texture_zones = gpd.read_file(texture["OUTPUT"])
    assert len(texture_zones) >= 1 and set(texture_zones.role) == {"hydrothermal_alteration"}
    mapped = run("lodestar:alteration_indices", {"INPUT": source, "SENSOR": 1, "BAND_MAP": "b5=1, b6=2, b7=3",
                                                 "OUTPUT_FOLDER": str(tmp_path / "mapped")})
    assert [Path(p).name for p in mapped["OUTPUT_LAYERS"]] == ["aster_aloh.tif"]
    from qgis.core import QgsProcessingException

    with pytest.raises(QgsProcessingException, match="Choose a sensor preset: aster, landsat_oli, sentinel2"):
        run("lodestar:alteration_indices", {"INPUT": source, "SENSOR": 0, "OUTPUT_FOLDER": str(tmp_path / "x")})


def test_unit_regions_on_great_basin_geology(tmp_path, run):
    out = tmp_path / "lpze.gpkg"
    result = run("lodestar:unit_regions", {"INPUT": str(GREAT_BASIN / "geologia.tif"),
                                           "LEGEND": str(GREAT_BASIN / "geologia_legend.csv"), "UNITS": "LPZE",
                                           "MAX_ZONES": 5, "OUTPUT": str(out)})
    zones = gpd.read_file(result["OUTPUT"])
    assert len(zones) == 5 and zones.description.str.startswith("Favourable unit LPZE (code 38)").all()
    assert zones.area_m2.is_monotonic_decreasing and zones.area_m2.iloc[0] > 5e8
    beside = run("lodestar:unit_regions", {"INPUT": str(GREAT_BASIN / "geologia.tif"), "UNITS": "LPZE",
                                           "MAX_ZONES": 1, "OUTPUT": str(tmp_path / "beside.gpkg")})
    # without LEGEND the geologia_legend.csv beside the map names the units
    assert gpd.read_file(beside["OUTPUT"]).description[0].startswith("Favourable unit LPZE (code 38)")
