"""Favourability fitted on known deposits: every model out of fold on spatial blocks, compared with the surfaces
that used no deposit data, with its uncertainty, the importance of each layer and its response.

The evidence is measured (measured.py): unit codes, distances in metres, values in the layer's units; the
models are in models.py. The study area is the cells where at least one layer has data; a cell's label is
1 where it holds known deposits (several in one cell are one place: counted once, and said), else 0; deposits in
fewer than 2 cells are refused.

- **Training rows.** Weights of evidence counts every training cell. The other models see the training
  deposits' cells (weighted by their deposit count) and a background sample, the classes weighted to equal totals.
  The background is drawn once, stratified by fold: from each fold's cells holding no deposit, a random sample
  (seeded) of its share (its deposit-free cells over the study area's) of BACKGROUND_CELLS x n / (n - 1) cells, so
  that the training folds of an outer fit (n - 1 of the n folds) hold about BACKGROUND_CELLS. A fit on a set of
  folds takes their samples less the cells within `BUFFER_M` of that set's own deposits; a fold's cells enter a fit
  only when the fold is among its training folds, so no fit sees a cell of the fold it predicts. Every model and
  every fold fitted on the same folds sees the same rows.
- **Out of fold.** Each fold's cells are predicted by a model fitted on the other folds' cells and deposits
  only (blocks.py). A model's hyperparameters are chosen inside those training folds (nested): each
  candidate of models.GRIDS is fitted on half of the training folds (alternate folds grouped) and scored (AUC)
  on the other half (its deposits and background sample), in turn; the best mean wins. An inner fit depends on
  its own folds only (the training rows of a set of folds are the same wherever it is used), so a fit on the
  same half of two outer folds' training folds is made once and scored for each (with 5 folds, 5 inner fits per
  candidate instead of 10). The full fit takes the candidate the outer folds chose most often.
- **Comparison.** Every model's out-of-fold surface is scored on the same cells beside the `baselines` given
  (the knowledge-driven surface and the equal-weight mean of the layers' ranks, which use no deposit data):
  AUC, deposits captured in the top 2 / 5 / 10 / 20 % of the area, and the prediction-area crossing. With
  `method="best"` all four models run, then their ensemble (models.py: the mean of their ranks; out of fold,
  the mean of their out-of-fold ranks, so it too never sees the fold it predicts). The ensemble is chosen unless
  the single model of highest out-of-fold AUC also beats it fold by fold, in enough folds for a one-sided sign
  test at SIGN_LEVEL (with 5 folds: all five): the highest of five AUCs measured on the same folds is partly luck,
  and on districts nobody tuned for averaging the models beat picking among them (docs/results.md). The log
  also scores the choice itself out of fold (within each fold, the model the same rule picks on the other folds).
- **Surfaces.** 0-1: the share of the study area whose score is lower (ties at their mid-rank); the
  out-of-fold scores of all folds are ranked together.
- **Uncertainty.** Weights of evidence: the full fit's posterior standard deviation. The ensemble: the
  standard deviation, at each cell, of its members' full-fit ranks (where the models disagree). The others: the
  standard deviation, at each cell, of the fold models' favourability, each score ranked among that fold model's
  scores of a sample of the study area (REFERENCE_CELLS, as an ensemble ranks its members': `spread`), so that a cell's
  uncertainty is its own and a full-resolution surface (blockwise_fitted.py) gives the same.
- **Independence** (weights of evidence chosen): the overall test (observed / predicted deposits, Agterberg-Cheng
  z) and the pairwise one (a chi-square per pair of layers over the deposits' classes; wofe.py), in the log.
- **Importance.** Per layer, the drop in out-of-fold AUC when its values are shuffled among the cells a fold
  model predicts (deposits and a background sample of that fold), averaged over folds by their deposits; a
  layer whose shuffling raises the AUC lowers the model's skill, and is flagged.
- **Response.** Per layer, the full fit's mean favourability (0-1, as the surface) over a sample of the
  study area with the layer set to each of 11 quantiles of its values (or to each of its largest units).
- **Threads.** A model's outer folds run at once, one per core (`fold_workers`), each fit and prediction on one
  thread inside them (models.serial, models.one_thread); the results do not depend on the number of threads.
- **Progress and cancel.** Progress moves model by model and, within a model, with the work done in its folds
  (model m of M; the out-of-fold fits take OUT_OF_FOLD_SHARE of it), never backwards; a cancel is checked between
  models, folds, hyperparameter candidates and inner fits, between the row chunks of every prediction
  (models.checked), and every 0.1 s while folds run in threads.
"""
from __future__ import annotations

import math
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from contextvars import copy_context
from dataclasses import dataclass, field
from typing import Callable, get_args

import numpy as np
from scipy.spatial import cKDTree
from scipy.stats import rankdata

from ..decisions import CORE
from ..errors import Cancelled, LodestarError
from ..evaluation import DEFAULT_SHARES, cells_of, evaluate_surface
from ..methods import CalibrationMethod, FittedMethod, ModelMethod
from ..progress import SILENT, Progress
from ..raster_io import RasterGrid
from .blocks import Folds, spatial_folds
from .models import (
    ENSEMBLE,
    GRIDS,
    LABELS,
    METHODS,
    Columns,
    EnsembleModel,
    WofeModel,
    checked,
    cores,
    fit_model,
    imported,
    serial,
    weighted_auc,
)
from .wofe import UNIT_AREA, conditional_independence, pairwise_line, posterior

