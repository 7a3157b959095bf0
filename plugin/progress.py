"""Progress reporting and cancellation, shared by every long-running core function."""
from __future__ import annotations

from typing import Callable

from .errors import Cancelled


class Progress:
    """Reports progress (0-100) and log lines, and tells the core when the user cancelled.

    The default instance is silent and never cancelled; adapters (Processing feedback, QgsTask)
    pass callables.
    """

    def __init__(
        self,
        on_progress: Callable[[float], None] | None = None,
        on_log: Callable[[str], None] | None = None,
        is_cancelled: Callable[[], bool] | None = None,
    ):
        self._on_progress = on_progress
        self._on_log = on_log
        self._is_cancelled = is_cancelled

    def set(self, percent: float) -> None:
        if self._on_progress is not None:
            self._on_progress(max(0.0, min(100.0, float(percent))))

    def log(self, message: str) -> None:
        if self._on_log is not None:
            self._on_log(message)

    def cancelled(self) -> bool:
        return bool(self._is_cancelled and self._is_cancelled())

    def check(self) -> None:
        """Raise Cancelled if the user asked to stop; call between blocks and model calls."""
        if self.cancelled():
            raise Cancelled()

    def scaled(self, start: float, end: float) -> Progress:
        """A child reporter whose 0-100 maps onto start-end of this one."""
        span = end - start
        return Progress(lambda p: self.set(start + span * p / 100.0), self._on_log, self._is_cancelled)

    def monotone(self) -> Progress:
        """A reporter of this one's that never reports less than it has already reported: a run's stages each
        report their own span, and a bar stepping back (96 % to 94 %) reads as work undone."""
        highest = [-1.0]

        def forward(percent: float) -> None:
            percent = max(0.0, min(100.0, float(percent)))
            if percent > highest[0]:
                highest[0] = percent
                self.set(percent)

        return Progress(forward, self._on_log, self._is_cancelled)


SILENT = Progress()
