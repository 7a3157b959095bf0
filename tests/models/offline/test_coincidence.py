"""A layer measured at a place found on another layer: a weak partner over or around the place is significant,
a regional rise or an anomaly elsewhere is not, and the p-value is honest on a layer of pure background."""
from __future__ import annotations

import numpy as np
import pytest
from affine import Affine
from rasterio.crs import CRS
from scipy import ndimage
from shapely.geometry import Point
from worlds_b_run import analyse_worlds_b_case

from lodestar.models.offline.coincidence import contrast_map, place_radius_px, quantised, significance
from lodestar.models.offline.settings import DEFAULT
from lodestar.plugin.raster_io import RasterGrid

SCALES = DEFAULT.contrast_scales
SHELL_SCALES = SCALES + (4.0,)  # the porphyry's phyllic item: a shell of four radii (deposit_models.json)
GRID = RasterGrid(Affine(30.0, 0, 500_000.0, 0, -30.0, 7_000_000.0), 400, 400, CRS.from_epsg(32612))
CENTRE = (503_600.0, 6_996_400.0)  # pixel (120, 120)
PLACE = Point(*CENTRE).buffer(240.0)  # an 8-pixel radius core


def _background(seed: int) -> np.ndarray:
    """Smooth background (a 4-pixel correlation length) with some white noise, in spreads."""
    rng = np.random.default_rng(seed)
    z = ndimage.gaussian_filter(rng.standard_normal((GRID.height, GRID.width)), 4.0)
    z = z / z.std() + 0.3 * rng.standard_normal(z.shape)
    return z / z.std()


def _distance_px(row=120.0, col=120.0) -> np.ndarray:
    rows, cols = np.mgrid[0:GRID.height, 0:GRID.width]
    return np.hypot(rows + 0.5 - row, cols + 0.5 - col)


def _p(z: np.ndarray, place=PLACE, scales=SCALES) -> float:
    radius = quantised(place_radius_px(place, GRID))
    return significance(contrast_map(np.ma.masked_array(z), radius, scales), place, GRID, radius, scales).p


def test_a_weak_partner_over_or_around_the_place_is_significant():
    over = _background(1) + 2.5 * (_distance_px() < 7)  # 2.5 spreads: no clear zone of its own anywhere
    assert _p(over) < 0.01
    d = _distance_px()
    around = _background(2) + 2.5 * ((d > 7) & (d < 16))  # a shell wrapped around the place (phyllic style)
    assert _p(around) < 0.01


def test_a_wide_shell_around_a_small_centre_shows_only_at_the_shell_scale():
    """A phyllic shell from two to four radii out around a small silica or magnetic centre: every disc of the
    usual scales sits in its hole, the shell scale's disc takes it in."""
    d = _distance_px()
    shell = _background(11) + 2.5 * ((d > 16) & (d < 30))
    assert _p(shell) > 0.5
    assert _p(shell, scales=SHELL_SCALES) < 0.01
    assert _p(_background(11), scales=SHELL_SCALES) > 0.5  # the same background without it: unremarkable


def test_a_regional_rise_or_an_anomaly_elsewhere_is_not():
    cols = np.mgrid[0:GRID.height, 0:GRID.width][1]
    background = _background(4)
    alone = _p(background)
    assert alone > 0.1  # the place is unremarkable on this background alone
    rise = background + 6.0 * cols / GRID.width  # a smooth trend of 6 spreads across the scene
    assert abs(_p(rise) - alone) < 0.1
    elsewhere = background + 4.0 * (_distance_px(120, 190) < 7)  # 2.1 km east of the place
    assert abs(_p(elsewhere) - alone) < 0.1


@pytest.mark.parametrize("scales", [SCALES, SHELL_SCALES])
def test_on_pure_background_the_p_values_are_spread_out(scales):
    """Fifty places on one background layer: about a twentieth fall under 0.05, as a p-value should."""
    z = np.ma.masked_array(_background(5))
    radius = quantised(place_radius_px(PLACE, GRID))
    scores = contrast_map(z, radius, scales)
    rng = np.random.default_rng(6)
    ps = []
    for _ in range(50):
        x, y = rng.uniform(501_000, 511_000), rng.uniform(6_989_000, 6_999_000)
        ps.append(significance(scores, Point(x, y).buffer(240.0), GRID, radius, scales).p)
    assert sum(p < 0.05 for p in ps) <= 6
    assert 0.3 < float(np.median(ps)) < 0.7


def test_a_place_off_the_data_measures_nothing():
    z = np.ma.masked_array(_background(7), mask=_distance_px() < 40)  # no data over the place and its ring
    radius = quantised(place_radius_px(PLACE, GRID))
    assert significance(contrast_map(z, radius), PLACE, GRID, radius) is None
    off_grid = Point(400_000.0, 6_996_400.0).buffer(240.0)
    assert significance(contrast_map(np.ma.masked_array(_background(8)), radius), off_grid, GRID, radius) is None


def test_a_phyllic_shell_around_a_silica_core_is_measured_end_to_end(tmp_path):
    """worlds_b seed 3333 case 32 (a 7.6 km scene): silica marks a 280 m centre; the AlOH rendering colours only a
    speckled ring from 570 m to 1.2 km around it, too low on its bar to make a zone. Every disc of the usual scales
    sat in the ring's hole, and the answer was No; the shell scale measures the ring."""
    result, record = analyse_worlds_b_case(3333, 32, "porphyry", tmp_path)
    assert result.answer == "A"
    verdict = record["rounds"][-1]["verdict"]["rationale"]
    assert verdict.startswith("Core: s2:Silica index (TIR)")
    assert "phyllic_core [critical]: supported, by AlOH (2.2 um) index (anomaly map) (measured at the core" in verdict