BASIS = "fitted on known deposits"
CHOICES: tuple[CalibrationMethod, ...] = get_args(CalibrationMethod)
# decision numbers: their reasons and provenance are in plugin/decisions.py
BUFFER_M = CORE.buffer_m
BACKGROUND_CELLS = CORE.background_cells
FOLD_WORKERS = None
"""Outer folds fitted at once (threads); None: one per core."""
# decision numbers: their reasons and provenance are in plugin/decisions.py
INNER_FOLDS = CORE.inner_folds
IMPORTANCE_CELLS = 5_000
RESPONSE_CELLS = 2_000
# decision numbers: their reasons and provenance are in plugin/decisions.py
REFERENCE_CELLS = CORE.reference_cells
RESPONSE_UNITS = 12
# decision numbers: their reasons and provenance are in plugin/decisions.py
SEED = CORE.seed
OUT_OF_FOLD_SHARE = 85.0
"""Per cent of a calibration's progress spent on the models' out-of-fold fits; the full fit, importance, response and
uncertainty take the rest."""
SEARCH_SHARE = 60.0
"""Per cent of a model's out-of-fold progress spent on the inner fits of its hyperparameter search (when it has one);
the outer folds' choices, fits and predictions take the rest."""
# decision numbers: their reasons and provenance are in plugin/decisions.py
SIGN_LEVEL = CORE.sign_level


@dataclass
class Calibration:
    """The chosen model's surfaces (`full`: fit on all deposits; `cv`: out of fold; `uncertainty`), float32
    masked on the analysis grid; `table`: one row per layer (the model's figures, importance, response);
    `comparison`: one row per surface scored on the same cells."""

    method: FittedMethod
    full: np.ma.MaskedArray
    cv: np.ma.MaskedArray
    uncertainty: np.ma.MaskedArray
    uncertainty_label: str
    table: list[dict]
    comparison: list[dict]
    folds: Folds
    log: list[str]
    why: str
    independence: dict | None = None
    out_of_fold: dict = field(default_factory=dict)
    model: object = None
    """The chosen model fitted on all deposits (models.py): what a saved model file holds."""
    surfaces: dict = field(default_factory=dict)
    """Every model's out-of-fold surface, {method: 0-1 surface}, in the order they ran (`cv` is the chosen one's)."""
    spread: object = None
    """Logistic regression, a forest or boosting chosen alone: its fold models as an EnsembleModel, whose members'
    ranks' standard deviation is the uncertainty; None for weights of evidence and the ensemble (their own)."""


