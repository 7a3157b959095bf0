"""The report's prospectivity map: the favourability surface in the dock's five classes (plugin/map_classes.py)
with their legend, the targets outlined and the best LABELLED labelled with their rank, known deposits as crosses,
a coordinate grid with the CRS named, a scale bar and a north arrow.

Drawn with matplotlib (Agg) from the written GeoTIFF and the targets' GeoPackage, about 900 pixels wide.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import LodestarError
from ..files import PNG_OPTIONS, atomic_path
from ..map_classes import class_index, favourability_classes
from ..raster_io import RasterReader, crs_label
from ..vector_io import read_vector

WIDTH_PX = 900
DPI = 100
NODATA_COLOUR = "#d4d4d4"
TARGET_COLOUR = "#e8112d"
LABELLED = 10
"""Targets labelled with their rank on the map (all are outlined)."""

_MAX_PIXELS = 1_500_000
_MARGIN = {"left": 86, "right": 180, "top": 58, "bottom": 104}
_MAX_MAP_HEIGHT = 900


def output_file(record: dict, folder: Path, name: str) -> Path | None:
    """The path of a run output named in the record (None when it was not written or is gone)."""
    entry = (record.get("outputs") or {}).get(name)
    path = Path(folder) / entry["file"] if entry else None
    return path if path is not None and path.exists() else None


def deposit_xy(record: dict, crs) -> tuple[list, str]:
    """(x, y) of the run's known deposits in `crs`, and a note when they could not be read."""
    deposits = (record.get("parameters") or {}).get("deposits")
    if not deposits:
        return [], ""
    from ..evaluation import deposit_coordinates

    try:
        return list(map(tuple, deposit_coordinates(deposits, crs, []).tolist())), ""
    except LodestarError as exc:
        return [], f"The known deposits are not drawn: {exc}"


def draw_record_map(record: dict, folder: Path, path: Path, title: str) -> tuple[Path | None, str]:
    """The map of a run's favourability surface written to `path`: (path or None, note for the reader)."""
    surface = output_file(record, folder, "favourability")
    if surface is None:
        return None, "No favourability surface was written (no layer could be turned into evidence)."
    targets_file = output_file(record, folder, "prospectivity")
    targets = read_vector(targets_file) if targets_file is not None else None
    reader = RasterReader(surface)
    points, note = deposit_xy(record, reader.grid.crs)
    share = (record.get("parameters", {}).get("favourability") or {}).get("area_share")
    draw_map(reader, path, targets=targets, points=points, title=title, area_share=share)
    return path, note


