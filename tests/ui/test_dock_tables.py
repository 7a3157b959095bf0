"""The dock's tables at its default width (issue 43): the validation table fits with its 20 % column in view (before,
it ran off the edge), capture counts are whole deposits with ties explained once, and long layer names are elided in
the middle (two ASTER layers no longer both read "AST...") with the whole name as their tooltip."""
from __future__ import annotations

from qgis.core import QgsProject, QgsRasterLayer
from qgis.PyQt.QtCore import Qt
from qgis.PyQt.QtWidgets import QApplication

from lodestar.plugin.labels import TIES_NOTE
from lodestar.ui.dock import DEFAULT_WIDTH

VALIDATION = {  # as a calibrated run gives it: four surfaces, expected counts where tied cells straddle a cut-off
    key: {"basis": f"{key} basis", "auc": auc, "deposits": 255,
          "capture": {"0.02": 74.5, "0.05": 135.25, "0.1": 206.0, "0.2": 241.49}, "curve": []}
    for key, auc in (("cv", 0.912), ("knowledge", 0.934), ("equal_weight", 0.937), ("fitted", 0.951))}


ASK_WIDTH = 760
"""A dock wide enough for every chosen role whole beside the layers' names (issue 61: 700-900 px)."""


def _show(dock, width: int = DEFAULT_WIDTH) -> None:
    dock.setFloating(True)
    dock.show()
    dock.resize(width, 900)
    for _ in range(3):
        QApplication.processEvents()


def _last_column_in_view(table) -> bool:
    header = table.horizontalHeader()
    last = table.columnCount() - 1
    return header.sectionViewportPosition(last) + header.sectionSize(last) <= table.viewport().width()


def _show_validation(dock):
    dock.ui.tabs.setCurrentWidget(dock.ui.resultsTab)
    dock.ui.resultsToolBox.setCurrentWidget(dock.ui.validationPage)
    dock.results.validation.show(VALIDATION)
    for _ in range(3):
        QApplication.processEvents()
    return dock.ui.validationTable


def test_the_validation_table_fits_with_its_last_column_in_view(dock):
    _show(dock)
    table = _show_validation(dock)
    assert table.columnCount() == 6 and table.horizontalHeaderItem(5).text() == "20 %"
    assert _last_column_in_view(table)
    assert table.horizontalScrollBar().maximum() == 0  # it fits: nothing to scroll to
    assert table.textElideMode() == Qt.ElideMiddle
    assert table.item(2, 0).text() == "Equal-weight ranks"
    assert table.item(2, 0).toolTip() == "Equal-weight ranks\nequal_weight basis"


def test_capture_counts_are_whole_deposits_and_ties_are_explained_once(dock):
    table = _show_validation(dock)
    assert [table.item(0, col).text() for col in range(2, 6)] == ["75", "135", "206", "241"]  # 74.5 rounds up
    note = dock.ui.validationNote.text()
    assert note.count(TIES_NOTE) == 1
    assert "(of 255 inside it)" in note


def test_a_narrower_dock_scrolls_to_the_last_column(dock):
    _show(dock, 260)
    table = _show_validation(dock)
    bar = table.horizontalScrollBar()
    if bar.maximum() > 0:  # too narrow to fit: the last column is reached by scrolling
        bar.setValue(bar.maximum())
        QApplication.processEvents()
    assert _last_column_in_view(table)


