"""Categorical geological maps (unit codes plus a legend): unit polygons, contacts, favourable units.

A categorical map holds unit codes, not magnitudes. Its legend is a CSV `value,name[,...]`; real
legends vary (`VALUE,COUNT,CODE` in the Great Basin data), so the reader takes the value column by
name or position and the name from the first text column. Units are selected as the favourability surface selects
them (`lithology_words.matched_units`: code or name, `*`/`?` wildcards, or a whole word or rock synonym in the name,
not negated), e.g. the carbonate units for Carlin-type gold.
"""
from __future__ import annotations

import csv
import io
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from scipy import ndimage

from ..errors import LodestarError
from ..progress import SILENT, Progress
from ..raster_io import RasterGrid, RasterSet
from ..zones import labelled_polygons, zone_record, zones_frame
from .lithology_words import matched_units
from .result import ToolResult

_VALUE_COLUMNS = ("value", "code_value", "id", "class", "raster_value")
_NAME_COLUMNS = ("name", "unit", "unit_name", "label", "code", "symbol", "description", "lithology")


def read_legend(path) -> dict[int, str]:
    """Unit names by code from a legend CSV (`value,name[,...]`, header required)."""
    path = Path(path)
    header, body = _legend_rows(path)
    value_col, name_col = _legend_columns(header, body)
    if name_col is None:
        raise LodestarError(f"Legend {path.name} has no column of unit names; add a column 'name'.")
    legend = {}
    for number, row in enumerate(body, start=2):
        try:
            code = int(float(row[value_col]))
        except (ValueError, IndexError) as exc:
            raise LodestarError(f"Legend {path.name}, line {number}: {row!r} has no integer value.") from exc
        name = row[name_col].strip() if name_col < len(row) else ""
        legend[code] = name or str(code)
    return legend


def legend_colours(path) -> dict[int, tuple[int, int, int]]:
    """The colours a legend CSV gives its units ({code: (r, g, b)} from its r, g, b columns, as
    lodestar:read_map_legend writes them); {} when it gives none, or a unit's colour is not three numbers 0-255."""
    header, body = _legend_rows(Path(path))
    if not all(c in header for c in "rgb"):
        return {}
    value_col, columns = _legend_columns(header, body)[0], [header.index(c) for c in "rgb"]
    colours: dict[int, tuple[int, int, int]] = {}
    for row in body:
        try:
            r, g, b = (int(float(row[i])) for i in columns)
            code = int(float(row[value_col]))
        except (ValueError, IndexError):
            return {}
        rgb = (r, g, b)
        if not all(0 <= v <= 255 for v in rgb):
            return {}
        colours[code] = rgb
    return colours


def names_units(path) -> bool:
    """Whether a CSV is a legend of units: a column of names beside the codes. A table of class counts
    (`VALUE,COUNT`, as GIS exports beside a reclassified raster) is not."""
    try:
        return _legend_columns(*_legend_rows(Path(path)))[1] is not None
    except LodestarError:
        return True  # a malformed legend is still meant as one: reading it says what is wrong


def _legend_rows(path: Path) -> tuple[list[str], list[list[str]]]:
    """The lower-cased header and the non-blank rows of a legend CSV."""
    if not path.exists():
        raise LodestarError(f"Legend file not found: {path}. Give a CSV with columns value,name.")
    if path.is_dir():
        raise LodestarError(f"The legend {path} is a folder, not a file; name the legend CSV itself (columns "
                            "value,name).")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:  # legends exported by desktop GIS are often in a Windows code page
        text = path.read_text(encoding="cp1252", errors="replace")
    except OSError as exc:
        raise LodestarError(f"Cannot read the legend {path}: {exc.strerror or exc}.") from exc
    rows = list(csv.reader(io.StringIO(text, newline="")))
    rows = [r for r in rows if any(cell.strip() for cell in r)]
    if len(rows) < 2:
        raise LodestarError(f"Legend {path.name} has no entries; it needs a header and one row per unit.")
    return [h.strip().lower() for h in rows[0]], rows[1:]


