"""The Lodestar dock panel: choose layers and roles, ask, watch the reasoning, judge and export the result."""
from __future__ import annotations

import importlib.util
import json
import re
import shutil
import time
from functools import partial
from pathlib import Path

from qgis.core import (
    Qgis,
    QgsCoordinateTransform,
    QgsMapLayer,
    QgsProject,
    QgsRasterLayer,
    QgsVectorLayer,
    QgsWkbTypes,
)
from qgis.gui import QgsDockWidget
from qgis.PyQt import uic
from qgis.PyQt.QtCore import Qt, QTimer, QUrl
from qgis.PyQt.QtGui import QColor, QDesktopServices, QIcon, QPixmap
from qgis.PyQt.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHeaderView,
    QListWidgetItem,
    QTableWidgetItem,
    QTreeWidgetItem,
    QWidget,
)

from ..plugin.analysis import AnalysisRequest, AnalysisResult
from ..plugin.errors import LodestarError
from ..plugin.roles import ROLES, guess_role
from ..plugin.vector_io import write_vector
from ..processing.params import guess_favourable, layer_spec
from . import layers as result_layers
from .settings_dialog import PluginSettings, SettingsDialog
from .task import AnalysisTask, start, wait_for

FORM_CLASS, _ = uic.loadUiType(str(Path(__file__).with_name("dock.ui")))

CHOOSE_ROLE = "(choose a role)"
FAILED = "Failed"  # the engine's answer when no round gave one
ZONES_ROLE = Qt.UserRole + 1
LOW_SET_ROLE = Qt.UserRole + 2  # on the Low column: the user ticked or cleared it (no more guessing)
LOW_COLUMN = 2
LOW_TIP = ("Tick when LOW values of this raster are favourable (e.g. distance to faults: near is good); "
           "pre-set for a structure layer named as a distance.")

PRESETS = (  # label, question, choices
    ("Are there deposits here?",
     "Given these layers, can mineral deposits be detected in this area? Answer: A. Yes B. No.",
     {"A": "Yes", "B": "No"}),
    ("Where should we explore?",
     "Where in this area are mineral deposits most likely, and is any part of it worth exploring? "
     "Answer: A. Yes, there are targets worth exploring B. No, nothing stands out.",
     {"A": "Yes, there are targets worth exploring", "B": "No, nothing stands out"}),
    ("Which alteration is present?",
     "Which hydrothermal alteration is present in this area? Answer: A. Argillic or phyllic (clay, sericite) "
     "B. Propylitic (chlorite, epidote) C. Silicification D. None.",
     {"A": "Argillic or phyllic (clay, sericite)", "B": "Propylitic (chlorite, epidote)", "C": "Silicification",
      "D": "None"}),
    ("Free question...", "", {"A": "Yes", "B": "No"}),
)
BACKENDS = (("offline", "Offline rule-based reasoner (no network)"), ("openai", "OpenAI-compatible model server"))
_CHOICE = re.compile(r"(?:^|\s)([A-F])[.)]\s*(.+?)(?=\s+[A-F][.)]\s|$)", re.S)


def parse_choices(question: str) -> dict:
    """Option letters and texts from a question ending in 'Answer: A. ... B. ...'; Yes/No when none."""
    tail = question.split("Answer:", 1)[1] if "Answer:" in question else ""
    found = {letter: text.strip().rstrip(".") for letter, text in _CHOICE.findall(tail)}
    return found if len(found) >= 2 else {"A": "Yes", "B": "No"}


def layer_path(layer: QgsMapLayer) -> Path | None:
    """The file behind a layer ('|layername=' and other options dropped); None when not a local file."""
    source = layer.source().split("|", 1)[0]
    path = Path(source)
    return path if source and path.is_file() else None


def layer_texts(layer: QgsMapLayer) -> list[str]:
    """Words that tell a layer's role: name, file name, metadata title/abstract/keywords, band names."""
    meta = layer.metadata()
    texts = [layer.name(), meta.title(), meta.abstract()]
    for words in meta.keywords().values():
        texts.extend(words)
    path = layer_path(layer)
    if path is not None:
        texts.append(path.stem)
    if isinstance(layer, QgsRasterLayer):
        texts.extend(layer.bandName(i) for i in range(1, layer.bandCount() + 1))
    return texts


def is_evidence_layer(layer: QgsMapLayer) -> bool:
    """GDAL raster files, and line/polygon vectors (faults, units) of any source (a layer that is not a whole
    file, e.g. faults digitised in a scratch layer, is written to the run folder when a run starts); points are
    not evidence layers."""
    if not layer.isValid() or result_layers.is_result_layer(layer):
        return False
    if isinstance(layer, QgsRasterLayer):
        return layer.providerType() == "gdal" and layer_path(layer) is not None
    if isinstance(layer, QgsVectorLayer):
        return layer.geometryType() in (QgsWkbTypes.LineGeometry, QgsWkbTypes.PolygonGeometry)
    return False


