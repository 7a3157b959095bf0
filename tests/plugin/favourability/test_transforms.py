"""Evidence transformations against hand-computed values: scalings, fuzzy memberships, distances, units."""
from __future__ import annotations

import math

import numpy as np
import pytest
from affine import Affine
from shapely.geometry import LineString

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.favourability import transforms as tf
from lodestar.plugin.raster_io import RasterGrid


def test_percentile_rank_shares_ranks_between_ties_and_keeps_the_mask():
    values = np.ma.masked_array([[10.0, 20.0, 20.0], [40.0, 99.0, 30.0]], mask=[[0, 0, 0], [0, 1, 0]])
    out = tf.percentile_rank(values)
    # ranks 1, 2.5, 2.5, 5, 4 of n = 5 -> (rank - 1) / 4
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.compressed(), [0.0, 0.375, 0.375, 1.0, 0.75])
    assert out.mask[1, 1]
    np.testing.assert_allclose(tf.percentile_rank(np.full((2, 2), 7.0)), 0.5)


def test_log_percentile_stretches_log_values_between_percentiles():
    out = tf.log_percentile(np.array([1.0, 10.0, 100.0, 1000.0, 10000.0]), low=0, high=100)
    np.testing.assert_allclose(out, [0.0, 0.25, 0.5, 0.75, 1.0], atol=1e-6)
    # below detection (0) takes half the smallest positive value: log10 0.5 = -0.30103
    out = tf.log_percentile(np.array([0.0, 1.0, 10.0]), low=0, high=100)
    np.testing.assert_allclose(out, [0.0, 0.30103 / 1.30103, 1.0], atol=1e-5)
    # the default 2-98 stretch clips the tails
    out = tf.log_percentile(np.logspace(0, 4, 101))
    assert out.min() == 0.0 and out.max() == 1.0 and 0.49 < out[50] < 0.51
    with pytest.raises(LodestarError, match="positive"):
        tf.log_percentile(np.array([-1.0, 0.0]))


def test_fuzzy_large_and_small_follow_the_arcgis_definitions():
    x = np.array([0.0, 5.0, 10.0, 20.0])
    # 1 / (1 + (x / 10) ** -2): x = 5 -> 1 / 5, x = 20 -> 1 / 1.25
    np.testing.assert_allclose(tf.fuzzy_large(x, 10.0, 2.0), [0.0, 0.2, 0.5, 0.8], atol=1e-6)
    np.testing.assert_allclose(tf.fuzzy_small(x, 10.0, 2.0), [1.0, 0.8, 0.5, 0.2], atol=1e-6)
    with pytest.raises(LodestarError, match="positive midpoint"):
        tf.fuzzy_large(x, 0.0, 2.0)


def test_fuzzy_linear_rises_or_falls_between_its_bounds():
    x = np.array([5.0, 12.0, 15.0, 25.0])
    np.testing.assert_allclose(tf.fuzzy_linear(x, 10.0, 20.0), [0.0, 0.2, 0.5, 1.0], atol=1e-6)
    np.testing.assert_allclose(tf.fuzzy_linear(x, 20.0, 10.0), [1.0, 0.8, 0.5, 0.0], atol=1e-6)
    with pytest.raises(LodestarError):
        tf.fuzzy_linear(x, 3.0, 3.0)


def test_fuzzy_gaussian_and_invert():
    out = tf.fuzzy_gaussian(np.array([5.0, 7.0, 3.0]), 5.0, 0.1)
    np.testing.assert_allclose(out, [1.0, math.exp(-0.4), math.exp(-0.4)], atol=1e-6)
    inverted = tf.invert(np.ma.masked_array([0.25, 1.0, 0.5], mask=[0, 0, 1]))
    np.testing.assert_allclose(inverted.compressed(), [0.75, 0.0])
    assert inverted.mask.tolist() == [False, False, True]


