"""The models fitted on known deposits, on measured evidence (measured.py): weights of evidence, logistic
regression, random forest and gradient boosting, behind one interface.

A model is fitted on a design matrix (one column per measured layer, NaN where the layer has no data,
categorical maps as unit codes), the deposit count of each row and the row weights (sampling.py), and
predicts a score per row: higher is more favourable. Every encoding (a unit's one-hot column, a value's
quantile, a cut-off) is learnt from the rows the model is fitted on and nothing else, so a model fitted on
training folds knows nothing of the fold it predicts.

- `wofe`: weights of evidence as practitioners use it: a categorical map weighed class by class (classes with
  fewer than 2 training deposits merged into 'other'), an ordered map generalised into a binary pattern,
  cumulative ascending or descending, whichever reaches the larger studentised contrast, at its threshold of
  maximum studentised contrast (or one set by the user in the layer's units). It counts the study area's
  cells, not the sample, and gives the posterior's standard deviation (weights' variances and missing data).
  Layers derived from another (derived.py) are left out: adding their weights to their source's would count the
  same evidence twice, against the method's conditional independence.
- `logistic`: L2-penalised logistic regression; an ordered value enters as its quantile among the training
  rows (0 lowest, 1 highest: its coefficient is the log-odds from the lowest to the highest value), a missing
  one at 0.5 with a missing-data indicator; units one-hot. C chosen inside the training folds.
- `forest`: a random forest (scikit-learn) of FOREST_TREES trees, units one-hot, missing values at the training
  median with an indicator; the leaf size chosen inside the training folds.
- `boosting`: histogram gradient boosting (scikit-learn), BOOSTING_ROUNDS trees at BOOSTING_RATE, no early
  stopping (which would hold out a random tenth of the training rows, not a spatial block, whenever they pass
  10,000), units as native categories, missing data native; the tree size chosen inside the training folds, and
  with it whether its response to each ordered layer is held monotone towards the layer's favourable side (the layer's
  own setting, "high" unless said otherwise, as the knowledge-driven surface reads it): with a few dozen deposits
  unconstrained trees chase single cells, while a layer whose data run against its setting would get a flat response;
  the training folds decide.
- `ensemble`: the four above fitted on the same rows, each score turned into its rank among the member's own
  scores over the study area, the ranks averaged with equal weights (nothing fitted at this level). Models that
  err in different places cancel; "best out of fold" takes it unless a member beats it fold by fold
  (calibration.py).

A model read from a file (model_file.py) holds, in place of a scikit-learn estimator, the arrays it is made of and a
numpy predictor of the same predictions (predictors.py).

Threads: every fit and every row chunk of a prediction runs on one native thread (OpenMP and BLAS held to one by
`one_thread`); the parallelism is Python threads over row chunks (`chunked`) and, in a calibration, over folds
(`serial` inside each). On a machine of few cores shared with other work, scikit-learn's OpenMP threads waiting on
one another cost more than the work: one gradient boosting fit of 20,000 rows took 0.8-1.4 s on two OpenMP threads
and 0.07 s on one.
"""
from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from typing import Callable, Literal, get_args

import numpy as np

from ..decisions import CORE
from ..errors import LodestarError, require_package
from ..labels import CALIBRATION_LABELS
from ..methods import ModelMethod
from .wofe import (
    MIN_CLASS_DEPOSITS,
    CategoricalWeights,
    Generalisation,
    categorical_generalise,
    class_breaks,
    generalise,
    pairwise_independence,
    posterior,
    prior_logit,
)

METHODS: tuple[ModelMethod, ...] = get_args(ModelMethod)
LABELS = CALIBRATION_LABELS
ENSEMBLE: Literal["ensemble"] = "ensemble"
# decision numbers: their reasons and provenance are in plugin/decisions.py
REFERENCE_SCORES = CORE.reference_scores
GRIDS: dict[str, tuple[dict, ...]] = {
    "wofe": ({},),
    "logistic": tuple({"c": c} for c in (1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0, 10.0)),
    "forest": ({"min_samples_leaf": 5}, {"min_samples_leaf": 50}),
    "boosting": tuple(dict(size, monotone=monotone) for monotone in (True, False)
                      for size in ({"max_leaf_nodes": 7, "min_samples_leaf": 50},
                                   {"max_leaf_nodes": 15, "min_samples_leaf": 20}))}
