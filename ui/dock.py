"""The Lodestar dock panel: choose layers and roles, ask, watch the reasoning, judge and export the result.

The parts live beside it (layer_table, map_options, reasoning_view, results_view); this module wires them, checks
the inputs, builds the request with the core's one builder and runs it in a background task.
"""
from __future__ import annotations

import shutil
import time
from pathlib import Path

from qgis.core import QgsProject
from qgis.gui import QgsDockWidget
from qgis.PyQt import uic
from qgis.PyQt.QtCore import Qt, QTimer
from qgis.PyQt.QtWidgets import QWidget

from ..plugin.analysis import OFFLINE_MODEL, AnalysisRequest, AnalysisResult
from ..plugin.errors import LodestarError
from ..plugin.events import status_line
from ..plugin.raster_io import role_mismatches
from ..plugin.reason.knowledge import load_knowledge
from ..plugin.reason.offline_questions import offline_question_problem
from ..plugin.reason.questions import parse_choices
from ..plugin.request.request import build_request
from ..plugin.runs.run_history import events_of, past_run, result_of
from . import layers as result_layers
from .full_surface import FullSurfaceTask
from .full_surface_control import FullSurfaceControl
from .layer_table import LayerTable
from .legend_editor import add_legend_button
from .map_options import MapOptions
from .messages import MessagePanel
from .plan_editor import PlanEditor
from .project_runs_view import ProjectRunsView
from .reasoning_view import ReasoningView
from .results_view import ResultsView
from .run_history_view import RunHistoryView
from .settings_dialog import WHERE, PluginSettings, SettingsDialog, slug
from .steering_options import SteeringOptions
from .task import AnalysisTask, start, wait_for

FORM_CLASS, _ = uic.loadUiType(str(Path(__file__).with_name("dock.ui")))

PRESETS = (  # label, question (its choices are read from it, as every question's are)
    ("Are there deposits here?",
     "Given these layers, can mineral deposits be detected in this area? Answer: A. Yes B. No."),
    ("Where should we explore?",
     "Where in this area are mineral deposits most likely, and is any part of it worth exploring? "
     "Answer: A. Yes, there are targets worth exploring B. No, nothing stands out."),
    ("Which alteration is present?",
     "Which hydrothermal alteration is present in this area? Answer: A. Argillic or phyllic (clay, sericite) "
     "B. Propylitic (chlorite, epidote) C. Silicification D. None."),
    ("Free question...", ""),
)
BACKENDS = (("offline", "Offline rules (no network)", "Offline rule-based reasoner: no network, no model server"),
            ("openai", "Model server", "An OpenAI-compatible model server (set it up in Settings...)"))
"""Reasoner key, its label (short enough for the dock's default width), its tooltip."""
DEFAULT_WIDTH = 420
"""The dock's width when first opened (dock.ui); every message and label fits or wraps at it."""


