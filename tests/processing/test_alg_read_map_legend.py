"""lodestar:read_map_legend through the Processing registry and headless through qgis_process."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import rasterio
from scanned_maps import make_scanned_map

from lodestar.plugin.tools.categorical import read_legend

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(shutil.which("tesseract") is None,
                                reason="Tesseract OCR is not installed (Debian: apt-get install tesseract-ocr)")


@pytest.fixture(scope="module")
def scan():
    return make_scanned_map(8, units=7)


def test_read_map_legend_writes_units_legend_and_sidecar(tmp_path, run, scan):
    image = scan.write(tmp_path / "scan.tif")
    out = tmp_path / "geology.tif"
    result = run("lodestar:read_map_legend", {"INPUT": str(image), "OUTPUT": str(out)})
    assert Path(result["OUTPUT"]) == out
    assert Path(result["OUTPUT_LEGEND"]) == tmp_path / "geology_legend.csv"  # where the analysis looks for it
    assert Path(result["OUTPUT_SIDECAR"]) == tmp_path / "geology_legend.json"
    assert result["UNITS"] == 7 and result["NAMES"].splitlines() == [f"{i + 1}: {n}" for i, n in enumerate(scan.names)]
    assert read_legend(result["OUTPUT_LEGEND"]) == {i + 1: n for i, n in enumerate(scan.names)}
    with rasterio.open(out) as ds:
        codes = ds.read(1)
    inside = scan.truth > 0
    assert (codes[inside] == scan.truth[inside]).mean() > 0.97

    # the legend box given (map coordinates), a tolerance, and corrections from the legend CSV, edited
    c0, r0, c1, r1 = scan.legend_box
    x0, y0 = 400_000.0, 7_000_000.0
    box = f"{x0 + (c0 - 2) * 25},{x0 + (c1 + 2) * 25},{y0 - (r1 + 2) * 25},{y0 - (r0 - 2) * 25} [EPSG:32750]"
    corrections = tmp_path / "corrections.csv"
    corrections.write_text(f"value,name\n2,{scan.names[1]} (corrected)\n", encoding="utf-8")
    fixed = run("lodestar:read_map_legend", {
        "INPUT": str(image), "LEGEND_BOX": box, "CORRECTIONS": str(corrections), "TOLERANCE": 15.0,
        "OUTPUT": str(tmp_path / "fixed.tif"), "OUTPUT_LEGEND": str(tmp_path / "names.csv"),
        "OUTPUT_SIDECAR": str(tmp_path / "reading.json")})
    assert read_legend(tmp_path / "names.csv")[2] == f"{scan.names[1]} (corrected)"
    sidecar = json.loads((tmp_path / "reading.json").read_text(encoding="utf-8"))
    assert sidecar["box_found"] == "given" and sidecar["tolerance"] == 15.0
    assert sidecar["corrections"] == [{"value": 2, "field": "name", "read": scan.names[1],
                                       "corrected": f"{scan.names[1]} (corrected)"}]
    assert fixed["UNITS"] == 7


def test_read_map_legend_refuses_a_single_band_raster(tmp_path, run):
    from qgis.core import QgsProcessingException
    from rasterio.transform import from_origin

    single = tmp_path / "codes.tif"
    with rasterio.open(single, "w", driver="GTiff", width=20, height=20, count=1, dtype="uint8", crs="EPSG:32750",
                       transform=from_origin(0, 20, 1, 1)) as ds:
        ds.write(np.ones((1, 20, 20), dtype="uint8"))
    with pytest.raises(QgsProcessingException, match="3 or 4 8-bit bands"):
        run("lodestar:read_map_legend", {"INPUT": str(single), "OUTPUT": str(tmp_path / "units.tif")})
    assert not (tmp_path / "units.tif").exists()


def test_read_map_legend_through_qgis_process(tmp_path, scan):
    image = scan.write(tmp_path / "scan.tif")
    out = tmp_path / "cli_units.tif"
    env = dict(os.environ, LODESTAR_QGIS_HOME=str(tmp_path / "qgis"))
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "qgis_process.sh"), "run", "lodestar:read_map_legend", "--",
         f"INPUT={image}", f"OUTPUT={out}"], capture_output=True, text=True, env=env, timeout=240)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert read_legend(tmp_path / "cli_units_legend.csv") == {i + 1: n for i, n in enumerate(scan.names)}
    with rasterio.open(out) as ds:
        assert ds.count == 1 and ds.nodata == 0 and int(ds.read(1).max()) == 7
