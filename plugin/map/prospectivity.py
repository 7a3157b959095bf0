"""The run's prospectivity map: a favourability surface, calibrated when deposits are known, and ranked targets.

The planner's evidence specs (layer, transformation, membership, weight, why) make the
knowledge-driven surface (`plugin/favourability`). With known deposits and calibration asked for, a model
(weights of evidence, logistic regression, random forest, gradient boosting, or the best of them out of
fold) is fitted on the layers' measured evidence with spatial block cross-validation
(`favourability/calibration.py`): the full fit (labelled as fitted on the deposits), the out-of-fold surface
(each block predicted by a model that never saw its deposits), its uncertainty, and a comparison with the
knowledge-driven surface and the independent equal-weight mean of the layers' ranks (baseline.py) on the same
cells. A fitted surface that does not beat both out of fold is refused for the targets, and said so. With
known deposits, a layer the deposit model weighs up that ranks them below the average cell is flagged.
Targets are drawn from the top `area_share` of the analysed area on the surface the user gets (the full fit when
calibrated and not refused, else the knowledge-driven one), sized for the deposit model (`target_sizes`): ranked by
what they hold per km2, the best judged by the chain, the best few dozen drawn with the prospects inside each
(`work_list`, `target_table`); the zones of the chain inside each are counted in its `why`. When the answer rests on
a core that the verifier names (`Verdict.core`), the core's cells join the selection and the target holding them
comes first, followed by the further systems it verified on its own (`core_target`). An answer of Insufficient
evidence or No, or none, draws no target: the surface is still made.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import geopandas as gpd
import numpy as np

from ..errors import LodestarError
from ..evaluation import left_out_deposits
from ..favourability.baseline import INDEPENDENT, INDEPENDENT_BASIS, RankMean, independent_rank_mean
from ..favourability.evidence import EvidenceSpec, membership_map
from ..favourability.expected import expected_deposits
from ..favourability.knowledge import role_weight
from ..favourability.models import LABELS as _LABELS
from ..favourability.overlay import Surface, favourability_surface
from ..judge.target_evidence import look_at_target, measure_targets
from ..judge.target_table import PROSPECT_COLUMNS, empty_targets, polygons_of, targets_note
from ..labels import humanize, the
from ..progress import SILENT, Progress
from ..reason.contract import FAILED, INSUFFICIENT
from ..reason.evidence_choice import EvidenceChoice
from .core_target import other_outlines, target_outline
from .target_sizes import target_sizes
from .work_list import rank_targets

if TYPE_CHECKING:
    from ..methods import CalibrationChoice, CalibrationMethod

EQUAL_WEIGHT = INDEPENDENT
KNOWLEDGE = "knowledge-driven surface"
Judge = Callable[[list, list], list]
"""The verifier's judgement of measured targets: (measured targets, notes to add to) -> one judgement each."""
KNOWLEDGE_METHOD = "rank"
"""How the agent's evidence specs are combined: the weighted mean of ranks (overlay.py; docs/engine.md says why)."""


@dataclass
class ProspectivityMap:
    """What the run maps: the surface the user gets (the full fit when calibrated, else the
    knowledge-driven one; None when no layer can be evidence), the knowledge-driven surface, the
    out-of-fold surface (None unless calibrated), the weights table, the layers left out of the
    surface and the layers used nowhere (each with its reason), the targets and the prospects inside them, the
    work list's sizes and what it leaves in the surface (`work_list`), validation and notes."""

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
    judgements: list = field(default_factory=list)
    prospects: gpd.GeoDataFrame | None = None
    work_list: dict = field(default_factory=dict)
    fitted: dict = field(default_factory=dict)
    """The calibrated surface's models when it is the surface the user gets: {"model": the full fit, "spread": its
    fold models (a single model's uncertainty) or None}; written beside the record, to make it at full resolution."""

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
                "knowledge_method": ({"method": self.knowledge.method, "gamma": self.knowledge.gamma}
                                     if self.knowledge else {}),
                "targets": _records(self.targets), "prospects": _records(self.prospects),
                "work_list": self.work_list, "judgements": self.judgements}


