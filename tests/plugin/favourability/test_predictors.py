"""The numpy predictors a model file's estimators are read into give scikit-learn's predictions bit for bit, on the
cases where a rule matters (a forest's float32 cast at its thresholds; boosting's missing values, unseen and
out-of-range categories, values on a threshold), and a model read back predicts with scikit-learn unimportable."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from calibration_cases import sklearn

from lodestar.plugin.favourability import models
from lodestar.plugin.favourability.measured import MeasuredLayer
from lodestar.plugin.favourability.model_file import save_model
from lodestar.plugin.favourability.predictors import BoostingScores, ForestScores, LinearScores

pytestmark = sklearn


def _case(n: int = 4000, seed: int = 2):
    rng = np.random.default_rng(seed)
    x = np.column_stack([rng.normal(size=n), rng.integers(0, 6, n).astype(float), rng.random(n) * 1000.0])
    y = (x[:, 0] + (x[:, 1] == 2) + rng.normal(scale=0.5, size=n)) > 1.2
    return x, y, rng.random(n) + 0.5


def test_a_forest_is_predicted_as_scikit_learn_does_at_its_thresholds_cast_to_float32():
    from sklearn.ensemble import RandomForestClassifier

    x, y, weight = _case()
    forest = RandomForestClassifier(n_estimators=20, min_samples_leaf=5, max_features="sqrt", random_state=0)
    forest.fit(x, y, sample_weight=weight)
    tree = forest.estimators_[0].tree_
    inner = np.flatnonzero(tree.children_left >= 0)
    above = np.nextafter(tree.threshold[inner], np.inf)  # just above each threshold in float64
    # where float32 rounds that value down onto the threshold's left side, only the cast sends it left
    assert (above.astype(np.float32) <= tree.threshold[inner]).sum() > 10
    probe = np.tile(np.median(x, axis=0), (2 * len(inner), 1))
    probe[np.arange(len(inner)), tree.feature[inner]] = above
    probe[len(inner) + np.arange(len(inner)), tree.feature[inner]] = tree.threshold[inner]
    rows = np.vstack([x, probe])
    assert np.array_equal(ForestScores.of(forest).predict_proba(rows), forest.predict_proba(rows))


@pytest.mark.parametrize("missing_in_training", [True, False])
def test_boosting_is_predicted_as_scikit_learn_does_with_missing_values_and_unseen_categories(missing_in_training):
    from sklearn.ensemble import HistGradientBoostingClassifier

    x, y, weight = _case()
    if missing_in_training:
        x[::7, 0] = np.nan
        x[::11, 1] = np.nan
    boosting = HistGradientBoostingClassifier(max_iter=40, max_leaf_nodes=15, min_samples_leaf=20, random_state=0,
                                              categorical_features=[False, True, False], monotonic_cst=[1, 0, 0])
    boosting.fit(x, y, sample_weight=weight)
    nodes = np.concatenate([p.nodes for iteration in boosting._predictors for p in iteration])
    numeric = nodes[(nodes["is_leaf"] == 0) & (nodes["is_categorical"] == 0)]
    on_threshold = np.tile(np.median(x, axis=0), (len(numeric), 1))
    on_threshold[np.arange(len(numeric)), numeric["feature_idx"]] = numeric["num_threshold"]
    unusual = np.array([[np.nan, np.nan, np.nan], [0.0, 9.0, 1.0], [0.0, 255.0, 1.0], [np.inf, 2.0, -np.inf],
                        [-np.inf, 5.0, np.inf], [0.3, 2.0, np.nan]])
    rows = np.vstack([x, on_threshold, unusual])
    assert (nodes["is_categorical"] == 1).any() and len(numeric)
    assert np.array_equal(BoostingScores.of(boosting).decision_function(rows), boosting.decision_function(rows))


def test_logistic_regression_is_its_decision_function():
    from sklearn.linear_model import LogisticRegression

    x, y, weight = _case()
    logistic = LogisticRegression(C=0.1, max_iter=2000).fit(x, y, sample_weight=weight)
    assert np.array_equal(LinearScores.of(logistic).decision_function(x), logistic.decision_function(x))


def test_a_model_read_back_predicts_the_same_with_scikit_learn_unimportable(tmp_path):
    x, y, weight = _case(n=1500)
    x[::9, 0] = np.nan
    x[::13, 1] = np.nan
    columns = models.Columns([MeasuredLayer("grade", "ordered", np.ma.zeros(1), "ppm", "high", {}),
                              MeasuredLayer("geology", "categorical", np.ma.zeros(1), "unit", "", {}),
                              MeasuredLayer("distance", "ordered", np.ma.zeros(1), "m", "low", {})])
    ensemble = models.EnsembleModel([models.fit_model(m, columns, x, y.astype(float), weight, {}, 1.0)
                                     for m in models.METHODS]).fit(columns, x)
    save_model(tmp_path / "ensemble.pkl", ensemble, {})
    np.save(tmp_path / "x.npy", x)
    script = (
        "import sys; sys.modules['sklearn'] = None\n"  # any import of scikit-learn fails
        "import numpy as np\n"
        "from lodestar.plugin.favourability.model_file import load_model\n"
        f"_, model = load_model({str(tmp_path / 'ensemble.pkl')!r})\n"
        f"np.save({str(tmp_path / 'loaded.npy')!r}, model.predict(np.load({str(tmp_path / 'x.npy')!r})))\n")
    from conftest import PACKAGE_DIR

    subprocess.run([sys.executable, "-c", script], check=True, cwd=tmp_path,
                   env=dict(os.environ, PYTHONPATH=str(PACKAGE_DIR)))
    assert np.array_equal(np.load(tmp_path / "loaded.npy"), ensemble.predict(x))
