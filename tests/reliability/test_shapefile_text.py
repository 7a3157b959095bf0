"""Shapefile outputs of lodestar:analyze keep non-Latin-1 zone ids and names (UTF-8 with a .cpg), so they still
match the run record and the other layers (issue 13, item 8)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from lodestar.plugin.vector_io import read_vector

SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "sample" / "porphyry-demo"
NAMES = {"aloh.tif": "絹雲母 AlOH 指数", "silica.tif": "Кварц индекс", "propylitic.tif": "Ωμέγα chlorite"}


def test_non_latin1_zone_ids_survive_in_shapefile_output(run, tmp_path):
    from osgeo import gdal
    from qgis.core import QgsVectorLayer

    QgsVectorLayer(str(SAMPLE / "faults.geojson"), "faults", "ogr")  # QGIS's OGR provider, as in a session
    rasters = []
    for source, name in NAMES.items():
        target = tmp_path / "in" / f"{name}.tif"
        target.parent.mkdir(exist_ok=True)
        shutil.copy(SAMPLE / source, target)
        rasters.append(str(target))
    out = tmp_path / "out"
    result = run("lodestar:analyze", {
        "RASTERS": rasters, "ROLES": "hydrothermal_alteration,silicification,propylitic_alteration",
        "QUESTION": "Can porphyry copper deposits be detected? A. Yes B. No",
        "OUTPUT_ZONES": str(out / "zones.shp"), "OUTPUT_NODES": str(out / "nodes.shp"),
        "OUTPUT_EDGES": str(out / "edges.shp"), "OUTPUT_PROSPECTIVITY": str(out / "prospectivity.shp"),
        "OUTPUT_RECORD": str(out / "record.json"), "OUTPUT_REPORT": str(out / "report.html")})
    assert (out / "zones.cpg").read_text().strip().upper() in ("UTF-8", "UTF8")
    assert gdal.GetConfigOption("SHAPE_ENCODING") == ""  # as QGIS sets it once it has read a Shapefile
    zones = read_vector(result["OUTPUT_ZONES"])  # the plugin's one reader reads what it wrote
    shown = QgsVectorLayer(result["OUTPUT_ZONES"], "zones", "ogr")  # and QGIS shows the same text
    assert sorted(f["zone_id"] for f in shown.getFeatures()) == sorted(zones["zone_id"])
    record = json.loads((out / "record.json").read_text(encoding="utf-8"))
    recorded = {zone for node in record["chain"] for zone in node["observation"]["zone_ids"]}
    assert len(zones) >= 3 and "?" not in "".join(zones["zone_id"])
    assert set(zones["zone_id"]) <= recorded
    assert set(zones["layer"]) <= set(NAMES.values()) and len(set(zones["layer"])) >= 2
    nodes = read_vector(result["OUTPUT_NODES"])
    assert set(nodes["zone_id"]) == set(zones["zone_id"])  # the graph's nodes still name the zones
