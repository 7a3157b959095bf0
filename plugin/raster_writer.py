"""The one place a raster file is written: `new_raster` opens it for writing through rasterio and, unless the caller
stages the file itself, under a temporary name beside its destination that replaces the destination only when the
block ends without an error, so a raster appears whole or not at all. `finish` runs on the closed file before it
is moved (`build_overviews`); `gdal` sets GDAL's configuration for the write and `finish` (a block cache,
sidecars)."""
from __future__ import annotations

from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Callable, Iterator

import rasterio
from rasterio.enums import Resampling

from .files import atomic_path


@contextmanager
def new_raster(path, profile: dict, *, staged: bool = False, finish: Callable[[Path], None] | None = None,
               gdal: dict | None = None) -> Iterator:
    """A new raster at `path` with rasterio's creation `profile`, yielded open for writing (see the module
    docstring); `staged`: `path` is already a temporary file the caller moves into place, written directly."""
    with ExitStack() as stack:
        if gdal:
            stack.enter_context(rasterio.Env(**gdal))
        target = Path(path) if staged else stack.enter_context(atomic_path(path))
        with rasterio.open(target, "w", **profile) as dst:
            yield dst
        if finish is not None:
            finish(target)


def build_overviews(path, factors: list[int]) -> None:
    """Average overviews at `factors` added to a raster just written (a `finish` of `new_raster`)."""
    with rasterio.open(path, "r+") as dst:
        dst.build_overviews(factors, Resampling.average)
        dst.update_tags(ns="rio_overview", resampling="average")
