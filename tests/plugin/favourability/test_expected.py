"""Expected deposits per cell from the out-of-fold success rate (plugin/favourability/expected.py)."""
from __future__ import annotations

import numpy as np
import pytest

from lodestar.plugin.favourability.expected import concave_majorant


def test_the_majorant_runs_through_the_distributions_corners_and_bridges_a_dip():
    x, f = concave_majorant(np.array([0.1, 0.1, 0.5]))
    assert x.tolist() == [0.0, 0.1, 0.5, 1.0] and f.tolist() == pytest.approx([0.0, 2 / 3, 1.0, 1.0])
    # 0.2 then 0.3: the density would rise from 2.5 to 5; held non-increasing, the corner at 0.2 is bridged
    x, f = concave_majorant(np.array([0.3, 0.2]))
    assert x.tolist() == [0.0, 0.3, 1.0] and f.tolist() == [0.0, 1.0, 1.0]
    slopes = np.diff(f) / np.diff(x)
    assert np.all(np.diff(slopes) <= 0)
