"""Scanned geological maps read through their legends: a map image (RGB or RGBA, a GeoTIFF or a plain image) becomes
a categorical map of unit codes with a legend CSV, ready to be used as any geological map.

The legend box is found (legend_swatches) or given; each swatch's colour is the median of its interior, its name is
read with Tesseract OCR (legend_ocr); the map's pixels take the unit of the nearest swatch colour in CIELAB within a
tolerance, ink, paper and the legend box left as nodata (legend_classify). A geologist's corrections (names and
colours) re-apply the classification; what was read and what was corrected go in a JSON sidecar. The three outputs
(raster, legend CSV `value,name,r,g,b`, sidecar) are written together, whole or not at all.
"""
from __future__ import annotations

import csv
import io
import json
import math
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from rasterio.enums import Resampling
from rasterio.errors import NotGeoreferencedWarning
from rasterio.windows import Window

from ..csv_table import write_csv
from ..decisions import CORE
from ..errors import LodestarError
from ..files import OutputSet, write_text_atomic
from ..progress import SILENT, Progress
from ..raster_blocks import block_windows
from ..raster_io import RasterReader
from ..raster_writer import new_raster
from .legend_classify import HALO_PX, PAPER_SEPARATION_DE, BlockCounts, classify_block, delta_e, rgb_to_lab
from .legend_ocr import read_labels, tesseract_program, tesseract_version
from .legend_swatches import LegendLayout, find_legend

FORMAT = "lodestar-map-legend/1"
# decision numbers: their reasons and provenance are in plugin/decisions.py
DEFAULT_TOLERANCE_DE = CORE.tolerance_de
DETECT_MAX_PIXELS = 16_000_000
"""The legend is looked for on the image read decimated to at most this many pixels; names and colours are read at
full resolution."""
BLOCK_ROWS = 512
NODATA = 0
# decision numbers: their reasons and provenance are in plugin/decisions.py
SWATCH_INSET_PX = CORE.swatch_inset_px


@dataclass
class LegendUnit:
    """One unit of the legend: its code, name and colour as used, and as read (`read_name`, `read_rgb`, the raw OCR
    text and its confidence), the swatch's pixel box (None for a unit added by a correction), its pixels on the map
    and their share of the classified pixels."""

    value: int
    name: str
    rgb: tuple
    read_name: str = ""
    read_rgb: tuple | None = None
    ocr_text: str = ""
    ocr_confidence: float | None = None
    words_corrected: list = field(default_factory=list)
    swatch: tuple | None = None
    pixels: int = 0
    share: float = 0.0


@dataclass
class LegendReading:
    """What was read from one map image, and what the classification made of it (the sidecar's content)."""

    source: str
    width: int
    height: int
    box: tuple
    box_found: str
    units: list
    tolerance: float = DEFAULT_TOLERANCE_DE
    paper_rgb: tuple | None = None
    box_bounds: tuple | None = None
    counts: dict = field(default_factory=dict)
    corrections: list = field(default_factory=list)
    ocr: str = ""
    format: str = FORMAT

    def names(self) -> dict:
        return {u.value: u.name for u in self.units}

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> LegendReading:
        data = json.loads(text)
        if data.get("format") != FORMAT:
            raise LodestarError(f"Not a Lodestar legend reading (format {data.get('format')!r}, expected {FORMAT}).")
        units = [LegendUnit(**{**u, "rgb": tuple(u["rgb"]),
                               "read_rgb": tuple(u["read_rgb"]) if u.get("read_rgb") else None,
                               "swatch": tuple(u["swatch"]) if u.get("swatch") else None}) for u in data["units"]]
        return cls(**{**data, "units": units, "box": tuple(data["box"]),
                      "paper_rgb": tuple(data["paper_rgb"]) if data.get("paper_rgb") else None,
                      "box_bounds": tuple(data["box_bounds"]) if data.get("box_bounds") else None})


