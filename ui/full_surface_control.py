"""The dock's *Full-resolution surface* button: the shown run's favourability surface re-made at full resolution in
a background task (on the Dask scheduler of the Settings, if one is set), added to the run's group when done."""
from __future__ import annotations

from pathlib import Path

from qgis.core import QgsProject

from ..plugin.errors import LodestarError
from . import layers as result_layers
from .full_surface import FullSurfaceTask
from .settings_dialog import PluginSettings
from .task import start, wait_for


class FullSurfaceControl:
    """One full-resolution task at a time for `dock` (its ui, run folder, run group, status and progress)."""

    def __init__(self, dock):
        self.dock = dock
        self.task: FullSurfaceTask | None = None

    def start(self) -> FullSurfaceTask | None:
        dock = self.dock
        if dock.task is not None or self.task is not None or dock.run_folder is None:
            return None
        scheduler = PluginSettings.load().dask_scheduler
        task = FullSurfaceTask(dock.run_folder, scheduler)
        task.logged.connect(dock._status)
        task.progressChanged.connect(dock._show_progress)  # a method: dropped with the panel, which a task may outlive
        task.succeeded.connect(self._made)
        task.failed.connect(self._failed)
        task.cancelled.connect(self._cancelled)
        self.task = task
        dock.ui.fullSurfaceButton.setEnabled(False)
        dock.ui.cancelButton.setEnabled(True)
        dock._status("Full-resolution surface: starting" + (f" on the Dask cluster {scheduler}" if scheduler else ""))
        start(task)
        return task

    def cancel(self) -> None:
        if self.task is not None:
            self.dock._status("Cancelling the full-resolution surface...")
            self.task.cancel()

    def shutdown(self, timeout_s: float) -> None:
        """Cancel the task and wait for it, its signals disconnected (plugin unload)."""
        task, self.task = self.task, None
        if task is None:
            return
        task.cancel()
        wait_for(task, timeout_s)
        for signal in (task.logged, task.succeeded, task.failed, task.cancelled):
            try:
                signal.disconnect()
            except (TypeError, RuntimeError):
                pass

    def _ended(self) -> None:
        self.task = None
        self.dock.ui.cancelButton.setEnabled(self.dock.task is not None)
        self.dock.ui.fullSurfaceButton.setEnabled(self.dock.run_folder is not None)

    def _made(self, path: str) -> None:
        self._ended()
        dock = self.dock
        try:
            layer = result_layers.load_styled_layer(Path(path), "Favourability (full resolution)", "favourability.qml")
        except LodestarError as exc:
            dock.ui.messageBar.pushCritical("Lodestar", str(exc))
            return
        QgsProject.instance().addMapLayer(layer, dock.run_group is None)
        if dock.run_group is not None:
            dock.run_group.insertLayer(0, layer)
        dock.results.layers["favourability_full"] = layer
        dock._status(f"Full-resolution surface: {layer.width()} x {layer.height()} pixels, {path}")

    def _failed(self, message: str) -> None:
        self._ended()
        self.dock.ui.messageBar.pushCritical("Lodestar", message)
        self.dock._status("Full-resolution surface not made: " + message)

    def _cancelled(self) -> None:
        self._ended()
        self.dock._status("Full-resolution surface cancelled; nothing was added.")