"""Hyperparameters tried inside the training folds (nested): a penalty from strong to weak, a leaf size from
fine to coarse, a tree size from shallow to deeper, with and without the monotone response. One candidate means
nothing is chosen. The penalty runs from its strong limit (C times the ~20,000 training rows well under 1: the
coefficients then follow each column's difference between deposits and background) to nearly none (docs/results.md
says why the grid is this wide)."""
# decision numbers: their reasons and provenance are in plugin/decisions.py
FOREST_TREES = CORE.forest_trees
BOOSTING_ROUNDS = CORE.boosting_rounds
BOOSTING_RATE = CORE.boosting_rate
MAX_ONE_HOT = CORE.max_one_hot
QUANTILES = CORE.quantiles
CHUNK_ROWS = 65_536
"""Rows predicted at a time: memory follows the chunk, not the grid, and a cancel waits for one chunk at most (a
random forest's trees take a quarter of a second over it)."""


class Columns:
    """What each design-matrix column is: its name, whether it holds unit codes, and its legend."""

    def __init__(self, layers):
        self.names = [layer.name for layer in layers]
        self.categorical = np.array([layer.categorical for layer in layers], dtype=bool)
        self.layers = list(layers)

    def __len__(self) -> int:
        return len(self.names)


_CHECK: ContextVar = ContextVar("lodestar_prediction_check", default=None)
_SERIAL: ContextVar = ContextVar("lodestar_serial", default=False)


