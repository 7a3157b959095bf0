"""Where two or more layers stand out together: a scan of their contrast maps for one shared place.

A zoned system whose every layer stays under a clear-anomaly level (two to four background spreads) makes no
zone anywhere, yet at its centre each layer stands above its own surroundings at once. The scan ranks every
pixel of each layer's contrast map (coincidence.py) by the share of the scene scoring at least as
high, takes the largest share of the group's layers at each pixel (all must be rare there) and keeps the pixel
where it is smallest. How rare that is by chance (`chance`): layers that share a background (a regional trend,
the same rocks, the same survey) are not independent, so the chance that a place reaches a share q on each of k
layers at once is not q to the power k. The layers' dependence is measured on their contrast maps away from the
place (the rank correlation of each pair, through a Gaussian copula; a negative one counts as none, so the chance
is never taken smaller than under independence), and the chance is the joint tail of that copula. The scene holds
about its pixels over one place's window of independent places, and every group of layers and radius tried is
one more chance: their product is the expected count of such places by chance, which the caller holds to its
significance level, as it holds one layer measured at one place. Only places at least twice their radius inside
the data are scanned, where the disc and ring at the place's own radius lie wholly on data: near an edge fewer
cells are averaged, the layers swing further there, and they would meet by chance more often (the wider scales
may still reach past the edge). And only places where every layer stands at least a floor of spreads above its
surroundings are candidates: a contrast within the scene's ordinary variation is no evidence whatever its rank,
and in a small scene a rank can claim a rarity that so few independent places cannot show.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy import ndimage
from scipy.integrate import quad
from scipy.stats import multivariate_normal, norm

from ...plugin.progress import SILENT, Progress
from .coincidence import reach, window_side
from .settings import DEFAULT, OfflineSettings


@dataclass(frozen=True)
class JointPlace:
    x: float           # map coordinates of the place's centre
    y: float
    radius_px: float   # the place's radius in analysis-grid pixels (the contrast maps' radius)
    layers: tuple      # (core layer, partner layer, ...): the group's layers, in the order given
    scores: tuple      # each layer's standardised contrast there
    share: float       # the largest of the layers' shares of the scene scoring at least as high
    correlation: tuple  # each pair's rank correlation away from the place, in the order of `combinations(layers, 2)`
    expected: float    # expected count of places as rare on every layer of the group by chance in all the tests made


def shares(scores: np.ndarray) -> np.ndarray:
    """Per pixel, the share of the scene's scored pixels scoring at least as high (NaN where unscored)."""
    out = np.full(scores.shape, np.nan)
    valid = np.isfinite(scores)
    ranked = np.sort(scores[valid])
    if ranked.size:
        out[valid] = 1.0 - np.searchsorted(ranked, scores[valid], side="left") / ranked.size
    return out


def interior(scores: np.ndarray, radius_px: float, settings: OfflineSettings = DEFAULT) -> np.ndarray:
    """`scores` where the pixel lies at least its ring's reach (`ring_outer` times `radius_px`) from the edge of the
    scored area, else NaN."""
    scored = np.pad(np.isfinite(scores), 1, constant_values=False)
    inside = ndimage.distance_transform_edt(scored)[1:-1, 1:-1] >= settings.ring_outer * radius_px
    return np.where(inside, scores, np.nan)


