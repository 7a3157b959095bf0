"""Every dock message and label readable in full at the dock's default width: messages word-wrapped (not cut to one
line) with their full text kept, the reasoner's labels whole, step titles wrapped to the reasoning tree's width;
roles in words; choices the engine made shown (deposit model with runner-up and why, thresholds) and adjustable."""
from __future__ import annotations

import json
import re
from pathlib import Path

from qgis.core import QgsApplication
from qgis.PyQt.QtWidgets import QApplication

from lodestar.plugin.labels import tool_label
from lodestar.plugin.reason.contract import ZONE_TOOLS
from lodestar.plugin.request.run_choices import model_choice
from lodestar.tests.ui.dock_steps import RUN_TIMEOUT_S, bar_texts, run_to_end, set_case_roles
from lodestar.ui.dock import DEFAULT_WIDTH
from lodestar.ui.messages import ZERO_WIDTH_SPACE
from lodestar.ui.task import wait_for


def show_at_default_width(dock) -> None:
    dock.setFloating(True)
    dock.show()
    dock.resize(DEFAULT_WIDTH, 900)
    for _ in range(3):
        QApplication.processEvents()
    assert dock.widget().minimumSizeHint().width() <= DEFAULT_WIDTH  # no widget forces the dock wider
    assert dock.width() == DEFAULT_WIDTH


def assert_fits(dock, message) -> None:
    """A message is inside the dock's width and tall enough for all its wrapped lines."""
    label = message.label
    assert label.wordWrap()
    assert message.geometry().right() <= dock.widget().width()
    assert label.width() <= dock.widget().width()
    assert label.height() >= label.heightForWidth(label.width()) > 0
    assert label.text().replace(ZERO_WIDTH_SPACE, "") == message.text()


def test_every_dock_message_wraps_at_the_default_width(dock, sample, tmp_path):
    case, layers = sample
    show_at_default_width(dock)
    for layer in layers.values():  # the message: none checked
        dock.layers.set_checked(layer.id(), False)
    QApplication.processEvents()
    [problem] = dock.ui.messageBar.items()
    assert problem.text() == ("Check at least one raster layer in the Layers list (add rasters to the project first if "
                              "none).")
    assert_fits(dock, problem)
    assert problem.label.heightForWidth(problem.label.width()) > problem.label.fontMetrics().height()  # 2+ lines
    for layer in layers.values():
        dock.layers.set_checked(layer.id(), True)
    set_case_roles(dock, case, layers)
    QApplication.processEvents()
    assert bar_texts(dock) == []

    run_to_end(dock)
    folder = tmp_path / "a-long-folder-name-for-the-exported-prospectivity-polygons" / "of-the-sample-case"
    folder.mkdir(parents=True)
    written = dock.results.export(folder / "targets_of_the_porphyry_demo_case_exported.gpkg")
    QApplication.processEvents()
    confirmation = dock.ui.messageBar.items()[-1]
    assert confirmation.text() == (f"Exported {len(dock.result.prospectivity)} prospectivity polygons to "
                                   f"{written}.")
    assert_fits(dock, confirmation)
    for level in ("pushCritical", "pushWarning", "pushInfo"):  # failures and notes, however long
        getattr(dock.ui.messageBar, level)("Lodestar", " ".join(dock.result.notes) * 2)
    QApplication.processEvents()
    for message in dock.ui.messageBar.items():
        assert_fits(dock, message)
    shown = len(dock.ui.messageBar.items())
    dock.ui.messageBar.items()[0].close_button.click()
    assert len(dock.ui.messageBar.items()) == shown - 1
    dock.ui.messageBar.items()[0].copy_button.click()
    assert QApplication.clipboard().text() == dock.ui.messageBar.items()[0].text()