@dataclass
class LegendOutputs:
    """Where the three outputs go: the categorical raster, the legend CSV and the JSON sidecar."""

    raster: Path
    legend: Path
    sidecar: Path

    @classmethod
    def beside(cls, raster) -> LegendOutputs:
        """`<name>.tif`, `<name>_legend.csv`, `<name>_legend.json`."""
        raster = Path(raster)
        return cls(raster, raster.with_name(f"{raster.stem}_legend.csv"),
                   raster.with_name(f"{raster.stem}_legend.json"))


def open_map_image(path) -> RasterReader:
    """The map image, checked to be an RGB(A) image of 8-bit bands."""
    reader = RasterReader(Path(path))
    if not reader.is_rgb:
        raise LodestarError(
            f"{reader.path.name} has {reader.count} band(s) of {reader.dtype} values; reading a legend needs a map "
            "image of 3 or 4 8-bit bands (RGB or RGBA, as a scan or a map exported as an image). A one-band raster "
            "of unit codes is already a categorical map: give it with its legend CSV instead.")
    return reader


def read_map_legend(image, outputs: LegendOutputs, legend_box=None, corrections=None,
                    tolerance: float = DEFAULT_TOLERANCE_DE, progress: Progress = SILENT) -> LegendReading:
    """Read the legend of a map image and write its categorical map, legend CSV and sidecar.

    `legend_box`: (xmin, ymin, xmax, ymax) of the legend in the image's map coordinates (for an image without
    georeferencing, pixel coordinates: x the column, y the row, or minus the row as QGIS shows such an image); None
    finds it. `corrections`: a CSV path or a dict (see
    `read_corrections`) of names and colours to use instead of those read."""
    if not tolerance > 0:
        raise LodestarError(f"The colour tolerance must be a positive Delta E (e.g. {DEFAULT_TOLERANCE_DE:g}).")
    reader = open_map_image(image)
    program = tesseract_program()
    progress.log(f"Looking for the legend of {reader.path.name}...")
    layout = _layout(reader, legend_box)
    progress.set(15)
    progress.check()
    strips = [_rgb(reader, Window(c0, r0, c1 - c0 + 1, r1 - r0 + 1)) for c0, r0, c1, r1 in layout.label_boxes]
    lines = read_labels(strips, program)
    progress.set(40)
    units = []
    for value, (swatch, line) in enumerate(zip(layout.swatches, lines), start=1):
        rgb = _swatch_colour(reader, swatch)
        units.append(LegendUnit(value, line.name or f"Unit {value}", rgb, line.name, rgb, line.raw, line.confidence,
                                [list(pair) for pair in line.words_corrected], swatch))
    reading = LegendReading(
        str(reader.path), reader.grid.width, reader.grid.height, layout.box,
        "given" if legend_box is not None else "; ".join(layout.notes), units, float(tolerance), layout.background,
        _box_bounds(reader, layout.box), ocr=tesseract_version(program))
    progress.log(f"Legend: {len(units)} units read ({', '.join(u.name for u in units)}).")
    return classify_map(reading, outputs, corrections, progress=progress.scaled(40, 100), reader=reader)


