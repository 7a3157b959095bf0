"""lodestar:analyze's prospectivity map on a real case (Great Basin gold): the favourability surface, the weights
table, the cross-validated surface with CALIBRATE, the target area share and favourable units, their messages and
their help (qgis_process included)."""
from __future__ import annotations

import csv
import json
import os
import subprocess
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import rasterio

ROOT = Path(__file__).resolve().parents[2]
GREAT_BASIN = ROOT / "tests" / "data" / "great-basin-gold"
SAMPLE = ROOT / "resources" / "sample" / "porphyry-demo"
GEOLOGY = "geology (DDS-41 lithotectonic units)"
EVIDENCE = [GEOLOGY, "stream-sediment arsenic (classes)", "stream-sediment antimony (classes)",
            "distance to faults (classes)"]
NEW_KEYS = ("DEPOSITS", "CALIBRATE", "AREA_SHARE", "FAVOURABLE_UNITS", "OUTPUT_FAVOURABILITY",
            "OUTPUT_FAVOURABILITY_CV", "OUTPUT_UNCERTAINTY", "OUTPUT_WEIGHTS")


def _outputs(folder: Path) -> dict:
    return {"OUTPUT_FAVOURABILITY": str(folder / "fav.tif"), "OUTPUT_FAVOURABILITY_CV": str(folder / "fav_cv.tif"),
            "OUTPUT_UNCERTAINTY": str(folder / "uncertainty.tif"), "OUTPUT_WEIGHTS": str(folder / "weights.csv"),
            "OUTPUT_PROSPECTIVITY": str(folder / "targets.gpkg"),
            "OUTPUT_RECORD": str(folder / "record.json")}


def _surface(path) -> tuple[np.ma.MaskedArray, dict]:
    with rasterio.open(path) as ds:
        return ds.read(1, masked=True), {"dtype": ds.dtypes[0], "nodata": ds.nodata, "crs": ds.crs,
                                         "shape": ds.shape, "transform": ds.transform}


