"""A structure raster's corridors: the gap from a place to the nearest cell of the layer's favourable share."""
from __future__ import annotations

import math

import numpy as np
import pytest
from affine import Affine
from shapely.geometry import Point, box

from lodestar.models.offline.corridors import corridor_distance, gap_to_corridor
from lodestar.models.offline.settings import DEFAULT
from lodestar.plugin.raster_io import RasterGrid

CORRIDOR_PERCENTILE = DEFAULT.corridor_percentile

PIXEL = 50.0
GRID = RasterGrid(Affine(PIXEL, 0, 0.0, 0, -PIXEL, 10_000.0), 200, 200, None)


def _distance_to_a_fault_at_column(col: int) -> np.ma.MaskedArray:
    """A distance-to-faults map (metres, favourable low) of one north-south fault through column `col`."""
    cols = np.arange(GRID.width)
    return np.ma.masked_array(np.tile(np.abs(cols - col) * PIXEL, (GRID.height, 1)).astype("float32"))


def test_the_corridor_is_the_most_favourable_share_and_the_distance_is_in_map_units():
    distance = corridor_distance(_distance_to_a_fault_at_column(100), "low", GRID.pixel_size, CORRIDOR_PERCENTILE)
    corridor = distance == 0
    assert corridor.mean() == pytest.approx(1 - CORRIDOR_PERCENTILE / 100, abs=0.01)
    assert corridor[:, 100].all() and not corridor[:, 0].any()
    half_width = int(np.flatnonzero(corridor[0]).max()) - 100  # the corridor's edge, in columns east of the fault
    assert distance[5, 100 + half_width + 10] == pytest.approx(10 * PIXEL)  # ten cells beyond the edge: 500 m
    assert distance[5, 0] == pytest.approx((100 - half_width) * PIXEL)


def test_a_favourable_high_layer_has_its_corridor_at_its_highest_values():
    density = -_distance_to_a_fault_at_column(30)  # a lineament density peaking along column 30
    distance = corridor_distance(density, "high", GRID.pixel_size, CORRIDOR_PERCENTILE)
    assert distance[:, 30].max() == 0 and distance[:, 199].min() > 0


def test_a_place_on_a_corridor_has_no_gap_and_one_away_from_it_its_distance():
    distance = corridor_distance(_distance_to_a_fault_at_column(100), "low", GRID.pixel_size, CORRIDOR_PERCENTILE)
    x_fault = GRID.pixel_to_map(100.5, 0)[0]
    assert gap_to_corridor(distance, box(x_fault - 200, 5000, x_fault + 200, 5400), GRID) == 0.0
    edge = GRID.pixel_to_map(int(np.flatnonzero(distance[0] == 0).max()) + 0.5, 0)[0]
    place = box(edge + 2000, 5000, edge + 2400, 5400)  # 2 km east of the corridor's edge
    assert gap_to_corridor(distance, place, GRID) == pytest.approx(2000, abs=PIXEL)
    assert gap_to_corridor(distance, Point(edge + 2010, 5010).buffer(5), GRID) == pytest.approx(2000, abs=PIXEL)


def test_a_place_off_the_grid_or_a_layer_without_data_has_an_infinite_gap():
    distance = corridor_distance(_distance_to_a_fault_at_column(100), "low", GRID.pixel_size, CORRIDOR_PERCENTILE)
    assert math.isinf(gap_to_corridor(distance, Point(-5000, -5000).buffer(10), GRID))
    empty = np.ma.masked_all((GRID.height, GRID.width), dtype="float32")
    assert np.isinf(corridor_distance(empty, "low", GRID.pixel_size, CORRIDOR_PERCENTILE)).all()


def test_a_fault_mask_keeps_only_its_faults_as_the_corridor():
    """A 0 / 1 mask with faults on 1 % of its cells: the 85th percentile is 0, and a cut at or above 0 would make the
    whole layer a corridor (every place at gap 0)."""
    mask = np.zeros((GRID.height, GRID.width), dtype="float32")
    mask[:, 100:102] = 1.0
    distance = corridor_distance(np.ma.masked_array(mask), "high", GRID.pixel_size, CORRIDOR_PERCENTILE)
    assert (distance == 0).sum() == 2 * GRID.height
    assert distance[0, 0] == pytest.approx(100 * PIXEL)
    flat = corridor_distance(np.ma.masked_array(np.ones_like(mask)), "high", GRID.pixel_size, CORRIDOR_PERCENTILE)
    assert np.isinf(flat).all()  # a constant layer has no corridor


def test_an_empty_place_has_an_infinite_gap():
    distance = corridor_distance(_distance_to_a_fault_at_column(100), "low", GRID.pixel_size, CORRIDOR_PERCENTILE)
    assert math.isinf(gap_to_corridor(distance, Point(5000, 5000).buffer(0).buffer(-1), GRID))
