"""Connecting to a Dask scheduler that accepts and never answers (a silent TCP listener as the address): a cancel
ends the wait within a second with the run's usual "Cancelled by the user.", in the core and for Ctrl+C (SIGINT) to
qgis_process. Before, the connection held for its whole timeout, then said it could not reach the scheduler."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
import synthetic_cases

from lodestar.plugin import cluster
from lodestar.plugin.errors import Cancelled
from lodestar.plugin.favourability.blockwise import run_blocks
from lodestar.plugin.progress import Progress

ROOT = Path(__file__).resolve().parents[2]


class Silent:
    """A TCP listener that accepts every connection and never sends a byte; `accepted` is set at the first."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.address = f"tcp://127.0.0.1:{self.server.getsockname()[1]}"
        self.accepted = threading.Event()
        self.held: list = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:  # closed
                return
            self.held.append(connection)
            self.accepted.set()

    def close(self) -> None:
        self.server.close()
        for connection in self.held:
            connection.close()


@pytest.fixture
def silent():
    listener = Silent()
    yield listener
    listener.close()


def _cancelled_after(seconds: float) -> tuple[Progress, list]:
    asked: list = []
    start = time.perf_counter()

    def cancelled() -> bool:
        if not asked and time.perf_counter() - start >= seconds:
            asked.append(time.perf_counter())
        return bool(asked)

    return Progress(is_cancelled=cancelled), asked


def _cases(index, result, worker):
    raise AssertionError("no case can run on a scheduler that never answers")


@pytest.mark.timing
@pytest.mark.parametrize("how", ["connect", "blocks", "cases"])
def test_a_cancel_while_connecting_to_a_silent_scheduler_ends_within_a_second(silent, how):
    progress, asked = _cancelled_after(0.5)
    with pytest.raises(Cancelled, match="^Cancelled by the user.$"):
        if how == "connect":
            cluster.connect(silent.address, progress)
        elif how == "blocks":
            run_blocks(abs, (), [1, 2], scheduler=silent.address, progress=progress)
        else:
            cluster.map_on_cluster(silent.address, abs, abs, [(0, (1,))], progress, _cases, _cases)
    stopped = time.perf_counter()
    assert silent.accepted.is_set() and asked
    assert stopped - asked[0] < 1.0, f"stopped {stopped - asked[0]:.1f} s after the cancel"


@pytest.mark.timing
def test_sigint_to_qgis_process_while_it_connects_to_a_silent_scheduler_says_cancelled(silent, tmp_path):
    case = synthetic_cases.make_case(tmp_path / "cases" / "c", 1, "porphyry", 60, case_id="c", mixed_crs=False)
    env = dict(os.environ, LODESTAR_QGIS_HOME=str(tmp_path / "qgis"), QT_QPA_PLATFORM="offscreen")
    line_buffered = ["stdbuf", "-oL", "-eL"] if shutil.which("stdbuf") else []
    child = subprocess.Popen([*line_buffered, str(ROOT / "scripts" / "qgis_process.sh"), "run",
                              "lodestar:analyze_cases", "--", f"CASES={case.parent.parent}",
                              f"DASK_SCHEDULER={silent.address}", f"OUTPUT_FOLDER={tmp_path / 'out'}"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    lines: list = []
    reader = threading.Thread(target=lambda: lines.extend((time.monotonic(), line.rstrip()) for line in child.stdout),
                              daemon=True)
    reader.start()
    try:
        assert silent.accepted.wait(120), "\n".join(text for _, text in lines[-20:])
        time.sleep(0.3)  # inside the handshake that never comes
        asked = time.monotonic()
        child.send_signal(signal.SIGINT)
        child.wait(60)
    finally:
        if child.poll() is None:
            child.kill()
    reader.join(5)
    said = [(when, text) for when, text in lines if when >= asked]
    stopped = [when for when, text in said if "Cancelled by the user." in text]
    assert stopped, "\n".join(text for _, text in lines[-20:])
    assert stopped[0] - asked < 1.0, f"stopped {stopped[0] - asked:.1f} s after the SIGINT"
    assert not [text for _, text in said if "Cannot reach the Dask scheduler" in text]
    assert child.returncode != 0
