"""The small calibration case the calibration tests share: a 20 x 20 grid of 1 km cells (EPSG:32633), 9 deposits
(6 in rows 0-3, the pattern B), layer makers, and a spy on every model fit."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from affine import Affine
from pyproj import CRS

from lodestar.plugin.favourability import calibration
from lodestar.plugin.favourability.measured import MeasuredLayer
from lodestar.plugin.raster_io import RasterGrid

UTM = CRS.from_epsg(32633)
GRID = RasterGrid(Affine(1000, 0, 500_000, 0, -1000, 4_020_000), 20, 20, UTM)
CELLS = [(0, 1), (1, 7), (2, 12), (3, 18), (0, 15), (2, 4), (10, 3), (14, 10), (18, 16)]  # 6 in B, 3 outside
SKLEARN = importlib.util.find_spec("sklearn") is not None
sklearn = pytest.mark.skipif(not SKLEARN, reason="scikit-learn (optional) is not installed")


def grid(n: int, pixel: float = 1000.0, crs=UTM) -> RasterGrid:
    return RasterGrid(Affine(pixel, 0, 500_000, 0, -pixel, 4_000_000 + n * pixel), n, n, crs)


def xy(cells, n: int = 20, pixel: float = 1000.0) -> list:
    return [(500_000 + (c + 0.5) * pixel, 4_000_000 + n * pixel - (r + 0.5) * pixel) for r, c in cells]


def ordered(name: str, values, favourable: str = "high", units: str = "") -> MeasuredLayer:
    return MeasuredLayer(name, "ordered", np.ma.masked_array(values, dtype=float), units, favourable, {})


def pattern() -> np.ma.MaskedArray:
    values = np.zeros((20, 20))
    values[:4] = 1
    return np.ma.masked_array(values)


def counts_of(cells, n: int = 20) -> np.ndarray:
    counts = np.zeros((n, n))
    for r, c in cells:
        counts[r, c] += 1
    return counts


def categorical(name: str, codes, legend: dict | None = None) -> MeasuredLayer:
    return MeasuredLayer(name, "categorical", np.ma.masked_array(codes, dtype=float), "unit", "", legend or {})


class FitSpy:
    """Records, for every fit, the cells it was given (from the first column: each cell's id), its deposits and
    weights, and the cells of its first prediction (the one scored out of fold, in the inner or the outer loop)."""

    def __init__(self, monkeypatch):
        self.fits = []
        real = calibration.fit_model

        def fit(method, columns, x, deposits, weight, params, *args, **kwargs):
            model = real(method, columns, x, deposits, weight, params, *args, **kwargs)
            record = {"seen": x[:, 0].astype(int), "deposits": float(deposits.sum()), "weight": weight,
                      "params": dict(params), "predicted": None}
            self.fits.append(record)
            predict = model.predict

            def recorded(rows):
                if record["predicted"] is None:
                    record["predicted"] = rows[:, 0].astype(int)
                return predict(rows)

            model.predict = recorded
            return model

        monkeypatch.setattr(calibration, "fit_model", fit)
