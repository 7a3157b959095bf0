"""Data-driven favourability: weights of evidence or logistic regression fitted on known deposits, with
spatial block cross-validation.

The features are membership maps (0-1, higher = more favourable) on the analysis grid; the study area is
the cells where at least one map has data, and a cell's label is the number of known deposits in it.
- `wofe`: each map is generalised into a binary pattern at its threshold of maximum studentised contrast
  (cumulative descending, over the cells where it has data); posterior logit = prior logit + W+ or W- of
  each layer, 0 where the layer has no data (Bonham-Carter's missing-data rule; wofe.py; unit cell 1 km2,
  or one pixel on a grid without a CRS). The full fit also gets the conditional-independence check.
- `logistic`: scikit-learn's L2-penalised logistic regression (C = 1, lbfgs) on the memberships (a missing
  value filled with the layer's mean over the training cells), deposit cells weighted by their deposit
  count. A layer's contrast is its coefficient (the log-odds between membership 0 and 1), studentised by
  its standard error from the penalised information matrix.
Cross-validation (blocks.py): each fold's cells are predicted by a model fitted on the other folds' cells
and deposits only. Both surfaces are 0-1: the share of the study area whose fitted probability is lower
(ties at their mid-rank), so the out-of-fold probabilities of all folds are ranked together.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import LodestarError, require_package
from ..evaluation import cells_of
from ..raster_io import RasterGrid
from .blocks import Folds, spatial_folds
from .wofe import UNIT_AREA, conditional_independence, generalise, posterior, prior_logit

BASIS = "fitted on known deposits"
LOGISTIC_C = 1.0


@dataclass
class Calibration:
    """A calibrated surface: `full` (fit on all deposits) and `cv` (out-of-fold) favourability, float32
    masked 0-1 on the analysis grid; `table` has one row per layer of the full fit."""

    method: str
    full: np.ma.MaskedArray
    cv: np.ma.MaskedArray
    table: list[dict]
    folds: Folds
    log: list[str]
    independence: dict | None = None


class WofeModel:
    """Binary weights of evidence over the feature columns (NaN: no data; layers without a usable pattern
    are left out)."""

    def __init__(self, features: np.ndarray, deposits: np.ndarray, cell_units: float):
        self.n_deposits = float(deposits.sum())
        self.prior = prior_logit(len(deposits) * cell_units, self.n_deposits)
        self.patterns = []
        for column in features.T:
            known = ~np.isnan(column)
            self.patterns.append(generalise(column[known], deposits[known], cell_units))

    def evidence(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(logit, variance of the weights, unique-condition code) of each row."""
        logit = np.full(len(features), self.prior)
        variance = np.zeros(len(features))
        condition = np.zeros(len(features), dtype=np.int64)
        for column, g in zip(features.T, self.patterns):
            if g is None:
                continue
            known = ~np.isnan(column)
            inside = g.contains(column) & known
            w = g.table
            logit += np.where(known, np.where(inside, w.w_plus[g.best], w.w_minus[g.best]), 0.0)
            variance += np.where(known, np.where(inside, w.s_w_plus[g.best], w.s_w_minus[g.best]), 0.0) ** 2
            condition = condition * 3 + np.where(known, inside, 2)
        return logit, variance, condition

    def predict(self, features: np.ndarray) -> np.ndarray:
        return posterior(self.evidence(features)[0], 0.0, self.n_deposits)[0]

    def rows(self, names: list[str]) -> list[dict]:
        rows = []
        for name, g in zip(names, self.patterns):
            row = _row(name, "weights of evidence", self.n_deposits)
            if g is None:
                row["pattern"] = "no pattern with defined weights: left out"
            else:
                w, k = g.table, g.best
                row.update(pattern=f">= {g.threshold:.3g}", area_share=float(w.area[k] / w.area[0]),
                           deposits_in_pattern=float(w.deposits[k]), w_plus=float(w.w_plus[k]),
                           s_w_plus=float(w.s_w_plus[k]), w_minus=float(w.w_minus[k]),
                           s_w_minus=float(w.s_w_minus[k]), contrast=float(w.contrast[k]),
                           s_contrast=float(w.s_contrast[k]), studentised_contrast=float(w.studentised[k]))
            rows.append(row)
        return rows


class LogisticModel:
    """L2-penalised logistic regression of deposit presence on the feature columns."""

    def __init__(self, features: np.ndarray, deposits: np.ndarray, cell_units: float):
        linear_model = require_package("sklearn.linear_model", "scikit-learn", "Logistic-regression calibration")
        self.n_deposits = float(deposits.sum())
        self.fill = np.nanmean(features, axis=0)
        self.model = linear_model.LogisticRegression(C=LOGISTIC_C, max_iter=1000)
        labels = deposits > 0
        weight = np.where(labels, deposits, 1.0)
        filled = self._filled(features)
        self.model.fit(filled, labels, sample_weight=weight)
        self.standard_errors = _standard_errors(self.model, filled, weight)

    def _filled(self, features: np.ndarray) -> np.ndarray:
        return np.where(np.isnan(features), self.fill, features)

    def predict(self, features: np.ndarray) -> np.ndarray:
        return self.model.predict_proba(self._filled(features))[:, 1]

    def rows(self, names: list[str]) -> list[dict]:
        rows = []
        for name, coefficient, se in zip(names, self.model.coef_[0], self.standard_errors):
            row = _row(name, "logistic regression", self.n_deposits)
            row.update(coefficient=float(coefficient), contrast=float(coefficient), s_contrast=float(se),
                       studentised_contrast=float(coefficient / se))
            rows.append(row)
        return rows


