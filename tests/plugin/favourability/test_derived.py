"""Derived evidence for the fitted models (derived.py): fault density and the distance to unit contacts, by hand."""
from __future__ import annotations

import numpy as np
import pytest
from affine import Affine
from pyproj import CRS
from shapely.geometry import LineString

from lodestar.plugin.favourability.derived import contact_distance_m, line_density_km_per_km2
from lodestar.plugin.raster_io import RasterGrid


def test_contact_distance_is_metres_to_the_nearest_cell_beside_another_unit():
    codes = np.ma.masked_array([[1, 1, 1, 2, 2, 2]], mask=[[False] * 5 + [True]])
    assert contact_distance_m(codes, (100.0, -100.0)).tolist() == [[200.0, 100.0, 0.0, 0.0, 100.0, 200.0]]
    # a unit beside nodata is no contact; one unit alone has none
    assert contact_distance_m(np.ma.masked_array([[1, 1, 3]], mask=[[False, False, True]]), (100.0, -100.0)) is None


def test_fault_density_is_the_length_in_the_disc_over_its_area():
    grid = RasterGrid(Affine(100, 0, 0, 0, -100, 2100), 21, 21, CRS.from_epsg(32633))
    line = LineString([(1050, 0), (1050, 2100)])  # down the middle of column 10
    density = line_density_km_per_km2([line], grid, 500.0)
    disc = sum(1 for i in range(-5, 6) for j in range(-5, 6) if i * i + j * j <= 25)  # 81 cells of 0.01 km2
    assert density[10, 10] == pytest.approx(11 * 0.1 / (disc * 0.01), rel=1e-5)  # 11 cells of 100 m of line
    assert density[10, 16] == pytest.approx(0.0, abs=1e-6) and density[10, 15] > 0  # 600 m off: none within 500
    assert density[10, 10] > density[10, 13] > 0
