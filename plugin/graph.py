"""The cross-layer spatial graph of candidate zones (STA-CoT Appendix C.2, in real map coordinates).

Nodes are zones from every layer. For each pair of zones from *different* layers:

- an **overlap** edge when their polygon IoU (intersection area / union area) exceeds
  `GraphParams.iou_threshold`; confidence = IoU, direction word "overlaps";
- otherwise a **proximity** edge when the gap between the polygons (shortest distance, 0 when they
  touch or overlap a little) is at most the pair's reach
  `max(max_distance, relative_distance * (sqrt(area_a) + sqrt(area_b)) / 2)`;
  confidence = proximity_confidence * exp(-decay * gap / reach): `proximity_confidence` (default 0.1,
  the IoU threshold, so a proximity link never outweighs an overlap) for touching zones, and
  exp(-decay) times that at the reach.
  Its direction word says where the target's centroid lies from the source's centroid (one of eight
  compass words; "around" when the centroids coincide).

The graph is a networkx DiGraph holding every relation in both directions: u -> v carries where v
lies seen from u, v -> u the opposite word. Candidate pairs come from the geopandas spatial index
queried with each zone's bounds buffered by its largest possible reach, never from all pairs.

A **chain** is a path of three zones x - v - y linked by edges whose three roles all differ (the
smallest path that links evidence of three kinds). Any longer path covering three or more roles
contains such a window whenever linked zones never share a role (true when each layer has its own
role), so a node is flagged `chain` when it lies on at least one three-role path of three nodes.
This is checked from neighbour-role sets in time linear in the number of edges.

Edge attributes: type, confidence, direction, `iou` (of overlap edges; 0 for proximity edges) and
`gap` (map units; 0 for overlapping or touching zones).

Node metrics (field names fit Shapefile's 10 characters): `degree` (number of neighbours),
`degree_c` (degree / (n - 1)), `between_c` (betweenness centrality: the normalised shortest-path
betweenness of the undirected graph as networkx defines it, worked out per connected component:
exact in components of at most `betweenness_exact_max` nodes, else estimated from
`betweenness_samples` source nodes drawn with `seed` and rescaled by n / samples; larger components
use a vectorised Brandes pass over a sparse adjacency matrix), `component` (0 = largest),
`comp_roles` (number of roles in the node's component) and `chain`.
"""
from __future__ import annotations

import json
import math
import random
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import geopandas as gpd
import networkx as nx
import numpy as np
import pandas as pd
from shapely.geometry import LineString
from shapely.prepared import prep

from .errors import LodestarError
from .files import atomic_path
from .labels import plural
from .progress import SILENT, Progress
from .roles import guess_role

if TYPE_CHECKING:  # pragma: no cover - typing only
    from pyproj import CRS

COMPASS = ("north", "north-east", "east", "south-east", "south", "south-west", "west", "north-west")
OPPOSITE = {word: COMPASS[(i + 4) % 8] for i, word in enumerate(COMPASS)}
OPPOSITE.update({"overlaps": "overlaps", "around": "around"})

NODE_COLUMNS = ("zone_id", "layer", "role", "kind", "score_mean", "area_m2", "degree", "degree_c", "between_c",
                "component", "comp_roles", "chain")
EDGE_COLUMNS = ("source", "target", "type", "confidence", "direction", "iou", "gap")
VECTOR_MIN = 24  # components of at least this many nodes get the vectorised Brandes pass
BRANDES_CHUNK = 256  # sources per vectorised pass (memory: chunk x component size floats)


