"""The real dock driven through qgis_iface on the bundled sample case (offline reasoner)."""
from __future__ import annotations

import importlib.util
import time
import uuid
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from qgis.core import QgsApplication, QgsProject, QgsRasterLayer, QgsVectorLayer
from qgis.PyQt.QtCore import QCoreApplication, QEvent, Qt
from rasterio.transform import from_origin

from lodestar.plugin.labels import format_area_km2, target_figure
from lodestar.tests.ui.dock_steps import RUN_TIMEOUT_S, bar_texts, run_to_end, set_case_roles
from lodestar.ui import results_view
from lodestar.ui.dock import PRESETS
from lodestar.ui.layer_table import CHOOSE_ROLE, LOW_COLUMN
from lodestar.ui.layers import is_result_layer
from lodestar.ui.reasoning_view import ZONES_ROLE
from lodestar.ui.settings_dialog import PluginSettings
from lodestar.ui.task import wait_for

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "resources" / "sample" / "porphyry-demo"
# fixtures runs_dir, sample, dock and auth_ready: tests/ui/conftest.py





def test_project_layers_listed_with_guessed_editable_roles(dock, sample):
    case, layers = sample
    listed = {row["layer"].name(): row["combo"].currentData() for row in dock.layers.rows()}
    shown = {row["layer"].name(): row["combo"].currentText() for row in dock.layers.rows()}
    assert shown["ASTER AlOH (sericite) index"] == "Argillic alteration"  # roles in words, keys behind them
    assert shown["mapped faults"] == "Structure (faults, lineaments)"
    assert all("_" not in text for text in shown.values())
    assert listed == {
        "geological map": "geological_map",
        "ASTER AlOH (sericite) index": "argillic_alteration",  # 'sericite' wins; the case says otherwise
        "ASTER TIR quartz index": "silicification",
        "MgOH chlorite-epidote index": "propylitic_alteration",
        "ferric iron index (colour rendering)": "iron_oxide",
        "mapped faults": "structure",
    }
    assert all(row["item"].checkState(0) == Qt.Checked for row in dock.layers.rows())
    set_case_roles(dock, case, layers)
    assert dock.layers.role(layers["ASTER AlOH (sericite) index"].id()) == "hydrothermal_alteration"
    assert dock.input_problem() == "" and dock.ui.runButton.isEnabled() and bar_texts(dock) == []
    request = dock.build_request()
    assert sorted((s.name, s.role) for s in request.layers) == sorted((s.name, s.role) for s in case.layers)
    legends = {s.name: s.legend for s in request.layers}
    assert legends["geological map"] == SAMPLE / "geology_legend.csv" and legends["mapped faults"] is None
    assert request.choices == {"A": "Yes", "B": "No"} and request.settings.backend == "offline"
    assert request.max_rounds == 3


def test_distance_to_faults_raster_is_favourable_where_low(dock, sample):
    """As in lodestar:analyze: a structure raster named as a distance is favourable where low."""
    distance = QgsRasterLayer(str(ROOT / "tests" / "data" / "great-basin-gold" / "falha_rcl.tif"),
                              "distance to faults (classes)")
    QgsProject.instance().addMapLayer(distance)
    dock.layers.set_role(distance.id(), "structure")
    specs = {s.name: s for s in dock.build_request().layers}
    assert specs["distance to faults (classes)"].favourable == "low"
    assert specs["mapped faults"].favourable == "high" and specs["geological map"].favourable == "high"


