"""Calibration's inner workings checked one by one: the training sample (background beyond the buffer, classes of
equal weight), nested cross-validation of the tree models, permutation importance and the response curves.

Grid: 20 x 20 cells of 1 km, 9 deposits (CELLS, as in test_calibration.py), none sharing a cell or a neighbour.
The background buffer, BUFFER_M = 1000 m, is 1 pixel: a deposit keeps out its own cell and its 4 edge neighbours
(distance 1), not its diagonal ones (distance sqrt 2). On the map edge (0, 1) and (0, 15) keep out 4 cells, the
other 7 deposits 5 each: 43 cells, so the full training sample is 9 deposit rows and 400 - 43 = 357 background.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from calibration_cases import CELLS, GRID, FitSpy, check_nested, counts_of, grid, ordered, pattern, sklearn, xy

from lodestar.plugin.favourability import calibration, models
from lodestar.plugin.favourability.blocks import spatial_folds
from lodestar.plugin.favourability.calibration import _Data, _importance, calibrate


def data_of(monkeypatch, layers, on_grid, deposit_xy, **kwargs) -> _Data:
    """The study area's rows as calibrate builds them (weights of evidence run; the _Data it made is kept)."""
    made = []

    class Kept(_Data):
        def __init__(self, *args):
            super().__init__(*args)
            made.append(self)

    monkeypatch.setattr(calibration, "_Data", Kept)
    calibrate(layers, on_grid, deposit_xy, method="wofe", **kwargs)
    assert len(made) == 1
    return made[0]


def distance_to_deposits(data: _Data, rows: np.ndarray, use: np.ndarray) -> np.ndarray:
    """Pixels from each of `rows` to the nearest deposit among the rows `use` (brute force over the deposits)."""
    deposits = np.flatnonzero(use & (data.counts > 0))
    dr = data.rows[rows][:, None] - data.rows[deposits][None, :]
    dc = data.cols[rows][:, None] - data.cols[deposits][None, :]
    return np.sqrt(dr ** 2 + dc ** 2).min(axis=1)


def check_sample(data: _Data, use: np.ndarray, index: np.ndarray, weight: np.ndarray, complete: bool = True):
    """A training sample of the rows `use`: its deposit rows first (every one, weighted by its deposit count),
    then background rows all farther than the buffer from every deposit of `use` (all of them when `complete`),
    equal in weight, the two classes' weights of equal totals, mean weight 1."""
    positive = np.flatnonzero(use & (data.counts > 0))
    n_pos = len(positive)
    assert use[index].all() and len(set(index.tolist())) == len(index)
    assert index[:n_pos].tolist() == positive.tolist()
    background = index[n_pos:]
    assert (data.counts[background] == 0).all()
    assert distance_to_deposits(data, background, use).min() > data.buffer_px
    if complete:
        beyond = np.flatnonzero(use & (data.counts == 0))
        beyond = beyond[distance_to_deposits(data, beyond, use) > data.buffer_px]
        assert background.tolist() == beyond.tolist()
    assert weight[:n_pos] / weight[0] == pytest.approx(data.counts[positive] / data.counts[positive[0]])
    assert np.ptp(weight[n_pos:]) == pytest.approx(0.0, abs=1e-12)
    assert weight[:n_pos].sum() == pytest.approx(weight[n_pos:].sum())
    assert weight.mean() == pytest.approx(1.0)


def test_the_buffer_is_1000_m_in_pixels(monkeypatch):
    """1 pixel on a 1 km grid, 4 on a 250 m one; on a grid without a CRS, 2 pixels."""
    layers = [ordered("B", pattern())]
    assert calibration.BUFFER_M == 1000.0
    assert data_of(monkeypatch, layers, GRID, xy(CELLS)).buffer_px == 1.0
    assert data_of(monkeypatch, layers, grid(20, 250.0), xy(CELLS, pixel=250.0)).buffer_px == 4.0
    assert data_of(monkeypatch, layers, grid(20, crs=None), xy(CELLS)).buffer_px == 2.0


def test_the_full_training_sample_by_hand(monkeypatch):
    """All rows: the 9 deposit cells, one of them holding 2 deposits (10 in all) and counted once (one place), and
    the 357 background cells farther than 1 pixel from them (module docstring). Weights before scaling: 1 a deposit
    cell, 9/357 a background cell (9 in all each side); the mean of the 366 weights is 18/366, so a deposit cell
    weighs 366/18 = 20.33 (the cell of two as well) and a background cell 366/714."""
    data = data_of(monkeypatch, [ordered("B", pattern())], GRID, xy(CELLS + [(10, 3)]))
    everything = np.ones(400, dtype=bool)
    index, weight = data.sample(everything)
    check_sample(data, everything, index, weight)
    assert len(index) == 366 and len(index) - 9 == 357
    assert data.counts.max() == 1 and data.counts.sum() == 9
    assert weight[:9] == pytest.approx(np.full(9, 366 / 18))
    assert weight[9:] == pytest.approx(np.full(357, 366 / 714))
    cell = {(int(r), int(c)) for r, c in zip(data.rows[index], data.cols[index])}
    assert (0, 0) not in cell and (1, 1) not in cell and (11, 3) not in cell  # edge neighbours: distance 1
    assert (1, 0) in cell and (11, 4) in cell  # diagonal neighbours: distance sqrt(2), beyond the buffer


