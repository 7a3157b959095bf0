"""Runs the executor's tool calls on the workspace: the one dispatch from ToolCall to the tool functions.

Tools are the project's own (`plugin/tools/*`, `plugin/graph.py`); this module only maps a call's
name and parameters onto them, turns the vision path's normalised boxes into map polygons, measures
cross-layer coincidence of the new zones with the zones already in the chain, and draws the evidence
image. Every failure comes back as a structured error string (VICoT habit), never as a crash.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import geopandas as gpd
import numpy as np
from PIL import ImageDraw

from ..decisions import CORE
from ..errors import Cancelled, LodestarError
from ..files import write_bytes_atomic
from ..progress import SILENT, Progress
from ..render import png_bytes, render_png
from ..zones import zone_record, zones_frame
from .contract import TOOLSET, ZONE_TOOLS, ToolCall
from .workspace import Workspace

# decision numbers: their reasons and provenance are in plugin/decisions.py
COINCIDENCE_REACH_M = CORE.coincidence_reach_m
OUTLINE_COLOURS = ((0, 229, 255), (255, 64, 160), (120, 255, 80), (255, 200, 0), (255, 255, 255))


@dataclass
class ToolRun:
    """A tool call's result: zones (ids prefixed by the step), statistics, log, error."""

    zones: gpd.GeoDataFrame
    stats: dict = field(default_factory=dict)
    log: list = field(default_factory=list)
    error: str = ""
    referenced: list = field(default_factory=list)  # zone ids of earlier steps the tool reports on
    stated: dict = field(default_factory=dict)  # vision path: zone id -> the location word the model gave


def _params(cls, given: dict, log: list):
    """A tool's parameter dataclass from a model's dict: unknown keys dropped with a note."""
    names = {f.name for f in dataclasses.fields(cls)}
    kept = {k: v for k, v in (given or {}).items() if k in names}
    dropped = sorted(set(given or {}) - names)
    if dropped:
        log.append(f"Ignored unknown parameters: {', '.join(dropped)}.")
    for key, value in list(kept.items()):
        if isinstance(value, list):
            kept[key] = tuple(value)
    return cls(**kept)


def _prefixed(zones: gpd.GeoDataFrame, step_index: int) -> gpd.GeoDataFrame:
    zones = zones.copy()
    if len(zones):
        zones["zone_id"] = [f"s{step_index}:{z}" for z in zones["zone_id"]]
    return zones


def run_tool(ws: Workspace, step_index: int, call: ToolCall, progress: Progress = SILENT) -> ToolRun:
    """Execute one tool call for a step; errors are returned in `ToolRun.error`."""
    crs = ws.raster_set.crs
    log: list = []
    if call.tool not in TOOLSET:
        return ToolRun(zones_frame([], crs), error=f"Unknown tool {call.tool!r}; use one of {', '.join(TOOLSET)}.")
    unknown = [name for name in call.layers if name not in ws.layer_names()]
    if unknown:
        return ToolRun(zones_frame([], crs), error=(
            f"Unknown layer(s) {', '.join(map(repr, unknown))}; the layers are {', '.join(ws.layer_names())}."))
    needs_layer = call.tool in ZONE_TOOLS
    if needs_layer and not call.layers:
        return ToolRun(zones_frame([], crs), error=f"Tool {call.tool} needs a layer; name one of {ws.layer_names()}.")
    try:
        if call.tool == "spatial_relations":
            return _spatial_relations(ws, step_index, call, progress)
        if call.tool == "integrate_evidence":
            return _integrate(ws, step_index)
        if call.tool == "evidence_view":
            return _zoom(ws, step_index, call)
        if call.tool == "none":
            return ToolRun(zones_frame([], crs), {}, ["No tool used: direct assessment."])
        stated: dict = {}
        if call.tool == "mark_boxes":
            zones = _boxes_to_zones(ws, call, log, stated)
            stats: dict = {"boxes": len(call.boxes), "kept": len(zones)}
        else:
            result = _zone_tool(ws, call, log, progress)
            zones, stats = result.zones, dict(result.stats)
            log += [line for line in result.log if line not in ws.raster_set.log]
            stats["params"] = jsonable(result.params)
    except Cancelled:
        raise
    except LodestarError as exc:
        return ToolRun(zones_frame([], crs), log=log, error=f"{call.tool} failed: {exc}")
    except Exception as exc:  # noqa: BLE001 - a tool's failure is a structured error the executor sees, not a crash
        return ToolRun(zones_frame([], crs), log=log, error=f"{call.tool} failed ({type(exc).__name__}): {exc}")
    zones = _prefixed(zones, step_index)
    stats["coincidence"] = coincidence(ws, step_index, zones)
    return ToolRun(zones, stats, log, stated={f"s{step_index}:{k}": v for k, v in stated.items()})


