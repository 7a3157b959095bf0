"""Where a map image's legend is: rows of uniform colour swatches, each with text to its right.

Swatches are found as flat patches (low colour gradient after a light blur) that fill their bounding rectangle,
hold one colour, and come in a set of the same size, aligned in one or more columns, each with lettering beside it.
The legend box is the flat background around them (bounded by the box's frame), or, on open paper, the swatches and
their text. Positions are pixel boxes (col0, row0, col1, row1), inclusive, of the image read.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import ndimage

from ..decisions import CORE
from .legend_classify import delta_e, rgb_to_lab

# decision numbers: their reasons and provenance are in plugin/decisions.py
MIN_SWATCHES = CORE.min_swatches
SWATCH_ROWS = CORE.swatch_rows
SWATCH_COLS = CORE.swatch_cols
MIN_FILL = CORE.min_fill
SWATCH_DE = CORE.swatch_de
ALIGN_SHARE = CORE.align_share
SIZE_SHARE = CORE.size_share
DARK = CORE.dark
BOX_MAX_SHARE = CORE.box_max_share
BOX_MIN_FILL = CORE.box_min_fill


@dataclass
class LegendLayout:
    """What was found: the legend box, each swatch's interior (legend order: column by column, top to bottom), each
    label's strip (where its name is written), and the legend background colour (RGB)."""

    box: tuple
    swatches: list
    label_boxes: list
    background: tuple | None = None
    notes: list = field(default_factory=list)

    def __post_init__(self):  # plain ints: boxes go to JSON
        self.box = tuple(int(v) for v in self.box)
        self.swatches = [tuple(int(v) for v in s) for s in self.swatches]
        self.label_boxes = [tuple(int(v) for v in s) for s in self.label_boxes]
        if self.background is not None:
            self.background = tuple(int(v) for v in self.background)


def flat_patches(smooth: np.ndarray) -> tuple[np.ndarray, int]:
    """Connected patches of nearly constant colour in a (3, rows, cols) smoothed image: labels and their number."""
    blurred = ndimage.gaussian_filter(smooth.astype(np.float32), sigma=(0, 1, 1))
    gradient = np.zeros(smooth.shape[1:], dtype=np.float32)
    for band in blurred:
        gradient += np.abs(ndimage.sobel(band, axis=0)) + np.abs(ndimage.sobel(band, axis=1))
    threshold = max(40.0, 4.5 * float(np.median(gradient)))
    return ndimage.label(gradient < threshold)


def find_legend(rgb: np.ndarray, box: tuple | None = None) -> LegendLayout | None:
    """The legend of a (3, rows, cols) uint8 image, searched inside `box` when given (which is then the legend box);
    None when no set of swatches with text beside them is found."""
    grey = rgb.astype(np.float32).mean(axis=0)
    if box is not None:
        c0, r0, c1, r1 = box
        found = find_legend(rgb[:, r0:r1 + 1, c0:c1 + 1])
        if found is None:
            return None
        return LegendLayout(box, [_shift(s, c0, r0) for s in found.swatches],
                            [_shift(s, c0, r0) for s in found.label_boxes], found.background,
                            found.notes + ["legend box given"])
    smooth = ndimage.median_filter(rgb, size=(1, 3, 3))
    labels, count = flat_patches(smooth)
    candidates = _swatch_candidates(rgb_to_lab(np.moveaxis(smooth, 0, -1)), labels, count)
    swatches = _best_set([c for c in candidates if _text_beside(grey, c)])
    if len(swatches) < MIN_SWATCHES:
        return None
    swatches = _in_legend_order(swatches)
    legend_box, background, how = _legend_box(rgb, grey, labels, swatches)
    strips = _label_boxes(swatches, legend_box)
    return LegendLayout(legend_box, swatches, strips, background, [how])


def _in_legend_order(swatches: list) -> list:
    """Swatches column by column (left to right), each column top to bottom."""
    return [s for column in _columns(swatches) for s in sorted(column, key=lambda s: s[1])]