def cores() -> int:
    """The CPU cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def workers() -> int:
    """Threads a fit or a prediction may use here: 1 inside `serial`, else the cores."""
    return 1 if _SERIAL.get() else cores()


@contextmanager
def serial():
    """Within it (in this thread), fits and predictions use one thread: the caller runs several at once."""
    token = _SERIAL.set(True)
    try:
        yield
    finally:
        _SERIAL.reset(token)


_CONTROLLER: list = []


def one_thread():
    """A context holding the native thread pools (OpenMP, BLAS) of the calling thread to one thread: the pools are
    found once, scikit-learn's OpenMP loaded first when it is installed (a model read from a file predicts without
    it, and its BLAS products then give the same bits as in the run that fitted it); without threadpoolctl (it comes
    with scikit-learn) nothing is held."""
    if not _CONTROLLER:
        try:
            import sklearn.ensemble  # noqa: F401  (loads the OpenMP runtime the limit must reach)
        except ImportError:
            pass
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:
            return nullcontext()
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1)


@contextmanager
def checked(check: Callable[[], None]):
    """Within it (in this thread), `chunked` calls `check` before each row chunk (or each round of `workers`
    chunks): a cancel raised there stops a long prediction between chunks."""
    token = _CHECK.set(check)
    try:
        yield
    finally:
        _CHECK.reset(token)


def chunked(predict, x: np.ndarray, threads: int = 1) -> np.ndarray:
    """`predict` over row chunks of x (float64 out), each on one native thread (`one_thread`), up to `threads`
    chunks at a time in Python threads (for a `predict` that releases the GIL; one inside `serial`); the check of
    `checked` before each round."""
    out = np.empty(len(x))
    threads = min(threads, workers())
    size = max(1, min(CHUNK_ROWS, -(-len(x) // threads)))
    check = _CHECK.get()

    def one(start: int) -> None:
        with one_thread():
            out[start:start + size] = predict(x[start:start + size])

    starts = range(0, len(x), size)
    if threads > 1 and len(starts) > 1:
        with ThreadPoolExecutor(threads) as pool:
            for first in range(0, len(starts), threads):
                if check is not None:
                    check()
                list(pool.map(one, starts[first:first + threads]))
    else:
        for start in starts:
            if check is not None:
                check()
            one(start)
    return out


class WofeModel:
    """Weights of evidence over measured layers (see the module docstring). `cell_units`: unit cells per grid
    cell; `thresholds`: {layer name: cut-off in its units} set by the user (ordered layers)."""

    method = "wofe"

    def __init__(self, cell_units: float = 1.0, thresholds: dict | None = None):
        self.cell_units = cell_units
        self.thresholds = thresholds

    def fit(self, columns: Columns, x, deposits, weight=None) -> WofeModel:
        """Weigh each layer's pattern on the rows `x` holding `deposits` (counts per row; weights of evidence counts
        cells, so `weight` is not used)."""
        cell_units = self.cell_units
        self.columns = columns
        self.n_deposits = float(deposits.sum())
        self.prior = prior_logit(len(deposits) * cell_units, self.n_deposits)
        self.patterns: list[Generalisation | CategoricalWeights | None] = []
        thresholds = self.thresholds or {}
        for j, name in enumerate(columns.names):
            column = x[:, j]
            known = ~np.isnan(column)
            if columns.layers[j].source:
                self.patterns.append(None)  # derived from another layer: not conditionally independent of it
                continue
            if columns.categorical[j]:
                self.patterns.append(categorical_generalise(column[known], deposits[known], cell_units))
                continue
            breaks = class_breaks(column[known])
            both = [generalise(column[known], deposits[known], cell_units, ascending=a,
                               threshold=thresholds.get(name), breaks=breaks) for a in (False, True)]
            usable = [g for g in both if g is not None]
            if name in thresholds:
                favourable = columns.layers[j].favourable
                chosen = both[1] if favourable == "low" else both[0]
                assert chosen is not None  # a threshold set: generalise takes the pattern nearest it
                usable = [chosen]
            self.patterns.append(max(usable, key=lambda g: g.table.studentised[g.best]) if usable else None)
        return self

    def states(self, j: int, column: np.ndarray):
        """(row of each value in the layer's weights, the layer's weights per row, their s, area shares)."""
        g = self.patterns[j]
        if self.columns.categorical[j]:
            assert isinstance(g, CategoricalWeights)
            t = g.table
            return g.class_index(column), t.w_plus, t.s_w_plus, t.area / t.area.sum()
        assert isinstance(g, Generalisation)
        t, k = g.table, g.best
        inside = g.contains(column)
        share = t.area[k] / t.area[0] if not g.ascending else t.area[k] / t.area[-1]
        return (np.where(inside, 0, 1), np.array([t.w_plus[k], t.w_minus[k]]),
                np.array([t.s_w_plus[k], t.s_w_minus[k]]), np.array([share, 1.0 - share]))

    def evidence(self, x: np.ndarray):
        """(logit, variance of the weights, list of (layer, state weights, shares, missing rows)) per row."""
        logit = np.full(len(x), self.prior)
        variance = np.zeros(len(x))
        missing = []
        for j, g in enumerate(self.patterns):
            if g is None:
                continue
            column = x[:, j]
            known = ~np.isnan(column)
            state, w, s, share = self.states(j, np.where(known, column, 0.0))
            logit += np.where(known, w[state], 0.0)
            variance += np.where(known, s[state] ** 2, 0.0)
            missing.append((w, share, ~known))
        return logit, variance, missing

    def layer_state(self, j: int, column: np.ndarray) -> tuple[np.ndarray, int]:
        """(each row's state in layer j's weights, -1 where the layer has no data; the number of states)."""
        known = ~np.isnan(column)
        state, w, _, _ = self.states(j, np.where(known, column, 0.0))
        return np.where(known, state, -1), len(w)

    def conditions(self, x: np.ndarray) -> np.ndarray:
        """Unique-condition code of each row (the state of every layer, missing as its own state)."""
        code = np.zeros(len(x), dtype=np.int64)
        for j, g in enumerate(self.patterns):
            if g is not None:
                state, count = self.layer_state(j, x[:, j])
                code = code * (count + 1) + np.where(state >= 0, state, count)
        return code

    def pairwise(self, x: np.ndarray, deposits: np.ndarray) -> list[dict]:
        """The pairwise conditional-independence test between the layers weighed, over the rows holding deposits
        (wofe.pairwise_independence)."""
        used = [j for j, g in enumerate(self.patterns) if g is not None]
        positive = deposits > 0
        states = [self.layer_state(j, x[positive, j])[0] for j in used]
        return pairwise_independence(states, deposits[positive], [self.columns.names[j] for j in used])

    def predict(self, x: np.ndarray) -> np.ndarray:
        return posterior(self.evidence(x)[0], 0.0, self.n_deposits)[0]

    def posterior_sd(self, x: np.ndarray) -> np.ndarray:
        """Standard deviation of the posterior probability: the weights' part P^2 (1/N(D) + sum s2(W)) plus, for
        each layer missing at a row, sum over its states of (P(D | state) - P(D))^2 x the state's area share
        (Bonham-Carter 1994, p. 322)."""
        logit, variance, missing = self.evidence(x)
        probability, var = posterior(logit, variance, self.n_deposits)
        for w, share, rows in missing:
            if not rows.any():
                continue
            p_state = 1.0 / (1.0 + np.exp(-(logit[rows, None] + w[None, :])))
            var[rows] += ((p_state - probability[rows, None]) ** 2 * share[None, :]).sum(axis=1)
        return np.sqrt(var)

    def rows(self) -> list[dict]:
        rows = []
        for j, (layer, g) in enumerate(zip(self.columns.layers, self.patterns)):
            row = {"layer": layer.name, "method": LABELS["wofe"]}
            if layer.source:
                row["pattern"] = (f"derived from {layer.source}: left out (weights of evidence adds layers' weights, "
                                  "which needs layers conditionally independent of one another)")
            elif g is None:
                row["pattern"] = "no pattern with defined weights: left out"
            elif self.columns.categorical[j]:
                assert isinstance(g, CategoricalWeights)
                t = g.table
                best = int(np.argmax(np.where(np.isfinite(t.studentised), t.studentised, -np.inf)))
                name = "other units" if best == len(g.codes) - 1 else layer.class_name(g.codes[best])
                row.update(pattern=f"categorical: {len(g.codes) - 1} unit(s) weighed, {len(g.merged)} merged into "
                                   f"'other' (under 2 deposits); strongest {name}",
                           area_share=float(t.area[best] / t.area.sum()), deposits_in_pattern=float(t.deposits[best]),
                           w_plus=float(t.w_plus[best]), s_w_plus=float(t.s_w_plus[best]),
                           w_minus=float(t.w_minus[best]), s_w_minus=float(t.s_w_minus[best]),
                           contrast=float(t.contrast[best]), s_contrast=float(t.s_contrast[best]),
                           studentised_contrast=float(t.studentised[best]),
                           classes=[{"unit": "other units" if c == -1 else layer.class_name(c),
                                     "w_plus": float(t.w_plus[i]), "s_w_plus": float(t.s_w_plus[i]),
                                     "deposits": float(t.deposits[i]), "area_share": float(t.area[i] / t.area.sum())}
                                    for i, c in enumerate(g.codes)])
            else:
                assert isinstance(g, Generalisation)
                w, k = g.table, g.best
                side = "<" if g.ascending else ">="
                row.update(pattern=f"{side} {g.threshold:.4g} {layer.units}".strip(),
                           area_share=float(w.area[k] / (w.area[-1] if g.ascending else w.area[0])),
                           deposits_in_pattern=float(w.deposits[k]), w_plus=float(w.w_plus[k]),
                           s_w_plus=float(w.s_w_plus[k]), w_minus=float(w.w_minus[k]), s_w_minus=float(w.s_w_minus[k]),
                           contrast=float(w.contrast[k]), s_contrast=float(w.s_contrast[k]),
                           studentised_contrast=float(w.studentised[k]))
            rows.append(row)
        return rows


class Encoder:
    """Design-matrix encoding learnt from the training rows: ordered values as training quantiles (or raw for
    trees) with a missing indicator where the training rows lack data; units one-hot, or as category indices
    (native categories of gradient boosting). As in weights of evidence, a unit holding fewer than
    MIN_CLASS_DEPOSITS training deposits cannot be weighed on its own: it joins 'other' (one column, or one
    category), as does a unit the training rows never hold; at most MAX_ONE_HOT units are kept, those holding
    most deposits. A missing unit takes the training rows' mean of the one-hot columns."""

    def __init__(self, columns: Columns, x: np.ndarray, mode: str, deposits: np.ndarray):
        self.columns, self.mode = columns, mode
        self.quantiles: list[np.ndarray | None] = []  # per column: an ordered layer's, None for units
        self.units: list = []  # per column: the units kept, None for an ordered layer
        self.fill: list = []  # per column: the units' mean one-hot (None without data), an ordered layer's median
        self.indicator: list[bool] = []
        for j in range(len(columns)):
            column = x[:, j]
            known = ~np.isnan(column)
            self.indicator.append(bool((~known).any()))
            if columns.categorical[j]:
                codes, inverse = np.unique(column[known], return_inverse=True)
                found = np.bincount(inverse, weights=deposits[known], minlength=len(codes))
                order = np.argsort(-found, kind="stable")
                self.units.append(codes[order][found[order] >= MIN_CLASS_DEPOSITS][:MAX_ONE_HOT])
                self.quantiles.append(None)
                self.fill.append(self._one_hot(column[known], j).mean(axis=0) if known.any() else None)
            else:
                self.units.append(None)
                self.quantiles.append(np.quantile(column[known], np.linspace(0, 1, QUANTILES)) if known.any()
                                      else np.zeros(QUANTILES))
                self.fill.append(float(np.median(column[known])) if known.any() else 0.0)

    def transform(self, x: np.ndarray) -> np.ndarray:
        parts = []
        for j in range(len(self.columns)):
            column = x[:, j]
            missing = np.isnan(column)
            if self.columns.categorical[j]:
                units = self.units[j]
                if self.mode == "native":
                    index = np.argmax(column[:, None] == units[None, :], axis=1) if len(units) else \
                        np.zeros(len(column), dtype=int)
                    kept = (column[:, None] == units[None, :]).any(axis=1)
                    parts.append(np.where(missing, np.nan, np.where(kept, index, len(units)))[:, None])
                    continue
                hot = self._one_hot(column, j)
                if self.fill[j] is not None:
                    hot[missing] = self.fill[j]
                parts.append(hot)
            elif self.mode == "quantile":
                q = self.quantiles[j]
                assert q is not None
                rank = np.interp(np.where(missing, q[50], column), q, np.linspace(0, 1, len(q)))
                parts.append(np.where(missing, 0.5, rank)[:, None])
            elif self.mode == "native":
                parts.append(column[:, None])
            else:
                parts.append(np.where(missing, self.fill[j], column)[:, None])
            if self.indicator[j] and self.mode != "native":
                parts.append(missing.astype(float)[:, None])
        return np.hstack(parts) if parts else np.zeros((len(x), 0))

    def _one_hot(self, column: np.ndarray, j: int) -> np.ndarray:
        """One column per kept unit, then one for 'other' (every other unit, seen in training or not)."""
        hot = (column[:, None] == self.units[j][None, :]).astype(float)
        other = (~np.isnan(column) & (hot.sum(axis=1) == 0)).astype(float)
        return np.hstack([hot, other[:, None]])

    def categorical_mask(self) -> list[bool]:
        """Which encoded columns are native categories (gradient boosting)."""
        return [bool(c) for c in self.columns.categorical]


