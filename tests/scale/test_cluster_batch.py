"""lodestar:analyze_cases' batch on a real Dask cluster (distributed.LocalCluster, 2 worker processes) through
its scheduler address: both workers run cases, the table equals the serial run's, a worker killed in the middle
of a case loses nothing, a case whose workers keep dying is recorded as failed, a cancel stops the batch."""
from __future__ import annotations

import csv
import logging
import os
import signal
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
import rasterio
import synthetic_cases
from distributed import Client

sys.path.insert(0, str(Path(__file__).resolve().parent))  # cluster_helpers, importable on the spawned workers

import cluster_helpers  # noqa: E402

from lodestar.models import run_analysis  # noqa: E402
from lodestar.plugin.errors import Cancelled  # noqa: E402
from lodestar.plugin.progress import Progress  # noqa: E402
from lodestar.plugin.runs.batch import ERROR, run_batch  # noqa: E402

KINDS = ("porphyry", "barren", "epithermal", "lithology_clay", "single_layer", "porphyry")
VARYING = ("seconds", "timings", "output_dir", "worker")  # where and how fast a case ran, not what it found


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    root = tmp_path_factory.mktemp("cases")
    for i, kind in enumerate(KINDS):
        synthetic_cases.make_case(root / f"c{i}", 40 + i, kind, 96, case_id=f"case-{i}", mixed_crs=False)
    return root


@pytest.fixture(scope="module")
def serial(cases, tmp_path_factory):
    return run_batch(cases, tmp_path_factory.mktemp("serial"), analyse=run_analysis)


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.CRITICAL) as local:
        yield local


def _found(outcomes) -> list[dict]:
    return [{k: v for k, v in asdict(row).items() if k not in VARYING} for row in outcomes]


def _workers(cluster) -> set:
    return set(cluster.scheduler_info["workers"])


def test_cases_run_on_both_workers_and_the_table_equals_the_serial_run(cases, serial, cluster, tmp_path):
    lines = []
    result = run_batch(cases, tmp_path / "out", analyse=run_analysis, scheduler=cluster.scheduler_address,
                       progress=Progress(on_log=lines.append))
    assert [row.case_id for row in result.outcomes] == [f"case-{i}" for i in range(len(KINDS))]
    assert _found(result.outcomes) == _found(serial.outcomes)
    assert not any(row.error for row in result.outcomes)
    assert {row.worker for row in result.outcomes} == _workers(cluster)  # both workers ran cases
    assert all(row.worker == "" for row in serial.outcomes)
    with open(result.table, newline="") as fh:
        table = list(csv.DictReader(fh))
    assert [r["case_id"] for r in table] == [row.case_id for row in result.outcomes]
    assert [r["worker"] for r in table] == [row.worker for row in result.outcomes]
    assert {k: v for k, v in result.summary.items() if k != "seconds_per_case"} == {
        k: v for k, v in serial.summary.items() if k != "seconds_per_case"}
    assert any(f"on {result.outcomes[0].worker}" in line for line in lines)
    assert any(line.startswith(f"[{len(KINDS)}/{len(KINDS)}]") for line in lines)


def test_a_worker_killed_in_the_middle_of_a_case_loses_nothing(cases, serial, cluster, tmp_path):
    out = tmp_path / "out"
    box = {}

    def run():
        box["result"] = run_batch(cases, out, scheduler=cluster.scheduler_address,
                                  analyse=cluster_helpers.slow_analyse)

    thread = threading.Thread(target=run)
    thread.start()
    marker = out / "case-0.started"
    while not marker.exists() and thread.is_alive():
        time.sleep(0.05)
    killed_pid = int(marker.read_text())
    with Client(cluster.scheduler_address, set_as_default=False) as client:
        killed = {pid: address for address, pid in client.run(os.getpid).items()}[killed_pid]
    os.kill(killed_pid, signal.SIGKILL)
    thread.join()
    result = box["result"]
    assert _found(result.outcomes) == _found(serial.outcomes)  # every case, and the same answers
    row = result.outcomes[0]
    assert not row.error and row.worker and row.worker != killed  # re-run elsewhere
    assert int(marker.read_text()) != killed_pid