@dataclass
class GraphParams:
    """Edge rules and metric settings of the spatial graph (distances in map units of the zones)."""

    iou_threshold: float = 0.1  # overlap edge when IoU > this (0-1)
    max_distance: float = 0.0  # proximity reach in map units (0: use only the relative reach)
    relative_distance: float = 0.5  # proximity reach as a share of the pair's mean zone size (sqrt of area)
    decay: float = 2.0  # proximity confidence = proximity_confidence * exp(-decay * gap / reach)
    proximity_confidence: float = 0.1  # confidence of touching zones (0-1); at most iou_threshold keeps any
    # overlap stronger than any proximity
    betweenness_exact_max: int = 2000  # components up to this many nodes get exact betweenness
    betweenness_samples: int = 200  # source nodes sampled in larger components
    seed: int = 7

    def __post_init__(self):
        checks = (
            ("iou_threshold", 0.0, 1.0),
            ("max_distance", 0.0, math.inf),
            ("relative_distance", 0.0, math.inf),
            ("decay", 0.0, math.inf),
            ("proximity_confidence", 0.0, 1.0),
        )
        for name, low, high in checks:
            value = float(getattr(self, name))
            if not (low <= value <= high) or math.isnan(value):
                raise LodestarError(f"Graph parameter {name} = {value} is out of range; allowed: {low} to {high}.")
            setattr(self, name, value)
        if int(self.betweenness_exact_max) < 1 or int(self.betweenness_samples) < 1:
            raise LodestarError("Graph parameters betweenness_exact_max and betweenness_samples must be at least 1.")


@dataclass
class SpatialGraph:
    """The graph, its nodes and edges as GeoDataFrames (one CRS), and notes for the user."""

    graph: nx.DiGraph
    nodes: gpd.GeoDataFrame
    edges: gpd.GeoDataFrame
    crs: CRS | None
    params: GraphParams
    log: list[str] = field(default_factory=list)

    @property
    def components(self) -> list[set]:
        """Zone ids of each connected component, largest first (index = `component` value)."""
        groups: dict[int, set] = {}
        for zone_id, comp in zip(self.nodes["zone_id"], self.nodes["component"]):
            groups.setdefault(int(comp), set()).add(zone_id)
        return [groups[k] for k in sorted(groups)]

    def summary(self) -> dict:
        return {
            "nodes": len(self.nodes),
            "edges": int(self.graph.number_of_edges()),
            "overlap_edges": int((self.edges["type"] == "overlap").sum()) if len(self.edges) else 0,
            "proximity_edges": int((self.edges["type"] == "proximity").sum()) if len(self.edges) else 0,
            "components": int(self.nodes["component"].nunique()) if len(self.nodes) else 0,
            "chain_nodes": int(self.nodes["chain"].sum()) if len(self.nodes) else 0,
        }


def direction_word(dx: float, dy: float, y_down: bool = False) -> str:
    """Compass word of a displacement (dx east, dy north; `y_down` for image coordinates)."""
    if y_down:
        dy = -dy
    if dx == 0 and dy == 0:
        return "around"
    bearing = math.degrees(math.atan2(dx, dy)) % 360.0
    return COMPASS[int(math.floor((bearing + 22.5) / 45.0)) % 8]


def prepare_zones(zones, crs=None, log: list | None = None) -> gpd.GeoDataFrame:
    """Zones from one frame or several (any CRS) in one frame, one CRS, valid polygons, unique ids.

    Several frames are reprojected to `crs`, else to the first frame's CRS. A geographic CRS is
    replaced by its local UTM zone so distances and areas are in metres. Missing schema columns are
    filled: `layer` from the frame's position, `role` guessed from the layer name, `zone_id` as
    "<layer>:<n>", `score_mean` 1.0.
    """
    from .raster_io import utm_crs_for

    log = log if log is not None else []
    frames = list(zones) if isinstance(zones, (list, tuple)) else [zones]
    frames = [f for f in frames if f is not None]
    target = crs if crs is not None else next((f.crs for f in frames if f.crs is not None and len(f)), None)
    parts = []
    for index, frame in enumerate(frames):
        if not isinstance(frame, gpd.GeoDataFrame):
            raise LodestarError("Zones must be GeoDataFrames (polygon layers).")
        frame = frame.copy()
        if "layer" not in frame.columns:
            frame["layer"] = f"layer{index + 1}"
        if target is not None and frame.crs is not None and len(frame) and frame.crs != target:
            log.append(f"Zones of {', '.join(sorted(set(map(str, frame['layer']))))} reprojected from "
                       f"{frame.crs.to_string()} to {target.to_string()}.")
            frame = frame.to_crs(target)
        elif target is not None and frame.crs is None and len(frame):
            raise LodestarError(f"Zone layer {index + 1} has no CRS while others have; assign its CRS and try again.")
        parts.append(pd.DataFrame(frame))
    if not parts:
        merged = pd.DataFrame({"geometry": []})
    else:
        merged = pd.concat(parts, ignore_index=True)
    frame = gpd.GeoDataFrame(merged, geometry="geometry", crs=target)
    if target is not None and getattr(target, "is_geographic", False) and len(frame):
        lon, lat = frame.unary_union.centroid.coords[0]
        utm = utm_crs_for(lon, lat)
        log.append(f"Zones in geographic {target.to_string()} reprojected to {utm.to_string()} for metric distances.")
        frame = frame.to_crs(utm)
    frame = _clean(frame, log)
    return frame


