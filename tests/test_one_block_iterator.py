"""One block iterator (issue "typed stages"): every loop over a raster's blocks takes its windows from
`plugin/raster_blocks.block_windows` (square tiles or strips of whole rows), so no other module steps over a
raster's rows or columns itself; before, seven modules cut their own blocks (blockwise.py's tiles, the strips of
alteration_indices.py, scene_indices.py, map_legend.py, color_regions.py and raster_io.py's reads and warps)."""
from __future__ import annotations

import ast

import pytest
from rasterio.windows import Window
from test_imports import ROOT, package_files

from lodestar.plugin.raster_blocks import block_windows

ITERATOR = "plugin/raster_blocks.py"
AXES = {"height", "width", "rows", "cols", "shape"}


def _block_loops(tree: ast.AST) -> list[int]:
    """Lines of `range(0, <a raster's height, width, rows, cols or shape>, step)`: a loop over a raster's blocks."""
    lines = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"
                and len(node.args) == 3 and isinstance(node.args[0], ast.Constant) and node.args[0].value == 0):
            continue
        names = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
        names |= {n.attr for n in ast.walk(node.args[1]) if isinstance(n, ast.Attribute)}
        if names & AXES:
            lines.append(node.lineno)
    return lines


def test_only_the_block_iterator_steps_over_a_rasters_blocks():
    found = {}
    for path in package_files():
        lines = _block_loops(ast.parse(path.read_text(encoding="utf-8")))
        if lines:
            found[path.relative_to(ROOT).as_posix()] = lines
    assert found == {ITERATOR: found.get(ITERATOR)} and found[ITERATOR], found
    assert _block_loops(ast.parse("range(0, grid.height, 512)\nrange(0, rows, step)\nrange(0, len(starts), 8)\n"
                                  "range(0, n)\nrange(1, grid.width, 2)\n")) == [1, 2]


def test_tiles_cover_the_raster_row_major_cut_at_its_edges():
    assert block_windows((5, 7), 3) == [Window(0, 0, 3, 3), Window(3, 0, 3, 3), Window(6, 0, 1, 3),
                                        Window(0, 3, 3, 2), Window(3, 3, 3, 2), Window(6, 3, 1, 2)]
    assert block_windows((4, 4), 2) == [Window(0, 0, 2, 2), Window(2, 0, 2, 2), Window(0, 2, 2, 2),
                                        Window(2, 2, 2, 2)]
    assert block_windows((3, 2), 1024) == [Window(0, 0, 2, 3)]


def test_strips_are_whole_rows_the_last_one_shorter():
    assert block_windows((5, 7), 2, strips=True) == [Window(0, 0, 7, 2), Window(0, 2, 7, 2), Window(0, 4, 7, 1)]
    assert block_windows((4, 3), 4, strips=True) == [Window(0, 0, 3, 4)]
    assert block_windows((1, 9), 512, strips=True) == [Window(0, 0, 9, 1)]


@pytest.mark.parametrize("shape,block,strips", [((1, 1), 1, False), ((17, 33), 16, False), ((1000, 999), 7, False),
                                                ((33, 5), 16, True), ((1000, 1), 3, True)])
def test_the_windows_hold_every_pixel_once_in_integers(shape, block, strips):
    rows, cols = shape
    seen = [[0] * cols for _ in range(rows)]
    for window in block_windows(shape, block, strips):
        assert all(type(v) is int for v in (window.col_off, window.row_off, window.width, window.height))
        assert 0 < window.height <= block and 0 < window.width <= (cols if strips else block)
        for r in range(window.row_off, window.row_off + window.height):
            for c in range(window.col_off, window.col_off + window.width):
                seen[r][c] += 1
    assert all(count == 1 for row in seen for count in row)


def test_no_rows_no_windows_and_a_block_is_a_pixel_at_least():
    assert block_windows((0, 5), 4) == [] and block_windows((0, 5), 4, strips=True) == []
    assert block_windows((5, 0), 4) == []
    with pytest.raises(ValueError, match="at least 1 pixel"):
        block_windows((4, 4), 0)
