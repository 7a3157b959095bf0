"""Vector reading and the one writer of vector outputs (any OGR format, written whole or not at all)."""
from __future__ import annotations

import os
import re
import shutil
import tempfile
import warnings
from pathlib import Path

import fiona
import geopandas as gpd
import numpy as np
import pandas as pd
from pyproj import CRS

from .confinement import referenced_files
from .csv_table import safe_cell
from .errors import LodestarError

DRIVERS = {
    ".gpkg": "GPKG",
    ".shp": "ESRI Shapefile",
    ".geojson": "GeoJSON",
    ".json": "GeoJSON",
    ".fgb": "FlatGeobuf",
    ".gml": "GML",
    ".kml": "KML",
    ".sqlite": "SQLite",
    ".csv": "CSV",
}
SHAPEFILE_PARTS = (".shp", ".shx", ".dbf", ".prj", ".cpg", ".qix", ".sbn", ".sbx")
SHAPEFILE_TEXT_BYTES = 254
"""A Shapefile's text field holds at most this many bytes (GDAL cuts longer text where it falls, and warns)."""


def split_source(source) -> tuple[Path, str | None]:
    """(file, layer name) of a vector source as QGIS writes it: 'two.gpkg|layername=faults' names one layer of a
    GeoPackage; a plain path names none. Other QGIS options (a layer id, a filter) are refused, saying what to do."""
    text = str(source)
    if "|" not in text:
        return Path(text), None
    file, *options = text.split("|")
    layer = None
    for option in options:
        key, equals, value = option.partition("=")
        if key.strip().lower() != "layername" or not equals or not value.strip() or layer is not None:
            raise LodestarError(f"{text}: only '|layername=NAME' may follow the file name (QGIS's way to name one "
                                f"layer of a GeoPackage), not '|{option}'; save a filtered layer as its own file.")
        layer = value
    return Path(file), layer


def vector_source(path, layer: str | None = None, root=None) -> tuple[Path, str | None]:
    """The checked (file, layer) a vector read opens, before OGR opens anything: no network path nor a dataset that
    reads files outside `root` (`confinement`), an existing file (not a folder, not empty), and one layer: the one
    named (`path|layername=NAME` or `layer`), which must exist, or the only one; a file of several layers given
    without a name is refused, naming them."""
    path, named = split_source(path)
    layer = layer or named
    if not path.exists():
        referenced_files(path, root, raster=False)  # a network path is named as such, not as a missing file
        raise LodestarError(f"Vector file not found: {path}.")
    if path.is_dir():
        raise LodestarError(f"{path} is a folder, not a vector file; give the file itself (a GeoPackage, Shapefile "
                            "or GeoJSON file), e.g. one of the files inside it.")
    if path.stat().st_size == 0:
        raise LodestarError(f"{path} is empty (0 bytes): export the layer again (a complete copy), or leave it out.")
    referenced_files(path, root, raster=False)
    try:
        layers = fiona.listlayers(path)
    except Exception as exc:  # fiona raises many driver-specific types
        raise LodestarError(f"Cannot read {path} as a vector layer: {exc}") from exc
    if layer is not None and layer not in layers:
        raise LodestarError(f"{path.name} has no layer {layer!r}; its layers: {', '.join(layers)}. Name one as "
                            f"{path.name}|layername=NAME.")
    if layer is None and len(layers) > 1:
        raise LodestarError(f"{path.name} holds {len(layers)} layers ({', '.join(layers)}); name the one to read as "
                            f"{path.name}|layername=NAME (QGIS's own way), e.g. {path.name}|layername={layers[-1]}.")
    return path, layer


