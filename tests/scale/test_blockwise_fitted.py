"""Calibrated surfaces at full resolution block by block (plugin.favourability.blockwise_fitted, issue 62 item 4):
where the full-resolution grid is the analysis grid, the chosen model's full fit and its uncertainty equal the
in-memory calibration cell for cell, on a case whose every kind of evidence is measured block by block (raster
values with a hole, raster unit codes, unit polygons, the distance to fault lines, the fault density within 2 and
5 km, the distance to unit contacts), in blocks far smaller than the grid."""
from __future__ import annotations

import json

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from lodestar_testdata import write_geotiff
from rasterio.transform import from_origin
from scipy.ndimage import gaussian_filter
from shapely.geometry import LineString, box

from lodestar.plugin.errors import Cancelled, LodestarError
from lodestar.plugin.favourability import models
from lodestar.plugin.favourability.blockwise_fitted import write_fitted_full_resolution
from lodestar.plugin.favourability.calibration import calibrate
from lodestar.plugin.favourability.measured import measured_evidence
from lodestar.plugin.favourability.outputs import NODATA
from lodestar.plugin.progress import Progress
from lodestar.plugin.raster_io import LayerSpec, RasterSet
from lodestar.plugin.reason.workspace import describe_layers

pytest.importorskip("sklearn")
X0, Y0, PX, ROWS, COLS = 500_000.0, 4_100_000.0, 100.0, 96, 120
BLOCK = 32  # 12 blocks of a 96 x 120 grid: density discs of 5 km (50 cells) and contacts reach across several


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    """A 96 x 120 grid of 100 m: a grade raster (float32, a nodata hole), a geology raster of 4 units with a
    legend (neither holding data in the bottom-right corner), unit polygons, 7 fault lines, and 45 deposits drawn
    where the grade is high, on unit 2 more."""
    folder = tmp_path_factory.mktemp("fitted")
    rng = np.random.default_rng(4)
    transform = from_origin(X0, Y0, PX, PX)
    grade = gaussian_filter(rng.normal(size=(ROWS, COLS)), 6)
    grade = (grade - grade.mean()) / grade.std()
    stored = grade.astype("float32")
    stored[40:52, 10:30] = -9999.0
    geology = (1 + (gaussian_filter(rng.normal(size=(ROWS, COLS)), 10) > 0) + 2 * (np.arange(COLS) > 70)[None, :]
               ).astype("uint8")
    stored[-10:, -15:] = -9999.0
    geology[-10:, -15:] = 0  # a corner where no raster has data: outside the study area
    (folder / "legend.csv").write_text("value,name\n1,basalt\n2,shale\n3,granite\n4,limestone\n", encoding="utf-8")
    faults = [LineString([(X0 + rng.uniform(0, COLS * PX), Y0 - rng.uniform(0, ROWS * PX)),
                          (X0 + rng.uniform(0, COLS * PX), Y0 - rng.uniform(0, ROWS * PX))]) for _ in range(7)]
    gpd.GeoDataFrame({"name": [f"f{k}" for k in range(7)]}, geometry=faults, crs="EPSG:32611").to_file(
        folder / "faults.gpkg", driver="GPKG")
    gpd.GeoDataFrame({"unit": ["dolerite", "chert"]},
                     geometry=[box(X0 + 500, Y0 - 6000, X0 + 5000, Y0 - 1000), box(X0 + 6000, Y0 - 9000,
                                                                                 X0 + 11000, Y0 - 4000)],
                     crs="EPSG:32611").to_file(folder / "units.gpkg", driver="GPKG")
    layers = [LayerSpec(write_geotiff(folder / "grade.tif", stored, transform, nodata=-9999.0), "geochemistry",
                        "grade"),
              LayerSpec(write_geotiff(folder / "geology.tif", geology, transform, nodata=0), "geological_map",
                        "geology", legend=folder / "legend.csv"),
              LayerSpec(folder / "faults.gpkg", "structure", "faults"),
              LayerSpec(folder / "units.gpkg", "geological_map", "unit polygons")]
    weight = (np.exp(1.5 * grade + (geology == 2)) * (geology > 0)).ravel()
    cells = rng.choice(weight.size, 45, replace=False, p=weight / weight.sum())
    rows, cols = np.divmod(cells, COLS)
    xy = [(X0 + (c + 0.5) * PX, Y0 - (r + 0.5) * PX) for r, c in zip(rows, cols)]
    return layers, xy


@pytest.fixture
def small(monkeypatch):
    monkeypatch.setattr(models, "FOREST_TREES", 8)
    monkeypatch.setattr(models, "BOOSTING_ROUNDS", 15)
    monkeypatch.setitem(models.GRIDS, "logistic", ({"c": 0.1}, {"c": 1.0}))
    monkeypatch.setitem(models.GRIDS, "forest", ({"min_samples_leaf": 5},))
    monkeypatch.setitem(models.GRIDS, "boosting", ({"max_leaf_nodes": 7, "min_samples_leaf": 5},))


