"""A layer measured at a place found on another layer: does it stand out from its own surroundings there?

A weak partner anomaly (two or three background spreads) makes no clear zone of its own anywhere in a scene, yet at
a place fixed by another layer it can be tested without a look-elsewhere penalty. The measure is local and multi-
scale: at each pixel, the mean over a disc minus the mean over the ring around it (out to `ring_outer` of the disc's
radii), for discs of `contrast_scales` times the place's radius, so a partner over the place, inside it or wrapped
closely around it shows at one of them, while a smooth regional rise, which lifts disc and ring alike, does not; a
partner the deposit model expects as a shell around the place (its item's `shell_scale` in the knowledge base: a
porphyry's phyllic shell around its potassic centre) is measured with a disc of that many radii too. Each scale's
contrast is put in its own robust spreads over the scene and the largest taken; the place's value (the best within
`partner_slack` of its radius from its centre) is then ranked against the same value at every pixel of the scene
away from the place (beyond what its own measure reaches, so the partner's own anomaly is not its own background):
its share of those pixels at or above it is an empirical p-value, whatever the layer's background looks like. Every
number is a field of `OfflineSettings` (settings.py).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import fft, ndimage

from ...plugin.reason.background import robust_spread
from .settings import DEFAULT, OfflineSettings


@dataclass(frozen=True)
class Significance:
    score: float  # the place's largest standardised contrast (robust spreads of that contrast over the scene)
    p: float      # share of the scene's pixels scoring at least as high (one added to both counts)
    pixels: int   # pixels the p-value was ranked among


def reach(scales, settings: OfflineSettings = DEFAULT) -> float:
    """How far (in place radii) the measure at a place reaches: its widest ring plus the search for its centre."""
    return settings.ring_outer * max(scales) + settings.partner_slack


def place_radius_px(place, grid, settings: OfflineSettings = DEFAULT) -> float:
    """Equivalent radius of a polygon in pixels of `grid` (at least `min_radius_px`)."""
    pixel = max(abs(v) for v in grid.pixel_size)
    return max(math.sqrt(place.area / math.pi) / pixel, settings.min_radius_px)


def quantised(radius_px: float) -> float:
    """A radius rounded to the nearest half power of two, so places of about the same size share one map."""
    return float(2 ** (round(2 * math.log2(radius_px)) / 2))


def _disc(radius: float) -> np.ndarray:
    half = int(math.ceil(radius))
    rows, cols = np.mgrid[-half:half + 1, -half:half + 1]
    return (np.hypot(rows, cols) <= radius).astype("float64")


class _DiscSums:
    """Sums of a layer's values and of its valid pixels over discs of any radius up to `largest`, centred on each
    pixel: both transforms of the layer are taken once and each disc costs one transform and two inverses."""

    def __init__(self, filled: np.ndarray, weight: np.ndarray, largest: float):
        side = 2 * int(math.ceil(largest))  # the widest disc's side less one: no sum wraps round, even on a tiny layer
        self.shape = filled.shape
        self.padded = tuple(fft.next_fast_len(n + side, real=True) for n in filled.shape)
        self.spectra = (fft.rfft2(filled, self.padded), fft.rfft2(weight, self.padded))
        self.done: dict = {}

    def __call__(self, radius: float) -> tuple:
        """(sum of values, count of valid pixels, disc area) at every pixel for a disc of `radius` pixels."""
        if radius not in self.done:
            kernel = _disc(radius)
            spectrum = fft.rfft2(kernel, self.padded)
            half = kernel.shape[0] // 2
            rows, cols = slice(half, half + self.shape[0]), slice(half, half + self.shape[1])
            self.done[radius] = tuple(fft.irfft2(layer * spectrum, self.padded)[rows, cols]
                                      for layer in self.spectra) + (float(kernel.sum()),)
        return self.done[radius]


def contrast_map(z: np.ma.MaskedArray, radius_px: float, scales=None,
                 settings: OfflineSettings = DEFAULT) -> np.ndarray:
    """Per pixel, the largest standardised disc-minus-ring contrast over `scales` (else `contrast_scales`) times
    `radius_px`, taken as the best within `partner_slack` times `radius_px` of the pixel (NaN where no scale can
    be measured)."""
    scales = settings.contrast_scales if scales is None else scales
    min_radius, cover = settings.min_radius_px, settings.min_cover
    data = np.ma.getdata(z).astype("float64")
    valid = ~np.ma.getmaskarray(z) & np.isfinite(data)
    filled = np.where(valid, data, 0.0)
    weight = valid.astype("float64")
    limit = max(min(z.shape) / settings.max_radius_parts, min_radius)
    radii = [min(max(factor * radius_px, min_radius), limit) for factor in scales]
    best = np.full(z.shape, -np.inf)
    disc_sums = _DiscSums(filled, weight, max(settings.ring_outer, 1.0) * max(radii, default=0.0))
    for radius in radii:
        (inner, n_inner, area_inner) = disc_sums(radius)
        (outer, n_outer, area_outer) = disc_sums(settings.ring_outer * radius)
        n_ring = n_outer - n_inner
        ok = valid & (n_inner >= cover * area_inner) & (n_ring >= cover * (area_outer - area_inner))
        if not ok.any():
            continue
        diff = inner / np.maximum(n_inner, 1e-9) - (outer - inner) / np.maximum(n_ring, 1e-9)
        centre = float(np.median(diff[ok]))
        best = np.where(ok, np.maximum(best, (diff - centre) / robust_spread(diff[ok], centre)), best)
    size = window_side(radius_px, settings)
    best = ndimage.maximum_filter(best, size=size, mode="constant", cval=-np.inf)
    return np.where(valid & np.isfinite(best), best, np.nan)


def significance(scores: np.ndarray, place, grid, radius_px: float, scales=None,
                 settings: OfflineSettings = DEFAULT) -> Significance | None:
    """The place's score (at its centre) in `scores` (a contrast_map at `radius_px` over `scales`) ranked against
    every scored pixel farther than its reach from it, or None when the centre lies off the grid or has no score.
    The place's own window (the pixels sharing its best value) counts as at least as high, so the smallest
    p-value is the window's share of the scene, not one pixel's."""
    scales = settings.contrast_scales if scales is None else scales
    point = place.centroid  # a ring-shaped zone's centre lies in its hole: that is the system's centre
    col, row = ~grid.transform * (point.x, point.y)
    if not (0 <= row < scores.shape[0] and 0 <= col < scores.shape[1]):
        return None
    value = float(scores[int(row), int(col)])
    if not np.isfinite(value):
        return None
    rows, cols = np.ogrid[0:scores.shape[0], 0:scores.shape[1]]
    away = (rows + 0.5 - row) ** 2 + (cols + 0.5 - col) ** 2 > (reach(scales, settings) * radius_px) ** 2
    scored = scores[away & np.isfinite(scores)]
    window = window_side(radius_px, settings) ** 2
    above = int((scored >= value).sum())
    return Significance(value, min(1.0, (above + window) / (scored.size + window)), int(scored.size))


def window_side(radius_px: float, settings: OfflineSettings = DEFAULT) -> int:
    """Side in pixels of the square searched for a place's best value."""
    return 2 * int(round(settings.partner_slack * radius_px)) + 1