def _records(frame) -> list:
    """A layer's attribute rows (no geometry) for the record; [] for none."""
    return [] if frame is None else frame.drop(columns="geometry").to_dict("records")


def map_prospectivity(ws, graph, plan: list, evidence: EvidenceChoice, judge: Judge, *, draw_targets: bool,
                      area_share: float, calibrate: CalibrationChoice = "", deposit_xy: list | None = None,
                      core: dict | None = None, progress: Progress = SILENT, answer: str = "",
                      max_target_km2: float | None = None, min_target_km2: float | None = None,
                      max_targets: int | None = None,
                      cross_validation: dict | None = None) -> ProspectivityMap:
    """The run's favourability surface and targets (see the module docstring).

    `ws`: the run's workspace; `plan`: the plan steps run (a layer in no step and not in the surface is listed as
    unused); `evidence`: the evidence chosen in the reason stage (`evidence_choice.chosen_evidence`); `judge`: the
    verifier's judgement of measured targets (measured targets, notes) -> judgements (`target_table.judge_targets`
    with the run's engine): the map stage asks no model itself;
    `draw_targets`: False when the answer (`answer`) is Insufficient evidence, rules deposits out, or was not
    reached: the surface is still made, and the note says which;
    `max_target_km2`, `min_target_km2`, `max_targets`: the largest and smallest target and the work list's length
    (None: the deposit model's footprints and the default, `target_sizes`);
    `deposit_xy`: the known deposits; those off the surface's data cells are left out of its validation, and said;
    `core`: the core the answer rests on (`Verdict.core`), made the first target, and the further systems it
    names (`others`), ranked next (`core_target`);
    colour renderings enter by the zones the chain marked on them, whoever chose the evidence;
    `cross_validation`: the calibration's block_size_m, folds and seed (calibrate's defaults where absent)."""
    specs, left_out, notes = list(evidence.specs), list(evidence.left_out), list(evidence.notes)
    source = evidence.source
    rendered, extra = zone_specs(ws, left_out)
    specs = specs + rendered
    left_out = [row for row in left_out if row["layer"] not in extra]
    unused = _unused(ws, plan, specs, left_out)
    crs = ws.raster_set.crs
    empty = empty_targets(crs)
    if not specs:
        notes.append("No favourability surface: no layer can be turned into evidence (the weights table says why "
                     "for each).")
        return ProspectivityMap(None, None, None, [], left_out, unused, empty, source, notes=notes)
    progress.check()
    maps = _memberships(ws, specs, extra, progress)
    knowledge = favourability_surface(ws.raster_set, specs, maps=maps,
                                      **({"method": KNOWLEDGE_METHOD} | evidence.combination))
    weights = knowledge.table()
    baseline = (independent_rank_mean(ws.raster_set, ws.layers, ws.deposit_model, ws.favourable_units)
                if deposit_xy else RankMean(None))
    made = (calibrated_surfaces(ws.raster_set, ws.layers, knowledge, specs, weights, baseline, deposit_xy, calibrate,
                                progress, cross_validation, notes)
            if calibrate else MapSurfaces(knowledge, weights=weights))
    if deposit_xy:
        notes.extend(_deposit_notes(knowledge, maps, deposit_xy))
    if draw_targets:
        targets, prospects, judgements, work_list = _drawn_targets(
            ws, judge, graph, made, knowledge, maps, specs, area_share=area_share, core=core, notes=notes,
            deposit_xy=deposit_xy, progress=progress, min_km2=min_target_km2, max_km2=max_target_km2,
            count=max_targets)
    else:
        targets, prospects, judgements, work_list = empty, empty_targets(crs, PROSPECT_COLUMNS), [], {}
        notes.append(_no_targets_note(answer))
    result = ProspectivityMap(made.surface, knowledge, made.cv, made.weights, left_out, unused, targets, source,
                              made.section, notes=notes, uncertainty=made.uncertainty, judgements=judgements,
                              prospects=prospects, work_list=work_list, fitted=made.fitted)
    if deposit_xy:
        result.validation = validation(result, deposit_xy, baseline)
    return result


