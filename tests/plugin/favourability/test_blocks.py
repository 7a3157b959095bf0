"""Spatial blocks and folds on small grids worked out by hand."""
from __future__ import annotations

import numpy as np
import pytest
from affine import Affine
from pyproj import CRS

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.favourability.blocks import block_ids, default_block_size, spatial_folds
from lodestar.plugin.raster_io import RasterGrid

UTM = CRS.from_epsg(32633)


def km_grid(width: int, height: int, crs=UTM) -> RasterGrid:
    return RasterGrid(Affine(1000, 0, 500_000, 0, -1000, 4_000_000), width, height, crs)


def test_default_block_size():
    assert default_block_size(km_grid(100, 200)) == 10_000  # 10 km: 10 x 20 blocks
    assert default_block_size(km_grid(40, 30)) == 3_750  # an eighth of the 30 km side
    pixels = RasterGrid(Affine.identity(), 80, 64, None)
    assert default_block_size(pixels) == 8  # pixel space: the eighth alone


def test_block_ids_from_cell_centres():
    ids = block_ids(km_grid(5, 4), 2000)  # 3 blocks across (the last one 1 km wide), 2 down
    assert ids.tolist() == [[0, 0, 1, 1, 2], [0, 0, 1, 1, 2], [3, 3, 4, 4, 5], [3, 3, 4, 4, 5]]
    with pytest.raises(LodestarError, match="positive"):
        block_ids(km_grid(5, 4), 0)


def deposits_8x8() -> np.ndarray:
    counts = np.zeros((8, 8))
    counts[0, 0] = 3  # block 0
    counts[0, 3] = 1  # block 1
    counts[3, 3] = 2  # block 5
    counts[7, 7] = 1  # block 15
    counts[6, 1] = 1  # block 12
    return counts


def test_folds_keep_blocks_whole_and_balance_deposits():
    grid = km_grid(8, 8)
    valid = np.ones((8, 8), dtype=bool)
    valid[:, 7] = False  # a nodata column: its cells are in no fold
    counts = deposits_8x8()
    counts[7, 7] = 0
    folds = spatial_folds(grid, valid, counts, block_size=2000, folds=3, seed=0)
    assert (folds.fold[:, 7] == -1).all() and (folds.fold[valid] >= 0).all()
    ids = block_ids(grid, 2000)
    for block in np.unique(ids[valid]):
        assert len(np.unique(folds.fold[(ids == block) & valid])) == 1
    # 16 blocks; deposits 3, 1, 2, 1 in four blocks dealt most first to the emptiest fold: {3}, {2}, {1, 1}
    assert sorted(folds.deposits_per_fold) == [2, 2, 3] and sum(folds.blocks_per_fold) == 16
    assert sum(folds.cells_per_fold) == 56
    assert max(folds.cells_per_fold) - min(folds.cells_per_fold) <= 4  # barren blocks balance the cells
    again = spatial_folds(grid, valid, counts, block_size=2000, folds=3, seed=0)
    assert (again.fold == folds.fold).all()
    assert "3-fold spatial block cross-validation, blocks of 2,000" in folds.summary()


def test_the_seed_changes_the_assignment():
    grid, valid = km_grid(8, 8), np.ones((8, 8), dtype=bool)
    a = spatial_folds(grid, valid, deposits_8x8(), block_size=2000, folds=3, seed=0)
    b = spatial_folds(grid, valid, deposits_8x8(), block_size=2000, folds=3, seed=1)
    assert (a.fold != b.fold).any()


def test_too_few_blocks_or_deposit_blocks():
    grid, valid = km_grid(8, 8), np.ones((8, 8), dtype=bool)
    with pytest.raises(LodestarError, match="4 blocks for 5 folds"):
        spatial_folds(grid, valid, deposits_8x8(), block_size=4000, folds=5)
    one = np.zeros((8, 8))
    one[0, 0] = 2
    with pytest.raises(LodestarError, match="at least 2 blocks"):
        spatial_folds(grid, valid, one, block_size=2000)
    with pytest.raises(LodestarError, match="at least 2 folds"):
        spatial_folds(grid, valid, deposits_8x8(), folds=1)
