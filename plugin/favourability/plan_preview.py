"""A live preview of an evidence plan: its combined surface on a coarse grid and each layer's response curve.

The layers' transformed values (`evidence_values`: the layer's own units for values and distances) are made once on
the analysis grid, then kept every `step`-th cell; an edited weight, midpoint, spread or combination only re-applies
the memberships and the combination to them (a new transformation or new favourable units makes that layer's values
again). The preview is for the eye; Re-run with this plan makes the surface at full resolution (`runs/replan.py`).
"""
from __future__ import annotations

import math

import numpy as np

from ..raster_io import RasterSet
from .evidence import EvidenceSpec, evidence_values, membership_of
from .overlay import OverlayMethod, combine

CURVE_SAMPLES = 2048
"""Values the response curve is first sampled at, across the values' range, to find where it changes."""
CHANGE_SHARE = 0.01
"""The curve changes where it lies more than this share of its span from its lowest and its highest value."""
CURVE_PAD = 0.25
"""Room drawn either side of the part that changes, as a share of its width."""


class PlanPreview:
    """Previews over `raster_set` (`extra`: membership_map's extra data, e.g. the zones of colour renderings), at
    most `size` cells a side."""

    def __init__(self, raster_set: RasterSet, extra: dict | None = None, size: int = 200):
        self.raster_set = raster_set
        self.extra = extra or {}
        grid = raster_set.grid
        self.step = max(1, math.ceil(max(grid.width, grid.height) / size))
        self.valid = raster_set.valid_mask()[::self.step, ::self.step]
        self._values: dict = {}

    def values(self, spec: EvidenceSpec) -> np.ma.MaskedArray:
        """The spec's transformed values on the preview grid."""
        units = tuple(map(str, spec.params.get("units") or ())) if spec.transform == "units" else ()
        key = (spec.layer, spec.transform, units, spec.params.get("outside") if units else None)
        if key not in self._values:
            full = evidence_values(self.raster_set, spec, self.extra)
            self._values[key] = full[::self.step, ::self.step]
        return self._values[key]

    def membership(self, spec: EvidenceSpec) -> np.ma.MaskedArray:
        return membership_of(self.values(spec), spec, self.valid)

    def surface(self, specs: list, method: OverlayMethod = "weighted", gamma: float = 0.8) -> np.ma.MaskedArray:
        """The combined surface of `specs` on the preview grid (masked outside the analysed area)."""
        maps = {spec.layer: self.membership(spec) for spec in specs}
        values = combine(maps, {spec.layer: spec.weight for spec in specs}, method, gamma)
        return np.ma.masked_where(~self.valid, values)

    def curve(self, spec: EvidenceSpec, points: int = 64) -> tuple[np.ndarray, np.ndarray]:
        """(x, membership) of the spec across the range where its membership changes (in the transformed values'
        units: ppm, metres, nT, or ranks), within its values' range on the analysed area (widened to take in a fuzzy
        midpoint; 1st to 99th percentile for a membership that is the values themselves): a 1 km fuzzy small over
        distances running to 110 km is drawn from 0 to a few km, not as a spike at the left edge; a unit map gives its
        two scores (other units, favourable)."""
        values = np.ma.masked_where(~self.valid, self.values(spec)).compressed()
        if spec.transform == "units":
            x = np.array([0.0, 1.0])
            return x, np.array([float(spec.params.get("outside", 0.0)), 1.0])
        if not values.size:
            return np.array([]), np.array([])
        low, high = (float(v) for v in (np.percentile(values, [1, 99]) if spec.membership in ("identity", "invert")
                                         else (values.min(), values.max())))
        if spec.membership in ("large", "small", "gaussian") and "midpoint" in spec.params:
            low, high = min(low, float(spec.params["midpoint"]) / 2), max(high, float(spec.params["midpoint"]) * 2)
        high = high if high > low else low + 1.0
        dense = np.linspace(low, high, CURVE_SAMPLES)
        y = self._membership_at(spec, dense)
        finite = np.isfinite(y)
        if finite.any():
            top, bottom = np.nanmax(y), np.nanmin(y)
            margin = CHANGE_SHARE * (top - bottom)
            changing = np.flatnonzero(finite & (y > bottom + margin) & (y < top - margin))
            if changing.size and top - bottom > 0:
                first, last = dense[changing[0]], dense[changing[-1]]
                pad = CURVE_PAD * max(last - first, (high - low) / CURVE_SAMPLES)
                low, high = max(low, first - pad), min(high, last + pad)
        x = np.linspace(low, high, points)
        return x, self._membership_at(spec, x)

    def _membership_at(self, spec: EvidenceSpec, x: np.ndarray) -> np.ndarray:
        grid: np.ma.MaskedArray = np.ma.masked_array(x[np.newaxis, :], mask=np.zeros((1, len(x)), dtype=bool))
        return np.asarray(membership_of(grid, spec, np.ones((1, len(x)), dtype=bool)).filled(np.nan))[0]
