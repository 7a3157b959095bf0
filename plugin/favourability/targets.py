"""Targets from a favourability surface: the top share cut into patches, each patch split at its peaks, none larger
than the deposit type's footprint, each knowing the tier (2 / 5 / 10 % of the area) its best cells reach.

Splitting is a watershed on the surface's percentile ranks with persistence: cells are visited from the most
favourable down; a cell joining two regions is a saddle, and the region with the lower peak keeps its own target
only when its peak stands at least `saddle_depth` above that saddle (on the rank scale, so the depth means the
same on a knowledge-driven surface and on a model's probabilities) and it already holds `min_cells` cells; else
it merges into the higher one. A region still larger than the cap is split again at shallower saddles, then,
where the surface is flat, halved across its long axis until every piece fits. A speck (a piece under `min_cells`:
a patch of the top share, or a fragment a cut leaves) joins the target it shares the longest border with while that
stays within the cap, else it is dropped; the specks dropped are counted. The targets' union is the selection less
the specks dropped. A place kept whole (a verified core) is one target, joined by the targets it overlaps while that
stays within the cap.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage
from scipy.stats import rankdata

from ..decisions import CORE
from .outputs import pinholes, top_share_mask

# decision numbers: their reasons and provenance are in plugin/decisions.py
TIERS = CORE.tiers
SADDLE_DEPTH = CORE.saddle_depth
_FOUR = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], dtype=bool)


@dataclass
class Delineation:
    """`labels`: target id per cell (0: none); `tiers`: {id: the smallest tier share whose top cells it holds};
    `split`: how many patches were split at their peaks, and how many cut to the cap where the surface was flat;
    `specks`: how many pieces under the least size were dropped and `speck_cells` their cells, `merged` how many
    joined a neighbouring target."""

    labels: np.ndarray
    tiers: dict
    split_at_peaks: int = 0
    cut_to_cap: int = 0
    specks: int = 0
    speck_cells: int = 0
    merged: int = 0


def percentile_ranks(values: np.ma.MaskedArray) -> np.ndarray:
    """Each valid cell's percentile rank (0-1, ties at their mid-rank); NaN where masked."""
    valid = ~np.ma.getmaskarray(values)
    out = np.full(values.shape, np.nan)
    if valid.any():
        out[valid] = (rankdata(np.asarray(values.filled(0.0), dtype="float64")[valid]) - 0.5) / valid.sum()
    return out


def delineate(values: np.ma.MaskedArray, area_share: float, *, max_cells: int | None = None,
              saddle_depth: float = SADDLE_DEPTH, whole: tuple = (), min_cells: int = 4,
              tiers: tuple = TIERS, fill_holes: bool = True) -> Delineation:
    """Targets of the top `area_share` of `values` (see the module docstring). `whole`: masks of places selected
    whatever their value and kept whole, each connected piece one target (a verified core, further verified
    systems); `max_cells`: the cap in cells (None: no cap); patches under `min_cells` cells are specks and left out,
    holes under it inside a patch are part of it (`fill_holes`; else they stay holes). A patch under `min_cells` on its
    own is a speck, dropped and counted."""
    valid = ~np.ma.getmaskarray(values)
    selected = top_share_mask(values, area_share)
    for place in whole:
        selected = selected | (place.astype(bool) & valid)
    if min_cells and fill_holes:
        selected = selected | (pinholes(selected, min_cells) & valid)
    patches, count = ndimage.label(selected, structure=_FOUR)
    sizes = np.bincount(patches.ravel(), minlength=count + 1)
    small = sizes < max(min_cells, 1)
    small[0] = False
    specks, speck_cells = int(small.sum()), int(sizes[small].sum())
    selected &= ~small[patches]
    ranks = percentile_ranks(values)
    labels = _persistence_regions(ranks, selected, saddle_depth, min_cells)
    split_at_peaks = int(len(np.unique(labels[labels > 0])) - len(np.unique(patches[selected])))
    cut = 0
    if max_cells:
        labels, cut = _cap(labels, ranks, saddle_depth, max_cells, min_cells)
    for place in whole:
        labels = _kept_whole(labels, place.astype(bool) & selected, max_cells)
    labels, dropped, dropped_cells, merged = _renumber(labels.astype(np.int64), max(min_cells, 1), max_cells)
    return Delineation(labels, tiers_of(labels, values, area_share, tiers), max(split_at_peaks, 0), cut,
                       specks + dropped, speck_cells + dropped_cells, merged)


def tiers_of(labels: np.ndarray, values: np.ma.MaskedArray, area_share: float, tiers: tuple = TIERS) -> dict:
    """{label: the smallest of the `tiers` shares below `area_share` (or `area_share` itself) whose top cells of
    `values` the target holds}."""
    shares = [s for s in sorted(set(tiers)) if s < area_share] + [area_share]
    tier_of = {}
    for share in reversed(shares):  # the smallest share wins
        top = top_share_mask(values, share) if share < area_share else labels > 0
        for label in np.unique(labels[top & (labels > 0)]):
            tier_of[int(label)] = share
    return tier_of


def _kept_whole(labels: np.ndarray, place: np.ndarray, max_cells: int | None) -> np.ndarray:
    """Labels with each connected piece of `place` made one target, together with the targets it overlaps while
    that stays within `max_cells` (a verified core inside an anomaly is that anomaly), else on its own."""
    pieces, count = ndimage.label(place, structure=_FOUR)
    out = labels.copy()
    for piece in range(1, count + 1):
        cells = pieces == piece
        overlapped = np.setdiff1d(np.unique(out[cells]), [0])
        grown = cells | np.isin(out, overlapped)
        out[grown if max_cells is None or grown.sum() <= max_cells else cells] = int(out.max()) + 1
    return out


