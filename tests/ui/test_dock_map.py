"""The dock's prospectivity map: the Ask tab's options (target area share, known deposits, calibration, favourable
units) reach the request; after a run the Results tab shows the weights table, the unused layers and the
validation (capture table, success-rate curves), and the styled surface sits in the run's group below the targets."""
from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import pytest
from qgis.core import QgsFeature, QgsGeometry, QgsPointXY, QgsProject, QgsRasterLayer, QgsVectorLayer

from lodestar.plugin.analysis import AnalysisResult
from lodestar.plugin.labels import deposit_count, humanize
from lodestar.plugin.reason.contract import INSUFFICIENT
from lodestar.tests.ui.dock_steps import bar_texts, open_dock, run_to_end, set_case_roles
from lodestar.ui.evidence_view import cell_text, shown, unused_text

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "resources" / "sample" / "porphyry-demo"
GREAT_BASIN = ROOT / "tests" / "data" / "great-basin-gold"
# fixtures runs_dir, sample and dock: tests/ui/conftest.py


def _run_for_result(panel):
    run_to_end(panel)
    assert panel.result is not None, bar_texts(panel)
    return panel.result


def _table(widget) -> list[list[str]]:
    return [[widget.item(r, c).text() for c in range(widget.columnCount())] for r in range(widget.rowCount())]


def _headers(widget) -> list[str]:
    return [widget.horizontalHeaderItem(c).text() for c in range(widget.columnCount())]


def _points(name: str, crs: str, points) -> QgsVectorLayer:
    layer = QgsVectorLayer(f"Point?crs={crs}", name, "memory")
    features = []
    for x, y in points:
        feature = QgsFeature()
        feature.setGeometry(QgsGeometry.fromPointXY(QgsPointXY(x, y)))
        features.append(feature)
    layer.dataProvider().addFeatures(features)
    return layer


def test_map_options_reach_the_request(dock, sample):
    case, layers = sample
    set_case_roles(dock, case, layers)
    deposits = QgsVectorLayer(str(SAMPLE / "deposits.geojson"), "known deposits", "ogr")
    QgsProject.instance().addMapLayer(deposits)
    combo = dock.ui.depositsCombo
    assert [combo.layer(i) for i in range(combo.count())] == [None, deposits]  # points only; faults are lines
    assert "known deposits" not in [row["layer"].name() for row in dock.layers.rows()]  # not an evidence layer
    request = dock.build_request()
    assert (request.deposits, request.calibrate, request.area_share, request.favourable_units) == (None, "", 0.10, {})

    dock.map_options.set_calibration("logistic")
    assert dock.ui.calibrationCombo.isEnabled() and not dock.ui.runButton.isEnabled()
    assert bar_texts(dock) == ["Pick the known deposits (a point layer) to calibrate with, or untick the calibration."]
    dock.map_options.set_deposits(deposits)
    dock.ui.areaShareSpin.setValue(5)
    dock.ui.unitsEdit.setText("granite, porphyry")  # no granite on the map: said before the run, with its units
    assert not dock.ui.runButton.isEnabled()
    assert any("no unit of geological map matches 'granite'" in text for text in bar_texts(dock))
    dock.ui.unitsEdit.setText("limestone, porphyry")  # one categorical map: its name may be left out
    assert dock.ui.runButton.isEnabled() and bar_texts(dock) == []
    request = dock.build_request()
    assert request.deposits == SAMPLE / "deposits.geojson" and request.calibrate == "logistic"
    assert request.area_share == 0.05 and request.favourable_units == {"geological map": ["limestone", "porphyry"]}
    assert request.cross_validation == {"folds": 5, "seed": 0}  # the blocks left at their default (10 km or less)
    blocks = dock.map_options.cross_validation
    assert blocks.block.isEnabled() and blocks.block.text() == "auto"
    blocks.block.setValue(2.5)
    blocks.folds.setValue(3)
    blocks.seed.setValue(7)
    assert dock.build_request().cross_validation == {"block_size_m": 2500.0, "folds": 3, "seed": 7}

    dock.ui.unitsEdit.setText("lithology: granite")
    assert not dock.ui.runButton.isEnabled()
    assert bar_texts(dock) == ["Favourable units: 'lithology' is not among the input layers; name one of the "
                                "categorical maps: geological map."]
    dock.ui.unitsEdit.clear()
    dock.map_options.set_calibration("")
    assert not dock.ui.calibrationCombo.isEnabled() and not blocks.block.isEnabled() and not blocks.seed.isEnabled()
    centre = layers["geological map"].extent().center()
    sketched = _points("sketched deposits", layers["geological map"].crs().authid(), [(centre.x(), centre.y())])
    QgsProject.instance().addMapLayer(sketched)
    dock.map_options.set_deposits(sketched)
    request = dock.build_request()
    assert request.deposits.parent == request.output_dir / "inputs" and len(gpd.read_file(request.deposits)) == 1
    assert request.calibrate == ""  # deposits without calibration: the knowledge-driven surface is validated


