"""How many deposits a calibrated surface leads one to expect in each cell, read from its out-of-fold success rate.

The fitted models' values are not deposits per cell (an ensemble averages ranks; a model fitted on deposits against
a background sample, classes balanced, scales its odds by the sample), so a place's expected deposits cannot be the
sum of its values. The out-of-fold surface ranks the known deposits among the cells: each deposit's position is the
share of the area ranked above it (ties halved). The density of those positions, held non-increasing (the
Grenander estimator: the slopes of the least concave majorant of their empirical distribution; no constant to
choose), says how many deposits a cell at a given rank held out of fold. Each cell of the full fit takes what that
density puts on its own stretch of the ranked area (tied cells share theirs); the cells add up to the known deposits
inside the analysed area. Out of fold, so it does not credit the
full fit's memory of the deposits it was fitted on.
"""
from __future__ import annotations

import numpy as np

from ..evaluation import evaluate_surface, rank_positions


def expected_deposits(full: np.ma.MaskedArray, cv: np.ma.MaskedArray, grid, deposit_xy) -> np.ma.MaskedArray | None:
    """Expected deposits per cell of the `full` surface from the out-of-fold surface `cv`'s ranking of the deposits at
    map points `deposit_xy` (see the module docstring); None when no deposit lies in the analysed area. Cells tied
    on the full fit share their stretch of the area alike."""
    shares = [s for s in evaluate_surface(cv, grid, deposit_xy)["deposit_area_shares"] if s is not None]
    if not shares:
        return None
    knots = concave_majorant(np.asarray(shares, dtype=float))
    valid = ~np.ma.getmaskarray(full)
    values = np.asarray(np.ma.getdata(full), dtype=float)[valid]
    above, tied = rank_positions(values, values)
    held = np.interp(above + tied, *knots) - np.interp(above, *knots)  # share of the deposits in the tie group
    out = np.zeros(full.shape)
    out[valid] = len(shares) * held / (tied * len(values))
    return np.ma.masked_array(out, mask=~valid)


def concave_majorant(positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x, F) knots of the least concave majorant of the empirical distribution function of `positions` in [0, 1],
    from (0, 0) to (1, 1): its slopes are the Grenander estimate of their non-increasing density."""
    x, count = np.unique(np.clip(positions, 0.0, 1.0), return_counts=True)
    xs = np.concatenate([[0.0], x, [1.0]])
    fs = np.concatenate([[0.0], np.cumsum(count) / count.sum(), [1.0]])
    hull = [0]
    for i in range(1, len(xs)):  # upper hull, left to right: drop a point on or under the chord past it
        while len(hull) >= 2 and _cross(xs, fs, hull[-2], hull[-1], i) >= 0:
            hull.pop()
        hull.append(i)
    return xs[hull], fs[hull]


def _cross(xs: np.ndarray, fs: np.ndarray, a: int, b: int, c: int) -> float:
    """Not negative when b lies on or under the chord from a to c (a-b-c turns left or runs straight)."""
    return (xs[b] - xs[a]) * (fs[c] - fs[a]) - (fs[b] - fs[a]) * (xs[c] - xs[a])
