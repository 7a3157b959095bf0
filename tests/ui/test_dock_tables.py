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
    _show(dock)
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