def test_reasoner_labels_and_step_titles_are_whole(dock, sample):
    case, layers = sample
    show_at_default_width(dock)
    combo = dock.ui.backendCombo
    for index in range(combo.count()):
        assert combo.fontMetrics().horizontalAdvance(combo.itemText(index)) + 24 <= combo.width()
    set_case_roles(dock, case, layers)
    dock.ui.questionEdit.setPlainText(case.question)
    run_to_end(dock)
    dock.ui.tabs.setCurrentWidget(dock.ui.reasoningTab)
    dock.ui.tabs.currentWidget().layout().activate()
    QApplication.processEvents()
    dock.reasoning.rewrap()
    tree, metrics = dock.ui.reasoningTree, dock.ui.reasoningTree.fontMetrics()
    width = tree.viewport().width()
    assert 250 < width <= DEFAULT_WIDTH
    titles = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    long_titles = [item for item in titles if metrics.horizontalAdvance(dock.reasoning.full_text(item, 0)) > width]
    assert long_titles  # the plan's step titles are longer than the dock is wide
    for item in titles:
        full = dock.reasoning.full_text(item, 0)
        shown = item.text(0)
        assert "".join(shown.split()) == "".join(full.split())  # nothing cut
        assert all(metrics.horizontalAdvance(line) <= width for line in shown.split("\n"))
    for item in long_titles:
        assert "\n" in item.text(0)


def test_choices_are_shown_and_thresholds_re_run(dock, sample):
    case, layers = sample
    set_case_roles(dock, case, layers)
    dock.ui.questionEdit.setPlainText(case.question)
    run_to_end(dock)
    choices = dock.results.choices
    record = json.loads(Path(dock.result.outputs["record"]).read_text(encoding="utf-8"))
    expected = model_choice(record)
    assert choices.model_label.text() == expected["text"]
    assert f"Runner-up: {record['knowledge'][1]['name']} (score " in choices.model_label.text()
    if dock.result.unused:
        assert all(row["layer"] in choices.left_out_label.text() for row in dock.result.unused)
    else:
        assert choices.left_out_label.text() == "Every layer given was used."
    assert re.search(r"[\d,]+ targets? covering", choices.notes_label.text())
    assert choices.steps.topLevelItemCount() == len(record["plan"])
    assert choices.steps.topLevelItem(0).text(1).startswith(f"{tool_label('color_regions')} on "
                                                             f"{record['plan'][0]['layers'][0]}")
    assert choices.advanced.isEnabled() and choices.overrides() == {"controller": {}, "localization": {}}
    assert choices.spins[("controller", "max_regions")][1].value() == 5
    assert choices.spins[("controller", "min_area_m2")][1].value() == 0.05  # km2
    first_group = dock.run_group.name()

    choices.set_value("controller", "max_regions", 2)
    choices.set_value("controller", "min_area_m2", 0.2)
    choices.set_value("localization", "important_areas_count", 3)
    assert choices.overrides() == {"controller": {"max_regions": 2, "min_area_m2": 200_000.0},
                                   "localization": {"important_areas_count": 3}}
    assert choices.changed_label.text().startswith("Set for the next runs: Zones per step, at most: 2")
    choices.rerun_button.click()  # the dock's run with the thresholds set
    assert dock.task is not None
    assert wait_for(dock.task, RUN_TIMEOUT_S)
    QgsApplication.processEvents()
    again = json.loads(Path(dock.result.outputs["record"]).read_text(encoding="utf-8"))
    assert again["parameters"]["controller"]["max_regions"] == 2
    assert again["parameters"]["controller"]["min_area_m2"] == 200_000.0
    assert again["localization"]["params"]["important_areas_count"] == 3
    assert again["localization"]["source"].endswith("with user overrides")
    for event in again["events"]:  # every zone-marking step kept at most 2 zones
        if event.get("kind") == "step" and (event.get("observation") or {}).get("tool") in ZONE_TOOLS:
            assert len((event.get("observation") or {}).get("zone_ids") or []) <= 2
    assert choices.spins[("controller", "max_regions")][1].value() == 2  # the new run's values
    assert dock.run_group.name() != first_group
    choices.reset_button.click()
    assert choices.overrides() == {"controller": {}, "localization": {}}
    assert dock.build_request().controller is None and dock.build_request().localization is None