def test_a_fold_sample_buffers_its_own_deposits_only(monkeypatch):
    """Leaving fold k out, the sample holds the other folds' deposits and the background beyond their buffer; a
    held-out deposit is not in it, and the training cells beside it (its fold is unknown to the model) may be
    background: (0, 14), in fold 1, lies beside the deposit (0, 15) of fold 3."""
    data = data_of(monkeypatch, [ordered("B", pattern())], GRID, xy(CELLS), folds=4)
    cell = {(int(r), int(c)): i for i, (r, c) in enumerate(zip(data.rows, data.cols))}
    assert data.fold[cell[0, 15]] == 3 and data.fold[cell[0, 14]] == 1
    for k in range(4):
        use = data.fold != k
        index, weight = data.sample(use)
        check_sample(data, use, index, weight)
        held = np.flatnonzero((data.fold == k) & (data.counts > 0))
        assert len(held) and not set(held.tolist()) & set(index.tolist())
        assert len(index) < use.sum()
    assert cell[0, 14] in data.sample(data.fold != 3)[0] and cell[0, 14] not in data.sample(data.fold != 2)[0]


def test_the_background_is_drawn_once_stratified_by_fold(monkeypatch):
    """With room for 50 background cells in an outer fit (5 folds: 62.5 drawn in all), each fold gives its share of
    62.5 in proportion to its deposit-free cells, drawn once from them (seeded by the fold: the same draw in every
    run of that seed, another with another seed); every sample takes its folds' draws, in row order, less the cells
    within the buffer of its own deposits, and the classes still weigh the same."""
    monkeypatch.setattr(calibration, "BACKGROUND_CELLS", 50)
    data = data_of(monkeypatch, [ordered("B", pattern())], GRID, xy(CELLS))
    pool = data.background()
    free = [np.flatnonzero((data.fold == k) & (data.counts == 0)) for k in range(5)]
    shares = [int(round(62.5 * len(f) / sum(len(g) for g in free))) for f in free]
    assert [int((data.fold[pool] == k).sum()) for k in range(5)] == shares and 60 <= sum(shares) <= 65
    assert (np.diff(pool) > 0).all() and (data.counts[pool] == 0).all()
    assert data.background() is pool
    everything = np.ones(400, dtype=bool)
    index, weight = data.sample(everything)
    check_sample(data, everything, index, weight, complete=False)
    assert set(index[9:].tolist()) <= set(pool.tolist()) and (np.diff(index[9:]) > 0).all()
    beyond = pool[distance_to_deposits(data, pool, everything) > data.buffer_px]
    assert index[9:].tolist() == beyond.tolist()
    for k in range(5):
        use = data.fold != k
        index, weight = data.sample(use)
        check_sample(data, use, index, weight, complete=False)
        mine = pool[use[pool]]
        assert index[len(index) - len(index[data.counts[index] == 0]):].tolist() == \
            mine[distance_to_deposits(data, mine, use) > data.buffer_px].tolist()
    again = data_of(monkeypatch, [ordered("B", pattern())], GRID, xy(CELLS))
    other = data_of(monkeypatch, [ordered("B", pattern())], GRID, xy(CELLS), seed=1)
    assert again.background().tolist() == pool.tolist() and other.background().tolist() != pool.tolist()


@sklearn
def test_every_fit_is_given_a_training_sample(monkeypatch):
    """Logistic regression, 4 folds: every sample drawn is a proper one (check_sample), each set of folds is sampled
    once, and every fit (inner, outer and full) is given exactly the sample of the folds it saw, with its weights."""
    spy = FitSpy(monkeypatch)
    samples = {}
    real = _Data.sample

    def sample(self, use):
        index, weight = real(self, use)
        check_sample(self, use, index, weight)
        key = tuple(sorted(set(self.fold[use].tolist())))
        assert key not in samples
        samples[key] = (index, weight)
        return index, weight

    monkeypatch.setattr(_Data, "sample", sample)
    ids = np.arange(400, dtype=float).reshape(20, 20)
    cal = calibrate([ordered("id", ids), ordered("B", pattern())], GRID, xy(CELLS), method="logistic", folds=4)
    fold = cal.folds.fold.ravel()
    assert len(samples) == 4 + 1 + 5 and len(samples[(0, 1, 2, 3)][0]) == 366  # the full fit's: 9 + 357
    assert len(spy.fits) == 4 + 1 + 7 * 5
    counts = counts_of(CELLS).ravel()
    for fit in spy.fits:
        index, weight = samples[tuple(sorted(set(fold[fit["seen"]].tolist())))]
        assert fit["seen"].tolist() == index.tolist() and fit["weight"] == pytest.approx(weight)
        assert fit["deposits"] == counts[index].sum() > 0