def test_a_case_whose_workers_keep_dying_is_recorded_as_failed_with_the_reason(cases, serial, cluster, tmp_path):
    doomed = tmp_path / "doomed"
    synthetic_cases.make_case(doomed / "d", 3, "barren", 96, case_id=cluster_helpers.DOOMED)
    paths = [cases / "c0" / "case.json", doomed / "d" / "case.json", cases / "c1" / "case.json"]
    result = run_batch(paths, tmp_path / "out", scheduler=cluster.scheduler_address,
                       analyse=cluster_helpers.doomed_analyse)
    assert [row.case_id for row in result.outcomes] == ["case-0", cluster_helpers.DOOMED, "case-1"]
    failed = result.outcomes[1]
    assert failed.answer == ERROR and failed.truth == "B" and failed.correct == "no"
    assert failed.error.startswith("Failed: the worker running it died (tcp://")
    assert failed.error.count("tcp://") == 2 and "after one retry elsewhere" in failed.error
    assert _found([result.outcomes[0], result.outcomes[2]]) == _found(serial.outcomes[:2])
    assert result.summary["errors"] == 1


def test_a_cancel_stops_submitting_and_cancels_the_cases_on_the_cluster(cases, cluster, tmp_path):
    out = tmp_path / "out"
    lines = []
    progress = Progress(on_log=lines.append, is_cancelled=lambda: any(line.startswith("[1/") for line in lines))
    with pytest.raises(Cancelled):
        run_batch(cases, out, scheduler=cluster.scheduler_address, progress=progress,
                  analyse=cluster_helpers.slow_analyse)
    started = sorted(p.name for p in out.glob("*.started"))
    # 2 workers x 1 thread x 2 in flight were submitted; the last two cases never were
    assert "case-4.started" not in started and "case-5.started" not in started
    assert not (out / "results.csv").exists()
    deadline = time.monotonic() + 30
    while any(str(key).startswith("lodestar-case-") for key in cluster.scheduler.tasks) and \
            time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [key for key in cluster.scheduler.tasks if str(key).startswith("lodestar-case-")]


def test_a_full_resolution_surface_made_on_the_cluster_equals_the_local_one(cluster, tmp_path):
    from lodestar.plugin.favourability import blockwise
    from lodestar.plugin.favourability.evidence import EvidenceSpec
    from lodestar.plugin.request.case import read_case

    case = read_case(synthetic_cases.make_case(tmp_path / "c", 1, "porphyry", 100, mixed_crs=False))
    names = {layer.path.name: layer.name for layer in case.layers}
    specs = [EvidenceSpec(names["aloh.tif"], "hydrothermal_alteration", "index", "percentile_rank", "large",
                          {"midpoint": 0.6, "spread": 4.0}, 2.0),
             EvidenceSpec(names["faults.geojson"], "structure", "lines", "distance_m", "small",
                          {"midpoint": 300.0, "spread": 3.0}, 1.0)]
    lines = []
    local = blockwise.write_full_resolution(case.layers, specs, tmp_path / "local.tif", block=32)
    remote = blockwise.write_full_resolution(case.layers, specs, tmp_path / "remote.tif", block=32,
                                             scheduler=cluster.scheduler_address,
                                             progress=Progress(on_log=lines.append))
    with rasterio.open(local) as a, rasterio.open(remote) as b:
        assert np.array_equal(a.read(1), b.read(1)) and b.overviews(1) == [2]
    assert any("Dask cluster" in line for line in lines)


def test_a_worker_started_on_its_own_gets_the_plugin_through_the_path_plugin(cases, serial, tmp_path):
    """`dask worker tcp://...` started apart (not by this process, so nothing of its sys.path): the batch's client
    registers the plugin's folder on it, and it runs the case."""
    import importlib.util
    import subprocess

    from distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=True, dashboard_address=None,
                      silence_logs=logging.CRITICAL) as scheduler_only:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
        address = scheduler_only.scheduler_address
        worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                                   "--no-nanny", "--no-dashboard"], cwd=str(tmp_path), env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            with Client(address, set_as_default=False) as client:
                client.wait_for_workers(1, timeout=60)
                assert list(client.run(importlib.util.find_spec, "lodestar").values()) == [None]
            result = run_batch([cases / "c1" / "case.json"], tmp_path / "out", analyse=run_analysis,
                               scheduler=address)
            assert _found(result.outcomes) == _found(serial.outcomes[1:2])
            assert result.outcomes[0].worker in scheduler_only.scheduler_info["workers"]
        finally:  # a dask worker's graceful close on SIGTERM can hang (distributed 2022.12): then it is killed
            worker.terminate()
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait(timeout=30)
