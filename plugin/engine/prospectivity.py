"""The run's prospectivity map: a favourability surface, calibrated when deposits are known, and ranked targets.

The planner's evidence specs (layer, transformation, membership, weight, why) make the
knowledge-driven surface (`plugin/favourability`). With known deposits and calibration asked for, a model
(weights of evidence, logistic regression, random forest, gradient boosting, or the best of them out of
fold) is fitted on the layers' measured evidence with spatial block cross-validation
(`favourability/calibration.py`): the full fit (labelled as fitted on the deposits), the out-of-fold surface
(each block predicted by a model that never saw its deposits), its uncertainty, and a comparison with the
knowledge-driven surface and the equal-weight mean of the layers' ranks on the same cells. A fitted surface
that does not beat that equal-weight baseline out of fold is refused for the targets, and said so. With
known deposits, a layer the deposit model weighs up that ranks them below the average cell is flagged.
Targets are the top `area_share` of the analysed area on the surface the user gets (the full fit when
calibrated and not refused, else the knowledge-driven one); the spatial graph of the chain's zones ranks and
explains them: a target's rank follows the evidence it holds (`score`: its favourability summed over its
area, in favourability-weighted km2, so a large coherent anomaly outranks a speck of one high cell; then the
graph score of the zones inside it), and its `why` names the zones, roles and chains it holds. When the
answer rests on a core that the verifier names (`Verdict.core`), the core's cells join the selection and the
target holding them comes first, followed by the further systems it verified on its own (`core_target`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import geopandas as gpd
import numpy as np
from shapely.ops import unary_union

from ..errors import LodestarError
from ..evaluation import left_out_deposits
from ..favourability.evidence import EvidenceSpec, membership_map
from ..favourability.knowledge import knowledge_specs
from ..favourability.models import LABELS as _LABELS
from ..favourability.outputs import surface_polygons
from ..favourability.overlay import Surface, favourability_surface
from ..progress import SILENT, Progress
from .core_target import core_cells, other_outlines, target_outline

TARGET_COLUMNS = ("rank", "score", "fav_mean", "fav_max", "zones", "roles", "n_zones", "seeds", "graph", "area_m2",
                  "why")
CALIBRATION_METHODS = ("wofe", "logistic", "forest", "boosting", "best")
EQUAL_WEIGHT = "equal-weight mean of the layers' ranks"
KNOWLEDGE = "knowledge-driven surface"
MIN_TARGET_CELLS = 4
"""Patches of the top share smaller than this many cells are specks, not targets: left out (and said); holes
smaller than this inside a target are specks too, and part of it."""


@dataclass
class ProspectivityMap:
    """What the run maps: the surface the user gets (the full fit when calibrated, else the
    knowledge-driven one; None when no layer can be evidence), the knowledge-driven surface, the
    out-of-fold surface (None unless calibrated), the weights table, the layers left out of the
    surface and the layers used nowhere (each with its reason), the targets, validation and notes."""

    surface: Surface | None
    knowledge: Surface | None
    cv: Surface | None
    weights: list[dict]
    left_out: list[dict]
    unused: list[dict]
    targets: gpd.GeoDataFrame
    source: str = ""
    calibration: dict = field(default_factory=dict)
    validation: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    uncertainty: Surface | None = None

    @property
    def basis(self) -> str:
        return "calibrated" if self.cv is not None and self.surface is not self.knowledge else "knowledge-driven"

    def section(self) -> dict:
        """The run record's favourability section (JSON values); `specs`: the knowledge-driven surface's evidence
        specs in full (parameters too), from which it can be made again at full resolution."""
        return {"basis": self.basis, "source": self.source, "method": self.surface.method if self.surface else None,
                "weights": self.weights, "left_out": self.left_out, "unused": self.unused,
                "calibration": self.calibration, "validation": self.validation, "notes": list(self.notes),
                "specs": [spec.to_dict() for spec in self.knowledge.specs] if self.knowledge else [],
                "targets": [{k: v for k, v in row.items() if k != "geometry"}
                            for row in self.targets.drop(columns="geometry").to_dict("records")]}


def map_prospectivity(engine, graph, node_scores, plan: list, *, draw_targets: bool, area_share: float,
                      calibrate: str = "", deposit_xy: list | None = None, core: dict | None = None,
                      progress: Progress = SILENT, answered: bool = True) -> ProspectivityMap:
    """The run's favourability surface and targets (see the module docstring).

    `engine`: the run's loop (its planner is asked for the evidence plan, within the budget);
    `plan`: the plan steps run (a layer in no step and not in the surface is listed as unused);
    `draw_targets`: False when the answer rules deposits out, or no answer was reached (`answered` False): the
    surface is still made, and the note says which;
    `deposit_xy`: the known deposits; those off the surface's data cells are left out of its validation, and said;
    `core`: the core the answer rests on (`Verdict.core`), made the first target, and the further systems it
    names (`others`), ranked next (`core_target`)."""
    ws = engine.ws
    specs, left_out, source, notes = _evidence_specs(engine)
    rendered, extra = zone_specs(ws, left_out)
    specs = specs + rendered
    left_out = [row for row in left_out if row["layer"] not in extra]
    in_steps = {name for step in plan for name in step.layers}
    in_surface = {spec.layer for spec in specs}
    reasons = {row["layer"]: row["reason"] for row in left_out}
    unused = [{"layer": info.name, "reason": reasons.get(info.name, "The planner gave it neither a step nor a "
                                                                     "weight in the surface.")}
              for info in ws.layers if info.name not in in_steps and info.name not in in_surface]
    crs = ws.raster_set.crs
    empty = gpd.GeoDataFrame({c: [] for c in TARGET_COLUMNS}, geometry=gpd.GeoSeries([], crs=crs), crs=crs)
    if not specs:
        notes.append("No favourability surface: no layer can be turned into evidence (the weights table says why "
                     "for each).")
        return ProspectivityMap(None, None, None, [], left_out, unused, empty, source, notes=notes)
    progress.check()
    maps = {}
    for spec in specs:  # made once: the knowledge-driven surface and a calibration both combine them
        progress.check()
        maps[spec.layer] = membership_map(ws.raster_set, spec, extra)
    knowledge = favourability_surface(ws.raster_set, specs, maps=maps)
    surface, cv, weights, section = knowledge, None, knowledge.table(), {}
    if calibrate:
        if len(deposit_xy or []) < 2:
            raise LodestarError("Calibration needs known deposits: give a deposits layer (DEPOSITS, or the case's "
                                "deposits) with at least 2 points inside the analysed area, or turn calibration off.")
        progress.log("Fitting the prospectivity models on the known deposits (spatial block cross-validation)...")
        fit, section = calibrated(ws, equal_weight_ranks(maps), knowledge, deposit_xy, calibrate, progress)
        label = f"calibrated ({fit.method}, full fit)"
        fitted_surface = Surface(fit.full, knowledge.grid, knowledge.crs, list(specs), label)
        cv = Surface(fit.cv, knowledge.grid, knowledge.crs, list(specs), f"calibrated ({fit.method}, out of fold)")
        uncertainty = Surface(fit.uncertainty, knowledge.grid, knowledge.crs, list(specs),
                              f"uncertainty: {fit.uncertainty_label}")
        weights = merged_weights(weights, fit.table, ws)
        if section["refused"]:
            notes.append(section["refused"])
        else:
            surface = fitted_surface
    else:
        uncertainty = None
    if deposit_xy:
        left_out_note = left_out_deposits(deposit_xy, knowledge.grid, ~np.ma.getmaskarray(knowledge.values))
        notes.extend([left_out_note] if left_out_note else [])
        notes.extend(anti_correlated(knowledge, maps, deposit_xy))
    targets = empty
    if draw_targets:
        progress.check()
        analysed = float(surface.values.count()) * surface.grid.pixel_area
        outline = target_outline(core, analysed, area_share, notes, ws.zones)
        others = other_outlines(core, outline, analysed, area_share, notes)
        targets = rank_targets(surface.values, surface.grid, crs, graph, node_scores, area_share, outline,
                               (core or {}).get("label", ""), others)
        covered = float(targets["area_m2"].sum()) / max(analysed, 1e-12)
        notes.append(f"{len(targets)} target(s) covering {covered:.1%} of the analysed area: the top {area_share:.0%} "
                     f"on the {'calibrated' if surface is not knowledge else 'knowledge-driven'} surface, "
                     f"ranked by the evidence they hold (patches under {MIN_TARGET_CELLS} cells left out as specks, "
                     f"holes under {MIN_TARGET_CELLS} cells inside a target made part of it).")
    else:
        notes.append(f"No targets: {'the answer rules the deposit out' if answered else 'no answer was reached'}; "
                     "the favourability surface is still written.")
    result = ProspectivityMap(surface, knowledge, cv, weights, left_out, unused, targets, source, section,
                              notes=notes, uncertainty=uncertainty)
    if deposit_xy:
        result.validation = validation(result, deposit_xy, equal_weight_ranks(maps))
    return result


def zone_specs(ws, left_out: list) -> tuple[list, dict]:
    """Evidence specs for the colour renderings left out of the surface on which the executor marked
    zones, and their zones' geometries (`extra` of membership_map): a rendering's colours cannot be
    scaled into values, but the zones the chain found on it can enter as nearness to them (fuzzy small
    of the distance in metres, midpoint two pixels, so the zones themselves score about 1)."""
    weights = (ws.deposit_model.get("favourability") or {}).get("weights")
    zones = ws.zones
    left = {row["layer"] for row in left_out}
    pixel = max(abs(v) for v in ws.raster_set.grid.pixel_size)
    specs, extra = [], {}
    for info in ws.layers:
        if info.kind != "rgb" or info.name not in left or not len(zones):
            continue
        marked = zones[zones["layer"] == info.name]
        weight = 1.0 if weights is None else weights.get(info.role)
        if not len(marked) or not weight:
            continue
        specs.append(EvidenceSpec(info.name, info.role, info.kind, "distance_m", "small",
                                  {"midpoint": round(2 * pixel, 3), "spread": 3.0}, weight,
                                  f"A colour rendering cannot be scaled into values, so the {len(marked)} zone(s) the "
                                  "executor marked on it enter the surface as nearness to them."))
        extra[info.name] = marked.geometry
    return specs, extra


def _evidence_specs(engine) -> tuple[list, list, str, list]:
    """(specs, layers left out with reasons, who chose, notes): the planner's plan, else the deposit model's rules."""
    ws = engine.ws
    defaults, left_out = knowledge_specs(ws.layers, ws.deposit_model, ws.favourable_units)
    rules = f"deposit model rules ({ws.deposit_model.get('name', 'no model')})"
    if engine.budget_spent:
        return defaults, left_out, rules, [f"No further model calls ({engine.stop_reason}): the evidence weights "
                                           "follow the deposit model's rules."]
    try:
        specs = list(engine.ask_evidence_plan())
    except (LodestarError, TypeError, ValueError) as exc:
        return defaults, left_out, rules, [f"The planner's evidence plan was not usable ({exc}); the deposit "
                                           "model's rules are used."]
    names = {info.name for info in ws.layers}
    layers = [spec.layer for spec in specs]
    if not specs or any(n not in names for n in layers) or len(set(layers)) != len(layers):
        return defaults, left_out, rules, ["The planner's evidence plan named unknown or repeated layers; the "
                                           "deposit model's rules are used."]
    chosen = set(layers)
    left = [row for row in left_out if row["layer"] not in chosen]
    left += [{"layer": info.name, "reason": "The planner left it out of the surface."}
             for info in ws.layers if info.name not in chosen and info.name not in {r["layer"] for r in left}]
    return specs, left, getattr(engine.roles.planner, "name", "planner"), []


def validation(result: ProspectivityMap, deposit_xy: list, equal_weight: np.ma.MaskedArray) -> dict:
    """Surface scores against known deposits, each labelled by whether the deposits shaped it, beside the
    equal-weight mean of the layers' ranks (no deposit data); `summary`: what the calibration chose and why."""
    from ..evaluation import evaluate_surface

    def scored(surface: Surface, basis: str) -> dict:
        metrics = evaluate_surface(surface.values, surface.grid, deposit_xy)
        return {"basis": basis, "auc": metrics["auc"], "capture": {f"{k:g}": v for k, v in metrics["capture"].items()},
                "deposits": metrics["inside"], "curve": metrics["curve"]}

    out = {"knowledge": scored(result.knowledge, "knowledge-driven: no deposit data used"),
           "equal_weight": scored(Surface(equal_weight, result.knowledge.grid, result.knowledge.crs),
                                  f"{EQUAL_WEIGHT}: no deposit data used, the baseline to beat")}
    if result.calibration:
        out["summary"] = result.calibration.get("refused") or result.calibration.get("why", "")
    if result.cv is not None:
        out["cv"] = scored(result.cv, "cross-validated: each spatial block predicted by a model fitted without "
                                      "its deposits")
        if result.surface is not result.knowledge:
            out["fitted"] = scored(result.surface, "fitted on these deposits: not a skill figure")
    return out