def draw_map(reader: RasterReader, path, *, targets=None, points=(), title: str = "Favourability",
             area_share: float | None = None) -> Path:
    """Draw the surface of `reader` (0-1) with the targets (a GeoDataFrame with `rank`) and deposit points."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import BoundaryNorm, ListedColormap
    from matplotlib.figure import Figure

    data, grid = reader.read_overview(_MAX_PIXELS, bands=[1])
    values = np.ma.masked_invalid(data[0])
    classes = favourability_classes()
    xmin, ymin, xmax, ymax = grid.bounds
    map_w, map_h = _map_size(xmax - xmin, ymax - ymin)
    fig_h = map_h + _MARGIN["top"] + _MARGIN["bottom"]
    figure = Figure(figsize=(WIDTH_PX / DPI, fig_h / DPI), dpi=DPI)
    FigureCanvasAgg(figure)
    left = _MARGIN["left"] + (WIDTH_PX - _MARGIN["left"] - _MARGIN["right"] - map_w) / 2
    axes = figure.add_axes((left / WIDTH_PX, _MARGIN["bottom"] / fig_h, map_w / WIDTH_PX, map_h / fig_h))
    cmap = ListedColormap([c.colour for c in classes]).with_extremes(bad=NODATA_COLOUR)
    norm = BoundaryNorm(np.arange(len(classes) + 1) - 0.5, len(classes))
    shown = axes.imshow(class_index(values, classes), cmap=cmap, norm=norm, extent=(xmin, xmax, ymin, ymax),
                        interpolation="nearest", origin="upper")
    axes.set_xlim(xmin, xmax)
    axes.set_ylim(ymin, ymax)
    _coordinate_grid(axes, grid)
    n_targets = _draw_targets(axes, targets) if targets is not None and len(targets) else 0
    if len(points):
        xy = np.asarray(points, dtype=float)
        axes.scatter(xy[:, 0], xy[:, 1], marker="P", s=75, facecolors="white", edgecolors="black", linewidths=1.0,
                     zorder=6)
    box = (left / WIDTH_PX, _MARGIN["bottom"] / fig_h, map_w / WIDTH_PX, map_h / fig_h)
    across = _scale_bar(figure, axes, grid, box)
    bar_left = (left + map_w + 22) / WIDTH_PX
    if grid.crs is not None:
        _north_arrow(figure, bar_left + 9 / WIDTH_PX, 1.0)
    bar = figure.add_axes((bar_left, _MARGIN["bottom"] / fig_h, 18 / WIDTH_PX, map_h / fig_h))
    legend = figure.colorbar(shown, cax=bar, ticks=range(len(classes)))
    legend.ax.set_yticklabels([c.label for c in classes], fontsize=9)
    legend.set_label("favourability class", fontsize=11)
    figure.text(_MARGIN["left"] / WIDTH_PX, 1 - 22 / fig_h, title, fontsize=13, weight="bold", va="center")
    figure.text(_MARGIN["left"] / WIDTH_PX, 1 - 44 / fig_h, _subtitle(across, n_targets, len(points), area_share),
                fontsize=10, va="center", color="#333333")
    _legend(figure, n_targets, len(points), bool(np.ma.getmaskarray(values).any()))
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=DPI, metadata={"Software": None}, pil_kwargs=PNG_OPTIONS)
    return Path(path)


def axis_names(crs) -> tuple[str, str]:
    """The map axes' names with their unit: easting / northing in the CRS's unit, longitude / latitude in degrees,
    columns / rows in pixel space."""
    if crs is None:
        return "column (pixels)", "row (pixels)"
    if crs.is_geographic:
        return "longitude (°)", "latitude (°)"
    unit = crs.axis_info[0].unit_name if crs.axis_info else "metre"
    unit = "m" if unit in ("metre", "meter") else unit
    return f"easting ({unit})", f"northing ({unit})"


def _coordinate_grid(axes, grid) -> None:
    """Coordinates along the map's edges with light grid lines across it, and the CRS named under it."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    for axis in (axes.xaxis, axes.yaxis):
        axis.set_major_locator(MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]))
        axis.set_major_formatter(FuncFormatter(_coordinate))
    axes.tick_params(labelsize=8, length=3, color="#555555")
    axes.tick_params(axis="y", labelrotation=90)
    for label in axes.get_yticklabels():
        label.set_verticalalignment("center")
    axes.grid(True, color="white", alpha=0.55, linewidth=0.6, linestyle="--")
    x_name, y_name = axis_names(grid.crs)
    axes.set_xlabel(f"{x_name}; coordinates in {crs_name(grid.crs)}", fontsize=9)
    axes.set_ylabel(y_name, fontsize=9)


def crs_name(crs) -> str:
    """The CRS as a reader names it: 'EPSG:28350 (GDA94 / MGA zone 50)'; pixel space said so."""
    label = crs_label(crs)
    return label if crs is None or label == crs.name else f"{label} ({crs.name})"


def _coordinate(value: float, _position=None) -> str:
    """A coordinate on the map's edge: whole units with thousands separators, decimals only when needed."""
    text = f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.4f}".rstrip("0").rstrip(".")
    return text.replace("-", "\u2212")


def _map_size(width: float, height: float) -> tuple[int, int]:
    """Map panel size in pixels: as wide as the figure allows, no taller than _MAX_MAP_HEIGHT."""
    map_w = WIDTH_PX - _MARGIN["left"] - _MARGIN["right"]
    aspect = height / width if width > 0 else 1.0
    map_h = map_w * aspect
    if map_h > _MAX_MAP_HEIGHT:
        map_h = _MAX_MAP_HEIGHT
        map_w = map_h / aspect
    return int(round(map_w)), int(round(map_h))


def _draw_targets(axes, targets) -> int:
    """Outline every target; label the best-ranked LABELLED with their rank, labels kept apart."""
    from matplotlib.collections import LineCollection

    rings = []
    for geometry in targets.geometry:
        for polygon in getattr(geometry, "geoms", [geometry]):
            rings.append(np.asarray(polygon.exterior.coords)[:, :2])
            rings.extend(np.asarray(hole.coords)[:, :2] for hole in polygon.interiors)
    axes.add_collection(LineCollection(rings, colors=TARGET_COLOUR, linewidths=1.3, zorder=4))
    placed: list = []
    for row in targets.sort_values("rank").head(LABELLED).itertuples():
        anchor = row.geometry.representative_point()
        _label(axes, (anchor.x, anchor.y), str(int(row.rank)), placed)
    return len(targets)


_OFFSETS = ((9, 9), (9, -19), (-23, 9), (-23, -19), (18, -5), (-32, -5), (0, 22), (0, -30))