class LogisticModel:
    method = "logistic"

    def __init__(self, c: float = 0.1):
        self.c = c

    def fit(self, columns: Columns, x, deposits, weight) -> LogisticModel:
        """Fit on the rows `x` (deposits > 0 the positives, `weight` per row)."""
        linear_model = require_package("sklearn.linear_model", "scikit-learn", "Logistic regression")
        self.columns = columns
        self.encoder = Encoder(columns, x, "quantile", deposits)
        design = self.encoder.transform(x)
        self.mean, self.scale = design.mean(axis=0), design.std(axis=0)
        self.scale[self.scale == 0] = 1.0
        self.model = linear_model.LogisticRegression(C=self.c, max_iter=2000)
        with one_thread():
            self.model.fit((design - self.mean) / self.scale, deposits > 0, sample_weight=weight)
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        return chunked(lambda rows: self.model.decision_function(
            (self.encoder.transform(rows) - self.mean) / self.scale), x)

    def rows(self) -> list[dict]:
        """An ordered layer's coefficient is per unit of quantile; its contrast is the log-odds from its lowest to its
        highest value (the coefficient itself when no value is tied at either end)."""
        coefficients = self.model.coef_[0] / self.scale
        rows, at = [], 0
        for j, layer in enumerate(self.columns.layers):
            row = {"layer": layer.name, "method": LABELS["logistic"]}
            if self.columns.categorical[j]:
                width = len(self.encoder.units[j]) + 1
                row["pattern"] = f"{width - 1} unit(s) one-hot, the rest (under 2 deposits) as one"
            else:
                width = 1
                # Values tied at an end share that end's quantile (a binary 0/1 map: 0 enters as the share of 0s),
                # so the log-odds from the lowest to the highest value is the coefficient times the span used.
                q = self.encoder.quantiles[j]
                assert q is not None
                span = float(np.diff(np.interp([q[0], q[-1]], q, np.linspace(0, 1, len(q))))[0])
                row.update(coefficient=float(coefficients[at]), contrast=float(coefficients[at] * span),
                           pattern="quantile of the value (0 lowest, 1 highest)")
            at += width + (1 if self.encoder.indicator[j] else 0)
            rows.append(row)
        return rows