class LodestarDock(QgsDockWidget):
    """The panel. Public for tests and scripts: its parts `layers`, `map_options`, `reasoning`, `results`;
    `input_problem`, `build_request`, `run`, `cancel_run`, `task`, `run_folder`, `run_name`, `result`, `run_group`,
    `run_layers`, `shutdown`."""

    def __init__(self, iface, parent=None):
        super().__init__("Lodestar", parent)
        self.iface = iface
        self.setObjectName("LodestarDock")
        self.body = QWidget(self)
        self.ui = FORM_CLASS()
        self.ui.setupUi(self.body)
        self.ui.messageBar = MessagePanel(self.body)  # every message in full, word-wrapped
        self.ui.mainLayout.insertWidget(0, self.ui.messageBar)
        self.setWidget(self.body)
        self.task: AnalysisTask | None = None
        self.full_surface = FullSurfaceControl(self)
        self.run_folder: Path | None = None
        self.run_name = ""
        self._problem_item = None
        self._problem = None
        self._started = 0.0
        self._clock = QTimer(self)
        self._clock.setInterval(1000)
        self._clock.timeout.connect(self._tick)
        self.layers = LayerTable(self.ui.layerTree)
        self.reasoning = ReasoningView(self.ui.reasoningTree)
        self.results = ResultsView(self.ui, iface)
        self.map_options = MapOptions(self.ui)
        self.steering = SteeringOptions(self.ui)  # the deposit model picked; layers the surface would leave out
        self.plan_editor = PlanEditor(self.ui.resultsToolBox)
        self.history = RunHistoryView(self.ui.tabs, lambda url: self.results.open_url(url))
        self.project_runs = ProjectRunsView(self.history.page)  # the runs listed with the QGIS project
        self._setup_widgets()
        add_legend_button(self)  # Legend...: read a scanned map's legend into a unit map
        self.layers.refresh()
        self.validate()

    # ----- set-up
    def _setup_widgets(self) -> None:
        ui = self.ui
        for label, _ in PRESETS:
            ui.presetCombo.addItem(label)
        for key, label, tip in BACKENDS:
            ui.backendCombo.addItem(label, key)
            ui.backendCombo.setItemData(ui.backendCombo.count() - 1, tip, Qt.ToolTipRole)
        settings = PluginSettings.load()
        ui.backendCombo.setCurrentIndex(max(0, ui.backendCombo.findData(settings.backend)))
        ui.questionEdit.setPlainText(PRESETS[0][1])
        ui.presetCombo.currentIndexChanged.connect(self._preset_chosen)
        ui.questionEdit.textChanged.connect(self.validate)
        ui.backendCombo.currentIndexChanged.connect(self._backend_chosen)
        self.layers.changed.connect(self.validate)
        self.map_options.changed.connect(self.validate)
        self.steering.changed.connect(self.validate)
        self.steering.turn_requested.connect(self._turn_layer)
        self.plan_editor.replanned.connect(self._replanned)
        self.project_runs.reopen.connect(self.reopen)
        self.layers.project_changed.connect(self.results.forget_removed_layers)  # result layers the user removed
        QgsProject.instance().cleared.connect(self._project_cleared)  # Project > New, or another project opened
        ui.samCheck.toggled.connect(lambda *_: self.validate())
        ui.refreshButton.clicked.connect(self.layers.refresh)
        ui.settingsButton.clicked.connect(self.open_settings)
        ui.runButton.clicked.connect(self.run)
        ui.cancelButton.clicked.connect(self.cancel_run)
        ui.reasoningTree.itemClicked.connect(lambda item, _col: self.results.zoom_to_item(item))
        ui.chainList.itemClicked.connect(self.results.zoom_to_item)
        ui.exportButton.clicked.connect(lambda *_: self.results.export_clicked(self, self.run_folder))
        ui.reportButton.clicked.connect(lambda *_: self.results.open_report(self))
        ui.fullSurfaceButton.clicked.connect(lambda *_: self.make_full_surface())
        ui.runFolderLabel.linkActivated.connect(self.results.open_folder)
        self.results.choices.rerun.connect(self.run)
        self.history.reopen.connect(self.reopen)
        self._apply_sam_setting(settings)

    # ----- question, reasoner, settings
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
            self.history.refresh()  # the runs folder may have changed
        dialog.deleteLater()
        self.validate()

    # ----- validation
    def input_problem(self) -> str:
        """What stops a run, said as what to do; '' when the inputs are complete."""
        problem = self.layers.problem()
        if problem:
            return problem
        question = self.ui.questionEdit.toPlainText().strip()
        if not question:
            return "Type a question, or pick one from the list above it."
        settings = PluginSettings.load()
        if self.backend() == "offline" or settings.models.get("verifier") == OFFLINE_MODEL:  # the offline verifier
            problem = offline_question_problem(question, parse_choices(question), load_knowledge())
            if problem:
                return problem
        problem = self.map_options.problem(self.layers.named_specs())
        return problem or settings.run_problem(self.backend(), self.ui.samCheck.isChecked())

    def validate(self) -> bool:
        """Enable Run only when the inputs are complete; keep one message in the bar saying what is missing."""
        running = self.task is not None
        problem = self.input_problem()
        if problem != self._problem:
            self._clear_problem()
            if problem and not running:
                self._problem_item = self.ui.messageBar.pushWarning("", problem)
            self._problem = problem
        self.ui.runButton.setEnabled(not problem and not running)
        warnings = [] if running else role_mismatches(self.layers.named_specs())
        if warnings:  # data that disagree with their role: said before the run, the run still allowed
            self._status(" ".join(warnings))
        self.steering.check(self.layers.named_specs(), self.ui.questionEdit.toPlainText().strip())
        self.ui.runButton.setToolTip(problem or "Run the analysis")
        return not problem

    def _turn_layer(self, name: str, low: bool) -> None:
        """Tick or clear the Low box of the checked raster called `name` (the before-run check's one-click fix)."""
        for row in self.layers.checked_rows():
            if row["layer"].name() == name:
                self.layers.set_favourable_low(row["id"], low)
                return

    def _clear_problem(self) -> None:
        if self._problem_item is not None:
            try:
                self.ui.messageBar.popWidget(self._problem_item)
            except RuntimeError:
                pass
            self._problem_item = None

    # ----- running
    def build_request(self) -> AnalysisRequest:
        """The request of the checked layers and the question, by the core's one builder (as lodestar:analyze's)."""
        settings = PluginSettings.load()
        question = self.ui.questionEdit.toPlainText().strip()
        preset = next((label for label, text in PRESETS if text and text == question), None)
        label = preset.rstrip("?.") if preset else question[:40]
        self.run_name = f"Lodestar {time.strftime('%H:%M')} - {label}"
        folder = settings.new_run_folder(label)
        sam = self.ui.samCheck.isChecked() and settings.sam_available
        # one layer of a GeoPackage (or a filtered layer) is written whole to the run folder for the engine
        request = build_request(self.layers.specs(folder / "inputs"), question, folder,
                                settings.backend_values(self.backend()), max_rounds=settings.max_rounds,
                                case_id=slug(label), refine_with_sam=sam,
                                sam_checkpoint=settings.sam_checkpoint if sam else None,
                                **self.map_options.request_values(folder / "inputs"),
                                **self.steering.request_values(), where=WHERE)
        overrides = self.results.choices.overrides()  # thresholds set in the Advanced section
        request.controller = overrides["controller"] or None
        request.localization = overrides["localization"] or None
        return request

    def run(self) -> AnalysisTask | None:
        """Start the analysis in a background task; returns the task (None when inputs are invalid)."""
        if self.task is not None or self.surface_task is not None or not self.validate():
            return None
        try:
            request = self.build_request()
            request.output_dir.mkdir(parents=True, exist_ok=True)
        except (LodestarError, OSError) as exc:
            self.ui.messageBar.pushCritical("Lodestar", str(exc))
            return None
        self.run_folder = request.output_dir
        self.reasoning.clear()
        self.results.clear()
        self.ui.progressBar.setValue(0)
        task = AnalysisTask(request, f"Lodestar: {self.run_name}")
        task.engine_event.connect(self.on_event)
        task.logged.connect(self._status)
        task.progressChanged.connect(self._show_progress)  # a method: dropped with the panel, which a task may outlive
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

    def on_event(self, event: dict) -> None:
        """Show one engine event (called on the main thread while a run is on)."""
        if self.task is None or not isinstance(event, dict):
            return
        if event.get("kind") == "usage":
            self.results.show_usage(event.get("usage") or {})
            return
        self.reasoning.show(event)
        status = status_line(event)
        if status:
            self._status(status)

    def cancel_run(self) -> None:
        self.full_surface.cancel()
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
        self.map_options.set_enabled(not running)
        self.history.set_enabled(not running)
        self.validate()

    def _status(self, text: str) -> None:
        self.ui.statusLabel.setText(text)

    def _show_progress(self, value: float) -> None:
        self.ui.progressBar.setValue(int(value))

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
        if self.run_folder is None or not (self.run_folder / "record.json").is_file():
            self._discard_run_folder()  # a run that reached the engine keeps its folder: its record says what it did
        self.ui.messageBar.pushCritical("Lodestar", message)
        self._status("Stopped: " + message)

    def _succeeded(self, result: AnalysisResult) -> None:
        self._end_run()
        self.ui.progressBar.setValue(100)
        self.results.show(result, self.run_folder, self.run_name)
        self.plan_editor.load(self.run_folder / "record.json")
        if self.map_options.deposits() is not None:  # the deposits picked to run with are the ones to check
            self.results.deposit_check.combo.setLayer(self.map_options.deposits())
        self._status(f"Done in {time.monotonic() - self._started:.0f} s: {len(result.prospectivity)} prospectivity "
                     f"polygons, {len(result.zones)} candidate zones.")
        self.ui.tabs.setCurrentWidget(self.ui.resultsTab)
        self.history.refresh()
        self.history.select(self.run_folder)
        self.project_runs.remember(self.run_folder)

    def _replanned(self, done) -> None:
        """The surface and targets re-made with an edited plan: added to the project, listed with its run, and made
        the targets the Targets page shows and Export writes."""
        _, layers = result_layers.add_result_layers(done.outputs,
                                                    result_layers.unique_group_name(f"{self.run_name} - edited plan"))
        self.project_runs.remember_replan(self.plan_editor.record_path.parent, Path(done.outputs["record"]).parent)
        self.results.show_replanned(done.targets, layers.get("prospectivity"))

    def reopen(self, folder) -> AnalysisResult | None:
        """Show a past run again: its layers in a new group, its reasoning, answer, chain, choices and report."""
        if self.task is not None:
            return None
        try:
            result, run = result_of(folder), past_run(folder)
        except LodestarError as exc:
            self.ui.messageBar.pushCritical("Lodestar", str(exc))
            return None
        self.run_folder, self.run_name = Path(folder), f"Lodestar {run.date} - {run.question[:40]}"
        self.reasoning.clear()
        for event in events_of(folder):
            self.reasoning.show(event)
        self.results.clear()
        self.results.show(result, self.run_folder, self.run_name)
        self.plan_editor.load(self.run_folder / "record.json")
        self._status(f"Reopened the run of {run.date} ({Path(folder).name}).")
        self.ui.tabs.setCurrentWidget(self.ui.resultsTab)
        return result

    def _project_cleared(self) -> None:
        """The project was cleared (Project > New, or another project opened): the old project's run leaves the panel
        (its banner, results pages, targets, reasoning and plan; the project's run list refreshes itself), a run still
        going is cancelled (it removes its own folder); the folders of finished runs stay on disk, in History."""
        if self.task is not None:
            self.cancel_run()
        else:
            self.run_folder = None
        self.run_name = ""
        self.reasoning.clear()
        self.results.clear()
        self.plan_editor.clear()
        self.ui.progressBar.setValue(0)
        self._status("")

    # ----- the last run's surface at full resolution (full_surface_control.py)
    def make_full_surface(self) -> FullSurfaceTask | None:
        return self.full_surface.start()

    surface_task = property(lambda self: self.full_surface.task)

    # ----- the last result (the results view's, for tests and scripts)
    result = property(lambda self: self.results.result)
    run_group = property(lambda self: self.results.group)
    run_layers = property(lambda self: self.results.layers)

    # ----- closing
    def closeEvent(self, event):  # noqa: N802 (Qt API name)
        """Closing the panel during a run cancels the run."""
        self.cancel_run()
        super().closeEvent(event)

    def shutdown(self, timeout_s: float = 5.0) -> None:
        """Cancel any running work and wait for it, before the dock is removed (plugin unload)."""
        self._clock.stop()
        self.layers.stop_following()
        _disconnect_slot(QgsProject.instance().cleared, self._project_cleared)
        self.full_surface.shutdown(timeout_s)
        task = self.task
        if task is not None:
            task.cancel()
            wait_for(task, timeout_s)
            if self.task is not None:  # finished() has not reached us: forget the run ourselves
                _disconnect(task.engine_event, task.logged, task.succeeded, task.failed, task.cancelled)
                self.task = None
                self._discard_run_folder()


def _disconnect_slot(signal, slot) -> None:
    try:
        signal.disconnect(slot)
    except (TypeError, RuntimeError):  # not connected (shut down twice)
        pass


def _disconnect(*signals) -> None:
    """Disconnect every slot of each signal (a signal with none, or of a deleted task, is passed over)."""
    for signal in signals:
        try:
            signal.disconnect()
        except (TypeError, RuntimeError):
            pass
