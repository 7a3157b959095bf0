"""`make demo`'s script: one headless qgis_process run on the bundled sample that leaves every output in one
folder, each read back."""
from __future__ import annotations

import csv
import json
import os
import subprocess
from pathlib import Path

from osgeo import gdal

from lodestar.plugin.vector_io import read_vector

ROOT = Path(__file__).resolve().parents[2]


def test_demo_leaves_the_answer_map_surface_and_weights_in_its_folder(tmp_path):
    out = tmp_path / "demo"
    done = subprocess.run(["scripts/demo.sh"], cwd=ROOT, env={**os.environ, "DEMO_OUT": str(out)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"favourability surface:  {out}/favourability.tif" in done.stdout

    record = json.loads((out / "record.json").read_text())
    assert record["result"]["answer"] == "A" and record["result"]["valid"]
    targets = read_vector(out / "prospectivity.shp")
    assert len(targets) > 0 and targets.crs is not None

    surface = gdal.Open(str(out / "favourability.tif"))
    values = surface.GetRasterBand(1).ReadAsArray()
    nodata = surface.GetRasterBand(1).GetNoDataValue()
    valid = values[values != nodata] if nodata is not None else values.ravel()
    assert valid.size > 0 and 0.0 <= valid.min() < valid.max() <= 1.0
    assert surface.GetProjection()

    rows = list(csv.DictReader((out / "weights.csv").open()))
    case = json.loads((ROOT / "resources/sample/porphyry-demo/case.json").read_text())
    assert sorted(row["layer"] for row in rows) == sorted(layer["name"] for layer in case["layers"])
    assert all(0 < float(row["weight"]) <= 2 for row in rows)
