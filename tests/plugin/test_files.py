"""The one atomic writer: a file is whole or absent, and a failure leaves no temporary file behind."""
from __future__ import annotations

import pytest

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.files import atomic_path, write_bytes_atomic, write_text_atomic


def test_write_bytes_atomic_leaves_nothing_behind_on_failure(tmp_path):
    assert write_bytes_atomic(tmp_path / "a.bin", b"abc").read_bytes() == b"abc"
    taken = tmp_path / "taken"
    taken.mkdir()  # a folder where the file should go: the final rename fails
    with pytest.raises(LodestarError, match="Could not write"):
        write_bytes_atomic(taken, b"abc")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bin", "taken"]


def test_write_text_atomic_replaces_and_creates_the_folder(tmp_path):
    target = tmp_path / "sub" / "note.txt"
    write_text_atomic(target, "old\n")
    assert write_text_atomic(target, "né\n").read_bytes() == "né\n".encode()
    assert [p.name for p in target.parent.iterdir()] == ["note.txt"]


def test_atomic_path_keeps_the_target_on_an_error_inside(tmp_path):
    target = tmp_path / "grid.tif"
    target.write_bytes(b"before")
    with pytest.raises(ValueError), atomic_path(target) as tmp:
        assert tmp.parent == tmp_path and tmp.suffix == ".tif" and tmp != target
        tmp.write_bytes(b"half")
        raise ValueError("the writer failed")
    assert target.read_bytes() == b"before" and [p.name for p in tmp_path.iterdir()] == ["grid.tif"]