def best_joint_place(maps: dict, groups: list, grid, floor: float = 0.0, progress: Progress = SILENT,
                     settings: OfflineSettings = DEFAULT) -> JointPlace | None:
    """The rarest place on every layer of a group, over `groups` of (layer, layer, ..., radius in pixels), among
    the pixels where every layer's contrast reaches `floor` standardised spreads; `maps` holds each (layer, radius)
    contrast map. None when no group has such a pixel scored on all its layers. Cancel is checked per group."""
    tests = len(groups)
    cache: dict = {}
    best = None
    for *layers, radius in groups:
        progress.check()
        for name in layers:
            if (name, radius) not in cache:
                cache[(name, radius)] = shares(interior(maps[(name, radius)], radius, settings))
        rarest = np.max([cache[(name, radius)] for name in layers], axis=0)  # NaN where any is unscored
        places = int(np.isfinite(rarest).sum()) / window_side(radius, settings) ** 2
        rarest[~(np.min([maps[(name, radius)] for name in layers], axis=0) >= floor)] = np.nan
        if not np.isfinite(rarest).any():
            continue
        row, col = np.unravel_index(int(np.nanargmin(rarest)), rarest.shape)
        share = float(rarest[row, col])
        if best is not None and share ** len(layers) * max(places, 1.0) * tests >= best.expected:
            continue  # dependence only makes it commoner: it cannot beat the best
        away = _away(rarest.shape, row, col, reach(settings.contrast_scales, settings) * radius)
        maps_of_group = [cache[(name, radius)] for name in layers]
        scored = np.logical_and.reduce([np.isfinite(m) for m in maps_of_group])
        if int((away & scored).sum()) < window_side(radius, settings) ** 2:
            away = scored  # no place beside it to measure on: the whole scene, the place in it (which only adds)
        correlation = _correlation(maps_of_group, away)
        expected = chance(share, correlation, len(layers)) * max(places, 1.0) * tests
        if best is None or expected < best.expected:
            x, y = grid.transform * (col + 0.5, row + 0.5)
            best = JointPlace(float(x), float(y), float(radius), tuple(layers),
                              tuple(float(maps[(name, radius)][row, col]) for name in layers), share,
                              tuple(round(float(r), 3) for r in correlation), expected)
    return best


def chance(share: float, correlation, count: int) -> float:
    """The chance that one place scores within the top `share` of the scene on each of `count` layers at once, their
    contrasts dependent as a Gaussian copula with the pairwise `correlation` (in the order of
    `combinations(range(count), 2)`; negative ones taken as 0, so never under the independent `share ** count`)."""
    matrix = np.eye(count)
    for (i, j), r in zip(combinations(range(count), 2), correlation):
        matrix[i, j] = matrix[j, i] = max(float(r), 0.0)
    if not np.any(matrix - np.eye(count)):
        return share ** count
    return max(_upper_orthant(np.full(count, norm.isf(share)), matrix), share ** count)


def _upper_orthant(levels: np.ndarray, matrix: np.ndarray) -> float:
    """P(Z_i > levels_i for all i), Z standard normal with correlation `matrix` (positive semi-definite, entries at
    least 0): exact for two (the bivariate normal), for more by integrating over the first given its value
    (deterministic, unlike a sampled multivariate integral)."""
    if len(levels) == 2:
        return float(multivariate_normal.cdf(-levels, mean=np.zeros(2), cov=matrix, allow_singular=True))
    top = np.nextafter(1.0, 0.0)  # a perfect correlation, as nearly as the conditional spread can be computed
    weights = np.minimum(matrix[0, 1:], top)
    spread = np.sqrt(1.0 - weights ** 2)
    rest = (matrix[1:, 1:] - np.outer(weights, weights)) / np.outer(spread, spread)
    np.fill_diagonal(rest, 1.0)
    rest = np.clip(rest, 0.0, 1.0)  # a conditional correlation under 0 would only lower the chance: not credited

    def given(x: float) -> float:
        return float(norm.pdf(x)) * _upper_orthant((levels[1:] - weights * x) / spread, rest)

    return float(quad(given, levels[0], np.inf, epsabs=0.0, epsrel=1e-6, limit=200)[0])


def _away(shape: tuple, row: int | np.integer, col: int | np.integer, distance: float) -> np.ndarray:
    """Pixels farther than `distance` from pixel (row, col)."""
    rows, cols = np.ogrid[0:shape[0], 0:shape[1]]
    return (rows - row) ** 2 + (cols - col) ** 2 > distance ** 2


def _correlation(share_maps: list, where: np.ndarray) -> list[float]:
    """Each pair's correlation of normal scores of the shares (a rank correlation through a Gaussian copula) over
    the pixels of `where` scored on every layer; 0 for a pair with too few such pixels or no spread."""
    scored = where & np.logical_and.reduce([np.isfinite(m) for m in share_maps])
    count = int(scored.sum())
    if count < 3:
        return [0.0] * (len(share_maps) * (len(share_maps) - 1) // 2)
    scores = [norm.isf(np.clip(m[scored], 0.5 / count, 1.0 - 0.5 / count)) for m in share_maps]
    out = []
    for a, b in combinations(scores, 2):
        r = float(np.corrcoef(a, b)[0, 1]) if a.std() > 0 and b.std() > 0 else 0.0
        out.append(r if np.isfinite(r) else 0.0)
    return out