@dataclass(frozen=True)
class MapSurfaces:
    """The map's surfaces: the one targets are drawn from, the out-of-fold one and its uncertainty (None unless
    calibrated), the weights table, the calibration's record section and the models written beside the record ({}
    unless calibrated; the models only when its surface is kept), and the calibration's fit (None unless calibrated)."""

    surface: Surface
    cv: Surface | None = None
    uncertainty: Surface | None = None
    weights: list[dict] = field(default_factory=list)
    section: dict = field(default_factory=dict)
    fitted: dict = field(default_factory=dict)
    fit: Any = None


def _unused(ws, plan: list, specs: list, left_out: list[dict]) -> list[dict]:
    """The layers in no plan step and not in the surface, each with its reason."""
    in_steps = {name for step in plan for name in step.layers}
    in_surface = {spec.layer for spec in specs}
    reasons = {row["layer"]: row["reason"] for row in left_out}
    return [{"layer": info.name, "reason": reasons.get(info.name, "The planner gave it neither a step nor a "
                                                                  "weight in the surface.")}
            for info in ws.layers if info.name not in in_steps and info.name not in in_surface]


def _memberships(ws, specs: list, extra: dict, progress: Progress) -> dict:
    """Each spec's membership map, made once: the knowledge-driven surface and a calibration both combine them."""
    maps = {}
    for spec in specs:
        progress.check()
        maps[spec.layer] = membership_map(ws.raster_set, spec, extra)
    return maps


def calibrated_surfaces(raster_set, layers: list, knowledge: Surface, specs: list, weights: list[dict],
                        baseline: RankMean, deposit_xy: list | None, method: CalibrationMethod, progress: Progress,
                        cross_validation: dict | None, notes: list) -> MapSurfaces:
    """The surfaces of `method` fitted on the known deposits over `raster_set`'s `layers` (LayerInfo; `calibrated`),
    its figures merged into `weights`; the full fit is the surface targets are drawn from unless it is refused (it
    does not beat the knowledge-driven surface and the baseline out of fold), which `notes` says."""
    if not deposit_xy or len(deposit_xy) < 2:
        raise LodestarError("Calibration needs known deposits: give a deposits layer (DEPOSITS, or the case's "
                            "deposits) with at least 2 points inside the analysed area, or turn calibration off.")
    progress.log("Fitting the prospectivity models on the known deposits (spatial block cross-validation)...")
    fit, section = calibrated(raster_set, layers, baseline.values, knowledge, deposit_xy, method, progress,
                              cross_validation)
    if section["why"]:  # a refusal is one of the run's notes, logged with them
        progress.log(section["why"])
    label = f"calibrated ({fit.method}, full fit)"
    fitted_surface = Surface(fit.full, knowledge.grid, knowledge.crs, list(specs), label)
    cv = Surface(fit.cv, knowledge.grid, knowledge.crs, list(specs), f"calibrated ({fit.method}, out of fold)")
    uncertainty = Surface(fit.uncertainty, knowledge.grid, knowledge.crs, list(specs),
                          f"uncertainty: {fit.uncertainty_label}")
    weights = merged_weights(weights, fit.table, layers)
    if section["refused"]:
        notes.append(section["refused"])
        return MapSurfaces(knowledge, cv, uncertainty, weights, section, {}, fit)
    models = {"model": fit.model, "spread": fit.spread}
    return MapSurfaces(fitted_surface, cv, uncertainty, weights, section, models, fit)