class ForestModel:
    method = "forest"

    def __init__(self, min_samples_leaf: int = 20, seed: int = 0):
        self.min_samples_leaf = min_samples_leaf
        self.seed = seed

    def fit(self, columns: Columns, x, deposits, weight) -> ForestModel:
        """Fit on the rows `x` (deposits > 0 the positives, `weight` per row)."""
        ensemble = require_package("sklearn.ensemble", "scikit-learn", "Random forest")
        self.columns = columns
        self.encoder = Encoder(columns, x, "raw", deposits)
        self.model = ensemble.RandomForestClassifier(n_estimators=FOREST_TREES, min_samples_leaf=self.min_samples_leaf,
                                                     max_features="sqrt", n_jobs=workers(), random_state=self.seed)
        with one_thread():
            self.model.fit(self.encoder.transform(x), deposits > 0, sample_weight=weight)
        # Predicting, one thread per row chunk, the trees summed in their order: scikit-learn's threads add the trees'
        # votes in the order they finish, and the last bits that change then break the forest's many ties by chance (a
        # replayed calibrated run moved cells by up to a fifth of the ranking).
        self.model.set_params(n_jobs=1)
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        return chunked(lambda rows: self.model.predict_proba(self.encoder.transform(rows))[:, 1], x, cores())

    def rows(self) -> list[dict]:
        return [{"layer": layer.name, "method": LABELS["forest"]} for layer in self.columns.layers]


