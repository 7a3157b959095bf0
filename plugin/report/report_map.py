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
from ..labels import plural
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
_MAX_MAP_HEIGHT = 900
_PAD, _GAP = 10, 8
"""Pixels between the figure's edge and its parts, and between two parts."""
_BAR_PX, _ARROW_PX, _SCALE_PX = 18, 46, 32
"""The colour bar's width, the north arrow's height and the scale bar's height, in pixels."""
_MIN_MAP_PX = 120
"""The narrowest the map is drawn (a study area 20 times as tall as wide: the figure grows instead)."""
_TICK_FONT, _TICK_PAD = 8, 7
"""The coordinates' font size, and the pixels of their tick and its gap."""


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
    figure, _ = map_figure(reader, targets=targets, points=points, title=title, area_share=area_share)
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=DPI, metadata={"Software": None}, pil_kwargs=PNG_OPTIONS)
    return Path(path)


def map_figure(reader: RasterReader, *, targets=None, points=(), title: str = "Favourability",
               area_share: float | None = None) -> tuple:
    """(the map's matplotlib Figure, {part: [its artists]}) of `draw_map`, laid out in WIDTH_PX pixels by the
    measured size of every part, so that none overlaps another or leaves the figure whatever the map's shape
    (`MapLayout`): title and subtitle above; the map with its coordinates and, on its right, the north arrow over
    the colour bar with its class labels and title; the CRS, the scale bar and the legend below."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import BoundaryNorm, ListedColormap
    from matplotlib.figure import Figure

    data, grid = reader.read_overview(_MAX_PIXELS, bands=[1])
    values = np.ma.masked_invalid(data[0])
    classes = favourability_classes()
    xmin, ymin, xmax, ymax = grid.bounds
    figure = Figure(figsize=(WIDTH_PX / DPI, WIDTH_PX / DPI), dpi=DPI)
    FigureCanvasAgg(figure)
    axes = figure.add_axes((0.1, 0.1, 0.6, 0.6))
    cmap = ListedColormap([c.colour for c in classes]).with_extremes(bad=NODATA_COLOUR)
    norm = BoundaryNorm(np.arange(len(classes) + 1) - 0.5, len(classes))
    shown = axes.imshow(class_index(values, classes), cmap=cmap, norm=norm, extent=(xmin, xmax, ymin, ymax),
                        interpolation="nearest", origin="upper", aspect="auto")
    axes.set_xlim(xmin, xmax)
    axes.set_ylim(ymin, ymax)
    _coordinate_grid(axes, grid)
    bar = figure.add_axes((0.8, 0.1, 0.02, 0.6))
    colours = figure.colorbar(shown, cax=bar, ticks=range(len(classes)))
    colours.ax.set_yticklabels([c.label for c in classes], fontsize=9)
    colours.set_label("favourability class", fontsize=11)
    n_targets = len(targets) if targets is not None else 0
    across = _across_km(grid)
    parts = {
        "title": [figure.text(0, 0, title, fontsize=13, weight="bold", va="top")],
        "subtitle": [figure.text(0, 0, _subtitle(across, n_targets, len(points), area_share), fontsize=10,
                                 va="top", color="#333333")],
        "crs": [figure.text(0, 0, f"coordinates in {crs_name(grid.crs)}", fontsize=9, va="top", color="#333333")],
    }
    legend = _legend(figure, n_targets, len(points), bool(np.ma.getmaskarray(values).any()))
    layout = MapLayout(figure, axes, colours, parts, legend, grid)
    layout.place()
    if n_targets:
        _draw_targets(axes, targets)
    if len(points):
        xy = np.asarray(points, dtype=float)
        axes.scatter(xy[:, 0], xy[:, 1], marker="P", s=75, facecolors="white", edgecolors="black", linewidths=1.0,
                     zorder=6)
    parts.update(layout.drawn())
    return figure, parts


class MapLayout:
    """Places the map's parts in pixels once their sizes are measured (a text's extent is known before any draw),
    then fixes the figure's height: the map is as wide as the column beside the colour bar leaves, no taller than
    _MAX_MAP_HEIGHT and no narrower than _MIN_MAP_PX; a title, subtitle or CRS line wider than the figure wraps; the
    northings run rotated along the map's left edge unless the map is too low for one, then level; each axis holds
    as many coordinates as fit whole within it; the colour bar is never shorter than its labels; the scale bar and
    the legend share a row when they fit side by side, else the legend goes under it."""

    def __init__(self, figure, axes, colours, parts: dict, legend, grid):
        self.figure, self.axes, self.colours, self.parts, self.legend, self.grid = (figure, axes, colours, parts,
                                                                                      legend, grid)
        self.arrow: tuple | None = None
        self.scale: list | None = None

    def _size(self, artist) -> tuple[float, float]:
        box = artist.get_window_extent(self.figure.canvas.get_renderer())
        return box.width, box.height

    def _ticks(self, labels) -> tuple[float, float]:
        boxes = [self._size(t) for t in labels if t.get_text()]
        return (max((w for w, _ in boxes), default=0.0), max((h for _, h in boxes), default=0.0))

    def _wrap(self, text, width: float) -> None:
        """Break a text artist's line at '; ' or spaces so that no line is wider than `width` pixels."""
        words = text.get_text().replace("; ", ";\0").replace(" ", " \0").split("\0")
        lines, line = [], ""
        for word in words:
            text.set_text((line + word).rstrip())
            if line and self._size(text)[0] > width:
                lines.append(line.rstrip())
                line = word
            else:
                line += word
        lines.append(line.rstrip())
        text.set_text("\n".join(lines))

    def _label_size(self, text: str, rotation: float = 0.0) -> tuple[float, float]:
        probe = self.figure.text(0, 0, text, fontsize=_TICK_FONT, rotation=rotation)
        size = self._size(probe)
        probe.remove()
        return size

    def _fit_ticks(self, axis, low: float, high: float, length: float, rotated: bool) -> None:
        """As many round coordinates on `axis` as fit whole inside its `length` pixels, a gap apart (none when not
        even one fits)."""
        from matplotlib.ticker import FixedLocator, MaxNLocator

        def along(value) -> float:  # a label's extent along its axis
            width, height = self._label_size(_coordinate(value))
            return width if axis is self.axes.xaxis or rotated else height

        kept = []
        for bins in (5, 4, 3, 2, 1):
            ticks = [(v, (v - low) / (high - low) * length, along(v))
                     for v in MaxNLocator(nbins=bins, steps=[1, 2, 2.5, 5, 10]).tick_values(low, high)
                     if low <= v <= high]
            inside = [t for t in ticks if t[2] / 2 <= t[1] <= length - t[2] / 2]
            if inside and all(b[1] - a[1] >= (a[2] + b[2]) / 2 + _GAP for a, b in zip(inside, inside[1:])):
                kept = [v for v, _, _ in inside]
                break
        axis.set_major_locator(FixedLocator(kept))

    def place(self) -> None:
        figure, axes, bar = self.figure, self.axes, self.colours.ax
        title, subtitle, crs = (self.parts[k][0] for k in ("title", "subtitle", "crs"))
        inner = WIDTH_PX - 2 * _PAD
        for text in (title, subtitle, crs):
            if self._size(text)[0] > inner:
                self._wrap(text, inner)
        head = _PAD + self._size(title)[1] + _GAP + self._size(subtitle)[1] + _GAP
        bar_ticks = self._ticks(bar.get_yticklabels())
        column = max(_BAR_PX + 4 + bar_ticks[0] + _GAP + self._size(bar.yaxis.label)[0] + _PAD, _ARROW_PX)
        xmin, ymin, xmax, ymax = self.grid.bounds
        aspect = (ymax - ymin) / (xmax - xmin) if xmax > xmin else 1.0
        widest = self._label_size(max((_coordinate(v) for v in (ymin, ymax)), key=len))
        for rotated in (True, False):  # northings along the edge, or level when the map is too low for one
            y_ticks = (widest[1] if rotated else widest[0]) + _TICK_PAD
            left = _PAD + self._size(axes.yaxis.label)[0] + _GAP + y_ticks
            map_w = WIDTH_PX - left - 2 * _GAP - column
            map_h = map_w * aspect
            if map_h > _MAX_MAP_HEIGHT:
                map_w = max(_MIN_MAP_PX, _MAX_MAP_HEIGHT / aspect)
                map_h = map_w * aspect
            if not rotated or map_h >= widest[0] + 2 * _GAP:
                break
        axes.tick_params(axis="y", labelrotation=90 if rotated else 0)
        for label in axes.get_yticklabels():
            label.set_verticalalignment("center")
        bar_h = max(map_h - _ARROW_PX - _GAP, len(bar.get_yticklabels()) * 1.6 * bar_ticks[1])
        body = max(map_h, _ARROW_PX + _GAP + bar_h)
        under = (widest[1] + _TICK_PAD + self._size(axes.xaxis.label)[1] + _GAP + self._size(crs)[1] + _GAP)
        scale = self._scale_parts(map_w) if _metres_per_unit(self.grid) else None
        scale_w, scale_h = (scale[0], _SCALE_PX) if scale else (0.0, 0.0)
        legend_w, legend_h = self._size(self.legend) if self.legend is not None else (0.0, 0.0)
        side_by_side = scale_w + 2 * _GAP + legend_w <= inner
        foot = max(scale_h, legend_h) if side_by_side else scale_h + _GAP + legend_h
        height = head + body + under + foot + _PAD
        figure.set_size_inches(WIDTH_PX / DPI, height / DPI)

        def box(x, top, w, h):  # pixels from the top left -> figure fractions (left, bottom, width, height)
            return (x / WIDTH_PX, 1 - (top + h) / height, w / WIDTH_PX, h / height)

        map_x = left + max(0.0, (WIDTH_PX - left - 2 * _GAP - column - map_w) / 2)
        map_top = head + (body - map_h) / 2
        axes.set_position(box(map_x, map_top, map_w, map_h))
        self._fit_ticks(axes.xaxis, xmin, xmax, map_w, False)
        self._fit_ticks(axes.yaxis, ymin, ymax, map_h, rotated)
        column_x = map_x + map_w + 2 * _GAP
        bar.set_position(box(column_x, head + _ARROW_PX + _GAP, _BAR_PX, bar_h))
        title.set_position((_PAD / WIDTH_PX, 1 - _PAD / height))
        subtitle.set_position((_PAD / WIDTH_PX, 1 - (_PAD + self._size(title)[1] + _GAP) / height))
        crs.set_position((min(map_x, WIDTH_PX - _PAD - self._size(crs)[0]) / WIDTH_PX,
                          1 - (head + body + under - _GAP - self._size(crs)[1]) / height))
        if self.grid.crs is not None:
            self.arrow = _north_arrow(figure, (column_x + _BAR_PX / 2) / WIDTH_PX, 1 - head / height)
        foot_top = head + body + under
        if scale:
            self.scale = _scale_bar(figure, box(_PAD, foot_top, scale_w, scale_h), *scale)
        if self.legend is not None:
            legend_top = foot_top if side_by_side else foot_top + scale_h + _GAP
            self.legend.set_bbox_to_anchor(box(WIDTH_PX - _PAD - legend_w, legend_top, legend_w, legend_h),
                                           transform=figure.transFigure)

    def _scale_parts(self, map_w: float) -> tuple[float, float, str]:
        """(width of the scale bar's box, its bar's length in pixels, its label) for a map `map_w` pixels wide: the
        longest 1-2-5 length not over a quarter of the map, the box as wide as the bar or its label."""
        across = _across_km(self.grid)
        assert across is not None  # asked only of a map in metres
        step = _bar_length(across / 4)
        length = step / across * map_w
        label = f"{_km(step)} km"
        return max(length, self._label_size(label)[0] * 10 / _TICK_FONT) + 4, length, label

    def drawn(self) -> dict:
        """The parts a reader sees, by name, for a check that none overlaps another."""
        axes, bar = self.axes, self.colours.ax
        parts = {"map": [axes.patch], "map coordinates": [t for t in axes.get_xticklabels() + axes.get_yticklabels()
                                                          if t.get_text()],
                 "easting label": [axes.xaxis.label], "northing label": [axes.yaxis.label],
                 "colour bar": [bar.patch] + [t for t in bar.get_yticklabels() if t.get_text()],
                 "colour bar title": [bar.yaxis.label]}
        if self.arrow is not None:
            parts["north arrow"] = list(self.arrow)
        if self.scale is not None:
            parts["scale bar"] = list(self.scale)
        if self.legend is not None:
            parts["legend"] = [self.legend]
        return parts


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
    axes.tick_params(labelsize=_TICK_FONT, length=3, color="#555555")
    axes.grid(True, color="white", alpha=0.55, linewidth=0.6, linestyle="--")
    x_name, y_name = axis_names(grid.crs)
    axes.set_xlabel(x_name, fontsize=9)
    axes.set_ylabel(y_name, fontsize=9)


