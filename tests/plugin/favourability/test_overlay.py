"""Weighted overlay and fuzzy gamma against arithmetic by hand; the surface of a synthetic case."""
from __future__ import annotations

import numpy as np
import pytest

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.favourability.evidence import EvidenceSpec
from lodestar.plugin.favourability.overlay import Surface, combine, favourability_surface

A = np.ma.masked_array([[0.2, 1.0, 0.5]], mask=[[0, 0, 1]])
B = np.ma.masked_array([[0.6, 0.0, 0.3]], mask=[[0, 0, 1]])
C = np.ma.masked_array([[0.9, 0.4, 0.7]], mask=[[1, 0, 1]])


def test_weighted_overlay_is_the_weighted_mean_of_the_layers_with_data():
    out = combine({"a": A, "b": B, "c": C}, {"a": 1, "b": 3, "c": 0})
    # (0.2 + 3 * 0.6) / 4 = 0.5, (1.0 + 0) / 4 = 0.25; c has weight 0; no data in the last cell
    np.testing.assert_allclose(out.compressed(), [0.5, 0.25], atol=1e-6)
    assert out.dtype == np.float32 and out.mask.tolist() == [[False, False, True]]
    out = combine({"a": A, "c": C}, {"a": 1, "c": 1})
    # first cell: only a has data
    np.testing.assert_allclose(out.compressed(), [0.2, 0.7], atol=1e-6)


def test_fuzzy_gamma_by_hand():
    a, b = np.array([[0.5]]), np.array([[0.8]])
    out = combine({"a": a, "b": b}, {"a": 1, "b": 1}, "gamma", 0.8)
    product, algebraic_sum = 0.5 * 0.8, 1 - 0.5 * 0.2
    assert float(out[0, 0]) == pytest.approx(algebraic_sum ** 0.8 * product ** 0.2, abs=1e-6)
    assert float(combine({"a": a, "b": b}, {"a": 1, "b": 1}, "gamma", 1.0)[0, 0]) == pytest.approx(0.9)
    assert float(combine({"a": a, "b": b}, {"a": 1, "b": 1}, "gamma", 0.0)[0, 0]) == pytest.approx(0.4)
    # weights 1 and 3 become exponents 0.5 and 1.5 (mean 1)
    out = combine({"a": a, "b": b}, {"a": 1, "b": 3}, "gamma", 0.8)
    product = 0.5 ** 0.5 * 0.8 ** 1.5
    algebraic_sum = 1 - 0.5 ** 0.5 * 0.2 ** 1.5
    assert float(out[0, 0]) == pytest.approx(algebraic_sum ** 0.8 * product ** 0.2, abs=1e-6)


def test_combine_refuses_what_it_cannot_do():
    with pytest.raises(LodestarError, match="positive weight"):
        combine({"a": A}, {"a": 0})
    with pytest.raises(LodestarError, match="method"):
        combine({"a": A}, {"a": 1}, "maximum")
    with pytest.raises(LodestarError, match="Gamma"):
        combine({"a": A}, {"a": 1}, "gamma", 1.5)
    with pytest.raises(LodestarError, match="one grid"):
        combine({"a": A, "b": np.zeros((2, 2))}, {"a": 1, "b": 1})


def test_surface_of_a_synthetic_case(raster_set):
    specs = [
        EvidenceSpec("As", "geochemistry", "index", "percentile_rank", weight=2.0, why="pathfinder"),
        EvidenceSpec("geology", "geological_map", "categorical", "units", params={"units": ["carbonate"]},
                     weight=1.0, why="host"),
    ]
    surface = favourability_surface(raster_set, specs)
    assert isinstance(surface, Surface) and surface.method == "weighted" and surface.gamma is None
    assert surface.crs.equals(raster_set.crs) and surface.grid == raster_set.grid
    values = surface.values
    assert values.mask[1:, 7].all() and not values.mask[:, :7].any()
    # row 0, col 4: As rank 4 / 42, in limestone: (2 * 4 / 42 + 1) / 3
    assert float(values[0, 4]) == pytest.approx((2 * 4 / 42 + 1) / 3, abs=1e-6)
    assert float(values[5, 0]) == pytest.approx(2 * (36 / 42) / 3, abs=1e-6)
    assert surface.table() == [
        {"layer": "As", "role": "geochemistry", "transformation": "percentile rank", "membership": "as transformed",
         "weight": 2.0, "why": "pathfinder"},
        {"layer": "geology", "role": "geological_map", "transformation": "favourable units: carbonate",
         "membership": "as transformed", "weight": 1.0, "why": "host"},
    ]
    gamma = favourability_surface(raster_set, specs, "gamma", 0.5)
    assert gamma.method == "gamma" and gamma.gamma == 0.5
    assert 0.0 <= float(gamma.values.min()) and float(gamma.values.max()) <= 1.0
    with pytest.raises(LodestarError, match="once"):
        favourability_surface(raster_set, specs + specs[:1])
