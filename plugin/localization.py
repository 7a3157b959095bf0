"""Deposit localization over the spatial graph (STA-CoT §4.6 and the localization tool of C.4).

Node score (every term documented, all inputs from `graph.build_graph`):

    score(v) = role_weight(role v) * focus(v) * (0.5 + 0.5 * evidence(v))
               * (1 + w_degree * strength(v) / max strength
                    + w_betweenness * betweenness(v) / max betweenness
                    + w_chain * [v lies on a chain])

`evidence(v)` is the percentile rank of the zone's `score_mean` among the zones of its own layer (in
(0, 1]; layers have different units, so ranks make them comparable). `strength(v)` is the degree
weighted by edge confidence. `focus(v)` = sqrt(min(1, median zone area / area of v)) scales down
zones much larger than the typical one (a whole map unit links everything but locates nothing). An
isolated zone keeps a small score from its evidence and role, so a graph without edges still ranks
its zones.

Areas: zones are taken by decreasing score as *seeds*, skipping a zone that already belongs to an
earlier seed's one-hop set (so the seeds are distinct places), until `important_areas_count` seeds.
A seed's area is the seed polygon, plus its one-hop neighbours' polygons, plus its two-hop ring
(neighbours of neighbours not already taken) scaled about each polygon's centroid by
`hop2_expansion_width` in x and `hop2_expansion_height` in y. Neighbour polygons can be much larger
than the evidence that links them (a long fault corridor, a whole map unit), so they are clipped to
the seed's surroundings: the seed grown by `clip_ratio` times its size (sqrt of area) for one-hop
members, and that window scaled by the expansion factors for the two-hop ring (`clip_ratio` 0 keeps
whole polygons, as in the paper). A linear seed (a fault corridor or a contact strip, by its
compactness) is itself cut to where it meets its one-hop zones before the windows are drawn. Seed
areas that touch are merged (unary union) into one
prospectivity polygon; polygons are ranked by their best seed's score.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import geopandas as gpd
import numpy as np
import pandas as pd
from shapely.affinity import scale
from shapely.ops import unary_union

from .decisions import CORE
from .errors import LodestarError
from .graph import SpatialGraph, geoseries
from .json_text import JSONExtractionError, extract_json
from .labels import plural
from .progress import SILENT, Progress
from .roles import ROLES

PROSPECTIVITY_COLUMNS = ("rank", "score", "zones", "roles", "n_zones", "seeds", "area_m2")

SEED_AREA_NAMES = {
    "silicification zone": "silicification",
    "propylitic alteration": "propylitic_alteration",
    "hydrothermal alteration": "hydrothermal_alteration",
    "false color composition": "false_color_composite",
}
"""The paper's area-type names (C.4) and the layer roles they weigh."""

# decision numbers: their reasons and provenance are in plugin/decisions.py
RANGES = CORE.localization_ranges
AREA_WEIGHT_RANGE = CORE.area_weight_range