def _standard_errors(model, features: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Coefficient standard errors from the inverse of the penalised information matrix X'WX + I/C."""
    p = model.predict_proba(features)[:, 1]
    design = np.column_stack([features, np.ones(len(features))])
    information = (design * (weight * p * (1 - p))[:, None]).T @ design
    information[:-1, :-1] += np.eye(features.shape[1]) / LOGISTIC_C
    return np.sqrt(np.diag(np.linalg.inv(information)))[:-1]


FITTERS = {"wofe": WofeModel, "logistic": LogisticModel}


def _row(layer: str, method: str, deposits: float) -> dict:
    return {"layer": layer, "method": method, "pattern": None, "area_share": None, "deposits_in_pattern": None,
            "w_plus": None, "s_w_plus": None, "w_minus": None, "s_w_minus": None, "coefficient": None,
            "contrast": None, "s_contrast": None, "studentised_contrast": None,
            "basis": f"{BASIS} ({deposits:g})"}


def calibrate(maps: dict[str, np.ma.MaskedArray], grid: RasterGrid, deposit_xy, method: str = "wofe",
              block_size_m: float | None = None, folds: int = 5, seed: int = 0) -> Calibration:
    """Fit `method` ("wofe" or "logistic") on membership `maps` against deposits at map points (x, y) in the
    grid's CRS; the out-of-fold surface from spatial block cross-validation (blocks.py for the defaults)."""
    if method not in FITTERS:
        raise LodestarError(f"Unknown calibration method {method!r}; choose one of {', '.join(FITTERS)}.")
    if not maps:
        raise LodestarError("Calibration needs at least one evidence map.")
    names = list(maps)
    stack = [np.ma.masked_invalid(np.ma.asarray(maps[n], dtype=float)) for n in names]
    for name, layer in zip(names, stack):
        if layer.shape != (grid.height, grid.width):
            raise LodestarError(f"Evidence map {name} is {layer.shape}, not on the {grid.height} x {grid.width} grid.")
    valid = np.logical_or.reduce([~np.ma.getmaskarray(layer) for layer in stack])
    log = []
    gaps = int((valid & np.logical_or.reduce([np.ma.getmaskarray(layer) for layer in stack])).sum())
    if gaps:
        log.append(f"{gaps} cells lack some evidence maps: there a missing layer weighs 0 (weights of evidence) "
                   "or takes its mean over the training cells (logistic regression).")
    deposits = _deposit_counts(deposit_xy, grid, valid, log)
    if deposits.sum() < 2:
        raise LodestarError("Calibration needs at least 2 known deposits inside the analysed area.")
    split = spatial_folds(grid, valid, deposits, block_size_m, folds, seed)
    log.append(split.summary())
    features = np.column_stack([layer.filled(np.nan)[valid] for layer in stack])
    counts = deposits[valid]
    fold = split.fold[valid]
    cell_units = grid.pixel_area / UNIT_AREA if grid.crs is not None else 1.0
    fit = FITTERS[method]
    out_of_fold = np.empty(len(counts))
    for k in range(folds):
        test = fold == k
        out_of_fold[test] = fit(features[~test], counts[~test], cell_units).predict(features[test])
    model = fit(features, counts, cell_units)
    independence = None
    if isinstance(model, WofeModel):
        logit, variance, condition = model.evidence(features)
        probability, variance = posterior(logit, variance, model.n_deposits)
        independence = conditional_independence(probability, variance, condition, cell_units, model.n_deposits)
        log.append(_independence_line(independence))
    return Calibration(method, _surface(model.predict(features), valid), _surface(out_of_fold, valid),
                       model.rows(names), split, log, independence)


def _deposit_counts(deposit_xy, grid: RasterGrid, valid: np.ndarray, log: list) -> np.ndarray:
    """Deposits per cell of the study area; those outside it are counted in the log."""
    rows, cols, inside = cells_of(deposit_xy, grid, valid)
    counts = np.zeros(valid.shape)
    np.add.at(counts, (rows[inside], cols[inside]), 1)
    if (~inside).any():
        log.append(f"{int((~inside).sum())} of {len(inside)} deposits lie outside the study area and are not used.")
    return counts


def _surface(probability: np.ndarray, valid: np.ndarray) -> np.ma.MaskedArray:
    """0-1 favourability: the share of the study area with a lower probability, ties at their mid-rank."""
    from scipy.stats import rankdata

    out = np.zeros(valid.shape, dtype="float32")
    out[valid] = (rankdata(probability, method="average") - 0.5) / len(probability)
    return np.ma.masked_array(out, mask=~valid)


def _independence_line(ci: dict) -> str:
    verdict = ("conditional independence is doubtful (ratio below 0.85): layers overlap in what they say"
               if ci["doubtful"] else "no sign of conditional dependence (ratio 0.85 or more)")
    return (f"Conditional independence ({BASIS}): {ci['observed']:g} deposits observed, {ci['predicted']:.1f} "
            f"predicted, ratio {ci['ratio']:.2f}; Agterberg-Cheng z = {ci['z']:.2f} (probability of chance "
            f"{ci['p_chance']:.3f}); {verdict}.")
