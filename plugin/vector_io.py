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
import pandas as pd
from pyproj import CRS

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


def read_vector(path, crs: CRS | None = None) -> gpd.GeoDataFrame:
    """Read a vector file; reproject to `crs` when given. GeoJSON without a crs member is EPSG:4326."""
    path = Path(path)
    if not path.exists():
        raise LodestarError(f"Vector file not found: {path}.")
    try:
        frame = gpd.read_file(path, **_shapefile_encoding(path))
    except Exception as exc:  # fiona raises many driver-specific types
        raise LodestarError(f"Cannot read {path} as a vector layer: {exc}") from exc
    if frame.crs is None and path.suffix.lower() in (".geojson", ".json"):
        frame = frame.set_crs("EPSG:4326")
    if crs is not None and len(frame):
        if frame.crs is None:
            raise LodestarError(f"{path.name} has no CRS; assign one (Layer Properties > Source) and try again.")
        frame = frame.to_crs(crs)
    return frame


_LONGITUDE, _LATITUDE = {"longitude", "long", "lon", "lng"}, {"latitude", "lat"}
_X_WORDS, _Y_WORDS = {"x", "easting", "east"}, {"y", "northing", "north"}


def points_from_columns(frame: gpd.GeoDataFrame, log: list) -> gpd.GeoDataFrame:
    """A table without geometry (a CSV of deposits) as points from its coordinate columns, found by a word of their
    names ("LONG_DD", "Latitude (deg)", "POINT_X", "Easting_MGA"): longitude / latitude (EPSG:4326, checked to lie
    within +-180 and +-90), else x / y or easting / northing (no CRS: the caller's). Decimal commas are read; rows
    without numbers there are dropped and said in `log`. A frame with geometry, or a table with no such columns, is
    returned as it is."""
    if len(frame) == 0 or frame.geometry.notna().any():
        return frame
    geometry = frame.geometry.name
    words = {name: set(re.split(r"[^a-z]+", str(name).lower())) for name in frame.columns if name != geometry}
    geographic = True
    x, y = _column(frame, words, _LONGITUDE), _column(frame, words, _LATITUDE)
    if x is None or y is None:
        geographic, x, y = False, _column(frame, words, _X_WORDS), _column(frame, words, _Y_WORDS)
    if x is None or y is None:
        return frame
    xs, ys = _numbers(frame[x]), _numbers(frame[y])
    ok = xs.notna() & ys.notna()
    if geographic and ((xs[ok].abs() > 180).any() or (ys[ok].abs() > 90).any()):
        raise LodestarError(f"its columns {x} and {y} hold values beyond longitude +-180 and latitude +-90; if they "
                            "are projected coordinates, name the columns x and y (or easting and northing).")
    if not ok.all():
        log.append(f"{_rows(int((~ok).sum()))} of {len(frame)} without numbers in {x} and {y} left out.")
    points = gpd.GeoDataFrame(frame.drop(columns=[geometry])[ok].reset_index(drop=True),
                              geometry=gpd.points_from_xy(xs[ok], ys[ok]), crs="EPSG:4326" if geographic else None)
    log.append(f"Points read from the columns {x} and {y}" + (" (longitude and latitude, EPSG:4326)." if geographic
                                                               else "."))
    return points


def _column(frame, words: dict, wanted: set):
    """The column one of whose name's words is wanted holding the most numbers ("longitude" before "long_name"; the
    first on a tie), or None."""
    candidates = [name for name, parts in words.items() if parts & wanted]
    return max(candidates, key=lambda name: int(_numbers(frame[name]).notna().sum()), default=None)


def _numbers(column: pd.Series) -> pd.Series:
    """Numbers of a text column, decimal commas read ("117,5"); NaN where there is none."""
    text = column.astype(str).str.strip().str.replace(r"^(-?\d+),(\d+)$", r"\1.\2", regex=True)
    return pd.to_numeric(text, errors="coerce")


def _rows(count: int) -> str:
    return f"{count} row" if count == 1 else f"{count} rows"


def holds_points(path, sample: int = 1000) -> bool:
    """Whether a vector file's layer holds points (known deposits, samples): declared so, or, when its declared type
    says nothing ("Unknown", "Geometry"), its first `sample` features all points; False when it cannot tell."""
    try:
        with fiona.open(Path(path)) as source:
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
    UTF-8 with a .cpg file saying so (any zone id or name survives). `stamp` (ISO 8601 UTC, e.g. a run's
    created_utc) is the time a GeoPackage (or a Shapefile's .dbf) records as its last change, so the same content
    gives the same bytes on any day.
    """
    path = check_output_path(path, "Output", vector=True)
    driver = DRIVERS[path.suffix.lower()]
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = _shapefile_safe(frame) if driver == "ESRI Shapefile" else frame
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".lodestar-") as tmp:
        tmp_path = Path(tmp) / path.name
        kwargs = {"driver": driver}
        if layer and driver == "GPKG":
            kwargs["layer"] = layer
        if driver == "ESRI Shapefile":
            kwargs["encoding"] = "utf-8"
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


def _shapefile_safe(frame: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    """Shapefile field names are at most 10 characters; lists and dicts become text."""
    frame = frame.copy()
    for column in frame.columns:
        if column != frame.geometry.name and frame[column].map(lambda v: isinstance(v, (list, dict, tuple))).any():
            frame[column] = frame[column].map(str)
    return frame