def _clean(frame: gpd.GeoDataFrame, log: list) -> gpd.GeoDataFrame:
    if not len(frame):
        return frame
    before = len(frame)
    frame = frame[~(frame.geometry.isna() | frame.geometry.is_empty)].copy()
    frame = frame[frame.geometry.geom_type.isin(["Polygon", "MultiPolygon"])].copy()
    if len(frame) < before:
        log.append(f"{plural(before - len(frame), 'zone')} without a polygon (empty, points or lines) left out of the "
                   "graph.")
    invalid = ~frame.geometry.is_valid
    if invalid.any():
        frame.loc[invalid, "geometry"] = frame.geometry[invalid].buffer(0)
        log.append(f"{plural(int(invalid.sum()), 'invalid zone polygon')} repaired.")
    frame["layer"] = frame["layer"].astype(str)
    if "role" not in frame.columns:
        frame["role"] = [guess_role(name) for name in frame["layer"]]
    frame["role"] = frame["role"].fillna("other").astype(str)
    if "kind" not in frame.columns:
        frame["kind"] = "zone"
    if "score_mean" not in frame.columns:
        frame["score_mean"] = 1.0
    frame["score_mean"] = pd.to_numeric(frame["score_mean"], errors="coerce").fillna(0.0).astype(float)
    if "zone_id" not in frame.columns:
        frame["zone_id"] = None
    counters: dict[str, int] = {}
    ids = []
    seen = set()
    for zone_id, layer in zip(frame["zone_id"], frame["layer"]):
        if zone_id is None or (isinstance(zone_id, float) and math.isnan(zone_id)) or str(zone_id) in seen:
            while True:
                counters[layer] = counters.get(layer, 0) + 1
                zone_id = f"{layer}:{counters[layer]}"
                if zone_id not in seen:
                    break
        ids.append(str(zone_id))
        seen.add(str(zone_id))
    frame["zone_id"] = ids
    frame["area_m2"] = frame.geometry.area.astype(float)
    return frame.reset_index(drop=True)


def candidate_pairs(frame: gpd.GeoDataFrame, params: GraphParams, bounds: np.ndarray | None = None) -> np.ndarray:
    """Index pairs (i < j) from different layers whose bounding boxes lie within the pair's reach.

    An R-tree of the zones' bounds (the index behind geopandas' sindex) is queried once per zone with
    its bounds grown by its own largest possible reach; never all pairs. The hits are then kept when
    the gap between the two bounding boxes (a lower bound of the polygons' gap) is within the pair's reach.
    """
    if len(frame) < 2:
        return np.empty((0, 2), dtype=int)
    from rtree import index as rtree_index

    bounds = frame.geometry.bounds.to_numpy() if bounds is None else bounds
    areas = frame["area_m2"].to_numpy()
    reach = np.maximum(params.max_distance, params.relative_distance * np.sqrt(areas))
    tree = rtree_index.Index((i, tuple(b), None) for i, b in enumerate(bounds))
    layers = pd.factorize(frame["layer"])[0]
    found = []
    for i, (b, r) in enumerate(zip(bounds, reach)):
        hits = np.fromiter(tree.intersection((b[0] - r, b[1] - r, b[2] + r, b[3] + r)), dtype=int)
        hits = hits[layers[hits] != layers[i]]
        if len(hits):
            found.append(np.stack([np.minimum(hits, i), np.maximum(hits, i)], axis=1))
    if not found:
        return np.empty((0, 2), dtype=int)
    pairs = np.unique(np.concatenate(found), axis=0)
    gap, _ = box_measures(bounds, pairs)
    return pairs[gap <= pair_reach(areas, pairs, params) * (1.0 + 1e-9)]


