"""Evidence transformations: robust scalings, fuzzy memberships, distances and unit scores.

Pure numpy on masked arrays (masked cells stay masked); results are float32 in 0-1 except the
distance. The fuzzy memberships follow the ArcGIS / ArcSDM definitions:
large 1 / (1 + (x / midpoint) ** -spread), small 1 / (1 + (x / midpoint) ** spread),
linear 0 below `low` to 1 above `high` (decreasing when low > high), Gaussian exp(-spread * (x - midpoint) ** 2).
"""
from __future__ import annotations

import math

import numpy as np
from rasterio.features import rasterize
from scipy import ndimage, stats

from ..errors import LodestarError
from ..raster_io import RasterGrid
from ..tools.lithology_words import matched_units


def _masked(values) -> np.ma.MaskedArray:
    """float64 masked copy of `values` with NaN and inf masked too."""
    return np.ma.masked_invalid(np.ma.array(values, dtype="float64", copy=True))


def _out(result, mask) -> np.ma.MaskedArray:
    return np.ma.masked_array(np.asarray(result, dtype="float32"), mask=mask)


def percentile_rank(values) -> np.ma.MaskedArray:
    """Rank of each valid value among all valid values scaled to 0-1: (rank - 1) / (n - 1).

    Ties share their mean rank (so constant data is 0.5 everywhere); robust to outliers and to any
    monotone rescaling of the input.
    """
    data = _masked(values)
    mask = np.ma.getmaskarray(data)
    out = np.zeros(data.shape, dtype="float64")
    valid = data.compressed()
    if valid.size == 1:
        out[~mask] = 0.5
    elif valid.size:
        out[~mask] = (stats.rankdata(valid, method="average") - 1.0) / (valid.size - 1.0)
    return _out(out, mask)


def log_percentile(values, low: float = 2.0, high: float = 98.0) -> np.ma.MaskedArray:
    """log10 of the values stretched linearly between their `low` and `high` percentiles, clipped to 0-1.

    For lognormal data such as geochemistry: unlike a rank, the stretch keeps an anomaly's contrast
    (ten times the background is far above twice it). Values <= 0 (below detection) take half the
    smallest positive value; with no spread between the percentiles the percentile rank is returned.
    """
    data = _masked(values)
    positive = data.compressed()[data.compressed() > 0]
    if positive.size == 0:
        raise LodestarError("A log scaling needs positive values (concentrations); this layer has none.")
    logged = np.ma.log10(np.ma.where(data > 0, data, positive.min() / 2.0))
    lo, hi = np.percentile(logged.compressed(), [low, high])
    if hi <= lo:
        return percentile_rank(logged)
    return _out(np.clip((logged.filled(lo) - lo) / (hi - lo), 0.0, 1.0), np.ma.getmaskarray(data))


def _check(midpoint: float, spread: float) -> None:
    if not (midpoint > 0 and spread > 0):
        raise LodestarError(f"A fuzzy large / small membership needs a positive midpoint and spread, "
                            f"not {midpoint} and {spread}.")


def fuzzy_large(x, midpoint: float, spread: float = 5.0) -> np.ma.MaskedArray:
    """ArcGIS FuzzyLarge: 1 / (1 + (x / midpoint) ** -spread); 0.5 at the midpoint, 0 for x <= 0."""
    _check(midpoint, spread)
    data = _masked(x)
    ratio = np.maximum(data.filled(0.0) / midpoint, 0.0)
    with np.errstate(divide="ignore", over="ignore"):
        out = np.where(ratio > 0, 1.0 / (1.0 + np.power(ratio, -spread)), 0.0)
    return _out(out, np.ma.getmaskarray(data))


def fuzzy_small(x, midpoint: float, spread: float = 5.0) -> np.ma.MaskedArray:
    """ArcGIS FuzzySmall: 1 / (1 + (x / midpoint) ** spread); 0.5 at the midpoint, 1 for x <= 0."""
    _check(midpoint, spread)
    data = _masked(x)
    ratio = np.maximum(data.filled(0.0) / midpoint, 0.0)
    with np.errstate(over="ignore"):
        out = 1.0 / (1.0 + np.power(ratio, spread))
    return _out(out, np.ma.getmaskarray(data))


