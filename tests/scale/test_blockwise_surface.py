"""Full-resolution surfaces block by block (plugin.favourability.blockwise): a surface on a raster larger than the
block budget equals the in-memory computation (plugin.favourability.overlay) on a small case."""
from __future__ import annotations

import numpy as np
import pytest
import rasterio
import synthetic_cases

from lodestar.plugin.errors import Cancelled
from lodestar.plugin.favourability import blockwise
from lodestar.plugin.favourability.evidence import EvidenceSpec
from lodestar.plugin.favourability.outputs import NODATA
from lodestar.plugin.favourability.overlay import favourability_surface
from lodestar.plugin.progress import Progress
from lodestar.plugin.raster_blocks import block_windows
from lodestar.plugin.raster_io import RasterSet
from lodestar.plugin.request.case import read_case

BLOCK = 24  # the case's grid is about 100 x 100 pixels: 25 blocks, none holding the whole raster


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    """Layers of different extents and resolutions (30, 60 and 90 m), a unit map and fault lines."""
    return read_case(synthetic_cases.make_case(tmp_path_factory.mktemp("case") / "c", 1, "porphyry", 100,
                                               case_id="full", mixed_crs=False))


def _specs(case) -> list:
    names = {layer.path.name: layer.name for layer in case.layers}
    codes = np.unique(rasterio.open(case.layers[0].path).read(1))
    return [
        EvidenceSpec(names["aloh.tif"], "hydrothermal_alteration", "index", "percentile_rank", "large",
                     {"midpoint": 0.6, "spread": 4.0}, 2.0),
        EvidenceSpec(names["silica.tif"], "silicification", "index", "log_percentile", "identity", {}, 1.0),
        EvidenceSpec(names["propylitic.tif"], "propylitic_alteration", "index", "none", "linear",
                     {"low": -0.5, "high": 1.5}, 0.5),
        EvidenceSpec(names["magnetics.tif"], "geophysics", "index", "percentile_rank", "invert", {}, 1.0),
        EvidenceSpec(names["faults.geojson"], "structure", "lines", "distance_m", "small",
                     {"midpoint": 300.0, "spread": 3.0}, 1.5),
        EvidenceSpec(names["geology.tif"], "geological_map", "units", "units", "identity",
                     {"units": [str(int(codes[1])), str(int(codes[2]))], "outside": 0.2}, 1.0),
    ]


def _in_memory(case, specs, method):
    raster_set = RasterSet(case.layers, max_pixels=10**9)
    return raster_set, favourability_surface(raster_set, specs, method=method, gamma=0.7)


@pytest.mark.parametrize("method", ["weighted", "gamma", "rank"])
def test_a_surface_made_block_by_block_equals_the_in_memory_one(case, tmp_path, method):
    """Every combination, the weighted mean of ranks too (each block's memberships ranked among the whole layer's)."""
    specs = _specs(case)
    raster_set, expected = _in_memory(case, specs, method)
    assert raster_set.grid.width * raster_set.grid.height > 9 * BLOCK * BLOCK
    lines = []
    path = blockwise.write_full_resolution(case.layers, specs, tmp_path / "full.tif", method, gamma=0.7, block=BLOCK,
                                           progress=Progress(on_log=lines.append))
    with rasterio.open(path) as src:
        got = src.read(1)
        assert (src.width, src.height) == (raster_set.grid.width, raster_set.grid.height)
        assert src.transform.almost_equals(raster_set.grid.transform) and src.crs.to_epsg() == 32755
        assert src.profile["tiled"] and src.profile["compress"] == "deflate" and src.overviews(1) == [2]
        assert src.tags()["LODESTAR_LAYERS"] == ", ".join(s.layer for s in specs)
        assert src.nodata == NODATA
    want = expected.values.filled(NODATA)
    assert np.array_equal(got == NODATA, want == NODATA) and (got == NODATA).sum() < got.size
    assert np.array_equal(got, want)  # the same float32 values, cell for cell
    assert float(np.ptp(want[want != NODATA])) > 0.3  # a surface with contrast, not a constant
    assert any(f"{raster_set.grid.width} x {raster_set.grid.height} pixels in blocks of {BLOCK}" in line
               for line in lines)