@dataclass
class _Data:
    """The study area's rows: design matrix, deposit counts, fold of each row, the cells' positions."""

    columns: Columns
    x: np.ndarray
    counts: np.ndarray
    fold: np.ndarray
    valid: np.ndarray
    cell_units: float
    buffer_px: float
    rows: np.ndarray
    cols: np.ndarray
    rng: np.random.Generator
    seed: int = SEED
    pool: np.ndarray | None = None
    samples: dict = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)

    def rng_for(self, k: int) -> np.random.Generator:
        """The random draws of a task of its own (fold k's importance), the same whatever thread runs it."""
        return np.random.default_rng([self.seed, k])

    def sample_of(self, folds: tuple) -> tuple[np.ndarray, np.ndarray]:
        """`sample` of the rows of `folds`, made once for each set of folds (every model fitted on them shares it)."""
        key = tuple(sorted(int(k) for k in folds))
        with self.lock:  # a sample takes milliseconds: the threads asking for one wait for it
            if key not in self.samples:
                member = np.zeros(int(self.fold.max()) + 1, dtype=bool)
                member[list(key)] = True
                self.samples[key] = self.sample(member[self.fold])
            return self.samples[key]

    def sample(self, use: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row indices, weights) of a training sample from the rows where `use` is True: every deposit row and the
        rows of the background sample (`background`) among them beyond the buffer of those rows' deposits, the
        classes weighted to equal totals."""
        positive = use & (self.counts > 0)
        if not positive.any():
            raise LodestarError("A training fold holds no deposit; choose larger blocks or fewer folds.")
        pos = np.flatnonzero(positive)
        background = self.background()
        background = background[use[background]]
        if len(background):
            near, _ = cKDTree(np.column_stack([self.rows[pos], self.cols[pos]])).query(
                np.column_stack([self.rows[background], self.cols[background]]), distance_upper_bound=self.buffer_px
                + 1e-9)
            background = background[near > self.buffer_px]
        weight = np.concatenate([self.counts[pos], np.ones(len(background))])
        weight[len(pos):] *= self.counts[pos].sum() / max(len(background), 1)
        return np.concatenate([pos, background]), weight / weight.mean()

    def background(self) -> np.ndarray:
        """The background sample (sorted rows), drawn once, stratified by fold (module docstring)."""
        with self.lock:
            if self.pool is None:
                folds = np.unique(self.fold[self.fold >= 0])
                free = [np.flatnonzero((self.fold == k) & (self.counts == 0)) for k in folds]
                total = sum(len(f) for f in free)
                wanted = BACKGROUND_CELLS * len(folds) / max(len(folds) - 1, 1)
                parts = []
                for k, rows in zip(folds, free):
                    take = min(len(rows), int(round(wanted * len(rows) / max(total, 1))))
                    rng = np.random.default_rng([self.seed, int(k)])
                    parts.append(rows if take == len(rows) else rng.choice(rows, take, replace=False))
                self.pool = np.sort(np.concatenate(parts)) if parts else np.zeros(0, dtype=int)
            return self.pool


def calibrate(layers: list, grid: RasterGrid, deposit_xy, method: CalibrationMethod = "wofe", *,
              baselines: dict | None = None, block_size_m: float | None = None, folds: int = 5, seed: int = SEED,
              thresholds: dict | None = None, progress: Progress = SILENT) -> Calibration:
    """Fit `method` (one of CHOICES) on measured `layers` against deposits at map points (x, y) in the grid's
    CRS (see the module docstring); `baselines`: {label: 0-1 surface on the grid} scored beside it."""
    if method not in CHOICES:
        raise LodestarError(f"Unknown calibration method {method!r}; choose one of {', '.join(CHOICES)}.")
    if not layers:
        raise LodestarError("Calibration needs at least one evidence layer with measured values.")
    for layer in layers:
        if layer.values.shape != (grid.height, grid.width):
            raise LodestarError(f"Evidence layer {layer.name} is {layer.values.shape}, not on the "
                                f"{grid.height} x {grid.width} grid.")
    masks = [np.ma.getmaskarray(layer.values) for layer in layers]
    valid = np.logical_or.reduce([~m for m in masks])
    log = []
    gaps = int((valid & np.logical_or.reduce(masks)).sum())
    if gaps:
        log.append(f"{gaps:,} cells lack some evidence layers: there a missing layer weighs 0 (weights of evidence), "
                   "is marked missing (gradient boosting) or takes the training median with a missing-data "
                   "indicator (the other models).")
    deposits = deposit_cells(deposit_xy, grid, valid, log)
    split = spatial_folds(grid, valid, deposits, block_size_m, folds, seed)
    log.append(split.summary())
    rows, cols = np.nonzero(valid)
    pixel = max(abs(v) for v in grid.pixel_size)
    data = _Data(Columns(layers), np.column_stack([layer.values.filled(np.nan)[valid] for layer in layers]),
                 deposits[valid], split.fold[valid], valid,
                 grid.pixel_area / UNIT_AREA if grid.crs is not None else 1.0,
                 BUFFER_M / pixel if grid.crs is not None else 2.0, rows, cols, np.random.default_rng(seed), seed)
    with checked(progress.check):
        return _calibrate(data, grid, method, baselines, folds, seed, thresholds, split, log, progress)


def _calibrate(data: _Data, grid: RasterGrid, method: CalibrationMethod, baselines, folds: int, seed: int, thresholds,
               split: Folds, log: list, progress: Progress) -> Calibration:
    """`calibrate` on the study area's rows (`data`), cancel checked in every prediction."""
    valid = data.valid
    methods = METHODS if method == "best" else (method,)
    runs = _out_of_fold(methods, data, folds, thresholds, seed, progress.scaled(0.0, OUT_OF_FOLD_SHARE))
    for name in methods:
        if isinstance(runs[name], LodestarError):
            if method != "best":
                raise runs.pop(name)
            log.append(f"{LABELS[name]} was not run: {runs.pop(name)}")
    progress.check()
    if method == "best" and len(runs) >= 2:
        runs[ENSEMBLE] = _ensemble_out_of_fold(runs, data, folds, progress)
    surfaces, comparison = _compared(runs, data, grid, baselines, progress)
    chosen, reason = _choose(runs, data, list(range(folds)))
    why = _why(chosen, reason, runs, comparison, method)
    log.append(why)
    if method == "best" and len(runs) >= 2:
        log.append(_choice_out_of_fold(runs, data, folds, chosen))
    run = runs[chosen]
    rest = 100.0 - OUT_OF_FOLD_SHARE
    progress.set(OUT_OF_FOLD_SHARE)
    model, params, full_scores, member_ranks = _chosen_full_fit(
        chosen, runs, data, thresholds, seed, progress.scaled(OUT_OF_FOLD_SHARE, OUT_OF_FOLD_SHARE + rest / 6))
    progress.set(OUT_OF_FOLD_SHARE + rest / 3)
    table = _rows(model, params, run, data, full_scores, valid, progress.scaled(OUT_OF_FOLD_SHARE + rest / 3,
                                                                               OUT_OF_FOLD_SHARE + 2 * rest / 3))
    independence, uncertainty, label, spread = None, None, "", None
    if chosen == ENSEMBLE:
        uncertainty = _masked(np.std(member_ranks, axis=0), valid)
        label = "standard deviation of the ensemble's member models' favourability (0-1 rank scale)"
    elif chosen == "wofe":
        independence, uncertainty = _wofe_checks(model, data, log, progress)
        label = "posterior probability standard deviation (weights and missing data; per unit cell)"
    else:
        everything = np.ones(len(data.counts), dtype=bool)
        spread = EnsembleModel(run["models"]).fit(data.columns, data.x[_reference_rows(data, everything)])
        uncertainty = _masked(np.std(spread.member_ranks(data.x), axis=0), valid)
        label = "standard deviation of the fold models' favourability (0-1 rank scale)"
    progress.set(100.0)
    return Calibration(chosen, _surface(full_scores, valid), surfaces[chosen], uncertainty, label, table,
                       comparison, split, log, why, independence,
                       {name: {"auc": r["auc"], "params": r["params"]} for name, r in runs.items()}, model, surfaces,
                       spread)


def _compared(runs: dict, data: _Data, grid: RasterGrid, baselines: dict | None,
              progress: Progress) -> tuple[dict, list[dict]]:
    """({method: out-of-fold 0-1 surface}, the comparison's rows): every run's surface and then every baseline scored
    on the study area's cells against each deposit cell once, as the fits count them; each run's scores sorted once
    for `_auc_in` (a cancel checked between them all)."""
    deposit_xy = _cell_points(data, grid)
    surfaces, comparison = {}, []
    for name, run in runs.items():
        progress.check()
        surfaces[name] = _surface(run["oof"], data.valid)
        comparison.append(_score(f"{LABELS[name]}, out of fold", "out of fold (spatial blocks)", surfaces[name], grid,
                                 deposit_xy, data.valid, run["seconds"]))
    for label, surface in (baselines or {}).items():
        progress.check()
        comparison.append(_score(label, "no deposit data", surface, grid, deposit_xy, data.valid, None))
    for run in runs.values():  # each run's scores sorted once (a cancel between them)
        progress.check()
        _fold_pairs(run, data)
    return surfaces, comparison


