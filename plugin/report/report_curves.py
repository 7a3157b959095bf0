"""The report's success-rate plot: each surface's curve (from the record's validation rows) and the targets'
polygons (from the record's metrics) against the chance line, over the whole area and over its top 20 %.

A curve fitted on the deposits it is scored against is drawn dashed and labelled "not a skill figure".
"""
from __future__ import annotations

from pathlib import Path

from ..decisions import CORE
from ..files import PNG_OPTIONS, atomic_path

WIDTH_PX = 900
HEIGHT_PX = 430
DPI = 100
STYLES = {
    "cv": {"color": "#1b6ca8", "linestyle": "-", "linewidth": 2.2},
    "knowledge": {"color": "#2a9d3f", "linestyle": "-", "linewidth": 2.0},
    "equal_weight": {"color": "#ef6c00", "linestyle": "-.", "linewidth": 1.4},
    "fitted": {"color": "#8c8c8c", "linestyle": "--", "linewidth": 1.6},
    "targets": {"color": "#e8112d", "linestyle": "-", "linewidth": 1.4},
}
# decision numbers: their reasons and provenance are in plugin/decisions.py
SHARES = CORE.scored_shares


def draw_curves(series: list, path) -> Path:
    """Draw success-rate curves: `series` holds (key, label, points) with key one of STYLES and points
    [(area share, deposit share), ...] from (0, 0); a curve that stops short of an area share of 1 is
    closed to (1, 1) with a dotted line (the unranked rest of the area)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(WIDTH_PX / DPI, HEIGHT_PX / DPI), dpi=DPI)
    FigureCanvasAgg(figure)
    whole, top = figure.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1]})
    for axes, limit in ((whole, 1.0), (top, 0.2)):
        axes.plot([0, limit], [0, limit], color="#444444", linestyle=":", linewidth=1.0, label="chance")
        for share in SHARES:
            if share < limit:
                axes.axvline(share, color="#dddddd", linewidth=0.8, zorder=0)
        for key, label, points in series:
            xs, ys = [p[0] for p in points], [p[1] for p in points]
            axes.plot(xs, ys, label=label, **STYLES[key])
            if xs and xs[-1] < 1.0:
                axes.plot([xs[-1], 1.0], [ys[-1], 1.0], color=STYLES[key]["color"], linestyle=":", linewidth=1.0)
        axes.set_xticks([0, 0.2, 0.4, 0.6, 0.8, 1.0] if limit == 1.0 else [0, 0.02, 0.05, 0.1, 0.15, 0.2])
        axes.set_xlim(0, limit)
        axes.set_ylim(0, 1.01)
        axes.set_xlabel("share of the analysed area (most favourable first)")
        axes.xaxis.set_major_formatter(_percent())
        axes.yaxis.set_major_formatter(_percent())
    whole.set_ylabel("share of known deposits")
    whole.set_title("whole area", fontsize=10)
    top.set_title("top 20 % of the area", fontsize=10)
    handles, labels = whole.get_legend_handles_labels()
    figure.legend(handles, labels, loc="upper center", ncol=min(3, len(labels)), frameon=False, fontsize=9)
    figure.subplots_adjust(left=0.08, right=0.98, bottom=0.12, top=0.80, wspace=0.18)
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=DPI, metadata={"Software": None}, pil_kwargs=PNG_OPTIONS)
    return Path(path)


def _percent():
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda value, _: f"{value * 100:g} %")