@sklearn
@pytest.mark.parametrize("method", ["forest", "boosting"])
def test_a_tree_model_never_sees_the_fold_it_predicts(method, quick, monkeypatch):
    """test_calibration's check for the tree models, with 2 candidates so that they are chosen inside the training
    folds (calibration_cases.check_nested): no fit saw the fold it predicts or the fold its choice serves."""
    two = {"forest": ({"min_samples_leaf": 5}, {"min_samples_leaf": 20}),
           "boosting": ({"max_leaf_nodes": 7, "min_samples_leaf": 5},
                        {"max_leaf_nodes": 7, "min_samples_leaf": 5, "monotone": False})}
    monkeypatch.setitem(models.GRIDS, method, two[method])
    spy = FitSpy(monkeypatch)
    ids = np.arange(400, dtype=float).reshape(20, 20)
    cal = calibrate([ordered("id", ids), ordered("B", pattern())], GRID, xy(CELLS), method=method, folds=4)
    assert min(cal.folds.deposits_per_fold) >= 1  # so that both inner halves hold deposits, in every outer fold
    check_nested(spy, cal, method, two[method], 4)
    assert len(spy.fits) == 4 + 1 + 2 * 5


class Reversing:
    """A stand-in for the random generator: a 'shuffle' that reverses the order, so that importance is worked out
    by hand."""

    def permutation(self, values):
        return np.asarray(values)[::-1]


class Shuffled(_Data):
    """The study area's rows, each fold's importance drawn by `Reversing`."""

    def rng_for(self, k: int):
        return Reversing()


class FirstColumn:
    """A fold model scoring each cell by its first layer, blind to the second."""

    def predict(self, x):
        return x[:, 0]


def test_importance_by_hand_is_the_deposit_weighted_drop_in_auc():
    """Fold 0: layer 1 at [1, 0, 0, 0] on a deposit and 3 background cells: AUC 1; reversed, [0, 0, 0, 1]: the
    deposit ties 2 cells and is under 1, AUC 1/3, a drop of 2/3. Fold 1: a cell of 2 deposits at 0 and 2 background
    cells at 1: AUC 0; reversed, [1, 1, 0]: AUC (1/2 + 1) / 2 = 3/4, a drop of -3/4 (shuffling raises the AUC).
    Fold 2 holds no deposit and counts for nothing. Over the folds, by their deposits: (1 x 2/3 + 2 x -3/4) / 3 =
    -5/18. The second layer, unused by the model, drops nothing."""
    first = np.array([1, 0, 0, 0, 0, 1, 1, 0.5, 0.5])
    counts = np.array([1, 0, 0, 0, 2, 0, 0, 0, 0])
    fold = np.array([0, 0, 0, 0, 1, 1, 1, 2, 2])
    layers = [ordered("first", first[None, :]), ordered("second", np.zeros((1, 9)))]
    x = np.column_stack([first, np.arange(9.0)])
    data = Shuffled(models.Columns(layers), x, counts, fold, np.ones((1, 9), bool), 1.0, 1.0, np.zeros(9, int),
                    np.arange(9), np.random.default_rng(0))
    held = [np.flatnonzero(fold == k) for k in range(3)]

    def importance(folds):
        return _importance({"models": [FirstColumn()] * len(folds), "held": [held[k] for k in folds]}, data)

    assert importance([0]).tolist() == pytest.approx([2 / 3, 0.0])
    assert importance([1]).tolist() == pytest.approx([-3 / 4, 0.0])
    assert importance([0, 1, 2]).tolist() == pytest.approx([-5 / 18, 0.0])


