"""The dock speaks a geologist's words (issue 61): after an offline run of the sample, no label, button, list,
table cell, tree line or choice of the dock (its Ask tab, banner, reasoning, results pages, plan editor and the
Write... form) holds a role, transformation or zone id, a snake_case identifier, a "1 zones" plural or "a argillic"
(the banner said "needs a layer with role hydrothermal_alteration or argillic_alteration"; the plan editor offered
`distance_m`, `percentile_rank`; the form showed snake_case roles and evidence ids)."""
from __future__ import annotations

import re

from geologist_words import names_of, problems
from qgis.PyQt.QtWidgets import (
    QAbstractButton,
    QApplication,
    QComboBox,
    QLabel,
    QListWidget,
    QTableWidget,
    QTreeWidget,
    QTreeWidgetItemIterator,
)

from lodestar.tests.ui.dock_steps import run_to_end, set_case_roles


def widget_texts(root) -> list[str]:
    """Every text a widget and its children show (rich text as plain words)."""
    texts = []
    for widget in [root, *root.findChildren(object)]:
        if isinstance(widget, QLabel):
            texts.append(re.sub(r"<[^>]+>", " ", widget.text()))
        elif isinstance(widget, QAbstractButton):
            texts.append(widget.text())
        elif isinstance(widget, QComboBox):
            texts += [widget.itemText(i) for i in range(widget.count())]
        elif isinstance(widget, QListWidget):
            texts += [widget.item(i).text() for i in range(widget.count())]
        elif isinstance(widget, QTableWidget):
            texts += [widget.horizontalHeaderItem(c).text() for c in range(widget.columnCount())
                      if widget.horizontalHeaderItem(c)]
            texts += [widget.item(r, c).text() for r in range(widget.rowCount()) for c in range(widget.columnCount())
                      if widget.item(r, c)]
        elif isinstance(widget, QTreeWidget):
            texts += [widget.headerItem().text(c) for c in range(widget.columnCount())]
            items = QTreeWidgetItemIterator(widget)
            while items.value():
                texts += [items.value().text(c) for c in range(widget.columnCount())]
                items += 1
    return [text for text in texts if text and text.strip()]


def test_the_dock_after_a_run_of_the_sample_reads_in_words(dock, sample):
    case, layers = sample
    set_case_roles(dock, case, layers)
    dock.ui.questionEdit.setPlainText(case.question)
    run_to_end(dock)
    dock.plan_editor.table.setCurrentCell(0, 1)
    QApplication.processEvents()
    names = names_of(case.layers) + [dock.run_name, str(dock.run_folder)]
    found = [said for text in widget_texts(dock) for said in problems(text, names)]
    assert not found, found[:8]
    form = dock.steering.write_model()
    try:
        found = [said for text in widget_texts(form) for said in problems(text, names)
                 if "my_" not in said]  # the form's Id field is the file's id the user types
        assert not found, found[:8]
    finally:
        form.close()
