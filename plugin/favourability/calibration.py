"""Favourability fitted on known deposits: every model out of fold on spatial blocks, compared with the surfaces
that used no deposit data, with its uncertainty, the importance of each layer and its response.

The evidence is measured (measured.py): unit codes, distances in metres, values in the layer's units; the
models are in models.py. The study area is the cells where at least one layer has data; a cell's label is
1 where it holds known deposits (several in one cell are one place: counted once, and said), else 0; deposits in
fewer than 2 cells are refused.

- **Training rows.** Weights of evidence counts every training cell. The other models see the training
  deposits' cells (weighted by their deposit count) and up to `BACKGROUND_CELLS` background cells drawn at
  random from the training cells farther than `BUFFER_M` from every training deposit, the classes weighted
  to equal totals.
- **Out of fold.** Each fold's cells are predicted by a model fitted on the other folds' cells and deposits
  only (blocks.py). A model's hyperparameters are chosen inside those training folds (nested): each
  candidate of models.GRIDS is fitted on half of the training folds (alternate folds grouped) and scored (AUC)
  on the other half, in turn; the best mean wins. The full fit takes the candidate the outer folds chose most
  often.
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
  standard deviation, at each cell, of the fold models' surfaces (each ranked 0-1 over the study area).
- **Independence** (weights of evidence chosen): the overall test (observed / predicted deposits, Agterberg-Cheng
  z) and the pairwise one (a chi-square per pair of layers over the deposits' classes; wofe.py), in the log.
- **Importance.** Per layer, the drop in out-of-fold AUC when its values are shuffled among the cells a fold
  model predicts (deposits and a background sample of that fold), averaged over folds by their deposits; a
  layer whose shuffling raises the AUC lowers the model's skill, and is flagged.
- **Response.** Per layer, the full fit's mean favourability (0-1, as the surface) over a sample of the
  study area with the layer set to each of 11 quantiles of its values (or to each of its largest units).
- **Progress and cancel.** Progress moves model by model and fold by fold (model m of M, fold k of n; the
  out-of-fold fits take OUT_OF_FOLD_SHARE of it), never backwards; a cancel is checked between models, folds and
  hyperparameter candidates, and between the row chunks of every prediction (models.checked).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.ndimage import distance_transform_edt
from scipy.stats import rankdata

from ..errors import Cancelled, LodestarError
from ..evaluation import DEFAULT_SHARES, cells_of, evaluate_surface
from ..progress import SILENT, Progress
from ..raster_io import RasterGrid
from .blocks import Folds, spatial_folds
from .models import ENSEMBLE, GRIDS, LABELS, METHODS, Columns, EnsembleModel, checked, fit_model, weighted_auc
from .wofe import UNIT_AREA, conditional_independence, pairwise_line, posterior

BASIS = "fitted on known deposits"
CHOICES = METHODS + ("best",)
BUFFER_M = 1000.0
"""Background is drawn farther than this from a known deposit: ground that near may hold the same system,
unsampled (on a grid without a CRS, 2 pixels)."""
BACKGROUND_CELLS = 20_000
"""Background cells drawn for one fit: enough for a stable AUC, few enough for a 3-million-cell district."""
INNER_FOLDS = 2
"""Hyperparameters are chosen by 2-fold cross-validation over the training folds (alternate folds grouped): each
candidate fitted on half of them and scored on the other half, in turn."""
IMPORTANCE_CELLS = 5_000
RESPONSE_CELLS = 2_000
REFERENCE_CELLS = 20_000
"""Cells an ensemble member's scores are ranked against (a random sample of the rows it may see)."""
RESPONSE_UNITS = 12
SEED = 0
OUT_OF_FOLD_SHARE = 85.0
"""Per cent of a calibration's progress spent on the models' out-of-fold fits; the full fit, importance, response and
uncertainty take the rest."""
SIGN_LEVEL = 0.05
"""A single model replaces the ensemble in "best" only when it beats it in so many folds that a one-sided sign test
gives a probability of chance at most this (the 5 % level of the offline reasoner's measurements). The level is
nominal: the model tested is the best of four on the same folds (a chance win is likelier than the level says,
up to about four times) and a tied fold counts as lost (rarer)."""


