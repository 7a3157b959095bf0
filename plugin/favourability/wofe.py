"""Weights of evidence (Bonham-Carter 1994, ch. 9) on the cells of a study area.

Areas are counted in *unit cells* (UNIT_AREA, 1 km2 as in ArcSDM): a grid cell counts `cell_units` =
pixel_area / UNIT_AREA unit cells and each deposit occupies one unit cell. With T the study
area, D the deposits and B a binary pattern (N = number of unit cells, N(B.D) = deposits in B):

    W+ = ln[(N(B.D) / N(D)) / (N(B.~D) / N(~D))]      s2(W+) = 1 / N(B.D)  + 1 / N(B.~D)
    W- = ln[(N(~B.D) / N(D)) / (N(~B.~D) / N(~D))]    s2(W-) = 1 / N(~B.D) + 1 / N(~B.~D)
    C = W+ - W-,  s(C) = sqrt(s2(W+) + s2(W-)),  studentised contrast = C / s(C)

where N(B.~D) = N(B) - N(B.D) and N(~D) = N(T) - N(D). A weight is *undefined* when one of its counts is
not positive (no deposit in the pattern, or a pattern no larger than its deposits); it is then computed
with 0.5 for that count (a Haldane-style correction) and flagged `defined=False`.

Multi-class evidence gives each class the W+ of "this class against the rest". A continuous map is
generalised into a binary pattern as ArcSDM does: ordered classes, cumulative from the favourable end
(descending: value >= t, ascending: value <= t), the threshold of maximum studentised contrast among the
*usable* patterns: deposits inside and barren area on both sides (a pattern holding every deposit is
usable, its W- taken with 0.5 deposits outside). The posterior logit is the prior logit
ln(N(D) / N(~D)) plus each layer's weight; its variance (the weights' part, Bonham-Carter 1994 p. 320)
is P^2 (1/N(D) + sum of the weights' variances).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2

from ..decisions import CORE

# decision numbers: their reasons and provenance are in plugin/decisions.py
UNIT_AREA = CORE.unit_area
MAX_CLASSES = CORE.max_classes
CI_RATIO_FLAG = CORE.ci_ratio_flag
PAIRWISE_LEVEL = CORE.pairwise_level
SMALL_EXPECTED = CORE.small_expected
EMPTY_COUNT = CORE.empty_count


@dataclass(frozen=True)
class Weights:
    """Weights of one or more patterns (arrays of equal length; areas in unit cells)."""

    area: np.ndarray
    deposits: np.ndarray
    w_plus: np.ndarray
    s_w_plus: np.ndarray
    w_minus: np.ndarray
    s_w_minus: np.ndarray
    contrast: np.ndarray
    s_contrast: np.ndarray
    studentised: np.ndarray
    defined: np.ndarray
    usable: np.ndarray


def weights(area_b, deposits_b, area_total: float, deposits_total: float) -> Weights:
    """W+, W-, contrast and their standard deviations of patterns B (areas in unit cells)."""
    area_b = np.atleast_1d(np.asarray(area_b, dtype=float))
    deposits_b = np.atleast_1d(np.asarray(deposits_b, dtype=float))
    barren_total = area_total - deposits_total
    counts = [deposits_b, area_b - deposits_b, deposits_total - deposits_b,
              (area_total - area_b) - (deposits_total - deposits_b)]
    totals = (barren_total > 0) & (deposits_total > 0)
    defined = np.all([c > 0 for c in counts], axis=0) & totals
    usable = (counts[0] > 0) & (counts[1] > 0) & (counts[3] > 0) & totals
    bd, b_nd, nb_d, nb_nd = (np.where(c > 0, c, EMPTY_COUNT) for c in counts)
    d_total, nd_total = max(deposits_total, EMPTY_COUNT), max(barren_total, EMPTY_COUNT)
    w_plus = np.log((bd / d_total) / (b_nd / nd_total))
    w_minus = np.log((nb_d / d_total) / (nb_nd / nd_total))
    s_w_plus = np.sqrt(1 / bd + 1 / b_nd)
    s_w_minus = np.sqrt(1 / nb_d + 1 / nb_nd)
    contrast = w_plus - w_minus
    s_contrast = np.hypot(s_w_plus, s_w_minus)
    return Weights(area_b, deposits_b, w_plus, s_w_plus, w_minus, s_w_minus, contrast, s_contrast,
                   contrast / s_contrast, defined, usable)


def class_weights(area_per_class, deposits_per_class) -> Weights:
    """Multi-class evidence: each class's weights against the rest of the study area."""
    area = np.asarray(area_per_class, dtype=float)
    deposits = np.asarray(deposits_per_class, dtype=float)
    return weights(area, deposits, float(area.sum()), float(deposits.sum()))


