"""A case whose geology is a scanned map: read through its legend, it is used as any geological map (favourable units
by name, the favourability surface), and the analysis equals that of the same case given the true unit map."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import rasterio
from lodestar_testdata import write_geotiff
from scanned_maps import CRS, make_scanned_map

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.raster_io import LayerSpec
from lodestar.plugin.request.case import Case, read_case, write_case
from lodestar.plugin.tools.map_legend import LegendOutputs, read_map_legend, read_sidecar

pytestmark = pytest.mark.skipif(shutil.which("tesseract") is None,
                                reason="Tesseract OCR is not installed (Debian: apt-get install tesseract-ocr)")
QUESTION = "Where are orogenic gold deposits likely? Answer: A. Yes B. No."


def _case(folder, geology, legend, scan) -> Case:
    """An orogenic gold case: the geological map and an alteration index peaking over the map's first unit."""
    rows, cols = np.nonzero(scan.truth == 1)
    r, c = np.mgrid[0:scan.truth.shape[0], 0:scan.truth.shape[1]]
    index = np.exp(-((r - rows.mean()) ** 2 + (c - cols.mean()) ** 2) / (2 * 50.0 ** 2)).astype("float32")
    write_geotiff(folder / "sericite.tif", index, scan.transform, CRS, -9999.0)
    case = Case(folder.name, QUESTION, [LayerSpec(geology, "geological_map", "geology", legend=legend),
                                        LayerSpec(folder / "sericite.tif", "hydrothermal_alteration", "sericite")])
    write_case(case, folder)
    return read_case(folder)


def test_a_scanned_map_case_analyses_as_its_true_unit_map(tmp_path):
    scan = make_scanned_map(5, units=8)
    assert {"Metabasalt", "Dolerite dykes"} <= set(scan.names)  # host rocks of orogenic gold, among others
    scanned = tmp_path / "scanned"
    scanned.mkdir()
    image = scan.write(scanned / "geology_scan.tif")
    outputs = LegendOutputs.beside(scanned / "geology.tif")
    read_map_legend(image, outputs)
    truth = tmp_path / "truth"
    truth.mkdir()
    write_geotiff(truth / "geology.tif", scan.truth.astype("uint8"), scan.transform, CRS, 0)
    (truth / "geology_legend.csv").write_text(
        "value,name\n" + "".join(f"{i + 1},{name}\n" for i, name in enumerate(scan.names)), encoding="utf-8")

    results = {}
    for folder, legend in ((scanned, outputs.legend), (truth, truth / "geology_legend.csv")):
        case = _case(folder, folder / "geology.tif", legend, scan)
        results[folder.name] = run_analysis(AnalysisRequest(case.layers, case.question, folder / "run",
                                                            dict(case.choices), case_id=case.id))
    read, true = results["scanned"], results["truth"]
    record = json.loads(read.outputs["record"].read_text(encoding="utf-8"))  # how the legend was read, kept
    entry = next(e for e in record["inputs"] if e["name"] == "geology")
    names = [u.name for u in read_sidecar(outputs.sidecar).units]
    assert [u["name"] for u in entry["legend_reading"]["units"]] == names
    assert entry["legend_reading"]["ocr"] and outputs.sidecar.name in entry["sidecars"]
    assert "legend_reading" not in next(e for e in json.loads(true.outputs["record"].read_text(encoding="utf-8"))
                                        ["inputs"] if e["name"] == "geology")
    geology = {name: next(row for row in result.weights if row["layer"] == "geology")
               for name, result in results.items()}
    assert "Metabasalt" in geology["scanned"]["why"] and "Dolerite dykes" in geology["scanned"]["why"]
    assert geology["scanned"]["why"] == geology["truth"]["why"]  # the same favourable units, named alike
    assert read.answer == true.answer
    with rasterio.open(read.outputs["favourability"]) as a, rasterio.open(true.outputs["favourability"]) as b:
        first, second = a.read(1, masked=True), b.read(1, masked=True)
    both = ~np.ma.getmaskarray(first) & ~np.ma.getmaskarray(second)
    assert both.mean() > 0.6
    assert (np.abs(first.data - second.data)[both] < 0.05).mean() > 0.95
