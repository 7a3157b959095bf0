"""The short scripts a practitioner writes in an afternoon, scored out of fold on Lodestar's own spatial blocks: the
bar a fitted surface has to clear besides the equal-weight rank mean.

Each is plain scikit-learn with its defaults and nothing chosen by search: every cell of the training folds is a
training row (a cell holding a deposit is positive, every other cell negative), the classes balanced by
`class_weight="balanced"`; a unit map becomes one indicator column per unit code (a cell without data has none
set), an ordered layer its raw values.
- logistic regression: missing values take the training folds' median, every column standardised on the
  training folds, `LogisticRegression(class_weight="balanced", max_iter=2000)` (C = 1);
- gradient boosting: `HistGradientBoostingClassifier(class_weight="balanced")` on the raw columns (missing values
  handled natively).
The out-of-fold surface is each held-out fold's predicted probability, pooled over the folds as a script does.
"""
from __future__ import annotations

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression

SCRIPTS = {"logistic": "Short script: logistic regression (scikit-learn defaults, balanced)",
           "boosting": "Short script: gradient boosting (scikit-learn defaults, balanced)"}


def design(layers: list, valid: np.ndarray) -> np.ndarray:
    """The rows of the valid cells: unit indicators for each unit map, raw values (NaN where missing) otherwise."""
    columns = []
    for layer in layers:
        values = layer.values.filled(np.nan)[valid]
        if layer.categorical:
            codes = np.unique(values[~np.isnan(values)])
            columns.extend((values == code).astype(float) for code in codes)
        else:
            columns.append(values.astype(float))
    return np.column_stack(columns)


def out_of_fold(script: str, layers: list, valid: np.ndarray, deposits: np.ndarray, fold: np.ndarray,
                seed: int = 0) -> np.ma.MaskedArray:
    """`script` ("logistic" or "boosting") fitted on all folds but one and predicted on that one, for each fold;
    `deposits`: deposits per cell and `fold`: each cell's fold (-1 outside), both on the grid."""
    x, y, k = design(layers, valid), deposits[valid] > 0, fold[valid]
    scores = np.zeros(len(y))
    for held in np.unique(k[k >= 0]):
        train, test = k != held, k == held
        if script == "logistic":
            fill = np.nanmedian(x[train], axis=0)
            filled = np.where(np.isnan(x), fill, x)
            mean, scale = filled[train].mean(axis=0), filled[train].std(axis=0)
            scale[scale == 0] = 1.0
            model = LogisticRegression(class_weight="balanced", max_iter=2000)
            model.fit((filled[train] - mean) / scale, y[train])
            scores[test] = model.predict_proba((filled[test] - mean) / scale)[:, 1]
        else:
            model = HistGradientBoostingClassifier(class_weight="balanced", random_state=seed)
            model.fit(x[train], y[train])
            scores[test] = model.predict_proba(x[test])[:, 1]
    out = np.zeros(valid.shape)
    out[valid] = scores
    return np.ma.masked_array(out, mask=~valid)