@dataclass
class LocalizationParams:
    """The localization tool's parameters (names, ranges and defaults of the paper's C.4 prompt).

    The paper gives no default for the count and the expansions; these defaults are the middle of the
    count range and a modest expansion. `clip_ratio` is Lodestar's own (see the module doc).
    """

    degree_centrality_weight: float = 1.0
    betweenness_centrality_weight: float = 1.0
    chain_presence_weight: float = 1.0
    area_type_weights: dict = field(default_factory=dict)  # role -> weight in 1.0-2.0 (missing roles: 1.0)
    important_areas_count: int = 5
    hop2_expansion_height: float = 1.2
    hop2_expansion_width: float = 1.2
    clip_ratio: float = 1.0

    def __post_init__(self):
        for name, (low, high) in RANGES.items():
            value = getattr(self, name)
            if name == "important_areas_count":
                value = _as_int(value, name, low, high)
            else:
                value = _as_float(value, name)
            if not (low <= value <= high):
                raise LodestarError(
                    f"Localization parameter {name} = {value} is out of range; allowed: {low} to {high}.")
            setattr(self, name, value)
        weights = {}
        for key, value in dict(self.area_type_weights or {}).items():
            role = area_role(key)
            weight = _as_float(value, f"area type weight {key}")
            low, high = AREA_WEIGHT_RANGE
            if not (low <= weight <= high):
                raise LodestarError(f"Area type weight of {key} = {weight} is out of range; allowed: {low} to {high}.")
            weights[role] = weight
        self.area_type_weights = weights

    def role_weight(self, role: str) -> float:
        return float(self.area_type_weights.get(role, 1.0))

    def as_dict(self) -> dict:
        data = {name: getattr(self, name) for name in RANGES}
        data["area_type_weights"] = dict(self.area_type_weights)
        return data

    @classmethod
    def from_dict(cls, data: dict | None, base: LocalizationParams | None = None) -> LocalizationParams:
        """Parameters from a dict (a deposit model's `localization`, algorithm inputs, overrides) laid over
        `base` (default: the defaults). Numbers may be strings ("1.5"); unknown keys are ignored."""
        values = (base or cls()).as_dict()
        for key, value in dict(data or {}).items():
            if key == "area_type_weights" and isinstance(value, dict):
                values["area_type_weights"] = {**values["area_type_weights"], **value}
            elif key in RANGES and value is not None and value != "":
                values[key] = value
        return cls(**values)

    @classmethod
    def from_model_answer(cls, answer, base: LocalizationParams | None = None) -> LocalizationParams:
        """Parameters from a model's JSON answer (text with a JSON object, possibly in a code fence, or a dict).

        Values the model left as the prompt's placeholders ("float, range 1.0-3.0, ...") keep `base`'s value;
        real out-of-range values raise a LodestarError naming the allowed range (to send back to the model).
        """
        data = answer if isinstance(answer, dict) else _json_object(str(answer))
        cleaned = {}
        for key, value in data.items():
            if key == "area_type_weights" and isinstance(value, dict):
                cleaned[key] = {k: v for k, v in value.items() if _is_value(v)}
            elif _is_value(value):
                cleaned[key] = value
        return cls.from_dict(cleaned, base)


def area_role(name: str) -> str:
    """The role an area-type name stands for: a role name, or one of the paper's names (any case)."""
    text = str(name).strip().lower().replace("_", " ")
    if text in SEED_AREA_NAMES:
        return SEED_AREA_NAMES[text]
    role = text.replace(" ", "_")
    if role in ROLES:
        return role
    known = ", ".join(list(ROLES) + [n.title() for n in SEED_AREA_NAMES])
    raise LodestarError(f"Unknown area type {name!r}; use a layer role or one of the paper's names: {known}.")


def _as_float(value, name: str) -> float:
    try:
        number = float(str(value).strip()) if isinstance(value, str) else float(value)
    except (TypeError, ValueError) as exc:
        raise LodestarError(f"Localization parameter {name} must be a number, not {value!r}.") from exc
    if math.isnan(number):
        raise LodestarError(f"Localization parameter {name} must be a number, not NaN.")
    return number


def _as_int(value, name: str, low: int, high: int) -> int:
    number = _as_float(value, name)
    if number != int(number):
        raise LodestarError(
            f"Localization parameter {name} must be a whole number from {low} to {high}, not {value!r}.")
    return int(number)


def _is_value(value) -> bool:
    """False for the prompt's placeholder strings ("float, range 1.0-1.5") and empty values."""
    if value is None or value == "":
        return False
    if isinstance(value, str):
        return bool(re.fullmatch(r"\s*[-+]?\d+(\.\d*)?\s*", value))
    return True


def _json_object(text: str) -> dict:
    """The JSON object of a model's text answer (the one tolerant extractor, plugin/json_text.py)."""
    try:
        return extract_json(text).value
    except JSONExtractionError as exc:
        raise LodestarError(f"The localization answer holds no JSON object that can be read: {exc} "
                            "Answer with the JSON parameters only.") from exc


