"""Where two or more layers stand out together: a scan of their contrast maps for one shared place.

A zoned system whose every layer stays under a clear-anomaly level (two to four background spreads) makes no
zone anywhere, yet at its centre each layer stands above its own surroundings at once. The scan ranks every
pixel of each layer's contrast map (coincidence.py) by the share of the scene scoring at least as
high, takes the largest share of the group's layers at each pixel (all must be rare there) and keeps the pixel
where it is smallest. How rare that is by chance: with layers independent, a place reaches a share q on each of
k layers with chance q to the power k; the scene holds about its pixels over one place's window of independent
places, and every group of layers and radius tried is one more chance. Their product is the expected count of
such places by chance, which the caller bounds (layers that share a background are not independent, so the
bound is strict). A third layer matters most in a small scene: it holds only a few windows of a place's size, so
two layers at the top of their ranks still leave a chance count of about the tests over the places, while three
bring it down by the places once more. Only places at least twice their radius inside the data are scanned,
where the disc and ring at the place's own radius lie wholly on data: near an edge fewer cells are averaged, the
layers swing further there, and they would meet by chance more often (the wider scales may still reach past the
edge). And only places where every layer stands at least a floor of spreads above its surroundings are
candidates: a contrast within the scene's ordinary variation is no evidence whatever its rank, and in a small
scene a rank can claim a rarity that so few independent places cannot show.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from ...plugin.progress import SILENT, Progress
from .coincidence import window_side
from .settings import DEFAULT, OfflineSettings


@dataclass(frozen=True)
class JointPlace:
    x: float           # map coordinates of the place's centre
    y: float
    radius_px: float   # the place's radius in analysis-grid pixels (the contrast maps' radius)
    layers: tuple      # (core layer, partner layer, ...): the group's layers, in the order given
    scores: tuple      # each layer's standardised contrast there
    share: float       # the largest of the layers' shares of the scene scoring at least as high
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
        expected = share ** len(layers) * max(places, 1.0) * tests
        if best is None or expected < best.expected:
            x, y = grid.transform * (col + 0.5, row + 0.5)
            best = JointPlace(float(x), float(y), float(radius), tuple(layers),
                              tuple(float(maps[(name, radius)][row, col]) for name in layers), share, expected)
    return best