def calibrated(ws, equal_weight: np.ma.MaskedArray, knowledge: Surface, deposit_xy: list, method: str,
               progress: Progress = SILENT):
    """(the fit, the record section) of `method` on the layers' measured evidence, beside the knowledge-driven
    surface and the equal-weight mean of the membership maps' ranks (`equal_weight`) scored on the same cells. The
    section's `refused` says why the fitted surface is not the one targets are drawn from (it does not beat, out of
    fold, the equal-weight baseline that used no deposit data), else ''."""
    from ..favourability.calibration import calibrate
    from ..favourability.measured import measured_evidence

    if method not in CALIBRATION_METHODS:
        raise LodestarError(f"Unknown calibration method {method!r}; use one of {', '.join(CALIBRATION_METHODS)}.")
    layers, not_measured = measured_evidence(ws.raster_set, ws.layers)
    baselines = {KNOWLEDGE: knowledge.values, EQUAL_WEIGHT: equal_weight}
    fit = calibrate(layers, ws.raster_set.grid, deposit_xy, method=method, baselines=baselines, progress=progress)
    mine = next(row for row in fit.comparison if row["basis"] != "no deposit data"
                and row["surface"].startswith(_LABELS[fit.method]))
    plain = next(row for row in fit.comparison if row["surface"] == EQUAL_WEIGHT)
    refused = ""
    if mine["auc"] is not None and plain["auc"] is not None and mine["auc"] <= plain["auc"]:
        refused = (f"The calibrated surface ({_LABELS[fit.method]}) was not used for the targets: its out-of-fold AUC "
                   f"{mine['auc']:.3f} does not beat the {EQUAL_WEIGHT} ({plain['auc']:.3f}), which used no deposit "
                   "data; the targets come from the knowledge-driven surface.")
    section = {"method": fit.method, "asked": method,
               "basis": "fitted on known deposits; the cross-validated surface is the skill figure",
               "why": fit.why, "refused": refused, "folds": fit.folds.summary(), "log": list(fit.log),
               "independence": fit.independence, "comparison": fit.comparison,
               "uncertainty": fit.uncertainty_label, "out_of_fold": fit.out_of_fold,
               "not_measured": not_measured,
               "responses": {row["layer"]: row.get("response") for row in fit.table},
               "classes": {row["layer"]: row["classes"] for row in fit.table if row.get("classes")}}
    return fit, section