def test_distance_in_metres_on_non_square_pixels():
    # 100 m wide, 50 m tall pixels; cell centres at x0 + 50 + 100 col, y0 - 25 - 50 row
    x0, y0 = 500_000.0, 4_000_000.0
    grid = RasterGrid(Affine(100.0, 0, x0, 0, -50.0, y0), 8, 6, None)
    vertical = LineString([(x0 + 50, y0), (x0 + 50, y0 - 300)])  # through column 0
    d = tf.distance_to_features_m([vertical], grid)
    assert d.dtype == np.float32 and d.shape == (6, 8)
    np.testing.assert_allclose(d[3], np.arange(8) * 100.0)
    horizontal = LineString([(x0, y0 - 25), (x0 + 800, y0 - 25)])  # through row 0
    d = tf.distance_to_features_m([horizontal], grid)
    np.testing.assert_allclose(d[:, 5], np.arange(6) * 50.0)
    # both: the diagonal cell (row 2, col 3) is min(300, 100) = 100 m away
    d = tf.distance_to_features_m([vertical, horizontal], grid)
    assert d[2, 3] == pytest.approx(100.0)


def test_distance_counts_features_beyond_the_grid_edge():
    x0, y0 = 500_000.0, 4_000_000.0
    grid = RasterGrid(Affine(100.0, 0, x0, 0, -100.0, y0), 8, 8, None)
    outside = LineString([(x0 - 150, y0), (x0 - 150, y0 - 800)])  # 2 pixels to the west
    d = tf.distance_to_features_m([outside], grid)
    np.testing.assert_allclose(d[4], (np.arange(8) + 2) * 100.0)
    with pytest.raises(LodestarError, match="no features"):
        tf.distance_to_features_m([], grid)


LEGEND = {1: "Silty limestone", 2: "Granite", 3: "Dolomitic shale", 4: "Metabasalt", 5: "Ultramafic volcanic rocks",
          6: "Mafic volcanic rocks", 7: "Basalts"}


@pytest.mark.parametrize("favourable,expected", [
    (["carbonate"], {1, 3}),
    (["Limestone"], {1, 3}),
    (["greenstone"], {4, 6, 7}),  # plural 'Basalts' matches; 'Ultramafic volcanic' is not mafic volcanic
    (["granite", "dolomite"], {1, 2, 3}),
])
def test_units_match_by_lithology_synonyms(favourable, expected):
    assert set(tf.matched_units(LEGEND, favourable)) == expected


def test_a_unit_named_by_negation_does_not_match():
    legend = {1: "greenstone (Archaean greenstone belt bedrock)", 2: "outside the greenstone belts",
              3: "non-carbonate clastic rocks", 4: "limestone, not dolomitised"}
    assert set(tf.matched_units(legend, ["greenstone"])) == {1}
    assert set(tf.matched_units(legend, ["carbonate"])) == {4}  # the negation follows the matched word


def test_units_match_by_code_name_value_and_wildcard():
    legend = {38: "LPZE", 14: "LPZ", 29: "UPZE", 45: "UPZC", 13: "Q"}
    assert set(tf.matched_units(legend, ["lpz"])) == {14}  # whole code only: not LPZE
    assert set(tf.matched_units(legend, ["38", "UPZC"])) == {38, 45}
    assert set(tf.matched_units(legend, ["UPZ*"])) == {29, 45}
    assert tf.matched_units(legend, ["limestone"]) == {}


def test_unit_membership_scores_favourable_units_and_others():
    codes = np.ma.masked_array([[1, 2, 3], [4, 2, 0]], mask=[[0, 0, 0], [0, 0, 1]])
    out = tf.unit_membership(codes, LEGEND, ["carbonate"], outside=0.1)
    np.testing.assert_allclose(out.filled(-1), [[1.0, 0.1, 1.0], [0.1, 0.1, -1]], atol=1e-6)
    with pytest.raises(LodestarError, match="units present: Dolomitic shale, Granite, Metabasalt, Silty limestone"):
        tf.unit_membership(codes, LEGEND, ["porphyry"])