def _chosen_full_fit(chosen: FittedMethod, runs: dict, data: _Data, thresholds, seed: int, progress: Progress):
    """(the chosen model fitted on every row, its hyperparameters, its scores of every row, the ensemble's members'
    ranks of every row or None): the ensemble's members fitted in threads (`progress` moving with them) and ranked
    against a sample of the study area."""
    if chosen != ENSEMBLE:
        model, params = _full_fit(chosen, runs[chosen], data, thresholds, seed)
        return model, params, model.predict(data.x), None
    members = _in_parallel([lambda _, name=name: _full_fit(name, runs[name], data, thresholds, seed)[0]
                            for name in runs if name != ENSEMBLE], progress)
    everything = np.ones(len(data.counts), dtype=bool)
    ensemble = EnsembleModel(members).fit(data.columns, data.x[_reference_rows(data, everything)])
    member_ranks = ensemble.member_ranks(data.x)
    return ensemble, {}, np.mean(member_ranks, axis=0), member_ranks


def _wofe_checks(model: WofeModel, data: _Data, log: list, progress: Progress) -> tuple[dict, np.ma.MaskedArray]:
    """(the conditional-independence tests, the posterior's standard deviation on the grid) of weights of evidence
    fitted on every row; the tests' lines in `log`."""
    progress.check()
    logit, variance, _ = model.evidence(data.x)
    probability, variance = posterior(logit, variance, model.n_deposits)
    independence = conditional_independence(probability, variance, model.conditions(data.x), data.cell_units,
                                             model.n_deposits)
    independence["pairs"] = model.pairwise(data.x, data.counts)
    log.append(_independence_line(independence))
    log.append(pairwise_line(independence["pairs"]))
    progress.check()
    return independence, _masked(model.posterior_sd(data.x), data.valid)


def _out_of_fold(methods: tuple, data: _Data, folds: int, thresholds, seed: int, progress: Progress) -> dict:
    """{method: its out-of-fold scores, fold models, chosen hyperparameters, importance samples, AUC and seconds (its
    fits' own, summed over the threads), or the LodestarError that stopped it}: the inner fits of every candidate of
    every method (each set of folds once), then each method's outer folds (choice, fit and prediction); each phase's
    fits of all methods in one pool of threads (`_in_parallel`), the methods taking turns, so that gradient boosting's
    Python-bound fits share the cores with the forests' and the regressions' native ones."""
    candidates = {name: [dict(c) for c in GRIDS[name]] for name in methods}
    halves = {k: _inner_groups(k, folds) for k in range(folds)}
    guard = _Guard(methods)
    for name in methods:
        try:
            imported(name)
        except LodestarError as exc:
            guard.failed[name] = exc
    inner, searched = _inner_fits(methods, candidates, halves, data, thresholds, seed, guard,
                                  progress.scaled(0.0, SEARCH_SHARE))

    def outer(name: str, k: int):
        def work():
            best = candidates[name][0]
            if len(candidates[name]) > 1:
                scores = [_inner_auc(inner[name], data, halves[k], c) for c in range(len(candidates[name]))]
                best = candidates[name][int(np.argmax(scores))]
            model = _fit_on(name, data, tuple(j for j in range(folds) if j != k), best, thresholds, seed)
            return model, best if name != "wofe" else {}, model.predict(data.x[data.fold == k])
        return work

    alive = [name for name in methods if name not in guard.failed]
    pairs = _taking_turns([[(name, k) for k in range(folds)] for name in alive])
    progress.log(f"Calibration: {len(alive)} model(s) x {folds} folds out of fold: "
                 + ", ".join(f"{LABELS[name]} (model {m + 1} of {len(alive)})" for m, name in enumerate(alive)))
    results = _in_parallel([guard.task(name, outer(name, k)) for name, k in pairs],
                           progress.scaled(SEARCH_SHARE if searched else 0.0, 100.0))
    return _runs(methods, pairs, results, guard, data)


class _Guard:
    """The fits of a calibration's methods run in threads: each method's failure (`failed`, the first LodestarError
    that stopped it) and its fits' seconds (`spent`, summed over the threads)."""

    def __init__(self, methods: tuple):
        self.failed: dict[str, LodestarError] = {}
        self.spent = {name: 0.0 for name in methods}
        self.lock = threading.Lock()

    def task(self, name: str, work: Callable[..., object]) -> Callable[[Progress], object]:
        """`work` (a fit of method `name`) as a task of `_in_parallel`: None when it fails, its failure kept (one
        model's failure ends that model, not the calibration); a cancel is raised."""
        def task(_):
            start = time.perf_counter()
            try:
                return work()
            except LodestarError as exc:
                if isinstance(exc, Cancelled):
                    raise
                self.failed.setdefault(name, exc)
                return None
            finally:
                with self.lock:
                    self.spent[name] += time.perf_counter() - start
        return task


def _inner_fits(methods: tuple, candidates: dict, halves: dict, data: _Data, thresholds, seed: int, guard: _Guard,
                progress: Progress) -> tuple[dict[str, dict[tuple, object]], bool]:
    """({method: {(training folds, candidate): the candidate fitted on them}}, whether any was fitted): every
    candidate of every method that has a choice, on each set of folds an inner group's complement (each set once),
    the methods taking turns, `progress` moving with them."""
    sets = sorted({_rest(group, groups) for groups in halves.values() for group in groups})
    jobs = _taking_turns([[(name, train, c) for train in sets for c in range(len(candidates[name]))
                           if _holds_deposits(data, train)] for name in methods
                          if len(candidates[name]) > 1 and name not in guard.failed])
    searched = bool(jobs)
    if searched:
        progress.log(f"Calibration: hyperparameters chosen inside the training folds: {len(jobs)} inner fits of "
                     + ", ".join(LABELS[name] for name in methods
                                 if len(candidates[name]) > 1 and name not in guard.failed))
    fitted = _in_parallel([guard.task(name, lambda name=name, train=train, c=c: _fit_on(
        name, data, train, candidates[name][c], thresholds, seed)) for name, train, c in jobs],
        progress)
    inner: dict[str, dict[tuple, object]] = {name: {} for name in methods}
    for (name, train, c), model in zip(jobs, fitted):
        inner[name][(train, c)] = model
    return inner, searched


