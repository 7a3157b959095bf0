"""What the scene measures once per run for every search: here, the distance to the nearest of a layer's features."""
from __future__ import annotations

import numpy as np
from shapely.geometry import LineString, Point

from lodestar.models.offline.scene import nearest_distance


def test_the_nearest_feature_through_bounding_boxes_is_the_nearest_of_all():
    """300 random faults and 200 random places (discs and points): the distance measured only to the faults whose
    box lies nearer than the nearest found so far equals the smallest of every distance, to the metre's billionth."""
    rng = np.random.default_rng(7)
    starts = rng.uniform(0, 50_000, (300, 2))
    faults = [LineString([tuple(a), tuple(a + rng.normal(0, 3_000, 2))]) for a in starts]
    bounds = np.array([fault.bounds for fault in faults])
    for x, y, radius in rng.uniform((-5_000, -5_000, 0), (55_000, 55_000, 2_000), (200, 3)):
        place = Point(x, y).buffer(radius) if radius > 500 else Point(x, y)
        assert abs(nearest_distance(place, faults, bounds) - min(place.distance(f) for f in faults)) < 1e-9
    assert nearest_distance(Point(0, 0), [], np.empty((0, 4))) == float("inf")