def test_low_favourable_box_is_pre_set_editable_and_reaches_the_request(dock, sample):
    """Each raster row has a Low box, guessed as in lodestar:analyze; a tick the user sets wins over the guess."""
    case, layers = sample
    data = ROOT / "tests" / "data" / "great-basin-gold"
    distance = QgsRasterLayer(str(data / "falha_rcl.tif"), "distance to faults (classes)")
    falha = QgsRasterLayer(str(data / "falha_rcl.tif"), "falha_rcl")
    QgsProject.instance().addMapLayers([distance, falha])
    rows = {row["layer"].name(): row["item"] for row in dock.layers.rows()}
    assert rows["distance to faults (classes)"].checkState(LOW_COLUMN) == Qt.Checked
    assert rows["falha_rcl"].checkState(LOW_COLUMN) == Qt.Checked  # graded distance classes, named 'fault' only
    assert rows["ASTER TIR quartz index"].checkState(LOW_COLUMN) == Qt.Unchecked
    assert rows["mapped faults"].data(LOW_COLUMN, Qt.CheckStateRole) is None  # vectors get no box
    assert dock.layers.favourable(layers["mapped faults"].id()) is None

    quartz = layers["ASTER TIR quartz index"]
    dock.layers.set_favourable_low(quartz.id(), True)
    dock.layers.set_favourable_low(distance.id(), False)
    dock.layers.set_role(quartz.id(), "geophysics")  # a role change no longer re-guesses a box the user set
    dock.layers.set_role(quartz.id(), "silicification")
    specs = {s.name: s.favourable for s in dock.build_request().layers}
    assert specs["ASTER TIR quartz index"] == "low" and specs["distance to faults (classes)"] == "high"
    assert specs["falha_rcl"] == "low" and specs["mapped faults"] == "high"

    dock.layers.refresh()  # the user's ticks survive a refresh of the list
    assert dock.layers.favourable(quartz.id()) == "low" and dock.layers.favourable(distance.id()) == "high"


def test_role_change_re_guesses_an_untouched_low_box(dock, sample):
    distance = QgsRasterLayer(str(ROOT / "tests" / "data" / "great-basin-gold" / "falha_rcl.tif"), "fault distance")
    QgsProject.instance().addMapLayer(distance)
    assert dock.layers.favourable(distance.id()) == "low"
    dock.layers.set_role(distance.id(), "geophysics")
    assert dock.layers.favourable(distance.id()) == "high"
    dock.layers.set_role(distance.id(), "structure")
    assert dock.layers.favourable(distance.id()) == "low"


def test_one_layer_of_a_geopackage_is_written_whole_into_the_run_folder(dock, sample, tmp_path):
    """The engine reads files: a GeoPackage layer other than the file's first reaches it as its own file."""
    from shapely.geometry import LineString

    faults = gpd.read_file(SAMPLE / "faults.geojson")
    gpkg = tmp_path / "structure.gpkg"
    faults.iloc[:1].to_file(gpkg, layer="old_faults")
    faults.to_file(gpkg, layer="new_faults")
    layer = QgsVectorLayer(f"{gpkg}|layername=new_faults", "new faults", "ogr")
    assert layer.isValid() and isinstance(faults.geometry.iloc[0], LineString)
    QgsProject.instance().addMapLayer(layer)
    dock.layers.set_role(layer.id(), "structure")
    request = dock.build_request()
    spec = next(s for s in request.layers if s.name == "new faults")
    assert spec.path == request.output_dir / "inputs" / "new_faults.gpkg"
    assert len(gpd.read_file(spec.path)) == len(faults) > 1


def test_usage_event_fills_the_usage_table(dock):
    dock.task = object()  # events are shown while a run is on
    try:
        dock.on_event({"kind": "usage", "usage": {}})
        table = dock.ui.usageTable  # no model calls: one line saying so, not a table of zeros
        assert table.rowCount() == 1 and table.item(0, 0).text() == "Offline: no model calls."
        assert table.columnSpan(0, 0) == 4
        dock.on_event({"kind": "usage", "usage": {"planner": {"calls": 2, "prompt_tokens": 1000,
                                                              "completion_tokens": 234, "seconds": 1.26}}})
        table = dock.ui.usageTable
        assert [table.item(0, c).text() for c in range(4)] == ["planner", "2", "1,234", "1.3"]
    finally:
        dock.task = None


def test_export_without_a_suffix_takes_the_chosen_format(dock, monkeypatch, tmp_path):
    exported = []
    monkeypatch.setattr(dock.results, "export", exported.append)
    for chosen, suffix in (("GeoPackage (*.gpkg)", ".gpkg"), ("Shapefile (*.shp)", ".shp")):
        monkeypatch.setattr(results_view.QFileDialog, "getSaveFileName",
                            staticmethod(lambda *args, chosen=chosen: (str(tmp_path / "targets"), chosen)))
        dock.results.export_clicked(dock, tmp_path)
        assert exported[-1] == str(tmp_path / "targets") + suffix