def _runs(methods: tuple, pairs: list, results: list, guard: _Guard, data: _Data) -> dict:
    """`_out_of_fold`'s runs from the results of its outer folds (`pairs`: (method, fold) of each)."""
    runs: dict[str, dict | LodestarError] = {}
    for name in methods:
        if name in guard.failed:
            runs[name] = guard.failed[name]
            continue
        mine = sorted((k, result) for (n, k), result in zip(pairs, results) if n == name)
        oof = np.empty(len(data.counts))
        for k, (_, _, scores) in mine:
            oof[data.fold == k] = scores
        runs[name] = {"oof": oof, "models": [r[0] for _, r in mine], "params": [r[1] for _, r in mine],
                      "held": [np.flatnonzero(data.fold == k) for k, _ in mine], "auc": _cell_auc(oof, data.counts),
                      "seconds": guard.spent[name]}
    return runs


def _taking_turns(lists: list) -> list:
    """The items of `lists`, one from each in turn."""
    out = []
    for at in range(max((len(items) for items in lists), default=0)):
        out += [items[at] for items in lists if at < len(items)]
    return out


def _in_parallel(tasks: list, progress: Progress) -> list:
    """The results of `tasks` (functions of a Progress), FOLD_WORKERS at a time in threads, every fit and prediction
    in them on one thread (models.serial). `progress` moves with the mean of the tasks' own reports (a task done:
    100), reported from the task's thread; the cancel is checked every 0.1 s here and at every check in the tasks,
    and a cancel or a failure stops every task at its next check; the failure is raised once all have stopped (the
    first in task order that is not a stop)."""
    stop, lock = threading.Event(), threading.Lock()
    done = [0.0] * len(tasks)

    def report(i: int, percent: float) -> None:
        with lock:
            done[i] = max(done[i], percent)
            progress.set(sum(done) / len(tasks))

    def run(i: int, task):
        mine = Progress(lambda percent: report(i, percent), None, lambda: stop.is_set() or progress.cancelled())
        with serial(), checked(mine.check):
            result = task(mine)
        report(i, 100.0)
        return result

    with ThreadPoolExecutor(max(1, min(len(tasks), FOLD_WORKERS or cores()))) as pool:
        futures = [pool.submit(copy_context().run, run, i, task) for i, task in enumerate(tasks)]
        pending = set(futures)
        try:
            while pending:
                finished, pending = wait(pending, timeout=0.1, return_when=FIRST_EXCEPTION)
                if any(f.exception() is not None for f in finished):
                    break
                progress.check()
        finally:
            stop.set()
            for future in pending:
                future.cancel()
    failures = [e for e in (f.exception() for f in futures if not f.cancelled()) if e is not None]
    if failures:
        raise next((e for e in failures if not isinstance(e, Cancelled)), failures[0])
    return [f.result() for f in futures]


def _ensemble_out_of_fold(runs: dict, data: _Data, folds: int, progress: Progress = SILENT) -> dict:
    """The ensemble of `runs` out of fold: the mean of the members' out-of-fold ranks; per fold, an ensemble of
    the members' fold models ranked against the cells outside that fold (for importance)."""
    start = time.perf_counter()
    members = list(runs.values())
    oof = np.mean([_ranks(run["oof"]) for run in members], axis=0)
    references = [_reference_rows(data, data.fold != k) for k in range(folds)]
    models = _in_parallel([lambda _, k=k: EnsembleModel([run["models"][k] for run in members]).fit(
        data.columns, data.x[references[k]]) for k in range(folds)],
                          Progress(is_cancelled=progress.cancelled))  # the cancel only: the progress stands here
    return {"oof": oof, "models": models, "params": [{} for _ in range(folds)], "held": members[0]["held"],
            "auc": _cell_auc(oof, data.counts),
            "seconds": time.perf_counter() - start}  # its own: the members' seconds are in their rows


def _reference_rows(data: _Data, use: np.ndarray) -> np.ndarray:
    """A random sample (REFERENCE_CELLS at most) of the rows `use`."""
    rows = np.flatnonzero(use)
    return np.sort(data.rng.choice(rows, min(REFERENCE_CELLS, len(rows)), replace=False))


def _full_fit(method: ModelMethod, run: dict, data: _Data, thresholds, seed: int):
    """(model fitted on every row, its hyperparameters): the candidate the outer folds' nested searches chose most
    often (ties to the earlier candidate of models.GRIDS), so the full fit needs no search of its own."""
    candidates = [dict(c) for c in GRIDS[method]]
    votes = [candidates.index(p) for p in run["params"] if p in candidates]
    best = candidates[max(range(len(candidates)), key=lambda i: (votes.count(i), -i))] if votes else candidates[0]
    if method == "wofe":
        return fit_model(method, data.columns, data.x, data.counts, None, {}, data.cell_units, thresholds, seed), {}
    index, weight = data.sample_of(tuple(np.unique(data.fold)))
    return fit_model(method, data.columns, data.x[index], data.counts[index], weight, best, data.cell_units,
                     thresholds, seed), dict(best)


def _inner_groups(k: int, folds: int) -> list:
    """The inner groups of outer fold k's training folds: alternate folds grouped (INNER_FOLDS groups)."""
    train = [j for j in range(folds) if j != k]
    return [tuple(train[g::INNER_FOLDS]) for g in range(min(INNER_FOLDS, len(train)))]


def _rest(group: tuple, groups: list) -> tuple:
    """The folds of `groups` outside `group`: an inner fit's training folds."""
    return tuple(sorted(j for other in groups if other != group for j in other))


def _holds_deposits(data: _Data, folds: tuple) -> bool:
    return bool((data.counts[_in_folds(data, folds)] > 0).any())


