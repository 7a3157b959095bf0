"""Pixels of a map image to legend units: the nearest swatch colour in CIELAB, within a tolerance.

Drawn ink (fault lines, contacts, lettering) is found as what stands darker than its surroundings (a black top-hat
on lightness: thin dark strokes, not the contact between a pale and a dark unit), grown by a pixel for its
anti-aliased fringe, and left as nodata, as are the legend box and the paper (pixels nearer the legend's background
than any unit). The image is median-filtered first (scan noise, JPEG blocks), and the units a 3 x 3 majority vote
(masked pixels do not vote), so lone pixels of a wrong colour do not become specks of another unit.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from ..decisions import CORE

# decision numbers: their reasons and provenance are in plugin/decisions.py
INK_CONTRAST_L = CORE.ink_contrast_l
INK_SIZE_PX = CORE.ink_size_px
PAPER_SEPARATION_DE = CORE.paper_separation_de
HALO_PX = 3
"""Rows a block reads beyond its edges, so filters see across block edges as on the whole image."""

_WHITE = np.array([0.95047, 1.0, 1.08883])


def rgb_to_lab(rgb) -> np.ndarray:
    """CIELAB (D65) of sRGB values in 0-255, colour on the last axis."""
    rgb = np.asarray(rgb, dtype=np.float32) / 255.0
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    matrix = np.array([[0.4124564, 0.3575761, 0.1804375],
                       [0.2126729, 0.7151522, 0.0721750],
                       [0.0193339, 0.1191920, 0.9503041]], dtype=np.float32)
    xyz = linear @ matrix.T / _WHITE.astype(np.float32)
    cube = np.where(xyz > 216 / 24389, np.cbrt(xyz), (24389 / 27 * xyz + 16) / 116)
    lab = np.stack([116 * cube[..., 1] - 16, 500 * (cube[..., 0] - cube[..., 1]),
                    200 * (cube[..., 1] - cube[..., 2])], axis=-1)
    return lab.astype(np.float32)


def delta_e(first, second) -> np.ndarray:
    """CIE76 colour difference of CIELAB colours (broadcast on the last axis)."""
    return np.sqrt(((np.asarray(first, dtype=np.float32) - np.asarray(second, dtype=np.float32)) ** 2).sum(axis=-1))


@dataclass
class BlockCounts:
    """Pixels of one classification: per unit code, and how many were masked as ink, paper, too far from every unit
    colour, or given as masked (`outside`: the legend box, the image's own nodata)."""

    units: dict
    ink: int = 0
    paper: int = 0
    unmatched: int = 0
    outside: int = 0

    def add(self, other: BlockCounts) -> None:
        for code, count in other.units.items():
            self.units[code] = self.units.get(code, 0) + count
        self.ink += other.ink
        self.paper += other.paper
        self.unmatched += other.unmatched
        self.outside += other.outside


def ink_mask(lab: np.ndarray) -> np.ndarray:
    """Thin dark strokes (lines, lettering) and their 1-pixel fringe, from a (rows, cols, 3) CIELAB image."""
    lightness = lab[..., 0]
    closed = ndimage.grey_closing(lightness, size=(INK_SIZE_PX, INK_SIZE_PX))
    return ndimage.binary_dilation(closed - lightness > INK_CONTRAST_L, iterations=1)


def classify_block(rgb: np.ndarray, unit_lab: np.ndarray, paper_lab, tolerance: float, outside: np.ndarray,
                   rows: slice = slice(None)) -> tuple[np.ndarray, BlockCounts]:
    """Unit codes (1..n for `unit_lab`'s rows, 0 masked) of a (3, rows, cols) uint8 block, and its counts, both of
    the block's `rows` (the others are its halo: read for the filters only).

    `paper_lab`: the legend background's colour (None: no paper class); `outside`: pixels masked beforehand (the
    legend box, nodata)."""
    ink = ink_mask(rgb_to_lab(np.moveaxis(rgb, 0, -1)))  # before the median, which would erase 1-pixel lines
    lab = rgb_to_lab(np.stack([ndimage.median_filter(band, size=3) for band in rgb], axis=-1))
    distances = np.stack([delta_e(lab, colour) for colour in unit_lab], axis=0)
    nearest = distances.argmin(axis=0)
    best = np.take_along_axis(distances, nearest[np.newaxis], axis=0)[0]
    paper = np.zeros(best.shape, dtype=bool) if paper_lab is None else delta_e(lab, paper_lab) < best
    unmatched = best > tolerance
    codes = np.where(ink | paper | unmatched | outside, 0, nearest + 1).astype(np.int32)
    codes = majority(codes, len(unit_lab))[rows]
    rest = ~outside[rows]
    ink, paper, unmatched = ink[rows] & rest, paper[rows] & rest, unmatched[rows] & rest
    counts = BlockCounts(units={int(c): int(n) for c, n in zip(*np.unique(codes[codes > 0], return_counts=True))},
                         ink=int(ink.sum()), paper=int((paper & ~ink).sum()),
                         unmatched=int((unmatched & ~paper & ~ink).sum()), outside=int((~rest).sum()))
    return codes, counts


def majority(codes: np.ndarray, count: int) -> np.ndarray:
    """Each unmasked pixel takes the code most frequent among the unmasked pixels of its 3 x 3 neighbourhood (its
    own code on a tie)."""
    best = np.zeros(codes.shape, dtype=np.float32)
    winner = codes.copy()
    for code in range(1, count + 1):
        votes = ndimage.uniform_filter((codes == code).astype(np.float32), size=3, mode="nearest")
        votes += (codes == code) * 0.01  # a tie keeps the pixel's own code
        better = votes > best
        best[better] = votes[better]
        winner[better] = code
    return np.where(codes > 0, winner, 0)