def _legend_columns(header: list[str], body: list[list[str]]) -> tuple[int, int | None]:
    """The value column (by name, else the first) and the name column (by name, else the first text column)."""
    value_col = next((header.index(c) for c in _VALUE_COLUMNS if c in header), 0)
    name_col = next((header.index(c) for c in _NAME_COLUMNS if c in header and header.index(c) != value_col), None)
    if name_col is None:
        name_col = next((i for i in range(len(header)) if i != value_col and not _numeric_column(body, i)), None)
    return value_col, name_col


def _numeric_column(rows: list[list[str]], index: int) -> bool:
    """Whether a column holds numbers only (blank or missing cells aside): counts or areas, not names."""
    for row in rows:
        cell = row[index].strip() if index < len(row) else ""
        try:
            float(cell or 0)
        except ValueError:
            return False
    return True


def unit_names(raster_set: RasterSet, layer: str, codes) -> dict[int, str]:
    """Names of the codes present in a categorical layer: its legend's, else the code itself."""
    spec = raster_set.spec(layer)
    legend = read_legend(spec.legend) if spec.legend is not None else {}
    return {int(c): legend.get(int(c), str(int(c))) for c in codes}


def unit_list(units) -> tuple:
    """Unit names as a tuple, from a sequence or a comma-separated string ("Limestone, *dolomite*")."""
    if isinstance(units, str):
        return tuple(u.strip() for u in units.split(",") if u.strip())
    return tuple(units)


def match_units(names: dict, wanted) -> set:
    """Keys (unit codes) whose names, or the keys themselves, match any of `wanted` as the favourability surface
    matches them (`matched_units`: the code or name, `*`/`?` wildcards, or a whole word or a lithology synonym in
    the name, not negated); an unmatched name is an error listing the units present."""
    codes = set()
    for pattern in wanted:
        pattern = str(pattern).strip()
        if not pattern:
            continue
        hits = set(matched_units(names, [pattern]))
        if not hits:
            known = ", ".join(sorted(set(names.values())))
            raise LodestarError(f"No unit named {pattern!r} in this map. Units present: {known}.")
        codes |= hits
    return codes


