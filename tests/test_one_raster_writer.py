"""One raster writer (issue 59): every raster file Lodestar writes goes through `plugin/raster_writer.new_raster`
(whole or not at all, the temporary file beside its destination), so no other product module opens a raster for
writing; before, GeoTIFFs were opened for writing in 7 modules."""
from __future__ import annotations

import ast

import numpy as np
import pytest
import rasterio
from test_imports import ROOT, package_files

from lodestar.plugin.raster_writer import new_raster

WRITER = "plugin/raster_writer.py"


def _opens_for_writing(tree: ast.AST) -> list[int]:
    """Lines of `rasterio.open(..., "w" | "w+" | "r+")` or `mode=` one of them."""
    lines = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "open"
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "rasterio"):
            continue
        modes = [a.value for a in node.args[1:2] if isinstance(a, ast.Constant)]
        modes += [k.value.value for k in node.keywords if k.arg == "mode" and isinstance(k.value, ast.Constant)]
        if any(mode in ("w", "w+", "r+") for mode in modes) or (node.args[1:2] and not modes):
            lines.append(node.lineno)
    return lines


def test_only_the_raster_writer_opens_a_raster_for_writing():
    found = {}
    for path in package_files():
        lines = _opens_for_writing(ast.parse(path.read_text(encoding="utf-8")))
        if lines:
            found[path.relative_to(ROOT).as_posix()] = lines
    assert found == {WRITER: found.get(WRITER)} and found[WRITER], found
    assert _opens_for_writing(ast.parse('rasterio.open(p, "w", **profile)\nrasterio.open(p)\n'
                                        'rasterio.open(p, mode="r+")\n')) == [1, 3]


def _profile() -> dict:
    return {"driver": "GTiff", "width": 4, "height": 3, "count": 1, "dtype": "float32"}


def test_a_raster_appears_whole_with_what_finish_added(tmp_path):
    seen = []
    path = tmp_path / "out.tif"
    with new_raster(path, _profile(), finish=lambda tmp: seen.append((tmp != path, tmp.is_file()))) as dst:
        dst.write(np.arange(12, dtype="float32").reshape(3, 4), 1)
        assert not path.exists()  # written under a temporary name
    assert seen == [(True, True)]
    with rasterio.open(path) as ds:
        assert ds.read(1)[2, 3] == 11.0
    assert [p.name for p in tmp_path.iterdir()] == ["out.tif"]


def test_a_failed_write_leaves_nothing_and_keeps_the_old_file(tmp_path):
    path = tmp_path / "out.tif"
    path.write_bytes(b"the old file")
    with pytest.raises(RuntimeError, match="stopped"):
        with new_raster(path, _profile()) as dst:
            dst.write(np.zeros((3, 4), dtype="float32"), 1)
            raise RuntimeError("stopped half way")
    assert path.read_bytes() == b"the old file" and [p.name for p in tmp_path.iterdir()] == ["out.tif"]


def test_a_staged_path_is_written_in_place(tmp_path):
    path = tmp_path / "staged.tif"
    with new_raster(path, _profile(), staged=True) as dst:
        dst.write(np.ones((3, 4), dtype="float32"), 1)
        assert path.exists()
    with rasterio.open(path) as ds:
        assert float(ds.read(1).sum()) == 12.0
