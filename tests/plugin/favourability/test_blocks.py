"""Spatial blocks and folds on small grids worked out by hand."""
from __future__ import annotations

import numpy as np
import pytest
from affine import Affine
from pyproj import CRS

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.favourability.blocks import block_ids, default_block_size, spatial_folds
from lodestar.plugin.labels import distance
from lodestar.plugin.raster_io import RasterGrid

UTM = CRS.from_epsg(32633)


def km_grid(width: int, height: int, crs=UTM, pixel: float = 1000) -> RasterGrid:
    return RasterGrid(Affine(pixel, 0, 500_000, 0, -pixel, 4_000_000), width, height, crs)


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
    """Deposits on an 8 km square of 500 m cells (16 x 16), in the 2 km blocks named."""
    counts = np.zeros((16, 16))
    counts[0, 0] = 3  # block 0
    counts[0, 6] = 1  # block 1
    counts[6, 6] = 2  # block 5
    counts[14, 14] = 1  # block 15
    counts[12, 2] = 1  # block 12
    return counts


def fine_grid() -> RasterGrid:
    return km_grid(16, 16, pixel=500)


def test_folds_keep_blocks_whole_and_balance_deposits():
    grid = fine_grid()
    valid = np.ones((16, 16), dtype=bool)
    valid[:, 14:] = False  # a nodata kilometre: its cells are in no fold
    counts = deposits_8x8()
    counts[14, 14] = 0
    folds = spatial_folds(grid, valid, counts, block_size=2000, folds=3, seed=0)
    assert (folds.fold[:, 14:] == -1).all() and (folds.fold[valid] >= 0).all()
    ids = block_ids(grid, 2000)
    for block in np.unique(ids[valid]):
        assert len(np.unique(folds.fold[(ids == block) & valid])) == 1
    # 16 blocks; deposits 3, 1, 2, 1 in four blocks dealt most first to the emptiest fold: {3}, {2}, {1, 1}
    assert sorted(folds.deposits_per_fold) == [2, 2, 3] and sum(folds.blocks_per_fold) == 16
    assert sum(folds.cells_per_fold) == 224
    assert max(folds.cells_per_fold) - min(folds.cells_per_fold) <= 16  # barren blocks balance the cells
    again = spatial_folds(grid, valid, counts, block_size=2000, folds=3, seed=0)
    assert (again.fold == folds.fold).all()
    assert "3-fold spatial block cross-validation, blocks of 2 km (seed 0)" in folds.summary()  # with its unit


def test_the_seed_changes_the_assignment():
    grid, valid = fine_grid(), np.ones((16, 16), dtype=bool)
    a = spatial_folds(grid, valid, deposits_8x8(), block_size=2000, folds=3, seed=0)
    b = spatial_folds(grid, valid, deposits_8x8(), block_size=2000, folds=3, seed=1)
    assert (a.fold != b.fold).any()


def test_too_few_blocks_or_deposit_blocks():
    grid, valid = fine_grid(), np.ones((16, 16), dtype=bool)
    with pytest.raises(LodestarError, match="4 blocks for 5 folds"):
        spatial_folds(grid, valid, deposits_8x8(), block_size=4000, folds=5)
    one = np.zeros((16, 16))
    one[0, 0] = 2
    with pytest.raises(LodestarError, match=r"lie in 1 block of 2 km; .* at least 2 blocks: choose smaller "
                                            r"blocks \(at least 1.5 km\)"):  # sizes with their unit
        spatial_folds(grid, valid, one, block_size=2000)
    with pytest.raises(LodestarError, match="at least 2 folds"):
        spatial_folds(grid, valid, deposits_8x8(), folds=1)


def test_blocks_are_never_under_three_cells():
    """Blocks smaller than a cell split the cells at random (an out-of-fold AUC of 0.987 once): a block size under 3
    cells is refused in one line naming the smallest, the default never falls under it, and deposits too close for
    the smallest blocks are told that smaller blocks are no way out."""
    grid, valid = km_grid(8, 8), np.ones((8, 8), dtype=bool)
    spread = np.zeros((8, 8))
    spread[0, 0] = spread[7, 7] = spread[0, 7] = 1
    for size in (100, 999, 2999):
        with pytest.raises(LodestarError) as caught:
            spatial_folds(grid, valid, spread, block_size=size, folds=2)
        assert str(caught.value) == (
            f"Calibration blocks of {distance(size)} are under 3 analysis cells of 1 km: a fold would be scored on "
            "cells beside its training cells; give a block size of at least 3 km, or none for the default.")
    assert spatial_folds(grid, valid, spread, block_size=3000, folds=2).block_size == 3000
    assert default_block_size(km_grid(16, 16)) == 3000  # an eighth of 16 km would be 2 km: 2 cells
    assert spatial_folds(grid, valid, spread, folds=2).block_size == 3000
    close = np.zeros((8, 8))
    close[0, 0] = close[1, 1] = 1  # in one block of 3 cells
    with pytest.raises(LodestarError, match="blocks cannot be smaller \\(at least 3 cells\\)"):
        spatial_folds(grid, valid, close, block_size=3000, folds=2)
