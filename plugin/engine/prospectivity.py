"""The run's prospectivity map: a favourability surface, calibrated when deposits are known, and ranked targets.

The planner's evidence specs (layer, transformation, membership, weight, why) make the
knowledge-driven surface (`plugin/favourability`). With known deposits and calibration asked for,
weights of evidence or logistic regression are fitted on the same membership maps with spatial block
cross-validation: the full fit (labelled as fitted on the deposits) and the out-of-fold surface (each
block predicted by a model that never saw its deposits). Targets are the top `area_share` of the
analysed area on the surface the user gets (the full fit when calibrated, else the knowledge-driven
one); the spatial graph of the chain's zones ranks and explains them: a target's rank follows the
evidence it holds (its mean favourability, then the graph score of the zones inside it), and its
`why` names the zones, roles and chains it holds.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import geopandas as gpd
import numpy as np

from ..errors import LodestarError
from ..favourability.evidence import membership_map
from ..favourability.outputs import surface_polygons
from ..favourability.overlay import Surface
from ..progress import SILENT, Progress

TARGET_COLUMNS = ("rank", "score", "fav_mean", "fav_max", "zones", "roles", "n_zones", "seeds", "graph", "area_m2",
                  "why")
CALIBRATION_METHODS = ("wofe", "logistic")


@dataclass
class ProspectivityMap:
    """What the run maps: the surface (full fit when calibrated), the knowledge-driven surface, the
    out-of-fold surface (None unless calibrated), the weights table, the targets and notes."""

    surface: Surface
    knowledge: Surface
    cv: np.ma.MaskedArray | None
    weights: list[dict]
    targets: gpd.GeoDataFrame
    calibration: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)

    @property
    def basis(self) -> str:
        return "calibrated" if self.cv is not None else "knowledge-driven"


def calibrated(raster_set, specs: list, deposit_xy: list, method: str, progress: Progress = SILENT):
    """(full-fit values, out-of-fold values, weights rows, record section) fitted on known deposits over the
    membership maps of `specs`."""
    from ..favourability.calibration import calibrate

    if method not in CALIBRATION_METHODS:
        raise LodestarError(f"Unknown calibration method {method!r}; use one of {', '.join(CALIBRATION_METHODS)}.")
    maps = {}
    for spec in specs:
        progress.check()
        maps[spec.layer] = membership_map(raster_set, spec)
    fit = calibrate(maps, raster_set.grid, deposit_xy, method=method)
    section = {"method": method, "basis": "fitted on known deposits; the cross-validated surface is the skill figure",
               "folds": fit.folds.summary(), "log": list(fit.log), "independence": fit.independence}
    return fit.full, fit.cv, fit.table, section


def rank_targets(values: np.ma.MaskedArray, grid, crs, graph, node_scores, area_share: float) -> gpd.GeoDataFrame:
    """Polygons of the top `area_share` of `values`, ranked by the evidence they hold, explained by the graph."""
    polygons = surface_polygons(Surface(values, grid, crs), area_share)
    nodes = graph.nodes
    index = nodes.sindex if len(nodes) else None
    rows = []
    for polygon in polygons.itertuples():
        inside = []
        if index is not None:
            inside = [int(i) for i in index.query(polygon.geometry, predicate="intersects")]
        members = nodes.iloc[inside] if inside else nodes.iloc[[]]
        zone_ids = sorted(members["zone_id"]) if len(members) else []
        roles = sorted(set(members["role"])) if len(members) else []
        on_chain = bool(len(members) and members["chain"].astype(bool).any())
        graph_score = max((float(node_scores.get(z, 0.0)) for z in zone_ids), default=0.0)
        best_zone = max(zone_ids, key=lambda z: float(node_scores.get(z, 0.0))) if zone_ids else ""
        rows.append({
            "score": round(float(polygon.fav_mean), 6), "fav_mean": float(polygon.fav_mean),
            "fav_max": float(polygon.fav_max), "zones": ",".join(zone_ids), "roles": ",".join(roles),
            "n_zones": len(zone_ids), "seeds": best_zone, "graph": round(graph_score, 6),
            "area_m2": round(float(polygon.area_m2), 3), "geometry": polygon.geometry,
            "why": _why(polygon.fav_mean, zone_ids, roles, on_chain, best_zone, graph_score),
        })
    rows.sort(key=lambda r: (-r["fav_mean"], -r["graph"], -r["area_m2"]))
    for rank, row in enumerate(rows, start=1):
        row["rank"] = rank
    if not rows:
        return gpd.GeoDataFrame({c: [] for c in TARGET_COLUMNS}, geometry=gpd.GeoSeries([], crs=crs), crs=crs)
    frame = gpd.GeoDataFrame(rows, geometry="geometry", crs=crs)
    return frame[list(TARGET_COLUMNS) + ["geometry"]]


def _why(fav_mean: float, zone_ids: list, roles: list, on_chain: bool, best_zone: str, graph_score: float) -> str:
    text = f"mean favourability {fav_mean:.2f}"
    if not zone_ids:
        return text + "; no zone of the chain lies here (the surface alone selects it)"
    text += f"; holds {len(zone_ids)} zone(s) of {', '.join(r.replace('_', ' ') for r in roles)}"
    if on_chain:
        text += ", on a chain of three or more roles"
    return text + f"; best graph node {best_zone} (score {graph_score:.2f})"