def _in_folds(data: _Data, folds) -> np.ndarray:
    """Whether each row lies in one of `folds`."""
    member = np.zeros(int(data.fold.max()) + 1, dtype=bool)
    member[list(folds)] = True
    return member[data.fold]


def _fit_on(method: ModelMethod, data: _Data, folds: tuple, params: dict, thresholds, seed: int):
    """`method` with `params` fitted on the rows of `folds`: every cell for weights of evidence, else their training
    sample (`_Data.sample`)."""
    use = _in_folds(data, folds)
    if method == "wofe":
        index = np.flatnonzero(use)
        return fit_model(method, data.columns, data.x[index], data.counts[index], None, {}, data.cell_units,
                         thresholds, seed)
    index, weight = data.sample_of(folds)
    return fit_model(method, data.columns, data.x[index], data.counts[index], weight, params, data.cell_units,
                     thresholds, seed)


def _inner_auc(inner: dict, data: _Data, groups: list, c: int) -> float:
    """Candidate c's mean AUC over `groups` (one outer fold's inner groups): each group's training sample scored by
    the candidate fitted on the other groups; -inf when no group and its complement both hold deposits."""
    aucs = []
    for group in groups:
        model = inner.get((_rest(group, groups), c))
        if model is None or not _holds_deposits(data, group):
            continue
        index, weight = data.sample_of(group)
        aucs.append(weighted_auc(model.predict(data.x[index]), data.counts[index] > 0, weight))
    return float(np.nanmean(aucs)) if aucs else -np.inf


def _cell_auc(scores: np.ndarray, counts: np.ndarray) -> float:
    """AUC over the study area's cells, each deposit counted once per deposit (the success-rate AUC)."""
    positive = counts > 0
    weight = np.where(positive, counts, 1.0)
    both = np.concatenate([scores, scores[positive]])
    label = np.concatenate([np.zeros(len(scores), dtype=bool), np.ones(int(positive.sum()), dtype=bool)])
    return weighted_auc(both, label, np.concatenate([np.ones(len(scores)), weight[positive]]))


def _auc_in(run: dict, data, folds: list) -> float:
    """`_cell_auc` of a run's out-of-fold scores over the cells of `folds`, from `_fold_pairs` (the scores sorted
    once per run)."""
    pairs, found, cells = _fold_pairs(run, data)
    folds = list(folds)
    if not found[folds].sum():
        return math.nan
    return float(pairs[np.ix_(folds, folds)].sum() / (found[folds].sum() * cells[folds].sum()))


def _fold_pairs(run: dict, data) -> tuple:
    """(pairs, deposits, cells) per fold of a run's out-of-fold scores: pairs[a, b] sums, over the deposit cells of
    fold a (weighted by their deposits), the cells of fold b scoring lower plus half those tied; the AUC over any
    set of folds F is then the sum of pairs over F x F over (its deposits x its cells). Made once per run."""
    if "pairs" not in run:
        order = np.argsort(run["oof"], kind="mergesort")
        scores, fold, counts = run["oof"][order], data.fold[order], data.counts[order]
        new = np.r_[True, scores[1:] != scores[:-1]]
        starts = np.flatnonzero(new)
        ends = np.r_[starts[1:], len(scores)]
        held = np.flatnonzero(counts > 0)
        group = (np.cumsum(new) - 1)[held]
        low, high = starts[group], ends[group]
        n = int(fold.max()) + 1
        pairs = np.zeros((n, n))
        for b in range(n):
            cumulative = np.r_[0, np.cumsum(fold == b)]
            below = cumulative[low] + (cumulative[high] - cumulative[low]) / 2.0
            pairs[:, b] = np.bincount(fold[held], weights=counts[held] * below, minlength=n)
        run["pairs"] = (pairs, np.bincount(fold[held], weights=counts[held], minlength=n),
                        np.bincount(fold, minlength=n).astype(float))
    return run["pairs"]


def _rows(model, params: dict, run: dict, data: _Data, full_scores: np.ndarray, valid: np.ndarray,
          progress: Progress = SILENT) -> list[dict]:
    """The model's rows per layer with its hyperparameters, out-of-fold importance and response curve."""
    rows = model.rows()
    importance = _importance(run, data, progress.scaled(0.0, 50.0))
    sorted_full = np.sort(full_scores)
    sample = data.rng.choice(len(data.x), min(RESPONSE_CELLS, len(data.x)), replace=False)
    responses = _in_parallel([lambda _, j=j: _response(model, data, j, sample, sorted_full) for j in range(len(rows))],
                             progress.scaled(50.0, 100.0))
    for j, row in enumerate(rows):
        row["basis"] = f"{BASIS} ({data.counts.sum():g})"
        if data.columns.layers[j].source:
            row["derived_from"] = data.columns.layers[j].source
        row["parameters"] = ", ".join(f"{k} {v:g}" for k, v in params.items()) or None
        row["importance"] = round(float(importance[j]), 4)
        row["lowers_skill"] = bool(importance[j] < 0)
        row["response"] = responses[j]
    return rows