def test_long_layer_names_are_elided_in_the_middle_with_the_whole_name_as_tooltip(dock, sample, tmp_path):
    case, layers = sample
    source = next(layer for layer in layers.values() if isinstance(layer, QgsRasterLayer)).source()
    names = ["ASTER AlOH group composition index (band ratio b5+b7/b6), 2003 scene",
             "ASTER ferric iron index (band ratio b2/b1), 2003 scene"]
    added = [QgsRasterLayer(source, name) for name in names]
    QgsProject.instance().addMapLayers(added)
    _show(dock, ASK_WIDTH)
    tree = dock.ui.layerTree
    assert tree.textElideMode() == Qt.ElideMiddle
    for layer in added:
        item = dock.layers.row(layer.id())["item"]
        assert item.text(0) == layer.name()
        assert item.toolTip(0).split("\n") == [layer.name(), layer.publicSource()]
    metrics = tree.fontMetrics()
    width = tree.header().sectionSize(0) - 40  # less the check box and the margins
    shown = [metrics.elidedText(name, Qt.ElideMiddle, width) for name in names]
    assert shown[0] != names[0] and "…" in shown[0]  # too long for the column: elided...
    assert shown[0][:4] == shown[1][:4] == "ASTE" and shown[0] != shown[1]  # ...and still told apart
    assert shown[0].endswith("scene") and shown[1].endswith("scene")


def test_the_other_models_compared_follow_the_cross_validated_row_without_curves(dock):
    """With "best" the calibration compared several models out of fold: each is a row after the chosen one's, named
    as the comparison names it, with its AUC and capture; the curves picture stays the four surfaces'."""
    from lodestar.ui.validation_view import curves_png, shown_surfaces

    others = [{"name": "gradient boosting, out of fold", "basis": "out of fold (spatial blocks)", "auc": 0.943,
               "capture": {"0.02": 66.0, "0.05": 137.9, "0.1": 228.8, "0.2": 244.0}, "deposits": 255},
              {"name": "weights of evidence, out of fold", "basis": "out of fold (spatial blocks)", "auc": 0.891,
               "capture": {"0.02": 61.3, "0.05": 138.8, "0.1": 221.1, "0.2": 229.9}, "deposits": 255}]
    validation = dict(VALIDATION, models=others, method="logistic", refused=False)
    _show(dock)
    dock.ui.tabs.setCurrentWidget(dock.ui.resultsTab)
    dock.ui.resultsToolBox.setCurrentWidget(dock.ui.validationPage)
    dock.results.validation.show(validation)
    table = dock.ui.validationTable
    assert [table.item(row, 0).text() for row in range(table.rowCount())] == [
        "Cross-validated", "gradient boosting, out of fold", "weights of evidence, out of fold", "Knowledge-driven",
        "Equal-weight ranks", "Fitted on the deposits"]
    assert [table.item(1, col).text() for col in range(6)] == ["gradient boosting, out of fold", "0.943", "66",
                                                               "138", "229", "244"]
    assert table.item(2, 1).toolTip() == "out of fold (spatial blocks)" and _last_column_in_view(table)
    assert [key for key, _, _ in shown_surfaces(validation)].count("model") == 2
    assert curves_png(validation) == curves_png(VALIDATION)  # the same picture: no curve for the other models


def test_the_ask_tab_shows_every_layer_and_every_role_whole_at_700_to_900_px(dock, sample):
    """The Role column was cut ('Structure (fa', 'Propylitic alt') even at 760 px and the list showed five of the
    sample's six layers; now every chosen role reads whole and every layer (up to ten) is in view."""
    case, layers = sample
    for width in (700, 760, 900):
        _show(dock, width)
        tree = dock.ui.layerTree
        assert tree.topLevelItemCount() == len(case.layers) == 6
        assert tree.verticalScrollBar().maximum() == 0  # all six in view, none scrolled to
        header = tree.header()
        for row in dock.layers.rows():
            combo = row["combo"]
            needed = combo.fontMetrics().horizontalAdvance(combo.currentText())
            assert combo.width() >= needed + 16, (width, combo.currentText(), combo.width(), needed)
        assert header.sectionSize(0) >= 250  # the names keep room
        assert header.sectionViewportPosition(2) + header.sectionSize(2) <= tree.viewport().width()  # Low in view