@dataclass
class Calibration:
    """The chosen model's surfaces (`full`: fit on all deposits; `cv`: out of fold; `uncertainty`), float32
    masked on the analysis grid; `table`: one row per layer (the model's figures, importance, response);
    `comparison`: one row per surface scored on the same cells."""

    method: str
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

    def sample(self, use: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row indices, weights) of a training sample from the rows where `use` is True: every deposit row and
        background rows beyond the buffer of those rows' deposits, the classes weighted to equal totals."""
        positive = use & (self.counts > 0)
        if not positive.any():
            raise LodestarError("A training fold holds no deposit; choose larger blocks or fewer folds.")
        near = self._near(positive)
        background = np.flatnonzero(use & ~positive & ~near)
        if len(background) > BACKGROUND_CELLS:
            background = np.sort(self.rng.choice(background, BACKGROUND_CELLS, replace=False))
        pos = np.flatnonzero(positive)
        weight = np.concatenate([self.counts[pos], np.ones(len(background))])
        weight[len(pos):] *= self.counts[pos].sum() / max(len(background), 1)
        return np.concatenate([pos, background]), weight / weight.mean()

    def _near(self, positive: np.ndarray) -> np.ndarray:
        grid = np.ones(self.valid.shape, dtype=bool)
        grid[self.rows[positive], self.cols[positive]] = False
        return distance_transform_edt(grid)[self.rows, self.cols] <= self.buffer_px


def calibrate(layers: list, grid: RasterGrid, deposit_xy, method: str = "wofe", *, baselines: dict | None = None,
              block_size_m: float | None = None, folds: int = 5, seed: int = SEED, thresholds: dict | None = None,
              progress: Progress = SILENT) -> Calibration:
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
                 BUFFER_M / pixel if grid.crs is not None else 2.0, rows, cols, np.random.default_rng(seed))
    with checked(progress.check):
        return _calibrate(data, grid, method, baselines, folds, seed, thresholds, split, log, progress)