def crs_name(crs) -> str:
    """The CRS as a reader names it: 'EPSG:28350 (GDA94 / MGA zone 50)'; pixel space said so."""
    label = crs_label(crs)
    return label if crs is None or crs.name in label or not crs.to_authority() else f"{label} ({crs.name})"


def _coordinate(value: float, _position=None) -> str:
    """A coordinate on the map's edge: whole units with thousands separators, decimals only when needed."""
    text = f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.4f}".rstrip("0").rstrip(".")
    return text.replace("-", "\u2212")


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


def _across_km(grid) -> float | None:
    """The map's width in km (None in pixel space)."""
    per_unit = _metres_per_unit(grid)
    return None if per_unit is None else (grid.bounds[2] - grid.bounds[0]) * per_unit / 1000.0


def _scale_bar(figure, box: tuple, width: float, length: float, label: str) -> list:
    """A scale bar `length` pixels long, centred in `box` (figure fractions; `width` pixels wide) with its `label`
    above it; returns its artists."""
    bar = figure.add_axes(box)
    bar.set_xlim(0, width)
    bar.set_ylim(0, _SCALE_PX)
    bar.axis("off")
    start = (width - length) / 2
    drawn = bar.plot([start, start + length], [6, 6], color="black", linewidth=4, solid_capstyle="butt")
    for x in (start, start + length):
        drawn += bar.plot([x, x], [2, 10], color="black", linewidth=1.2)
    drawn.append(bar.text(width / 2, 13, label, ha="center", va="bottom", fontsize=10))
    return drawn