def _drawn_targets(ws, judge_measured: Judge, graph, made: MapSurfaces, knowledge: Surface, maps: dict, specs: list, *,
                   area_share: float, core: dict | None, notes: list, deposit_xy: list | None, progress: Progress,
                   min_km2: float | None, max_km2: float | None,
                   count: int | None) -> tuple[gpd.GeoDataFrame, gpd.GeoDataFrame, list, dict]:
    """(targets, prospects, judgements, work list) drawn from the top `area_share` of the surface, sized for the
    deposit model, the core and the further systems it names first, the best judged by the chain; `notes` says what
    was drawn."""
    surface, fit, uncertainty = made.surface, made.fit, made.uncertainty
    progress.check()
    analysed = float(surface.values.count()) * surface.grid.pixel_area
    sizes = target_sizes(ws.deposit_model, surface.grid.pixel_area, area_share * analysed,
                         min_km2=min_km2, max_km2=max_km2, count=count)
    largest = sizes.max_km2 * 1e6 if sizes.max_km2 else None
    outline = target_outline(core, analysed, area_share, notes, ws.zones, largest)
    others = other_outlines(core, outline, analysed, area_share, notes, largest)
    calibrated_surface = surface is not knowledge
    contributions = {spec.layer: (spec.weight, maps[spec.layer]) for spec in specs if spec.weight > 0}

    def judge(labels, best):
        measured = measure_targets(ws, maps, specs, labels, best)
        outlines = polygons_of(labels, surface.grid)
        for target, label in zip(measured, best):
            progress.check()
            target["view"] = look_at_target(ws, maps, labels, label, target)
            target["outline"] = outlines[label].wkt  # for a verifier that weighs the place itself
        return judge_measured(measured, notes)

    work = rank_targets(
        surface.values, surface.grid, ws.raster_set.crs, area_share, sizes=sizes, nodes=graph.nodes, core=outline,
        core_label=humanize((core or {}).get("label", "")), others=others, probability=calibrated_surface,
        expected=expected_deposits(fit.full, fit.cv, surface.grid, deposit_xy) if calibrated_surface else None,
        deposit_xy=deposit_xy, uncertainty=uncertainty.values if calibrated_surface and uncertainty else None,
        contributions=contributions, judge=judge)
    notes.append(targets_note(work, analysed, area_share, calibrated_surface))
    work_list = {"count": sizes.count, "min_km2": sizes.min_km2, "max_km2": sizes.max_km2,
                 "prospect_km2": sizes.prospect_km2, "specks": work.delineation.specks,
                 "merged": work.delineation.merged, "left": work.left}
    return work.targets, work.prospects, work.judgements, work_list


def _deposit_notes(knowledge: Surface, maps: dict, deposit_xy: list) -> list:
    """The known deposits off the surface's data cells, then the layers weighed up that rank them low."""
    left_out_note = left_out_deposits(deposit_xy, knowledge.grid, ~np.ma.getmaskarray(knowledge.values))
    return ([left_out_note] if left_out_note else []) + anti_correlated(knowledge, maps, deposit_xy)


def _no_targets_note(answer: str) -> str:
    """Why an answer draws no target (`answer`: the run's, '' when none was reached)."""
    why = ("no answer was reached" if answer in ("", FAILED) else "the evidence is insufficient to answer"
           if answer == INSUFFICIENT else "the answer rules the deposit out")
    return (f"No targets: {why}; the favourability surface is still written (its top cells are where it is "
            "most favourable, not targets).")


def zone_specs(ws, left_out: list) -> tuple[list, dict]:
    """Evidence specs for the colour renderings left out of the surface on which the executor marked
    zones, and their zones' geometries (`extra` of membership_map): a rendering's colours cannot be
    scaled into values, but the zones the chain found on it can enter as nearness to them (fuzzy small
    of the distance in metres, midpoint two pixels, so the zones themselves score about 1)."""
    zones = ws.zones
    left = {row["layer"] for row in left_out}
    pixel = max(abs(v) for v in ws.raster_set.grid.pixel_size)
    specs, extra = [], {}
    for info in ws.layers:
        if info.kind != "rgb" or info.name not in left or not len(zones):
            continue
        marked = zones[zones["layer"] == info.name]
        weight = role_weight(ws.deposit_model, info.role)
        if not len(marked) or not weight:
            continue
        specs.append(EvidenceSpec(info.name, info.role, info.kind, "distance_m", "small",
                                  {"midpoint": round(2 * pixel, 3), "spread": 3.0}, weight,
                                  f"A colour rendering cannot be scaled into values, so {the(len(marked), 'zone')} "
                                  "the executor marked on it enter the surface as nearness to them."))
        extra[info.name] = marked.geometry
    return specs, extra