def read_vector(path, crs: CRS | None = None, layer: str | None = None, root=None) -> gpd.GeoDataFrame:
    """Read a vector file's layer (`vector_source`: 'file.gpkg|layername=NAME' or `layer` names one of several);
    reproject to `crs` when given. GeoJSON without a crs member is EPSG:4326."""
    path, layer = vector_source(path, layer, root)
    try:
        frame = gpd.read_file(path, layer=layer, **_shapefile_encoding(path))
    except Exception as exc:  # fiona raises many driver-specific types
        raise LodestarError(f"Cannot read {path} as a vector layer: {exc}") from exc
    if frame.crs is None and path.suffix.lower() in (".geojson", ".json"):
        frame = frame.set_crs("EPSG:4326")
    if crs is not None and len(frame):
        if frame.crs is None:
            raise LodestarError(f"{path.name} has no CRS; assign one (Layer Properties > Source) and try again.")
        frame = frame.to_crs(crs)
    return frame


def check_vector_input(path, layer: str | None = None, root=None, what: str = "") -> None:
    """Refuse, before any work, an input vector that cannot speak: anything `vector_source` refuses, and a layer
    with no features. `what` names it in the message."""
    prefix = f"{what}: " if what else ""
    try:
        path, layer = vector_source(path, layer, root)
        with fiona.open(path, layer=layer) as source:
            empty = next(iter(source), None) is None
    except LodestarError as exc:
        raise LodestarError(f"{prefix}{exc}") from exc
    except Exception as exc:  # fiona raises many driver-specific types
        raise LodestarError(f"{prefix}Cannot read {path} as a vector layer: {exc}") from exc
    if empty:
        named = f"{path.name}|layername={layer}" if layer else path.name
        raise LodestarError(f"{prefix}{named} holds no features: give a layer with its features (fault lines, unit "
                            "polygons), or leave it out.")


_LONGITUDE, _LATITUDE = {"longitude", "long", "lon", "lng"}, {"latitude", "lat"}
_X_WORDS, _Y_WORDS = {"x", "easting", "east"}, {"y", "northing", "north"}


def read_table(path) -> pd.DataFrame | None:
    """A CSV table (a deposits list) read in one vectorised pass, every cell as text, as OGR's CSV driver gives it:
    the separator (comma, semicolon, tab or pipe) is the one the header line holds most of, UTF-8 with or without a
    BOM. None when OGR must read it (a WKT geometry column, or a .csvt / .prj beside it): `read_vector` then."""
    path = Path(path)
    if not path.is_file():
        raise LodestarError(f"Table not found: {path}.")
    if path.with_suffix(".csvt").exists() or path.with_suffix(".prj").exists():
        return None
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as fh:
            header = fh.readline()
        separator = max(",;\t|", key=header.count) if header.strip() else ","
        names = [name.strip().strip('"').lower() for name in header.split(separator)]
        if "wkt" in names:
            return None
        return pd.read_csv(path, sep=separator, dtype=str, keep_default_na=False, encoding="utf-8-sig",
                           encoding_errors="replace", skipinitialspace=False)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise LodestarError(f"Cannot read {path} as a table: {' '.join(str(exc).split())}") from exc


def table_coordinates(frame: pd.DataFrame, log: list) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """(x, y, geographic) of a table without geometry (a CSV of deposits) from its coordinate columns, found by a
    word of their names ("LONG_DD", "Latitude (deg)", "POINT_X", "Easting_MGA"): longitude / latitude (geographic:
    EPSG:4326, checked to lie within +-180 and +-90), else x / y or easting / northing (no CRS: the caller's).
    Decimal commas are read; rows without numbers there are dropped and said in `log`. None when no such columns.
    Vectorised: a million rows take about a second."""
    if len(frame) == 0:
        return None
    geometry = frame.geometry.name if isinstance(frame, gpd.GeoDataFrame) else None
    words = {name: set(re.split(r"[^a-z]+", str(name).lower())) for name in frame.columns if name != geometry}
    numbers: dict = {}
    geographic = True
    x, y = _column(frame, words, _LONGITUDE, numbers), _column(frame, words, _LATITUDE, numbers)
    if x is None or y is None:
        geographic, x, y = False, _column(frame, words, _X_WORDS, numbers), _column(frame, words, _Y_WORDS, numbers)
    if x is None or y is None:
        return None
    xs, ys = _numbers(frame[x], numbers, x), _numbers(frame[y], numbers, y)
    ok = ~(np.isnan(xs) | np.isnan(ys))
    if geographic and ((np.abs(xs[ok]) > 180).any() or (np.abs(ys[ok]) > 90).any()):
        raise LodestarError(f"its columns {x} and {y} hold values beyond longitude +-180 and latitude +-90; if they "
                            "are projected coordinates, name the columns x and y (or easting and northing).")
    if not ok.all():
        log.append(f"{_rows(int((~ok).sum()))} of {len(frame)} without numbers in {x} and {y} left out.")
    log.append(f"Points read from the columns {x} and {y}" + (" (longitude and latitude, EPSG:4326)." if geographic
                                                               else "."))
    return xs[ok], ys[ok], geographic