def _label(axes, xy, text: str, placed: list) -> None:
    """A rank label near `xy`, at the first offset (pixels) that keeps it inside the map and 18 pixels from the
    labels placed before (else the first offset inside the map)."""
    x, y = axes.transData.transform(xy)
    box = axes.get_window_extent()
    inside = [(dx, dy) for dx, dy in _OFFSETS
              if box.x0 + 2 <= x + dx and x + dx + 22 <= box.x1 and box.y0 + 2 <= y + dy and y + dy + 18 <= box.y1]
    candidates = inside or list(_OFFSETS)
    dx, dy = next((o for o in candidates if all((x + o[0] - px) ** 2 + (y + o[1] - py) ** 2 >= 18 ** 2
                                                for px, py in placed)), candidates[0])
    placed.append((x + dx, y + dy))
    axes.annotate(text, xy=xy, xytext=(dx, dy), textcoords="offset pixels", fontsize=10, weight="bold",
                  color="black", zorder=7, bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": TARGET_COLOUR,
                                                 "lw": 1.0},
                  arrowprops={"arrowstyle": "-", "color": "black", "lw": 0.8})


def _metres_per_unit(grid) -> float | None:
    """Metres per map unit of the grid's CRS (degrees at the grid's mid latitude); None in pixel space."""
    crs = grid.crs
    if crs is None:
        return None
    if crs.is_geographic:
        mid = (grid.bounds[1] + grid.bounds[3]) / 2
        return 111_320.0 * max(0.01, float(np.cos(np.radians(mid))))
    return float(crs.axis_info[0].unit_conversion_factor) if crs.axis_info else 1.0


def _scale_bar(figure, axes, grid, box: tuple) -> float | None:
    """A scale bar in km below the map's lower left corner; returns the map's width in km (None in pixel
    space). `box`: the map panel (left, bottom, width, height) in figure fractions."""
    per_unit = _metres_per_unit(grid)
    if per_unit is None:
        return None
    xmin, _, xmax, _ = grid.bounds
    across_km = (xmax - xmin) * per_unit / 1000.0
    step_km = _bar_length(across_km / 4)
    left, bottom, width, _ = box
    bar = figure.add_axes((left, bottom - 94 / figure.bbox.height, width, 30 / figure.bbox.height))
    bar.set_xlim(xmin, xmax)
    bar.set_ylim(0, 1)
    bar.axis("off")
    length = step_km * 1000.0 / per_unit
    bar.plot([xmin, xmin + length], [0.25, 0.25], color="black", linewidth=4, solid_capstyle="butt")
    for x in (xmin, xmin + length):
        bar.plot([x, x], [0.1, 0.4], color="black", linewidth=1.2)
    bar.text(xmin + length / 2, 0.55, f"{_km(step_km)} km", ha="center", va="bottom", fontsize=10)
    return across_km


def _bar_length(limit_km: float) -> float:
    """The longest 1-2-5 x 10^k length not above `limit_km`."""
    power = 10.0 ** np.floor(np.log10(limit_km)) if limit_km > 0 else 1.0
    return float(max(f * power for f in (1, 2, 5) if f * power <= max(limit_km, power)))


def _north_arrow(figure, x: float, top: float) -> None:
    """A north arrow in the figure's top margin at figure fraction x (the analysis grids are north-up)."""
    figure.text(x, top - 12 / figure.bbox.height, "N", ha="center", va="top", fontsize=11, weight="bold")
    figure.patches.append(_arrow(figure, x, top))


def _arrow(figure, x: float, top: float):
    from matplotlib.patches import FancyArrow

    height = figure.bbox.height
    return FancyArrow(x, top - 50 / height, 0, 24 / height, width=2.5 / figure.bbox.width,
                      head_width=10 / figure.bbox.width, head_length=8 / height, length_includes_head=True,
                      color="black", transform=figure.transFigure, figure=figure)


def _km(value: float) -> str:
    return f"{value:g}"


def _subtitle(across_km, n_targets: int, n_points: int, area_share) -> str:
    parts = [f"about {_km(round(across_km, 1 if across_km < 10 else 0))} km across" if across_km
             else "pixel space (not georeferenced)"]
    if n_targets:
        top = f" from the top {area_share * 100:g} % of the area" if area_share else ""
        shown = f"ranks 1-{min(n_targets, LABELLED)} labelled" if n_targets > 1 else "rank 1 labelled"
        parts.append(f"{n_targets} target(s){top}, {shown}")
    if n_points:
        parts.append(f"{n_points} known deposit(s)")
    return "; ".join(parts)


def _legend(figure, n_targets: int, n_points: int, has_nodata: bool) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = []
    if n_targets:
        handles.append(Line2D([], [], color=TARGET_COLOUR, lw=1.6, label="target, labelled by rank"))
    if n_points:
        handles.append(Line2D([], [], marker="P", markersize=9, markerfacecolor="white", markeredgecolor="black",
                              linestyle="", label="known deposit"))
    if has_nodata:
        handles.append(Patch(facecolor=NODATA_COLOUR, edgecolor="#999999", label="outside the analysed area"))
    if handles:
        figure.legend(handles=handles, loc="lower right", ncol=len(handles), frameon=False, fontsize=10,
                      bbox_to_anchor=(1.0, 0.0))