def test_run_with_deposits_shows_weights_validation_and_the_surface(dock, sample):
    case, layers = sample
    set_case_roles(dock, case, layers)
    dock.ui.questionEdit.setPlainText(case.question)
    deposits = QgsVectorLayer(str(SAMPLE / "deposits.geojson"), "known deposits", "ogr")
    QgsProject.instance().addMapLayer(deposits)
    dock.map_options.set_deposits(deposits)
    result = _run_for_result(dock)

    # weights table: one row per evidence layer, the knowledge columns
    table = dock.ui.weightsTable
    assert _headers(table) == ["Layer", "Weight", "Why", "Role", "Transformation", "Membership"]
    keys = ["layer", "weight", "why", "role", "transformation", "membership"]
    assert _table(table) == [[shown(k, row[k]) for k in keys] for row in result.weights] and result.weights
    assert table.item(0, 2).toolTip() == humanize(result.weights[0]["why"])
    assert dock.results.evidence.fit_table.isHidden()  # no calibration, no calibration table
    assert dock.results.deposit_check.combo.currentLayer() is deposits  # ready to check against them
    assert all("_" not in row[3] for row in _table(table))  # roles in words
    for row in result.unused:
        assert row["layer"] in dock.ui.unusedLabel.text()

    # validation: the knowledge-driven surface against the picked deposit (no calibration)
    knowledge = result.validation["knowledge"]
    capture = knowledge["capture"]
    plain = result.validation["equal_weight"]  # the baseline every surface is shown beside
    assert _table(dock.ui.validationTable)[1] == ["Equal-weight ranks", f"{plain['auc']:.3f}",
                                                  *(deposit_count(plain['capture'][s]) for s in ("0.02", "0.05",
                                                                                                 "0.1", "0.2"))]
    assert _table(dock.ui.validationTable)[:1] == [["Knowledge-driven", f"{knowledge['auc']:.3f}",
                                                *(deposit_count(capture[s]) for s in ("0.02", "0.05", "0.1", "0.2"))]]
    assert "no deposit data used" in dock.ui.validationNote.text()
    assert not dock.ui.curveLabel.pixmap().isNull() and dock.ui.curveLabel.pixmap().width() > 200

    # the surface: styled, with a legend, in the run's group below the targets
    surface = dock.run_layers["favourability"]
    assert isinstance(surface, QgsRasterLayer) and surface.source() == str(result.outputs["favourability"])
    assert surface.renderer().type() == "singlebandpseudocolor"
    assert [label for label, _ in surface.renderer().legendSymbologyItems()] == [
        "0.0 - 0.2 very low", "0.2 - 0.4 low", "0.4 - 0.6 moderate", "0.6 - 0.8 high", "0.8 - 1.0 very high"]
    order = [node.layer().name() for node in dock.run_group.findLayers()]
    assert order.index("Favourability") > order.index("Prospectivity") and order[-1] == "Favourability"
    assert "favourability_cv" not in dock.run_layers


