"""Background models: classed, lognormal and normal layers, and the unfavourable half as the spread."""
from __future__ import annotations

import numpy as np
import pytest

from lodestar.plugin.reason.background import background_model, from_measure, to_measure


def test_few_integer_values_are_classed():
    values = np.ma.masked_array(np.repeat(np.arange(1, 8), 100).astype("float32"))
    assert background_model(values) == {"model": "classed", "distinct": 7}


def test_lognormal_geochemistry_is_measured_in_log_units():
    rng = np.random.default_rng(0)
    values = np.ma.masked_array(np.exp(rng.normal(2.0, 0.8, 20_000)))
    model = background_model(values)
    assert model["model"] == "lognormal"
    assert model["bg_centre"] == pytest.approx(2.0, abs=0.03) and model["bg_sigma"] == pytest.approx(0.8, abs=0.03)
    assert from_measure(to_measure(20.0, model), model) == pytest.approx(20.0)
    assert to_measure(-1.0, model) != to_measure(-1.0, model)  # NaN: no log of a non-positive value


def test_an_anomaly_does_not_inflate_the_spread_it_is_measured_against():
    rng = np.random.default_rng(1)
    background = rng.normal(1.0, 0.05, 9_000)
    anomaly = rng.normal(2.0, 0.05, 1_000)  # a tenth of the area, far above
    model = background_model(np.ma.masked_array(np.concatenate([background, anomaly])))
    assert model["model"] == "normal"  # a ratio near 1: no order of magnitude, not lognormal
    assert model["bg_sigma"] == pytest.approx(0.05, rel=0.1)
    low = background_model(np.ma.masked_array(np.concatenate([background, 2.0 - anomaly])), favourable="low")
    assert low["bg_sigma"] == pytest.approx(0.05, rel=0.1)


def test_a_clipped_display_stretch_carries_its_ceiling():
    """A greyscale rendering stretched to 1-255 and clipped at its top half percent: values stop at 255, so a
    4-spread threshold (here near 400) would lie where no cell can be; the model says where the layer stops."""
    rng = np.random.default_rng(2)
    physical = rng.normal(0.0, 1.0, 50_000)
    lo, hi = np.quantile(physical, [0.005, 0.995])
    grey = np.clip(1 + 254 * (physical - lo) / (hi - lo), 1, 255).astype("float32")
    model = background_model(np.ma.masked_array(grey))
    assert model["model"] == "normal" and model["ceiling"] == 255.0
    assert model["bg_centre"] + 4 * model["bg_sigma"] > 255.0
    low = background_model(np.ma.masked_array(grey), favourable="low")
    assert low["ceiling"] == 1.0  # the favourable end of a favourable-low layer is its floor
    unclipped = background_model(np.ma.masked_array(physical.astype("float32")))
    assert "ceiling" not in unclipped