def _calibrate(data: _Data, grid: RasterGrid, method: str, baselines, folds: int, seed: int, thresholds,
               split: Folds, log: list, progress: Progress) -> Calibration:
    """`calibrate` on the study area's rows (`data`), cancel checked in every prediction."""
    valid = data.valid
    deposit_xy = _cell_points(data, grid)  # each deposit cell once, as the fits count them
    methods = METHODS if method == "best" else (method,)
    runs = {}
    for m, name in enumerate(methods):
        progress.check()
        progress.log(f"Calibration: {LABELS[name]}, model {m + 1} of {len(methods)}, {folds} folds out of fold")
        share = OUT_OF_FOLD_SHARE / len(methods)
        try:
            runs[name] = _out_of_fold(name, data, folds, thresholds, seed, progress.scaled(share * m,
                                                                                           share * (m + 1)))
        except LodestarError as exc:
            if method != "best" or isinstance(exc, Cancelled):  # a cancel stops the calibration, not one model
                raise
            log.append(f"{LABELS[name]} was not run: {exc}")
    progress.check()
    if method == "best" and len(runs) >= 2:
        runs[ENSEMBLE] = _ensemble_out_of_fold(runs, data, folds)
    surfaces = {name: _surface(run["oof"], valid) for name, run in runs.items()}
    comparison = [_score(f"{LABELS[name]}, out of fold", "out of fold (spatial blocks)", surfaces[name], grid,
                         deposit_xy, valid, run["seconds"]) for name, run in runs.items()]
    comparison += [_score(label, "no deposit data", surface, grid, deposit_xy, valid, None)
                   for label, surface in (baselines or {}).items()]
    chosen, reason = _choose(runs, data, list(range(folds)))
    why = _why(chosen, reason, runs, comparison, method)
    log.append(why)
    if method == "best" and len(runs) >= 2:
        log.append(_choice_out_of_fold(runs, data, folds, chosen))
    run = runs[chosen]
    rest = 100.0 - OUT_OF_FOLD_SHARE
    progress.set(OUT_OF_FOLD_SHARE)
    everything = np.ones(len(data.counts), dtype=bool)
    if chosen == ENSEMBLE:
        members = []
        for name in (n for n in runs if n != ENSEMBLE):
            progress.check()
            members.append(_full_fit(name, runs[name], data, thresholds, seed)[0])
        model, params = EnsembleModel(data.columns, members, data.x[_reference_rows(data, everything)]), {}
        member_ranks = model.member_ranks(data.x)
        full_scores = np.mean(member_ranks, axis=0)
    else:
        model, params = _full_fit(chosen, run, data, thresholds, seed)
        full_scores = model.predict(data.x)
    progress.set(OUT_OF_FOLD_SHARE + rest / 3)
    table = _rows(model, params, run, data, full_scores, valid, progress.scaled(OUT_OF_FOLD_SHARE + rest / 3,
                                                                               OUT_OF_FOLD_SHARE + 2 * rest / 3))
    independence, uncertainty, label = None, None, ""
    if chosen == ENSEMBLE:
        uncertainty = _masked(np.std(member_ranks, axis=0), valid)
        label = "standard deviation of the ensemble's member models' favourability (0-1 rank scale)"
    elif chosen == "wofe":
        logit, variance, _ = model.evidence(data.x)
        probability, variance = posterior(logit, variance, model.n_deposits)
        independence = conditional_independence(probability, variance, model.conditions(data.x), data.cell_units,
                                                 model.n_deposits)
        independence["pairs"] = model.pairwise(data.x, data.counts)
        log.append(_independence_line(independence))
        log.append(pairwise_line(independence["pairs"]))
        uncertainty = _masked(model.posterior_sd(data.x), valid)
        label = "posterior probability standard deviation (weights and missing data; per unit cell)"
    else:
        spread = np.std([_ranks(m.predict(data.x)) for m in run["models"]], axis=0)
        uncertainty = _masked(spread, valid)
        label = "standard deviation of the fold models' favourability (0-1 rank scale)"
    progress.set(100.0)
    return Calibration(chosen, _surface(full_scores, valid), surfaces[chosen], uncertainty, label, table,
                       comparison, split, log, why, independence,
                       {name: {"auc": r["auc"], "params": r["params"]} for name, r in runs.items()}, model, surfaces)


def _out_of_fold(method: str, data: _Data, folds: int, thresholds, seed: int, progress: Progress) -> dict:
    """Out-of-fold scores of `method`, its fold models, the chosen hyperparameters and the importance samples."""
    start = time.perf_counter()
    oof = np.empty(len(data.counts))
    models, params, held = [], [], []
    for k in range(folds):
        progress.check()
        progress.set(100.0 * k / folds)
        test = data.fold == k
        model, chosen = _tuned(method, data, ~test, thresholds, seed,
                               progress.scaled(100.0 * k / folds, 100.0 * (k + 0.9) / folds))
        oof[test] = model.predict(data.x[test])
        models.append(model)
        params.append(chosen)
        held.append(np.flatnonzero(test))
    auc = _cell_auc(oof, data.counts)
    return {"oof": oof, "models": models, "params": params, "held": held, "auc": auc,
            "seconds": time.perf_counter() - start}


def _ensemble_out_of_fold(runs: dict, data: _Data, folds: int) -> dict:
    """The ensemble of `runs` out of fold: the mean of the members' out-of-fold ranks; per fold, an ensemble of
    the members' fold models ranked against the cells outside that fold (for importance)."""
    start = time.perf_counter()
    members = list(runs.values())
    oof = np.mean([_ranks(run["oof"]) for run in members], axis=0)
    models = [EnsembleModel(data.columns, [run["models"][k] for run in members],
                            data.x[_reference_rows(data, data.fold != k)]) for k in range(folds)]
    return {"oof": oof, "models": models, "params": [{} for _ in range(folds)], "held": members[0]["held"],
            "auc": _cell_auc(oof, data.counts),
            "seconds": time.perf_counter() - start}  # its own: the members' seconds are in their rows


