"""A cancel while a 20,000 x 20,000 raster loads stops the run inside the load (the reader checks between blocks),
through the core, the background task and unloading the plugin (issue 13, item 2); nothing of the cancelled run stays
on disk. How soon it stops is a figure, not an assertion: tests/benchmarks/bench_cancel.py measures it beside a whole
read of the same raster."""
from __future__ import annotations

import shutil
import threading
import time
import traceback

import pytest
import rasterio
from rasterio.transform import from_origin

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.errors import Cancelled
from lodestar.plugin.progress import Progress
from lodestar.plugin.raster_io import LayerSpec
from lodestar.ui.task import AnalysisTask, run_engine, start, wait_for

pytestmark = pytest.mark.timing  # asserts how soon a cancel ends the run (tests/conftest.py)

SIZE = 20_000
QUESTION = "Can porphyry copper deposits be detected here? Answer: A. Yes B. No."
LOADING_S = 0.4  # when the cancel comes: well inside the load (several seconds without a cancel)


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    """A 20,000 x 20,000 GeoTIFF made in milliseconds: tiled, compressed, and sparse (no block is stored, every
    pixel reads as 0), so reading it costs what reading any raster of that size costs."""
    path = tmp_path_factory.mktemp("large") / "aloh.tif"
    with rasterio.open(path, "w", driver="GTiff", width=SIZE, height=SIZE, count=1, dtype="uint8",
                       crs="EPSG:32612", transform=from_origin(500_000, 4_000_000, 30, 30), tiled=True,
                       blockxsize=512, blockysize=512, compress="deflate", sparse_ok=True):
        pass
    assert path.stat().st_size < 100_000
    return path


def _request(large, out) -> AnalysisRequest:
    return AnalysisRequest([LayerSpec(large, "hydrothermal_alteration")], QUESTION, out)


def test_core_cancel_while_a_large_raster_loads(large, tmp_path):
    flag = threading.Event()
    outcome = {}

    def work():
        try:
            run_analysis(_request(large, tmp_path / "run"), Progress(is_cancelled=flag.is_set))
        except Cancelled as exc:
            outcome["stopped"] = time.monotonic()
            outcome["frames"] = [f.filename.replace("\\", "/") for f in traceback.extract_tb(exc.__traceback__)]

    worker = threading.Thread(target=work)
    worker.start()
    time.sleep(LOADING_S)
    asked = time.monotonic()
    flag.set()
    worker.join(30)
    assert not worker.is_alive() and "stopped" in outcome and outcome["stopped"] > asked
    assert any(name.endswith("plugin/raster_io.py") for name in outcome["frames"])  # stopped inside the load
    assert not (tmp_path / "run").exists()


def test_task_cancel_while_a_large_raster_loads(qgis_app, large, tmp_path):
    out = tmp_path / "run"
    out.mkdir()  # as the dock makes it before the task starts
    frames = []

    def engine(request, progress, on_event):  # the task's own engine, with where the cancel stopped it kept
        try:
            return run_engine(request, progress, on_event)
        except Cancelled as exc:
            frames.extend(f.filename.replace("\\", "/") for f in traceback.extract_tb(exc.__traceback__))
            raise

    task = AnalysisTask(_request(large, out), engine=engine)
    cancelled = []
    task.cancelled.connect(lambda: cancelled.append(time.monotonic()))
    start(task)
    time.sleep(LOADING_S)
    task.cancel()
    assert wait_for(task, 30)
    assert cancelled and cancelled[0] > task.cancel_requested_at
    assert any(name.endswith("plugin/raster_io.py") for name in frames)  # stopped inside the load
    assert task.result is None and task.error == ""
    assert not out.exists()  # no evidence/, and no empty run folder


def test_unloading_the_plugin_during_a_load_does_not_block(qgis_app, qgis_iface, large, tmp_path):
    import importlib

    from qgis.PyQt.QtCore import QCoreApplication, QEvent

    plugin = importlib.import_module("lodestar").classFactory(qgis_iface)
    plugin.initGui()
    plugin.action.trigger()  # the dock is open
    out = tmp_path / "run"
    out.mkdir()
    task = AnalysisTask(_request(large, out))
    plugin.dock.task, plugin.dock.run_folder = task, out  # a run in flight, wired as the dock's Run wires one
    task.succeeded.connect(plugin.dock._succeeded)
    task.failed.connect(plugin.dock._failed)
    task.cancelled.connect(plugin.dock._cancelled)
    start(task)
    time.sleep(LOADING_S)
    asked = time.monotonic()
    plugin.unload()
    assert time.monotonic() - asked < 2.0  # QGIS is not held: unload waits UNLOAD_WAIT_S (0.9 s) at most
    QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)
    assert wait_for(task, 30)  # and the task itself is gone soon after
    assert plugin.dock is None and not out.exists()


def test_unloading_while_the_engine_is_deaf_returns_at_once_and_leaves_no_folder(qgis_app, qgis_iface, large,
                                                                                  tmp_path):
    """Work that does not check for a cancel for 3 s (one long call): unloading returns after its own short wait
    (well before the call ends); the task ends by itself at its next check, and what it wrote after the dock let go
    is removed."""
    import importlib

    from qgis.PyQt.QtCore import QCoreApplication, QEvent

    out = tmp_path / "run"
    out.mkdir()
    entered = threading.Event()

    def deaf(request, progress, on_event):
        (out / "evidence").mkdir()
        entered.set()
        time.sleep(3.0)  # one long call that cannot be interrupted
        try:
            progress.check()
        finally:
            shutil.rmtree(out / "evidence", ignore_errors=True)  # as the engine removes what it made
        raise AssertionError("the cancel was not seen")

    plugin = importlib.import_module("lodestar").classFactory(qgis_iface)
    plugin.initGui()
    plugin.action.trigger()
    task = AnalysisTask(_request(large, out), engine=deaf)
    plugin.dock.task, plugin.dock.run_folder = task, out
    task.succeeded.connect(plugin.dock._succeeded)
    task.failed.connect(plugin.dock._failed)
    task.cancelled.connect(plugin.dock._cancelled)
    start(task)
    assert entered.wait(10)
    asked = time.monotonic()
    plugin.unload()
    assert time.monotonic() - asked < 2.0  # unload waits UNLOAD_WAIT_S (0.9 s), not for the call
    QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)
    assert wait_for(task, 10)
    assert not out.exists()