def fitted(case, method: str):
    layers, xy = case
    raster_set = RasterSet(layers, max_pixels=10**9)
    measured, left_out = measured_evidence(raster_set, describe_layers(raster_set))
    assert not left_out and [layer.name for layer in measured] == [
        "grade", "geology", "faults", "unit polygons", "geology: distance to a unit contact",
        "faults: fault density within 2 km", "faults: fault density within 5 km",
        "unit polygons: distance to a unit contact"]
    assert (raster_set.grid.width, raster_set.grid.height) == (COLS, ROWS)
    return raster_set, calibrate(measured, raster_set.grid, xy, method, folds=4, block_size_m=3000.0)


@pytest.mark.parametrize("method", ["best", "wofe", "logistic"])
def test_the_full_resolution_surface_equals_the_full_fit_where_the_grids_coincide(case, small, tmp_path, method):
    """The ensemble ("best"), weights of evidence and logistic regression (its uncertainty: the fold models' spread):
    both bands equal the calibration's full fit and uncertainty, float32 for float32, NODATA outside the study area."""
    raster_set, cal = fitted(case, method)
    assert cal.method == ("ensemble" if method == "best" else method)
    lines = []
    path = write_fitted_full_resolution(case[0], cal.model, tmp_path / "full.tif", spread=cal.spread, block=BLOCK,
                                        progress=Progress(on_log=lines.append))
    with rasterio.open(path) as src:
        assert (src.width, src.height, src.count) == (COLS, ROWS, 2) and src.nodata == NODATA
        assert src.transform.almost_equals(raster_set.grid.transform)
        assert src.profile["tiled"] and src.profile["compress"] == "deflate"
        favourability, uncertainty = src.read(1), src.read(2)
        assert src.descriptions[1].startswith("uncertainty: ")
    want = cal.full.filled(NODATA)
    assert np.array_equal(favourability == NODATA, want == NODATA) and (want == NODATA).sum() > 0
    assert np.array_equal(favourability, want)
    assert np.array_equal(uncertainty, cal.uncertainty.filled(NODATA))
    assert float(np.ptp(want[want != NODATA])) > 0.9 and float(cal.uncertainty.max()) > 0
    assert any(f"{COLS} x {ROWS} pixels in blocks of {BLOCK}" in line for line in lines)


def test_a_cancel_leaves_no_surface(case, small, tmp_path):
    _, cal = fitted(case, "wofe")
    calls = []
    with pytest.raises(Cancelled):
        write_fitted_full_resolution(case[0], cal.model, tmp_path / "cancelled.tif", block=BLOCK,
                                     progress=Progress(calls.append, None, lambda: len(calls) > 3))
    assert not (tmp_path / "cancelled.tif").exists() and not list(tmp_path.iterdir())


@pytest.mark.parametrize("method", ["logistic", "best"])
def test_a_calibrated_runs_surface_at_full_resolution_is_its_own(case, small, tmp_path, method):
    """An offline run calibrated on the case's deposits keeps its model beside its record (the full fit and, for a
    single model, its fold models: data files with the record's checksums); the run's surface at full resolution
    (write_run_surface, as OUTPUT_FAVOURABILITY_FULL makes it) is then the calibrated one, its two bands the run's
    favourability.tif and uncertainty.tif cell for cell (the case is under the pixel budget: one grid). A replay
    writes the same model files, byte for byte; a model file changed since the run is refused, and nothing written."""
    from lodestar.models import run_analysis
    from lodestar.plugin.analysis import AnalysisRequest
    from lodestar.plugin.favourability.blockwise_fitted import write_run_surface

    layers, xy = case
    deposits = tmp_path / "deposits.gpkg"
    gpd.GeoDataFrame(geometry=gpd.points_from_xy(*zip(*xy)), crs="EPSG:32611").to_file(deposits, driver="GPKG")
    result = run_analysis(AnalysisRequest(layers, "Where are orogenic gold deposits likely?", tmp_path / "run",
                                          {"A": "Yes", "B": "No"}, deposits=deposits, calibrate=method,
                                          cross_validation={"folds": 4, "block_size_m": 3000.0}))
    record = result.outputs["record"]
    written = json.loads(record.read_text(encoding="utf-8"))
    assert written["favourability"]["basis"] == "calibrated", written["favourability"]["notes"]
    assert ("fold_models" in written["outputs"]) == (method == "logistic") and "model" in written["outputs"]
    path = write_run_surface(record, layers, result.zones, tmp_path / "full.tif", block=BLOCK)
    with rasterio.open(path) as full, rasterio.open(result.outputs["favourability"]) as fav, \
            rasterio.open(result.outputs["uncertainty"]) as spread:
        assert (full.width, full.height) == (fav.width, fav.height) and full.count == 2
        assert np.array_equal(full.read(1), fav.read(1)) and np.array_equal(full.read(2), spread.read(1))
        assert full.tags()["LODESTAR_METHOD"].startswith("calibrated: ")
    replay = run_analysis(AnalysisRequest([], "", tmp_path / "replay", replay=record))
    check = json.loads(replay.outputs["record"].read_text(encoding="utf-8"))["replay_check"]
    assert {"model", "favourability", "uncertainty"} <= set(check["same"]) and not check["different"]  # same bytes
    (tmp_path / "run" / written["outputs"]["model"]["file"]).write_bytes(b"not the run's model")
    with pytest.raises(LodestarError, match="not the one the run wrote"):
        write_run_surface(record, layers, result.zones, tmp_path / "again.tif", block=BLOCK)
    assert not (tmp_path / "again.tif").exists()
