"""The background task of one analysis (Deepness style: core work in run(), results handed over in finished())."""
from __future__ import annotations

import time
import traceback
from pathlib import Path

from qgis.core import QgsApplication, QgsMessageLog, QgsTask
from qgis.PyQt.QtCore import QCoreApplication, pyqtSignal

from ..plugin.analysis import AnalysisRequest, AnalysisResult
from ..plugin.errors import Cancelled, LodestarError
from ..plugin.masking import mask_secrets
from ..plugin.progress import Progress
from ..plugin.vector_io import write_vector

LOG_TAG = "Lodestar"
FRAME_OUTPUTS = ("zones", "nodes", "edges", "prospectivity", "prospects")


def run_engine(request: AnalysisRequest, progress: Progress, on_event) -> AnalysisResult:
    """The engine's entry point (imported when a run starts, so the dock opens without the engine loaded)."""
    from ..models import run_analysis

    return run_analysis(request, progress, on_event=on_event)


def ensure_vector_outputs(result: AnalysisResult, folder: Path) -> None:
    """Make sure every result frame has a file in the run folder (the layers the dock adds); a run that drew no
    target has no targets layer, and gets none."""
    for key in FRAME_OUTPUTS:
        path = result.outputs.get(key)
        if path is not None and Path(path).exists():
            continue
        frame = getattr(result, key)
        if frame is None or (key in ("prospectivity", "prospects") and not len(frame)):
            continue
        result.outputs[key] = write_vector(frame, Path(folder) / f"{key}.gpkg", layer=key)


class AnalysisTask(QgsTask):
    """Runs `run_analysis` in a worker thread; touches no QGIS project object there.

    Engine events and log lines are re-emitted as signals, which Qt delivers on the main thread.
    When the task ends, exactly one of `succeeded(result)`, `failed(message)` or `cancelled()` is
    emitted from `finished()` on the main thread.
    """

    engine_event = pyqtSignal(object)
    logged = pyqtSignal(str)
    succeeded = pyqtSignal(object)
    failed = pyqtSignal(str)
    cancelled = pyqtSignal()

    def __init__(self, request: AnalysisRequest, description: str = "Lodestar analysis", engine=run_engine):
        super().__init__(description, QgsTask.CanCancel)
        self.request = request
        self.engine = engine
        self.result: AnalysisResult | None = None
        self.error = ""
        self.details = ""
        self.cancel_requested_at: float | None = None

    def cancel(self) -> None:
        self.cancel_requested_at = time.monotonic()
        super().cancel()

    def _scrub(self, text: str) -> str:
        """Text with the API key masked by the one masker (a defence in depth: the engine never means to show it)."""
        return mask_secrets(text, (self.request.settings.api_key,))

    def run(self) -> bool:
        progress = Progress(on_progress=self.setProgress, on_log=lambda line: self.logged.emit(self._scrub(line)),
                            is_cancelled=self.isCanceled)
        try:
            result = self.engine(self.request, progress, self.engine_event.emit)
            progress.check()
            ensure_vector_outputs(result, self.request.output_dir)
            progress.check()
        except Cancelled:
            self._forget_run_folder()
            return False
        except LodestarError as exc:
            if self.isCanceled():  # what failed was torn down by the cancel (the dock gone, its folder removed)
                self._forget_run_folder()
                return False
            self.error = self._scrub(str(exc))
            return False
        except Exception as exc:  # an engine bug must reach the user as a message, not kill QGIS
            if self.isCanceled():
                self._forget_run_folder()
                return False
            self.error = self._scrub(f"Lodestar stopped on an unexpected error: {type(exc).__name__}: {exc}")
            self.details = self._scrub(traceback.format_exc())
            return False
        self.result = result
        return True

    def _forget_run_folder(self) -> None:
        """A cancelled run leaves no empty run folder behind (the engine removed what it wrote into it)."""
        folder = Path(self.request.output_dir)
        try:
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        except OSError:
            pass

    def finished(self, ok: bool) -> None:
        if ok and self.result is not None:
            self.succeeded.emit(self.result)
        elif self.isCanceled():
            self.cancelled.emit()
        else:
            if self.details:
                QgsMessageLog.logMessage(self.details, LOG_TAG)
            self.failed.emit(self.error or "The analysis stopped without a result.")


def guarded(task: QgsTask, what: str, work) -> bool:
    """A QgsTask's run(): `work()` done (True), or False with `task.error` saying why (nothing when cancelled);
    `what` names the work in the message of an unexpected error."""
    try:
        work()
    except Cancelled:
        return False
    except LodestarError as exc:
        task.error = str(exc)
        return False
    except Exception as exc:  # a bug must reach the user as a message, not kill QGIS
        task.error = f"{what} stopped on an unexpected error: {type(exc).__name__}: {exc}"
        return False
    return True


def is_done(task: QgsTask) -> bool:
    """Whether the task has ended (a task already deleted by the task manager has ended too)."""
    try:
        return task.status() in (QgsTask.Complete, QgsTask.Terminated)
    except RuntimeError:
        return True


def wait_for(task: QgsTask, timeout_s: float) -> bool:
    """Process events until the task has finished (finished() called) or the timeout passes."""
    deadline = time.monotonic() + timeout_s
    while not is_done(task) and time.monotonic() < deadline:
        QCoreApplication.processEvents()
        time.sleep(0.01)
    QCoreApplication.processEvents()
    return is_done(task)


def start(task: QgsTask) -> None:
    QgsApplication.taskManager().addTask(task)