def _column(frame, words: dict, wanted: set, numbers: dict):
    """The column one of whose name's words is wanted holding the most numbers ("longitude" before "long_name"; the
    first on a tie), or None."""
    candidates = [name for name, parts in words.items() if parts & wanted]
    return max(candidates, key=lambda name: int((~np.isnan(_numbers(frame[name], numbers, name))).sum()),
               default=None)


def _numbers(column: pd.Series, known: dict | None = None, name=None) -> np.ndarray:
    """Numbers of a text column (float64), decimal commas read ("117,5"); NaN where there is none. Plain numbers
    are parsed in one vectorised pass; only the other cells go through text clean-up. `known` caches by `name`."""
    if known is not None and name in known:
        return known[name]
    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    rest = np.isnan(values) & column.notna().to_numpy()
    if rest.any():
        text = column[rest].astype(str).str.strip().str.replace(r"^(-?\d+),(\d+)$", r"\1.\2", regex=True)
        values[rest] = pd.to_numeric(text, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    if known is not None:
        known[name] = values
    return values


def _rows(count: int) -> str:
    return f"{count} row" if count == 1 else f"{count} rows"


def holds_points(path, sample: int = 1000, layer: str | None = None) -> bool:
    """Whether a vector file's layer holds points (known deposits, samples): declared so, or, when its declared type
    says nothing ("Unknown", "Geometry"), its first `sample` features all points; False when it cannot tell."""
    try:
        with fiona.open(Path(path), layer=layer) as source:
            declared = str(source.schema.get("geometry") or "").lower()
            if "point" in declared or declared not in ("", "none", "unknown", "geometry", "geometrycollection"):
                return "point" in declared
            kinds = {str((feature.get("geometry") or {}).get("type") or "").lower()
                     for _, feature in zip(range(sample), source)} - {""}
    except Exception:  # fiona raises many driver-specific types; reading the layer later says what is wrong
        return False
    return bool(kinds) and all("point" in kind for kind in kinds)


def check_output_path(path, what: str = "Output", vector: bool = False) -> Path:
    """Refuse, before any work, an output that cannot be written: a folder where the file should be (a folder
    named x.gpkg), a vector format no driver writes, a parent that is a file or not writable."""
    path = Path(path)
    if path.is_dir():
        raise LodestarError(f"{what}: {path} is a folder, not a file; give a file name (e.g. {path / path.name}) or "
                            "remove or rename the folder.")
    if vector and path.suffix.lower() not in DRIVERS:
        raise LodestarError(f"{what}: unknown vector format {path.suffix.lower() or '(no extension)'!r} for "
                            f"{path.name}; use one of {', '.join(sorted(DRIVERS))}.")
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise LodestarError(f"{what}: {path} cannot be written: {parent} is a file, not a folder.")
    if not os.access(parent, os.W_OK):
        raise LodestarError(f"{what}: {path} cannot be written: no permission to write in {parent}; choose another "
                            "folder.")
    return path


def _shapefile_encoding(path: Path) -> dict:
    """The encoding a Shapefile's .cpg names, given to the reader explicitly: inside QGIS, GDAL's SHAPE_ENCODING is
    set to '' (QGIS recodes itself), and without it UTF-8 text would be read as Latin-1."""
    cpg = path.with_suffix(".cpg")
    if path.suffix.lower() != ".shp" or not cpg.is_file():
        return {}
    name = cpg.read_text(encoding="ascii", errors="ignore").strip()
    aliases = {"UTF8": "utf-8", "UTF-8": "utf-8", "65001": "utf-8", "1252": "cp1252", "ANSI 1252": "cp1252",
               "88591": "latin-1", "8859-1": "latin-1", "ISO-8859-1": "latin-1", "ISO88591": "latin-1"}
    encoding = aliases.get(name.upper(), name.lower())
    try:
        "".encode(encoding)
    except LookupError:
        return {}
    return {"encoding": encoding}


def write_vector(frame: gpd.GeoDataFrame, path, layer: str | None = None, stamp: str | None = None) -> Path:
    """Write a GeoDataFrame to `path` (driver from the extension), replacing it only once complete.

    The file is written in a temporary folder beside the target and moved into place, so a failure
    never leaves a half-written output (Shapefile sidecar files move together). A Shapefile is written in
    UTF-8 with a .cpg file saying so (any zone id or name survives); a text longer than a Shapefile field holds
    is cut at a word, ending in '…', and the layer's fields are written whole beside it (`text_sidecar`: what
    `shapefile_note` says). `stamp` (ISO 8601 UTC, e.g. a run's
    created_utc) is the time a GeoPackage (or a Shapefile's .dbf) records as its last change, so the same content
    gives the same bytes on any day.
    """
    path = check_output_path(path, "Output", vector=True)
    driver = DRIVERS[path.suffix.lower()]
    path.parent.mkdir(parents=True, exist_ok=True)
    original = frame
    frame = _shapefile_safe(frame) if driver == "ESRI Shapefile" else _csv_safe(frame) if driver == "CSV" else frame
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".lodestar-") as tmp:
        tmp_path = Path(tmp) / path.name
        kwargs = {"driver": driver}
        if layer and driver == "GPKG":
            kwargs["layer"] = layer
        if driver == "ESRI Shapefile":
            kwargs["encoding"] = "utf-8"
        if driver == "CSV":  # the geometry as a WKT column (without it GDAL's CSV driver refuses the layer)
            kwargs["GEOMETRY"] = "AS_WKT"
        env = {"OGR_CURRENT_DATE": _gpkg_date(stamp)} if stamp and driver == "GPKG" else {}
        try:
            with fiona.Env(**env):
                if len(frame) == 0:
                    _write_empty(frame, tmp_path, driver, kwargs)
                else:
                    frame.to_file(tmp_path, **kwargs)
        except Exception as exc:
            raise LodestarError(f"Could not write {path}: {exc}") from exc
        if stamp and driver == "ESRI Shapefile":
            _date_dbf(tmp_path.with_suffix(".dbf"), stamp)
        if driver == "ESRI Shapefile" and long_texts(original):
            table = pd.DataFrame(original.drop(columns=original.geometry.name))
            table = table.rename(columns={c: safe_cell(c) for c in table.columns})
            for column in table.columns:
                if table[column].dtype == object:
                    table[column] = table[column].map(safe_cell)
            table.to_csv(Path(tmp) / text_sidecar(path).name, index=False, encoding="utf-8")
        parts = [p for p in Path(tmp).iterdir()]
        for part in parts:
            target = path.parent / part.name
            if target.exists():
                target.unlink()
            shutil.move(str(part), str(target))
    return path


