"""The models fitted on known deposits, against values worked out by hand.

Weights of evidence over 100 unit cells holding 6 deposits (rows 0-3, 50 and 60):
- A, ordered: 1 on rows 0-19, 0 elsewhere, missing on rows 80-84. Over its 95 known cells (6 deposits, N(~D) = 89)
  the pattern A >= 1 holds 20 cells and 4 deposits:
      W+ = ln[(4/6) / (16/89)],  s2(W+) = 1/4 + 1/16;   W- = ln[(2/6) / (73/89)],  s2(W-) = 1/2 + 1/73
  (ascending, A < 1 is the complement, of negative contrast: the descending pattern is kept).
- B, categorical: unit 7 on rows 0-29 (4 deposits), unit 8 on rows 30-89 (2 deposits), missing on rows 90-99. Over
  its 90 known cells (6 deposits, N(~D) = 84), nothing merged:
      W+(7) = ln[(4/6) / (26/84)],  s2 = 1/4 + 1/26;   W+(8) = ln[(2/6) / (58/84)],  s2 = 1/2 + 1/58
- Prior logit ln(6/94) over the 100 cells. Posterior P = 1 / (1 + exp(-(prior + weights))); its variance
  P^2 (1/N(D) + sum of s2(W)) plus, for each missing layer, sum over its states of (P(D | state) - P)^2 x the
  state's share of that layer's area (Bonham-Carter 1994, p. 322).
"""
from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

from lodestar.plugin.favourability.measured import MeasuredLayer
from lodestar.plugin.favourability.models import Columns, LogisticModel, WofeModel, fit_model, weighted_auc
from lodestar.plugin.favourability.wofe import OTHER


def layer(name: str, kind: str = "ordered", favourable: str = "high", legend: dict | None = None,
          units: str = "") -> MeasuredLayer:
    """A layer description for the model's columns (the models read the design matrix, not these values)."""
    return MeasuredLayer(name, kind, np.ma.zeros(1), units, "" if kind == "categorical" else favourable,
                         legend or {})


def sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


DEPOSITS = np.zeros(100)
DEPOSITS[[0, 1, 2, 3, 50, 60]] = 1
A = np.r_[np.ones(20), np.zeros(80)]
A[80:85] = np.nan
B = np.r_[np.full(30, 7.0), np.full(60, 8.0), np.full(10, np.nan)]
X = np.column_stack([A, B])
COLUMNS = Columns([layer("A"), layer("B", "categorical", legend={7: "Skarn", 8: "Granite"})])

PRIOR = math.log(6 / 94)
WA_PLUS, S2A_PLUS = math.log((4 / 6) / (16 / 89)), 1 / 4 + 1 / 16
WA_MINUS, S2A_MINUS = math.log((2 / 6) / (73 / 89)), 1 / 2 + 1 / 73
W7, S2_7 = math.log((4 / 6) / (26 / 84)), 1 / 4 + 1 / 26
W8, S2_8 = math.log((2 / 6) / (58 / 84)), 1 / 2 + 1 / 58


def wofe() -> WofeModel:
    return WofeModel(cell_units=1.0).fit(COLUMNS, X, DEPOSITS)


def test_wofe_weights_and_posterior_by_hand():
    model = wofe()
    assert model.prior == pytest.approx(PRIOR) and model.n_deposits == 6
    a, b = model.rows()
    assert a["pattern"] == ">= 1" and a["deposits_in_pattern"] == 4 and a["area_share"] == pytest.approx(20 / 95)
    assert (a["w_plus"], a["w_minus"]) == pytest.approx((WA_PLUS, WA_MINUS))
    assert (a["s_w_plus"] ** 2, a["s_w_minus"] ** 2) == pytest.approx((S2A_PLUS, S2A_MINUS))
    assert [c["unit"] for c in b["classes"]] == ["Skarn", "Granite", "other units"]
    assert [c["w_plus"] for c in b["classes"]][:2] == pytest.approx([W7, W8])
    rows = np.array([[1.0, 7.0], [0.0, 8.0], [0.0, 7.0]])
    expected = [sigmoid(PRIOR + WA_PLUS + W7), sigmoid(PRIOR + WA_MINUS + W8), sigmoid(PRIOR + WA_MINUS + W7)]
    assert model.predict(rows) == pytest.approx(expected)