def _bar_length(limit_km: float) -> float:
    """The longest 1-2-5 x 10^k length not above `limit_km`."""
    power = 10.0 ** np.floor(np.log10(limit_km)) if limit_km > 0 else 1.0
    return float(max(f * power for f in (1, 2, 5) if f * power <= max(limit_km, power)))


def _north_arrow(figure, x: float, top: float) -> tuple:
    """A north arrow whose top is at figure fraction `top`, centred on `x` (the analysis grids are north-up): its 'N'
    and its arrow."""
    from matplotlib.patches import FancyArrow

    height = figure.bbox.height
    letter = figure.text(x, top, "N", ha="center", va="top", fontsize=11, weight="bold")
    arrow = FancyArrow(x, top - (_ARROW_PX - 2) / height, 0, 26 / height, width=2.5 / WIDTH_PX,
                       head_width=10 / WIDTH_PX, head_length=8 / height, length_includes_head=True, color="black",
                       transform=figure.transFigure, figure=figure)
    figure.patches.append(arrow)
    return letter, arrow


def _km(value: float) -> str:
    return f"{value:g}"


def _subtitle(across_km, n_targets: int, n_points: int, area_share) -> str:
    parts = [f"about {_km(round(across_km, 1 if across_km < 10 else 0))} km across" if across_km
             else "pixel space (not georeferenced)"]
    if n_targets:
        top = f" from the top {area_share * 100:g} % of the area" if area_share else ""
        shown = f"ranks 1-{min(n_targets, LABELLED)} labelled" if n_targets > 1 else "rank 1 labelled"
        parts.append(f"{plural(n_targets, 'target')}{top}, {shown}")
    if n_points:
        parts.append(plural(n_points, "known deposit"))
    return "; ".join(parts)


def _legend(figure, n_targets: int, n_points: int, has_nodata: bool):
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
    if not handles:
        return None
    return figure.legend(handles=handles, loc="center right", ncol=len(handles), frameon=False, fontsize=10,
                         borderaxespad=0.0)
