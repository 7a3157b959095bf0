"""A layer measured at a place found on another layer: does it stand out from its own surroundings there?

A weak partner anomaly (two or three background spreads) makes no clear zone of its own anywhere in a scene,
yet at a place fixed by another layer it can be tested without a look-elsewhere penalty. The measure is local
and multi-scale: at each pixel, the mean over a disc minus the mean over the ring around it (as wide as the
disc's radius), for discs of half, one and two times the place's radius, so a partner over the place, inside
it or wrapped closely around it shows at one of them, while a smooth regional rise, which lifts disc and ring
alike, does not; a partner expected as a shell around the place (a porphyry's phyllic shell around its potassic
centre) is measured with a disc of four radii too, which takes in a shell reaching well beyond the place. Each
scale's contrast is put in its own robust spreads over the scene and the largest taken; the place's value (the
best within SLACK of its radius from its centre) is then ranked against the same value at every pixel of the
scene away from the place (beyond what its own measure reaches, so the partner's own anomaly is not its own
background): its share of those pixels at or above it is an empirical p-value, whatever the layer's background
looks like.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import ndimage
from scipy.signal import fftconvolve

from .background import robust_spread

SCALES = (0.5, 1.0, 2.0)
"""Disc radii tried, as multiples of the place's radius."""

SHELL_SCALES = SCALES + (4.0,)
"""Disc radii tried for a partner expected to wrap around the place as a shell: over a small centre (a silica
body, a magnetic high, a gossan) the shell's ring of anomalies can reach four of the centre's radii, where
every smaller disc sits in the shell's hole."""

SLACK = 0.5
"""How far from a place's centre (in place radii) its partner's centre may lie: offsets of a few hundred metres
between the zones of one system (faults, zoning, a zone outline's own wobble)."""

MIN_RADIUS_PX = 1.5
MIN_COVER = 0.5
"""A disc or ring with less than this share of valid cells measures nothing there."""


@dataclass(frozen=True)
class Significance:
    score: float  # the place's largest standardised contrast (robust spreads of that contrast over the scene)
    p: float      # share of the scene's pixels scoring at least as high (one added to both counts)
    pixels: int   # pixels the p-value was ranked among


def reach(scales=SCALES) -> float:
    """How far (in place radii) the measure at a place reaches: its widest ring plus the search for its centre."""
    return 2.0 * max(scales) + SLACK


def place_radius_px(place, grid) -> float:
    """Equivalent radius of a polygon in pixels of `grid` (at least MIN_RADIUS_PX)."""
    pixel = max(abs(v) for v in grid.pixel_size)
    return max(math.sqrt(place.area / math.pi) / pixel, MIN_RADIUS_PX)


def quantised(radius_px: float) -> float:
    """A radius rounded to the nearest half power of two, so places of about the same size share one map."""
    return float(2.0 ** (round(2.0 * math.log2(radius_px)) / 2.0))


def _disc(radius: float) -> np.ndarray:
    half = int(math.ceil(radius))
    rows, cols = np.mgrid[-half:half + 1, -half:half + 1]
    return (np.hypot(rows, cols) <= radius).astype("float64")


def contrast_map(z: np.ma.MaskedArray, radius_px: float, scales=SCALES) -> np.ndarray:
    """Per pixel, the largest standardised disc-minus-ring contrast over `scales` times `radius_px`, taken as the
    best within SLACK times `radius_px` of the pixel (NaN where no scale can be measured)."""
    data = np.ma.getdata(z).astype("float64")
    valid = ~np.ma.getmaskarray(z) & np.isfinite(data)
    filled = np.where(valid, data, 0.0)
    weight = valid.astype("float64")
    limit = max(min(z.shape) / 6.0, MIN_RADIUS_PX)
    best = np.full(z.shape, -np.inf)
    sums: dict = {}

    def disc_sums(radius: float):
        if radius not in sums:
            kernel = _disc(radius)
            sums[radius] = (fftconvolve(filled, kernel, mode="same"), fftconvolve(weight, kernel, mode="same"),
                            float(kernel.sum()))
        return sums[radius]

    for factor in scales:
        radius = min(max(factor * radius_px, MIN_RADIUS_PX), limit)
        (inner, n_inner, area_inner), (outer, n_outer, area_outer) = disc_sums(radius), disc_sums(2.0 * radius)
        n_ring = n_outer - n_inner
        ok = valid & (n_inner >= MIN_COVER * area_inner) & (n_ring >= MIN_COVER * (area_outer - area_inner))
        if not ok.any():
            continue
        diff = inner / np.maximum(n_inner, 1e-9) - (outer - inner) / np.maximum(n_ring, 1e-9)
        centre = float(np.median(diff[ok]))
        best = np.where(ok, np.maximum(best, (diff - centre) / robust_spread(diff[ok], centre)), best)
    size = window_side(radius_px)
    best = ndimage.maximum_filter(best, size=size, mode="constant", cval=-np.inf)
    return np.where(valid & np.isfinite(best), best, np.nan)


def significance(scores: np.ndarray, place, grid, radius_px: float, scales=SCALES) -> Significance | None:
    """The place's score (at its centre) in `scores` (a contrast_map at `radius_px` over `scales`) ranked against
    every scored pixel farther than its reach from it, or None when the centre lies off the grid or has no score.
    The place's own window (the pixels sharing its best value) counts as at least as high, so the smallest
    p-value is the window's share of the scene, not one pixel's."""
    point = place.centroid  # a ring-shaped zone's centre lies in its hole: that is the system's centre
    col, row = ~grid.transform * (point.x, point.y)
    if not (0 <= row < scores.shape[0] and 0 <= col < scores.shape[1]):
        return None
    value = float(scores[int(row), int(col)])
    if not np.isfinite(value):
        return None
    rows, cols = np.ogrid[0:scores.shape[0], 0:scores.shape[1]]
    away = (rows + 0.5 - row) ** 2 + (cols + 0.5 - col) ** 2 > (reach(scales) * radius_px) ** 2
    scored = scores[away & np.isfinite(scores)]
    window = window_side(radius_px) ** 2
    above = int((scored >= value).sum())
    return Significance(value, min(1.0, (above + window) / (scored.size + window)), int(scored.size))


def window_side(radius_px: float) -> int:
    """Side in pixels of the square searched for a place's best value."""
    return 2 * int(round(SLACK * radius_px)) + 1