def test_posterior_sd_where_every_layer_has_data():
    p = sigmoid(PRIOR + WA_PLUS + W7)
    q = sigmoid(PRIOR + WA_MINUS + W8)
    sd = wofe().posterior_sd(np.array([[1.0, 7.0], [0.0, 8.0]]))
    assert sd == pytest.approx([math.sqrt(p ** 2 * (1 / 6 + S2A_PLUS + S2_7)),
                                math.sqrt(q ** 2 * (1 / 6 + S2A_MINUS + S2_8))])


def test_posterior_sd_where_a_layer_is_missing():
    """B missing (row A = 0): P = P(D | A outside) and B's states 7 and 8 take 30 and 60 of its 90 cells.
    A missing (row B = 8): P = P(D | unit 8) and A's states take 20 and 75 of its 95 cells."""
    logit = PRIOR + WA_MINUS
    p = sigmoid(logit)
    b_missing = p ** 2 * (1 / 6 + S2A_MINUS) + (sigmoid(logit + W7) - p) ** 2 * 30 / 90 \
        + (sigmoid(logit + W8) - p) ** 2 * 60 / 90
    logit = PRIOR + W8
    q = sigmoid(logit)
    a_missing = q ** 2 * (1 / 6 + S2_8) + (sigmoid(logit + WA_PLUS) - q) ** 2 * 20 / 95 \
        + (sigmoid(logit + WA_MINUS) - q) ** 2 * 75 / 95
    model = wofe()
    rows = np.array([[0.0, np.nan], [np.nan, 8.0]])
    assert model.predict(rows) == pytest.approx([p, q])
    assert model.posterior_sd(rows) == pytest.approx([math.sqrt(b_missing), math.sqrt(a_missing)])
    # the missing-data part is a real addition: without it the sd would be the weights' part alone
    assert model.posterior_sd(rows)[0] > p * math.sqrt(1 / 6 + S2A_MINUS) * 1.01
    # rows 90-99 of the training data: B missing there too
    assert model.posterior_sd(X[95:96]) == pytest.approx([math.sqrt(b_missing)])


# The categorical map of test_wofe: units 1 (50 cells, 1 deposit), 2 (30, 2), 3 (15, 3), 4 (5, 0); units 1 and 4
# merged into 'other' (55 cells, 1 deposit).
CODES = np.repeat([1.0, 2.0, 3.0, 4.0], [50, 30, 15, 5])
CODE_DEPOSITS = np.zeros(100)
CODE_DEPOSITS[[0, 50, 51, 80, 81, 82]] = 1