def cumulative_weights(area_per_class, deposits_per_class, ascending: bool = False) -> Weights:
    """Ordered classes (lowest first): pattern k holds classes >= k (descending) or <= k (ascending)."""
    area = np.asarray(area_per_class, dtype=float)
    deposits = np.asarray(deposits_per_class, dtype=float)
    if ascending:
        area_b, deposits_b = np.cumsum(area), np.cumsum(deposits)
    else:
        area_b, deposits_b = np.cumsum(area[::-1])[::-1], np.cumsum(deposits[::-1])[::-1]
    return weights(area_b, deposits_b, float(area.sum()), float(deposits.sum()))


def best_pattern(table: Weights) -> int | None:
    """Index of the usable pattern of maximum studentised contrast (None when none is usable)."""
    if not table.usable.any():
        return None
    return int(np.argmax(np.where(table.usable, table.studentised, -np.inf)))


def class_breaks(values: np.ndarray, max_classes: int = MAX_CLASSES) -> np.ndarray:
    """Lower bounds of ordered classes: the distinct values, or `max_classes` quantiles when there are more; of
    whole-number values (a class map) those quantiles are values the map holds, so every break is a whole class."""
    distinct = np.unique(values)
    if len(distinct) <= max_classes:
        return distinct
    levels = np.linspace(0, 1, max_classes, endpoint=False)
    if np.all(np.mod(distinct, 1) == 0):
        return np.unique(np.sort(values)[(levels * len(values)).astype(int)])
    return np.unique(np.quantile(values, levels))


def classify(values: np.ndarray, breaks: np.ndarray) -> np.ndarray:
    """Ordered class index of each value (0 for values below the first break)."""
    return np.maximum(np.searchsorted(breaks, values, side="right") - 1, 0)


@dataclass(frozen=True)
class Generalisation:
    """A continuous map cut into a binary pattern at the threshold of maximum studentised contrast:
    values >= threshold (descending) or values < threshold (ascending)."""

    threshold: float
    ascending: bool
    table: Weights
    best: int

    def contains(self, values: np.ndarray) -> np.ndarray:
        """Whether values fall in the pattern."""
        return values < self.threshold if self.ascending else values >= self.threshold


def generalise(values: np.ndarray, deposits: np.ndarray, cell_units: float, ascending: bool = False,
               max_classes: int = MAX_CLASSES, threshold: float | None = None,
               breaks: np.ndarray | None = None) -> Generalisation | None:
    """Binary generalisation of a map over the study-area cells (`values` and `deposits` per cell, each cell
    `cell_units` unit cells); None when no cumulative pattern is usable. A `threshold` set by the user (in the
    map's units) takes the pattern whose edge lies nearest it instead of the maximum studentised contrast.
    `breaks`: the values' `class_breaks` when already worked out (both directions of one map share them)."""
    breaks = class_breaks(values, max_classes) if breaks is None else breaks
    classes = classify(values, breaks)
    area = np.bincount(classes, minlength=len(breaks)) * cell_units
    found = np.bincount(classes, weights=deposits, minlength=len(breaks))
    table = cumulative_weights(area, found, ascending)
    if threshold is not None:
        edges = np.append(breaks, np.inf)[1:] if ascending else breaks
        nearest = int(np.argmin(np.abs(edges - float(threshold))))
        return Generalisation(float(edges[nearest]), ascending, table, nearest)
    best = best_pattern(table)
    if best is None:
        return None
    threshold = np.append(breaks, np.inf)[best + 1] if ascending else breaks[best]
    return Generalisation(float(threshold), ascending, table, best)