def test_faults_digitised_in_a_scratch_layer_are_an_input(dock, sample):
    from qgis.core import QgsFeature, QgsGeometry, QgsPointXY

    case, layers = sample
    x0, y0, x1, y1 = (layers["ASTER AlOH (sericite) index"].extent().toRectF().getCoords())
    sketch = QgsVectorLayer(f"LineString?crs={layers['ASTER AlOH (sericite) index'].crs().authid()}",
                            "sketched faults", "memory")
    feature = QgsFeature()
    feature.setGeometry(QgsGeometry.fromPolylineXY([QgsPointXY(x0, (y0 + y1) / 2), QgsPointXY(x1, (y0 + y1) / 2)]))
    sketch.dataProvider().addFeatures([feature])
    QgsProject.instance().addMapLayer(sketch)
    assert dock.layers.role(sketch.id()) == "structure"  # listed, role guessed from the name
    spec = next(s for s in dock.build_request().layers if s.name == "sketched faults")
    written = gpd.read_file(spec.path)
    assert spec.path.parent.name == "inputs" and len(written) == 1
    assert written.geometry[0].length == pytest.approx(x1 - x0)


def test_run_disabled_with_a_message_while_inputs_are_invalid(dock, sample, tmp_path):
    case, layers = sample
    set_case_roles(dock, case, layers)

    def problem():
        return dock.ui.runButton.isEnabled(), bar_texts(dock)

    for layer in layers.values():
        dock.layers.set_checked(layer.id(), False)
    assert problem() == (False, ["Check at least one raster layer in the Layers list (add rasters to the project "
                                 "first if none)."])
    dock.layers.set_checked(layers["mapped faults"].id(), True)
    assert "need a raster" in problem()[1][0]
    aloh = layers["ASTER AlOH (sericite) index"]
    dock.layers.set_checked(aloh.id(), True)
    dock.layers.set_role(aloh.id(), CHOOSE_ROLE)
    assert problem() == (False, ["Choose a role for ASTER AlOH (sericite) index in the Role column."])
    dock.layers.set_role(aloh.id(), "hydrothermal_alteration")
    assert problem() == (True, [])

    far = tmp_path / "far.tif"
    with rasterio.open(far, "w", driver="GTiff", width=10, height=10, count=1, dtype="float32", crs="EPSG:32612",
                       transform=from_origin(200000, 1000000, 30, 30)) as ds:
        ds.write(np.ones((1, 10, 10), dtype="float32"))
    far_layer = QgsRasterLayer(str(far), "far away silica")
    QgsProject.instance().addMapLayer(far_layer)
    assert dock.layers.role(far_layer.id()) == "silicification"  # listed on layersAdded, role guessed
    enabled, texts = problem()
    assert not enabled and "do not overlap" in texts[0] and "far away silica" in texts[0]
    dock.layers.set_checked(far_layer.id(), False)
    assert problem() == (True, [])

    dock.ui.questionEdit.setPlainText("  ")
    assert problem() == (False, ["Type a question, or pick one from the list above it."])
    dock.ui.questionEdit.setPlainText("How old is the granite?")  # nothing the offline reasoner looks for
    enabled, texts = problem()
    assert not enabled and "names no deposit, commodity, target or alteration" in texts[0]
    dock.ui.questionEdit.setPlainText("Where is graphite likely?")  # no model covers it: the generic one answers
    assert problem() == (True, [])
    dock.ui.presetCombo.setCurrentIndex(2)
    assert dock.ui.questionEdit.toPlainText() == PRESETS[2][1]
    assert problem() == (True, [])

    dock.ui.backendCombo.setCurrentIndex(dock.ui.backendCombo.findData("openai"))
    assert problem() == (False, ["Set the model server's endpoint base URL in Lodestar settings (the gear button)."])
    dock.ui.questionEdit.setPlainText("How old is the granite?")  # a model server may answer it: not refused
    assert problem() == (False, ["Set the model server's endpoint base URL in Lodestar settings (the gear button)."])
    settings = PluginSettings.load()
    settings.models = dict(settings.models, verifier="offline")  # ... unless the offline reasoner is its verifier
    settings.save()
    dock.validate()
    enabled, texts = problem()
    assert not enabled and "names no deposit, commodity, target or alteration" in texts[0]
    settings.models = dict(settings.models, verifier="")
    settings.save()
    dock.ui.questionEdit.setPlainText(PRESETS[2][1])
    dock.ui.backendCombo.setCurrentIndex(dock.ui.backendCombo.findData("offline"))
    assert problem() == (True, [])
    assert not dock.ui.samCheck.isEnabled()  # no SAM checkpoint configured
    checkpoint = tmp_path / "sam_vit_tiny.pth"
    checkpoint.write_bytes(b"weights")
    settings = PluginSettings.load()
    settings.sam_checkpoint = str(checkpoint)
    settings.save()
    dock._apply_sam_setting(PluginSettings.load())
    assert dock.ui.samCheck.isEnabled()
    dock.ui.samCheck.setChecked(True)
    dock.validate()
    request = dock.build_request()
    assert request.refine_with_sam and request.sam_checkpoint == checkpoint