def equal_weight_ranks(maps: dict) -> np.ma.MaskedArray:
    """The plain baseline: at each cell the mean of the membership maps' percentile ranks (0-1, ties at their
    mid-rank) over the layers with data there, every layer weighing the same."""
    from scipy.stats import rankdata

    ranked = []
    for values in maps.values():
        values = np.ma.masked_invalid(np.ma.asarray(values, dtype=float))
        known = ~np.ma.getmaskarray(values)
        out = np.full(values.shape, np.nan)
        if known.any():
            out[known] = (rankdata(values.compressed(), method="average") - 0.5) / known.sum()
        ranked.append(out)
    stack = np.stack(ranked)
    counts = np.sum(~np.isnan(stack), axis=0)
    mean = np.where(counts > 0, np.nansum(stack, axis=0) / np.maximum(counts, 1), 0.0)
    return np.ma.masked_array(mean.astype("float32"), mask=counts == 0)


def merged_weights(weights: list, fitted: list, ws) -> list:
    """The knowledge table's rows with the fit's figures for the same layer, then the rows of layers only the fit
    used (measured evidence the knowledge-driven surface left out); response curves and unit classes stay in the
    record's calibration section."""
    shown = [{k: v for k, v in row.items() if k not in ("response", "classes")} for row in fitted]
    by_layer = {row["layer"]: row for row in shown}
    merged = [dict(row, **{k: v for k, v in by_layer.get(row["layer"], {}).items() if k != "layer"})
              for row in weights]
    known = {row["layer"] for row in weights}
    roles = {info.name: info.role for info in ws.layers}
    merged += [dict({"layer": row["layer"], "role": roles.get(row["layer"], ""), "transformation": "measured values",
                     "why": "Not in the knowledge-driven surface; the fitted model uses its measured values."},
                    **{k: v for k, v in row.items() if k != "layer"})
               for row in shown if row["layer"] not in known]
    return merged