@pytest.fixture
def great_basin(qgis_new_project):
    """The Great Basin layers in the project, named as a user would load them (the case's names unknown)."""
    files = {"geologia.tif": "geological_map", "as_rcl.tif": "geochemistry", "sb_rcl.tif": "geochemistry",
             "falha_rcl.tif": "structure"}
    layers = {name: QgsRasterLayer(str(GREAT_BASIN / name), Path(name).stem) for name in files}
    deposits = QgsVectorLayer(str(GREAT_BASIN / "TrainGP.gpkg"), "TrainGP", "ogr")
    QgsProject.instance().addMapLayers([*layers.values(), deposits])
    yield {layer.id(): files[name] for name, layer in layers.items()}, deposits
    QgsProject.instance().removeAllMapLayers()
    QgsProject.instance().layerTreeRoot().removeAllChildren()


@pytest.fixture
def basin_dock(qgis_iface, great_basin, runs_dir):
    yield from open_dock(qgis_iface)


def test_calibrated_run_shows_cross_validated_figures_first(basin_dock, great_basin):
    roles, deposits = great_basin
    for layer_id, role in roles.items():
        basin_dock.layers.set_role(layer_id, role)
    # distance classes to faults ('falha' is Portuguese for fault): guessed favourable-low from their graded values
    assert basin_dock.layers.favourable(next(i for i, r in roles.items() if r == "structure")) == "low"
    basin_dock.ui.questionEdit.setPlainText("Where are Carlin-type gold deposits likely?")
    basin_dock.ui.unitsEdit.setText("LPZE, UPZC, LPZ")  # the legend holds bare codes
    basin_dock.map_options.set_deposits(deposits)
    basin_dock.map_options.set_calibration("wofe")
    result = _run_for_result(basin_dock)

    rows = _table(basin_dock.ui.validationTable)
    fitted = ["Fitted on the deposits"] if "fitted" in result.validation else []  # absent when the fit is refused
    assert [row[0] for row in rows] == ["Cross-validated", "Knowledge-driven", "Equal-weight ranks"] + fitted
    assert result.validation["summary"] in basin_dock.ui.validationNote.text().replace("&#x27;", "'")
    # the choice and why, then the refusal when refused (before, a refusal took the choice's place)
    assert result.validation["summary"].startswith("weights of evidence, out-of-fold AUC ")
    assert ("was not used for the targets" in result.validation["summary"]) == result.validation["refused"]
    banner = basin_dock.ui.answerBanner.text()  # and the banner says which surface the targets came from
    assert ("targets from the knowledge-driven surface: the calibrated weights of evidence does not beat" in banner) \
        == result.validation["refused"]
    assert ("targets from the calibrated weights of evidence (Validation page)" in banner) \
        != result.validation["refused"]
    assert rows[0][1] == f"{result.validation['cv']['auc']:.3f}"
    assert basin_dock.ui.validationTable.item(0, 0).toolTip().startswith("Cross-validated\ncross-validated")
    assert "(of 31 inside it)" in basin_dock.ui.validationNote.text()
    assert _headers(basin_dock.ui.weightsTable) == ["Layer", "Weight", "Why", "Role", "Transformation", "Membership"]
    geology = next(row for row in _table(basin_dock.ui.weightsTable) if row[0] == "geologia")
    assert geology[4] == "favourable units: LPZE, UPZC, LPZ"
    fit = basin_dock.results.evidence.fit_table  # the calibration's own table: weights of evidence, importances
    headers = _headers(fit)
    assert headers[:2] == ["Layer", "Pattern"] and not fit.isHidden()
    assert {"W+", "W-", "Contrast", "Studentised contrast", "Importance (AUC drop)"} <= set(headers)
    assert "Coefficient" not in headers
    table = _table(fit)
    w_plus = {row["layer"]: row.get("w_plus") for row in result.weights}  # none for a layer weights of evidence
    derived = [row["layer"] for row in result.weights if row["transformation"] == "derived values"]
    assert w_plus["geologia"] is not None and "geologia: distance to a unit contact" in derived
    assert all(w_plus[name] is None for name in derived)  # out of weights of evidence
    assert {row[0]: row[headers.index("W+")] for row in table} == {k: cell_text(v) for k, v in w_plus.items()}
    cv = basin_dock.run_layers["favourability_cv"]
    node = QgsProject.instance().layerTreeRoot().findLayer(cv.id())
    assert cv.renderer().type() == "singlebandpseudocolor" and not node.isVisible()