# decision numbers: their reasons and provenance are in plugin/decisions.py
MIN_CLASS_DEPOSITS = CORE.min_class_deposits
OTHER = -1


@dataclass(frozen=True)
class CategoricalWeights:
    """Weights of a categorical map: `codes` (the classes kept on their own, then OTHER for the merged rest)
    with each class's W+ and s(W+) against the rest of the study area; `merged` lists the codes merged. When
    nothing was merged, OTHER (then only units unseen in the fit) weighs 0, as missing data does."""

    codes: np.ndarray
    table: Weights
    merged: tuple

    def class_index(self, values: np.ndarray) -> np.ndarray:
        """Row of `table` for each value (the 'other' row for merged or unseen codes)."""
        kept = self.codes[:-1]
        if not len(kept):
            return np.zeros(len(values), dtype=int)
        order = np.argsort(kept)
        where = np.searchsorted(kept[order], values)
        where = np.clip(where, 0, max(len(kept) - 1, 0))
        hit = (kept[order][where] == values) if len(kept) else np.zeros(len(values), dtype=bool)
        return np.where(hit, order[where], len(kept))


def categorical_generalise(codes: np.ndarray, deposits: np.ndarray, cell_units: float,
                           min_deposits: int = MIN_CLASS_DEPOSITS) -> CategoricalWeights:
    """Categorical weights of evidence over the study-area cells (`codes` and `deposits` per cell): classes with
    fewer than `min_deposits` deposits are merged into 'other', then every class weighs against the rest."""
    distinct, inverse = np.unique(codes, return_inverse=True)
    found = np.bincount(inverse, weights=deposits, minlength=len(distinct))
    area = np.bincount(inverse, minlength=len(distinct)) * cell_units
    keep = found >= min_deposits
    kept_area = np.append(area[keep], area[~keep].sum())
    kept_found = np.append(found[keep], found[~keep].sum())
    table = class_weights(kept_area, kept_found)
    if kept_area[-1] <= 0:
        # No unit was merged: 'other' only receives units unseen here (e.g. in a held-out fold), which carry no
        # evidence. Its 0.5-corrected weight would be ln(N(~D) / N(D)), the strongest of the map: it weighs 0.
        for values in (table.w_plus, table.s_w_plus, table.w_minus, table.s_w_minus, table.contrast,
                       table.s_contrast, table.studentised):
            values[-1] = 0.0
    return CategoricalWeights(np.append(distinct[keep], OTHER), table, tuple(float(c) for c in distinct[~keep]))


def prior_logit(area_total: float, deposits_total: float) -> float:
    """ln of the prior odds N(D) / N(~D) of a deposit in a unit cell."""
    return math.log(max(deposits_total, EMPTY_COUNT) / max(area_total - deposits_total, EMPTY_COUNT))


def posterior(logit: np.ndarray, weight_variance: np.ndarray | float,
              deposits_total: float) -> tuple[np.ndarray, np.ndarray]:
    """(probability per unit cell, its variance due to the weights) from the posterior logit and the sum of
    the weights' variances of each cell."""
    probability = 1.0 / (1.0 + np.exp(-np.asarray(logit, dtype=float)))
    variance = probability ** 2 * (1.0 / max(deposits_total, EMPTY_COUNT) + np.asarray(weight_variance))
    return probability, variance


def conditional_independence(probability: np.ndarray, variance: np.ndarray, conditions: np.ndarray,
                             cell_units: float, deposits_total: float) -> dict:
    """The overall conditional-independence test over the study-area cells.

    T = predicted deposits = sum of P x area over unique conditions (cells of one evidence combination);
    ratio = N(D) / T (Bonham-Carter: below ~0.85 the layers are not conditionally independent); the
    Agterberg-Cheng (2002) statistic z = (T - N(D)) / s(T), s2(T) = sum over unique conditions of
    (area x s(P))^2, with the one-sided probability that T exceeds N(D) this much by chance.
    """
    codes, inverse = np.unique(conditions, return_inverse=True)
    cells = np.bincount(inverse, minlength=len(codes))
    area = cells * cell_units
    p = np.bincount(inverse, weights=probability, minlength=len(codes)) / cells
    var = np.bincount(inverse, weights=variance, minlength=len(codes)) / cells
    predicted = float(np.sum(area * p))
    sd = float(math.sqrt(np.sum((area ** 2) * var)))
    z = (predicted - deposits_total) / sd if sd > 0 else 0.0
    ratio = deposits_total / predicted if predicted > 0 else float("nan")
    return {"observed": float(deposits_total), "predicted": predicted, "ratio": ratio, "sd_predicted": sd,
            "z": z, "p_chance": 0.5 * math.erfc(z / math.sqrt(2)), "doubtful": bool(ratio < CI_RATIO_FLAG)}


