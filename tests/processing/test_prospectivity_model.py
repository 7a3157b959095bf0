"""The shipped graphical model resources/models/prospectivity_chain.model3: listed by the provider, in step
with its builder script, and run through real Processing on a synthetic porphyry case."""
from __future__ import annotations

import csv
from xml.etree.ElementTree import canonicalize

import geopandas as gpd
import synthetic_cases

from lodestar.plugin.case import read_case
from lodestar.plugin.evaluation import evaluate_localization
from lodestar.plugin.vector_io import read_vector


def test_the_provider_lists_the_model_and_the_file_matches_its_builder(lodestar_registry, tmp_path):
    import make_prospectivity_model

    from lodestar.processing.provider import model_files

    assert [p.name for p in model_files()] == ["prospectivity_chain.model3"]
    model = lodestar_registry.algorithmById("lodestar:prospectivity_chain")
    assert model is not None
    # the registered model knows its outputs (qgis_process help lists them, models nesting it see them)
    assert {p.name() for p in model.destinationParameterDefinitions()} == {
        "localize:prospectivity", "evaluate:success_table", "evaluate:success_plot"}
    assert {o.name() for o in model.outputDefinitions()} == {
        "localize:prospectivity", "evaluate:success_table", "evaluate:success_plot"}
    assert {p.name() for p in model.parameterDefinitions() if not p.isDestination()} == {
        "HYDROTHERMAL", "SILICIFICATION", "PROPYLITIC", "DEPOSITS", "PERCENTILE"}
    steps = model.childAlgorithms()
    assert sorted(step.algorithmId() for step in steps.values()) == [
        "lodestar:color_regions", "lodestar:color_regions", "lodestar:color_regions", "lodestar:evaluate",
        "lodestar:localize", "lodestar:spatial_graph"]
    for step in steps.values():
        assert lodestar_registry.algorithmById(step.algorithmId()) is not None, step.algorithmId()
    rebuilt = make_prospectivity_model.build_model()
    path = tmp_path / "rebuilt.model3"
    assert rebuilt.toFile(str(path))
    # Qt writes XML attributes in a per-process order: compare the canonical form.
    assert canonicalize(from_file=str(path)) == canonicalize(from_file=str(make_prospectivity_model.MODEL_FILE))


def test_the_model_runs_on_a_synthetic_porphyry_case(lodestar_registry, tmp_path):
    import processing

    case = read_case(synthetic_cases.make_case(tmp_path / "case", 1, "porphyry", 150, mixed_crs=False,
                                               layers=["aloh", "silica", "propylitic"], colour=set()))
    path = {spec.role: str(spec.path) for spec in case.layers}
    out = tmp_path / "out"
    out.mkdir()
    result = processing.run("lodestar:prospectivity_chain", {
        "HYDROTHERMAL": path["hydrothermal_alteration"], "SILICIFICATION": path["silicification"],
        "PROPYLITIC": path["propylitic_alteration"], "DEPOSITS": str(case.deposits), "PERCENTILE": 90.0,
        "localize:prospectivity": str(out / "prospectivity.gpkg"),
        "evaluate:success_table": str(out / "success.csv"), "evaluate:success_plot": str(out / "success.png"),
    })
    polygons = read_vector(result["localize:prospectivity"])
    assert len(polygons) >= 1 and list(polygons["rank"]) == sorted(polygons["rank"])
    assert (out / "success.png").stat().st_size > 1000
    with open(result["evaluate:success_table"], newline="") as fh:
        curve = list(csv.DictReader(fh))
    deposits = gpd.read_file(case.deposits)
    metrics = evaluate_localization(polygons, deposits, analysis_raster=path["hydrothermal_alteration"])
    assert int(curve[-1]["found"]) == metrics["found"] == len(deposits)  # the porphyry core is captured
    assert 0.5 < metrics["area_reduction"] < 1.0


def test_a_model_file_that_does_not_load_is_skipped_and_said(lodestar_registry, tmp_path, monkeypatch):
    from qgis.core import QgsApplication

    from lodestar.processing import provider

    (tmp_path / "broken.model3").write_text("<not a model", encoding="utf-8")
    monkeypatch.setattr(provider, "MODELS_DIR", tmp_path)
    logged = []
    QgsApplication.messageLog().messageReceived.connect(lambda message, tag, level: logged.append((tag, message)))
    assert provider.model_algorithms() == []
    QgsApplication.processEvents()
    assert any(tag == "Lodestar" and "broken.model3 could not be read" in message for tag, message in logged)