def test_categorical_rows_list_each_class_and_the_merge():
    columns = Columns([layer("geology", "categorical", legend={2: "Granite", 3: "Skarn"})])
    model = WofeModel(cell_units=1.0).fit(columns, CODES[:, None], CODE_DEPOSITS)
    assert list(model.patterns[0].codes) == [2.0, 3.0, OTHER] and model.patterns[0].merged == (1.0, 4.0)
    row = model.rows()[0]
    assert row["pattern"] == ("categorical: 2 unit(s) weighed, 2 merged into 'other' (under 2 deposits); "
                              "strongest Skarn")
    classes = row["classes"]
    assert [c["unit"] for c in classes] == ["Granite", "Skarn", "other units"]
    assert [c["deposits"] for c in classes] == [2, 3, 1]
    assert [c["area_share"] for c in classes] == pytest.approx([0.30, 0.15, 0.55])
    assert [c["w_plus"] for c in classes] == pytest.approx([math.log((2 / 6) / (28 / 94)),
                                                            math.log((3 / 6) / (12 / 94)),
                                                            math.log((1 / 6) / (54 / 94))])
    assert [c["s_w_plus"] for c in classes] == pytest.approx([math.sqrt(1 / 2 + 1 / 28), math.sqrt(1 / 3 + 1 / 12),
                                                              math.sqrt(1 + 1 / 54)])
    # the strongest class's figures head the row
    assert row["w_plus"] == pytest.approx(math.log((3 / 6) / (12 / 94)))
    assert row["w_minus"] == pytest.approx(math.log((3 / 6) / (82 / 94)))
    # a merged unit (1) and an unseen one (9) weigh as 'other'
    logit = model.evidence(np.array([[1.0], [9.0], [3.0]]))[0]
    assert logit - model.prior == pytest.approx([classes[2]["w_plus"], classes[2]["w_plus"], classes[1]["w_plus"]])


# Ordered classes 1..4 over 40, 30, 20, 10 cells holding 1, 1, 2, 2 deposits: descending >= 3 has the largest
# studentised contrast (1.8462); every ascending pattern's is negative.
VALUES = np.repeat([1.0, 2.0, 3.0, 4.0], [40, 30, 20, 10])
VALUE_DEPOSITS = np.zeros(100)
VALUE_DEPOSITS[[0, 40, 70, 71, 90, 91]] = 1


def test_ordered_layer_takes_the_direction_of_larger_studentised_contrast():
    for values, favourable, pattern in ((VALUES, "high", ">= 3 ppm"), (5 - VALUES, "high", "< 3 ppm"),
                                        (5 - VALUES, "low", "< 3 ppm"), (VALUES, "low", ">= 3 ppm")):
        model = WofeModel(cell_units=1.0).fit(Columns([layer("As", favourable=favourable, units="ppm")]),
                                              values[:, None], VALUE_DEPOSITS)
        row = model.rows()[0]
        assert row["pattern"] == pattern
        assert row["studentised_contrast"] == pytest.approx(1.8462, abs=1e-4)
        assert row["w_plus"] == pytest.approx(math.log((4 / 6) / (26 / 94)))


def test_a_user_threshold_follows_the_favourable_side():
    """A cut-off of 2.2 ppm: >= 2 on a layer favourable high; on distances (favourable low) 3.8 m gives < 4."""
    model = fit_model("wofe", Columns([layer("As", units="ppm")]), VALUES[:, None], VALUE_DEPOSITS, None, {}, 1.0,
                      thresholds={"As": 2.2})
    row = model.rows()[0]
    assert row["pattern"] == ">= 2 ppm" and row["deposits_in_pattern"] == 5
    assert row["studentised_contrast"] == pytest.approx(1.1349, abs=1e-4)
    model = fit_model("wofe", Columns([layer("d", favourable="low", units="m")]), 5 - VALUES[:, None],
                      VALUE_DEPOSITS, None, {}, 1.0, thresholds={"d": 3.8})
    assert model.rows()[0]["pattern"] == "< 4 m"


@pytest.mark.skipif(importlib.util.find_spec("sklearn") is None, reason="scikit-learn (optional) is not installed")
def test_unpenalised_logistic_contrast_is_the_log_odds_ratio():
    """One binary layer, 400 cells: 80 in B holding 6 deposits, 320 outside holding 3. The unpenalised fit's
    log-odds from the lowest (0) to the highest (1) value is ln[(6/74) / (3/317)], whatever quantile 0 enters
    at (0 is tied over 80 % of the cells)."""
    x = np.r_[np.ones(80), np.zeros(320)][:, None]
    deposits = np.zeros(400)
    deposits[[0, 10, 20, 30, 40, 50, 100, 200, 300]] = 1
    model = LogisticModel(c=1e9).fit(Columns([layer("B")]), x, deposits, np.ones(400))
    row = model.rows()[0]
    assert row["contrast"] == pytest.approx(math.log((6 / 74) / (3 / 317)), rel=1e-3)
    assert row["coefficient"] > row["contrast"]  # per unit of quantile: 0 enters at 0.79, 1 at 1
    penalised = LogisticModel(c=0.01).fit(Columns([layer("B")]), x, deposits, np.ones(400)).rows()[0]
    assert 0 < penalised["contrast"] < row["contrast"]