def fuzzy_linear(x, low: float, high: float) -> np.ma.MaskedArray:
    """ArcGIS FuzzyLinear: 0 at `low`, 1 at `high`, linear between; decreasing when low > high."""
    if low == high:
        raise LodestarError("A fuzzy linear membership needs two different bounds.")
    data = _masked(x)
    return _out(np.clip((data.filled(low) - low) / (high - low), 0.0, 1.0), np.ma.getmaskarray(data))


def fuzzy_gaussian(x, midpoint: float, spread: float = 0.1) -> np.ma.MaskedArray:
    """ArcGIS FuzzyGaussian: exp(-spread * (x - midpoint) ** 2); 1 at the midpoint."""
    if spread <= 0:
        raise LodestarError(f"A fuzzy Gaussian membership needs a positive spread, not {spread}.")
    data = _masked(x)
    return _out(np.exp(-spread * (data.filled(midpoint) - midpoint) ** 2), np.ma.getmaskarray(data))


def invert(x) -> np.ma.MaskedArray:
    """1 - x: a 0-1 membership of a favourable-low layer turned the right way up."""
    data = _masked(x)
    return _out(1.0 - data.filled(0.0), np.ma.getmaskarray(data))



def feature_pads(shapes: list, grid) -> tuple[int, int, int, int]:
    """Pixels (left, right, top, bottom) to grow `grid` by so that it holds the features `shapes` lying beyond it,
    each side at most a quarter of the grid's larger size (farther features hardly change a distance inside)."""
    width, height = grid.pixel_size
    xmin, ymin, xmax, ymax = grid.bounds
    fx0 = min(g.bounds[0] for g in shapes)
    fy0 = min(g.bounds[1] for g in shapes)
    fx1 = max(g.bounds[2] for g in shapes)
    fy1 = max(g.bounds[3] for g in shapes)
    cap = max(grid.width, grid.height) // 4

    def pad(outside: float, size: float) -> int:
        return min(cap, max(0, math.ceil(outside / size)))

    return pad(xmin - fx0, width), pad(fx1 - xmax, width), pad(fy1 - ymax, height), pad(ymin - fy0, height)


def distance_to_features_m(geometries, grid: RasterGrid) -> np.ndarray:
    """Distance (map units, metres in a projected CRS) from each cell centre of `grid` to the nearest feature.

    Features (lines, polygons, in the grid's CRS) are burnt with all touched cells, so cells a line
    crosses or a polygon covers are at 0; the Euclidean distance transform uses the pixel width and
    height, so non-square pixels measure right. Features up to a quarter of the grid beyond its edge
    still count.
    """
    shapes = [g for g in geometries if g is not None and not g.is_empty]
    if not shapes:
        raise LodestarError("There are no features to measure distances from; give a layer with fault lines.")
    width, height = grid.pixel_size
    left, right, top, bottom = feature_pads(shapes, grid)
    transform = grid.transform * grid.transform.translation(-left, -top)
    burnt = rasterize(((g, 1) for g in shapes), out_shape=(grid.height + top + bottom, grid.width + left + right),
                      transform=transform, fill=0, all_touched=True, dtype="uint8")
    if not burnt.any():
        raise LodestarError("No feature lies on or near the analysis area; check the layer's extent and CRS.")
    distance = ndimage.distance_transform_edt(burnt == 0, sampling=(height, width))
    return distance[top:top + grid.height, left:left + grid.width].astype("float32")


def unit_membership(codes, legend: dict, favourable, outside: float = 0.0, blank: int | None = None
                    ) -> np.ma.MaskedArray:
    """1 on cells of a unit matching `favourable` (see `matched_units`), `outside` on the other units.

    `codes` are integer unit codes (masked where there is no data), `legend` names them
    ({code: name}; a code missing from it goes by the code itself); `blank`: a code that is no unit (ground no
    polygon of a map holds), never matched and scored `outside`. No match at all is an error that lists the units
    present.
    """
    data = np.ma.masked_invalid(np.ma.array(codes, dtype="float64"))
    present = np.unique(np.rint(data.compressed())).astype(int)
    names = {int(c): legend.get(int(c), str(int(c))) for c in present if c != blank}
    selected = matched_units(names, favourable)
    if not selected:
        raise LodestarError(f"None of the favourable units {', '.join(map(str, favourable))} is in this map; "
                            f"units present: {', '.join(sorted(set(names.values())))}.")
    hit = np.isin(np.rint(data.filled(-1)).astype(int), list(selected))
    return _out(np.where(hit, 1.0, float(outside)), np.ma.getmaskarray(data))
