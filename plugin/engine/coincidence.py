"""A layer measured over a core zone: does it stand above its own surroundings there?

A weak partner anomaly (two or three background spreads) makes no clear zone of its own anywhere in a scene,
yet over a core found on another layer it can be measured without a look-elsewhere penalty: the place is
fixed by the other layer. The test is local, the mean over the core against the mean over a ring around it
(as wide as the core's own radius), so a smooth regional rise or a background shared across layers, which
lifts both, does not count.
"""
from __future__ import annotations

import math

import numpy as np
from rasterio.features import geometry_mask

MIN_CELLS = 9
"""Fewer grid cells than this inside the core (or in its ring) measure nothing."""


def local_contrast(z: np.ma.MaskedArray, core, grid) -> tuple[float, float, int] | None:
    """(mean over the core, mean over its ring, cells in the core) of `z` (a layer in background spreads, on the
    analysis grid), or None when either holds fewer than MIN_CELLS valid cells."""
    radius = math.sqrt(core.area / math.pi)
    ring = core.buffer(radius).difference(core)
    shape = (grid.height, grid.width)
    data, invalid = np.ma.getdata(z), np.ma.getmaskarray(z)
    means = []
    for geometry in (core, ring):
        if geometry.is_empty:
            return None
        inside = ~geometry_mask([geometry], out_shape=shape, transform=grid.transform, all_touched=False) & ~invalid
        if int(inside.sum()) < MIN_CELLS:
            return None
        means.append((float(data[inside].mean()), int(inside.sum())))
    (core_mean, cells), (ring_mean, _) = means
    return core_mean, ring_mean, cells