def classify_map(reading: LegendReading, outputs: LegendOutputs, corrections=None, tolerance: float | None = None,
                 progress: Progress = SILENT, reader: RasterReader | None = None) -> LegendReading:
    """Classify the map of a reading with its units as read, corrected by `corrections` (a CSV path or a dict; None
    for none), and write the three outputs. Returns the reading as written (units, pixel shares, corrections)."""
    reader = reader or open_map_image(reading.source)
    units, applied = apply_corrections(reading.units, read_corrections(corrections) if corrections else {})
    if not units:
        raise LodestarError("The legend has no units left to classify the map with.")
    if tolerance is not None and not tolerance > 0:
        raise LodestarError(f"The colour tolerance must be a positive Delta E (e.g. {DEFAULT_TOLERANCE_DE:g}).")
    reading = LegendReading(**{**asdict(reading), "units": units, "corrections": applied,
                               "tolerance": float(tolerance or reading.tolerance)})
    with OutputSet() as staged:
        counts = _write_units(reader, reading, staged.path(outputs.raster), outputs.legend.name, progress)
        classified = sum(counts.units.values())
        for unit in reading.units:
            unit.pixels = int(counts.units.get(unit.value, 0))
            unit.share = round(unit.pixels / classified, 6) if classified else 0.0
        reading.counts = {"classified": classified, "ink": counts.ink, "paper": counts.paper,
                          "unmatched": counts.unmatched, "legend_and_nodata": counts.outside}
        write_legend_csv(reading.units, staged.path(outputs.legend))
        write_text_atomic(staged.path(outputs.sidecar), reading.to_json())
    progress.log(f"Classified {classified} pixels into {len(units)} units; {counts.ink} pixels of lines and "
                 f"lettering, {counts.paper} of paper, {counts.unmatched} of no legend colour left as nodata.")
    return reading


def read_sidecar(path) -> LegendReading:
    """A reading back from its JSON sidecar."""
    path = Path(path)
    try:
        return LegendReading.from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise LodestarError(f"Cannot read the legend reading {path}: {exc}. Read the map's legend again.") from exc


def write_legend_csv(units: list, path) -> Path:
    """The legend as `value,name,r,g,b` (what categorical.read_legend reads)."""
    return write_csv(path, ("value", "name", "r", "g", "b"),
                     [{"value": u.value, "name": u.name, "r": u.rgb[0], "g": u.rgb[1], "b": u.rgb[2]} for u in units])


def read_corrections(source) -> dict:
    """Corrections by unit code: {value: {"name": str, "rgb": (r, g, b)}}, either key optional.

    `source`: a dict ({value: name}, or {value: {"name": ..., "rgb": ...}}), or a CSV with a header `value,name`
    and optionally `r,g,b` (the legend CSV written, edited); blank cells keep what was read."""
    if isinstance(source, dict):
        out = {}
        for value, entry in source.items():
            entry = {"name": entry} if isinstance(entry, str) else dict(entry)
            out[_code(value, "corrections")] = {k: entry[k] for k in ("name", "rgb") if entry.get(k) not in (None, "")}
        return out
    path = Path(source)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise LodestarError(f"Cannot read the corrections {path}: {exc}. Give a CSV with columns value,name,r,g,b."
                            ) from exc
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    if not rows or "value" not in {(k or "").strip().lower() for k in rows[0]}:
        raise LodestarError(f"The corrections {path.name} need a header with a 'value' column (value,name,r,g,b: "
                            "the legend CSV, edited).")
    out = {}
    for number, row in enumerate(rows, start=2):
        row = {(k or "").strip().lower(): (v or "").strip() for k, v in row.items()}
        entry = {}
        if row.get("name"):
            entry["name"] = row["name"].lstrip("'")
        channels = [row.get(c, "") for c in "rgb"]
        if any(channels):
            try:
                entry["rgb"] = tuple(int(float(c)) for c in channels)
            except ValueError as exc:
                raise LodestarError(f"{path.name}, line {number}: r,g,b must be three numbers 0-255.") from exc
        out[_code(row.get("value"), f"{path.name}, line {number}")] = entry
    return out


