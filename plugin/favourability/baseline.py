"""The plain baselines every surface is scored beside: equal-weight means of percentile ranks, which use no
deposit data.

`independent_rank_mean` is the one a practitioner writes in ten lines, built from the layers and the geology alone,
never from the plan's memberships: every layer that holds measured values enters as its percentile rank, turned
the way the geologist set it (a layer favourable when low, such as a distance, on its negated values); a map of
units as its favourable units (those the geologist names, else those matching the deposit model's host-rock words:
lithology_words.matched_units) against the others; fault lines as the distance to them, near favourable; all
averaged with equal weights (overlay's weighted mean of ranks). Left out, each with its reason: colour renderings
(no measured values), layers that hold a single value, unit maps none of whose units is favourable, and vector
layers other than fault lines and unit polygons.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.stats import rankdata

from ..errors import LodestarError
from ..raster_io import RasterSet
from .evidence import EvidenceSpec, evidence_values
from .overlay import combine
from .transforms import distance_to_features_m

ORDERED_RANK_MEAN = "Baseline: equal-weight mean of the ordered layers' ranks"
INDEPENDENT = "equal-weight mean of the layers' ranks"
INDEPENDENT_BASIS = ("every layer as its percentile rank, turned the way its layer setting says, the host units from "
                     "the deposit model's rock words (or those named), equal weights; no deposit data and none of "
                     "the plan's choices")


@dataclass
class RankMean:
    """The independent equal-weight mean of ranks: its values on the analysis grid (None when no layer enters),
    the layers in it ({layer, how}) and those left out ({layer, reason})."""

    values: np.ma.MaskedArray | None
    used: list = field(default_factory=list)
    left_out: list = field(default_factory=list)


def independent_rank_mean(raster_set: RasterSet, layers, deposit_model: dict | None = None,
                          favourable_units: dict | None = None) -> RankMean:
    """The baseline of the module docstring over `layers` (LayerInfo: name, role, kind, favourable, silent) of
    `raster_set`; `favourable_units`: {layer: units the geologist names}, which take precedence over the deposit
    model's host-rock words."""
    hosts = list((deposit_model or {}).get("favourable_units") or [])
    named = favourable_units or {}
    maps, used, left_out = {}, [], []
    for info in layers:
        raster_set.progress.check()
        words = list(named.get(info.name) or hosts)
        if info.silent:
            left_out.append({"layer": info.name, "reason": f"it {info.silent}"})
        elif info.kind == "rgb":
            left_out.append({"layer": info.name, "reason": "a colour rendering holds no measured values"})
        elif info.kind == "vector" and info.role == "structure":
            maps[info.name] = -distance_to_features_m(raster_set.features(info.name).geometry, raster_set.grid)
            used.append({"layer": info.name, "how": "distance to its lines, near favourable"})
        elif info.kind == "categorical" or (info.kind == "vector" and info.role == "geological_map"):
            if not words:
                left_out.append({"layer": info.name, "reason": "no favourable units: none named, and the deposit "
                                                               "model names no host rocks"})
                continue
            spec = EvidenceSpec(info.name, info.role, info.kind, "units", params={"units": words, "outside": 0.0})
            try:
                units = evidence_values(raster_set, spec)
            except LodestarError:  # no unit of the map is favourable
                left_out.append({"layer": info.name, "reason": f"none of its units matches {', '.join(words[:6])}"})
                continue
            maps[info.name] = units
            used.append({"layer": info.name, "how": f"favourable units ({', '.join(map(str, words[:6]))}) against "
                                                    "the others"})
        elif info.kind == "vector":
            left_out.append({"layer": info.name, "reason": "a vector layer is read only as fault lines or unit "
                                                           "polygons"})
        else:
            values = np.ma.masked_invalid(np.ma.asarray(raster_set.read(info.name)[0], dtype="float64"))
            maps[info.name] = -values if info.favourable == "low" else values
            used.append({"layer": info.name, "how": f"its values, {info.favourable} favourable"})
    if not maps:
        return RankMean(None, used, left_out)
    valid = raster_set.valid_mask()
    maps = {name: np.ma.masked_where(~valid, np.ma.masked_invalid(np.ma.asarray(values, dtype="float64")))
            for name, values in maps.items()}
    values = combine(maps, dict.fromkeys(maps, 1.0), "rank")
    return RankMean(np.ma.masked_where(~valid, values), used, left_out)


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