def _columns(swatches: list) -> list:
    """Swatches in columns, left to right: each starts within ALIGN_SHARE of a width of its left neighbour's start."""
    columns: list = []
    for swatch in sorted(swatches):
        if columns and swatch[0] - columns[-1][-1][0] <= max(3.0, ALIGN_SHARE * (swatch[2] - swatch[0])):
            columns[-1].append(swatch)
        else:
            columns.append([swatch])
    return columns


def _shift(box: tuple, cols: int, rows: int) -> tuple:
    return box[0] + cols, box[1] + rows, box[2] + cols, box[3] + rows


def _swatch_candidates(lab: np.ndarray, labels: np.ndarray, count: int) -> list:
    """Boxes of one colour shaped like swatches: each flat patch of a plausible size, grown to the pixels of its
    colour around it (scan noise and JPEG blocks break a swatch's flatness, not its colour), kept when that region
    fills its bounding rectangle."""
    sizes = np.bincount(labels.ravel(), minlength=count + 1)
    rows_all, cols_all = labels.shape
    out = set()
    for index, slices in enumerate(ndimage.find_objects(labels), start=1):
        if slices is None or sizes[index] < 30:
            continue
        rows, cols = slices[0].stop - slices[0].start, slices[1].stop - slices[1].start
        if not (SWATCH_ROWS[0] // 2 <= rows <= SWATCH_ROWS[1] and SWATCH_COLS[0] // 2 <= cols <= SWATCH_COLS[1]):
            continue
        r0, r1 = max(0, slices[0].start - rows // 2 - 3), min(rows_all, slices[0].stop + rows // 2 + 3)
        c0, c1 = max(0, slices[1].start - 4), min(cols_all, slices[1].stop + 4)
        seed = labels[r0:r1, c0:c1] == index
        window = lab[r0:r1, c0:c1]
        colour = np.median(window[seed], axis=0)
        # opened: a thin outline the median filter blurred, or a letter's fringe, is no bridge to the next swatch
        same, _ = ndimage.label(ndimage.binary_opening(delta_e(window, colour) < SWATCH_DE, np.ones((3, 3))))
        mine = np.bincount(same[seed]).argmax() if seed.any() else 0
        if mine == 0:
            continue
        region = ndimage.binary_fill_holes(same == mine)
        # the rows and columns the region mostly fills: a corner of the outline or a letter's fringe is no part
        full_rows = np.nonzero(region.sum(axis=1) >= 0.5 * region.sum(axis=1).max())[0]
        full_cols = np.nonzero(region.sum(axis=0) >= 0.5 * region.sum(axis=0).max())[0]
        top, bottom, left, right = full_rows[0], full_rows[-1], full_cols[0], full_cols[-1]
        height, width = bottom - top + 1, right - left + 1
        if not (SWATCH_ROWS[0] <= height <= SWATCH_ROWS[1] and SWATCH_COLS[0] <= width <= SWATCH_COLS[1]):
            continue
        if not 0.6 <= width / height <= 8.0 or region[top:bottom + 1, left:right + 1].sum() < MIN_FILL * height * width:
            continue
        if (top == 0 and r0 > 0) or (bottom == r1 - r0 - 1 and r1 < rows_all):
            continue  # it runs on beyond the window: a stretch of map, not a swatch
        out.add((c0 + left, r0 + top, c0 + right, r0 + bottom))
    return sorted(out)


def _text_beside(grey: np.ndarray, swatch: tuple) -> bool:
    """Whether lettering (dark pixels) lies just right of a swatch, level with it."""
    c0, r0, c1, r1 = swatch
    height = r1 - r0 + 1
    strip = grey[r0:r1 + 1, c1 + 5:min(grey.shape[1], c1 + 5 + 4 * height)]
    return strip.size > 0 and int((strip < DARK).sum()) >= max(6, height // 2)


def _best_set(candidates: list) -> list:
    """The largest set of candidates of one size, in columns of at least two aligned swatches: the set around the
    candidate that gathers most, then gathered again around its median size."""
    best: list = []
    for c0, r0, c1, r1 in candidates:
        members = _sized_like(candidates, c1 - c0, r1 - r0)
        if len(members) > len(best):
            best = members
    if not best:
        return best
    return _sized_like(candidates, float(np.median([s[2] - s[0] for s in best])),
                       float(np.median([s[3] - s[1] for s in best])))


def _sized_like(candidates: list, width: float, height: float) -> list:
    """The candidates of about this size, in columns of at least two."""
    same = [s for s in candidates
            if abs((s[2] - s[0]) - width) <= max(2, SIZE_SHARE * width)
            and abs((s[3] - s[1]) - height) <= max(2, SIZE_SHARE * height)]
    return [s for column in _columns(same) if len(column) >= 2 for s in column]


def _legend_box(rgb: np.ndarray, grey: np.ndarray, labels: np.ndarray, swatches: list) -> tuple:
    """The legend box (the flat background patch around the swatches, inside its frame; on open paper, the swatches
    and their lettering), its background colour, and how it was found."""
    rows, cols = labels.shape
    c0 = min(s[0] for s in swatches)
    r0 = min(s[1] for s in swatches)
    c1 = max(s[2] for s in swatches)
    r1 = max(s[3] for s in swatches)
    ring = []
    for s in swatches:
        for col in (s[0] - 6, s[0] - 8):
            if 0 <= col < cols:
                ring.append(labels[(s[1] + s[3]) // 2, col])
    patch = np.bincount([v for v in ring if v > 0]).argmax() if any(v > 0 for v in ring) else 0
    background = None
    if patch:
        where = labels == patch
        background = tuple(int(np.median(band[where])) for band in rgb)
        prow, pcol = np.nonzero(where)
        area = (prow.max() - prow.min() + 1) * (pcol.max() - pcol.min() + 1)
        if area < BOX_MAX_SHARE * rows * cols and where.sum() >= BOX_MIN_FILL * area:
            pad = 5
            box = (max(0, min(pcol.min(), c0) - pad), max(0, min(prow.min(), r0) - pad),
                   min(cols - 1, max(pcol.max(), c1) + pad), min(rows - 1, max(prow.max(), r1) + pad))
            return box, background, "legend box: the framed background around the swatches"
    right = c1
    for s in swatches:
        right = max(right, _text_end(grey, s))
    pad = 8
    box = (max(0, c0 - pad), max(0, r0 - pad), min(cols - 1, right + pad), min(rows - 1, r1 + pad))
    return box, background, "legend box: the swatches and their lettering (no frame found)"


def _text_end(grey: np.ndarray, swatch: tuple) -> int:
    """The last column of the lettering right of a swatch: where a gap of blank columns three swatch heights wide
    begins."""
    c0, r0, c1, r1 = swatch
    height = r1 - r0 + 1
    strip = grey[r0:r1 + 1, c1 + 5:] < DARK
    inked = np.nonzero(strip.any(axis=0))[0]
    end = c1
    for col in inked:
        if col + c1 + 5 - end > 3 * height and end > c1:
            break
        end = col + c1 + 5
    return end


def _label_boxes(swatches: list, box: tuple) -> list:
    """Where each swatch's name is written: level with it, half a row pitch above and below, from past its column's
    swatches (their widest outline) to the next column's swatches or the legend box's edge."""
    tops = sorted({s[1] for s in swatches})
    pitches = [b - a for a, b in zip(tops, tops[1:]) if b - a > 4]
    column_right = {s: max(t[2] for t in column) for column in _columns(swatches) for s in column}
    out = []
    for swatch in swatches:
        _, r0, c1, r1 = swatch
        height = r1 - r0 + 1
        pitch = float(np.median(pitches)) if pitches else 1.6 * height
        centre = (r0 + r1) / 2
        half = max(height / 2 + 2, pitch / 2 - 1)
        right = min([s[0] - 6 for s in swatches if s[0] > c1] + [box[2] - 4])
        out.append((column_right[swatch] + 4, int(max(box[1], centre - half)), int(right),
                    int(min(box[3], centre + half))))
    return out
