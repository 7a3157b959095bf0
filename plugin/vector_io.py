"""Vector reading and the one writer of vector outputs (any OGR format, written whole or not at all)."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import geopandas as gpd
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
        frame = gpd.read_file(path)
    except Exception as exc:  # fiona raises many driver-specific types
        raise LodestarError(f"Cannot read {path} as a vector layer: {exc}") from exc
    if frame.crs is None and path.suffix.lower() in (".geojson", ".json"):
        frame = frame.set_crs("EPSG:4326")
    if crs is not None and len(frame):
        if frame.crs is None:
            raise LodestarError(f"{path.name} has no CRS; assign one (Layer Properties > Source) and try again.")
        frame = frame.to_crs(crs)
    return frame


def write_vector(frame: gpd.GeoDataFrame, path, layer: str | None = None) -> Path:
    """Write a GeoDataFrame to `path` (driver from the extension), replacing it only once complete.

    The file is written in a temporary folder beside the target and moved into place, so a failure
    never leaves a half-written output (Shapefile sidecar files move together).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    driver = DRIVERS.get(suffix)
    if driver is None:
        raise LodestarError(
            f"Unknown vector format {suffix!r} for {path.name}; use one of {', '.join(sorted(DRIVERS))}."
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = _shapefile_safe(frame) if driver == "ESRI Shapefile" else frame
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".lodestar-") as tmp:
        tmp_path = Path(tmp) / path.name
        kwargs = {"driver": driver}
        if layer and driver == "GPKG":
            kwargs["layer"] = layer
        try:
            if len(frame) == 0:
                _write_empty(frame, tmp_path, driver, kwargs)
            else:
                frame.to_file(tmp_path, **kwargs)
        except Exception as exc:
            raise LodestarError(f"Could not write {path}: {exc}") from exc
        parts = [p for p in Path(tmp).iterdir()]
        for part in parts:
            target = path.parent / part.name
            if target.exists():
                target.unlink()
            shutil.move(str(part), str(target))
    return path


def _write_empty(frame: gpd.GeoDataFrame, tmp_path: Path, driver: str, kwargs: dict) -> None:
    """Write a feature-less layer that keeps the schema (geopandas cannot infer a geometry type)."""
    from geopandas.io.file import infer_schema

    schema = infer_schema(frame) if len(frame.columns) > 1 else {"geometry": "Polygon", "properties": {}}
    if schema.get("geometry") in (None, "Unknown"):
        schema["geometry"] = "Polygon"
    frame.to_file(tmp_path, schema=schema, **kwargs)


def _shapefile_safe(frame: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    """Shapefile field names are at most 10 characters; lists and dicts become text."""
    frame = frame.copy()
    for column in frame.columns:
        if column != frame.geometry.name and frame[column].map(lambda v: isinstance(v, (list, dict, tuple))).any():
            frame[column] = frame[column].map(str)
    return frame