def test_missing_optional_packages_say_what_to_install(dock, sample, tmp_path, monkeypatch):
    case, layers = sample
    set_case_roles(dock, case, layers)
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("openai", "torch") else real_find_spec(name, *a))
    dock.ui.backendCombo.setCurrentIndex(dock.ui.backendCombo.findData("openai"))
    assert not dock.ui.runButton.isEnabled()
    assert "python -m pip install openai" in bar_texts(dock)[0]
    dock.ui.backendCombo.setCurrentIndex(dock.ui.backendCombo.findData("offline"))
    checkpoint = tmp_path / "sam.pth"
    checkpoint.write_bytes(b"weights")
    PluginSettings(output_dir=str(tmp_path / "runs"), sam_checkpoint=str(checkpoint)).save()
    dock._apply_sam_setting(PluginSettings.load())
    dock.ui.samCheck.setChecked(True)
    assert not dock.ui.runButton.isEnabled()
    assert bar_texts(dock) == ["Segment Anything refinement needs torch: install with QGIS's Python "
                                "(python -m pip install torch segment-anything), or untick the refinement."]
    dock.ui.samCheck.setChecked(False)
    assert dock.ui.runButton.isEnabled() and bar_texts(dock) == []


def test_choices_are_read_from_the_question(dock, sample):
    """Presets and free questions alike: the request's choices are the ones the question lists."""
    case, layers = sample
    set_case_roles(dock, case, layers)
    dock.ui.presetCombo.setCurrentIndex(2)
    assert dock.build_request().choices == {"A": "Argillic or phyllic (clay, sericite)",
                                            "B": "Propylitic (chlorite, epidote)", "C": "Silicification", "D": "None"}
    dock.ui.questionEdit.setPlainText("Is it epithermal? Answer: A. High sulphidation B. Low sulphidation C. Neither.")
    assert dock.build_request().choices == {"A": "High sulphidation", "B": "Low sulphidation", "C": "Neither"}
    dock.ui.questionEdit.setPlainText("Any gold here?")
    assert dock.build_request().choices == {"A": "Yes", "B": "No"}