def targets_line(prospectivity) -> str:
    """'Targets: #1 (score 0.83, 3.1 km2), ...' for the results tab ('' when there are none)."""
    if prospectivity is None or not len(prospectivity):
        return ""
    parts = []
    for row in prospectivity.sort_values("rank").itertuples():
        area = getattr(row, "area_m2", None)
        size = f", {area / 1e6:.2g} km2" if area is not None and prospectivity.crs is not None else ""
        score = getattr(row, "score", None)
        parts.append(f"#{row.rank} (score {score:.2f}{size})" if score is not None else f"#{row.rank}")
    return "<b>Targets:</b> " + ", ".join(parts) + "<br>"


def key_id(layer) -> str:
    """A layer's id, or '' when its object was already deleted (layer removed from the project)."""
    try:
        return layer.id()
    except RuntimeError:
        return ""


def run_notes(result: AnalysisResult) -> list[str]:
    """The engine's notes on how the answer was settled (from the run record; [] when there are none)."""
    record = result.outputs.get("record")
    if record is None or not Path(record).exists():
        return []
    try:
        return [str(n) for n in json.loads(Path(record).read_text(encoding="utf-8"))["result"].get("notes", [])]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def project_layers_in_tree_order() -> list:
    """The project's layers as the Layers panel lists them (top first), then any not in the tree."""
    project = QgsProject.instance()
    in_tree = [node.layer() for node in project.layerTreeRoot().findLayers() if node.layer() is not None]
    seen = {layer.id() for layer in in_tree}
    return in_tree + [layer for layer in project.mapLayers().values() if layer.id() not in seen]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "run"