def node_scores(spatial_graph: SpatialGraph, params: LocalizationParams) -> pd.Series:
    """zone_id -> score (formula in the module doc)."""
    nodes = spatial_graph.nodes
    if not len(nodes):
        return pd.Series(dtype=float)
    degree = strength(spatial_graph)
    between = nodes["between_c"].to_numpy(dtype=float)
    chain = nodes["chain"].to_numpy(dtype=bool).astype(float)
    deg_n = degree / degree.max() if degree.max() > 0 else np.zeros_like(degree)
    btw_n = between / between.max() if between.max() > 0 else np.zeros_like(between)
    evidence = nodes.groupby("layer")["score_mean"].rank(method="average", pct=True).to_numpy(dtype=float)
    role_w = np.array([params.role_weight(r) for r in nodes["role"]])
    area = nodes["area_m2"].to_numpy(dtype=float)
    typical = float(np.median(area))
    focus = np.sqrt(np.minimum(1.0, typical / np.maximum(area, 1e-12))) if typical > 0 else np.ones_like(area)
    structure = (1.0 + params.degree_centrality_weight * deg_n + params.betweenness_centrality_weight * btw_n
                 + params.chain_presence_weight * chain)
    return pd.Series(role_w * focus * (0.5 + 0.5 * evidence) * structure, index=nodes["zone_id"].to_numpy())


def strength(spatial_graph: SpatialGraph) -> np.ndarray:
    """Each node's summed edge confidence over its neighbours (its degree, weighted), in node order."""
    graph = spatial_graph.graph
    return np.array([sum(data["confidence"] for _, _, data in graph.out_edges(z, data=True))
                     for z in spatial_graph.nodes["zone_id"]], dtype=float)


def choose_seeds(spatial_graph: SpatialGraph, scores: pd.Series, count: int) -> list[str]:
    """The `count` best-scoring zones, skipping zones inside an earlier seed's one-hop set."""
    order = sorted(scores.index, key=lambda z: (-scores[z], z))
    seeds, taken = [], set()
    for zone_id in order:
        if zone_id in taken:
            continue
        seeds.append(zone_id)
        taken.add(zone_id)
        taken.update(_neighbours(spatial_graph.graph, zone_id))
        if len(seeds) == count:
            break
    return seeds


def _neighbours(graph, zone_id) -> set:
    return set(graph.successors(zone_id)) | set(graph.predecessors(zone_id))


def seed_area(spatial_graph: SpatialGraph, seed: str, params: LocalizationParams, geometry: dict):
    """(area polygon, member zone ids) of one seed (see the module doc)."""
    graph = spatial_graph.graph
    hop1 = _neighbours(graph, seed)
    hop2 = set()
    for zone_id in hop1:
        hop2 |= _neighbours(graph, zone_id)
    hop2 -= hop1 | {seed}
    core = geometry[seed]
    if params.clip_ratio > 0 and _is_linear(core):
        core = _linear_core(core, [geometry[z] for z in hop1], params.clip_ratio)
    w, h = params.hop2_expansion_width, params.hop2_expansion_height
    if params.clip_ratio > 0:
        near = core.buffer(params.clip_ratio * math.sqrt(core.area))
        far = scale(near, xfact=w, yfact=h, origin=core.centroid)
    else:
        near = far = None
    parts = [core]
    members = {seed}
    for zone_id in sorted(hop1):
        piece = geometry[zone_id] if near is None else geometry[zone_id].intersection(near)
        if not piece.is_empty:
            parts.append(piece)
            members.add(zone_id)
    for zone_id in sorted(hop2):
        grown = scale(geometry[zone_id], xfact=w, yfact=h, origin="centroid")
        piece = grown if far is None else grown.intersection(far)
        if not piece.is_empty:
            parts.append(piece)
            members.add(zone_id)
    polygons = [p for p in (_polygonal(part) for part in parts) if p is not None]
    return unary_union(polygons), members


# decision numbers: their reasons and provenance are in plugin/decisions.py
LINEAR_COMPACTNESS = CORE.linear_compactness


def _is_linear(polygon) -> bool:
    return polygon.length > 0 and 4 * math.pi * polygon.area / polygon.length ** 2 < LINEAR_COMPACTNESS


