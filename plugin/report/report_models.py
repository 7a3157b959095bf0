"""The report's figure of a model fitted on known deposits: each layer's response (the full fit's favourability
across the layer's values, or per unit) and the uncertainty map (`uncertainty.tif`), from the record's
calibration section and the run's outputs."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..files import PNG_OPTIONS, atomic_path
from ..raster_io import RasterReader
from .report_map import output_file

WIDTH_PX = 900
PANEL_PX = 230
DPI = 100
MAX_PANELS = 6
"""Response panels drawn, by the layers' order in the record; all are in the record and the report's table."""
_MAX_PIXELS = 400_000


def draw_model_figure(record: dict, folder: Path, path: Path) -> Path | None:
    """Draw the responses and the uncertainty map into `path` (None when the run fitted no model)."""
    calibration = (record.get("favourability") or {}).get("calibration") or {}
    responses = [(layer, curve) for layer, curve in (calibration.get("responses") or {}).items() if curve]
    if not responses:
        return None
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    responses = responses[:MAX_PANELS]
    uncertainty = output_file(record, Path(folder), "uncertainty")
    panels = len(responses) + (1 if uncertainty is not None else 0)
    columns = min(panels, 3)
    rows = -(-panels // columns)
    figure = Figure(figsize=(WIDTH_PX / DPI, rows * PANEL_PX / DPI), dpi=DPI)
    FigureCanvasAgg(figure)
    grid = figure.add_gridspec(rows, columns)
    for k, (layer, curve) in enumerate(responses):
        axes = figure.add_subplot(grid[k // columns, k % columns])
        _response(axes, layer, curve)
    if uncertainty is not None:
        axes = figure.add_subplot(grid[len(responses) // columns, len(responses) % columns])
        _uncertainty(figure, axes, uncertainty, str(calibration.get("uncertainty") or "uncertainty"))
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=DPI, metadata={"Software": None}, pil_kwargs=PNG_OPTIONS)
    return Path(path)


def _response(axes, layer: str, curve: list) -> None:
    """A line over the layer's values, or bars per unit, of the fit's mean favourability."""
    favourability = [float(c["favourability"]) for c in curve]
    if "unit" in curve[0]:
        names = [_short(str(c["unit"])) for c in curve]
        axes.barh(range(len(names)), favourability, color="#1b6ca8")
        axes.set_yticks(range(len(names)))
        axes.set_yticklabels(names, fontsize=7)
        axes.invert_yaxis()
        axes.set_xlim(0, 1)
        axes.set_xlabel("favourability", fontsize=8)
    else:
        axes.plot([float(c["value"]) for c in curve], favourability, marker="o", markersize=3, color="#1b6ca8")
        axes.set_ylim(0, 1)
        axes.set_ylabel("favourability", fontsize=8)
        axes.set_xlabel("value (its 11 quantiles)", fontsize=8)
    axes.set_title(_short(layer, 40), fontsize=9)
    axes.tick_params(labelsize=7)


def _uncertainty(figure, axes, path: Path, label: str) -> None:
    data, grid = RasterReader(path).read_overview(_MAX_PIXELS, bands=[1])
    values = np.ma.masked_invalid(np.ma.masked_less(data[0], 0))
    xmin, ymin, xmax, ymax = grid.bounds
    shown = axes.imshow(values, cmap="Greys", extent=(xmin, xmax, ymin, ymax), interpolation="nearest",
                        origin="upper")
    axes.set_xticks([])
    axes.set_yticks([])
    axes.set_title("uncertainty", fontsize=9)
    bar = figure.colorbar(shown, ax=axes, fraction=0.046, pad=0.04)
    bar.ax.tick_params(labelsize=7)
    axes.set_xlabel(_short(label, 44), fontsize=7)


def _short(text: str, limit: int = 24) -> str:
    """Text cut in the middle to `limit` characters."""
    if len(text) <= limit:
        return text
    half = (limit - 1) // 2
    return text[:half] + "…" + text[-(limit - 1 - half):]
