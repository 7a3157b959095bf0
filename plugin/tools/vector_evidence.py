"""Vector layers of a case as zones: fault lines (role `structure`) and unit polygons (`geological_map`).

Fault lines are reprojected to the analysis CRS, clipped to the analysis extent, buffered (by
default 1.5 analysis pixels) and merged where buffers touch: each merged cluster is one zone of
kind "fault" scored by fault density (km of fault per km2 within `density_radius_px` pixels).
Unit polygons are dissolved by unit name (legend, or a name field) into zones of kind "unit";
selected (favourable) units score 1, others 0.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from geopandas import GeoSeries
from rasterio.enums import MergeAlg
from rasterio.features import rasterize
from shapely.geometry import MultiLineString, box
from shapely.ops import unary_union

from ..errors import LodestarError
from ..progress import SILENT, Progress
from ..raster_io import RasterGrid, RasterSet
from ..zones import strike_word, zone_record, zones_frame
from .categorical import line_density, match_units, read_legend, unit_list
from .result import ToolResult

NAME_FIELDS = ("name", "unit", "unit_name", "code", "label", "lithology", "symbol", "formation", "rocktype")


@dataclass
class VectorEvidenceParams:
    """buffer_m: fault zone half-width in map units (None = buffer_px analysis pixels);
    units: unit names to keep (wildcards allowed); name_field: attribute with unit names
    (default: the first of NAME_FIELDS present, or the legend for a numeric code field)."""

    buffer_m: float | None = None
    buffer_px: float = 1.5
    density_radius_px: int = 5
    min_length_m: float = 0.0
    units: tuple = ()
    name_field: str | None = None
    max_zones: int | None = None
    simplify_px: float = 0.5

    def __post_init__(self):
        self.units = unit_list(self.units)
        if (self.buffer_m is not None and self.buffer_m <= 0) or self.buffer_px <= 0:
            raise LodestarError("The fault buffer must be positive.")


def vector_evidence(raster_set: RasterSet, layer: str, params: VectorEvidenceParams | None = None, bounds=None,
                    progress: Progress = SILENT) -> ToolResult:
    """Zones from a vector layer of the raster set: fault zones for lines, unit zones for polygons.

    Features are reprojected to the analysis CRS and clipped to the analysis extent (or `bounds`);
    positions are words within the analysis extent.
    """
    params = params or VectorEvidenceParams()
    spec = raster_set.spec(layer)
    if not spec.is_vector:
        raise LodestarError(f"{layer} is a raster layer; use feature_regions or unit_regions for it.")
    if raster_set.crs is None:
        raise LodestarError("Vector layers need georeferenced rasters to define the analysis area.")
    extent = grid = raster_set.grid
    if bounds is not None:
        grid = grid.window_grid(grid.bounds_window(bounds))
    frame = raster_set.features(layer)
    log = list(raster_set.log)
    if frame.crs is not None and not frame.crs.equals(raster_set.crs):
        log.append(f"{layer} reprojected to the analysis CRS.")
    area = box(*grid.bounds)
    frame = frame[frame.geometry.notna() & ~frame.geometry.is_empty]
    frame = frame[frame.intersects(area)].copy()
    frame["geometry"] = frame.geometry.intersection(area)
    progress.set(20)
    kinds = {t for t in frame.geom_type.unique()}
    if kinds <= {"LineString", "MultiLineString"} and kinds:
        records, stats = _fault_records(frame, grid, extent, layer, spec.role, params, progress)
    elif kinds <= {"Polygon", "MultiPolygon"} and kinds:
        records, stats = _unit_records(frame, grid, extent, layer, spec, params)
    elif not kinds:
        records, stats = [], {"features": 0}
    else:
        raise LodestarError(f"{layer} mixes geometry types {sorted(kinds)}; give fault lines or unit polygons.")
    progress.set(100)
    log.append(f"{layer}: {stats.get('features', 0)} features in the area, {len(records)} zones.")
    return ToolResult("vector_evidence", layer, zones_frame(records, grid.crs), asdict(params), stats, log)


def _fault_records(frame, grid: RasterGrid, extent: RasterGrid, layer, role, params, progress):
    if params.min_length_m > 0:
        frame = frame[frame.geometry.length >= params.min_length_m]
    lines = list(frame.geometry)
    if not lines:
        return [], {"features": 0}
    buffer = params.buffer_m if params.buffer_m is not None else params.buffer_px * max(grid.pixel_size)
    merged = unary_union([g.buffer(buffer, resolution=4) for g in lines]).intersection(box(*grid.bounds))
    clusters = [g for g in getattr(merged, "geoms", [merged]) if g.area > 0]
    progress.set(60)
    counts = rasterize(((g, 1) for g in lines), out_shape=(grid.height, grid.width), transform=grid.transform,
                       fill=0, all_touched=False, merge_alg=MergeAlg.add, dtype="int32")
    density = line_density(counts, grid, params.density_radius_px)
    cluster_ids = rasterize(((g, i + 1) for i, g in enumerate(clusters)), out_shape=(grid.height, grid.width),
                            transform=grid.transform, fill=0, all_touched=True, dtype="int32")
    line_series = GeoSeries(lines, crs=frame.crs)
    index = line_series.sindex
    tolerance = params.simplify_px * max(grid.pixel_size)
    records = []
    for i, geom in enumerate(clusters, start=1):
        values = density[cluster_ids == i]
        if values.size == 0:
            values = np.zeros(1, dtype="float32")
        inside = [lines[j] for j in index.query(geom, predicate="intersects")]
        length = sum(g.length for g in inside)
        trend = strike_word(_mean_azimuth(inside))
        what = (f"{trend}-trending fault zone ({len(inside)} fault{'s' if len(inside) != 1 else ''}, "
                f"{length / 1000:.3g} km)")
        records.append(zone_record(geom.simplify(tolerance, preserve_topology=True), extent,
                                   zone_id=f"{layer}:fault{i}", layer=layer, role=role, kind="fault",
                                   score_mean=float(values.mean()), score_max=float(values.max()), what=what))
        progress.check()
    records.sort(key=lambda r: (-r["score_max"], -r["area_m2"]))
    if params.max_zones is not None:
        records = records[: params.max_zones]
    return records, {"features": len(lines), "buffer_m": buffer}


def _mean_azimuth(lines) -> float:
    """Length-weighted mean trend (axial, degrees from north) of line segments."""
    sx = sy = 0.0
    for geom in lines:
        parts = geom.geoms if isinstance(geom, MultiLineString) else [geom]
        for part in parts:
            xy = np.asarray(part.coords)[:, :2]
            if len(xy) < 2:
                continue
            dx, dy = np.diff(xy[:, 0]), np.diff(xy[:, 1])
            seg = np.hypot(dx, dy)
            doubled = 2 * np.arctan2(dx, dy)  # azimuth doubled: axial data
            sx += float((seg * np.cos(doubled)).sum())
            sy += float((seg * np.sin(doubled)).sum())
    return math.degrees(math.atan2(sy, sx) / 2) % 180.0


def _unit_records(frame, grid: RasterGrid, extent: RasterGrid, layer, spec, params):
    names = unit_names(frame, spec, params)
    frame = frame.assign(_unit=names.values)
    selected = match_units({n: n for n in set(names)}, params.units) if params.units else set()
    tolerance = params.simplify_px * max(grid.pixel_size)
    records: list[dict] = []
    for name, group in frame.groupby("_unit"):
        if selected and name not in selected:
            continue
        geom = unary_union(list(group.geometry)).simplify(tolerance, preserve_topology=True)
        if geom.is_empty or geom.area <= 0:
            continue
        score = 1.0 if name in selected else 0.0
        word = "Favourable unit" if name in selected else "Unit"
        records.append(zone_record(geom, extent, zone_id=f"{layer}:unit{len(records) + 1}", layer=layer,
                                   role=spec.role, kind="unit", score_mean=score, score_max=score,
                                   what=f"{word} {name}"))
    records.sort(key=lambda r: -r["area_m2"])
    if params.max_zones is not None:
        records = records[: params.max_zones]
    return records, {"features": len(frame), "units_present": sorted(set(names)), "selected": sorted(selected)}


def unit_names(frame, spec, params):
    """Each unit polygon's name (a Series aligned with `frame`): the values of `params.name_field`, else of the
    first of NAME_FIELDS the frame has (else of a code column when the layer `spec` has a legend), named by that
    legend when it has one; refused (LodestarError, naming the fields) when no such field is found."""
    columns = {c.lower(): c for c in frame.columns if c != frame.geometry.name}
    if params.name_field:
        if params.name_field not in frame.columns:
            raise LodestarError(f"{spec.name} has no field {params.name_field!r}; "
                                f"fields: {', '.join(columns.values())}.")
        field = params.name_field
    else:
        field = next((columns[c] for c in NAME_FIELDS if c in columns), None)
        if field is None and spec.legend is not None:
            field = next((columns[c] for c in ("value", "code", "id", "class") if c in columns), None)
        if field is None:
            raise LodestarError(f"{spec.name}: no unit name field found; set name_field to one of "
                                f"{', '.join(columns.values()) or '(no fields)'}.")
    values = frame[field]
    if spec.legend is not None:
        legend = read_legend(spec.legend)
        return values.map(lambda v: legend.get(int(v), str(v)) if _is_int(v) else str(v))
    return values.map(str)


def _is_int(value) -> bool:
    try:
        return float(value) == int(float(value))
    except (TypeError, ValueError):
        return False