def _zone_tool(ws: Workspace, call: ToolCall, log: list, progress: Progress):
    layer = call.layers[0]
    if len(call.layers) > 1:
        log.append(f"{call.tool} marks one layer per call; used {layer}.")
    params = dict(call.params)
    bounds = params.pop("bounds", None) or call.view_bounds
    bounds = tuple(float(v) for v in bounds) if bounds else None
    if call.tool == "color_regions":
        from ..tools.color_regions import ColorRegionParams, color_regions

        return color_regions(ws.raster_set, layer, _params(ColorRegionParams, params, log), bounds, progress)
    if call.tool == "feature_regions":
        from ..tools.feature_regions import FeatureRegionParams, feature_regions

        return feature_regions(ws.raster_set, layer, _params(FeatureRegionParams, params, log), bounds, progress)
    if call.tool == "categorical":
        from ..tools.categorical import UnitRegionParams, unit_regions

        return unit_regions(ws.raster_set, layer, _params(UnitRegionParams, params, log), bounds, progress)
    from ..tools.vector_evidence import VectorEvidenceParams, vector_evidence

    return vector_evidence(ws.raster_set, layer, _params(VectorEvidenceParams, params, log), bounds, progress)


def jsonable(value):
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (np.floating, float)):
        return None if math.isnan(float(value)) else float(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    return str(value)


# -- vision path ------------------------------------------------------------------------------------
def _box_scores(ws: Workspace, layer: str, geometry) -> tuple[float, float]:
    info = ws.layer(layer)
    if info.kind in ("vector", "categorical"):
        return 0.0, 0.0
    data, _ = ws.raster_set.read_window(layer, geometry.bounds)
    if info.kind == "rgb":
        rgb = data[:3].astype("float32")
        values = ((rgb.max(axis=0) - rgb.min(axis=0)) / 255.0).compressed()
    else:
        values = data[0].compressed()
        if info.favourable == "low":
            values = -values
    if values.size == 0:
        return 0.0, 0.0
    return float(values.mean()), float(values.max())


def _boxes_to_zones(ws: Workspace, call: ToolCall, log: list, stated: dict) -> gpd.GeoDataFrame:
    """Zones of the vision path's boxes (normalised to the view of `call.view_bounds`)."""
    from ..controller import boxes_to_polygons

    layer = call.layers[0]
    info = ws.layer(layer)
    grid = ws.view_grid(call.view_bounds)
    converted = boxes_to_polygons(call.boxes, grid)
    log += converted.notes
    records = []
    for i, geometry in enumerate(converted.polygons):
        if geometry is None:
            continue
        mean, peak = _box_scores(ws, layer, geometry)
        said = call.locations[i] if i < len(call.locations) else ""
        zone_id = f"{layer}:{i + 1}"
        stated[zone_id] = said
        records.append(zone_record(geometry, ws.raster_set.grid, zone_id=zone_id, layer=layer, role=info.role,
                                   kind="box", score_mean=mean, score_max=peak, what=f"marked region {i + 1}"))
    return zones_frame(records, ws.raster_set.crs)


# -- cross-layer coincidence ------------------------------------------------------------------------
def coincidence(ws: Workspace, step_index: int, zones: gpd.GeoDataFrame) -> list[dict]:
    """For each zone: per role of the other steps' zones, overlap share and nearest gap (map units)."""
    others = [ws.step_zones[i] for i in sorted(ws.step_zones) if i != step_index and len(ws.step_zones[i])]
    if not len(zones) or not others:
        return [{"zone_id": z, "overlap": {}, "gap": {}} for z in zones.get("zone_id", [])]
    import pandas as pd

    pool = gpd.GeoDataFrame(pd.concat(others, ignore_index=True), geometry="geometry", crs=ws.raster_set.crs)
    index = pool.sindex
    grid = ws.raster_set.grid
    reach = COINCIDENCE_REACH_M if grid.crs is not None else math.hypot(grid.width, grid.height) / 4
    rows = []
    for zone_id, layer, geometry in zip(zones["zone_id"], zones["layer"], zones.geometry):
        entry: dict = {"zone_id": zone_id, "overlap": {}, "gap": {}}
        area = geometry.area or 1.0
        near = index.query(geometry.buffer(reach), predicate="intersects")
        for j in near:
            other = pool.iloc[int(j)]
            if other["layer"] == layer:
                continue
            role = other["role"]
            share = geometry.intersection(other.geometry).area / area if geometry.intersects(other.geometry) else 0.0
            gap = float(geometry.distance(other.geometry))
            entry["overlap"][role] = round(max(entry["overlap"].get(role, 0.0), share), 6)
            entry["gap"][role] = round(min(entry["gap"].get(role, math.inf), gap), 3)
        rows.append(entry)
    return rows


# -- non-marking tools ------------------------------------------------------------------------------
def _spatial_relations(ws: Workspace, step_index: int, call: ToolCall, progress: Progress) -> ToolRun:
    from ..graph import GraphParams, build_graph

    steps = [int(s) for s in call.params.get("steps", [])] or [i for i in sorted(ws.step_zones) if i < step_index]
    frames = [ws.step_zones[i] for i in steps if i in ws.step_zones and len(ws.step_zones[i])]
    crs = ws.raster_set.crs
    if not frames:
        return ToolRun(zones_frame([], crs), {"nodes": 0, "edges": 0, "components": []},
                       ["No zones marked in the earlier steps: nothing to relate."])
    from ..zones import concat_zones

    zones = concat_zones(frames, crs)
    graph_params = {k: v for k, v in call.params.items() if k in {f.name for f in dataclasses.fields(GraphParams)}}
    graph = build_graph(zones, GraphParams(**graph_params), progress=progress, crs=crs)
    components = []
    for members in graph.components:
        rows = graph.nodes[graph.nodes["zone_id"].isin(members)]
        roles = sorted(set(rows["role"]))
        components.append({"zones": sorted(members), "roles": roles, "layers": sorted(set(rows["layer"]))})
    multi = [c for c in components if len(c["roles"]) >= 2]
    referenced = sorted({z for c in multi for z in c["zones"]})
    relations = []
    for row in graph.edges.itertuples():
        if row.source < row.target:
            relations.append({"source": row.source, "target": row.target, "type": row.type,
                              "confidence": round(float(row.confidence), 4), "direction": row.direction})
    stats = dict(graph.summary(), components=components, relations=relations[:60],
                 multi_role_components=len(multi), max_roles=max((len(c["roles"]) for c in components), default=0),
                 chain_zones=sorted(graph.nodes.loc[graph.nodes["chain"].astype(bool), "zone_id"]))
    return ToolRun(zones_frame([], crs), stats, list(graph.log), referenced=referenced)


def _zoom(ws: Workspace, step_index: int, call: ToolCall) -> ToolRun:
    """evidence_view: each named layer (at most four) seen around the place the params give, its view written to the
    evidence folder (`stepNN_viewK.png`), and its values there against the whole layer: the view's median, the
    layer's, and the view median's percentile in the layer."""
    from ..tools.evidence_view import evidence_view

    if not call.layers:
        raise LodestarError(f"evidence_view needs one to four layers; name them from {', '.join(ws.layer_names())}.")
    params = dict(call.params)
    bbox = params.get("bbox")
    place = {"bbox": tuple(float(v) for v in bbox)} if bbox else {
        "center": tuple(float(v) for v in params.get("center", (0.5, 0.5))), "zoom": float(params.get("zoom", 2.0))}
    log = [f"evidence_view shows {', '.join(call.layers[:4])}"
           + (f"; {len(call.layers) - 4} more layer(s) left out (four at most)" if len(call.layers) > 4 else "")]
    stats: dict = {"views": [], "layers": {}}
    for k, layer in enumerate(call.layers[:4], start=1):
        path = ws.evidence_dir / f"step{step_index:02d}_view{k}.png"
        view = evidence_view(ws.raster_set, layer, out_path=path, **place)
        stats["views"].append(path.name)
        stats["bounds"] = [round(float(v), 3) for v in view.bounds]
        if ws.layer(layer).kind != "rgb" and not ws.raster_set.spec(layer).is_vector:
            stats["layers"][layer] = _window_values(ws, layer, view.bounds)
    return ToolRun(zones_frame([], ws.raster_set.crs), stats, log)


def _window_values(ws: Workspace, layer: str, bounds) -> dict:
    """A layer's median in `bounds` against its median over the analysed area, and that window median's percentile."""
    values = ws.raster_set.read(layer)[0]
    window = ws.raster_set.grid.bounds_window(tuple(bounds))
    rows = slice(max(int(window.row_off), 0), max(int(window.row_off + window.height), 0))
    cols = slice(max(int(window.col_off), 0), max(int(window.col_off + window.width), 0))
    inside = values[rows, cols].compressed()
    everywhere = values.compressed()
    if not inside.size or not everywhere.size:
        return {"view_median": None, "layer_median": None, "percentile": None}
    median = float(np.median(inside))
    return {"view_median": round(median, 6), "layer_median": round(float(np.median(everywhere)), 6),
            "percentile": round(100.0 * float(np.mean(everywhere < median)), 1)}


def _integrate(ws: Workspace, step_index: int) -> ToolRun:
    supported: list[dict] = []
    unsupported: list[dict] = []
    for node in ws.chain:
        if node.step.index >= step_index:
            continue
        tag = node.step.evidence or f"step {node.step.index}"
        (supported if node.observation.sub_inference == "Yes" else unsupported).append(
            {"step": node.step.index, "evidence": tag, "level": node.step.level})
    critical_missing = [s for s in unsupported if s["level"] == "critical"]
    stats = {"supported": supported, "unsupported": unsupported,
             "critical_missing": critical_missing,
             "all_critical_supported": not critical_missing and any(s["level"] == "critical" for s in supported)}
    return ToolRun(zones_frame([], ws.raster_set.crs), stats, [])


# -- evidence images --------------------------------------------------------------------------------
def _background_layer(ws: Workspace, layers: list) -> str | None:
    for name in layers:
        if ws.layer(name).kind != "vector":
            return name
    for info in ws.layers:
        if info.kind != "vector":
            return info.name
    return None


def draw_evidence(ws: Workspace, layers: list, zones: gpd.GeoDataFrame, path, max_size: int = 640,
                  points=None) -> str:
    """Render the step's layer with its zones outlined and numbered (and `points`, map coordinates, as
    crosses); returns the PNG path ('' when no raster can be drawn)."""
    layer = _background_layer(ws, layers)
    if layer is None:
        return ""
    kind = ws.layer(layer).kind
    colormap = None if kind in ("rgb", "categorical") else "magma"
    stretch = None if kind in ("rgb", "categorical") else (2, 98)
    rendered = render_png(ws.raster_set, layer, max_size=max_size, colormap=colormap, stretch=stretch)
    from io import BytesIO

    from PIL import Image

    image = Image.open(BytesIO(rendered.png_bytes)).convert("RGB")
    draw = ImageDraw.Draw(image)
    for n, geometry in enumerate(zones.geometry if len(zones) else []):
        colour = OUTLINE_COLOURS[n % len(OUTLINE_COLOURS)]
        parts = getattr(geometry, "geoms", [geometry])
        for part in parts:
            exterior = getattr(part, "exterior", None)
            coords = np.asarray(exterior.coords if exterior is not None else part.coords)
            if len(coords) < 2:
                continue
            cols, rows = rendered.grid.map_to_pixel(coords[:, 0], coords[:, 1])
            draw.line(list(zip(cols.tolist(), rows.tolist())), fill=colour, width=2)
        cx, cy = rendered.grid.map_to_pixel(geometry.centroid.x, geometry.centroid.y)
        draw.text((float(cx) + 3, float(cy) + 3), str(n + 1), fill=colour)
    if points is not None and len(points):
        xy = np.asarray(points, dtype=float).reshape(-1, 2)
        image = draw_crosses(image, *rendered.grid.map_to_pixel(xy[:, 0], xy[:, 1]))
    write_bytes_atomic(path, png_bytes(image))
    return str(path)


CROSS_COLOUR = (255, 255, 255)


def _cross(draw, px: float, py: float) -> None:
    draw.line([(px - 4, py - 4), (px + 4, py + 4)], fill=CROSS_COLOUR, width=2)
    draw.line([(px - 4, py + 4), (px + 4, py - 4)], fill=CROSS_COLOUR, width=2)


def _cross_offsets() -> tuple[np.ndarray, np.ndarray]:
    """(row, col) offsets of the pixels PIL sets for a cross at an integer position (it truncates coordinates, so
    a cross at (px, py) with px, py >= 4 sets these pixels around (floor(px), floor(py)))."""
    from PIL import Image

    canvas = Image.new("RGB", (32, 32))
    _cross(ImageDraw.Draw(canvas), 16.0, 16.0)
    rows, cols = np.nonzero(np.asarray(canvas).any(axis=2))
    return rows - 16, cols - 16


def draw_crosses(image, cols, rows):
    """`image` (PIL RGB) with a white cross at each fractional pixel position (cols, rows): crosses wholly inside
    the image are stamped in one vectorised pass (the pixels PIL would draw, so a million deposits take a
    moment), the others drawn by PIL."""
    from PIL import Image

    cols, rows = np.asarray(cols, dtype=float).ravel(), np.asarray(rows, dtype=float).ravel()
    dy, dx = _cross_offsets()
    ix, iy = np.floor(cols), np.floor(rows)
    stamped = ((cols >= 4) & (rows >= 4) & (ix + dx.min() >= 0) & (iy + dy.min() >= 0)
               & (ix + dx.max() < image.width) & (iy + dy.max() < image.height))
    draw = ImageDraw.Draw(image)
    for px, py in zip(cols[~stamped].tolist(), rows[~stamped].tolist()):
        if np.isfinite(px) and np.isfinite(py):
            _cross(draw, px, py)
    if not stamped.any():
        return image
    anchors = np.unique(np.column_stack([iy[stamped], ix[stamped]]).astype(np.int64), axis=0)
    pixels = np.array(image)
    for row, col in zip(dy.tolist(), dx.tolist()):  # one offset at a time: memory stays that of the anchors
        pixels[anchors[:, 0] + row, anchors[:, 1] + col] = CROSS_COLOUR
    return Image.fromarray(pixels, mode=image.mode)