def test_offline_run_on_sample_case_adds_styled_layers_and_exports(dock, sample, tmp_path, qgis_iface):
    case, layers = sample
    set_case_roles(dock, case, layers)
    dock.ui.questionEdit.setPlainText(case.question)
    opened = []
    dock.results.open_url = lambda url: opened.append(url) or True  # a browser took it
    events = []
    before = set(QgsProject.instance().mapLayers())

    task = dock.run()
    assert task is not None
    task.engine_event.connect(lambda e: events.append(e["kind"]))
    assert wait_for(task, RUN_TIMEOUT_S)
    QgsApplication.processEvents()
    result = dock.result
    assert result is not None, bar_texts(dock)

    # answer banner
    assert result.answer == case.answer
    banner = dock.ui.answerBanner.text()
    assert dock.ui.answerBanner.isVisible() or not dock.isVisible()
    assert f"Answer {case.answer}</b>: Yes" in banner
    assert ("verifier accepted" in banner) == result.valid and ("majority vote" in banner) == result.voted
    assert f"({result.rounds} round" in banner

    # live reasoning view
    assert events[0] == "plan" and "step" in events and "verdict" in events
    tree = dock.ui.reasoningTree
    tops = [dock.reasoning.full_text(tree.topLevelItem(i), 0) for i in range(tree.topLevelItemCount())]
    assert tops[0].startswith("Step 1")
    assert any(t.startswith("Round 1 verdict") for t in tops)
    thumbnails = [tree.topLevelItem(i).child(j) for i in range(tree.topLevelItemCount())
                  for j in range(tree.topLevelItem(i).childCount())]
    assert any(not item.icon(0).isNull() for item in thumbnails)
    assert dock.ui.usageTable.rowCount() >= 1

    # layers: one group named after the run, styled
    added = set(QgsProject.instance().mapLayers()) - before
    group = dock.run_group
    assert group is not None and group.name() == dock.run_name
    assert {node.layerId() for node in group.findLayers()} == added
    assert QgsProject.instance().layerTreeRoot().children()[0] == group
    by_name = {layer.name(): layer for layer in dock.run_layers.values()}
    assert {"Candidate zones", "Prospectivity"} <= set(by_name)
    assert all(is_result_layer(layer) for layer in by_name.values())
    zones = by_name["Candidate zones"]
    assert zones.featureCount() == len(result.zones) > 0
    assert zones.renderer().type() == "categorizedSymbol" and zones.renderer().classAttribute() == "role"
    categories = {c.value() for c in zones.renderer().categories()}
    assert set(result.zones["role"]) <= categories
    prospect = by_name["Prospectivity"]
    assert prospect.renderer().type() == "graduatedSymbol" and prospect.renderer().classAttribute() == "rank"
    assert prospect.featureCount() == len(result.prospectivity) > 0
    if "Graph edges" in by_name:
        edges = by_name["Graph edges"]
        assert edges.renderer().type() == "categorizedSymbol" and edges.renderer().classAttribute() == "type"
    assert not any(row["layer"].id() in added for row in dock.layers.rows())  # outputs are not offered as inputs

    # chain step click zooms to its zones
    chain = dock.ui.chainList
    assert chain.count() == len(result.chain) > 0
    with_zones = [chain.item(i) for i in range(chain.count()) if chain.item(i).data(ZONES_ROLE)]
    assert with_zones
    canvas = qgis_iface.mapCanvas()
    canvas.setDestinationCrs(zones.crs())
    assert dock.results.zoom_to_item(with_zones[0])
    ids = set(with_zones[0].data(ZONES_ROLE))
    selected = zones.selectedFeatures() or dock.run_layers["nodes"].selectedFeatures()
    assert {f["zone_id"] for f in selected} == ids
    extent = canvas.extent()
    for feature in selected:
        assert extent.contains(feature.geometry().boundingBox())

    # export, report, run record
    shp = dock.results.export(tmp_path / "export" / "targets.shp")
    back = gpd.read_file(shp)
    assert len(back) == len(result.prospectivity)
    assert sorted(back["rank"]) == sorted(result.prospectivity["rank"])
    assert back.crs == result.prospectivity.crs
    assert abs(back.area.sum() - result.prospectivity.area.sum()) < 1e-3 * result.prospectivity.area.sum()
    gpkg = dock.results.export(tmp_path / "export" / "targets.gpkg")
    assert len(gpd.read_file(gpkg)) == len(result.prospectivity)
    assert dock.ui.exportButton.isEnabled() and dock.ui.reportButton.isEnabled()
    best = result.prospectivity.sort_values("rank").iloc[0]
    figure = " ".join(target_figure(best.to_dict()))  # the figure the Targets page ranks it by, under its name
    assert f"<b>Targets:</b> #1 ({figure}, {format_area_km2(best['area_km2'] * 1e6)}, " in dock.ui.runFolderLabel.text()
    targets = dock.results.targets  # the Targets page: every target, best first, linked to its layer
    assert targets.tree.topLevelItemCount() == len(result.prospectivity) and targets.layer is not None
    assert targets.tree.topLevelItem(0).data(0, Qt.DisplayRole) == 1
    dock.results.open_report()
    assert [url.toLocalFile() for url in opened] == [str(result.outputs["report"])]
    assert Path(result.outputs["record"]).parent == dock.run_folder and Path(result.outputs["record"]).exists()

    # the user removes the result layers: the dock forgets them, and zooming is a no-op
    QgsProject.instance().removeMapLayers(list(added))
    assert dock.run_layers == {} and dock.run_group is None
    assert not dock.results.zoom_to_item(with_zones[0])


