"""Calibration against hand-computed weights, and block cross-validation that keeps each fold's deposits
away from the model that predicts it.

Grid: 20 x 20 cells of 1 km (one unit cell each, N(T) = 400), 9 deposits. Pattern B = rows 0-3 (80
cells) holds 6 of them:
    W+ = ln[(6/9) / (74/391)], W- = ln[(3/9) / (317/391)], C = ln[(6/74) / (3/317)],
    s(C) = sqrt(1/6 + 1/74 + 1/3 + 1/317).
Posterior probabilities: 6/80 in B, 3/320 outside, so 9 deposits are predicted (ratio 1). As 0-1
favourability (share of the area below, ties at mid-rank): outside (ranks 1-320) 160/400 = 0.4, in B
(ranks 321-400) 360/400 = 0.9.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from affine import Affine
from pyproj import CRS

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.favourability import calibration
from lodestar.plugin.favourability.blocks import spatial_folds
from lodestar.plugin.favourability.calibration import WofeModel, calibrate
from lodestar.plugin.raster_io import RasterGrid

GRID = RasterGrid(Affine(1000, 0, 500_000, 0, -1000, 4_020_000), 20, 20, CRS.from_epsg(32633))
CELLS = [(0, 1), (1, 7), (2, 12), (3, 18), (0, 15), (2, 4), (10, 3), (14, 10), (18, 16)]  # 6 in B, 3 outside
CONTRAST = math.log((6 / 74) / (3 / 317))
S_CONTRAST = math.sqrt(1 / 6 + 1 / 74 + 1 / 3 + 1 / 317)


def xy(cells) -> list:
    return [(500_000 + (c + 0.5) * 1000, 4_020_000 - (r + 0.5) * 1000) for r, c in cells]


def pattern() -> np.ma.MaskedArray:
    values = np.zeros((20, 20))
    values[:4] = 1
    return np.ma.masked_array(values)


def test_weights_of_evidence_by_hand():
    maps = {"B": pattern(), "flat": np.ma.masked_array(np.full((20, 20), 0.5))}
    cal = calibrate(maps, GRID, xy(CELLS), method="wofe")
    b, flat = cal.table
    assert b["layer"] == "B" and b["pattern"] == ">= 1" and b["deposits_in_pattern"] == 6
    assert b["area_share"] == pytest.approx(0.2)
    assert b["w_plus"] == pytest.approx(math.log((6 / 9) / (74 / 391)))
    assert b["w_minus"] == pytest.approx(math.log((3 / 9) / (317 / 391)))
    assert b["contrast"] == pytest.approx(CONTRAST) and b["s_contrast"] == pytest.approx(S_CONTRAST)
    assert b["studentised_contrast"] == pytest.approx(CONTRAST / S_CONTRAST)
    assert b["basis"] == "fitted on known deposits (9)"
    assert flat["pattern"].startswith("no pattern") and flat["w_plus"] is None
    assert cal.full.dtype == np.float32
    assert np.allclose(cal.full[:4], 0.9) and np.allclose(cal.full[4:], 0.4)
    assert cal.independence["predicted"] == pytest.approx(9) and cal.independence["ratio"] == pytest.approx(1)
    assert any("ratio 1.00" in line for line in cal.log)


def test_unpenalised_logistic_regression_gives_the_contrast(monkeypatch):
    """One binary layer: the logistic coefficient is the log odds ratio, i.e. the contrast, and its standard
    error is s(C)."""
    monkeypatch.setattr(calibration, "LOGISTIC_C", 1e9)
    cal = calibrate({"B": pattern()}, GRID, xy(CELLS), method="logistic")
    row = cal.table[0]
    assert row["coefficient"] == pytest.approx(CONTRAST, rel=1e-3)
    assert row["s_contrast"] == pytest.approx(S_CONTRAST, rel=1e-3)
    assert np.allclose(cal.full[:4], 0.9) and np.allclose(cal.full[4:], 0.4)
    assert row["w_plus"] is None and row["method"] == "logistic regression"


def test_penalised_logistic_regression_shrinks():
    row = calibrate({"B": pattern()}, GRID, xy(CELLS), method="logistic").table[0]
    assert 0 < row["coefficient"] < CONTRAST


def test_no_deposit_of_a_held_out_fold_reaches_its_model(monkeypatch):
    """Every fit is recorded: the cell ids it saw (an id map as a feature) and its deposits."""
    fits = []

    class Spy(WofeModel):
        def __init__(self, features, deposits, cell_units):
            fits.append((features[:, 0].copy(), deposits.copy()))
            super().__init__(features, deposits, cell_units)

    monkeypatch.setitem(calibration.FITTERS, "wofe", Spy)
    ids = np.ma.masked_array(np.arange(400, dtype=float).reshape(20, 20))
    cal = calibrate({"id": ids, "B": pattern()}, GRID, xy(CELLS), folds=4)
    assert len(fits) == 5  # one per fold, then the full fit
    fold = cal.folds.fold.ravel()
    deposit_ids = {r * 20 + c for r, c in CELLS}
    for k, (seen, deposits) in enumerate(fits[:4]):
        seen = set(seen.astype(int))
        held_out = set(np.flatnonzero(fold == k))
        assert held_out and not (seen & held_out)
        assert seen | held_out == set(range(400))
        assert deposits.sum() == 9 - len(deposit_ids & held_out) == 9 - cal.folds.deposits_per_fold[k]
    assert len(fits[4][0]) == 400 and fits[4][1].sum() == 9


def test_a_fold_only_its_own_deposits_mark_is_not_learnt():
    """A map that is 1 around the deposits of fold 0 only (their cells and the fold-0 cells beside them, so
    that the pattern is larger than its deposits): the full fit ranks them first; out of fold, the model
    that predicts fold 0 never saw the mark, so they score like every other cell of their kind there."""
    counts = np.zeros((20, 20))
    for r, c in CELLS:
        counts[r, c] += 1
    folds = spatial_folds(GRID, np.ones((20, 20), bool), counts)
    mark = np.zeros((20, 20))
    marked = [(r, c) for r, c in CELLS if folds.fold[r, c] == 0]
    for r, c in marked:
        mark[max(r - 1, 0):r + 2, max(c - 1, 0):c + 2] = 1
    mark[folds.fold != 0] = 0
    assert marked
    cal = calibrate({"B": pattern(), "mark": np.ma.masked_array(mark)}, GRID, xy(CELLS))
    assert (cal.folds.fold == folds.fold).all()
    for r, c in marked:
        assert cal.full[r, c] > cal.full[mark == 0].max()
        same_kind = (folds.fold == 0) & (pattern().data == pattern().data[r, c]) & (mark == 0)
        assert np.allclose(cal.cv[r, c], cal.cv[same_kind])


def test_a_missing_layer_weighs_nothing():
    """Row 19 lacks B: there the weights of evidence logit is the prior plus the other layer's weight only;
    logistic regression fills B with its training mean. A cell no map covers is not study area."""
    b = pattern()
    b[19, :] = np.ma.masked
    other = np.ma.masked_array(np.linspace(0, 1, 400).reshape(20, 20))
    other[19, 19] = np.ma.masked
    maps = {"B": b, "other": other}
    cal = calibrate(maps, GRID, xy(CELLS) + [(0.0, 0.0), (500_000 + 19.5 * 1000, 4_020_000 - 19.5 * 1000)])
    assert cal.full.mask.sum() == 1 and cal.full.mask[19, 19] and cal.cv.mask[19, 19]
    assert any("19 cells lack some evidence maps" in line for line in cal.log)
    assert any("2 of 11 deposits lie outside" in line for line in cal.log)
    features = np.column_stack([layer.filled(np.nan).ravel() for layer in maps.values()])[:-1]
    counts = np.zeros(400)
    for r, c in CELLS:
        counts[r * 20 + c] += 1
    model = WofeModel(features, counts[:-1], 1.0)
    logit, _, condition = model.evidence(features)
    g = model.patterns[1]
    w_other = np.where(g.contains(features[:, 1]), g.table.w_plus[g.best], g.table.w_minus[g.best])
    assert np.allclose(logit[380:399], model.prior + w_other[380:399])
    assert set(condition[380:399] // 3) == {2}  # B missing
    logistic = calibrate(maps, GRID, xy(CELLS), method="logistic")
    assert not logistic.full.mask[19, :19].any() and 0 < logistic.cv.min() and logistic.cv.max() < 1


def test_errors():
    with pytest.raises(LodestarError, match="Unknown calibration method"):
        calibrate({"B": pattern()}, GRID, xy(CELLS), method="forest")
    with pytest.raises(LodestarError, match="not on the 20 x 20 grid"):
        calibrate({"B": np.ma.zeros((5, 5))}, GRID, xy(CELLS))
    with pytest.raises(LodestarError, match="at least 2 known deposits"):
        calibrate({"B": pattern()}, GRID, xy(CELLS[:1]))
