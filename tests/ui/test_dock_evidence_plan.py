"""The geologist steers the evidence model in the dock: the Ask tab warns about a layer the surface would leave out
(with the one-click fix), the evidence plan is edited with a live preview and re-run without the chain (on Great
Basin the edited plan's AUC is reported beside the agent's), and a deposit model written in the form is picked and
drives a run."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
from qgis.core import QgsProject, QgsRasterLayer, QgsVectorLayer

from lodestar.plugin.reason.deposit_models import load_user_models
from lodestar.plugin.reason.knowledge import load_knowledge
from lodestar.plugin.request.case import read_case
from lodestar.plugin.request.record import read_record
from lodestar.tests.ui.dock_steps import open_dock, run_to_end, set_case_roles
from lodestar.ui.task import wait_for

GREAT_BASIN = Path(__file__).resolve().parents[1] / "data" / "great-basin-gold"
GEOLOGY = "geology (DDS-41 lithotectonic units)"


@pytest.fixture
def great_basin(qgis_new_project):
    case = read_case(GREAT_BASIN / "case.json")
    layers = {}
    for spec in case.layers:
        layer = (QgsVectorLayer(str(spec.path), spec.name, "ogr") if spec.is_vector
                 else QgsRasterLayer(str(spec.path), spec.name))
        assert layer.isValid(), spec.path
        layers[spec.name] = layer
    deposits = QgsVectorLayer(str(case.deposits), "known deposits", "ogr")
    QgsProject.instance().addMapLayers([*layers.values(), deposits])
    yield case, layers, deposits
    QgsProject.instance().removeAllMapLayers()
    QgsProject.instance().layerTreeRoot().removeAllChildren()


@pytest.fixture
def gb_dock(qgis_iface, great_basin, runs_dir):
    case, layers, deposits = great_basin
    for panel in open_dock(qgis_iface):
        set_case_roles(panel, case, layers)
        panel.ui.questionEdit.setPlainText(case.question)
        panel.map_options.set_deposits(deposits)
        yield panel


def _unused(panel) -> list:
    return panel.steering.check_now(panel.layers.named_specs(), panel.ui.questionEdit.toPlainText())


def test_the_ask_tab_warns_about_an_unused_geology_layer_before_the_run(gb_dock):
    warned = {row["layer"]: row["reason"] for row in _unused(gb_dock)}
    assert "its legend gives only unit codes" in warned[GEOLOGY].lower()
    text = gb_dock.steering.warning.text()
    assert f"{GEOLOGY} will not be used: Its legend gives only unit codes" in text
    assert not gb_dock.steering.warning.isHidden() and not gb_dock.steering.fix_button.isHidden()
    assert gb_dock.ui.runButton.isEnabled()  # a warning, not a refusal

    assert gb_dock.steering.name_units({GEOLOGY: ["LPZE", "UPZC", "LPZ"]})  # the one-click fix, units picked
    assert gb_dock.ui.unitsEdit.text() == f"{GEOLOGY}: LPZE, UPZC, LPZ"
    assert GEOLOGY not in {row["layer"] for row in _unused(gb_dock)}
    assert gb_dock.steering.fix_button.isHidden()
    assert GEOLOGY not in gb_dock.steering.warning.text()


def test_a_layer_read_against_the_known_deposits_is_shown_before_the_run_and_turned_in_one_click(gb_dock):
    """With Low ticked on the arsenic classes (high arsenic is Carlin-type gold's pathfinder), the layer ranks Great
    Basin's deposits below the average cell: said before the run, and one click reads it the other way."""
    arsenic = "stream-sediment arsenic (classes)"
    assert arsenic not in {row["layer"] for row in gb_dock.steering.against}
    layer_id = next(r["id"] for r in gb_dock.layers.checked_rows() if r["layer"].name() == arsenic)
    gb_dock.layers.set_favourable_low(layer_id, True)
    _unused(gb_dock)
    against = {row["layer"]: row for row in gb_dock.steering.against}
    assert against[arsenic]["side"] == "low" and against[arsenic]["auc"] < 0.3
    assert f"{arsenic} ranks the {against[arsenic]['deposits']} known deposits below the average cell" in \
        gb_dock.steering.sign_warning.text()
    assert not gb_dock.steering.turn_button.isHidden()
    assert gb_dock.steering.turn_button.text() == f"Read {arsenic} with high values favourable"
    gb_dock.steering.turn_button.click()
    assert gb_dock.layers.favourable(layer_id) == "high"
    _unused(gb_dock)
    assert arsenic not in {row["layer"] for row in gb_dock.steering.against}
    assert gb_dock.steering.turn_button.isHidden() and gb_dock.steering.sign_warning.isHidden()
    gb_dock.layers.set_favourable_low(layer_id, True)
    gb_dock.map_options.set_calibration("wofe")  # calibrated, the fit reads the deposits itself: no check
    _unused(gb_dock)
    assert gb_dock.steering.against == [] and gb_dock.steering.sign_warning.isHidden()


def test_a_role_the_picked_model_does_not_weigh_is_warned(dock, sample):
    case, layers = sample
    set_case_roles(dock, case, layers)
    assert "MgOH chlorite-epidote index" not in {row["layer"] for row in _unused(dock)}
    dock.steering.choose("carlin_type_gold")  # a model the question does not name, picked in the dock
    assert dock.build_request().deposit_model == "carlin_type_gold"
    warned = {row["layer"]: row["reason"] for row in _unused(dock)}
    assert warned["MgOH chlorite-epidote index"] == ("The Carlin-type sediment-hosted gold model does not use "
                                                     "propylitic alteration evidence.")
    assert dock.steering.fix_button.isHidden()  # no units to name: the fix is another model, or another layer


def test_the_geologists_plan_in_one_rerun_beside_the_agents_on_great_basin(gb_dock, tmp_path):
    run_to_end(gb_dock)
    editor = gb_dock.plan_editor
    agent_record = read_record(gb_dock.run_folder / "record.json")
    agent_auc = agent_record["favourability"]["validation"]["knowledge"]["auc"]
    layers = [row["spec"]["layer"] for row in editor.rows]
    assert GEOLOGY in layers and "mapped faults" in layers  # the layers the agent's plan left out have rows
    assert editor.plan().by == "agent"
    before = editor.surface_label.pixmap().toImage()
    editor.set_value(layers.index(GEOLOGY), "units", ["LPZE", "UPZC", "LPZ"])
    editor.set_value(layers.index(GEOLOGY), "weight", 1.25)
    editor.set_value(layers.index("mapped faults"), "midpoint", 2000.0)
    editor.set_value(layers.index("mapped faults"), "weight", 0.8)
    editor.set_value(layers.index("distance to faults (classes)"), "weight", 0.0)  # the same evidence, once
    editor.refresh_preview()
    after = editor.surface_label.pixmap().toImage()
    assert before != after
    editor.table.setCurrentCell(layers.index("mapped faults"), 1)
    assert "metres" in editor.curve_label.toolTip()
    plan = editor.plan()
    assert plan.by == "geologist" and {s.layer for s in plan.specs} == {
        GEOLOGY, "stream-sediment arsenic (classes)", "stream-sediment antimony (classes)", "mapped faults"}

    task = editor.rerun()
    assert task is not None and wait_for(task, 120)
    done = task.result
    assert done is not None, editor.status.text()
    assert done.agent_auc == agent_auc and done.auc > agent_auc
    assert f"your plan {done.auc:.3f}, the agent's plan {agent_auc:.3f}" in editor.status.text()
    group = QgsProject.instance().layerTreeRoot().findGroup(f"{gb_dock.run_name} - edited plan")
    assert group is not None and len(group.findLayers()) == 2
    replan = json.loads(done.outputs["record"].read_text(encoding="utf-8"))
    assert replan["plan"]["by"] == "geologist" and replan["agent_validation"]["auc"] == agent_auc
    exported = gpd.read_file(gb_dock.results.export(tmp_path / "edited.gpkg"))  # Export takes the edited plan's
    assert list(exported["rank"]) == list(done.targets["rank"])
    assert np.allclose(exported["area_km2"], done.targets["area_km2"])
    assert gb_dock.results.targets.targets is done.targets  # the Targets page lists them too


@pytest.fixture
def profile_models(qgis_app):
    from lodestar.processing.mapping_params import user_models_folder

    folder = user_models_folder()
    assert ".qgis-settings" in folder.resolve().parts, f"not pytest-qgis's test profile: {folder}"
    existed = {p.name for p in folder.glob("*.json")} if folder.exists() else None
    yield folder
    for path in folder.glob("*.json"):
        if existed is None or path.name not in existed:
            path.unlink()
    if existed is None and folder.exists():
        shutil.rmtree(folder)


def test_a_deposit_model_written_in_the_form_is_picked_and_drives_a_run(dock, sample, profile_models):
    case, layers = sample
    set_case_roles(dock, case, layers)
    dock.ui.questionEdit.setPlainText(case.question)
    dock.steering.choose("skarn")
    form = dock.steering.write_model()
    assert form.model_id.text() == "my_skarn" and form.evidence.rowCount() >= 2
    form.model_id.setText("my porphyry!")
    assert form.save() is None and "lower-case letters" in form.problem.text()  # said in the form, kept open
    form.model_id.setText("my_copper")
    form.name.setText("My copper model")
    roles = [form.weights.item(i, 0).text() for i in range(form.weights.rowCount())]
    assert "Hydrothermal alteration" in roles and not [r for r in roles if "_" in r]  # the roles in words
    cells = [form.evidence.item(i, c).text() for i in range(form.evidence.rowCount()) for c in (0, 3)]
    assert cells and not [cell for cell in cells if "_" in cell]  # evidence and its layer roles in words
    form.weights.cellWidget(roles.index("Hydrothermal alteration"), 1).setValue(4.0)
    form.fault_mid.setValue(750)
    path = form.save()
    assert path == profile_models / "my_copper.json"
    models, problems = load_user_models(profile_models)
    mine = next(m for m in models if m["id"] == "my_copper")
    assert not problems and mine["favourability"]["fault_distance_m"]["midpoint"] == 750
    skarn = next(m for m in load_knowledge() if m["id"] == "skarn")  # the words are read back as the ids they were
    assert [(i["id"], i["roles"]) for i in mine["evidence"]] == [(i["id"], i["roles"]) for i in skarn["evidence"]]
    # the skarn's sources do not stay beside the numbers the geologist changed
    assert mine["favourability"]["fault_distance_m"]["source"] == mine["favourability"]["source"] == "set by the user"
    assert dock.steering.chosen() == "my_copper" and dock.steering.combo.currentText() == "My copper model (yours)"

    run_to_end(dock)
    record = read_record(dock.run_folder / "record.json")
    assert record["knowledge"][0]["id"] == "my_copper" and record["knowledge"][0]["chosen"] is True
    weights = {row["layer"]: row["weight"] for row in record["favourability"]["weights"]}
    assert weights["ASTER AlOH (sericite) index"] == 4.0
    faults = next(s for s in record["favourability"]["specs"] if s["layer"] == "mapped faults")
    assert faults["params"]["midpoint"] == 750
    said = dock.results.choices.model_label.text()
    assert said.startswith("Deposit model: My copper model (score") and ", chosen by you." in said
    assert "The automatic choice would have been: Porphyry Cu-Mo-Au" in said


def test_the_runs_are_listed_with_the_project_and_reopened_from_it(dock, sample, tmp_path):
    from lodestar.ui.project_runs_view import project_entries

    case, layers = sample
    set_case_roles(dock, case, layers)
    dock.ui.questionEdit.setPlainText(case.question)
    run_to_end(dock)
    editor = dock.plan_editor
    editor.set_combination("gamma", 0.9)
    task = editor.rerun()
    assert task is not None and wait_for(task, 120) and task.result is not None, editor.status.text()
    [entry] = project_entries()
    assert entry["folder"] == str(dock.run_folder.resolve()) and entry["plan"] == "agent"
    assert entry["deposit_model"] == "Porphyry Cu-Mo-Au" and entry["parameters"]["area_share"] == 0.1
    [replan] = entry["replans"]
    assert replan["method"] == "gamma" and replan["plan"] == "geologist" and replan["auc"] == task.result.auc

    project = QgsProject.instance()
    path = tmp_path / "project.qgz"
    assert project.write(str(path))
    project.clear()
    assert dock.project_runs.tree.topLevelItemCount() == 0
    assert project.read(str(path))
    tree = dock.project_runs.tree
    assert tree.topLevelItemCount() == 1 and tree.topLevelItem(0).childCount() == 1
    assert tree.topLevelItem(0).text(4) == (f"{entry['auc']:.3f}" if entry["auc"] is not None else "-")
    tree.setCurrentItem(tree.topLevelItem(0).child(0))
    dock.project_runs.reopen_button.click()
    assert dock.run_folder == Path(entry["folder"]) and dock.plan_editor.record_path == dock.run_folder / "record.json"
