"""The shipped graphical model resources/models/prospectivity_steps.model3 (membership -> overlay -> targets ->
prediction-area): listed by the provider, in step with its builder script, valid, and run from the file on the
sample case, its surface the same as the steps run one by one."""
from __future__ import annotations

import csv
from pathlib import Path
from xml.etree.ElementTree import canonicalize

import geopandas as gpd
import numpy as np
import rasterio

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "resources" / "sample" / "porphyry-demo"
MODEL = ROOT / "resources" / "models" / "prospectivity_steps.model3"
INPUTS = {"ALTERATION": str(SAMPLE / "aloh.tif"), "MIDPOINT": 1.0, "GEOLOGY": str(SAMPLE / "geology.tif"),
          "UNITS": "porphyry", "GAMMA": 0.8, "AREA_SHARE": 0.05, "DEPOSITS": str(SAMPLE / "deposits.geojson")}


def test_the_provider_lists_the_model_and_the_file_matches_its_builder(lodestar_registry, tmp_path):
    import make_prospectivity_steps_model

    model = lodestar_registry.algorithmById("lodestar:prospectivity_steps")
    assert model is not None
    assert {o.name() for o in model.outputDefinitions()} == {
        "overlay:favourability", "targets:targets", "validation:curves_table", "validation:curves_plot"}
    assert sorted(step.algorithmId() for step in model.childAlgorithms().values()) == [
        "lodestar:delineate_targets", "lodestar:fuzzy_membership", "lodestar:fuzzy_membership",
        "lodestar:fuzzy_overlay", "lodestar:prediction_area"]
    rebuilt = tmp_path / "rebuilt.model3"
    assert make_prospectivity_steps_model.build_model().toFile(str(rebuilt))
    assert canonicalize(from_file=str(rebuilt)) == canonicalize(from_file=str(MODEL))


def test_the_model_validates_with_no_issue(lodestar_registry):
    from qgis.core import QgsProcessingModelAlgorithm

    model = QgsProcessingModelAlgorithm()
    assert model.fromFile(str(MODEL))
    assert model.validate() == (True, [])
    for child_id in model.childAlgorithms():
        assert model.validateChildAlgorithm(child_id) == (True, []), child_id


def test_the_model_file_runs_on_the_sample_case_as_its_steps_do(run, tmp_path):
    from qgis.core import QgsProcessingModelAlgorithm

    model = QgsProcessingModelAlgorithm()
    assert model.fromFile(str(MODEL))
    result = run(model, {**INPUTS, "overlay:favourability": str(tmp_path / "fav.tif"),
                         "targets:targets": str(tmp_path / "targets.gpkg"),
                         "validation:curves_table": str(tmp_path / "curves.csv"),
                         "validation:curves_plot": str(tmp_path / "curves.png")})
    alteration = run("lodestar:fuzzy_membership", {"INPUT": INPUTS["ALTERATION"], "MEMBERSHIP": 0, "MIDPOINT": 1.0,
                                                   "SPREAD": 10.0, "OUTPUT": str(tmp_path / "a.tif")})["OUTPUT"]
    units = run("lodestar:fuzzy_membership", {"INPUT": INPUTS["GEOLOGY"], "MEMBERSHIP": 4, "UNITS": "porphyry",
                                              "OUTSIDE": 0.1, "OUTPUT": str(tmp_path / "u.tif")})["OUTPUT"]
    by_steps = run("lodestar:fuzzy_overlay", {"INPUT": [alteration, units], "METHOD": 1, "GAMMA": 0.8,
                                              "OUTPUT": str(tmp_path / "steps.tif")})["OUTPUT"]
    with rasterio.open(result["overlay:favourability"]) as ds, rasterio.open(by_steps) as steps:
        assert np.array_equal(ds.read(1), steps.read(1))
    targets = gpd.read_file(result["targets:targets"])
    assert len(targets) >= 1 and targets["known_deps"].sum() == 1
    with open(result["validation:curves_table"], newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert int(rows[-1]["deposits_found"]) == 1
    assert float(next(r for r in rows if int(r["deposits_found"]))["area_share"]) < 0.05  # found in the top 5 %
    assert Path(result["validation:curves_plot"]).stat().st_size > 10_000


def test_the_models_log_names_each_input_after_the_step_that_made_it(run, tmp_path):
    """A step of the model read its inputs as 'OUTPUT.tif' and 'OUTPUT.tif 2' (the earlier steps' temporary files):
    the overlay's log now names them after what the membership steps made."""
    from qgis.core import QgsProcessingFeedback

    class Captured(QgsProcessingFeedback):
        def __init__(self):
            super().__init__()
            self.lines = []

        def pushInfo(self, info):  # noqa: N802 (QGIS API name)
            self.lines.append(info)

    feedback = Captured()
    run("lodestar:prospectivity_steps", {**INPUTS, "overlay:favourability": str(tmp_path / "fav.tif"),
                                         "targets:targets": str(tmp_path / "targets.gpkg"),
                                         "validation:curves_table": str(tmp_path / "curves.csv"),
                                         "validation:curves_plot": str(tmp_path / "curves.png")}, feedback=feedback)
    overlay = next(line for line in feedback.lines if line.startswith("fuzzy gamma (gamma 0.8) of "))
    assert overlay == ("fuzzy gamma (gamma 0.8) of membership of aloh (weight 1), membership of geology (weight 1)."), \
        overlay