def apply_corrections(units: list, corrections: dict) -> tuple[list, list]:
    """The units with the corrections applied to what was read (a code not in the legend, with a name and a colour,
    is a unit added), and the list of changes made."""
    by_value = {u.value: u for u in units}
    out, applied = [], []
    for unit in units:
        fixed = LegendUnit(**{**asdict(unit), "name": unit.read_name or unit.name,
                              "rgb": unit.read_rgb or unit.rgb, "pixels": 0, "share": 0.0})
        change = corrections.get(unit.value, {})
        if change.get("name") and change["name"] != fixed.name:
            applied.append({"value": unit.value, "field": "name", "read": fixed.name, "corrected": change["name"]})
            fixed.name = change["name"]
        if change.get("rgb") is not None and tuple(change["rgb"]) != tuple(fixed.rgb):
            rgb = _rgb_triple(change["rgb"], unit.value)
            applied.append({"value": unit.value, "field": "colour", "read": list(fixed.rgb), "corrected": list(rgb)})
            fixed.rgb = rgb
        out.append(fixed)
    for value in sorted(set(corrections) - set(by_value)):
        change = corrections[value]
        if not change.get("name") or change.get("rgb") is None:
            known = ", ".join(str(v) for v in sorted(by_value))
            raise LodestarError(f"Correction for unit {value}: the legend has no such unit (its values: {known}); a "
                                "unit to add needs both a name and a colour r,g,b.")
        rgb = _rgb_triple(change["rgb"], value)
        out.append(LegendUnit(value, change["name"], rgb))
        applied.append({"value": value, "field": "added", "read": None, "corrected": {"name": change["name"],
                                                                                      "rgb": list(rgb)}})
    return out, applied


def _code(value, where: str) -> int:
    try:
        code = int(float(value))
    except (TypeError, ValueError) as exc:
        raise LodestarError(f"{where}: the value {value!r} is not a unit code (a whole number).") from exc
    if not 1 <= code <= 255:
        raise LodestarError(f"{where}: unit codes run from 1 to 255, not {code}.")
    return code


def _rgb_triple(rgb, value: int) -> tuple:
    rgb = tuple(int(c) for c in rgb)
    if len(rgb) != 3 or not all(0 <= c <= 255 for c in rgb):
        raise LodestarError(f"Correction for unit {value}: the colour must be r,g,b, each 0-255, not {rgb}.")
    return rgb


def _rgb(reader: RasterReader, window: Window) -> np.ndarray:
    """The window's first three bands as uint8 (masked pixels as they are stored)."""
    return np.clip(reader.read([1, 2, 3], window=window).data, 0, 255).astype(np.uint8)


