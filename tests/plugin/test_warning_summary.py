"""Warnings of a run reach the log once per kind, in words (plugin/warning_summary.py): rasterio's ShapeSkipWarning
for every zero-length fault each time the faults are drawn (80 lines per Murchison run) becomes one sentence
counting the lines."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from affine import Affine
from rasterio.features import rasterize
from shapely.geometry import LineString

from lodestar.plugin.warning_summary import summarised_warnings


def _draw(lines) -> np.ndarray:
    return rasterize(((line, 1) for line in lines), out_shape=(10, 10), transform=Affine(1, 0, 0, 0, -1, 10))


def test_skipped_shapes_are_counted_once_per_feature_in_one_sentence():
    lines = [LineString([(1, 1), (8, 8)]), LineString(), LineString()]  # as zero-length faults end up, clipped
    log = []
    with summarised_warnings(log.append):
        for _ in range(2):  # drawn onto two grids: each empty line warns twice
            assert _draw(lines).sum() > 0
        for _ in range(3):
            warnings.warn("invalid value encountered in divide", RuntimeWarning, stacklevel=1)
    assert log == ["2 lines with no length or area (empty, or all at one point) were skipped where the vector layers "
                   "were drawn onto the analysis grid.",
                   "Warning (RuntimeWarning, 3 times): invalid value encountered in divide"]


def test_the_summary_is_logged_when_the_run_fails_and_nothing_escapes():
    log = []
    with warnings.catch_warnings(record=True) as escaped:
        warnings.simplefilter("always")
        with pytest.raises(ValueError), summarised_warnings(log.append):
            warnings.warn("a deprecated call", DeprecationWarning, stacklevel=1)
            raise ValueError("the run failed")
    assert log == ["Warning (DeprecationWarning, once): a deprecated call"] and escaped == []
    with summarised_warnings(log.append):
        pass
    assert len(log) == 1  # no warning, no line