def flip_case(n: int = 30):
    """30 x 30 cells in 2 folds: B = rows 0-9 holds 24 of the 30 deposits; `flip` is uniform noise but for the
    deposits, high (0.75-1) in fold 0 and low (0-0.25) in fold 1, so what a model learns of it on one fold runs
    against the deposits of the other; `noise`, pure noise."""
    rng = np.random.default_rng(0)
    cells = [divmod(int(i), n) for i in np.r_[rng.choice(10 * n, 24, replace=False),
                                              10 * n + rng.choice(20 * n, 6, replace=False)]]
    counts = counts_of(cells, n)
    folds = spatial_folds(grid(n), np.ones((n, n), bool), counts, None, 2, 0)
    b = np.zeros((n, n))
    b[:10] = 1
    flip = rng.uniform(0, 1, (n, n))
    for k, low, high in ((0, 0.75, 1.0), (1, 0.0, 0.25)):
        here = (counts > 0) & (folds.fold == k)
        flip[here] = rng.uniform(low, high, here.sum())
    noise = rng.uniform(size=(n, n))
    return [ordered("B", b), ordered("flip", flip), ordered("noise", noise)], cells, folds


@pytest.mark.parametrize("method", ["wofe", pytest.param("logistic", marks=sklearn)])
def test_a_layer_is_flagged_as_lowering_skill_only_when_its_shuffling_raises_the_auc(method):
    """B (it holds 24 of the 30 deposits) gains importance and is not flagged; `flip` runs against the held-out
    deposits of each fold model, so shuffling it raises the out-of-fold AUC: its importance is negative and it is
    flagged, and left out the out-of-fold AUC rises. Every row is flagged exactly when its importance is negative."""
    layers, cells, folds = flip_case()
    assert folds.deposits_per_fold == (15, 15)
    cal = calibrate(layers, grid(30), xy(cells, 30), method=method, folds=2)
    b, flip, noise = cal.table
    assert b["layer"] == "B" and b["importance"] > 0.15 and not b["lowers_skill"]
    assert flip["layer"] == "flip" and flip["importance"] < -0.03 and flip["lowers_skill"]
    assert abs(noise["importance"]) < 0.03 and not noise["lowers_skill"]
    for row in cal.table:
        assert row["lowers_skill"] == (row["importance"] < 0)
    without = calibrate([layers[0], layers[2]], grid(30), xy(cells, 30), method=method, folds=2)
    assert without.out_of_fold[method]["auc"] > cal.out_of_fold[method]["auc"] + 0.05
    assert all(not row["lowers_skill"] for row in without.table)


def test_the_response_of_a_binary_pattern_rises_from_0_to_1():
    """Weights of evidence on B (rows 0-3, 6 of the 9 deposits) and a flat layer. B's levels are its 11 deciles:
    0 up to the 0.8 one, which falls between the 320th and 321st of the 400 values (0 and 1) at 319.2: 0.2; then 1.
    At 0 and 0.2 every sampled cell is outside the pattern >= 1, at 1 inside it: the response rises, and is the same
    at 0 and 0.2. The flat layer has one level, 0.5, and no pattern: importance 0, not flagged."""
    cal = calibrate([ordered("B", pattern()), ordered("flat", np.full((20, 20), 0.5))], GRID, xy(CELLS),
                    method="wofe")
    b, flat = cal.table
    assert [entry["value"] for entry in b["response"]] == pytest.approx([0.0, 0.2, 1.0])
    at_0, at_02, at_1 = (entry["favourability"] for entry in b["response"])
    assert at_1 > at_0 and at_02 == at_0
    assert [entry["value"] for entry in flat["response"]] == [0.5]
    assert flat["importance"] == 0 and not flat["lowers_skill"]  # unused by the model: shuffling it changes nothing


def test_the_response_is_the_surface_with_every_sampled_cell_set_to_the_level():
    """The response is the mean favourability 'as the surface': with B set to 1 every cell is in the pattern, so each
    scores as a pattern cell of the surface, 0.9 (ranks 321-400 of 400 tied, mid-rank 360.5, less 0.5, over 400);
    with B at 0 (or 0.2) every cell scores as an outside one, 0.4 (ranks 1-320, 160.5 - 0.5 over 400). Setting the
    flat layer to its own value changes nothing: the mean of the surface over the sampled cells, here all 400 (the
    sample is 2,000 at most), (80 x 0.9 + 320 x 0.4) / 400 = 0.5."""
    cal = calibrate([ordered("B", pattern()), ordered("flat", np.full((20, 20), 0.5))], GRID, xy(CELLS),
                    method="wofe")
    b, flat = cal.table
    inside, outside = float(cal.full[0, 0]), float(cal.full[10, 0])
    assert inside == pytest.approx(0.9) and outside == pytest.approx(0.4)
    assert [entry["favourability"] for entry in b["response"]] == pytest.approx([outside, outside, inside], abs=1e-4)
    assert flat["response"][0]["favourability"] == pytest.approx(float(cal.full.mean()), abs=1e-4)
    assert math.isclose(float(cal.full.mean()), 0.5, abs_tol=1e-6)