def _persistence_regions(ranks: np.ndarray, selected: np.ndarray, depth: float, min_cells: int) -> np.ndarray:
    """Watershed regions of `selected` on `ranks` where a saddle splits only peaks at least `depth` above it, each
    region at least `min_cells` cells when it meets another (see the module docstring)."""
    height, width = selected.shape
    flat = np.flatnonzero(selected.ravel())
    label = np.zeros(selected.size, dtype=np.int64)
    if not flat.size:
        return label.reshape(selected.shape)
    values = ranks.ravel()
    order = flat[np.argsort(-values[flat], kind="stable")]
    parent, peak, size = [0], [0.0], [0]

    def find(r):
        while parent[r] != r:
            parent[r] = parent[parent[r]]
            r = parent[r]
        return r

    for cell in order.tolist():
        row, col = divmod(cell, width)
        roots: set[int] = set()
        if row and label[cell - width]:
            roots.add(find(label[cell - width]))
        if row < height - 1 and label[cell + width]:
            roots.add(find(label[cell + width]))
        if col and label[cell - 1]:
            roots.add(find(label[cell - 1]))
        if col < width - 1 and label[cell + 1]:
            roots.add(find(label[cell + 1]))
        if not roots:
            parent.append(len(parent))
            peak.append(values[cell])
            size.append(1)
            label[cell] = len(parent) - 1
            continue
        ordered = sorted(roots, key=lambda r: (-peak[r], r))
        top = ordered[0]
        for other in ordered[1:]:
            if peak[other] - values[cell] < depth or size[other] < min_cells:
                parent[other] = top
                size[top] += size[other]
        label[cell] = top
        size[top] += 1
    root_of = np.array([find(r) for r in range(len(parent))], dtype=np.int64)
    return root_of[label].reshape(selected.shape)


def _cap(labels: np.ndarray, ranks: np.ndarray, depth: float, max_cells: int, min_cells: int) -> tuple:
    """Labels with every region over `max_cells` split: at shallower saddles (the depth halved up to six times),
    then across its long axis; (labels, how many regions were cut across a flat surface)."""
    out = labels.copy()
    next_label = int(out.max()) + 1
    cut = 0
    ids, counts = np.unique(out[out > 0], return_counts=True)
    for region in ids[counts > max_cells]:
        cells = out == region
        pieces = np.zeros_like(out)
        shallower = depth
        for _ in range(6):
            shallower /= 2
            pieces = _persistence_regions(ranks, cells, shallower, min_cells)
            if np.bincount(pieces.ravel())[1:].max(initial=0) <= max_cells:
                break
        parts = [pieces == p for p in np.unique(pieces[cells])]
        final = []
        for part in parts:
            if part.sum() > max_cells:
                cut += 1
                final.extend(_halves(part, max_cells))
            else:
                final.append(part)
        for part in final:
            out[part] = next_label
            next_label += 1
    return out, cut


def _halves(part: np.ndarray, max_cells: int) -> list:
    """`part` cut across its long axis at the median until every piece has at most `max_cells` cells."""
    rows, cols = np.nonzero(part)
    if rows.size <= max_cells:
        return [part]
    coords = np.column_stack([rows, cols]).astype(float)
    centred = coords - coords.mean(axis=0)
    axis = np.linalg.svd(centred, full_matrices=False)[2][0]
    along = centred @ axis
    first = along <= np.median(along)
    if first.all() or not first.any():
        first = np.arange(rows.size) < rows.size // 2
    out = []
    for side in (first, ~first):
        piece = np.zeros_like(part)
        piece[rows[side], cols[side]] = True
        out.extend(_halves(piece, max_cells))
    return out


def _renumber(labels: np.ndarray, min_cells: int, max_cells: int | None) -> tuple:
    """(labels 1..n, each one 4-connected piece (a region cut in two by halving becomes two), specks dropped, their
    cells, specks merged): a piece under `min_cells` cells joins the target it shares the longest border with while
    that stays within `max_cells`, else it is dropped."""
    out = np.zeros(labels.shape, dtype=np.int32)
    small = []
    next_label = 1
    for region, box in enumerate(ndimage.find_objects(labels), start=1):
        if box is None:
            continue
        pieces, count = ndimage.label(labels[box] == region, structure=_FOUR)
        sizes = np.bincount(pieces.ravel(), minlength=count + 1)
        window = out[box]
        for piece in range(1, count + 1):
            if sizes[piece] >= min_cells:
                window[pieces == piece] = next_label
                next_label += 1
            else:
                rows, cols = np.nonzero(pieces == piece)
                small.append((rows + box[0].start, cols + box[1].start))
    sizes = np.bincount(out.ravel(), minlength=next_label)
    dropped = dropped_cells = merged = 0
    for rows, cols in small:
        into = _neighbour(out, rows, cols)
        if into and (max_cells is None or sizes[into] + rows.size <= max_cells):
            out[rows, cols] = into
            sizes[into] += rows.size
            merged += 1
        else:
            dropped += 1
            dropped_cells += rows.size
    return out, dropped, dropped_cells, merged


def _neighbour(labels: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> int:
    """The label sharing the longest border (4-neighbours) with the cells (rows, cols); 0 when none touches them."""
    height, width = labels.shape
    touching = []
    for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        r, c = rows + dr, cols + dc
        inside = (r >= 0) & (r < height) & (c >= 0) & (c < width)
        touching.append(labels[r[inside], c[inside]])
    found = np.concatenate(touching)
    found = found[found > 0]
    return int(np.bincount(found).argmax()) if found.size else 0
