"""The one block iterator: every loop over a raster's blocks (the full-resolution surfaces' square tiles, the strips
of whole rows that index rasters, legend classification, thresholds, reads and warps go in) takes its windows from
`block_windows`, so blocks come in one order, row-major, and are cut alike at the raster's edge."""
from __future__ import annotations

from rasterio.windows import Window


def block_windows(shape: tuple[int, int], block: int, strips: bool = False) -> list[Window]:
    """The windows (integer offsets and sizes) covering a raster of `shape` (rows, cols) once, row-major: tiles of
    `block` x `block` pixels or, with `strips`, strips of `block` rows the raster's whole width; the last row (and
    column) of blocks is cut at the raster's edge. No rows, no windows; `block` is at least 1."""
    rows, cols = shape
    if block < 1:
        raise ValueError(f"A block is at least 1 pixel, not {block}.")
    if strips:
        return [Window(0, r, cols, min(block, rows - r)) for r in range(0, rows, block)]
    return [Window(c, r, min(block, cols - c), min(block, rows - r))
            for r in range(0, rows, block) for c in range(0, cols, block)]