WEIGHTS = [  # as a calibrated run's record gives them: the knowledge-driven rows with the fit's figures merged
    {"layer": "geology (DDS-41 lithotectonic units)", "role": "geological_map",
     "transformation": "favourable units: LPZE, UPZC, LPZ, TPC, TRPE, TMF, UPZ, LMZ, Q, QV, TPV, TPF, KG, C, UPZE",
     "membership": "as transformed (outside 0.1)", "weight": 1.0,
     "why": "Favourable units (named by you): LPZE, UPZC, LPZ score 1; the other 21 units score 0.1.",
     "method": "ensemble of the four (mean rank)", "importance": 0.0123, "lowers_skill": False,
     "basis": "fitted on known deposits (31)"},
    {"layer": "stream-sediment arsenic (classes)", "role": "geochemistry", "transformation": "percentile_rank",
     "membership": "as transformed", "weight": 1.0, "why": "Ordered classes (few integer values), ranked.",
     "method": "ensemble of the four (mean rank)", "importance": -0.002, "lowers_skill": True,
     "basis": "fitted on known deposits (31)"}]
WOFE = [{"layer": "geology (DDS-41 lithotectonic units)", "pattern": "categorical: 3 units weighed", "w_plus": 1.21,
         "s_w_plus": 0.2, "w_minus": -0.8, "s_w_minus": 0.3, "contrast": 2.01, "s_contrast": 0.36,
         "studentised_contrast": 5.58},
        {"layer": "stream-sediment arsenic (classes)", "pattern": ">= 4 ", "w_plus": 0.9, "s_w_plus": 0.25,
         "w_minus": -0.4, "s_w_minus": 0.22, "contrast": 1.3, "s_contrast": 0.33, "studentised_contrast": 3.9}]


def test_the_weights_keep_weight_and_why_in_view_and_show_the_weights_of_evidence(dock):
    """Weight and Why were behind horizontal scrolling; a calibrated run's page showed importances only. Now Weight
    and Why follow the layer and stay in view from 700 to 900 px, and the weights of evidence (an ensemble's member
    model's when the run kept the ensemble) sit beside the fitted model's importance of each layer."""
    dock.ui.tabs.setCurrentWidget(dock.ui.resultsTab)
    dock.ui.resultsToolBox.setCurrentWidget(dock.ui.weightsPage)
    evidence = dock.results.evidence
    evidence.show(WEIGHTS, [], WOFE)
    table = dock.ui.weightsTable
    headers = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    assert headers == ["Layer", "Weight", "Why", "Role", "Transformation", "Membership"]
    for width in (700, 760, 900):
        _show(dock, width)
        header = table.horizontalHeader()
        assert header.sectionViewportPosition(2) + header.sectionSize(2) <= table.viewport().width(), width
        assert header.sectionSize(2) >= 180 and table.item(1, 4).text() == "percentile rank"  # words, not ids
    fit = evidence.fit_table
    headers = [fit.horizontalHeaderItem(c).text() for c in range(fit.columnCount())]
    assert not fit.isHidden() and headers[:3] == ["Layer", "Pattern", "W+"]
    assert {"W-", "Contrast", "Studentised contrast", "Importance (AUC drop)", "Fitted by"} <= set(headers)
    rows = {fit.item(r, 0).text(): [fit.item(r, c).text() for c in range(fit.columnCount())]
            for r in range(fit.rowCount())}
    assert rows["geology (DDS-41 lithotectonic units)"][headers.index("Studentised contrast")] == "5.58"
    assert rows["stream-sediment arsenic (classes)"][headers.index("Importance (AUC drop)")] == "-0.002"
    assert rows["stream-sediment arsenic (classes)"][headers.index("Lowers skill")] == "yes"
    evidence.show([{k: v for k, v in WEIGHTS[0].items() if k in (
        "layer", "role", "transformation", "membership", "weight", "why")}], [])
    assert fit.isHidden()  # a run that was not calibrated has no calibration table