def _gpkg_date(stamp: str) -> str:
    """A run's created_utc ('2026-11-23T20:33:05Z') as the GeoPackage date GDAL takes ('...T20:33:05.000Z')."""
    text = str(stamp).strip()
    return text[:-1] + ".000Z" if text.endswith("Z") and "." not in text else text


def _date_dbf(dbf: Path, stamp: str) -> None:
    """Set a .dbf header's date of last update (bytes 1-3: years since 1900, month, day) to the stamp's date."""
    year, month, day = (int(part) for part in str(stamp)[:10].split("-"))
    with open(dbf, "r+b") as fh:
        fh.seek(1)
        fh.write(bytes((year - 1900, month, day)))


def _write_empty(frame: gpd.GeoDataFrame, tmp_path: Path, driver: str, kwargs: dict) -> None:
    """Write a feature-less layer that keeps the schema (geopandas cannot infer a geometry type)."""
    from geopandas.io.file import infer_schema

    schema = infer_schema(frame) if len(frame.columns) > 1 else {"geometry": "Polygon", "properties": {}}
    if schema.get("geometry") in (None, "Unknown"):
        schema["geometry"] = "Polygon"
    with warnings.catch_warnings():  # an empty layer with its schema is what is meant here
        warnings.filterwarnings("ignore", "You are attempting to write an empty DataFrame", UserWarning)
        frame.to_file(tmp_path, schema=schema, **kwargs)


