"""workspace.silence: a layer cannot speak when it holds no data, one unit or colour, or one value to within
FLAT_SPREAD of its size (issue 60, scenario 4)."""
from __future__ import annotations

import numpy as np

from lodestar.plugin.reason.workspace import FLAT_SPREAD, silence


def _band(values) -> np.ma.MaskedArray:
    return np.ma.masked_invalid(np.asarray(values, dtype="float32"))[np.newaxis]


def test_a_layer_one_value_to_within_the_tolerance_is_flat():
    rng = np.random.default_rng(1)
    nearly = 0.5 + rng.uniform(-1e-6, 1e-6, (50, 50))
    assert len(np.unique(nearly.astype("float32"))) > 2  # many float32 values: an exact test saw them vary
    assert silence(_band(nearly)).startswith(f"holds a single value to within {FLAT_SPREAD:g} of it (0.5 +/- 1e-06")
    assert silence(_band(np.full((50, 50), 0.5))) == "holds a single value (0.5) over the data"
    holed = np.full((50, 50), np.nan)
    holed[10, 10] = 7.0
    assert silence(_band(holed)) == "holds a single value (7) over the data"
    assert silence(_band(np.full((5, 5), np.nan))) == "holds no data over the analysed area"


def test_small_spreads_that_are_measurements_speak():
    """A quiet total magnetic field (55,000 +/- 5 nT: 9e-5 of it), values near zero (scale-free: +/- 1e-9), two
    classes of a classed layer: each varies as a measurement does."""
    rng = np.random.default_rng(2)
    assert silence(_band(55_000 + rng.uniform(-5, 5, (50, 50)))) == ""
    assert silence(_band(rng.uniform(-1e-9, 1e-9, (50, 50)))) == ""
    assert silence(_band(np.r_[np.full(99, 7.0), 8.0].reshape(10, 10))) == ""
    assert silence(_band(np.full((10, 10), 3.0)), {3: "granite"}) == "holds a single unit (granite) over the data"
    assert silence(_band(np.r_[np.full(99, 3.0), 4.0].reshape(10, 10)), {3: "granite", 4: "unit 4"}) == ""