class BoostingModel:
    method = "boosting"

    def __init__(self, max_leaf_nodes: int = 15, min_samples_leaf: int = 20, monotone: bool = True, seed: int = 0):
        self.max_leaf_nodes = max_leaf_nodes
        self.min_samples_leaf = min_samples_leaf
        self.monotone = monotone
        self.seed = seed

    def fit(self, columns: Columns, x, deposits, weight) -> BoostingModel:
        """Fit on the rows `x` (deposits > 0 the positives, `weight` per row)."""
        ensemble = require_package("sklearn.ensemble", "scikit-learn", "Gradient boosting")
        self.columns = columns
        self.encoder = Encoder(columns, x, "native", deposits)
        mask = self.encoder.categorical_mask()
        self.model = ensemble.HistGradientBoostingClassifier(
            max_iter=BOOSTING_ROUNDS, learning_rate=BOOSTING_RATE, max_leaf_nodes=self.max_leaf_nodes,
            min_samples_leaf=self.min_samples_leaf, l2_regularization=1.0, random_state=self.seed,
            early_stopping=False, categorical_features=mask if any(mask) else None,
            monotonic_cst=monotone_directions(columns) if self.monotone else None)
        with one_thread():
            self.model.fit(self.encoder.transform(x), deposits > 0, sample_weight=weight)
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        return chunked(self._scores, x, cores())

    def _scores(self, rows: np.ndarray) -> np.ndarray:
        """The decision function; a fitted scikit-learn model's from the rows binned as its training rows were, which
        gives the same bits three times faster (a category it never saw set missing first: its raw predictor sends
        such a category the missing side). A model read from a file has its own predictor (predictors.py)."""
        design = self.encoder.transform(rows)
        model = self.model
        mapper = getattr(model, "_bin_mapper", None)
        if mapper is None or not hasattr(model, "_predict_iterations"):
            return model.decision_function(design)
        design = np.array(design, dtype=np.float64)
        for j in np.flatnonzero(mapper.is_categorical_):
            design[:, j] = np.where(np.isin(design[:, j], mapper.bin_thresholds_[j]), design[:, j], np.nan)
        scores = np.zeros((len(design), 1), dtype=model._baseline_prediction.dtype, order="F")
        scores += model._baseline_prediction
        model._predict_iterations(mapper.transform(design), model._predictors, scores, True, 1)
        return scores[:, 0]

    def rows(self) -> list[dict]:
        return [{"layer": layer.name, "method": LABELS["boosting"]} for layer in self.columns.layers]