def test_weighted_auc_by_hand():
    """Positives 2 (weight 1) and 3 (weight 2); negatives 1 and 2 (weight 1 each). Pairs: 2 vs 1 wins, 2 vs 2
    ties (half), 3 beats both: (1 x 1.5 + 2 x 2) / (3 x 2) = 5.5 / 6."""
    score = np.array([1.0, 2.0, 2.0, 3.0])
    positive = np.array([False, True, False, True])
    assert weighted_auc(score, positive, np.array([1.0, 1.0, 1.0, 2.0])) == pytest.approx(5.5 / 6)
    assert weighted_auc(score, positive, np.ones(4)) == pytest.approx(3.5 / 4)
    assert math.isnan(weighted_auc(score, np.zeros(4, dtype=bool), np.ones(4)))


@pytest.mark.skipif(importlib.util.find_spec("sklearn") is None, reason="scikit-learn (optional) is not installed")
def test_a_forest_predicts_the_same_bits_every_time_its_trees_summed_in_order():
    """scikit-learn's threads add a forest's trees in the order they finish, so the last bits moved from one call to
    the next and broke the forest's ties by chance (a replayed calibrated run moved cells by up to a fifth of the
    ranking); the fitted forest now predicts each row chunk in one thread, its trees summed in their order."""
    from lodestar.plugin.favourability.models import CHUNK_ROWS, ForestModel

    rng = np.random.default_rng(3)
    x = rng.normal(size=(3000, 2))
    deposits = (x[:, 0] + rng.normal(scale=0.5, size=3000) > 1.5).astype(float)
    model = ForestModel(min_samples_leaf=5, seed=1).fit(Columns([layer("A"), layer("B")]), x, deposits, None)
    rows = np.tile(x, (CHUNK_ROWS // 3000 + 1, 1))  # more than a chunk: two threads
    first = model.predict(rows)
    assert model.model.n_jobs == 1
    trees = np.mean([tree.predict_proba(rows)[:, 1] for tree in model.model.estimators_], axis=0)
    assert np.allclose(first, trees) and np.array_equal(first, model.predict(rows))


@pytest.mark.skipif(importlib.util.find_spec("sklearn") is None, reason="scikit-learn (optional) is not installed")
def test_gradient_boosting_fits_and_predicts_on_one_openmp_thread(monkeypatch):
    """On a machine of few cores shared with other work, scikit-learn's OpenMP threads waiting on one another cost
    more than the work (one fit of 20,000 rows: 0.8-1.4 s on two threads, 0.07 s on one): every fit and every row
    chunk of a prediction runs on one OpenMP thread, in whatever thread calls it (before, as many as the cores)."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from threadpoolctl import threadpool_info

    seen = []
    fit, raw = HistGradientBoostingClassifier.fit, HistGradientBoostingClassifier._predict_iterations

    def threads() -> list:
        return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "openmp"]

    monkeypatch.setattr(HistGradientBoostingClassifier, "fit", lambda self, *a, **k: seen.append(threads()) or
                        fit(self, *a, **k))
    monkeypatch.setattr(HistGradientBoostingClassifier, "_predict_iterations", lambda self, *a: seen.append(threads())
                        or raw(self, *a))
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3000, 2))
    model = fit_model("boosting", Columns([layer("A"), layer("B")]), x, (x[:, 0] > 1).astype(float), None, {}, 1.0)
    model.predict(np.tile(x, (50, 1)))  # 150,000 rows: chunks in two threads
    assert len(seen) >= 3 and all(found and set(found) == {1} for found in seen), seen


@pytest.mark.skipif(importlib.util.find_spec("sklearn") is None, reason="scikit-learn (optional) is not installed")
@pytest.mark.parametrize("monotone", [True, False])
def test_gradient_boosting_predicts_scikit_learns_bits_from_the_binned_rows(monotone):
    """Predicting from the rows binned as the training rows were is three times faster than scikit-learn's raw
    predictor and gives its bits: values at every split threshold, missing values, +-inf, a unit the training rows
    never held (it joins 'other', which the training rows never held either: the missing side), codes outside the
    legend."""
    rng = np.random.default_rng(0)
    n = 6000
    x = np.column_stack([rng.normal(size=n), rng.integers(0, 8, n).astype(float), rng.random(n) * 1000.0])
    y = ((x[:, 0] + (x[:, 1] == 2) + rng.normal(scale=0.5, size=n)) > 1.2).astype(float)
    x[::7, 0], x[::11, 1] = np.nan, np.nan
    train = x[:, 1] != 5
    model = fit_model("boosting", Columns([layer("A"), layer("B", "categorical"), layer("C", favourable="low")]),
                      x[train], y[train], np.ones(int(train.sum())), {"max_leaf_nodes": 15, "min_samples_leaf": 5,
                                                                     "monotone": monotone}, 1.0)
    nodes = np.concatenate([tree.nodes for trees in model.model._predictors for tree in trees])
    split = nodes[~nodes["is_leaf"].astype(bool) & ~nodes["is_categorical"].astype(bool)]
    at = np.tile(np.nanmedian(x, axis=0), (len(split), 1))
    at[np.arange(len(split)), split["feature_idx"]] = split["num_threshold"]
    rows = np.vstack([x, at, [[np.inf, 5, -np.inf], [-np.inf, 99, np.inf], [np.nan] * 3, [0.1, -3, 5.0]]])
    assert len(split) and (x[:, 1] == 5).any()
    assert np.array_equal(model.predict(rows), model.model.decision_function(model.encoder.transform(rows)))


@pytest.mark.skipif(importlib.util.find_spec("sklearn") is None, reason="scikit-learn (python3-sklearn) not installed")
def test_models_follow_the_estimator_contract_init_stores_fit_returns_self():
    """As scikit-learn's estimators: the constructor keeps the hyperparameters and fits nothing, `fit` fits and
    returns the model itself; a hyperparameter a model does not take is refused, not swallowed."""
    from lodestar.plugin.favourability.models import FITTERS, BoostingModel, EnsembleModel

    boosting = BoostingModel(max_leaf_nodes=7, min_samples_leaf=5, monotone=False, seed=3)
    assert vars(boosting) == {"max_leaf_nodes": 7, "min_samples_leaf": 5, "monotone": False, "seed": 3}
    assert vars(WofeModel(cell_units=2.0)) == {"cell_units": 2.0, "thresholds": None}
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 2))
    deposits = (x[:, 0] > 1.2).astype(float)
    columns = Columns([layer("A"), layer("B")])
    members = [FITTERS[m]() for m in ("wofe", "logistic", "forest")]
    assert not any(hasattr(member, "columns") for member in members)
    assert all(member.fit(columns, x, deposits, np.ones(400)) is member for member in members)
    assert boosting.fit(columns, x, deposits, None) is boosting and hasattr(boosting, "model")
    ensemble = EnsembleModel(members)
    assert not hasattr(ensemble, "references") and ensemble.fit(columns, x) is ensemble
    assert len(ensemble.references) == 3 and ensemble.predict(x[:5]).shape == (5,)
    with pytest.raises(TypeError):
        fit_model("logistic", columns, x, deposits, None, {"min_samples_leaf": 5}, 1.0)
