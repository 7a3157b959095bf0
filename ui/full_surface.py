"""A finished run's favourability surface at the layers' full resolution, made in a background task, block by
block, on local threads or on the Dask cluster named in the Settings (plugin.favourability.blockwise)."""
from __future__ import annotations

from pathlib import Path

from qgis.core import QgsTask
from qgis.PyQt.QtCore import pyqtSignal

from ..plugin.errors import LodestarError
from ..plugin.progress import Progress
from .task import guarded

FULL_SURFACE = "favourability_full.tif"
"""The file the surface is written to, in the run folder."""


class FullSurfaceTask(QgsTask):
    """Writes FULL_SURFACE for the run in `folder`; emits `succeeded(path)`, `failed(message)` or `cancelled()`
    from `finished()` on the main thread, and each progress line through `logged`."""

    logged = pyqtSignal(str)
    succeeded = pyqtSignal(str)
    failed = pyqtSignal(str)
    cancelled = pyqtSignal()

    def __init__(self, folder, scheduler: str = ""):
        super().__init__("Lodestar: full-resolution surface", QgsTask.CanCancel)
        self.folder = Path(folder)
        self.scheduler = scheduler.strip()
        self.path = self.folder / FULL_SURFACE
        self.error = ""

    def run(self) -> bool:
        from ..plugin.favourability.blockwise_fitted import write_run_surface
        from ..plugin.runs.run_history import outputs_of, run_inputs
        from ..plugin.vector_io import read_vector

        progress = Progress(on_progress=self.setProgress, on_log=self.logged.emit, is_cancelled=self.isCanceled)

        def work():
            zones = outputs_of(self.folder).get("zones")
            if zones is None:
                raise LodestarError(f"The run folder {self.folder} has no zones file; run the analysis again.")
            write_run_surface(self.folder / "record.json", run_inputs(self.folder), read_vector(zones), self.path,
                              scheduler=self.scheduler, progress=progress)

        return guarded(self, "The full-resolution surface", work)

    def finished(self, ok: bool) -> None:
        if ok:
            self.succeeded.emit(str(self.path))
        elif self.isCanceled():
            self.cancelled.emit()
        else:
            self.failed.emit(self.error or "The full-resolution surface was not made.")
