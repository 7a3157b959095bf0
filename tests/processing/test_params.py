"""What the algorithms share (processing/params.py, layer_export.py, styling.py, backend_params.py): outputs that work
when left at their defaults (processing.run and headless qgis_process), refused memory outputs, layers written out,
back-end settings."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from rasterio.transform import from_origin

ROOT = Path(__file__).resolve().parents[2]
X0, Y0, PX = 500_000.0, 4_000_000.0, 10.0


def anomaly_raster(path) -> str:
    """100 x 120 pixels of 0 with one 20 x 30 block of 5 (top-right quarter)."""
    data = np.zeros((1, 100, 120), dtype="float32")
    data[0, 20:40, 70:100] = 5.0
    with rasterio.open(path, "w", driver="GTiff", width=120, height=100, count=1, dtype="float32",
                       crs="EPSG:32611", transform=from_origin(X0, Y0, PX, PX), nodata=-9999.0) as ds:
        ds.write(data)
    return str(path)


def test_every_destination_can_be_left_out_and_every_parameter_has_help(lodestar_registry):
    from qgis.core import QgsProcessingParameterDefinition

    from lodestar.processing.base import Group
    from lodestar.processing.provider import algorithm_classes

    for cls in algorithm_classes():
        alg = lodestar_registry.algorithmById(f"lodestar:{cls.ALGORITHM_ID}")
        assert alg.groupId() in {g.group_id for g in Group} and alg.shortHelpString()
        for param in alg.destinationParameterDefinitions():
            assert param.flags() & QgsProcessingParameterDefinition.FlagOptional, \
                f"{cls.ALGORITHM_ID}.{param.name()}: qgis_process would call it missing"
        for param in alg.parameterDefinitions():
            assert param.help(), f"{cls.ALGORITHM_ID}.{param.name()} has no help text"


def test_outputs_left_at_their_defaults_are_written(tmp_path, run):
    source = anomaly_raster(tmp_path / "aloh_index.tif")
    regions = run("lodestar:color_regions", {"INPUT": source, "METHOD": 3, "VALUE": 2.5, "SMOOTH_PX": 0})
    zones = gpd.read_file(regions["OUTPUT"])
    assert len(zones) == 1
    assert zones.geometry[0].bounds == pytest.approx((X0 + 700, Y0 - 400, X0 + 1000, Y0 - 200))
    graph = run("lodestar:spatial_graph", {"INPUT": [regions["OUTPUT"]]})
    assert len(gpd.read_file(graph["OUTPUT_NODES"])) == 1 and graph["NODES"] == 1
    view = run("lodestar:evidence_view", {"INPUT": source, "ZOOM": 1})
    with rasterio.open(view["OUTPUT"]) as ds:
        assert ds.bounds == pytest.approx((X0, Y0 - 1000, X0 + 1200, Y0))


def test_memory_and_database_outputs_are_refused(tmp_path, run):
    from qgis.core import QgsProcessingException

    source = anomaly_raster(tmp_path / "aloh_index.tif")
    for target in ("memory:", "ogr:dbname='/tmp/x.gpkg' table=\"zones\" (geom)"):
        with pytest.raises(QgsProcessingException, match="choose a file"):
            run("lodestar:color_regions", {"INPUT": source, "OUTPUT": target})


def test_fixer_without_a_chosen_output_writes_a_temporary_file(tmp_path, run):
    from shapely.geometry import box

    reference = anomaly_raster(tmp_path / "image.tif")
    frame = gpd.GeoDataFrame({"zone_id": ["a", "b"], "score_mean": [3.0, 2.0]},
                             geometry=[box(X0 + 700, Y0 - 400, X0 + 1000, Y0 - 200),
                                       box(X0 + 750, Y0 - 400, X0 + 1000, Y0 - 200)], crs="EPSG:32611")
    frame.to_file(tmp_path / "proposed.gpkg", driver="GPKG")
    result = run("lodestar:controller_check", {"ZONES": str(tmp_path / "proposed.gpkg"), "REFERENCE": reference,
                                               "ENFORCE": True})
    assert list(gpd.read_file(result["OUTPUT"]).zone_id) == ["a"]  # b lies inside a: the overlap drops it


def test_tools_run_headless_with_outputs_left_out(tmp_path):
    source = anomaly_raster(tmp_path / "aloh_index.tif")
    env = dict(os.environ, LODESTAR_QGIS_HOME=str(tmp_path / "qgis"))
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "qgis_process.sh"), "run", "lodestar:color_regions", "--",
         f"INPUT={source}", "METHOD=3", "VALUE=2.5", "SMOOTH_PX=0"],
        capture_output=True, text=True, env=env, timeout=240)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith("OUTPUT:"))
    assert line.split("\t", 1)[1].strip().endswith(".gpkg")


@pytest.mark.parametrize("algorithm", ["lodestar:analyze", "lodestar:analyze_cases"])
def test_backend_settings_are_read_alike(lodestar_registry, monkeypatch, algorithm):
    from qgis.core import QgsProcessingContext

    from lodestar.plugin.errors import LodestarError
    from lodestar.processing.backend_params import backend_settings

    alg = lodestar_registry.algorithmById(algorithm)
    context = QgsProcessingContext()
    monkeypatch.setenv("LODESTAR_API_KEY", " sk-from-env ")
    given = {"BACKEND": 1, "BASE_URL": " http://localhost:9/v1 ", "PLANNER_MODEL": "big", "VERIFIER_MODEL": "judge",
             "TEMPERATURE": 0.2, "API_KEY": "sk-plain", "MAX_TOKENS": 120000}
    settings = backend_settings(alg, given, context)
    assert (settings.backend, settings.base_url, settings.temperature) == ("openai", "http://localhost:9/v1", 0.2)
    assert settings.max_tokens == 120000
    assert settings.models == {"planner": "big", "executor": "big", "verifier": "judge"}
    # analyze takes the plain-text key before the environment; analyze_cases has no such parameter
    assert settings.api_key == ("sk-plain" if algorithm == "lodestar:analyze" else "sk-from-env")
    offline = backend_settings(alg, {"BACKEND": 0, "TEMPERATURE": 0.3}, context)
    assert (offline.backend, offline.temperature, offline.max_tokens) == ("offline", 0.3, 400_000)
    with pytest.raises(LodestarError, match="planner model"):
        backend_settings(alg, {"BACKEND": 1, "BASE_URL": "http://localhost:9/v1"}, context)


def _two_layer_geopackage(path: Path) -> Path:
    """Layer 'first': one box on the left; layer 'second': two boxes on the right."""
    from shapely.geometry import box

    gpd.GeoDataFrame({"zone_id": ["f1"], "role": ["silicification"]},
                     geometry=[box(X0, Y0 - 300, X0 + 200, Y0)], crs="EPSG:32611").to_file(path, layer="first")
    gpd.GeoDataFrame({"zone_id": ["s1", "s2"], "role": ["structure", "structure"]},
                     geometry=[box(X0 + 800, Y0 - 300, X0 + 1000, Y0), box(X0 + 800, Y0 - 900, X0 + 1000, Y0 - 600)],
                     crs="EPSG:32611").to_file(path, layer="second")
    return path


def test_layer_path_writes_out_what_qgis_shows(tmp_path, qgis_app):
    from qgis.core import QgsRasterLayer, QgsVectorLayer

    from lodestar.processing.layer_export import layer_path

    gpkg = _two_layer_geopackage(tmp_path / "zones.gpkg")
    second = QgsVectorLayer(f"{gpkg}|layername=second", "second zones", "ogr")
    written = Path(layer_path(second, tmp_path / "inputs"))
    assert written == tmp_path / "inputs" / "second_zones.gpkg"
    assert sorted(gpd.read_file(written).zone_id) == ["s1", "s2"]
    filtered = QgsVectorLayer(f"{gpkg}|layername=second", "s2 only", "ogr")
    filtered.setSubsetString("\"zone_id\" = 's2'")
    frame = gpd.read_file(layer_path(filtered))
    assert list(frame.zone_id) == ["s2"] and frame.crs.to_epsg() == 32611
    assert frame.geometry[0].bounds == pytest.approx((X0 + 800, Y0 - 900, X0 + 1000, Y0 - 600))
    gpd.read_file(gpkg, layer="first").to_file(tmp_path / "first.shp")
    whole = QgsVectorLayer(str(tmp_path / "first.shp"), "first", "ogr")
    assert layer_path(whole) == str(tmp_path / "first.shp")  # a whole file is used as it is
    raster = QgsRasterLayer(anomaly_raster(tmp_path / "index.tif"), "index")
    assert layer_path(raster) == str(tmp_path / "index.tif")


def test_one_layer_of_a_geopackage_feeds_the_graph(tmp_path, run):
    gpkg = _two_layer_geopackage(tmp_path / "zones.gpkg")
    result = run("lodestar:spatial_graph", {"INPUT": [f"{gpkg}|layername=second", f"{gpkg}|layername=first"]})
    assert sorted(gpd.read_file(result["OUTPUT_NODES"]).zone_id) == ["f1", "s1", "s2"]


def test_vector_maps_need_a_reference_raster(tmp_path, run):
    from qgis.core import QgsProcessingException

    gpkg = _two_layer_geopackage(tmp_path / "units.gpkg")
    for algorithm in ("lodestar:unit_regions", "lodestar:feature_regions"):
        with pytest.raises(QgsProcessingException, match=r"vector layer: choose a reference raster \(REFERENCE\)"):
            run(algorithm, {"INPUT": f"{gpkg}|layername=first"})


def test_outputs_loaded_by_processing_get_the_lodestar_style(tmp_path, lodestar_registry):
    from qgis.core import (
        QgsProcessingContext,
        QgsProcessingFeedback,
        QgsProcessingOutputLayerDefinition,
        QgsProject,
        QgsVectorLayer,
    )

    source = anomaly_raster(tmp_path / "aloh_index.tif")
    context, feedback = QgsProcessingContext(), QgsProcessingFeedback()
    context.setProject(QgsProject.instance())
    out = str(tmp_path / "zones.gpkg")
    alg = lodestar_registry.createAlgorithmById("lodestar:color_regions")
    results, ok = alg.run({"INPUT": source, "METHOD": 3, "VALUE": 2.5, "SMOOTH_PX": 0,
                           "OUTPUT": QgsProcessingOutputLayerDefinition(out, QgsProject.instance())}, context, feedback)
    assert ok and results["OUTPUT"] == out and context.willLoadLayerOnCompletion(out)
    layer = QgsVectorLayer(out, "zones", "ogr")  # as Processing loads it (never added to the project here)
    context.layerToLoadOnCompletionDetails(out).postProcessor().postProcessLayer(layer, context, feedback)
    assert layer.renderer().type() == "categorizedSymbol" and layer.renderer().classAttribute() == "role"