def test_cancel_midway_adds_nothing(dock, sample):
    case, layers = sample
    set_case_roles(dock, case, layers)
    before_layers = set(QgsProject.instance().mapLayers())
    before_tree = [node.name() for node in QgsProject.instance().layerTreeRoot().children()]
    task = dock.run()
    folder = dock.run_folder
    assert folder.exists()
    seen = []

    def on_event(event):
        seen.append(event["kind"])
        if event["kind"] == "step" and dock.task is not None:
            dock.cancel_run()

    task.engine_event.connect(on_event)
    assert wait_for(task, RUN_TIMEOUT_S)
    QgsApplication.processEvents()
    assert "step" in seen and "usage" not in seen  # stopped within the step it was cancelled in
    assert dock.result is None and dock.run_group is None
    assert set(QgsProject.instance().mapLayers()) == before_layers
    assert [node.name() for node in QgsProject.instance().layerTreeRoot().children()] == before_tree
    assert not folder.exists()
    assert dock.ui.statusLabel.text().startswith("Cancelled")
    assert not dock.ui.answerBanner.isVisibleTo(dock.body) and not dock.ui.exportButton.isEnabled()
    assert dock.ui.runButton.isEnabled() and not dock.ui.cancelButton.isEnabled()


@pytest.mark.timing
def test_plugin_unload_during_a_run_cancels_it(qgis_iface, sample, runs_dir):
    import importlib

    case, layers = sample
    before = set(QgsProject.instance().mapLayers())
    plugin = importlib.import_module("lodestar").classFactory(qgis_iface)
    plugin.initGui()
    plugin.action.trigger()
    panel = plugin.dock
    set_case_roles(panel, case, layers)
    task = panel.run()
    assert task is not None
    folder = panel.run_folder
    started = time.monotonic()
    plugin.unload()
    assert time.monotonic() - started < 5
    QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)
    QgsApplication.processEvents()
    assert plugin.dock is None
    assert set(QgsProject.instance().mapLayers()) == before
    assert not folder.exists()
    assert not any(t.description().startswith("Lodestar") for t in QgsApplication.taskManager().activeTasks())


def test_a_run_outliving_the_dock_reaches_nothing_of_it(qgis_iface, sample, runs_dir, monkeypatch):
    """A run deaf to the cancel for longer than the shutdown waits goes on reporting progress after the panel
    is deleted: none of it reaches the panel (a slot touching a deleted widget would raise)."""
    import threading

    from qgis.PyQt import sip

    from lodestar.plugin.errors import Cancelled
    from lodestar.ui import dock as dock_module
    from lodestar.ui.dock import LodestarDock
    from lodestar.ui.task import AnalysisTask, is_done

    running, release, reported = threading.Event(), threading.Event(), []

    def deaf_to_the_cancel(request, progress, on_event):
        running.set()
        while not release.wait(0.02):  # deaf to the cancel until the test lets it go
            progress.set(len(reported) % 100)
            progress.log("still working")
            reported.append(1)
        for _ in range(5):
            progress.set(99)
            reported.append(1)
            time.sleep(0.02)
        raise Cancelled()

    monkeypatch.setattr(dock_module, "AnalysisTask",
                        lambda request, description: AnalysisTask(request, description, engine=deaf_to_the_cancel))
    case, layers = sample
    panel = LodestarDock(qgis_iface, qgis_iface.mainWindow())
    set_case_roles(panel, case, layers)
    task = panel.run()
    assert task is not None and running.wait(10)
    panel.shutdown(timeout_s=0.1)
    assert panel.task is None and task.isCanceled() and not is_done(task)
    panel.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)
    assert sip.isdeleted(panel)
    before = len(reported)
    time.sleep(0.1)
    release.set()
    assert wait_for(task, 30) and len(reported) >= before + 5


