"""Spatial blocks for cross-validation: square blocks over the analysis grid, assigned to folds.

Blocks are squares of `size` map units laid from the grid's top-left corner; a cell belongs to the block
holding its centre. The default size is 10 km, or an eighth of the shorter side of the extent when that
is smaller, so that there are at least 64 blocks (on a grid without a CRS, in pixel space, the eighth
alone); never under MIN_BLOCK_CELLS cells, the smallest size a block may be given. Folds are balanced and
deterministic for a seed: blocks holding deposits are dealt, most deposits first (ties in a seeded random
order), each to the fold with the fewest deposits so far; the other blocks, in a seeded random order, each
to the fold with the fewest cells so far.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..decisions import CORE
from ..errors import LodestarError
from ..labels import distance, number, plural
from ..raster_io import RasterGrid

# decision numbers: their reasons and provenance are in plugin/decisions.py
DEFAULT_BLOCK_M = CORE.block_m
BLOCKS_ACROSS = CORE.blocks_across
MIN_BLOCK_CELLS = CORE.min_block_cells


def default_block_size(grid: RasterGrid) -> float:
    """10 km, or an eighth of the extent's shorter side when smaller (map units); at least MIN_BLOCK_CELLS cells."""
    xmin, ymin, xmax, ymax = grid.bounds
    eighth = min(xmax - xmin, ymax - ymin) / BLOCKS_ACROSS
    return max(smallest_block(grid), eighth if grid.crs is None else min(DEFAULT_BLOCK_M, eighth))


def smallest_block(grid: RasterGrid) -> float:
    """The smallest block size (map units): MIN_BLOCK_CELLS of the grid's cells (the longer side of a cell)."""
    return MIN_BLOCK_CELLS * max(grid.pixel_size)


def checked_block_size(grid: RasterGrid, size: float | None = None) -> float:
    """The block size a cross-validation on `grid` uses: `size` (map units), or the default when None; a size under
    `smallest_block` is refused in one line, saying the smallest."""
    if size is None:
        return default_block_size(grid)
    size, smallest = float(size), smallest_block(grid)
    if not size >= smallest:
        raise LodestarError(f"Calibration blocks of {length(size, grid)} are under {MIN_BLOCK_CELLS} analysis "
                            f"cells of {length(max(grid.pixel_size), grid)}: a fold would be scored on cells beside "
                            f"its training cells; give a block size of at least {length(smallest, grid)}, or none "
                            "for the default.")
    return size


def length(value: float, grid: RasterGrid) -> str:
    """A length in the grid's map units, with its unit: '10 km' and '250 m' in a CRS of metres, '0.05°' in a
    geographic one, '12 pixels' in pixel space, else the number with the CRS's unit's name."""
    crs = grid.crs
    if crs is None:
        return f"{number(value)} pixels"
    if crs.is_geographic:
        return f"{number(value)}°"
    unit = crs.axis_info[0].unit_name if crs.axis_info else "metre"
    return distance(value * float(crs.axis_info[0].unit_conversion_factor)) if unit in ("metre", "meter") or \
        not crs.axis_info else f"{number(value)} {unit}"


def block_ids(grid: RasterGrid, size: float) -> np.ndarray:
    """Block number of every cell (row-major over the blocks), from the position of the cell centre."""
    if not size > 0:
        raise LodestarError(f"The block size must be positive (got {size}).")
    xmin, _, xmax, ymax = grid.bounds
    across = max(1, math.ceil((xmax - xmin) / size))
    cols, rows = np.meshgrid(np.arange(grid.width) + 0.5, np.arange(grid.height) + 0.5)
    x, y = grid.pixel_to_map(cols, rows)
    bx = np.floor((x - xmin) / size).astype(np.int64)
    by = np.floor((ymax - y) / size).astype(np.int64)
    return by * across + bx


@dataclass(frozen=True)
class Folds:
    """Cells of the analysis grid in folds: `fold` is each cell's fold (-1 outside the valid area)."""

    block_size: float
    n_folds: int
    seed: int
    fold: np.ndarray
    blocks_per_fold: tuple
    cells_per_fold: tuple
    deposits_per_fold: tuple
    block_words: str = ""
    """The block size with its unit ('10 km'), as `length` writes it."""

    def summary(self) -> str:
        parts = [f"fold {k + 1}: {b} blocks, {c} cells, {d} deposits"
                 for k, (b, c, d) in enumerate(zip(self.blocks_per_fold, self.cells_per_fold, self.deposits_per_fold))]
        size = self.block_words or f"{self.block_size:,.0f} map units"
        return f"{self.n_folds}-fold spatial block cross-validation, blocks of {size} (seed {self.seed}): " + \
            "; ".join(parts)


def spatial_folds(grid: RasterGrid, valid: np.ndarray, deposits: np.ndarray, block_size: float | None = None,
                  folds: int = 5, seed: int = 0) -> Folds:
    """Assign the valid cells to `folds` folds by blocks; `deposits` counts the deposits of each cell."""
    if folds < 2:
        raise LodestarError(f"Cross-validation needs at least 2 folds (got {folds}).")
    size = checked_block_size(grid, block_size)
    ids = block_ids(grid, size)[valid]
    blocks, inverse = np.unique(ids, return_inverse=True)
    cells = np.bincount(inverse, minlength=len(blocks))
    found = np.bincount(inverse, weights=deposits[valid], minlength=len(blocks)).astype(int)
    if len(blocks) < folds:
        raise LodestarError(f"Blocks of {length(size, grid)} give {len(blocks)} blocks for {folds} folds; "
                            "choose smaller blocks or fewer folds.")
    if np.count_nonzero(found) < 2:
        smallest = smallest_block(grid)
        fix = (f"choose smaller blocks (at least {length(smallest, grid)})" if size > smallest else
               f"blocks cannot be smaller (at least {MIN_BLOCK_CELLS} cells): the deposits lie too close together "
               "to hold some out; calibrate on a wider spread of deposits, or turn calibration off")
        raise LodestarError(f"The known deposits lie in {plural(np.count_nonzero(found), 'block')} of "
                            f"{length(size, grid)}; cross-validation needs deposits in at least 2 blocks: {fix}.")
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(blocks))
    fold_of_block = np.empty(len(blocks), dtype=int)
    load_deposits, load_cells = np.zeros(folds), np.zeros(folds)
    rich = order[found[order] > 0]
    rich = rich[np.argsort(-found[rich], kind="stable")]
    for block in rich:
        k = int(np.argmin(load_deposits))
        fold_of_block[block] = k
        load_deposits[k] += found[block]
        load_cells[k] += cells[block]
    for block in order[found[order] == 0]:
        k = int(np.argmin(load_cells))
        fold_of_block[block] = k
        load_cells[k] += cells[block]
    fold = np.full(valid.shape, -1, dtype=int)
    fold[valid] = fold_of_block[inverse]
    return Folds(size, folds, seed, fold,
                 tuple(int(np.sum(fold_of_block == k)) for k in range(folds)),
                 tuple(int(c) for c in load_cells), tuple(int(d) for d in load_deposits), length(size, grid))