def _reference_rows(data: _Data, use: np.ndarray) -> np.ndarray:
    """A random sample (REFERENCE_CELLS at most) of the rows `use`."""
    rows = np.flatnonzero(use)
    return np.sort(data.rng.choice(rows, min(REFERENCE_CELLS, len(rows)), replace=False))


def _full_fit(method: str, run: dict, data: _Data, thresholds, seed: int):
    """(model fitted on every row, its hyperparameters): the candidate the outer folds' nested searches chose most
    often (ties to the earlier candidate of models.GRIDS), so the full fit needs no search of its own."""
    candidates = [dict(c) for c in GRIDS[method]]
    votes = [candidates.index(p) for p in run["params"] if p in candidates]
    best = candidates[max(range(len(candidates)), key=lambda i: (votes.count(i), -i))] if votes else candidates[0]
    everything = np.ones(len(data.counts), dtype=bool)
    if method == "wofe":
        return fit_model(method, data.columns, data.x, data.counts, None, {}, data.cell_units, thresholds, seed), {}
    index, weight = data.sample(everything)
    return fit_model(method, data.columns, data.x[index], data.counts[index], weight, best, data.cell_units,
                     thresholds, seed), dict(best)


def _tuned(method: str, data: _Data, use: np.ndarray, thresholds, seed: int, progress: Progress = SILENT):
    """(model fitted on the rows `use`, its hyperparameters): the candidate of best mean AUC over the folds
    inside `use`, each left out in turn (nested), when there is more than one candidate (progress and a cancel
    check candidate by candidate)."""
    candidates = GRIDS[method]
    if method == "wofe":
        index = np.flatnonzero(use)
        return fit_model(method, data.columns, data.x[index], data.counts[index], None, {}, data.cell_units,
                         thresholds, seed), {}
    index, weight = data.sample(use)
    best = candidates[0]
    if len(candidates) > 1:
        folds = np.unique(data.fold[index])
        groups = np.searchsorted(folds, data.fold[index]) % INNER_FOLDS
        scores = []
        for c, params in enumerate(candidates):
            progress.check()
            progress.set(100.0 * c / (len(candidates) + 1))
            aucs = []
            for g in np.unique(groups):
                progress.check()
                inner = groups != g
                if not (data.counts[index[inner]] > 0).any() or not (data.counts[index[~inner]] > 0).any():
                    continue
                model = fit_model(method, data.columns, data.x[index[inner]], data.counts[index[inner]],
                                  weight[inner], params, data.cell_units, thresholds, seed)
                aucs.append(weighted_auc(model.predict(data.x[index[~inner]]), data.counts[index[~inner]] > 0,
                                         weight[~inner]))
            scores.append(np.nanmean(aucs) if aucs else -np.inf)
        best = candidates[int(np.argmax(scores))]
        progress.check()
        progress.set(100.0 * len(candidates) / (len(candidates) + 1))
    return fit_model(method, data.columns, data.x[index], data.counts[index], weight, best, data.cell_units,
                     thresholds, seed), dict(best)


def _cell_auc(scores: np.ndarray, counts: np.ndarray) -> float:
    """AUC over the study area's cells, each deposit counted once per deposit (the success-rate AUC)."""
    positive = counts > 0
    weight = np.where(positive, counts, 1.0)
    both = np.concatenate([scores, scores[positive]])
    label = np.concatenate([np.zeros(len(scores), dtype=bool), np.ones(int(positive.sum()), dtype=bool)])
    return weighted_auc(both, label, np.concatenate([np.ones(len(scores)), weight[positive]]))


