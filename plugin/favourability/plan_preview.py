"""A live preview of an evidence plan: its combined surface on a coarse grid and each layer's response curve.

The layers' transformed values (`evidence_values`: the layer's own units for values and distances) are made once on
the analysis grid, then kept every `step`-th cell; an edited weight, midpoint, spread or combination only re-applies
the memberships and the combination to them (a new transformation or new favourable units makes that layer's values
again). The preview is for the eye; Re-run with this plan makes the surface at full resolution (`engine/replan.py`).
"""
from __future__ import annotations

import math

import numpy as np

from ..raster_io import RasterSet
from .evidence import EvidenceSpec, evidence_values, membership_of
from .overlay import combine


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

    def surface(self, specs: list, method: str = "weighted", gamma: float = 0.8) -> np.ma.MaskedArray:
        """The combined surface of `specs` on the preview grid (masked outside the analysed area)."""
        maps = {spec.layer: self.membership(spec) for spec in specs}
        values = combine(maps, {spec.layer: spec.weight for spec in specs}, method, gamma)
        return np.ma.masked_where(~self.valid, values)

    def curve(self, spec: EvidenceSpec, points: int = 64) -> tuple[np.ndarray, np.ndarray]:
        """(x, membership) of the spec over its values' range on the analysed area (1st to 99th percentile, in the
        transformed values' units: ppm, metres, nT, or ranks); a unit map gives its two scores (other units,
        favourable)."""
        values = np.ma.masked_where(~self.valid, self.values(spec)).compressed()
        if spec.transform == "units":
            x = np.array([0.0, 1.0])
            return x, np.array([float(spec.params.get("outside", 0.0)), 1.0])
        if not values.size:
            return np.array([]), np.array([])
        low, high = np.percentile(values, [1, 99])
        if spec.membership in ("large", "small", "gaussian") and "midpoint" in spec.params:
            low, high = min(low, float(spec.params["midpoint"]) / 2), max(high, float(spec.params["midpoint"]) * 2)
        x = np.linspace(float(low), float(high) if high > low else float(low) + 1.0, points)
        grid = np.ma.masked_array(x[np.newaxis, :], mask=np.zeros((1, points), dtype=bool))
        y = membership_of(grid, spec, np.ones((1, points), dtype=bool))
        return x, np.asarray(y.filled(np.nan))[0]