def categorical_labels(data: np.ma.MaskedArray) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes (0 where nodata) and the valid mask of a one-band categorical read."""
    band = data[0]
    valid = ~np.ma.getmaskarray(band)
    codes = np.where(valid, np.rint(band.filled(0)), 0).astype("int64")
    return codes, valid


def line_density(counts: np.ndarray, grid: RasterGrid, radius_px: int) -> np.ndarray:
    """Length of lines per area around each pixel: km per km2 when georeferenced, else px per px2.

    `counts` is the number of line crossings (pixel edges or line pixels) in each pixel; the
    neighbourhood is a square of (2 * radius_px + 1) pixels a side.
    """
    size = 2 * max(0, int(radius_px)) + 1
    mean = ndimage.uniform_filter(counts.astype("float32"), size=size, mode="constant")
    per_unit = mean * (max(grid.pixel_size) / grid.pixel_area)
    return per_unit * 1000.0 if grid.georeferenced else per_unit


def contact_edges(labels: np.ndarray, valid: np.ndarray):
    """Pixel edges where two valid units meet: (rows, cols) of the first pixel, codes on each side.

    Horizontal neighbours (row, col) | (row, col + 1) and vertical ones (row, col) / (row + 1, col).
    """
    out = []
    for axis in (1, 0):
        a = labels[:, :-1] if axis == 1 else labels[:-1, :]
        b = labels[:, 1:] if axis == 1 else labels[1:, :]
        va = valid[:, :-1] if axis == 1 else valid[:-1, :]
        vb = valid[:, 1:] if axis == 1 else valid[1:, :]
        rows, cols = np.nonzero((a != b) & va & vb)
        out.append((rows, cols, a[rows, cols], b[rows, cols], axis))
    return out


@dataclass
class ContactOptions:
    buffer_px: float = 1.0
    density_radius_px: int = 3
    involve: frozenset | None = None
    min_area_px: int = 4
    max_zones: int | None = None
    simplify_px: float = 1.0


def contact_records(labels: np.ndarray, valid: np.ndarray, grid: RasterGrid, names: dict[int, str], *,
                    layer: str, role: str, options: ContactOptions, id_start: int = 1,
                    extent: RasterGrid | None = None) -> list[dict]:
    """Buffered contact zones (kind 'contact') between units of a label image on `grid`; score = contact density.

    Positions are words within `extent` (the analysis grid; default `grid`).

    Each zone is one connected band of contacts; its description names the unit pairs that make up
    most of its length. With `options.involve`, only contacts touching those codes count.
    """
    counts = np.zeros(labels.shape, dtype="int32")
    edges = []
    for rows, cols, a, b, axis in contact_edges(labels, valid):
        if options.involve is not None:
            involved = np.isin(a, list(options.involve)) | np.isin(b, list(options.involve))
            rows, cols, a, b = rows[involved], cols[involved], a[involved], b[involved]
        rows2, cols2 = (rows, cols + 1) if axis == 1 else (rows + 1, cols)
        np.add.at(counts, (rows, cols), 1)
        np.add.at(counts, (rows2, cols2), 1)
        edges.append((rows, cols, np.minimum(a, b), np.maximum(a, b)))
    touched = counts > 0
    if not touched.any():
        return []
    radius = max(0.0, float(options.buffer_px) - 0.5)
    band = _dilate(touched, radius) & valid
    components, n = ndimage.label(band, structure=np.ones((3, 3)))
    sizes = np.bincount(components.ravel(), minlength=n + 1)
    density = line_density(counts, grid, options.density_radius_px)
    rows = np.concatenate([e[0] for e in edges])
    cols = np.concatenate([e[1] for e in edges])
    lo = np.concatenate([e[2] for e in edges])
    hi = np.concatenate([e[3] for e in edges])
    comp_of_edge = components[rows, cols]
    keep = [c for c in range(1, n + 1) if sizes[c] >= options.min_area_px]
    keep.sort(key=lambda c: -int((comp_of_edge == c).sum()))
    if options.max_zones is not None:
        keep = keep[: options.max_zones]
    relabel = np.zeros(n + 1, dtype="int32")
    relabel[keep] = np.arange(1, len(keep) + 1)
    polygons = labelled_polygons(relabel[components], grid, options.simplify_px)
    pixel_len = max(grid.pixel_size)
    records: list[dict] = []
    for index, comp in enumerate(keep, start=1):
        geom = polygons.get(index)
        if geom is None:
            continue
        mine = comp_of_edge == comp
        pairs, counts_per_pair = np.unique(np.stack([lo[mine], hi[mine]]), axis=1, return_counts=True)
        order = np.argsort(-counts_per_pair)[:3]
        pair_text = ", ".join(f"{names.get(int(pairs[0, i]), pairs[0, i])}/{names.get(int(pairs[1, i]), pairs[1, i])}"
                              for i in order)
        length = mine.sum() * pixel_len
        length_text = f"{length / 1000:.3g} km" if grid.georeferenced else f"{length:.0f} px"
        values = density[components == comp]
        records.append(zone_record(
            geom, extent or grid, zone_id=f"{layer}:contact{id_start + len(records)}", layer=layer, role=role,
            kind="contact",
            score_mean=float(values.mean()), score_max=float(values.max()),
            what=f"Contact zone {pair_text} ({length_text} of contact)"))
    return records


def _dilate(mask: np.ndarray, radius_px: float) -> np.ndarray:
    """Grow a mask by a disc of `radius_px` pixels (0 keeps it as is)."""
    if radius_px <= 0:
        return mask
    r = int(np.floor(radius_px))
    yy, xx = np.mgrid[-r:r + 1, -r:r + 1]
    disc = (xx * xx + yy * yy) <= radius_px * radius_px + 1e-9
    return ndimage.binary_dilation(mask, structure=disc)


@dataclass
class UnitRegionParams:
    """What `unit_regions` marks.

    units: unit names to select (favourable units); empty selects every unit.
    output: 'units' (unit polygons), 'contacts' (buffered contacts) or 'both'.
    contact_buffer_px: half-width of contact zones in analysis pixels (contacts sit on pixel edges).
    contacts_involving_units: with a selection, keep only contacts that touch a selected unit.
    """

    units: tuple = ()
    output: str = "units"
    contact_buffer_px: float = 1.0
    contacts_involving_units: bool = True
    density_radius_px: int = 3
    min_area_px: int = 4
    max_zones: int | None = None
    simplify_px: float = 1.0

    def __post_init__(self):
        self.units = unit_list(self.units)
        if self.output not in ("units", "contacts", "both"):
            raise LodestarError(f"output must be 'units', 'contacts' or 'both', not {self.output!r}.")
        if self.contact_buffer_px < 0.5:
            raise LodestarError("contact_buffer_px must be at least 0.5 pixel.")


def unit_regions(raster_set: RasterSet, layer: str, params: UnitRegionParams | None = None, bounds=None,
                 progress: Progress = SILENT) -> ToolResult:
    """Unit polygons (kind 'unit') and / or contact zones (kind 'contact') of a categorical raster layer.

    Unit zones are connected patches of one unit; a selected (favourable) unit scores 1, others 0.
    Contact zones score the contact density (km of contact per km2). Polygons are in the analysis
    CRS, cropped to `bounds` (analysis CRS) when given.
    """
    params = params or UnitRegionParams()
    spec = raster_set.spec(layer)
    if spec.is_vector:
        raise LodestarError(f"{layer} is a vector layer; use the vector evidence tool for unit polygons.")
    reader = raster_set.readers[layer]
    if reader.count != 1 or not reader.is_integer:
        raise LodestarError(f"{layer} is not a categorical map (one band of integer unit codes); "
                            "give the geological map raster with its legend.")
    data, grid = raster_set.read_window(layer, bounds)
    labels, valid = categorical_labels(data)
    if not valid.any():
        raise LodestarError(f"{layer} has only nodata in the chosen area; choose another area or layer.")
    codes = np.unique(labels[valid])
    names = unit_names(raster_set, layer, codes)
    selected = match_units(names, params.units) if params.units else set()
    progress.set(10)
    records: list[dict] = []
    if params.output in ("units", "both"):
        records += _unit_records(labels, valid, grid, raster_set.grid, names, selected, layer, spec.role, params,
                                 progress)
    progress.check()
    progress.set(60)
    if params.output in ("contacts", "both"):
        involve = frozenset(selected) if (selected and params.contacts_involving_units) else None
        options = ContactOptions(params.contact_buffer_px, params.density_radius_px, involve, params.min_area_px,
                                 params.max_zones, params.simplify_px)
        records += contact_records(labels, valid, grid, names, layer=layer, role=spec.role, options=options,
                                   extent=raster_set.grid)
    progress.set(100)
    picked = ", ".join(sorted(names[c] for c in selected)) or "all units"
    log = [f"{layer}: {len(codes)} units present; selected {picked}; {len(records)} zones."]
    return ToolResult("unit_regions", layer, zones_frame(records, grid.crs), asdict(params),
                      {"units_present": sorted(names.values()), "selected": sorted(names[c] for c in selected)},
                      raster_set.log + log)


def _unit_records(labels, valid, grid, extent, names, selected, layer, role, params, progress) -> list[dict]:
    """Connected patches of each (selected) unit, largest first, at most params.max_zones (positions within
    the analysis `extent`)."""
    records = []
    for code in sorted(selected) if selected else sorted(names):
        components, n = ndimage.label((labels == code) & valid, structure=np.ones((3, 3)))
        sizes = np.bincount(components.ravel(), minlength=n + 1)
        relabel = np.where(sizes >= params.min_area_px, np.arange(n + 1), 0).astype("int32")
        relabel[0] = 0
        polygons = labelled_polygons(relabel[components], grid, params.simplify_px)
        score = 1.0 if code in selected else 0.0
        word = "Favourable unit" if code in selected else "Unit"
        for index, geom in sorted(polygons.items(), key=lambda item: -sizes[item[0]]):
            records.append(zone_record(
                geom, extent, zone_id=f"{layer}:unit{code}_{index}", layer=layer, role=role, kind="unit",
                score_mean=score, score_max=score, what=f"{word} {names[code]} (code {code})"))
        progress.check()
    records.sort(key=lambda r: -r["area_m2"])
    return records if params.max_zones is None else records[: params.max_zones]
