"""The shipped graphical model resources/models/prospectivity_chain.model3: listed by the provider, in step
with its builder script, and run through real Processing on a synthetic porphyry case."""
from __future__ import annotations

import csv
from xml.etree.ElementTree import canonicalize

import geopandas as gpd
import synthetic_cases

from lodestar.plugin.evaluation import evaluate_localization
from lodestar.plugin.request.case import read_case
from lodestar.plugin.vector_io import read_vector


def test_the_provider_lists_the_model_and_the_file_matches_its_builder(lodestar_registry, tmp_path):
    import make_prospectivity_model

    from lodestar.processing.provider import model_files

    assert [p.name for p in model_files()] == ["prospectivity_chain.model3", "prospectivity_steps.model3"]
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


def test_the_shipped_model_validates_with_no_issue(lodestar_registry):
    """The file as shipped opens in the Model Designer with no red step: every mandatory parameter of every step
    has a source, and Run does not ask about an invalid model."""
    from qgis.core import QgsProcessingModelAlgorithm

    from lodestar.processing.provider import model_files

    model = QgsProcessingModelAlgorithm()
    assert model.fromFile(str(model_files()[0]))
    valid, issues = model.validate()
    assert issues == []
    assert valid is True
    for child_id in model.childAlgorithms():
        ok, step_issues = model.validateChildAlgorithm(child_id)
        assert ok and step_issues == [], (child_id, step_issues)
    # the thresholds that were missing are there, at the algorithms' defaults
    graph = model.childAlgorithm("graph")
    iou = graph.algorithm().parameterDefinition("IOU_THRESHOLD").defaultValue()
    assert [s.staticValue() for s in graph.parameterSources()["IOU_THRESHOLD"]] == [iou]
    evaluate = model.childAlgorithm("evaluate")
    threshold = evaluate.algorithm().parameterDefinition("THRESHOLD").defaultValue()
    assert [s.staticValue() for s in evaluate.parameterSources()["THRESHOLD"]] == [threshold]


def test_the_shipped_model_runs_unchanged_on_the_sample_case(lodestar_registry, tmp_path):
    """The model file itself (not the registered copy) run on resources/sample/porphyry-demo, as the Model
    Designer's Run would: the demo deposit is captured."""
    from qgis.core import QgsProcessingContext, QgsProcessingFeedback, QgsProcessingModelAlgorithm

    from lodestar.processing.provider import MODELS_DIR, model_files

    model = QgsProcessingModelAlgorithm()
    assert model.fromFile(str(model_files()[0]))
    assert model.validate()[0]
    case = read_case(MODELS_DIR.parent / "sample" / "porphyry-demo" / "case.json")
    path = {spec.role: str(spec.path) for spec in case.layers}
    context = QgsProcessingContext()
    results, ok = model.run({
        "HYDROTHERMAL": path["hydrothermal_alteration"], "SILICIFICATION": path["silicification"],
        "PROPYLITIC": path["propylitic_alteration"], "DEPOSITS": str(case.deposits), "PERCENTILE": 90.0,
        "localize:prospectivity": str(tmp_path / "prospectivity.gpkg"),
        "evaluate:success_table": str(tmp_path / "success.csv"),
        "evaluate:success_plot": str(tmp_path / "success.png"),
    }, context, QgsProcessingFeedback())
    assert ok
    polygons = read_vector(results["localize:prospectivity"])
    assert len(polygons) >= 1 and list(polygons["rank"]) == sorted(polygons["rank"])
    with open(results["evaluate:success_table"], newline="") as fh:
        curve = list(csv.DictReader(fh))
    deposits = gpd.read_file(case.deposits)
    assert int(curve[-1]["found"]) == len(deposits) >= 1


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