def pair_reach(areas: np.ndarray, pairs: np.ndarray, params: GraphParams) -> np.ndarray:
    """Proximity reach of each pair: max(max_distance, relative_distance * mean zone size)."""
    sizes = np.sqrt(areas)
    return np.maximum(params.max_distance, params.relative_distance * (sizes[pairs[:, 0]] + sizes[pairs[:, 1]]) / 2)


def box_measures(bounds: np.ndarray, pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(gap between the bounding boxes, area of their intersection) of each pair."""
    a, b = bounds[pairs[:, 0]], bounds[pairs[:, 1]]
    width = np.minimum(a[:, 2], b[:, 2]) - np.maximum(a[:, 0], b[:, 0])
    height = np.minimum(a[:, 3], b[:, 3]) - np.maximum(a[:, 1], b[:, 1])
    gap = np.hypot(np.maximum(0.0, -width), np.maximum(0.0, -height))
    return gap, np.maximum(0.0, width) * np.maximum(0.0, height)


def relate(geom_a, geom_b, area_a: float, area_b: float, params: GraphParams, prepared=None,
           box_overlap: float | None = None):
    """(type, confidence, iou, gap) of one pair under the edge rules, or None when unrelated.

    `iou` is that of overlap edges (0 for proximity edges). `box_overlap` (the area shared by the two
    bounding boxes) skips the polygon intersection when even it could not make the IoU pass the threshold.
    """
    reach = max(params.max_distance, params.relative_distance * (math.sqrt(area_a) + math.sqrt(area_b)) / 2.0)
    if box_overlap is None:
        box_overlap = float(box_measures(np.array([geom_a.bounds, geom_b.bounds]), np.array([[0, 1]]))[1][0])
    test = prepared if prepared is not None else geom_a
    if box_overlap > 0:
        most = min(box_overlap, area_a, area_b)
        union = area_a + area_b - most
        if union > 0 and most / union > params.iou_threshold:
            inter = geom_a.intersection(geom_b).area
            iou = inter / (area_a + area_b - inter)
            if iou > params.iou_threshold:
                return "overlap", iou, iou, 0.0
        if test.intersects(geom_b):
            return "proximity", params.proximity_confidence, 0.0, 0.0
    gap = geom_a.distance(geom_b)
    if gap > reach * (1.0 + 1e-9):  # tolerance for reprojection round-off
        return None
    confidence = params.proximity_confidence * (math.exp(-params.decay * gap / reach) if reach > 0 else 1.0)
    return "proximity", confidence, 0.0, gap


def build_graph(zones, params: GraphParams | None = None, progress: Progress = SILENT, crs=None) -> SpatialGraph:
    """The spatial graph of zones (one GeoDataFrame, or a list of them in any CRSs); see the module doc."""
    params = params or GraphParams()
    log: list[str] = []
    frame = prepare_zones(zones, crs=crs, log=log)
    if not len(frame):
        log.append("No zones were given: the spatial graph is empty (mark candidate zones first).")
        return SpatialGraph(nx.DiGraph(), _nodes_frame(frame, {}, frame.crs), _edges_frame([], frame.crs),
                            frame.crs, params, log)
    y_down = frame.crs is None
    geoms = list(frame.geometry)
    areas = frame["area_m2"].to_numpy()
    centroids = [g.centroid.coords[0] for g in geoms]
    ids = list(frame["zone_id"])
    progress.set(5)
    bounds = frame.geometry.bounds.to_numpy()
    pairs = candidate_pairs(frame, params, bounds)
    overlaps: np.ndarray | list = box_measures(bounds, pairs)[1] if len(pairs) else []
    progress.check()
    relations = []
    prepared: dict[int, object] = {}
    for count, (i, j) in enumerate(pairs):
        if count % 2000 == 0:
            progress.check()
            progress.set(5 + 60 * count / max(1, len(pairs)))
        if i not in prepared:
            prepared[i] = prep(geoms[i])
        found = relate(geoms[i], geoms[j], areas[i], areas[j], params, prepared[i], overlaps[count])
        if found is None:
            continue
        kind, confidence, iou, gap = found
        if kind == "overlap":
            forward = "overlaps"
        else:
            forward = direction_word(centroids[j][0] - centroids[i][0], centroids[j][1] - centroids[i][1], y_down)
        attrs = {"type": kind, "confidence": round(confidence, 6), "iou": round(iou, 6), "gap": round(gap, 3)}
        relations.append((int(i), int(j), forward, attrs))
    progress.set(70)
    graph = _digraph(frame, [(ids[i], ids[j], d, a) for i, j, d, a in relations])
    metrics = node_metrics(graph, params, progress.scaled(70, 95))
    nodes = _nodes_frame(frame, metrics, frame.crs)
    rows = []
    for i, j, forward, attrs in relations:
        rows.append((ids[i], ids[j], forward, attrs, LineString([centroids[i], centroids[j]])))
        rows.append((ids[j], ids[i], OPPOSITE[forward], attrs, LineString([centroids[j], centroids[i]])))
    edge_frame = _edges_frame(rows, frame.crs)
    progress.set(100)
    result = SpatialGraph(graph, nodes, edge_frame, frame.crs, params, log)
    summary = result.summary()
    log.append(f"Spatial graph: {summary['nodes']} zones, {summary['overlap_edges'] // 2} overlap and "
               f"{summary['proximity_edges'] // 2} proximity relations, {summary['components']} components, "
               f"{summary['chain_nodes']} zones on chains.")
    return result


def _digraph(frame: gpd.GeoDataFrame, relations: list) -> nx.DiGraph:
    """Nodes with their attributes; each relation (u, v, direction, attrs) as u -> v and v -> u."""
    graph = nx.DiGraph()
    graph.add_nodes_from(
        (row.zone_id, {"layer": row.layer, "role": row.role, "kind": str(row.kind),
                       "score_mean": float(row.score_mean), "area_m2": float(row.area_m2)})
        for row in frame.itertuples(index=False)
    )
    graph.add_edges_from((u, v, dict(attrs, direction=d)) for u, v, d, attrs in relations)
    graph.add_edges_from((v, u, dict(attrs, direction=OPPOSITE[d])) for u, v, d, attrs in relations)
    return graph


def node_metrics(graph: nx.DiGraph, params: GraphParams, progress: Progress = SILENT) -> dict:
    """zone_id -> {degree, degree_c, between_c, component, comp_roles, chain} (see the module doc)."""
    names = list(graph.nodes)
    index = {v: k for k, v in enumerate(names)}
    adjacency = [sorted({index[u] for u in graph.successors(v)} | {index[u] for u in graph.predecessors(v)})
                 for v in names]
    n = len(names)
    roles = [graph.nodes[v]["role"] for v in names]
    components = _components(adjacency)
    scale = 2.0 / ((n - 1) * (n - 2)) if n > 2 else 1.0
    between = [0.0] * n
    rng = random.Random(params.seed)
    for comp_index, members in enumerate(components):
        if comp_index % 200 == 0:
            progress.check()
            progress.set(100 * comp_index / max(1, len(components)))
        if len(members) <= 2:
            continue
        sources = members
        factor = 0.5  # every pair is counted from both of its ends
        if len(members) > params.betweenness_exact_max and params.betweenness_samples < len(members):
            sources = rng.sample(members, params.betweenness_samples)
            factor = 0.5 * len(members) / len(sources)
        if len(members) < VECTOR_MIN:
            for s in sources:
                _brandes_from(s, adjacency, between, factor)
        else:
            for k, value in zip(members, _component_betweenness(members, sources, adjacency)):
                between[k] += value * factor
    chain = chain_flags(adjacency, roles)
    metrics = {}
    for comp_index, members in enumerate(components):
        comp_roles = len({roles[k] for k in members})
        for k in members:
            degree = len(adjacency[k])
            metrics[names[k]] = {
                "degree": degree,
                "degree_c": degree / (n - 1) if n > 1 else 0.0,
                "between_c": between[k] * scale,
                "component": comp_index,
                "comp_roles": comp_roles,
                "chain": chain[k],
            }
    return metrics


def _components(adjacency: list) -> list[list[int]]:
    """Connected components as sorted index lists, largest first, ties by smallest index."""
    seen = [False] * len(adjacency)
    components = []
    for start in range(len(adjacency)):
        if seen[start]:
            continue
        seen[start] = True
        stack, members = [start], [start]
        while stack:
            for u in adjacency[stack.pop()]:
                if not seen[u]:
                    seen[u] = True
                    stack.append(u)
                    members.append(u)
        components.append(sorted(members))
    return sorted(components, key=lambda c: (-len(c), c[0]))


def _brandes_from(source: int, adjacency: list, between: list, factor: float) -> None:
    """Add the shortest-path dependencies of one source to `between` (Brandes 2001, unweighted)."""
    order = []
    preds: dict[int, list] = {source: []}
    sigma = {source: 1}
    dist = {source: 0}
    queue = deque([source])
    while queue:
        v = queue.popleft()
        order.append(v)
        dv = dist[v] + 1
        for w in adjacency[v]:
            if w not in dist:
                dist[w] = dv
                sigma[w] = 0
                preds[w] = []
                queue.append(w)
            if dist[w] == dv:
                sigma[w] += sigma[v]
                preds[w].append(v)
    delta = dict.fromkeys(order, 0.0)
    for w in reversed(order):
        coefficient = (1.0 + delta[w]) / sigma[w]
        for v in preds[w]:
            delta[v] += sigma[v] * coefficient
        if w != source:
            between[w] += delta[w] * factor


def _component_betweenness(members: list, sources: list, adjacency: list) -> np.ndarray:
    """Brandes' dependencies of many sources at once (level-synchronous BFS on a sparse adjacency
    matrix), summed per member node; the same values as `_brandes_from` over `sources`."""
    from scipy import sparse

    local = {g: k for k, g in enumerate(members)}
    rows = [local[g] for g in members for _ in adjacency[g]]
    cols = [local[u] for g in members for u in adjacency[g]]
    n = len(members)
    matrix = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    total = np.zeros(n)
    starts = np.array([local[s] for s in sources])
    for chunk in range(0, len(starts), BRANDES_CHUNK):
        src = starts[chunk:chunk + BRANDES_CHUNK]
        k = np.arange(len(src))
        dist = np.full((len(src), n), -1, dtype=np.int32)
        sigma = np.zeros((len(src), n))
        dist[k, src] = 0
        sigma[k, src] = 1.0
        frontier = sigma.copy()
        depth = 0
        while True:
            arriving = np.asarray((matrix @ frontier.T).T)
            new = (arriving > 0) & (dist < 0)
            if not new.any():
                break
            depth += 1
            dist[new] = depth
            sigma[new] = arriving[new]
            frontier = np.where(new, sigma, 0.0)
        delta = np.zeros((len(src), n))
        for level in range(depth, 0, -1):
            at = dist == level
            coefficient = np.where(at, (1.0 + delta) / np.where(at, sigma, 1.0), 0.0)
            pulled = np.asarray((matrix @ coefficient.T).T)
            delta += np.where(dist == level - 1, sigma * pulled, 0.0)
        delta[k, src] = 0.0
        total += delta.sum(axis=0)
    return total


def chain_flags(adjacency: list, roles: list) -> list[bool]:
    """True for nodes on a path x - v - y of three different roles (see the module doc)."""
    neighbour_roles = [{roles[u] for u in adjacency[v]} for v in range(len(adjacency))]
    on_chain = [False] * len(adjacency)
    for v, neighbours in enumerate(adjacency):
        others = neighbour_roles[v] - {roles[v]}
        if len(others) >= 2:  # v is the middle of a chain
            on_chain[v] = True
            continue
        for u in neighbours:  # v at an end: a neighbour u of another role links to a third role
            if roles[u] != roles[v] and neighbour_roles[u] - {roles[u], roles[v]}:
                on_chain[v] = True
                break
    return on_chain


def _nodes_frame(frame: gpd.GeoDataFrame, metrics: dict, crs) -> gpd.GeoDataFrame:
    columns: dict[str, list] = {c: [] for c in NODE_COLUMNS}
    if len(frame):
        for c in ("zone_id", "layer", "role", "kind", "score_mean", "area_m2"):
            columns[c] = list(frame[c])
        for c in ("degree", "degree_c", "between_c", "component", "comp_roles", "chain"):
            columns[c] = [metrics[z][c] for z in frame["zone_id"]]
    geometry = geoseries(list(frame.geometry) if len(frame) else [], crs)
    nodes = gpd.GeoDataFrame(columns, geometry=geometry, crs=crs)
    if len(nodes):
        nodes["chain"] = nodes["chain"].astype(bool)
        nodes["degree"] = nodes["degree"].astype(int)
        nodes["component"] = nodes["component"].astype(int)
    return nodes


def _edges_frame(rows: list, crs) -> gpd.GeoDataFrame:
    columns: dict[str, list] = {c: [] for c in EDGE_COLUMNS}
    lines = []
    for source, target, direction, attrs, line in rows:
        columns["source"].append(source)
        columns["target"].append(target)
        columns["direction"].append(direction)
        for key in ("type", "confidence", "iou", "gap"):
            columns[key].append(attrs[key])
        lines.append(line)
    return gpd.GeoDataFrame(columns, geometry=geoseries(lines, crs), crs=crs)


def geoseries(geometries: list, crs) -> gpd.GeoSeries:
    """A GeoSeries from shapely objects without pandas probing each one's array interface (slow)."""
    array = np.empty(len(geometries), dtype=object)
    for k, geometry in enumerate(geometries):
        array[k] = geometry
    return gpd.GeoSeries(gpd.array.GeometryArray(array, crs=crs), crs=crs)


