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
    weights, the cells of its first prediction (the one scored out of fold, in the inner or the outer loop) and of
    every prediction (an inner fit is scored for each outer fold it serves). Fits are recorded as they are made,
    in threads (calibration.FOLD_WORKERS): their order is not the calibration's."""

    def __init__(self, monkeypatch):
        self.fits = []
        real = calibration.fit_model

        def fit(method, columns, x, deposits, weight, params, *args, **kwargs):
            model = real(method, columns, x, deposits, weight, params, *args, **kwargs)
            record = {"seen": x[:, 0].astype(int), "deposits": float(deposits.sum()), "weight": weight,
                      "params": dict(params), "predicted": None, "predictions": []}
            self.fits.append(record)
            predict = model.predict

            def recorded(rows):
                if record["predicted"] is None:
                    record["predicted"] = rows[:, 0].astype(int)
                record["predictions"].append(rows[:, 0].astype(int))
                return predict(rows)

            model.predict = recorded
            return model

        monkeypatch.setattr(calibration, "fit_model", fit)


def outer_fits(spy: FitSpy, fold: np.ndarray) -> list:
    """Positions in spy.fits of the outer models: each one's first prediction is the whole of one fold."""
    return [i for i, fit in enumerate(spy.fits)
            if fit["predicted"] is not None and len(set(fold[fit["predicted"]])) == 1
            and set(fit["predicted"]) == set(np.flatnonzero(fold == fold[fit["predicted"][0]]))]


def check_nested(spy: FitSpy, cal, method: str, candidates, n_folds: int) -> None:
    """The fits of a calibration of `method` on cell ids (the spy's first column) over `n_folds` folds, with
    hyperparameter `candidates`: fold k's outer model saw every other fold and no cell of fold k; with more than one
    candidate, for each outer fold k and each inner group g of its training folds (alternate folds grouped), each
    candidate was fitted once on the training folds outside g (no cell of k or of g) and predicted g's cells; the
    full fit saw every fold, with the candidate the outer folds took most often (ties to the earlier), and nothing
    else was fitted."""
    fold = cal.folds.fold.ravel()
    outer = outer_fits(spy, fold)
    assert sorted(int(fold[spy.fits[i]["predicted"][0]]) for i in outer) == list(range(n_folds))
    for i in outer:
        fit = spy.fits[i]
        k = int(fold[fit["predicted"][0]])
        assert set(fold[fit["seen"]]) == set(range(n_folds)) - {k}
        assert fit["deposits"] == 9 - cal.folds.deposits_per_fold[k]
    full = [i for i, fit in enumerate(spy.fits) if set(fold[fit["seen"]]) == set(range(n_folds))]
    assert len(full) == 1 and spy.fits[full[0]]["deposits"] == 9
    taken = cal.out_of_fold[method]["params"]
    assert taken == [spy.fits[i]["params"] for i in sorted(outer, key=lambda i: fold[spy.fits[i]["predicted"][0]])]
    assert spy.fits[full[0]]["params"] == max(taken, key=lambda p: (taken.count(p), -list(candidates).index(p)))
    inner = {}
    for i, fit in enumerate(spy.fits):
        if i not in outer and i not in full:
            key = (tuple(sorted(set(fold[fit["seen"]].tolist()))), tuple(sorted(fit["params"].items())))
            assert key not in inner  # each candidate fitted once on a set of folds
            inner[key] = fit
    wanted = set()
    if len(candidates) > 1:
        for k in range(n_folds):
            train = [j for j in range(n_folds) if j != k]
            for group in (train[0::2], train[1::2]):
                rest = tuple(j for j in train if j not in group)
                for params in candidates:
                    key = (rest, tuple(sorted(dict(params).items())))
                    fit = inner[key]
                    assert not set(fold[fit["seen"]]) & ({k} | set(group))
                    assert any(set(fold[cells]) == set(group) for cells in fit["predictions"])
                    wanted.add(key)
    assert set(inner) == wanted
