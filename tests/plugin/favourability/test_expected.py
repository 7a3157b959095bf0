"""Expected deposits per cell from the out-of-fold success rate (plugin/favourability/expected.py)."""
from __future__ import annotations

import numpy as np
import pytest
from affine import Affine
from pyproj import CRS

from lodestar.plugin.favourability.expected import concave_majorant, expected_deposits
from lodestar.plugin.raster_io import RasterGrid


def test_the_majorant_runs_through_the_distributions_corners_and_bridges_a_dip():
    x, f = concave_majorant(np.array([0.1, 0.1, 0.5]), np.zeros(3))
    assert x.tolist() == [0.0, 0.1, 0.5, 1.0] and f.tolist() == pytest.approx([0.0, 2 / 3, 1.0, 1.0])
    # 0.2 then 0.3: the density would rise from 2.5 to 5; held non-increasing, the corner at 0.2 is bridged
    x, f = concave_majorant(np.array([0.3, 0.2]), np.zeros(2))
    assert x.tolist() == [0.0, 0.3, 1.0] and f.tolist() == [0.0, 1.0, 1.0]
    slopes = np.diff(f) / np.diff(x)
    assert np.all(np.diff(slopes) <= 0)
    # deposits in a tie group are spread over its stretch: one group over the whole area is the uniform density
    x, f = concave_majorant(np.zeros(4), np.ones(4))
    assert x.tolist() == [0.0, 1.0] and f.tolist() == [0.0, 1.0]


def test_an_out_of_fold_surface_of_one_value_expects_deposits_evenly():
    """Before, each deposit sat at the middle of its tie group: the full fit's top half took twice the even rate and
    the bottom half none. A cell the full fit leaves NaN is not analysed area."""
    grid = RasterGrid(Affine(100.0, 0, 500_000.0, 0, -100.0, 4_000_000.0), 10, 10, CRS.from_epsg(32612))
    flat = np.ma.masked_array(np.full((10, 10), 0.5))
    full = np.ma.masked_array(np.arange(100, dtype=float).reshape(10, 10))
    full[0, 0] = np.nan
    deposits = [(500_050.0 + 100 * k, 3_999_450.0) for k in range(4)]
    expected = expected_deposits(full, flat, grid, deposits)
    assert expected.mask[0, 0] and expected.count() == 99
    assert np.allclose(expected.compressed(), 4 / 99) and float(expected.sum()) == pytest.approx(4.0)
    assert expected_deposits(full, flat, grid, [(0.0, 0.0)]) is None  # no deposit in the area