def test_the_dask_array_holds_the_same_surface(case):
    specs = _specs(case)
    raster_set, expected = _in_memory(case, specs, "weighted")
    full, grid = blockwise.full_resolution_grid(case.layers)
    plans = blockwise.plan_surface(full, specs, block=BLOCK)
    array = blockwise.surface_array(full, plans, block=BLOCK)
    assert array.numblocks == (-(-grid.height // BLOCK), -(-grid.width // BLOCK))
    assert np.array_equal(array.compute(scheduler="threads"), expected.values.filled(NODATA))


def test_percentiles_over_a_histogram_stay_close_on_large_layers(case, monkeypatch, tmp_path):
    specs = _specs(case)[:2]
    _, expected = _in_memory(case, specs, "weighted")
    monkeypatch.setattr(blockwise, "EXACT_CELLS", 100)  # as on a province-sized grid
    path = blockwise.write_full_resolution(case.layers, specs, tmp_path / "hist.tif", block=BLOCK)
    with rasterio.open(path) as src:
        got = src.read(1)
    want = expected.values.filled(NODATA)
    valid = want != NODATA
    assert np.array_equal(got == NODATA, ~valid)
    assert 0 < np.abs(got - want)[valid].max() < 2e-3


def test_a_coarser_resolution_and_a_cancel(case, tmp_path):
    specs = _specs(case)[:1]
    path = blockwise.write_full_resolution(case.layers, specs, tmp_path / "coarse.tif", resolution=90.0, block=BLOCK)
    raster_set = RasterSet(case.layers, max_pixels=10**9)
    with rasterio.open(path) as src:
        assert src.res == pytest.approx((90.0, 90.0), rel=0.02)
        assert src.width == round(raster_set.grid.width * raster_set.grid.pixel_size[0] / 90.0)
    calls = []
    cancel = Progress(is_cancelled=lambda: len(calls) > 3, on_progress=calls.append)
    with pytest.raises(Cancelled):
        blockwise.write_full_resolution(case.layers, specs, tmp_path / "cancelled.tif", block=BLOCK, progress=cancel)
    assert not (tmp_path / "cancelled.tif").exists()
    # the read of where each raster holds data, before any block, is cancellable too
    with pytest.raises(Cancelled):
        blockwise.full_resolution_grid(case.layers, progress=Progress(is_cancelled=lambda: True))


def test_block_distances_equal_the_whole_grid_transform_and_far_cells_stay_within_a_coarse_cell(case, monkeypatch):
    from lodestar.plugin.favourability.transforms import distance_to_features_m
    from lodestar.plugin.vector_io import read_vector

    full, grid = blockwise.full_resolution_grid(case.layers)
    faults = next(layer for layer in case.layers if layer.path.name == "faults.geojson")
    whole = distance_to_features_m(read_vector(faults.path, crs=grid.crs).geometry, grid)
    spec = [s for s in _specs(case) if s.transform == "distance_m"]
    windows = block_windows((grid.height, grid.width), 16)

    def blocks():
        plan = blockwise.plan_surface(full, spec, block=16)[0]
        out = np.zeros_like(whole)
        for win in windows:
            rows, cols = win.toslices()
            out[rows, cols] = blockwise.block_distance(plan, grid, win, 16)
        return plan, out

    plan, exact = blocks()
    assert plan.coarse is None and np.array_equal(exact, whole)
    monkeypatch.setattr(blockwise, "COARSE_CELLS", 400)  # a coarse transform of about 20 x 20 cells
    monkeypatch.setattr(blockwise, "MAX_WINDOW_BLOCKS", 4)  # windows of at most 32 x 32 pixels
    plan, bounded = blocks()
    factor = plan.coarse[1]
    assert factor > 1 and not np.array_equal(bounded, whole)
    assert np.abs(bounded - whole).max() <= factor * max(grid.pixel_size) * 1.5
