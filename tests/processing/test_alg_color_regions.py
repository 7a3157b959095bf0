"""lodestar:color_regions, evidence_view, controller_check through Processing; color_regions via qgis_process."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from lodestar_testdata import write_geotiff
from rasterio.transform import from_origin

ROOT = Path(__file__).resolve().parents[2]
X0, Y0, PX = 500_000.0, 4_000_000.0, 10.0


def write_tif(path, data, crs="EPSG:32611", nodata=-9999.0):
    return str(write_geotiff(path, data, from_origin(X0, Y0, PX, PX), crs, nodata))


def anomaly_raster(path):
    data = np.zeros((100, 120), dtype="float32")
    data[20:40, 70:100] = 5.0
    data[:5, :5] = -9999.0
    return write_tif(path, data)


def test_color_regions_writes_the_anomaly_polygon(tmp_path, run):
    source = anomaly_raster(tmp_path / "aloh_index.tif")
    out = tmp_path / "zones.gpkg"
    result = run("lodestar:color_regions", {"INPUT": source, "ROLE": 0, "METHOD": 3, "VALUE": 2.5,
                                            "SMOOTH_PX": 0, "OUTPUT": str(out)})
    zones = gpd.read_file(result["OUTPUT"])
    assert len(zones) == 1
    zone = zones.iloc[0]
    assert zone.geometry.bounds == pytest.approx((X0 + 700, Y0 - 400, X0 + 1000, Y0 - 200))
    assert (zone.kind, zone.role, zone.position) == ("anomaly", "hydrothermal_alteration", "top-right")  # role guessed
    assert zone.score_max == pytest.approx(5.0) and zone.area_m2 == pytest.approx(60_000.0)
    assert zones.crs.to_epsg() == 32611


def test_color_regions_low_favourable_percentile_and_extent(tmp_path, run):
    from qgis.core import QgsProcessingException

    rows, cols = np.mgrid[0:60, 0:60]
    distance = (np.hypot(rows - 10.0, cols - 50.0) * PX).astype("float32")
    source = write_tif(tmp_path / "fault_distance.tif", distance)
    out = tmp_path / "near.geojson"
    result = run("lodestar:color_regions", {"INPUT": source, "FAVOURABLE": 1, "METHOD": 0, "PERCENTILE": 97,
                                            "SMOOTH_PX": 0, "OUTPUT": str(out)})
    zones = gpd.read_file(result["OUTPUT"])
    assert len(zones) == 1 and zones.position[0] == "top-right"
    centre = zones.geometry[0].centroid
    assert abs(centre.x - (X0 + 50.5 * PX)) < PX and abs(centre.y - (Y0 - 10.5 * PX)) < PX
    with pytest.raises(QgsProcessingException, match="lies outside|does not cover"):
        run("lodestar:color_regions", {"INPUT": source, "EXTENT": "0,10,0,10 [EPSG:32611]",
                                       "OUTPUT": str(tmp_path / "none.gpkg")})
    empty = write_tif(tmp_path / "empty.tif", np.full((10, 10), -9999.0, dtype="float32"))
    with pytest.raises(QgsProcessingException, match="no valid pixels"):
        run("lodestar:color_regions", {"INPUT": empty, "OUTPUT": str(tmp_path / "empty.gpkg")})
    assert not (tmp_path / "empty.gpkg").exists()


def test_evidence_view_writes_a_georeferenced_png(tmp_path, run):
    source = anomaly_raster(tmp_path / "aloh_index.tif")
    out = tmp_path / "view.png"
    result = run("lodestar:evidence_view", {"INPUT": source, "EXTENT": f"{X0 + 600},{X0 + 1100},{Y0 - 500},"
                                            f"{Y0 - 100} [EPSG:32611]", "SHARPEN": 2.0, "OUT_SIZE": 250,
                                            "OUTPUT": str(out)})
    assert Path(result["OUTPUT"]) == out and out.with_suffix(".pgw").exists()
    with rasterio.open(out) as ds:
        assert (ds.width, ds.height) == (250, 200)
        assert ds.bounds == pytest.approx((X0 + 600, Y0 - 500, X0 + 1100, Y0 - 100))
    zoomed = run("lodestar:evidence_view", {"INPUT": source, "CENTER_X": 1.0, "CENTER_Y": 0.0, "ZOOM": 4,
                                            "OUTPUT": str(tmp_path / "corner.tif")})
    assert "shifted" in zoomed["NOTES"]
    with rasterio.open(zoomed["OUTPUT"]) as ds:
        assert ds.bounds == pytest.approx((X0 + 900, Y0 - 250, X0 + 1200, Y0))


def test_color_regions_through_qgis_process(tmp_path):
    source = anomaly_raster(tmp_path / "aloh_index.tif")
    out = tmp_path / "cli_zones.gpkg"
    env = dict(os.environ, LODESTAR_QGIS_HOME=str(tmp_path / "qgis"))
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "qgis_process.sh"), "run", "lodestar:color_regions", "--",
         f"INPUT={source}", "METHOD=3", "VALUE=2.5", "SMOOTH_PX=0", f"OUTPUT={out}"],
        capture_output=True, text=True, env=env, timeout=240)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    zones = gpd.read_file(out)
    assert len(zones) == 1
    assert zones.geometry[0].bounds == pytest.approx((X0 + 700, Y0 - 400, X0 + 1000, Y0 - 200))


def test_controller_check_flags_and_fixes(tmp_path, run):
    from shapely.geometry import box

    reference = anomaly_raster(tmp_path / "image.tif")               # 1200 m x 1000 m
    frame = gpd.GeoDataFrame(
        {"zone_id": ["a", "b", "c"], "said": ["top-left", "top-left", "bottom-right"], "score_mean": [3.0, 2.0, 1.0]},
        geometry=[box(X0 + 700, Y0 - 400, X0 + 1000, Y0 - 200),        # top-right, said top-left
                  box(X0 + 750, Y0 - 400, X0 + 1000, Y0 - 200),        # inside a
                  box(X0 + 100, Y0 - 900, X0 + 300, Y0 - 700)],        # bottom-left, said bottom-right
        crs="EPSG:32611")
    zones = tmp_path / "proposed.gpkg"
    frame.to_file(zones, driver="GPKG")
    kept = tmp_path / "kept.gpkg"
    result = run("lodestar:controller_check", {"ZONES": str(zones), "REFERENCE": reference, "LOCATION_FIELD": "said",
                                               "ATTEMPT": 3, "ENFORCE": True, "OUTPUT": str(kept)})
    assert result["VALID"] is False
    errors = json.loads(result["ERRORS"])
    assert sorted({e["code"] for e in errors}) == ["location_mismatch", "overlap"]
    assert {tuple(e["zone_ids"]) for e in errors if e["code"] == "location_mismatch"} == {("a",), ("b",), ("c",)}
    assert result["FEEDBACK"].startswith("This is your final attempt")
    assert list(gpd.read_file(kept).zone_id) == ["a", "c"]