def monotone_directions(columns: Columns) -> list[int]:
    """Per layer, the direction its response is held to: 1 favourable when high, -1 when low, 0 for a categorical
    map (no order)."""
    return [0 if categorical else {"high": 1, "low": -1}.get(layer.favourable, 0)
            for categorical, layer in zip(columns.categorical, columns.layers)]


class EnsembleModel:
    """The mean, over member models, of each score's rank among that member's `reference` scores (0-1)."""

    method = ENSEMBLE

    def __init__(self, members: list):
        self.members = list(members)

    def fit(self, columns: Columns, x_reference: np.ndarray) -> EnsembleModel:
        """Keep each member's scores over the rows `x_reference` (the study area's) to rank new scores against."""
        self.columns = columns
        self.references = []
        for member in self.members:
            scores = np.sort(member.predict(x_reference))
            take = np.linspace(0, len(scores) - 1, min(REFERENCE_SCORES, len(scores))).round().astype(int)
            self.references.append(scores[take])
        return self

    def member_ranks(self, x: np.ndarray) -> np.ndarray:
        """(members, rows): each member's score ranked among its reference scores, 0-1 (ties at mid-rank)."""
        out = np.empty((len(self.members), len(x)))
        for i, (member, reference) in enumerate(zip(self.members, self.references)):
            scores = member.predict(x)
            below = np.searchsorted(reference, scores, "left") + np.searchsorted(reference, scores, "right")
            out[i] = below / (2.0 * len(reference))
        return out

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self.member_ranks(x).mean(axis=0)

    def rows(self) -> list[dict]:
        names = ", ".join(LABELS[m.method] for m in self.members)
        return [{"layer": layer.name, "method": LABELS[ENSEMBLE], "pattern": f"mean rank of {names}"}
                for layer in self.columns.layers]


SEEDED: tuple[ModelMethod, ...] = ("forest", "boosting")
"""The methods whose fits draw at random (their seed)."""
FITTERS = {"wofe": WofeModel, "logistic": LogisticModel, "forest": ForestModel, "boosting": BoostingModel}
PACKAGES = {"logistic": ("sklearn.linear_model", "Logistic regression"),
            "forest": ("sklearn.ensemble", "Random forest"), "boosting": ("sklearn.ensemble", "Gradient boosting")}


def imported(method: str) -> None:
    """Import the package `method` fits with (LodestarError naming what to install when it is missing): done before
    fits run in threads, where two threads importing scikit-learn's modules at once can fail on a module the other
    has half imported."""
    if method in PACKAGES:
        require_package(PACKAGES[method][0], "scikit-learn", PACKAGES[method][1])


def fit_model(method: ModelMethod, columns: Columns, x, deposits, weight, params: dict, cell_units: float,
              thresholds: dict | None = None, seed: int = 0):
    """A fitted model of `method` with hyperparameters `params` (only those its class takes: another raises
    TypeError)."""
    if method not in FITTERS:
        raise LodestarError(f"Unknown model {method!r}; choose one of {', '.join(METHODS)}.")
    settings = ({"cell_units": cell_units, "thresholds": thresholds} if method == "wofe"
                else {"seed": seed} if method in SEEDED else {})
    return FITTERS[method](**params, **settings).fit(columns, x, deposits, weight)


def weighted_auc(score: np.ndarray, positive: np.ndarray, weight: np.ndarray) -> float:
    """Area under the ROC curve of `score` for the weighted rows (Mann-Whitney, ties counted half)."""
    order = np.argsort(score, kind="mergesort")
    s, p, w = score[order], positive[order], weight[order]
    pos_w, neg_w = np.where(p, w, 0.0), np.where(p, 0.0, w)
    total_pos, total_neg = pos_w.sum(), neg_w.sum()
    if total_pos <= 0 or total_neg <= 0:
        return math.nan
    _, start = np.unique(s, return_index=True)
    neg_group = np.add.reduceat(neg_w, start)
    pos_group = np.add.reduceat(pos_w, start)
    neg_below = np.cumsum(neg_group) - neg_group
    return float(np.sum(pos_group * (neg_below + neg_group / 2)) / (total_pos * total_neg))

