"""A layer measured over a core zone against its ring: a weak partner counts, a regional rise does not."""
from __future__ import annotations

import numpy as np
from affine import Affine
from rasterio.crs import CRS
from shapely.geometry import Point

from lodestar.plugin.engine.coincidence import local_contrast
from lodestar.plugin.raster_io import RasterGrid

GRID = RasterGrid(Affine(30.0, 0, 500_000.0, 0, -30.0, 7_000_000.0), 200, 200, CRS.from_epsg(32612))
CORE = Point(503_000.0, 6_997_000.0).buffer(300.0)  # 300 m radius, centred at pixel (100, 100)


def _noise(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(0.0, 1.0, (GRID.height, GRID.width))


def _distance_px() -> np.ndarray:
    rows, cols = np.mgrid[0:GRID.height, 0:GRID.width]
    return np.hypot(rows + 0.5 - 100, cols + 0.5 - 100)


def test_a_weak_anomaly_over_the_core_stands_above_its_ring():
    z = _noise(1) + 2.5 * np.exp(-(_distance_px() / 8.0) ** 2)  # peak 2.5 spreads: no clear zone on its own
    inside, ring, cells = local_contrast(np.ma.masked_array(z), CORE, GRID)
    assert abs(cells - 314) < 12  # a 10-pixel radius disc
    assert inside - ring > 1.0 and ring < 0.5


def test_a_regional_rise_lifts_the_ring_too_and_an_offset_anomaly_is_not_over_the_core():
    rows, cols = np.mgrid[0:GRID.height, 0:GRID.width]
    rise = _noise(2) + 3.0 * cols / GRID.width * 2  # a smooth trend of 6 spreads across the scene
    inside, ring, _ = local_contrast(np.ma.masked_array(rise), CORE, GRID)
    assert inside > 2.5 and abs(inside - ring) < 0.3
    offset = _noise(3) + 4.0 * np.exp(-(np.hypot(rows + 0.5 - 100, cols + 0.5 - 150) / 8.0) ** 2)  # 1.5 km east
    inside, ring, _ = local_contrast(np.ma.masked_array(offset), CORE, GRID)
    assert inside < 0.3 and abs(inside - ring) < 0.3


def test_too_few_valid_cells_measure_nothing():
    z = np.ma.masked_array(_noise(4), mask=_distance_px() < 40)  # no data over the core and most of its ring
    assert local_contrast(z, CORE, GRID) is None
    assert local_contrast(np.ma.masked_array(_noise(5)), Point(503_000.0, 6_997_000.0).buffer(20.0), GRID) is None