def _importance(run: dict, data: _Data, progress: Progress = SILENT) -> np.ndarray:
    """Drop in out-of-fold AUC per layer when its values are shuffled among a fold's cells (deposit-weighted); the
    folds in threads, each with its own random draws (seeded by the fold)."""
    def fold(k: int, model, held: np.ndarray):
        def task(_):
            drops = np.zeros(len(data.columns))
            positive = held[data.counts[held] > 0]
            background = held[data.counts[held] == 0]
            if not len(positive) or not len(background):
                return drops, 0.0
            rng = data.rng_for(k)
            if len(background) > IMPORTANCE_CELLS:
                background = rng.choice(background, IMPORTANCE_CELLS, replace=False)
            index = np.concatenate([positive, background])
            label = data.counts[index] > 0
            weight = np.where(label, data.counts[index], 1.0)
            x = data.x[index]
            shuffled = []
            for j in range(len(data.columns)):
                one = x.copy()
                one[:, j] = rng.permutation(one[:, j])
                shuffled.append(one)
            scores = model.predict(np.concatenate([x] + shuffled)).reshape(len(data.columns) + 1, len(index))
            base = weighted_auc(scores[0], label, weight)
            n = float(data.counts[positive].sum())
            return np.array([n * (base - weighted_auc(s, label, weight)) for s in scores[1:]]), n
        return task

    parts = _in_parallel([fold(k, model, held) for k, (model, held) in enumerate(zip(run["models"], run["held"]))],
                         progress)
    total = sum(n for _, n in parts)
    drops = sum((d for d, _ in parts), np.zeros(len(data.columns)))
    return drops / total if total else drops


def _response(model, data: _Data, j: int, sample: np.ndarray, sorted_full: np.ndarray) -> list[dict]:
    """Mean favourability over `sample` with layer j set to each level (its quantiles, or its largest units)."""
    layer = data.columns.layers[j]
    column = data.x[:, j]
    known = column[~np.isnan(column)]
    if data.columns.categorical[j]:
        codes, counts = np.unique(known, return_counts=True)
        levels = codes[np.argsort(-counts, kind="stable")][:RESPONSE_UNITS]
    else:
        levels = np.unique(np.quantile(known, np.linspace(0, 1, 11)))
    x = np.tile(data.x[sample], (len(levels), 1))
    x[:, j] = np.repeat(levels, len(sample))
    scores = model.predict(x)  # ranked as the surface ranks them: ties at their mid-rank
    favourability = ((np.searchsorted(sorted_full, scores, "left") + np.searchsorted(sorted_full, scores, "right"))
                     / (2.0 * len(sorted_full))).reshape(len(levels), len(sample))
    out = []
    for level, values in zip(levels, favourability):
        entry = {"favourability": round(float(values.mean()), 4)}
        entry.update({"unit": layer.class_name(level)} if data.columns.categorical[j] else {"value": float(level)})
        out.append(entry)
    return out


def _score(label: str, basis: str, surface: np.ma.MaskedArray, grid, deposit_xy, valid, seconds) -> dict:
    """A surface's AUC, capture and prediction-area crossing on the study-area cells (its own gaps rank last)."""
    values = np.ma.masked_invalid(np.ma.asarray(surface, dtype=float))
    floor = float(values.min()) - 1.0 if values.count() else 0.0
    metrics = evaluate_surface(np.ma.masked_array(values.filled(floor), mask=~valid), grid, deposit_xy)
    positions = np.array([p for p in metrics["deposit_area_shares"] if p is not None])
    return {"surface": label, "basis": basis, "auc": metrics["auc"],
            "capture": {f"{s:g}": metrics["capture"][s] for s in DEFAULT_SHARES},
            "pa_crossing": _pa_crossing(positions), "deposits": metrics["inside"],
            "seconds": None if seconds is None else round(seconds, 2)}


def _pa_crossing(positions: np.ndarray) -> dict | None:
    """Where the prediction rate meets the occupied area: the share `a` of the area (best first) whose deposits'
    share equals 1 - a (so 'x % of the deposits in 100 - x % of the area')."""
    if not len(positions):
        return None
    ordered = np.sort(positions)
    captured = np.arange(1, len(ordered) + 1) / len(ordered)
    k = int(np.argmax(captured >= 1.0 - ordered))
    area = float(ordered[k]) if k == 0 or captured[k - 1] < 1.0 - ordered[k] else float(1.0 - captured[k - 1])
    return {"area_share": round(area, 4), "deposit_share": round(1.0 - area, 4)}


def _sign_chance(wins: int, n: int) -> float:
    """One-sided sign test: the chance of `wins` or more wins in `n` even contests."""
    return sum(math.comb(n, j) for j in range(wins, n + 1)) / 2 ** n


def _losses_allowed(n: int) -> int:
    """Folds (of `n` holding deposits) a single model may lose to the ensemble and still replace it: the most with
    which the sign test's chance stays at most SIGN_LEVEL; -1 when even `n` wins of `n` are not enough."""
    return max((losses for losses in range(n + 1) if _sign_chance(n - losses, n) <= SIGN_LEVEL), default=-1)


def _counted(data: _Data, folds: list) -> list:
    return [k for k in folds if data.counts[data.fold == k].sum() > 0]


def _choose(runs: dict, data: _Data, folds: list, allowed: int | None = None) -> tuple[FittedMethod, str]:
    """The model "best" takes judged on the cells of `folds`, and why (a clause, "" when there was no choice): the one
    of highest out-of-fold AUC there when it is the ensemble or there is no ensemble; else the ensemble, unless that
    single model beats it within the folds holding deposits, losing in at most `allowed` of them (by default the
    sign test's allowance over those folds, _losses_allowed; judging the rule on fewer folds passes the whole run's)."""
    leader = max(runs, key=lambda name: _auc_in(runs[name], data, folds))
    if leader == ENSEMBLE or ENSEMBLE not in runs:
        return leader, ""
    counted = _counted(data, folds)
    n = len(counted)
    allowed = _losses_allowed(n) if allowed is None else allowed
    wins = sum(_auc_in(runs[leader], data, [k]) > _auc_in(runs[ENSEMBLE], data, [k]) for k in counted)
    chance = _sign_chance(wins, n)
    if allowed >= 0 and n - wins <= allowed:
        return leader, f"{LABELS[leader]} beats the ensemble in {wins} of {n} folds (sign test, chance {chance:.3f})"
    if allowed < 0:
        return ENSEMBLE, (f"{LABELS[leader]}'s higher AUC beats the ensemble in {wins} of {n} folds; with {n} folds "
                          f"holding deposits no model can pass a sign test at {SIGN_LEVEL:g}: the ensemble is kept")
    return ENSEMBLE, (f"{LABELS[leader]}'s higher AUC beats the ensemble in {wins} of {n} folds, not enough to be "
                      f"more than luck (sign test, chance {chance:.3f} above {SIGN_LEVEL:g}): the ensemble is kept")