def validation(result: ProspectivityMap, deposit_xy: list, baseline: RankMean) -> dict:
    """Surface scores against known deposits, each labelled by whether the deposits shaped it, beside the
    independent equal-weight mean of the layers' ranks (`baseline`: no deposit data, none of the plan's choices; its
    layers in `equal_weight`'s `layers` and `left_out`); `summary`: what the calibration chose and why, then
    why its surface was kept from the targets when it was; `method` its model and `refused` whether its surface was
    kept from the targets; `models`: the other models the calibration compared, out of fold (its comparison's
    rows)."""
    from ..evaluation import evaluate_surface

    def scored(surface: Surface, basis: str) -> dict:
        metrics = evaluate_surface(surface.values, surface.grid, deposit_xy)
        return {"basis": basis, "auc": metrics["auc"], "capture": {f"{k:g}": v for k, v in metrics["capture"].items()},
                "deposits": metrics["inside"], "curve": metrics["curve"]}

    knowledge = result.knowledge
    assert knowledge is not None  # a map without one has no surface to validate
    out: dict = {"knowledge": scored(knowledge, "knowledge-driven: no deposit data used")}
    if baseline.values is not None:
        out["equal_weight"] = dict(scored(Surface(baseline.values, knowledge.grid, knowledge.crs),
                                          f"{EQUAL_WEIGHT} ({INDEPENDENT_BASIS}): the baseline to beat"),
                                   layers=baseline.used, left_out=baseline.left_out)
    if result.calibration:
        out["summary"] = " ".join(text for text in (result.calibration.get("why", ""),
                                                    result.calibration.get("refused")) if text)
        out["method"] = result.calibration.get("method")
        out["refused"] = bool(result.calibration.get("refused"))
        chosen = _LABELS.get(out["method"], "")
        out["models"] = [{"name": row["surface"], "basis": row["basis"], "auc": row["auc"], "capture": row["capture"],
                          "deposits": row["deposits"]} for row in result.calibration.get("comparison") or []
                         if row["basis"] != "no deposit data" and not row["surface"].startswith(chosen)]
    if result.cv is not None:
        out["cv"] = scored(result.cv, "cross-validated: each spatial block predicted by a model fitted without "
                                      "its deposits")
        if result.surface is not None and result.surface is not knowledge:
            out["fitted"] = scored(result.surface, "fitted on these deposits: not a skill figure")
    return out


