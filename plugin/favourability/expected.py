"""How many deposits a calibrated surface leads one to expect in each cell, read from its out-of-fold success rate.

The fitted models' values are not deposits per cell (an ensemble averages ranks; a model fitted on deposits against
a background sample, classes balanced, scales its odds by the sample), so a place's expected deposits cannot be the
sum of its values. The out-of-fold surface ranks the known deposits among the cells: each deposit lies in the stretch
of the ranked area its cell's tie group spans (spread evenly over it: a class map ties many cells). The density of
the deposits down the ranked area, held non-increasing (the Grenander estimator: the slopes of the least concave
majorant of their distribution; no constant to choose), says how many deposits a cell at a given rank held out of
fold. Each cell of the full fit takes what that
density puts on its own stretch of the ranked area (tied cells share theirs); the cells add up to the known deposits
inside the analysed area. Out of fold, so it does not credit the
full fit's memory of the deposits it was fitted on.
"""
from __future__ import annotations

import numpy as np

from ..evaluation import cells_of, rank_positions


def expected_deposits(full: np.ma.MaskedArray, cv: np.ma.MaskedArray, grid, deposit_xy) -> np.ma.MaskedArray | None:
    """Expected deposits per cell of the `full` surface from the out-of-fold surface `cv`'s ranking of the deposits at
    map points `deposit_xy` (see the module docstring); None when no deposit lies in the analysed area. Cells tied
    on the full fit share their stretch of the area alike."""
    cv = np.ma.masked_invalid(np.ma.asarray(cv, dtype=float))
    scored = ~np.ma.getmaskarray(cv)
    rows, cols, inside = cells_of(deposit_xy, grid, scored)
    if not inside.any():
        return None
    above, tied = rank_positions(cv.compressed(), np.asarray(cv.data)[rows[inside], cols[inside]])
    knots = concave_majorant(above, tied)
    full = np.ma.masked_invalid(np.ma.asarray(full, dtype=float))
    valid = ~np.ma.getmaskarray(full)
    values = np.asarray(full.data)[valid]
    above, tied = rank_positions(values, values)
    held = np.interp(above + tied, *knots) - np.interp(above, *knots)  # share of the deposits in the tie group
    out = np.zeros(full.shape)
    out[valid] = int(inside.sum()) * held / (tied * len(values))
    return np.ma.masked_array(out, mask=~valid)


def concave_majorant(starts: np.ndarray, widths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x, F) knots of the least concave majorant, from (0, 0) to (1, 1), of the distribution of points on [0, 1] each
    spread evenly over [start, start + width] (width 0: a point): its slopes are the Grenander estimate of their
    non-increasing density. Spreads are tie groups of a ranking, so two either coincide or do not overlap."""
    groups, count = np.unique(np.column_stack([starts, widths]).clip(0.0, 1.0), axis=0, return_counts=True)
    done = np.cumsum(count) / count.sum()
    xs = np.concatenate([[0.0], np.column_stack([groups[:, 0], groups.sum(axis=1)]).ravel(), [1.0]])
    fs = np.concatenate([[0.0], np.column_stack([done - count / count.sum(), done]).ravel(), [1.0]])
    hull = [0]
    for i in range(1, len(xs)):  # upper hull, left to right: drop a point on or under the chord past it
        while len(hull) >= 2 and _cross(xs, fs, hull[-2], hull[-1], i) >= 0:
            hull.pop()
        hull.append(i)
    return xs[hull], fs[hull]


def _cross(xs: np.ndarray, fs: np.ndarray, a: int, b: int, c: int) -> float:
    """Not negative when b lies on or under the chord from a to c (a-b-c turns left or runs straight)."""
    return (xs[b] - xs[a]) * (fs[c] - fs[a]) - (fs[b] - fs[a]) * (xs[c] - xs[a])