def graph_from_frames(nodes: gpd.GeoDataFrame, edges: gpd.GeoDataFrame | None, params: GraphParams | None = None,
                      log: list | None = None) -> SpatialGraph:
    """A SpatialGraph rebuilt from node and edge layers written earlier (metrics recomputed).

    Each edge row is kept with its direction word; a missing reverse edge is added with the opposite word.
    """
    params = params or GraphParams()
    log = list(log or [])
    frame = prepare_zones(nodes, log=log)
    known = set(frame["zone_id"])
    relations = []
    if edges is not None and len(edges):
        missing = {"source", "target"} - set(edges.columns)
        if missing:
            raise LodestarError(f"The edge layer lacks the fields {', '.join(sorted(missing))}; "
                                "use the edges written by lodestar:spatial_graph.")
        seen = set()
        for row in edges.itertuples(index=False):
            source, target = str(row.source), str(row.target)
            if source not in known or target not in known or (target, source) in seen:
                continue
            seen.add((source, target))
            direction = str(getattr(row, "direction", "around"))
            attrs = {"type": str(getattr(row, "type", "proximity")),
                     "confidence": float(getattr(row, "confidence", 1.0)),
                     "iou": float(getattr(row, "iou", 0.0)), "gap": float(getattr(row, "gap", 0.0))}
            relations.append((source, target, direction if direction in OPPOSITE else "around", attrs))
    graph = _digraph(frame, relations)
    metrics = node_metrics(graph, params)
    kept = edges if edges is not None else _edges_frame([], frame.crs)
    return SpatialGraph(graph, _nodes_frame(frame, metrics, frame.crs), kept, frame.crs, params, log)


def write_graphml(spatial_graph: SpatialGraph, path) -> None:
    """The graph as GraphML; node and edge attributes are plain strings/numbers/booleans, plus each
    node's WKT polygon (`wkt`) and the CRS as a graph attribute."""
    from pathlib import Path

    path = Path(path)
    graph = nx.DiGraph()
    crs = spatial_graph.crs
    graph.graph["crs"] = crs.to_wkt() if crs is not None else ""
    graph.graph["params"] = json.dumps(spatial_graph.params.__dict__)
    for row in spatial_graph.nodes.itertuples(index=False):
        attrs = {c: _safe(getattr(row, c)) for c in NODE_COLUMNS if c != "zone_id"}
        attrs["wkt"] = row.geometry.wkt
        graph.add_node(str(row.zone_id), **attrs)
    for u, v, data in spatial_graph.graph.edges(data=True):
        graph.add_edge(str(u), str(v), **{k: _safe(val) for k, val in data.items()})
    try:
        with atomic_path(path) as tmp:
            nx.write_graphml(graph, tmp)
    except nx.NetworkXError as exc:
        raise LodestarError(f"Could not write the graph to {path}: {exc}") from exc


def _safe(value):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else 0.0
    if value is None:
        return ""
    return str(value)