def test_closing_the_dock_cancels_the_run(dock, sample):
    case, layers = sample
    set_case_roles(dock, case, layers)
    before = set(QgsProject.instance().mapLayers())
    task = dock.run()
    dock.close()
    assert task.isCanceled()
    assert wait_for(task, 30)
    QgsApplication.processEvents()
    assert dock.task is None and dock.result is None
    assert set(QgsProject.instance().mapLayers()) == before


@pytest.fixture
def openai_settings(auth_ready, runs_dir, monkeypatch):
    """openai back-end settings with a key in the test profile's auth database (removed afterwards)."""
    from lodestar.processing import secrets

    monkeypatch.delenv(secrets.KEY_ENVIRONMENT, raising=False)
    key = "sk-dock-" + uuid.uuid4().hex
    secrets.store_api_key(key)
    settings = PluginSettings.load()
    settings.models = {"planner": "p-model", "executor": "e-model", "verifier": "v-model"}
    yield settings, key


@pytest.fixture
def refusing_server():
    """A loopback server that refuses every request with 401 and echoes the Authorization header back."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server API name)
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            body = json.dumps({"error": {"message": f"bad key {self.headers.get('Authorization')}",
                                         "type": "invalid_request_error"}}).encode()
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_refused_key_is_a_message_without_the_key(dock, sample, openai_settings, refusing_server, runs_dir):
    case, layers = sample
    settings, key = openai_settings
    settings.base_url = refusing_server
    settings.save()
    set_case_roles(dock, case, layers)
    dock.ui.backendCombo.setCurrentIndex(dock.ui.backendCombo.findData("openai"))
    assert dock.input_problem() == ""
    logged = []
    QgsApplication.messageLog().messageReceived.connect(lambda msg, tag, level: logged.append(msg))
    before = set(QgsProject.instance().mapLayers())
    run_to_end(dock)
    texts = bar_texts(dock)
    assert dock.result.answer == "Failed" and "<b>Answer Failed</b>" in dock.ui.answerBanner.text()
    [message] = texts
    assert message.startswith("No answer: No plan:") and "(HTTP 401)" in message
    assert "Check the API key in the Lodestar settings." in message and "Bearer ***" in message  # echoed key scrubbed
    assert set(QgsProject.instance().mapLayers()) == before and dock.run_group is None
    shown = texts + logged + [dock.ui.statusLabel.text()]
    assert not any(key in text for text in shown)
    files = [p for p in runs_dir.rglob("*") if p.is_file()]
    assert any(p.name == "record.json" for p in files)
    assert not any(key.encode() in p.read_bytes() for p in files)


def test_unanswering_endpoint_shows_retries_and_cancels_during_back_off(dock, sample, openai_settings, monkeypatch):
    """A minute's back-off before the first retry: the cancel has to cut it, not wait it out."""
    case, layers = sample
    settings, _ = openai_settings
    calls = PluginSettings.calls
    monkeypatch.setattr(PluginSettings, "calls", lambda self: {**calls(self), "retry_backoff_s": 60.0})
    settings.base_url = "http://127.0.0.1:9/v1"  # the discard port: nothing answers
    settings.save()
    set_case_roles(dock, case, layers)
    dock.ui.backendCombo.setCurrentIndex(dock.ui.backendCombo.findData("openai"))
    task = dock.run()
    assert task is not None
    deadline = time.monotonic() + 20
    while "retrying" not in dock.ui.statusLabel.text() and time.monotonic() < deadline:
        QgsApplication.processEvents()
        time.sleep(0.02)
    assert "retrying in 60.00 s" in dock.ui.statusLabel.text()
    assert dock.ui.cancelButton.isEnabled() and not dock.ui.runButton.isEnabled()
    dock.cancel_run()
    assert wait_for(task, 10)  # a sixth of the back-off under way
    assert dock.ui.statusLabel.text().startswith("Cancelled")