def _rows(model, params: dict, run: dict, data: _Data, full_scores: np.ndarray, valid: np.ndarray,
          progress: Progress = SILENT) -> list[dict]:
    """The model's rows per layer with its hyperparameters, out-of-fold importance and response curve."""
    rows = model.rows()
    importance = _importance(run, data, progress.scaled(0.0, 50.0))
    sorted_full = np.sort(full_scores)
    sample = data.rng.choice(len(data.x), min(RESPONSE_CELLS, len(data.x)), replace=False)
    for j, row in enumerate(rows):
        progress.check()
        progress.set(50.0 + 50.0 * j / len(rows))
        row["basis"] = f"{BASIS} ({data.counts.sum():g})"
        if data.columns.layers[j].source:
            row["derived_from"] = data.columns.layers[j].source
        row["parameters"] = ", ".join(f"{k} {v:g}" for k, v in params.items()) or None
        row["importance"] = round(float(importance[j]), 4)
        row["lowers_skill"] = bool(importance[j] < 0)
        row["response"] = _response(model, data, j, sample, sorted_full)
    return rows


def _importance(run: dict, data: _Data, progress: Progress = SILENT) -> np.ndarray:
    """Drop in out-of-fold AUC per layer when its values are shuffled among a fold's cells (deposit-weighted)."""
    drops = np.zeros(len(data.columns))
    total = 0.0
    for k, (model, held) in enumerate(zip(run["models"], run["held"])):
        progress.check()
        progress.set(100.0 * k / len(run["models"]))
        positive = held[data.counts[held] > 0]
        background = held[data.counts[held] == 0]
        if not len(positive) or not len(background):
            continue
        if len(background) > IMPORTANCE_CELLS:
            background = data.rng.choice(background, IMPORTANCE_CELLS, replace=False)
        index = np.concatenate([positive, background])
        label = data.counts[index] > 0
        weight = np.where(label, data.counts[index], 1.0)
        base = weighted_auc(model.predict(data.x[index]), label, weight)
        n = float(data.counts[positive].sum())
        for j in range(len(data.columns)):
            shuffled = data.x[index].copy()
            shuffled[:, j] = data.rng.permutation(shuffled[:, j])
            drops[j] += n * (base - weighted_auc(model.predict(shuffled), label, weight))
        total += n
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
    out = []
    for level in levels:
        x = data.x[sample].copy()
        x[:, j] = level
        scores = model.predict(x)  # ranked as the surface ranks them: ties at their mid-rank
        favourability = (np.searchsorted(sorted_full, scores, "left") + np.searchsorted(sorted_full, scores, "right")) \
            / (2.0 * len(sorted_full))
        entry = {"favourability": round(float(favourability.mean()), 4)}
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


def _choose(runs: dict, data: _Data, folds: list, allowed: int | None = None) -> tuple[str, str]:
    """The model "best" takes judged on the cells of `folds`, and why (a clause, "" when there was no choice): the one
    of highest out-of-fold AUC there when it is the ensemble or there is no ensemble; else the ensemble, unless that
    single model beats it within the folds holding deposits, losing in at most `allowed` of them (by default the
    sign test's allowance over those folds, _losses_allowed; judging the rule on fewer folds passes the whole run's)."""
    cells = np.isin(data.fold, folds)
    leader = max(runs, key=lambda name: _cell_auc(runs[name]["oof"][cells], data.counts[cells]))
    if leader == ENSEMBLE or ENSEMBLE not in runs:
        return leader, ""
    counted = _counted(data, folds)
    n = len(counted)
    allowed = _losses_allowed(n) if allowed is None else allowed
    wins = sum(_cell_auc(runs[leader]["oof"][data.fold == k], data.counts[data.fold == k])
               > _cell_auc(runs[ENSEMBLE]["oof"][data.fold == k], data.counts[data.fold == k]) for k in counted)
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
        fair.append(_cell_auc(runs[name]["oof"][held], data.counts[held]))
        chosen_auc.append(_cell_auc(runs[chosen]["oof"][held], data.counts[held]))
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