def _choice_out_of_fold(runs: dict, data: _Data, folds: int, chosen: str) -> str:
    """The choice among the models judged out of fold too: within each fold holding deposits, the AUC of the model the
    same rule (the losses the whole run allows) picks on the other folds' cells, against the AUC of the model chosen
    on all folds (a choice judged on the cells it is scored on is a little optimistic); both averaged over the folds
    by their deposits."""
    counted = _counted(data, list(range(folds)))
    allowed = _losses_allowed(len(counted))
    picked, fair, chosen_auc, weights = [], [], [], []
    for k in counted:
        held = data.fold == k
        name = _choose(runs, data, [j for j in range(folds) if j != k], allowed)[0]
        picked.append(LABELS[name])
        fair.append(_auc_in(runs[name], data, [k]))
        chosen_auc.append(_auc_in(runs[chosen], data, [k]))
        weights.append(data.counts[held].sum())
    tally = ", ".join(f"{name} in {picked.count(name)}" for name in dict.fromkeys(picked))
    return (f"The choice judged out of fold too: within the folds (mean AUC weighted by their deposits), the model "
            f"the same rule picks on the other folds ({tally} of {len(picked)} folds) scores "
            f"{np.average(fair, weights=weights):.3f}, the model chosen on all of them "
            f"{np.average(chosen_auc, weights=weights):.3f}.")


def _why(chosen: str, reason: str, runs: dict, comparison: list, method: str) -> str:
    scores = ", ".join(f"{LABELS[n]} {r['auc']:.3f}" for n, r in sorted(runs.items(), key=lambda i: -i[1]["auc"]))
    head = (f"Best out of fold: {LABELS[chosen]} (AUC over the study area's cells: {scores})" if method == "best"
            else f"{LABELS[chosen]}, out-of-fold AUC {runs[chosen]['auc']:.3f}")
    head += f"; {reason}" if reason else ""
    plain = [row for row in comparison if row["basis"] == "no deposit data"]
    mine = next(row for row in comparison if row["surface"].startswith(LABELS[chosen]))
    beaten = [f"{row['surface']} {row['auc']:.3f}" for row in plain if row["auc"] >= mine["auc"]]
    if beaten:
        return head + f"; it does not beat {', '.join(beaten)}, which used no deposit data."
    ahead = ", ".join(f"{row['surface']} {row['auc']:.3f}" for row in plain)
    return head + (f"; ahead of {ahead}." if plain else ".")


def deposit_cells(deposit_xy, grid: RasterGrid, valid: np.ndarray | None, log: list) -> np.ndarray:
    """1 on each cell of the study area (`valid`; None: the whole grid) holding known deposits, else 0: several
    deposits in one cell are one place (a model is fitted and scored cell by cell: fifty workings in one cell would
    weigh as fifty deposits), counted once and said in `log`, as are those outside it. Fewer than 2 deposits, or
    deposits all in one cell, are refused in one line."""
    valid = np.ones((grid.height, grid.width), dtype=bool) if valid is None else valid
    rows, cols, inside = cells_of(deposit_xy, grid, valid)
    cells = np.zeros(valid.shape)
    cells[rows[inside], cols[inside]] = 1
    n, held = int(inside.sum()), int(cells.sum())
    if (~inside).any():
        log.append(f"{int((~inside).sum())} of {len(inside)} deposits lie outside the study area and are not used.")
    if n < 2:
        raise LodestarError("Calibration needs at least 2 known deposits inside the analysed area.")
    size = f"{max(grid.pixel_size):,.4g} map units"
    if held < 2:
        raise LodestarError(f"The {n} known deposits inside the analysed area all lie in one cell ({size} across): "
                            "calibration needs deposits in at least 2 cells to learn from; give deposits spread over "
                            "the area, or turn calibration off.")
    if held < n:
        log.append(f"{n - held} of the {n} known deposits inside the study area share a cell ({size} across) with "
                   f"another: each cell is counted once, {held} deposit cells.")
    return cells


def _cell_points(data: _Data, grid: RasterGrid) -> np.ndarray:
    """The centre (x, y) of each deposit cell: the deposits the surfaces are scored against, once per cell."""
    held = data.counts > 0
    x, y = grid.pixel_to_map(data.cols[held] + 0.5, data.rows[held] + 0.5)
    return np.column_stack([np.asarray(x, dtype=float), np.asarray(y, dtype=float)])


def _ranks(scores: np.ndarray) -> np.ndarray:
    return (rankdata(scores, method="average") - 0.5) / len(scores)


def _masked(values: np.ndarray, valid: np.ndarray) -> np.ma.MaskedArray:
    out = np.zeros(valid.shape, dtype="float32")
    out[valid] = values
    return np.ma.masked_array(out, mask=~valid)


def _surface(scores: np.ndarray, valid: np.ndarray) -> np.ma.MaskedArray:
    """0-1 favourability: the share of the study area with a lower score, ties at their mid-rank."""
    return _masked(_ranks(scores), valid)


def _independence_line(ci: dict) -> str:
    verdict = ("conditional independence is doubtful (ratio below 0.85): layers overlap in what they say"
               if ci["doubtful"] else "no sign of conditional dependence (ratio 0.85 or more)")
    return (f"Conditional independence ({BASIS}): {ci['observed']:g} deposits observed, {ci['predicted']:.1f} "
            f"predicted, ratio {ci['ratio']:.2f}; Agterberg-Cheng z = {ci['z']:.2f} (probability of chance "
            f"{ci['p_chance']:.3f}); {verdict}.")
