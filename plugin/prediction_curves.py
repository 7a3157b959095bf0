"""The validation curves of a favourability surface against known deposits: the success-rate curve, the ROC curve
and the prediction-area (P-A) plot, as one table over value thresholds, with a PNG of the three.

At each threshold t (the surface's value levels, highest first): area_share = share of the analysed cells with a
value >= t; deposit_share (prediction rate, true-positive rate) = share of the deposits inside the analysed area on
such cells; false_positive_rate = share of the cells without a deposit >= t. The success-rate AUC is
evaluation.evaluate_surface's (exact, ties shared out); the ROC AUC is the trapezoid area under (false-positive
rate, deposit share). The P-A crossing is where the prediction rate meets the area left (deposit_share = 1 -
area_share): 'x % of the deposits in 100 - x % of the area'.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .csv_table import write_csv
from .errors import LodestarError
from .evaluation import cells_of, evaluate_surface
from .files import PNG_OPTIONS, atomic_path
from .raster_io import RasterGrid

LEVELS = 200
"""Thresholds drawn: the surface's distinct values when no more than this, else this many quantiles and the
deposits' own values."""
COLUMNS = ("threshold", "area_share", "deposits_found", "deposit_share", "false_positive_rate")


def prediction_curves(values: np.ma.MaskedArray, grid: RasterGrid, deposit_xy, levels: int = LEVELS) -> dict:
    """{"rows": the table (COLUMNS), "auc": success-rate AUC, "roc_auc", "crossing": {threshold, area_share,
    deposit_share} or None, "inside", "outside"} of a surface (masked or NaN cells are not analysed area)."""
    values = np.ma.masked_invalid(np.ma.asarray(values, dtype=float))
    valid = ~np.ma.getmaskarray(values)
    if not valid.any():
        raise LodestarError("The surface has no valid cells: nothing to evaluate.")
    metrics = evaluate_surface(values, grid, deposit_xy, curve=False)
    rows_, cols_, inside = cells_of(deposit_xy, grid, valid)
    if not inside.any():
        raise LodestarError(f"None of the {len(inside)} known deposits lies on the surface's analysed cells; check "
                            "the deposits' extent and CRS.")
    filled = np.asarray(values.filled(np.nan), dtype=float)
    cells = filled[valid]
    deposit_values = np.sort(filled[rows_[inside], cols_[inside]])
    hit = np.zeros(filled.shape, dtype=bool)
    hit[rows_[inside], cols_[inside]] = True
    barren = np.sort(filled[valid & ~hit])
    distinct = np.unique(cells)
    thresholds = distinct if len(distinct) <= levels else np.unique(np.concatenate([
        np.quantile(cells, np.linspace(0, 1, levels)), deposit_values]))  # a step at each deposit: the ROC AUC exact
    thresholds = thresholds[::-1]
    ordered = np.sort(cells)
    area = (len(ordered) - np.searchsorted(ordered, thresholds, side="left")) / len(ordered)
    found = len(deposit_values) - np.searchsorted(deposit_values, thresholds, side="left")
    share = found / len(deposit_values)
    fpr = (len(barren) - np.searchsorted(barren, thresholds, side="left")) / max(len(barren), 1)
    rows = [{"threshold": float(t), "area_share": float(a), "deposits_found": int(f), "deposit_share": float(s),
             "false_positive_rate": float(r)} for t, a, f, s, r in zip(thresholds, area, found, share, fpr)]
    x, y = np.concatenate([[0.0], fpr, [1.0]]), np.concatenate([[0.0], share, [1.0]])
    roc_auc = float(np.sum(np.diff(x) * (y[1:] + y[:-1]) / 2.0))
    return {"rows": rows, "auc": metrics["auc"], "roc_auc": roc_auc, "crossing": _crossing(rows),
            "inside": int(inside.sum()), "outside": int((~inside).sum())}


def _crossing(rows: list) -> dict | None:
    """The first threshold (highest first) at which the prediction rate reaches the area left, interpolated."""
    previous = None
    for row in rows:
        gap = row["deposit_share"] - (1.0 - row["area_share"])
        if gap >= 0:
            if previous is None:
                return {"threshold": row["threshold"], "area_share": row["area_share"],
                        "deposit_share": row["deposit_share"]}
            before = previous["deposit_share"] - (1.0 - previous["area_share"])
            f = -before / (gap - before) if gap != before else 1.0
            area = previous["area_share"] + f * (row["area_share"] - previous["area_share"])
            return {"threshold": previous["threshold"] + f * (row["threshold"] - previous["threshold"]),
                    "area_share": area, "deposit_share": 1.0 - area}
        previous = row
    return None


def write_curves_csv(curves: dict, path) -> Path:
    """The curves' table as CSV (COLUMNS), one row per threshold, highest first."""
    return write_csv(path, list(COLUMNS), [{k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()}
                                           for row in curves["rows"]])


def plot_curves(curves: dict, path, title: str = "") -> Path:
    """A PNG of the success-rate curve, the ROC curve and the prediction-area plot side by side."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = curves["rows"]
    area = [0.0] + [r["area_share"] for r in rows]
    share = [0.0] + [r["deposit_share"] for r in rows]
    fpr = [0.0] + [r["false_positive_rate"] for r in rows]
    figure = Figure(figsize=(13, 4.4), dpi=100)
    FigureCanvasAgg(figure)
    success, roc, pa = (figure.add_subplot(1, 3, k) for k in (1, 2, 3))
    for axes, xs, label, auc in ((success, area, "share of the analysed area", curves["auc"]),
                                 (roc, fpr, "false-positive rate", curves["roc_auc"])):
        axes.plot([0, 1], [0, 1], linestyle="--", color="grey", label="chance")
        axes.plot(xs + [1.0], share + [1.0], color="firebrick", label=f"AUC {auc:.3f}")
        axes.set_xlim(0, 1)
        axes.set_ylim(0, 1.02)
        axes.set_xlabel(label)
        axes.set_ylabel("share of known deposits")
        axes.legend(loc="lower right", fontsize=8)
    success.set_title("Success rate", fontsize=10)
    roc.set_title("ROC", fontsize=10)
    thresholds = [r["threshold"] for r in rows]
    pa.plot(thresholds, [r["deposit_share"] for r in rows], color="firebrick", label="prediction rate (deposits)")
    pa.plot(thresholds, [1.0 - r["area_share"] for r in rows], color="steelblue", label="area left (100 % - area)")
    crossing = curves["crossing"]
    if crossing:
        pa.axvline(crossing["threshold"], color="grey", linestyle=":")
        pa.set_title(f"P-A: {100 * crossing['deposit_share']:.0f} % of deposits in "
                     f"{100 * crossing['area_share']:.0f} % of area", fontsize=10)
    else:
        pa.set_title("Prediction-area", fontsize=10)
    pa.set_xlabel("favourability threshold")
    pa.set_ylabel("share")
    pa.set_ylim(0, 1.02)
    pa.legend(loc="center left", fontsize=8)
    if title:
        figure.suptitle(title, fontsize=11)
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", pil_kwargs=PNG_OPTIONS)
    return Path(path)