def _weights(path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_calibrated_run_writes_surface_cv_surface_and_weights(run, tmp_path):
    """CALIBRATE=1 (weights of evidence) with the case's deposits (DEPOSITS left empty), on 4 folds of 20 km blocks
    dealt from seed 3."""
    result = run("lodestar:analyze", {"CASE": str(GREAT_BASIN / "case.json"), "CALIBRATE": 1, "BLOCK_SIZE_M": 20000,
                                      "FOLDS": 4, "SEED": 3, **_outputs(tmp_path)})
    record = json.loads(Path(result["OUTPUT_RECORD"]).read_text(encoding="utf-8"))
    assert record["parameters"]["favourability"]["cross_validation"] == {"block_size_m": 20000.0, "folds": 4,
                                                                         "seed": 3}
    assert record["favourability"]["calibration"]["folds"].startswith(
        "4-fold spatial block cross-validation, blocks of 20 km (seed 3): fold 1: ")
    # a replay fits again on the recorded blocks, folds and seed: the same folds and the same out-of-fold surface
    again = run("lodestar:analyze", {"REPLAY": result["OUTPUT_RECORD"], **_outputs(tmp_path / "replay")})
    replayed = json.loads(Path(again["OUTPUT_RECORD"]).read_text(encoding="utf-8"))
    assert replayed["favourability"]["calibration"]["folds"] == record["favourability"]["calibration"]["folds"]
    assert np.allclose(_surface(again["OUTPUT_FAVOURABILITY_CV"])[0].compressed(),
                       _surface(result["OUTPUT_FAVOURABILITY_CV"])[0].compressed())
    full, meta = _surface(result["OUTPUT_FAVOURABILITY"])
    with rasterio.open(GREAT_BASIN / "geologia.tif") as geology:
        geology_crs, geology_valid = geology.crs, int((~geology.read(1, masked=True).mask).sum())
    assert meta["dtype"] == "float32" and meta["nodata"] == -9999.0 and meta["crs"] == geology_crs
    assert 0.0 <= float(full.min()) < float(full.max()) - 0.3 and float(full.max()) <= 1.0
    assert full.count() >= 0.9 * geology_valid  # the analysed area, on the analysis grid
    cv, cv_meta = _surface(result["OUTPUT_FAVOURABILITY_CV"])
    assert cv_meta == meta and (cv.mask == full.mask).all()
    assert 0.0 <= float(cv.min()) and float(cv.max()) <= 1.0
    assert not np.allclose(cv.filled(0), full.filled(0))  # out-of-fold differs from the full fit

    refused = record["favourability"]["calibration"]["refused"]
    for key, said in (("OUTPUT_FAVOURABILITY", "knowledge-driven" if refused else
                       "calibrated: weights of evidence (full fit)"),
                      ("OUTPUT_FAVOURABILITY_CV", "calibrated: weights of evidence (out of fold)")):
        with rasterio.open(result[key]) as ds:  # which surface it is (before: "favourability (0-1)" for both)
            assert ds.descriptions == (f"favourability (0-1): {said}",)

    page = Path(result["OUTPUT_REPORT"]).read_text(encoding="utf-8")  # the files named as the user finds them
    assert "fav_cv.tif" in page and "fav.tif" in page
    assert "favourability_cv.tif" not in page and "favourability.tif" not in page

    spread, spread_meta = _surface(result["OUTPUT_UNCERTAINTY"])
    assert spread_meta == meta and (spread.mask == full.mask).all() and float(spread.min()) > 0
    with rasterio.open(result["OUTPUT_UNCERTAINTY"]) as ds:
        assert ds.descriptions[0].startswith("uncertainty: posterior probability standard deviation")

    rows = _weights(result["OUTPUT_WEIGHTS"])
    # the knowledge-driven layers, then the fault lines only the fitted model measures (distance in metres), then
    # the layers derived from them: the distance to the map's unit contacts and the fault density at 2 and 5 km
    derived = [f"{GEOLOGY}: distance to a unit contact", "mapped faults: fault density within 2 km",
               "mapped faults: fault density within 5 km"]
    assert [row["layer"] for row in rows] == EVIDENCE + ["mapped faults"] + derived
    by_layer = {row["layer"]: row for row in rows}
    assert by_layer[GEOLOGY]["transformation"] == "favourable units: LPZE, UPZC, LPZ"  # the case's units
    assert by_layer[GEOLOGY]["pattern"].startswith("categorical: 4 unit(s) weighed")
    assert by_layer["distance to faults (classes)"]["membership"] == "inverted (1 - x)"
    assert by_layer["mapped faults"]["pattern"].endswith(" m") and by_layer["mapped faults"]["transformation"] == \
        "measured values"
    by_layer_name = {row["layer"]: row for row in rows}
    # weights of evidence leaves them out: their weights would count their source's evidence twice
    assert by_layer_name[derived[0]]["pattern"].startswith(f"derived from {GEOLOGY}: left out")
    assert by_layer_name[derived[1]]["pattern"].startswith("derived from mapped faults: left out")
    assert by_layer_name[derived[1]]["transformation"] == "derived values" and by_layer_name[derived[1]]["role"] == \
        by_layer_name["mapped faults"]["role"] and "Derived from mapped faults" in by_layer_name[derived[1]]["why"]
    for row in rows[:-len(derived)]:
        assert row["role"] and row["why"] and (row["layer"] == "mapped faults" or float(row["weight"]) > 0)
        assert float(row["w_plus"]) > 0 > float(row["w_minus"])
        assert float(row["contrast"]) == pytest.approx(float(row["w_plus"]) - float(row["w_minus"]), abs=1e-6)
        assert float(row["studentised_contrast"]) > 2
    targets = gpd.read_file(result["OUTPUT_PROSPECTIVITY"])
    assert list(targets["rank"]) == list(range(1, len(targets) + 1))


def test_knowledge_run_takes_units_and_area_share_and_writes_no_cv(run, tmp_path):
    result = run("lodestar:analyze", {"CASE": str(GREAT_BASIN / "case.json"), "AREA_SHARE": 5,
                                      "FAVOURABLE_UNITS": "LPZE, UPZC", **_outputs(tmp_path)})
    assert "OUTPUT_FAVOURABILITY_CV" not in result and not (tmp_path / "fav_cv.tif").exists()
    rows = _weights(result["OUTPUT_WEIGHTS"])
    assert [row["layer"] for row in rows] == EVIDENCE and "w_plus" not in rows[0]
    assert rows[0]["transformation"] == "favourable units: LPZE, UPZC"  # replaces the case's LPZE, UPZC, LPZ
    surface, meta = _surface(result["OUTPUT_FAVOURABILITY"])
    analysed = surface.count() * abs(meta["transform"].a * meta["transform"].e)
    targets = gpd.read_file(result["OUTPUT_PROSPECTIVITY"])
    record = json.loads(Path(result["OUTPUT_RECORD"]).read_text(encoding="utf-8"))
    left = record["favourability"]["work_list"]["left"]["km2"]  # the top share past the work list stays in the surface
    assert 0.045 <= (targets["area_km2"].sum() + left) * 1e6 / analysed <= 0.06
    ordinary = targets[~targets["why"].str.startswith("holds ")]  # verified systems join whatever their favourability
    assert len(ordinary) and ordinary["fav_mean"].min() >= float(np.percentile(surface.compressed(), 90))


@pytest.mark.parametrize("params,message", [
    ({"CASE": "great", "FAVOURABLE_UNITS": "lithology: LPZE"},
     r"^FAVOURABLE_UNITS: 'lithology' is not among the input layers; name one of the categorical maps: "
     r"geology \(DDS-41 lithotectonic units\)\.$"),
    ({"CASE": "great", "FAVOURABLE_UNITS": "stream-sediment arsenic (classes): 5"},
     r"stream-sediment arsenic \(classes\) is not a categorical map"),
    ({"RASTERS": ["aloh.tif", "silica.tif"], "ROLES": "hydrothermal_alteration,silicification",
      "QUESTION": "Porphyry? A. Yes B. No", "CALIBRATE": 2},
     r"^Calibration with logistic regression needs known deposits: give a point layer of known deposits in "
     r"DEPOSITS \(or a CASE that lists its deposits\), or turn calibration off\.$"),
    ({"CASE": "great", "OUTPUT_FAVOURABILITY": "fav.png"}, r"Favourability surface: .*ending in \.tif, not fav\.png"),
])
def test_mapping_input_messages(run, tmp_path, params, message):
    from qgis.core import QgsProcessingException

    params = {**_outputs(tmp_path), **params}
    if params.get("CASE") == "great":
        params["CASE"] = str(GREAT_BASIN / "case.json")
    if "RASTERS" in params:
        params["RASTERS"] = [str(SAMPLE / name) for name in params["RASTERS"]]
    if params["OUTPUT_FAVOURABILITY"] == "fav.png":
        params["OUTPUT_FAVOURABILITY"] = str(tmp_path / "fav.png")
    with pytest.raises(QgsProcessingException, match=message):
        run("lodestar:analyze", params)
    assert not (tmp_path / "record.json").exists()


def test_new_parameters_are_documented(lodestar_registry, tmp_path):
    alg = lodestar_registry.algorithmById("lodestar:analyze")
    params = {p.name(): p for p in alg.parameterDefinitions()}
    assert set(NEW_KEYS) <= set(params)
    assert params["CALIBRATE"].options() == ["none (knowledge-driven)", "weights of evidence", "logistic regression",
                                             "random forest", "gradient boosting",
                                             "best out of fold (the four and their ensemble compared)"]
    share = params["AREA_SHARE"]
    assert (share.defaultValue(), share.minimum(), share.maximum()) == (10.0, 0.5, 50.0)
    assert "only with CALIBRATE" in params["OUTPUT_FAVOURABILITY_CV"].help()
    assert "favourability surface" in alg.shortHelpString()
    env = dict(os.environ, LODESTAR_QGIS_HOME=str(tmp_path / "qgis"))
    done = subprocess.run(["bash", str(ROOT / "scripts" / "qgis_process.sh"), "help", "lodestar:analyze"],
                          capture_output=True, text=True, env=env, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    for key in NEW_KEYS:
        assert f"{key}: {params[key].description()}\n\t{params[key].help()}" in done.stdout, key
    assert "- 1: weights of evidence" in done.stdout


def test_surfaces_get_their_style_and_unwritten_ones_are_not_loaded(qgis_processing, tmp_path):
    """What Processing loads is styled with favourability.qml; an output the run did not make is not loaded."""
    from qgis.core import QgsProcessingContext, QgsProcessingFeedback, QgsProject, QgsRasterLayer

    from lodestar.processing.mapping_params import OUTPUTS, write_mapping_outputs

    surface = tmp_path / "run" / "favourability.tif"
    surface.parent.mkdir()
    with rasterio.open(surface, "w", driver="GTiff", width=4, height=3, count=1, dtype="float32", nodata=-9999.0,
                       crs="EPSG:32633", transform=rasterio.transform.from_origin(0, 30, 10, 10)) as ds:
        ds.write(np.linspace(0, 1, 12, dtype="float32").reshape(1, 3, 4))
    (tmp_path / "run" / "weights.csv").write_text("layer,weight\nas,1\n", encoding="utf-8")
    context, feedback = QgsProcessingContext(), QgsProcessingFeedback()
    paths = {key: str(tmp_path / "out" / name) for key, (_, name) in OUTPUTS.items()}
    for key in ("OUTPUT_FAVOURABILITY", "OUTPUT_FAVOURABILITY_CV"):
        context.addLayerToLoadOnCompletion(paths[key], QgsProcessingContext.LayerDetails(key, QgsProject.instance(),
                                                                                         key))
    written = write_mapping_outputs(paths, {"favourability": surface, "weights": tmp_path / "run" / "weights.csv"},
                                    context, feedback)
    assert set(written) == {"OUTPUT_FAVOURABILITY", "OUTPUT_WEIGHTS"}
    assert list(context.layersToLoadOnCompletion()) == [paths["OUTPUT_FAVOURABILITY"]]
    assert Path(paths["OUTPUT_WEIGHTS"]).read_text(encoding="utf-8") == "layer,weight\nas,1\n"
    layer = QgsRasterLayer(paths["OUTPUT_FAVOURABILITY"], "favourability")
    processor = context.layerToLoadOnCompletionDetails(paths["OUTPUT_FAVOURABILITY"]).postProcessor()
    processor.postProcessLayer(layer, context, feedback)
    assert layer.renderer().type() == "singlebandpseudocolor"
    assert layer.renderer().legendSymbologyItems()[-1][0] == "0.8 - 1.0 very high"