def anti_correlated(knowledge: Surface, maps: dict, deposit_xy: list) -> list:
    """A note for each layer the knowledge-driven surface weighs up whose membership ranks the known deposits
    below the average cell (AUC under 0.5): the deposit model's weight is not borne out here."""
    from ..evaluation import evaluate_surface

    notes = []
    for spec in knowledge.specs:
        values = maps.get(spec.layer)
        if values is None or spec.weight <= 0 or np.ma.count(values) == 0:
            continue
        metrics = evaluate_surface(values, knowledge.grid, deposit_xy, curve=False)
        if metrics["inside"] and metrics["auc"] is not None and metrics["auc"] < 0.5:
            notes.append(f"{spec.layer} is weighted {spec.weight:g} by the deposit model, but its membership ranks "
                         f"the {metrics['inside']} known deposits below the average cell here (AUC "
                         f"{metrics['auc']:.3f}): check it before trusting the knowledge-driven surface.")
    return notes


def rank_targets(values: np.ma.MaskedArray, grid, crs, graph, node_scores, area_share: float, core=None,
                 core_label: str = "", others=None) -> gpd.GeoDataFrame:
    """Polygons of the top `area_share` of `values`, ranked by the evidence they hold, explained by the graph;
    `core`: the outline of the verified core, whose cells join the selection and whose target comes first;
    `others`: outlines of further verified systems, whose cells join it too and whose targets come next."""
    outlines = [g for g in (core, others) if g is not None]
    include = core_cells(unary_union(outlines), grid) if outlines else None
    polygons = surface_polygons(Surface(values, grid, crs), area_share, include=include,
                                pinhole_cells=MIN_TARGET_CELLS)
    holds_core = np.zeros(len(polygons), dtype=bool)
    if core is not None and len(polygons):  # the patch holding most of the core: one target holds it
        shared = polygons.geometry.intersection(core).area.to_numpy()
        if shared.max() > 0:
            holds_core[int(np.argmax(shared))] = True
    holds_other = np.zeros(len(polygons), dtype=bool)
    if others is not None and len(polygons):  # every patch holding part of a further verified system
        holds_other = (polygons.geometry.intersection(others).area.to_numpy() > 0) & ~holds_core
    keep = (polygons["area_m2"].to_numpy() >= MIN_TARGET_CELLS * grid.pixel_area * 0.999) | holds_core | holds_other
    polygons, holds_core, holds_other = polygons[keep], holds_core[keep], holds_other[keep]
    nodes = graph.nodes
    index = nodes.sindex if len(nodes) else None
    rows = []
    for polygon, at_core, at_other in zip(polygons.itertuples(), holds_core, holds_other):
        inside = []
        if index is not None:
            inside = [int(i) for i in index.query(polygon.geometry, predicate="intersects")]
        members = nodes.iloc[inside] if inside else nodes.iloc[[]]
        zone_ids = sorted(members["zone_id"]) if len(members) else []
        roles = sorted(set(members["role"])) if len(members) else []
        on_chain = bool(len(members) and members["chain"].astype(bool).any())
        graph_score = max((float(node_scores.get(z, 0.0)) for z in zone_ids), default=0.0)
        best_zone = max(zone_ids, key=lambda z: float(node_scores.get(z, 0.0))) if zone_ids else ""
        held = float(polygon.fav_mean) * float(polygon.area_m2) / 1e6
        why = _why(held, polygon.fav_mean, polygon.area_m2, zone_ids, roles, on_chain, best_zone, graph_score)
        if at_core:
            why = f"holds the verified core ({core_label or 'named by the verifier'}); {why}"
        elif at_other:
            why = f"holds a further system verified on its own; {why}"
        rows.append({
            "score": round(held, 6), "fav_mean": float(polygon.fav_mean),
            "fav_max": float(polygon.fav_max), "zones": ",".join(zone_ids), "roles": ",".join(roles),
            "n_zones": len(zone_ids), "seeds": best_zone, "graph": round(graph_score, 6),
            "area_m2": round(float(polygon.area_m2), 3), "geometry": polygon.geometry,
            "why": why,
        })
    order = sorted(range(len(rows)), key=lambda i: (not holds_core[i], not holds_other[i], -rows[i]["score"],
                                                     -rows[i]["graph"], -rows[i]["fav_mean"]))
    rows = [rows[i] for i in order]
    for rank, row in enumerate(rows, start=1):
        row["rank"] = rank
    if not rows:
        return gpd.GeoDataFrame({c: [] for c in TARGET_COLUMNS}, geometry=gpd.GeoSeries([], crs=crs), crs=crs)
    frame = gpd.GeoDataFrame(rows, geometry="geometry", crs=crs)
    return frame[list(TARGET_COLUMNS) + ["geometry"]]


def _plain(value: float) -> str:
    """A number as people write it: no exponent, digits by size (12,345 / 123 / 12.3 / 1.23 / 0.0123)."""
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 1:
        return f"{value:.3g}"
    return f"{value:.2g}" if value > 0 else "0"


def _why(held: float, fav_mean: float, area_m2: float, zone_ids: list, roles: list, on_chain: bool, best_zone: str,
         graph_score: float) -> str:
    text = f"evidence {_plain(held)} (mean favourability {fav_mean:.2f} over {_plain(area_m2 / 1e6)} km2)"
    if not zone_ids:
        return text + "; no zone of the chain lies here (the surface alone selects it)"
    text += f"; holds {len(zone_ids)} zone(s) of {', '.join(r.replace('_', ' ') for r in roles)}"
    if on_chain:
        text += ", on a chain of three or more roles"
    return text + f"; best graph node {best_zone} (score {graph_score:.2f})"
