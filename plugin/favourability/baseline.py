"""The plain baselines every fitted surface is scored beside: equal-weight means of percentile ranks, which use no
deposit data."""
from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

ORDERED_RANK_MEAN = "Baseline: equal-weight mean of the ordered layers' ranks"


def equal_weight_ranks(maps: dict) -> np.ma.MaskedArray:
    """At each cell the mean of the maps' percentile ranks (0-1, ties at their mid-rank) over the maps with data
    there, every map weighing the same."""
    ranked = []
    for values in maps.values():
        values = np.ma.masked_invalid(np.ma.asarray(values, dtype=float))
        known = ~np.ma.getmaskarray(values)
        out = np.full(values.shape, np.nan)
        if known.any():
            out[known] = (rankdata(values.compressed(), method="average") - 0.5) / known.sum()
        ranked.append(out)
    stack = np.stack(ranked)
    counts = np.sum(~np.isnan(stack), axis=0)
    mean = np.where(counts > 0, np.nansum(stack, axis=0) / np.maximum(counts, 1), 0.0)
    return np.ma.masked_array(mean.astype("float32"), mask=counts == 0)


def ordered_rank_mean(layers: list) -> np.ma.MaskedArray | None:
    """The baseline over measured evidence (measured.py) when no deposit model gives memberships: the equal-weight
    mean of the ordered layers' ranks, each ranked from its unfavourable to its favourable side (a layer favourable
    when low, such as a distance, on its negated values). Unit maps (no order) and derived layers (their source
    counted again) are left out; None when no ordered layer is left."""
    maps = {layer.name: -layer.values if layer.favourable == "low" else layer.values
            for layer in layers if not layer.categorical and not layer.source}
    return equal_weight_ranks(maps) if maps else None
