"""AnalysisTask: the engine runs in a worker thread, results and events reach the main thread,
cancellation stops it within a second, and failures become messages."""
from __future__ import annotations

import threading
import time

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from qgis.core import QgsApplication
from rasterio.transform import from_origin
from shapely.geometry import box

from lodestar.plugin.analysis import AnalysisRequest, AnalysisResult
from lodestar.plugin.errors import LodestarError
from lodestar.plugin.raster_io import LayerSpec
from lodestar.ui.task import AnalysisTask, start, wait_for

CRS = "EPSG:32612"


@pytest.fixture
def request_(tmp_path):
    data = np.zeros((20, 20), dtype="float32")
    data[5:10, 5:10] = 1.0
    path = tmp_path / "aloh.tif"
    with rasterio.open(path, "w", driver="GTiff", width=20, height=20, count=1, dtype="float32", crs=CRS,
                       transform=from_origin(500000, 4000000, 30, 30)) as ds:
        ds.write(data, 1)
    return AnalysisRequest([LayerSpec(path, "hydrothermal_alteration")], "Deposits? Answer: A. Yes B. No.",
                           tmp_path / "run")


def _frames():
    zone = box(500150, 3999700, 500300, 3999850)
    zones = gpd.GeoDataFrame({"zone_id": ["aloh:1"], "role": ["hydrothermal_alteration"]}, geometry=[zone], crs=CRS)
    prospectivity = gpd.GeoDataFrame({"rank": [1], "score": [0.8]}, geometry=[zone.buffer(30)], crs=CRS)
    edges = gpd.GeoDataFrame({"type": []}, geometry=gpd.GeoSeries([], crs=CRS), crs=CRS)
    return zones, zones.copy(), edges, prospectivity


def _collect(task):
    seen = {"events": [], "threads": set(), "succeeded": [], "failed": [], "cancelled": 0}
    task.engine_event.connect(lambda e: (seen["events"].append(e["kind"]), seen["threads"].add(threading.get_ident())))
    task.succeeded.connect(seen["succeeded"].append)
    task.failed.connect(seen["failed"].append)
    task.cancelled.connect(lambda: seen.__setitem__("cancelled", seen["cancelled"] + 1))
    return seen


def test_result_and_events_reach_the_main_thread(qgis_app, request_):
    worker = {}

    def engine(request, progress, on_event):
        worker["thread"] = threading.get_ident()
        on_event({"kind": "plan", "steps": []})
        progress.set(50)
        on_event({"kind": "done"})
        return AnalysisResult("A", "Yes", True, False, 1, *_frames())

    task = AnalysisTask(request_, engine=engine)
    seen = _collect(task)
    start(task)
    assert wait_for(task, 10)
    assert worker["thread"] != threading.get_ident()
    assert seen["events"] == ["plan", "done"]
    assert seen["threads"] == {threading.get_ident()}
    [result] = seen["succeeded"]
    assert result.answer == "A" and seen["failed"] == [] and seen["cancelled"] == 0
    # the frames the engine did not write were written into the run folder
    assert {k: result.outputs[k].name for k in ("zones", "nodes", "prospectivity")} == {
        "zones": "zones.gpkg", "nodes": "nodes.gpkg", "prospectivity": "prospectivity.gpkg"}
    back = gpd.read_file(result.outputs["prospectivity"])
    assert list(back["rank"]) == [1] and back.crs.to_epsg() == 32612


def test_cancel_stops_at_the_next_check_and_gives_no_result(qgis_app, request_):
    started = threading.Event()
    blocks = {"done": 0, "at_cancel": None}

    def engine(request, progress, on_event):
        started.set()
        for _ in range(3000):  # 30 s of work in 10 ms blocks, checking between blocks like the engine does
            progress.check()
            time.sleep(0.01)
            blocks["done"] += 1
        return AnalysisResult("A", "Yes", True, False, 1, *_frames())

    task = AnalysisTask(request_, engine=engine)
    seen = _collect(task)
    start(task)
    assert started.wait(10)
    time.sleep(0.1)
    task.cancel()
    blocks["at_cancel"] = blocks["done"]  # read after the cancel: at most the block under way ends after it
    assert wait_for(task, 5)
    assert blocks["done"] - blocks["at_cancel"] <= 1  # the block under way ends; the next check stops the run
    assert seen["cancelled"] == 1 and seen["succeeded"] == [] and seen["failed"] == []
    assert task.result is None
    assert not (request_.output_dir / "zones.gpkg").exists()


def test_engine_errors_become_messages(qgis_app, request_):
    def user_error(request, progress, on_event):
        raise LodestarError("The layers do not overlap: a, b. Choose layers that cover a common area.")

    def bug(request, progress, on_event):
        return {}["missing"]

    for engine, expected in ((user_error, "do not overlap"), (bug, "unexpected error: KeyError")):
        task = AnalysisTask(request_, engine=engine)
        seen = _collect(task)
        start(task)
        assert wait_for(task, 10)
        [message] = seen["failed"]
        assert expected in message
        assert seen["succeeded"] == [] and seen["cancelled"] == 0


def test_task_manager_lists_the_task_while_it_runs(qgis_app, request_):
    release = threading.Event()

    def engine(request, progress, on_event):
        release.wait(10)
        progress.check()
        return AnalysisResult("B", "No", False, True, 3, *_frames())

    task = AnalysisTask(request_, "Lodestar: test run", engine=engine)
    start(task)
    try:
        assert any(t.description() == "Lodestar: test run" for t in QgsApplication.taskManager().activeTasks())
        assert task.canCancel()
    finally:
        release.set()
    assert wait_for(task, 10)
    assert task.result.voted and task.result.rounds == 3


def test_the_api_key_is_masked_in_messages_and_the_log(qgis_app, request_):
    key = "sk-task-secret-123456"
    request_.settings.backend = "openai"
    request_.settings.api_key = key
    logged, lines = [], []
    QgsApplication.messageLog().messageReceived.connect(lambda msg, tag, level: logged.append(msg))

    def leaky(request, progress, on_event):
        progress.log(f"calling with {key}")
        raise RuntimeError(f"server said: bad key {key}")

    task = AnalysisTask(request_, engine=leaky)
    seen = _collect(task)
    task.logged.connect(lines.append)
    start(task)
    assert wait_for(task, 10)
    QgsApplication.processEvents()
    assert seen["failed"] == ["Lodestar stopped on an unexpected error: RuntimeError: server said: bad key ***"]
    assert lines == ["calling with ***"]
    assert any("Traceback" in m for m in logged) and not any(key in m for m in logged)


def test_a_placeholder_key_does_not_mangle_messages(qgis_app, request_):
    request_.settings.backend = "openai"
    request_.settings.api_key = "x"  # what local servers accept; masking it would hit every x of every message

    def failing(request, progress, on_event):
        raise RuntimeError("the next request exceeded the context")

    task = AnalysisTask(request_, engine=failing)
    seen = _collect(task)
    start(task)
    assert wait_for(task, 10)
    QgsApplication.processEvents()
    assert seen["failed"] == ["Lodestar stopped on an unexpected error: RuntimeError: the next request exceeded the "
                              "context"]
