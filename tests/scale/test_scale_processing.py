"""DASK_SCHEDULER and the full-resolution surface through real Processing (lodestar:analyze, lodestar:analyze_cases)."""
from __future__ import annotations

import csv
import logging

import numpy as np
import pytest
import rasterio
import synthetic_cases


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    return synthetic_cases.make_case(tmp_path_factory.mktemp("case") / "c", 1, "porphyry", 100, case_id="full",
                                     mixed_crs=False)


def test_analyze_writes_the_surface_at_full_resolution(run, case, tmp_path):
    result = run("lodestar:analyze", {"CASE": str(case), "BACKEND": 0, "MAX_ROUNDS": 1,
                                      "OUTPUT_FAVOURABILITY": str(tmp_path / "fav.tif"),
                                      "OUTPUT_FAVOURABILITY_FULL": str(tmp_path / "full.tif"),
                                      "OUTPUT_REPORT": str(tmp_path / "r.html"),
                                      "OUTPUT_RECORD": str(tmp_path / "record.json")})
    assert result["OUTPUT_FAVOURABILITY_FULL"] == str(tmp_path / "full.tif")
    with rasterio.open(tmp_path / "fav.tif") as budget, rasterio.open(tmp_path / "full.tif") as full:
        # the case is under the pixel budget: its analysis grid is the full-resolution grid, so the
        # knowledge-driven surface made again block by block is the run's own surface
        assert (full.width, full.height) == (budget.width, budget.height)
        assert np.array_equal(full.read(1), budget.read(1))
        assert full.profile["tiled"] and full.profile["compress"] == "deflate" and full.overviews(1)
        assert full.tags()["LODESTAR_LAYERS"] == budget.tags()["LODESTAR_LAYERS"]


def test_analyze_leaves_the_full_resolution_surface_out_unless_asked(run, case, tmp_path):
    result = run("lodestar:analyze", {"CASE": str(case), "BACKEND": 0, "MAX_ROUNDS": 1,
                                      "OUTPUT_REPORT": str(tmp_path / "r.html")})
    assert "OUTPUT_FAVOURABILITY_FULL" not in result or not result["OUTPUT_FAVOURABILITY_FULL"]


def test_analyze_cases_runs_on_the_scheduler_given(run, case, tmp_path):
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None,
                      silence_logs=logging.CRITICAL) as cluster:
        result = run("lodestar:analyze_cases", {"CASES": str(case.parent), "BACKEND": 0, "MAX_ROUNDS": 1,
                                                "DASK_SCHEDULER": cluster.scheduler_address,
                                                "OUTPUT_FOLDER": str(tmp_path / "out")})
        workers = set(cluster.scheduler_info["workers"])
    with open(result["OUTPUT_CSV"], newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["case_id"] for r in rows] == ["full"] and rows[0]["answer"] in ("A", "B")
    assert {rows[0]["worker"]} == workers


def test_a_scheduler_that_is_not_an_address_is_refused(run, case, tmp_path, monkeypatch):
    from qgis.core import QgsProcessingException

    from lodestar.plugin import cluster

    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT_S", 1)  # nothing listens: the wait is all the connection does

    with pytest.raises(QgsProcessingException, match="write it as tcp://host:8786"):
        run("lodestar:analyze_cases", {"CASES": str(case.parent), "DASK_SCHEDULER": "my-cluster",
                                       "OUTPUT_FOLDER": str(tmp_path / "out")})
    with pytest.raises(QgsProcessingException, match="Cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        run("lodestar:analyze_cases", {"CASES": str(case.parent), "DASK_SCHEDULER": "tcp://127.0.0.1:9",
                                       "OUTPUT_FOLDER": str(tmp_path / "out")})
