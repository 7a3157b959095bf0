"""Run history in the dock: the runs folder is shown and settable (QGIS settings), past runs are listed and a past
run reopens with its layers, chain and report; "Open report" is never silent when no browser opens it."""
from __future__ import annotations

from pathlib import Path

from qgis.core import QgsProject, QgsVectorLayer
from qgis.PyQt.QtWidgets import QApplication

from lodestar.tests.ui.dock_steps import run_to_end, set_case_roles
from lodestar.ui.messages import ZERO_WIDTH_SPACE
from lodestar.ui.report_view import ReportNotOpened
from lodestar.ui.settings_dialog import PluginSettings


def plain(text: str) -> str:
    return text.replace(ZERO_WIDTH_SPACE, "")


def test_runs_folder_is_shown_settable_and_opened(dock, runs_dir, tmp_path):
    history = dock.history
    assert dock.ui.tabs.tabText(dock.ui.tabs.indexOf(history.page)) == "History"
    assert plain(history.folder_label.text()) == f"Runs folder: {runs_dir}"
    dock.ui.tabs.setCurrentWidget(history.page)  # listed when shown
    assert history.runs == [] and history.status.text() == "No runs yet."
    elsewhere = tmp_path / "other runs"
    history.set_runs_folder(elsewhere)
    assert PluginSettings.load().output_dir == str(elsewhere)
    assert plain(history.folder_label.text()) == f"Runs folder: {elsewhere}"
    opened = []
    history.open_url = lambda url: opened.append(url.toLocalFile()) or True
    assert history.open_folder() and opened == [str(elsewhere)] and elsewhere.is_dir()
    history.open_url = lambda url: False  # no file manager: the path is said
    assert not history.open_folder()
    assert plain(history.status.text()) == f"No file manager opened the folder; it is {elsewhere}"


def test_a_past_run_reopens_with_its_layers_chain_and_report(dock, sample, runs_dir):
    case, layers = sample
    set_case_roles(dock, case, layers)
    dock.ui.questionEdit.setPlainText(case.question)
    run_to_end(dock)
    first = dock.result
    folder = dock.run_folder
    history = dock.history
    assert [run.folder for run in history.runs] == [folder]
    item = history.tree.topLevelItem(0)
    assert history.tree.currentItem() is item  # the new run is selected
    assert item.text(1) == case.question and item.text(2) == "A. Yes"
    assert item.text(3) == ", ".join(spec.name for spec in case.layers)
    assert item.text(0).endswith(" UTC") and item.text(0)[:4].isdigit()
    chain = [dock.ui.chainList.item(i).text() for i in range(dock.ui.chainList.count())]

    project = QgsProject.instance()
    project.removeMapLayers([layer.id() for layer in dock.run_layers.values()])  # the user removed them
    project.layerTreeRoot().removeChildNode(project.layerTreeRoot().findGroup(dock.run_name))
    dock.results.clear()
    dock.reasoning.clear()
    before = set(project.mapLayers())

    history.reopen_button.click()
    QApplication.processEvents()
    result = dock.result
    assert result is not None and result.answer == first.answer == "A"
    added = {project.mapLayer(i) for i in set(project.mapLayers()) - before}
    by_name = {layer.name(): layer for layer in added}
    assert {"Candidate zones", "Prospectivity", "Graph nodes", "Graph edges", "Favourability"} <= set(by_name)
    assert by_name["Candidate zones"].featureCount() == len(first.zones) > 0
    assert by_name["Prospectivity"].featureCount() == len(first.prospectivity) > 0
    assert by_name["Graph nodes"].featureCount() == len(first.nodes)
    assert isinstance(by_name["Prospectivity"], QgsVectorLayer)
    assert Path(by_name["Prospectivity"].source().split("|")[0]) == folder / "prospectivity.gpkg"
    assert dock.run_group is not None and dock.run_group.name().startswith("Lodestar 20")
    assert [dock.ui.chainList.item(i).text() for i in range(dock.ui.chainList.count())] == chain
    tree = dock.ui.reasoningTree
    tops = [dock.reasoning.full_text(tree.topLevelItem(i), 0) for i in range(tree.topLevelItemCount())]
    assert tops[0].startswith("Step 1") and any(t.startswith("Round 1 verdict") for t in tops)
    assert "Answer A</b>: Yes" in dock.ui.answerBanner.text()
    assert dock.ui.reportButton.isEnabled()
    opened = []
    dock.results.open_url = lambda url: opened.append(url.toLocalFile()) or True
    assert dock.results.open_report() is None and opened == [str(folder / "report.html")]
    project.removeMapLayers([layer.id() for layer in added])
    assert set(project.mapLayers()) == before


def test_open_report_without_a_browser_offers_the_path_folder_and_a_view(dock, sample, runs_dir):
    case, layers = sample
    set_case_roles(dock, case, layers)
    dock.ui.questionEdit.setPlainText(case.question)
    run_to_end(dock)
    report = Path(dock.result.outputs["report"])
    asked = []
    dock.results.open_url = lambda url: asked.append(url.toLocalFile()) and False  # no browser registered
    dock.ui.reportButton.click()
    dialog = dock.results.report_dialog
    assert isinstance(dialog, ReportNotOpened) and dialog.isVisible()
    assert asked == [str(report)]
    assert plain(dialog.label.text()) == f"No web browser opened the report. It is here:\n{report}"
    assert dialog.copy_path() == str(report) and QApplication.clipboard().text() == str(report)
    assert not dialog.open_folder() and asked[-1] == str(report.parent)
    assert str(report.parent) in plain(dialog.folder_label.text())
    viewer = dialog.show_here()
    html = viewer.browser.toPlainText()
    assert viewer.isVisible() and viewer.browser.source().toLocalFile() == str(report)
    assert case.question[:40] in html
    viewer.close()
    dialog.close()


def test_project_new_clears_the_old_projects_run_from_the_panel(dock, sample, runs_dir):
    """Project > New (QgsProject.clear) after a run: the banner, the results pages, the targets, the reasoning, the
    plan and the project's run list are emptied (before, the old project's banner and results stayed); the run
    folder stays on disk and in the runs folder's history."""
    case, layers = sample
    set_case_roles(dock, case, layers)
    dock.ui.questionEdit.setPlainText(case.question)
    run_to_end(dock)
    folder = dock.run_folder
    assert "Answer A</b>: Yes" in dock.ui.answerBanner.text() and dock.ui.chainList.count() > 0
    assert dock.results.targets.tree.topLevelItemCount() == len(dock.result.prospectivity) > 0
    assert dock.project_runs.tree.topLevelItemCount() == 1 and dock.plan_editor.record_path is not None
    QgsProject.instance().clear()
    QApplication.processEvents()
    assert dock.ui.answerBanner.text() == "" and not dock.ui.answerBanner.isVisibleTo(dock.body)
    assert dock.result is None and dock.run_group is None and dock.run_layers == {} and dock.run_folder is None
    assert dock.ui.chainList.count() == 0 and dock.results.targets.tree.topLevelItemCount() == 0
    assert dock.ui.reasoningTree.topLevelItemCount() == 0 and dock.ui.runFolderLabel.text() == ""
    assert not dock.ui.exportButton.isEnabled() and not dock.ui.reportButton.isEnabled()
    assert dock.plan_editor.record_path is None and dock.project_runs.tree.topLevelItemCount() == 0
    assert (folder / "record.json").is_file()
    assert [run.folder for run in dock.history.refresh()] == [folder]
