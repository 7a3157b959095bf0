"""Background models of evidence layers: what an index looks like where nothing is going on.

Each single-band index is described by one of three models, from its values on the analysis grid:

- "classed": few distinct integer values (reclassified maps such as geochemical classes): ordered
  classes with no measurable spread, so no significance can be computed;
- "lognormal": positive values spanning an order of magnitude or more whose logarithm is clearly
  less skewed than the values (most geochemistry): the background is described in log units;
- "normal": everything else (alteration ratios, indices).

The centre is the median; the spread is 1.4826 x the median absolute deviation of the unfavourable
half only, so an anomaly does not inflate the spread it is measured against. A layer whose favourable end
is clipped (a display stretch) carries that end as its "ceiling".
"""
from __future__ import annotations

import numpy as np

from ..decisions import CORE

# decision numbers: their reasons and provenance are in plugin/decisions.py
CLASSED_MAX = CORE.classed_max
SATURATED_SHARE = CORE.saturated_share
LOG_RANGE = CORE.log_range


def robust_spread(values: np.ndarray, centre: float) -> float:
    """1.4826 x the median absolute deviation from `centre`; where that is flat (a rendering's grey backdrop, a
    classed layer) the plain standard deviation, never below 1e-6."""
    spread = 1.4826 * float(np.median(np.abs(values - centre)))
    return spread if spread >= 1e-6 else max(float(values.std()), 1e-6)


def background_model(values: np.ma.MaskedArray, favourable: str = "high") -> dict:
    """The background model of one band (see the module docstring)."""
    data = values.compressed().astype("float64")
    if not data.size:
        return {}
    integer = bool(np.all(np.mod(data, 1) == 0))
    distinct = int(np.unique(data).size)
    if integer and distinct <= CLASSED_MAX:
        return {"model": "classed", "distinct": distinct}
    model = "lognormal" if _log_fits(data) else "normal"
    measured = np.log(data) if model == "lognormal" else data
    centre = float(np.median(measured))
    side = measured[measured <= centre] if favourable != "low" else measured[measured >= centre]
    spread = 1.4826 * float(np.median(np.abs(side - centre))) if side.size else 0.0
    if spread <= 0:
        spread = 1.4826 * float(np.median(np.abs(measured - centre))) or float(np.std(measured)) or 1.0
    out = {"model": model, "distinct": distinct, "bg_centre": round(centre, 6), "bg_sigma": round(spread, 6)}
    end = float(measured.max()) if favourable != "low" else float(measured.min())
    if float(np.mean(measured == end)) >= SATURATED_SHARE:
        out["ceiling"] = round(end, 6)
    return out


def _skew(x: np.ndarray) -> float:
    std = float(np.std(x))
    return float(np.mean(((x - np.mean(x)) / std) ** 3)) if std > 0 else 0.0


def _log_fits(values: np.ndarray) -> bool:
    """Positive values over an order of magnitude, right-skewed and much less so in log units."""
    if values.size < 10 or float(values.min()) <= 0:
        return False
    low, high = np.percentile(values, [2, 98])
    if high < LOG_RANGE * low:
        return False
    raw, logged = _skew(values), _skew(np.log(values))
    return raw > 0.5 and abs(logged) < 0.6 * abs(raw)


def to_measure(value: float, stats: dict) -> float:
    """A layer value in the units its background is measured in (log for lognormal; NaN if not positive)."""
    if stats.get("model") == "lognormal":
        return float(np.log(value)) if value > 0 else float("nan")
    return float(value)


def from_measure(measure: float, stats: dict) -> float:
    """The layer value of a background measure (inverse of `to_measure`)."""
    return float(np.exp(measure)) if stats.get("model") == "lognormal" else float(measure)