def test_insufficient_evidence_has_its_own_banner(dock):
    empty = gpd.GeoDataFrame(geometry=[])
    note = ("Insufficient evidence: the critical evidence needs a layer with role iron_oxide or geophysics; add one to "
            "answer the question.")
    result = AnalysisResult(INSUFFICIENT, INSUFFICIENT, True, False, 1, empty, empty, empty, empty, notes=[note])
    dock.results.show_answer(result)
    banner = dock.ui.answerBanner
    assert banner.text() == ("<b>Insufficient evidence</b><br><small>the critical evidence needs a layer with role "
                             "iron oxide or geophysics; add one to answer the question. (1 round)</small>")  # words
    assert "#d1c4e9" in banner.styleSheet()
    colours = {}
    for answer, valid in (("A", True), ("A", False), ("Failed", False)):
        dock.results.show_answer(AnalysisResult(answer, "Yes", valid, not valid, 1, empty, empty, empty, empty))
        colours[(answer, valid)] = banner.styleSheet()
    assert len({*colours.values(), "background:#d1c4e9; padding:6px; border-radius:4px;"}) == 4


def test_layers_left_out_of_a_calibrated_runs_surface_say_the_fitted_models_use_them():
    """Great Basin calibrated: k_rcl was listed under "Layers not used" beside its fitted row with an importance."""
    unused = [{"layer": "k_rcl", "reason": "Potassium is not a pathfinder of Carlin-type gold."}]
    fitted = [{"layer": "k_rcl", "basis": "fitted on known deposits (30)", "importance": 0.01}]
    text = unused_text(unused, fitted)
    assert text.startswith("<b>Left out of the knowledge-driven surface</b>")
    assert "The models fitted on the deposits weigh it too (its row above)." in text
    assert unused_text(unused).startswith("<b>Layers not used</b>") and "fitted" not in unused_text(unused)
    assert unused_text([], fitted) == ""


def test_targets_line_shows_the_best_five():
    """By the figure the Targets page ranks them by, under its name (issue 61: the summary said 'favourability 0.71'
    where the Targets table said 0.901, its p90)."""
    from shapely.geometry import box

    from lodestar.ui.results_view import targets_line

    frame = gpd.GeoDataFrame({"rank": [3, 1, 2, 4, 5, 6, 7], "score": [5.0, 9.0, 7.0, 4.0, 3.0, 2.0, 1.0],
                              "fav_mean": [0.5, 0.71, 0.7, 0.4, 0.3, 0.2, 0.1],
                              "fav_p90": [0.55, 0.901, 0.75, 0.45, 0.35, 0.25, 0.15], "exp_deps": [None] * 7,
                              "verdict": ["", "strong", "weak", "", "", "", ""],
                              "area_km2": [2.0] * 7}, geometry=[box(0, 0, 1, 1)] * 7, crs="EPSG:32633")
    assert targets_line(frame) == (
        "<b>Targets:</b> #1 (favourability (p90) 0.901, 2 km2, strong), "
        "#2 (favourability (p90) 0.75, 2 km2, weak), #3 (favourability (p90) 0.55, 2 km2, not judged), "
        "#4 (favourability (p90) 0.45, 2 km2, not judged), #5 (favourability (p90) 0.35, 2 km2, not judged), ... "
        "(7 in all)<br>")
    assert targets_line(frame.head(2)) == ("<b>Targets:</b> #1 (favourability (p90) 0.901, 2 km2, strong), "
                                           "#3 (favourability (p90) 0.55, 2 km2, not judged)<br>")
    calibrated = frame.assign(exp_deps=[1.2, 6.25, 3.0, 1.0, 0.5, 0.2, 0.1])
    assert targets_line(calibrated.head(1)) == "<b>Targets:</b> #3 (expected deposits 1.2, 2 km2, not judged)<br>"
    assert targets_line(frame.iloc[:0]) == ""