def pairwise_independence(states: list, deposits: np.ndarray, names: list) -> list[dict]:
    """The pairwise conditional-independence test (Bonham-Carter 1994, pp. 313-317) over the deposit cells: for each
    pair of layers, the deposits counted by the two layers' generalised classes (a contingency table; `states`: one
    array per layer of each deposit cell's class, -1 where the layer has no data; `deposits`: the deposits of each
    cell) against the counts expected were the layers independent given a deposit (row total x column total / all),
    Pearson's chi-square with (rows - 1) x (columns - 1) degrees of freedom over the classes holding deposits, its
    probability of chance and the smallest expected count. A pair with fewer than two classes on a side holding
    deposits cannot be tested (df 0). `dependent`: rejected at PAIRWISE_LEVEL by Holm's step-down over the pairs
    tested (several pairs are tested at once: at 0.05 each, one in twenty independent pairs would be flagged)."""
    out: list[dict] = []
    for a in range(len(states)):
        for b in range(a + 1, len(states)):
            both = (states[a] >= 0) & (states[b] >= 0)
            rows, r = np.unique(states[a][both], return_inverse=True)
            cols, c = np.unique(states[b][both], return_inverse=True)
            table = np.zeros((len(rows), len(cols)))
            np.add.at(table, (r, c), deposits[both])
            table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
            df = max(table.shape[0] - 1, 0) * max(table.shape[1] - 1, 0)
            row = {"layers": (names[a], names[b]), "deposits": float(table.sum()), "df": int(df), "dependent": False}
            if df < 1:
                out.append(dict(row, chi_square=None, p_chance=None, min_expected=None))
                continue
            expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / table.sum()
            statistic = float(((table - expected) ** 2 / expected).sum())
            out.append(dict(row, chi_square=statistic, p_chance=float(chi2.sf(statistic, df)),
                            min_expected=float(expected.min())))
    tested = sorted((pair for pair in out if pair["df"] >= 1), key=lambda pair: pair["p_chance"])
    for rank, pair in enumerate(tested):  # Holm: the k-th smallest p against the level / (pairs left), until one fails
        if pair["p_chance"] > PAIRWISE_LEVEL / (len(tested) - rank):
            break
        pair["dependent"] = True
    return out


def pairwise_line(pairs: list) -> str:
    """The pairwise test in one sentence: the pairs flagged dependent, or that none was, and the smallest p."""
    tested = [p for p in pairs if p["df"] >= 1]
    if not tested:
        return "Pairwise conditional independence: no pair of layers has deposits in two classes of each; not tested."
    flagged = [p for p in tested if p["dependent"]]
    rough = sum(p["min_expected"] < SMALL_EXPECTED for p in tested)
    head = (f"Pairwise conditional independence (chi-square of the deposits' classes, {len(tested)} pair(s) tested"
            + (f", {rough} with an expected count under {SMALL_EXPECTED:g}, so only roughly" if rough else "")
            + f"; Holm's correction at {PAIRWISE_LEVEL:g}): ")
    if not flagged:
        low = min(tested, key=lambda p: p["p_chance"])
        return head + (f"no pair dependent (the lowest, {low['layers'][0]} and {low['layers'][1]}: chi-square "
                       f"{low['chi_square']:.2f}, {low['df']} df, p {low['p_chance']:.3f}).")
    listed = "; ".join(f"{p['layers'][0]} and {p['layers'][1]} (chi-square {p['chi_square']:.2f}, {p['df']} df, "
                       f"p {p['p_chance']:.3f})" for p in sorted(flagged, key=lambda p: p["p_chance"]))
    return head + f"dependent: {listed}: their weights count shared evidence."