def calibrated(raster_set, layers: list, equal_weight: np.ma.MaskedArray | None, knowledge: Surface,
               deposit_xy: list, method: CalibrationMethod, progress: Progress = SILENT,
               cross_validation: dict | None = None):
    """(the fit, the record section) of `method` on the measured evidence of `raster_set`'s `layers` (LayerInfo),
    beside the knowledge-driven surface and the independent equal-weight mean of the layers' ranks (`equal_weight`,
    baseline.py; None when no layer enters it) scored on the same cells. The section's `refused` says why the fitted
    surface is not the one targets are drawn from (out of fold, it does not beat the better of the two surfaces that
    used no deposit data: a fit worse than what the geologist has without deposits is not a fit to map with), else
    ''. `cross_validation`: calibrate's block_size_m, folds and seed."""
    from ..favourability.calibration import CHOICES, calibrate
    from ..favourability.measured import measured_evidence

    if method not in CHOICES:  # a replayed record's may be anything
        raise LodestarError(f"Unknown calibration method {method!r}; use one of {', '.join(CHOICES)}.")
    measured, not_measured = measured_evidence(raster_set, layers)
    baselines = {KNOWLEDGE: knowledge.values, **({EQUAL_WEIGHT: equal_weight} if equal_weight is not None else {})}
    fit = calibrate(measured, raster_set.grid, deposit_xy, method=method, baselines=baselines, progress=progress,
                    **(cross_validation or {}))
    mine = next(row for row in fit.comparison if row["basis"] != "no deposit data"
                and row["surface"].startswith(_LABELS[fit.method]))
    plain = [row for row in fit.comparison if row["surface"] in baselines and row["auc"] is not None]
    best = max(plain, key=lambda row: row["auc"], default=None)
    refused = ""
    if mine["auc"] is not None and best is not None and mine["auc"] <= best["auc"]:
        refused = (f"The calibrated surface ({_LABELS[fit.method]}) was not used for the targets: its out-of-fold AUC "
                   f"{mine['auc']:.3f} does not beat the {best['surface']} ({best['auc']:.3f}), which used no "
                   "deposit data; the targets come from the knowledge-driven surface.")
    section = {"method": fit.method, "asked": method,
               "basis": "fitted on known deposits; the cross-validated surface is the skill figure",
               "why": fit.why, "refused": refused, "folds": fit.folds.summary(), "log": list(fit.log),
               "independence": fit.independence, "comparison": fit.comparison,
               "uncertainty": fit.uncertainty_label, "out_of_fold": fit.out_of_fold,
               "not_measured": not_measured,
               "responses": {row["layer"]: row.get("response") for row in fit.table},
               "classes": {row["layer"]: row["classes"] for row in fit.table if row.get("classes")},
               "wofe": wofe_rows(fit.model)}
    return fit, section


WOFE_FIELDS = ("layer", "pattern", "area_share", "deposits_in_pattern", "w_plus", "s_w_plus", "w_minus", "s_w_minus",
               "contrast", "s_contrast", "studentised_contrast")
"""What the weights-of-evidence table shows of each layer (ArcSDM's columns)."""


def wofe_rows(model) -> list:
    """The weights-of-evidence table of a calibration's model: its own rows when it is weights of evidence, its
    weights-of-evidence member's in an ensemble; [] when neither (its layer's classes stay in `classes`)."""
    members = [model] + list(getattr(model, "members", None) or [])
    wofe = next((m for m in members if getattr(m, "method", "") == "wofe"), None)
    return [{k: row[k] for k in WOFE_FIELDS if k in row} for row in wofe.rows()] if wofe is not None else []


def merged_weights(weights: list, fitted: list, layers: list) -> list:
    """The knowledge table's rows with the fit's figures for the same layer, then the rows of layers only the fit
    used (measured evidence the knowledge-driven surface left out); response curves and unit classes stay in the
    record's calibration section."""
    shown = [{k: v for k, v in row.items() if k not in ("response", "classes")} for row in fitted]
    by_layer = {row["layer"]: row for row in shown}
    merged = [dict(row, **{k: v for k, v in by_layer.get(row["layer"], {}).items() if k != "layer"})
              for row in weights]
    known = {row["layer"] for row in weights}
    roles = {info.name: info.role for info in layers}
    for row in shown:
        if row["layer"] in known:
            continue
        source = row.pop("derived_from", "")
        why = (f"Derived from {source} for the fitted model (derived evidence: fault density, distance to unit "
               "contacts); not in the knowledge-driven surface." if source else
               "Not in the knowledge-driven surface; the fitted model uses its measured values.")
        merged.append(dict({"layer": row["layer"], "role": roles.get(source or row["layer"], ""),
                            "transformation": "derived values" if source else "measured values", "why": why},
                           **{k: v for k, v in row.items() if k != "layer"}))
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
                         f"{the(metrics['inside'], 'known deposit')} below the average cell here (AUC "
                         f"{metrics['auc']:.3f}): check it before trusting the knowledge-driven surface.")
    return notes
