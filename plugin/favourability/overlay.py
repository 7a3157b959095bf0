"""Combining membership maps into one favourability surface: weighted overlay or a fuzzy operator.

Weighted overlay: at each cell, the weighted mean of the memberships of the layers with data there.
Weighted mean of ranks: the same mean of each membership's percentile rank over the cells where it has data
(0 lowest, 1 highest, ties at their mean rank): a layer's say is its weight alone, whatever the spread of its
membership (a unit map's 0 / 1 and a fault's fuzzy distance count alike), and with equal weights it is the
equal-weight mean of the layers' ranks that every surface is scored beside (baseline.py). The knowledge-driven
surface combines so (docs/engine.md).
Fuzzy gamma (Bonham-Carter 1994): (fuzzy algebraic sum) ** gamma * (fuzzy algebraic product) ** (1 - gamma),
with the weights as exponents scaled to a mean of 1 (prod m_i ** w_i and 1 - prod (1 - m_i) ** w_i),
so equal weights give the plain operator; fuzzy product and sum are gamma 0 and 1. Fuzzy AND (the least
membership) and OR (the greatest) take the layers of positive weight as they are. Cells where no layer has data
are masked.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

import numpy as np
from pyproj import CRS

from ..errors import LodestarError
from ..labels import COMBINATION_LABELS
from ..raster_io import RasterGrid, RasterSet
from .evidence import EvidenceSpec, membership_map
from .transforms import percentile_rank

OverlayMethod = Literal["weighted", "rank", "gamma", "and", "or", "product", "sum"]
"""How membership maps are combined: weighted overlay, weighted mean of ranks, or a fuzzy operator."""
METHODS: tuple[OverlayMethod, ...] = get_args(OverlayMethod)
METHOD_LABELS = COMBINATION_LABELS


def combine(maps: dict, weights: dict, method: OverlayMethod = "weighted", gamma: float = 0.8) -> np.ma.MaskedArray:
    """One float32 0-1 masked surface from {name: 0-1 membership map} and {name: weight}.

    Layers of weight 0 (or missing from `weights`) are left out; a cell takes the layers with data there.
    """
    if method not in METHODS:
        raise LodestarError(f"The overlay method must be one of {', '.join(METHODS)}, not {method!r}.")
    if method == "gamma" and not 0.0 <= gamma <= 1.0:
        raise LodestarError(f"Gamma must lie between 0 and 1, not {gamma}.")
    names = [n for n in maps if float(weights.get(n, 0.0)) > 0]
    if not names:
        raise LodestarError("No evidence layer has a positive weight; give at least one layer a weight.")
    if any(float(w) < 0 for w in weights.values()):
        raise LodestarError("Weights must be zero or positive.")
    shapes = {np.shape(maps[n]) for n in names}
    if len(shapes) != 1:
        raise LodestarError(f"The membership maps are not on one grid (shapes {sorted(shapes)}).")
    if method == "rank":
        maps = {n: percentile_rank(maps[n]) for n in names}
    stack = np.ma.stack([np.ma.masked_invalid(np.ma.array(maps[n], dtype="float64")) for n in names])
    missing = np.ma.getmaskarray(stack)
    values = np.clip(stack.filled(0.0), 0.0, 1.0)
    w = np.array([float(weights[n]) for n in names])
    w = (w / w.mean())[:, None, None]
    present = np.where(missing, 0.0, w)
    if method in ("weighted", "rank"):
        with np.errstate(invalid="ignore", divide="ignore"):
            out = (values * present).sum(axis=0) / present.sum(axis=0)
    elif method == "and":
        out = np.where(missing, 1.0, values).min(axis=0)
    elif method == "or":
        out = np.where(missing, 0.0, values).max(axis=0)
    else:
        gamma = {"product": 0.0, "sum": 1.0}.get(method, gamma)
        product = np.prod(np.power(values, present), axis=0)
        algebraic_sum = 1.0 - np.prod(np.power(1.0 - values, present), axis=0)
        out = np.power(algebraic_sum, gamma) * np.power(product, 1.0 - gamma)
    none = missing.all(axis=0)
    return np.ma.masked_array(np.where(none, 0.0, out).astype("float32"), mask=none)


@dataclass
class Surface:
    """A favourability surface: values (float32, 0-1, masked outside the analysed area) on `grid`,
    with the evidence specs and the method that made it."""

    values: np.ma.MaskedArray
    grid: RasterGrid
    crs: CRS | None = None
    specs: list = field(default_factory=list)
    method: str = "weighted"
    gamma: float | None = None

    def __post_init__(self):
        if self.crs is None:
            self.crs = self.grid.crs

    def table(self) -> list[dict]:
        """The weights table: one row per evidence layer (layer, role, transformation, membership, weight, why)."""
        return [{"layer": s.layer, "role": s.role, "transformation": s.transformation_text,
                 "membership": s.membership_text, "weight": s.weight, "why": s.why} for s in self.specs]


def favourability_surface(raster_set: RasterSet, specs: list[EvidenceSpec], method: OverlayMethod = "weighted",
                          gamma: float = 0.8, extra: dict | None = None, maps: dict | None = None) -> Surface:
    """Membership maps of `specs` combined by `method` over the analysed area (raster_set.valid_mask());
    `maps` ({layer: membership}) when they were already made for these specs (calibration reuses them)."""
    if not specs:
        raise LodestarError("No evidence layer to combine; give at least one usable layer.")
    layers = [s.layer for s in specs]
    if len(set(layers)) != len(layers):
        raise LodestarError(f"Each layer may enter the surface once; repeated: "
                            f"{', '.join(sorted({n for n in layers if layers.count(n) > 1}))}.")
    if maps is None:
        maps = {}
        for spec in specs:
            raster_set.progress.check()
            maps[spec.layer] = membership_map(raster_set, spec, extra)
    values = combine(maps, {s.layer: s.weight for s in specs}, method, gamma)
    values = np.ma.masked_where(~raster_set.valid_mask(), values)
    return Surface(values, raster_set.grid, raster_set.crs, list(specs), method, gamma if method == "gamma" else None)
