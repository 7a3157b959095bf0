"""Candidate zones: the polygons every tool marks, with one attribute schema across the plugin."""
from __future__ import annotations

import geopandas as gpd
from shapely.geometry.base import BaseGeometry

from .raster_io import RasterGrid

ZONE_COLUMNS = (
    "zone_id",      # unique within a run: "<layer>:<n>"
    "layer",        # layer name
    "role",         # layer role (lodestar-case/1)
    "kind",         # what was marked: anomaly, colour_anomaly, fault, lineament_density, contact, unit, texture
    "score_mean",   # mean evidence value inside the zone (layer units; higher = more favourable)
    "score_max",    # maximum evidence value inside the zone
    "area_m2",      # area in square map units (m2 in a projected CRS, px2 when not georeferenced)
    "bbox",         # "xmin,ymin,xmax,ymax" in map units
    "position",     # 3x3 grid word within the analysis extent: top-left ... bottom-right
    "description",  # one line for people and models
)

_ROWS = ("top", "center", "bottom")
_COLS = ("left", "center", "right")


def position_word(fx: float, fy: float) -> str:
    """3x3 grid word of a normalised position ((0, 0) top-left): 'top-left', 'center', 'bottom-right'..."""
    row = _ROWS[min(2, max(0, int(fy * 3)))]
    col = _COLS[min(2, max(0, int(fx * 3)))]
    if row == col == "center":
        return "center"
    return f"{row}-{col}"


def strike_word(azimuth_deg: float) -> str:
    """Trend word of a line azimuth in degrees clockwise from north (undirected): 'N-S', 'NE-SW', 'E-W', 'NW-SE'."""
    words = ("N-S", "NNE-SSW", "NE-SW", "ENE-WSW", "E-W", "WNW-ESE", "NW-SE", "NNW-SSE")
    return words[int(((azimuth_deg % 180.0) + 11.25) // 22.5) % 8]


def zone_record(geometry: BaseGeometry, grid: RasterGrid, *, zone_id: str, layer: str, role: str, kind: str,
                score_mean: float, score_max: float, what: str) -> dict:
    """One zone's attributes; `what` starts the description ('strong AlOH anomaly', 'NE-trending fault')."""
    cx, cy = geometry.centroid.x, geometry.centroid.y
    fx, fy = grid.fractions(cx, cy)
    position = position_word(float(fx), float(fy))
    xmin, ymin, xmax, ymax = geometry.bounds
    area = float(geometry.area)
    unit = "km2" if grid.georeferenced else "px2"
    shown = area / 1e6 if grid.georeferenced else area
    return {
        "zone_id": zone_id,
        "layer": layer,
        "role": role,
        "kind": kind,
        "score_mean": round(float(score_mean), 6),
        "score_max": round(float(score_max), 6),
        "area_m2": round(area, 3),
        "bbox": f"{xmin:.3f},{ymin:.3f},{xmax:.3f},{ymax:.3f}",
        "position": position,
        "description": f"{what} in the {position} of the area ({shown:.3g} {unit}, {layer})",
        "geometry": geometry,
    }


def zones_frame(records: list[dict], crs) -> gpd.GeoDataFrame:
    """A GeoDataFrame of zones with the standard columns in order (empty frames keep the schema)."""
    columns = list(ZONE_COLUMNS) + ["geometry"]
    if not records:
        frame = gpd.GeoDataFrame({c: [] for c in ZONE_COLUMNS}, geometry=gpd.GeoSeries([], crs=crs), crs=crs)
        return frame
    frame = gpd.GeoDataFrame(records, geometry="geometry", crs=crs)
    extra = [c for c in frame.columns if c not in columns]
    return frame[list(ZONE_COLUMNS) + extra + ["geometry"]]


def concat_zones(frames: list[gpd.GeoDataFrame], crs) -> gpd.GeoDataFrame:
    """Zones of several tools in one frame, reprojected to `crs`."""
    import pandas as pd

    parts = [f.to_crs(crs) if (crs is not None and f.crs is not None and len(f)) else f for f in frames]
    parts = [p for p in parts if len(p)]
    if not parts:
        return zones_frame([], crs)
    merged = pd.concat(parts, ignore_index=True)
    return gpd.GeoDataFrame(merged, geometry="geometry", crs=crs)


def labelled_polygons(labels, grid: RasterGrid, simplify_px: float = 1.5) -> dict:
    """Polygons (map coordinates, holes kept) of each positive label of an integer label image.

    Simplification is topology-preserving with a tolerance of `simplify_px` pixels; returns
    {label: geometry} (a label whose pixels touch only diagonally becomes a MultiPolygon).
    """
    import numpy as np
    from rasterio.features import shapes
    from shapely.geometry import shape
    from shapely.ops import unary_union

    labels = np.ascontiguousarray(labels, dtype="int32")
    parts: dict[int, list] = {}
    for geom, value in shapes(labels, mask=labels > 0, transform=grid.transform, connectivity=4):
        parts.setdefault(int(value), []).append(shape(geom))
    tolerance = simplify_px * max(grid.pixel_size)
    out = {}
    for label, polys in parts.items():
        geom = polys[0] if len(polys) == 1 else unary_union(polys)
        if tolerance > 0:
            geom = geom.simplify(tolerance, preserve_topology=True)
        if not geom.is_empty:
            out[label] = geom
    return out


def polygon_cells(polygons: list, grid: RasterGrid, all_touched: bool = False):
    """The cells of `grid` the polygons cover (their centres inside; every cell touched with `all_touched`)."""
    from rasterio.features import rasterize

    return rasterize([(g, 1) for g in polygons], out_shape=(grid.height, grid.width), transform=grid.transform,
                     fill=0, all_touched=all_touched, dtype="uint8").astype(bool)