class LodestarDock(QgsDockWidget):
    """The panel. Public for tests and scripts: `set_layer_role`, `set_layer_checked`, `set_layer_favourable_low`,
    `layer_favourable`, `run`, `cancel_run`, `task`, `result`, `run_group`, `export_prospectivity`, `shutdown`."""

    def __init__(self, iface, parent=None):
        super().__init__("Lodestar", parent)
        self.iface = iface
        self.setObjectName("LodestarDock")
        self.body = QWidget(self)
        self.ui = FORM_CLASS()
        self.ui.setupUi(self.body)
        self.setWidget(self.body)
        self.task: AnalysisTask | None = None
        self.result: AnalysisResult | None = None
        self.run_group = None
        self.run_layers: dict = {}
        self.run_folder: Path | None = None
        self.open_url = QDesktopServices.openUrl
        self._problem_item = None
        self._problem = None
        self._started = 0.0
        self._step_items: dict = {}
        self._round_items: dict = {}
        self._clock = QTimer(self)
        self._clock.setInterval(1000)
        self._clock.timeout.connect(self._tick)
        self._setup_widgets()
        self.refresh_layers()
        self._connect_project()
        self.validate()

    # ----- set-up
    def _setup_widgets(self) -> None:
        ui = self.ui
        ui.layerTree.header().setSectionResizeMode(0, QHeaderView.Stretch)
        ui.layerTree.header().setSectionResizeMode(1, QHeaderView.ResizeToContents)
        ui.layerTree.header().setSectionResizeMode(LOW_COLUMN, QHeaderView.ResizeToContents)
        ui.layerTree.headerItem().setToolTip(LOW_COLUMN, LOW_TIP)
        ui.reasoningTree.header().setSectionResizeMode(0, QHeaderView.Interactive)
        ui.reasoningTree.header().resizeSection(0, 210)
        ui.reasoningTree.header().setStretchLastSection(True)
        ui.usageTable.horizontalHeader().setSectionResizeMode(QHeaderView.Stretch)
        ui.usageTable.verticalHeader().setVisible(False)
        for label, _, _ in PRESETS:
            ui.presetCombo.addItem(label)
        for key, label in BACKENDS:
            ui.backendCombo.addItem(label, key)
        settings = PluginSettings.load()
        ui.backendCombo.setCurrentIndex(max(0, ui.backendCombo.findData(settings.backend)))
        ui.questionEdit.setPlainText(PRESETS[0][1])
        ui.presetCombo.currentIndexChanged.connect(self._preset_chosen)
        ui.questionEdit.textChanged.connect(self.validate)
        ui.backendCombo.currentIndexChanged.connect(self._backend_chosen)
        ui.layerTree.itemChanged.connect(self._layer_item_changed)
        ui.samCheck.toggled.connect(lambda *_: self.validate())
        ui.refreshButton.clicked.connect(self.refresh_layers)
        ui.settingsButton.clicked.connect(self.open_settings)
        ui.runButton.clicked.connect(self.run)
        ui.cancelButton.clicked.connect(self.cancel_run)
        ui.reasoningTree.itemClicked.connect(lambda item, _col: self.zoom_to_item(item))
        ui.chainList.itemClicked.connect(self.zoom_to_item)
        ui.exportButton.clicked.connect(self._export_clicked)
        ui.reportButton.clicked.connect(self.open_report)
        ui.runFolderLabel.linkActivated.connect(lambda url: self.open_url(QUrl(url)))
        self._apply_sam_setting(settings)

    def _connect_project(self) -> None:
        project = QgsProject.instance()
        project.layersAdded.connect(self._project_layers_changed)
        project.layersRemoved.connect(self._project_layers_changed)
        project.cleared.connect(self._project_layers_changed)

    def _disconnect_project(self) -> None:
        project = QgsProject.instance()
        for signal in (project.layersAdded, project.layersRemoved, project.cleared):
            try:
                signal.disconnect(self._project_layers_changed)
            except (TypeError, RuntimeError):
                pass

    def _project_layers_changed(self, *_):
        """Keep the input list in step with the project, and forget result layers the user removed."""
        project = QgsProject.instance()
        self.run_layers = {key: layer for key, layer in self.run_layers.items() if project.mapLayer(key_id(layer))}
        if not self.run_layers:
            self.run_group = None
        self.refresh_layers()

    # ----- inputs
    def refresh_layers(self) -> None:
        """List the project's evidence layers, keeping check states, roles and Low ticks already set."""
        tree = self.ui.layerTree
        previous = {row["id"]: (row["item"].checkState(0), row["combo"].currentText()) for row in self.layer_rows()}
        previous_low = {row["id"]: row["item"].checkState(LOW_COLUMN) for row in self.layer_rows()
                        if row["item"].data(LOW_COLUMN, LOW_SET_ROLE)}
        tree.blockSignals(True)
        tree.clear()
        for layer in project_layers_in_tree_order():
            if not is_evidence_layer(layer):
                continue
            item = QTreeWidgetItem([layer.name(), ""])
            item.setData(0, Qt.UserRole, layer.id())
            item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
            item.setToolTip(0, layer.publicSource())  # no database password
            checked, role = previous.get(layer.id(), (Qt.Checked, ""))
            item.setCheckState(0, checked)
            tree.addTopLevelItem(item)
            combo = QComboBox(tree)
            combo.addItems([CHOOSE_ROLE, *ROLES])
            if not role:
                guess = guess_role(*layer_texts(layer))
                role = guess if guess != "other" else CHOOSE_ROLE
            combo.setCurrentText(role)
            combo.currentIndexChanged.connect(partial(self._role_changed, layer.id()))
            tree.setItemWidget(item, 1, combo)
            if isinstance(layer, QgsRasterLayer):  # vectors get no Low box: they have no values to rank
                item.setToolTip(LOW_COLUMN, LOW_TIP)
                if layer.id() in previous_low:
                    item.setCheckState(LOW_COLUMN, previous_low[layer.id()])
                    item.setData(LOW_COLUMN, LOW_SET_ROLE, True)
                else:
                    self._guess_low(item, layer, role)
        tree.blockSignals(False)
        self.validate()

    @staticmethod
    def _guess_low(item: QTreeWidgetItem, layer, role: str) -> None:
        path = layer_path(layer) or Path(layer.name())
        low = guess_favourable(path, role, layer.name()) == "low"
        item.setCheckState(LOW_COLUMN, Qt.Checked if low else Qt.Unchecked)

    def _role_changed(self, layer_id: str, *_) -> None:
        """A new role re-guesses the Low box of a raster, unless the user already set it."""
        row = self._row(layer_id)
        item = row["item"]
        if isinstance(row["layer"], QgsRasterLayer) and not item.data(LOW_COLUMN, LOW_SET_ROLE):
            tree = self.ui.layerTree
            tree.blockSignals(True)
            self._guess_low(item, row["layer"], row["combo"].currentText())
            tree.blockSignals(False)
        self.validate()

    def _layer_item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        if column == LOW_COLUMN:
            item.setData(LOW_COLUMN, LOW_SET_ROLE, True)
        self.validate()

    def layer_rows(self) -> list[dict]:
        """One dict per listed layer: id, item, combo, layer."""
        rows = []
        tree = self.ui.layerTree
        for i in range(tree.topLevelItemCount()):
            item = tree.topLevelItem(i)
            layer_id = item.data(0, Qt.UserRole)
            rows.append({"id": layer_id, "item": item, "combo": tree.itemWidget(item, 1),
                         "layer": QgsProject.instance().mapLayer(layer_id)})
        return rows

    def _row(self, layer_id: str) -> dict:
        for row in self.layer_rows():
            if row["id"] == layer_id:
                return row
        raise KeyError(f"layer {layer_id} is not listed in the dock")

    def set_layer_checked(self, layer_id: str, checked: bool) -> None:
        self._row(layer_id)["item"].setCheckState(0, Qt.Checked if checked else Qt.Unchecked)

    def set_layer_role(self, layer_id: str, role: str) -> None:
        self._row(layer_id)["combo"].setCurrentText(role)

    def layer_role(self, layer_id: str) -> str:
        return self._row(layer_id)["combo"].currentText()

    def set_layer_favourable_low(self, layer_id: str, low: bool) -> None:
        """Tick or clear a raster's Low box, as the user would."""
        self._row(layer_id)["item"].setCheckState(LOW_COLUMN, Qt.Checked if low else Qt.Unchecked)

    def layer_favourable(self, layer_id: str) -> str | None:
        """'low' or 'high' as the Low box of a raster says; None for a vector layer (no box)."""
        row = self._row(layer_id)
        if not isinstance(row["layer"], QgsRasterLayer):
            return None
        return "low" if row["item"].checkState(LOW_COLUMN) == Qt.Checked else "high"

    def checked_rows(self) -> list[dict]:
        return [r for r in self.layer_rows() if r["item"].checkState(0) == Qt.Checked and r["layer"] is not None]

    def _preset_chosen(self, index: int) -> None:
        question = PRESETS[index][1]
        self.ui.questionEdit.setPlainText(question)
        if not question:
            self.ui.questionEdit.setFocus()

    def _backend_chosen(self, *_):
        settings = PluginSettings.load()
        settings.backend = self.backend()
        settings.save()
        self.validate()

    def backend(self) -> str:
        return self.ui.backendCombo.currentData()

    def _apply_sam_setting(self, settings: PluginSettings) -> None:
        self.ui.samCheck.setEnabled(settings.sam_available)
        if not settings.sam_available:
            self.ui.samCheck.setChecked(False)

    def open_settings(self) -> None:
        dialog = SettingsDialog(self)
        if dialog.exec_():
            self._apply_sam_setting(PluginSettings.load())
        dialog.deleteLater()
        self.validate()

    # ----- validation
    def input_problem(self) -> str:
        """What stops a run, said as what to do; '' when the inputs are complete."""
        rows = self.checked_rows()
        if not rows:
            return "Check at least one raster layer in the Layers list (add rasters to the project first if none)."
        if not any(isinstance(r["layer"], QgsRasterLayer) for r in rows):
            return "Check at least one raster layer: vector layers (faults, units) need a raster to define the area."
        unset = [r["layer"].name() for r in rows if r["combo"].currentText() == CHOOSE_ROLE]
        if unset:
            return f"Choose a role for {', '.join(unset)} in the Role column."
        names = [r["layer"].name() for r in rows]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            return f"Two checked layers are both called {', '.join(duplicates)}; rename one in the Layers panel."
        disjoint = self._non_overlapping([r["layer"] for r in rows])
        if disjoint:
            return (f"{disjoint[0]} and {disjoint[1]} do not overlap; check only layers that cover a common area.")
        if not self.ui.questionEdit.toPlainText().strip():
            return "Type a question, or pick one from the list above it."
        settings = PluginSettings.load()
        if self.backend() == "openai":
            if importlib.util.find_spec("openai") is None:
                return ("The model-server reasoner needs the Python package 'openai': run "
                        "python -m pip install openai with QGIS's Python, or choose the offline reasoner.")
            problem = settings.openai_problem()
            if problem:
                return problem
        if self.ui.samCheck.isChecked():
            missing = [p for p in ("torch", "segment_anything") if importlib.util.find_spec(p) is None]
            if missing:
                return (f"Segment Anything refinement needs {' and '.join(missing)}: install with QGIS's "
                        "Python (python -m pip install torch segment-anything), or untick the refinement.")
        return ""

    @staticmethod
    def _non_overlapping(layers) -> tuple | None:
        """The first pair of layers whose extents do not intersect (compared in the first layer's CRS)."""
        target = layers[0].crs()
        project = QgsProject.instance()
        extents = []
        for layer in layers:
            extent = layer.extent()
            if layer.crs().isValid() and target.isValid() and layer.crs() != target:
                try:
                    extent = QgsCoordinateTransform(layer.crs(), target, project).transformBoundingBox(extent)
                except Exception:  # a failed transform (outside the CRS's area) is left to the engine's check
                    continue
            extents.append((layer.name(), extent))
        common = None
        for name, extent in extents:
            if common is None:
                common = (name, extent)
                continue
            if not common[1].intersects(extent):
                return common[0], name
            common = (f"{common[0]}", common[1].intersect(extent))
        return None

    def validate(self) -> bool:
        """Enable Run only when the inputs are complete; keep one message in the bar saying what is missing."""
        running = self.task is not None
        problem = self.input_problem()
        if problem != self._problem:
            self._clear_problem()
            if problem and not running:
                self._problem_item = self.ui.messageBar.createMessage("Lodestar", problem)
                self.ui.messageBar.pushWidget(self._problem_item, Qgis.Warning)
            self._problem = problem
        self.ui.runButton.setEnabled(not problem and not running)
        self.ui.runButton.setToolTip(problem or "Run the analysis")
        return not problem

    def _clear_problem(self) -> None:
        if self._problem_item is not None:
            try:
                self.ui.messageBar.popWidget(self._problem_item)
            except RuntimeError:
                pass
            self._problem_item = None

    # ----- running
    def build_request(self) -> AnalysisRequest:
        settings = PluginSettings.load()
        question = self.ui.questionEdit.toPlainText().strip()
        preset = next((p for p in PRESETS if p[1] and p[1] == question), None)
        choices = dict(preset[2]) if preset else parse_choices(question)
        label = preset[0].rstrip("?.") if preset else question[:40]
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.run_name = f"Lodestar {time.strftime('%H:%M')} - {label}"
        folder = settings.runs_folder() / f"{stamp}-{_slug(label)}"
        n = 1
        while folder.exists():
            n += 1
            folder = settings.runs_folder() / f"{stamp}-{_slug(label)}-{n}"
        # one layer of a GeoPackage (or a filtered layer) is written whole to the run folder for the engine
        specs = [layer_spec(r["layer"], r["combo"].currentText(), folder / "inputs", self.layer_favourable(r["id"]))
                 for r in self.checked_rows()]
        sam = self.ui.samCheck.isChecked() and settings.sam_available
        return AnalysisRequest(
            layers=specs,
            question=question,
            output_dir=folder,
            choices=choices,
            settings=settings.backend_settings(self.backend()),
            max_rounds=settings.max_rounds,
            case_id=_slug(label),
            refine_with_sam=sam,
            sam_checkpoint=Path(settings.sam_checkpoint) if sam else None,
        )

    def run(self) -> AnalysisTask | None:
        """Start the analysis in a background task; returns the task (None when inputs are invalid)."""
        if self.task is not None or not self.validate():
            return None
        try:
            request = self.build_request()
            request.output_dir.mkdir(parents=True, exist_ok=True)
        except (LodestarError, OSError) as exc:
            self.ui.messageBar.pushCritical("Lodestar", str(exc))
            return None
        self.run_folder = request.output_dir
        self._reset_views()
        task = AnalysisTask(request, f"Lodestar: {self.run_name}")
        task.engine_event.connect(self.on_event)
        task.logged.connect(self._status)
        task.progressChanged.connect(self._progress)
        task.succeeded.connect(self._succeeded)
        task.failed.connect(self._failed)
        task.cancelled.connect(self._cancelled)
        self.task = task
        self._started = time.monotonic()
        self._clock.start()
        self._set_running(True)
        self._status("Starting...")
        self.ui.tabs.setCurrentWidget(self.ui.reasoningTab)
        start(task)
        return task

    def cancel_run(self) -> None:
        if self.task is not None:
            self._status("Cancelling...")
            self.ui.cancelButton.setEnabled(False)
            self.task.cancel()

    def _set_running(self, running: bool) -> None:
        self.ui.cancelButton.setEnabled(running)
        for widget in (self.ui.layerTree, self.ui.presetCombo, self.ui.questionEdit, self.ui.backendCombo,
                       self.ui.settingsButton, self.ui.refreshButton):
            widget.setEnabled(not running)
        self.ui.samCheck.setEnabled(not running and PluginSettings.load().sam_available)
        self.validate()

    def _reset_views(self) -> None:
        self.result = None
        self.ui.reasoningTree.clear()
        self.ui.chainList.clear()
        self.ui.usageTable.setRowCount(0)
        self.ui.answerBanner.setVisible(False)
        self.ui.exportButton.setEnabled(False)
        self.ui.reportButton.setEnabled(False)
        self.ui.runFolderLabel.clear()
        self.ui.progressBar.setValue(0)
        self._step_items = {}
        self._round_items = {}

    def _progress(self, value: float) -> None:
        self.ui.progressBar.setValue(int(value))

    def _status(self, text: str) -> None:
        self.ui.statusLabel.setText(text)

    def _tick(self) -> None:
        if self.task is not None:
            self.ui.progressBar.setFormat(f"%p%  ({time.monotonic() - self._started:.0f} s)")

    def _end_run(self) -> AnalysisTask | None:
        task, self.task = self.task, None
        self._clock.stop()
        self.ui.progressBar.setFormat("%p%")
        self._set_running(False)
        return task

    def _discard_run_folder(self) -> None:
        if self.run_folder is not None and self.run_folder.exists():
            shutil.rmtree(self.run_folder, ignore_errors=True)
        self.run_folder = None

    def _cancelled(self) -> None:
        task = self._end_run()
        self._discard_run_folder()
        waited = time.monotonic() - task.cancel_requested_at if task and task.cancel_requested_at else 0.0
        self._status(f"Cancelled after {waited:.1f} s; nothing was added to the project.")

    def _failed(self, message: str) -> None:
        self._end_run()
        self._discard_run_folder()
        self.ui.messageBar.pushCritical("Lodestar", message)
        self._status("Stopped: " + message)

    def _succeeded(self, result: AnalysisResult) -> None:
        self._end_run()
        self.result = result
        self.ui.progressBar.setValue(100)
        self.show_answer(result)
        notes = run_notes(result)
        if result.answer == FAILED:
            self.ui.messageBar.pushWarning("Lodestar", "No answer: " + (" ".join(notes) or "see the run record."))
        self.run_group, self.run_layers = None, {}
        if len(result.zones) or len(result.prospectivity):
            try:
                self.run_group, self.run_layers = result_layers.add_result_layers(result.outputs, self.run_name)
            except LodestarError as exc:
                self.ui.messageBar.pushCritical("Lodestar", str(exc))
        self.show_chain(result)
        self.ui.exportButton.setEnabled(result.prospectivity is not None and len(result.prospectivity) > 0)
        report = result.outputs.get("report")
        self.ui.reportButton.setEnabled(report is not None and Path(report).exists())
        record = result.outputs.get("record")
        if self.run_folder is not None:
            text = targets_line(result.prospectivity)
            text += f'Run folder: <a href="{QUrl.fromLocalFile(str(self.run_folder)).toString()}">{self.run_folder}</a>'
            if record is not None:
                text += f"<br>Run record: {Path(record).name}"
            self.ui.runFolderLabel.setText(text)
        elapsed = time.monotonic() - self._started
        self._status(f"Done in {elapsed:.0f} s: {len(result.prospectivity)} prospectivity polygons, "
                     f"{len(result.zones)} candidate zones.")
        self.ui.tabs.setCurrentWidget(self.ui.resultsTab)

    # ----- reasoning view
    def on_event(self, event: dict) -> None:
        """Show one engine event in the reasoning tree (called on the main thread)."""
        if self.task is None or not isinstance(event, dict):
            return
        handler = getattr(self, "_on_" + str(event.get("kind", "")), None)
        if handler is not None:
            handler(event)

    def _add_top(self, item: QTreeWidgetItem) -> QTreeWidgetItem:
        """A top-level line of the reasoning tree, its text across both columns."""
        self.ui.reasoningTree.addTopLevelItem(item)
        item.setFirstColumnSpanned(True)
        return item

    def _step_item(self, index) -> QTreeWidgetItem:
        item = self._step_items.get(index)
        if item is None:
            item = self._add_top(QTreeWidgetItem([f"Step {index}", ""]))
            self._step_items[index] = item
        return item

    def _on_plan(self, event: dict) -> None:
        steps = event.get("steps") or []
        for step in steps:
            item = self._step_item(step.get("index"))
            level = f" [{step['level']}]" if step.get("level") else ""
            item.setText(0, f"Step {step.get('index')}{level}: {step.get('purpose', '')} "
                            f"({step.get('tool', '')} on {', '.join(step.get('layers') or [])})")
            item.setToolTip(0, f"{step.get('purpose', '')}\nWhy these layers: {step.get('layers_why', '')}\n"
                               f"Why this tool: {step.get('tool_why', '')}\nExpected: {step.get('expected', '')}")
        for note in event.get("notes") or []:
            self._add_top(QTreeWidgetItem([f"Plan note: {note}"]))
        self._status(f"Planned {len(steps)} steps.")

    def _on_controller(self, event: dict) -> None:
        parent = self._step_item(event.get("step"))
        verdict = event.get("verdict") or {}
        errors = [e.get("message", str(e)) if isinstance(e, dict) else str(e) for e in verdict.get("errors") or []]
        round_no = f"round {event.get('round')}, " if event.get("round") else ""
        text = "; ".join(errors) if errors else "output accepted"
        if verdict.get("feedback") and not verdict.get("ok"):
            text += f" -> feedback: {verdict['feedback']}"
        item = QTreeWidgetItem(parent, [f"controller ({round_no}attempt {event.get('attempt')})", text])
        item.setToolTip(1, text)
        item.setForeground(1, QColor("#1b5e20" if verdict.get("ok") else "#b71c1c"))
        parent.setExpanded(True)

    def _on_step(self, event: dict) -> None:
        obs = event.get("observation") or {}
        parent = self._step_item(event.get("step", obs.get("step")))
        supports = obs.get("sub_inference") == "Yes"
        round_no = f" (round {event.get('round')})" if event.get("round") else ""
        child = QTreeWidgetItem([f"{obs.get('tool', '')}{round_no}: {'supports' if supports else 'no support'}",
                                 obs.get("error") or obs.get("rationale", "")])
        child.setToolTip(1, obs.get("rationale", ""))
        child.setForeground(0, QColor("#1b5e20" if supports else "#5d4037"))
        zone_ids = [str(z) for z in obs.get("zone_ids") or []]
        for item in (child, parent):
            item.setData(0, ZONES_ROLE, zone_ids)
        png = obs.get("evidence_png")
        if png and Path(png).exists():
            pixmap = QPixmap(str(png))
            if not pixmap.isNull():
                child.setIcon(0, QIcon(pixmap.scaled(128, 128, Qt.KeepAspectRatio, Qt.SmoothTransformation)))
                child.setToolTip(0, f'<img src="{png}" width="360">')
        parent.addChild(child)
        parent.setToolTip(0, f"{parent.text(0)}\n{len(zone_ids)} zones; "
                             f"{'supports' if supports else 'does not support'} the answer")
        parent.setData(0, Qt.UserRole, supports)
        parent.setExpanded(True)
        self.ui.reasoningTree.scrollToItem(child)
        self._status(f"Step {parent.text(0)} done{round_no}.")

    def _on_skipped(self, event: dict) -> None:
        for index in event.get("steps") or []:
            item = self._step_item(index)
            item.setText(0, item.text(0) + " - skipped: an earlier step concluded the chain")

    def _on_verdict(self, event: dict) -> None:
        verdict = event.get("verdict")
        round_no = event.get("round")
        if verdict is None:
            item = QTreeWidgetItem([f"Round {round_no} verdict: no verdict ({event.get('error', '')})"])
            item.setForeground(0, QColor("#b71c1c"))
            self._add_top(item)
            return
        valid = bool(verdict.get("valid"))
        answer = verdict.get("answer") or "-"
        item = QTreeWidgetItem([f"Round {round_no} verdict: {'valid' if valid else 'not valid'}; "
                                f"candidate answer {answer}"])
        item.setForeground(0, QColor("#1b5e20" if valid else "#e65100"))
        item.setToolTip(0, verdict.get("rationale", ""))
        for group in ("critical", "secondary"):
            for name, ok in (verdict.get(group) or {}).items():
                QTreeWidgetItem(item, [f"{group} evidence", f"{name}: {'supported' if ok else 'missing'}"])
        for step, text in (verdict.get("feedback") or {}).items():
            feedback = QTreeWidgetItem(item, [f"feedback to step {step}", str(text)])
            feedback.setToolTip(1, str(text))
        self._add_top(item)
        item.setExpanded(True)
        self._round_items[round_no] = item
        self._status(f"Round {round_no}: the verifier finds the chain {'valid' if valid else 'not valid'}.")

    def _on_vote(self, event: dict) -> None:
        counts = event.get("counts") or {}
        tally = ", ".join(f"{k} x{v}" for k, v in counts.items())
        self._add_top(QTreeWidgetItem([f"Majority vote: {tally} -> {event.get('answer', '-')}"]))

    def _on_localization(self, event: dict) -> None:
        params = event.get("params") or {}
        item = QTreeWidgetItem([f"Localization: {event.get('polygons', 0)} prospectivity polygons "
                                f"(parameters from {event.get('source', '?')})"])
        for name, value in params.items():
            QTreeWidgetItem(item, [name, str(value)])
        self._add_top(item)
        self._status("Localizing targets through the spatial graph...")

    def _on_usage(self, event: dict) -> None:
        self.show_usage(event.get("usage") or {})

    def show_usage(self, usage: dict) -> None:
        table = self.ui.usageTable
        table.setRowCount(len(usage))
        for row, (role, figures) in enumerate(sorted(usage.items())):
            tokens = int(figures.get("prompt_tokens", 0)) + int(figures.get("completion_tokens", 0))
            values = (role, str(figures.get("calls", 0)), f"{tokens:,}", f"{float(figures.get('seconds', 0.0)):.1f}")
            for col, value in enumerate(values):
                table.setItem(row, col, QTableWidgetItem(value))

    # ----- results
    def show_answer(self, result: AnalysisResult) -> None:
        text = result.answer_text
        if result.answer == FAILED:
            colour, how = "#ffcdd2", "no round produced an answer"
        elif result.valid:
            colour, how = "#c8e6c9", "the verifier accepted the chain"
        else:
            colour, how = "#ffe0b2", "no chain was accepted; answer by majority vote"
        rounds = f"{result.rounds} round{'s' if result.rounds != 1 else ''}"
        self.ui.answerBanner.setText(
            f"<b>Answer {result.answer}</b>{': ' + text if text else ''}<br><small>{how} ({rounds})</small>")
        self.ui.answerBanner.setStyleSheet(f"background:{colour}; padding:6px; border-radius:4px;")
        self.ui.answerBanner.setVisible(True)
        self.show_usage(result.usage or {})

    def show_chain(self, result: AnalysisResult) -> None:
        """List the final chain's steps with their zones (click to zoom)."""
        self.ui.chainList.clear()
        for node in result.chain or []:
            step = node.get("step", {}) if isinstance(node, dict) else {}
            obs = node.get("observation", {}) if isinstance(node, dict) else {}
            supports = obs.get("sub_inference") == "Yes"
            zone_ids = [str(z) for z in obs.get("zone_ids") or []]
            item = QListWidgetItem(f"{step.get('index', obs.get('step', ''))}. {step.get('purpose', '')}\n"
                                   f"    {obs.get('tool', '')}: {len(zone_ids)} zones, "
                                   f"{'supports' if supports else 'does not support'} the answer")
            item.setToolTip(obs.get("rationale", ""))
            item.setForeground(QColor("#1b5e20" if supports else "#5d4037"))
            item.setData(ZONES_ROLE, zone_ids)
            self.ui.chainList.addItem(item)

    def zoom_to_item(self, item) -> bool:
        """Zoom the map to the zones of a chain step (list or tree item); False when it has none on the map."""
        zone_ids = item.data(ZONES_ROLE) if isinstance(item, QListWidgetItem) else item.data(0, ZONES_ROLE)
        if not zone_ids:
            return False
        for key in ("zones", "nodes"):
            layer = self.run_layers.get(key)
            if layer is not None and result_layers.zoom_to_zones(self.iface.mapCanvas(), layer, zone_ids):
                return True
        return False

    def export_prospectivity(self, path) -> Path:
        """Write the run's prospectivity polygons to a Shapefile, GeoPackage or any OGR format by extension."""
        if self.result is None:
            raise LodestarError("Run an analysis first; there are no prospectivity polygons to export.")
        written = write_vector(self.result.prospectivity, Path(path), layer="prospectivity")
        self.ui.messageBar.pushSuccess(
            "Lodestar", f"Exported {len(self.result.prospectivity)} prospectivity polygons to {written}.")
        return written

    def _export_clicked(self) -> None:
        path, chosen = QFileDialog.getSaveFileName(self, "Export prospectivity polygons", str(self.run_folder or ""),
                                                   "Shapefile (*.shp);;GeoPackage (*.gpkg)")
        if not path:
            return
        if not Path(path).suffix:  # the format of the filter chosen
            path += ".gpkg" if "gpkg" in chosen else ".shp"
        try:
            self.export_prospectivity(path)
        except LodestarError as exc:
            self.ui.messageBar.pushCritical("Lodestar", str(exc))

    def open_report(self) -> None:
        report = self.result.outputs.get("report") if self.result else None
        if report is not None:
            self.open_url(QUrl.fromLocalFile(str(report)))

    # ----- closing
    def closeEvent(self, event):  # noqa: N802 (Qt API name)
        """Closing the panel during a run cancels the run."""
        self.cancel_run()
        super().closeEvent(event)

    def shutdown(self, timeout_s: float = 5.0) -> None:
        """Cancel any running work and wait for it, before the dock is removed (plugin unload)."""
        self._clock.stop()
        self._disconnect_project()
        task = self.task
        if task is not None:
            task.cancel()
            wait_for(task, timeout_s)
            if self.task is not None:  # finished() has not reached us: forget the run ourselves
                for signal in (task.engine_event, task.logged, task.succeeded, task.failed, task.cancelled):
                    try:
                        signal.disconnect()
                    except (TypeError, RuntimeError):
                        pass
                self.task = None
                self._discard_run_folder()