def _csv_safe(frame: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    """A layer written as CSV with every text cell, and column name, that a spreadsheet would run as a formula
    written as text (`csv_table.safe_cell`)."""
    frame = frame.rename(columns={c: safe_cell(c) for c in frame.columns if c != frame.geometry.name})
    for column in frame.columns:
        if column != frame.geometry.name and frame[column].dtype == object:
            frame[column] = frame[column].map(safe_cell)
    return frame


def _shapefile_safe(frame: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    """Shapefile field names are at most 10 characters; lists and dicts become text; text over a field's
    SHAPEFILE_TEXT_BYTES is cut at a word (`cut_text`)."""
    frame = frame.copy()
    for column in frame.columns:
        if column != frame.geometry.name and frame[column].map(lambda v: isinstance(v, (list, dict, tuple))).any():
            frame[column] = frame[column].map(str)
    for column in long_texts(frame):
        frame[column] = frame[column].map(lambda v: cut_text(v) if isinstance(v, str) else v)
    return frame


def long_texts(frame) -> list:
    """The text fields of `frame` holding a value longer than a Shapefile field holds (SHAPEFILE_TEXT_BYTES bytes of
    UTF-8)."""
    geometry = frame.geometry.name if isinstance(frame, gpd.GeoDataFrame) else None
    return [column for column in frame.columns if column != geometry and frame[column].dtype == object
            and frame[column].map(lambda v: isinstance(v, str) and len(v.encode()) > SHAPEFILE_TEXT_BYTES).any()]


def cut_text(text: str, limit: int = SHAPEFILE_TEXT_BYTES) -> str:
    """`text` within `limit` bytes of UTF-8: whole when it fits, else cut after its last whole word that leaves room
    for an ellipsis ('…')."""
    if len(text.encode()) <= limit:
        return text
    room = limit - len("…".encode())
    head = text.encode()[:room].decode("utf-8", errors="ignore")
    cut = head.rsplit(" ", 1)[0] if " " in head.strip() else head
    return cut.rstrip(" ,;:") + "…"


def text_sidecar(path) -> Path:
    """The CSV a Shapefile's fields are written whole in, beside it, when a text is too long for its field."""
    path = Path(path)
    return path.with_name(f"{path.stem}_fields.csv")


def shapefile_note(frame, path) -> str:
    """What writing `frame` to `path` cuts, in one sentence ('' when nothing is): the fields cut, and the file
    holding them whole."""
    path = Path(path)
    cut = long_texts(frame) if path.suffix.lower() == ".shp" else []
    if not cut:
        return ""
    return (f"A Shapefile field holds at most {SHAPEFILE_TEXT_BYTES} characters: {', '.join(cut)} is cut at a word "
            f"there (ending in '…'), and every field is written whole in {text_sidecar(path).name} beside it (a "
            "GeoPackage keeps them whole).")