def _layout(reader: RasterReader, legend_box) -> LegendLayout:
    """The legend's layout at full resolution, found on a decimated read of a large image."""
    grid = reader.grid
    box = None
    if legend_box is not None:
        xmin, ymin, xmax, ymax = (float(v) for v in legend_box)
        if not grid.georeferenced and ymax <= 0:  # QGIS shows an image without georeferencing rows down from y = 0
            ymin, ymax = -ymax, -ymin
        win = grid.bounds_window((xmin, ymin, xmax, ymax))
        box = (int(win.col_off), int(win.row_off), int(win.col_off + win.width - 1), int(win.row_off + win.height - 1))
    factor = max(1, math.ceil(math.sqrt(grid.width * grid.height / DETECT_MAX_PIXELS)))
    if factor == 1:
        rgb = _rgb(reader, Window(0, 0, grid.width, grid.height))
    else:
        data = reader.read([1, 2, 3], out_shape=(grid.height // factor, grid.width // factor),
                           resampling=Resampling.average)  # thin outlines and frames kept, as grey
        rgb = np.clip(data.data, 0, 255).astype(np.uint8)
    small = None if box is None else tuple(v // factor for v in box)
    layout = find_legend(rgb, small)
    if layout is None:
        where = "inside the legend box given" if box is not None else "anywhere in the image"
        raise LodestarError(
            f"No legend found {where} in {reader.path.name}: no set of at least 3 colour swatches of one size with "
            "text beside them. Draw the legend box (its extent) around the swatches and their names, or check that "
            "this is a map image with a legend.")
    if factor == 1:
        return layout
    scale = lambda b: tuple(int(v * factor) for v in b)  # noqa: E731
    return LegendLayout(box or scale(layout.box), [scale(s) for s in layout.swatches],
                        [scale(s) for s in layout.label_boxes], layout.background,
                        layout.notes + [f"found on the image decimated {factor} times"])


def _swatch_colour(reader: RasterReader, swatch: tuple) -> tuple:
    c0, r0, c1, r1 = swatch
    inset = SWATCH_INSET_PX if min(c1 - c0, r1 - r0) > 4 * SWATCH_INSET_PX else 0
    rgb = _rgb(reader, Window(c0 + inset, r0 + inset, c1 - c0 + 1 - 2 * inset, r1 - r0 + 1 - 2 * inset))
    return tuple(int(np.median(band)) for band in rgb)


def _box_bounds(reader: RasterReader, box: tuple):
    """The legend box in map coordinates (None without georeferencing)."""
    if not reader.grid.georeferenced:
        return None
    c0, r0, c1, r1 = box
    xs, ys = reader.grid.pixel_to_map([c0, c1 + 1], [r1 + 1, r0])
    return float(xs[0]), float(ys[0]), float(xs[1]), float(ys[1])


def _write_units(reader: RasterReader, reading: LegendReading, target: Path, legend_name: str,
                 progress: Progress) -> BlockCounts:
    """Classify the image block by block into a uint8 GeoTIFF of unit codes (0 nodata) on the image's grid."""
    grid = reader.grid
    unit_lab = rgb_to_lab(np.asarray([u.rgb for u in reading.units], dtype=np.float32))
    paper = None
    if reading.paper_rgb is not None:
        paper = rgb_to_lab(np.asarray(reading.paper_rgb, dtype=np.float32))
        if float(delta_e(unit_lab, paper).min()) < PAPER_SEPARATION_DE:
            paper = None  # a unit shares the paper's colour: the paper is not told apart
    profile = {"driver": "GTiff", "width": grid.width, "height": grid.height, "count": 1, "dtype": "uint8",
               "nodata": NODATA, "tiled": True, "blockxsize": 256, "blockysize": 256, "compress": "deflate"}
    if grid.crs is not None:  # georeferenced
        profile.update(crs=grid.crs.to_wkt(), transform=grid.transform)
    c0, r0, c1, r1 = reading.box
    total = BlockCounts(units={})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotGeoreferencedWarning)
        with new_raster(target, profile, staged=True) as dst:
            for strip in block_windows((grid.height, grid.width), BLOCK_ROWS, strips=True):
                progress.check()
                top, bottom = strip.row_off, strip.row_off + strip.height
                first, last = max(0, top - HALO_PX), min(grid.height, bottom + HALO_PX)
                window = Window(0, first, grid.width, last - first)
                data = reader.read([1, 2, 3], window=window)
                outside = np.ma.getmaskarray(data).any(axis=0)
                rows = np.arange(first, last)[:, None]
                cols = np.arange(grid.width)[None, :]
                outside |= (rows >= r0) & (rows <= r1) & (cols >= c0) & (cols <= c1)
                codes, counts = classify_block(np.clip(data.data, 0, 255).astype(np.uint8), unit_lab, paper,
                                               reading.tolerance, outside, slice(top - first, bottom - first))
                total.add(counts)
                values = np.zeros(codes.shape, dtype=np.uint8)
                for index, unit in enumerate(reading.units, start=1):
                    values[codes == index] = unit.value
                dst.write(values, 1, window=strip)
                progress.set(100 * bottom / grid.height)
            dst.write_colormap(1, {u.value: tuple(u.rgb) + (255,) for u in reading.units})
            dst.set_band_description(1, "geological unit code")
            dst.update_tags(LODESTAR_ROLE="geological_map", LODESTAR_LEGEND=legend_name,
                            LODESTAR_SOURCE=Path(reading.source).name)
    by_value = {}
    for index, unit in enumerate(reading.units, start=1):
        by_value[unit.value] = total.units.get(index, 0)
    total.units = by_value
    return total