def _linear_core(core, linked: list, clip_ratio: float):
    """The part of a linear seed (fault, contact) that carries the evidence: where it passes its linked
    zones, within their gap plus `clip_ratio` times the strip's width (2 area / perimeter); without
    linked zones, a disc of the seed's own size about its centre. A 7 km fault passing one
    alteration zone is a target there, not along its whole length."""
    width = 2 * core.area / core.length
    if linked:
        window = unary_union([g.buffer(core.distance(g) + clip_ratio * width) for g in linked])
    else:
        window = core.centroid.buffer(math.sqrt(core.area))
    piece = _polygonal(core.intersection(window))
    return piece if piece is not None and not piece.is_empty else core


def _polygonal(geometry):
    """Only the polygon parts of a clip result (intersections may add lines or points)."""
    if geometry.geom_type in ("Polygon", "MultiPolygon"):
        return geometry
    if geometry.geom_type == "GeometryCollection":
        polygons = [g for g in geometry.geoms if g.geom_type in ("Polygon", "MultiPolygon")]
        return unary_union(polygons) if polygons else None
    return None


def localize(spatial_graph: SpatialGraph, params: LocalizationParams | None = None,
             progress: Progress = SILENT) -> gpd.GeoDataFrame:
    """Prospectivity polygons: rank, score, zones, roles, n_zones, seeds, area_m2 (names fit Shapefile)."""
    params = params or LocalizationParams()
    crs = spatial_graph.crs
    nodes = spatial_graph.nodes
    if not len(nodes):
        spatial_graph.log.append("No zones to localize: the prospectivity layer is empty.")
        return _frame([], crs)
    scores = node_scores(spatial_graph, params)
    seeds = choose_seeds(spatial_graph, scores, params.important_areas_count)
    geometry = dict(zip(nodes["zone_id"], nodes.geometry))
    roles = dict(zip(nodes["zone_id"], nodes["role"]))
    areas = []
    for k, seed in enumerate(seeds):
        progress.check()
        progress.set(100 * k / max(1, len(seeds)))
        polygon, members = seed_area(spatial_graph, seed, params, geometry)
        areas.append({"seeds": [seed], "score": float(scores[seed]), "geometry": polygon, "members": members})
    records = []
    for cluster in _merge_touching(areas):
        members = set().union(*(a["members"] for a in cluster))
        polygon = unary_union([a["geometry"] for a in cluster])
        best = max(a["score"] for a in cluster)
        seed_ids = [s for a in sorted(cluster, key=lambda a: -a["score"]) for s in a["seeds"]]
        records.append({
            "score": round(best, 6),
            "zones": ",".join(sorted(members)),
            "roles": ",".join(sorted({roles[z] for z in members})),
            "n_zones": len(members),
            "seeds": ",".join(seed_ids),
            "area_m2": round(float(polygon.area), 3),
            "geometry": polygon,
        })
    records.sort(key=lambda r: (-r["score"], r["seeds"]))
    for rank, record in enumerate(records, start=1):
        record["rank"] = rank
    progress.set(100)
    seeds_and_polygons = f"{plural(len(seeds), 'seed zone')} -> {plural(len(records), 'prospectivity polygon')}"
    spatial_graph.log.append(f"Localization: {seeds_and_polygons}, "
                             f"{sum(r['area_m2'] for r in records):.6g} square map units.")
    return _frame(records, crs)


def _merge_touching(areas: list[dict]) -> list[list[dict]]:
    """Groups of seed areas linked by touching or overlapping (union-find)."""
    parent = list(range(len(areas)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(areas)):
        for j in range(i + 1, len(areas)):
            if areas[i]["geometry"].intersects(areas[j]["geometry"]):
                parent[find(j)] = find(i)
    groups: dict[int, list] = {}
    for i, area in enumerate(areas):
        groups.setdefault(find(i), []).append(area)
    return list(groups.values())


def _frame(records: list[dict], crs) -> gpd.GeoDataFrame:
    columns = {c: [r[c] for r in records] for c in PROSPECTIVITY_COLUMNS}
    frame = gpd.GeoDataFrame(columns, geometry=geoseries([r["geometry"] for r in records], crs), crs=crs)
    if len(frame):
        frame["rank"] = frame["rank"].astype(int)
        frame["n_zones"] = frame["n_zones"].astype(int)
    return frame
