"""Re-run with this plan: a finished run's surface and targets re-made with an edited evidence plan, without the chain.

The run's record gives the inputs (checked against their checksums), the target area share and largest target, the
known deposits and the deposit model; the run's folder gives the zones (the evidence of colour renderings) and the
spatial graph's nodes (zones counted per target). The plan's membership maps are combined as it says
(`favourability_surface`). A calibrated run keeps its calibration: the run's method is fitted again as the run
fitted it (on the layers' measured evidence, with the same folds and seed), now compared out of fold with the
edited plan's knowledge-driven surface, and used unless it does not beat it (`calibrated_surfaces`). The targets
are drawn from the surface so chosen (`rank_targets`), and the surfaces validated beside the equal-weight mean of
the layers' ranks and the agent's plan's figures of the run (`validation`). The chain's judgement of each target is
not re-made (no model call). Everything is written to a new folder, as one set: favourability.tif (and, calibrated,
favourability_cv.tif and uncertainty.tif), weights.csv, prospectivity.gpkg, plan.json and replan.json (the record:
the run re-planned and its checksum, the plan, the figures, the calibration, the outputs' checksums). The same run
and plan give the same bytes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import geopandas as gpd
import numpy as np

from ..errors import LodestarError
from ..evaluation import deposit_coordinates
from ..favourability.baseline import RankMean, independent_rank_mean
from ..favourability.evidence import membership_map
from ..favourability.expected import expected_deposits
from ..favourability.outputs import write_surface, write_weights_csv
from ..favourability.overlay import Surface, favourability_surface
from ..favourability.plan_file import EvidencePlan, plan_text
from ..files import OutputSet, write_text_atomic
from ..judge.target_table import targets_note
from ..map.prospectivity import MapSurfaces, ProspectivityMap, calibrated_surfaces, validation
from ..map.target_sizes import target_sizes
from ..map.work_list import rank_targets
from ..progress import SILENT, Progress
from ..raster_io import RasterSet
from ..reason.knowledge import model_by_id
from ..reason.toolbox import jsonable
from ..reason.workspace import describe_layers
from ..report.report_prospectivity import method_label
from ..request import record as records
from ..vector_io import read_vector, write_vector

FORMAT = "lodestar-replan/1"
OUTPUT_FILES = {"favourability": "favourability.tif", "favourability_cv": "favourability_cv.tif",
                "uncertainty": "uncertainty.tif", "weights": "weights.csv", "prospectivity": "prospectivity.gpkg",
                "plan": "plan.json", "record": "replan.json"}


@dataclass
class Replanned:
    """A re-planned surface: the surface its targets come from (a calibrated run's fit, unless refused), its
    targets, its validation beside the run's (`agent`: the recorded figures of the agent's plan, {} without
    deposits), notes, and the files written (name -> path)."""

    surface: Surface
    targets: gpd.GeoDataFrame
    validation: dict = field(default_factory=dict)
    agent: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    outputs: dict = field(default_factory=dict)

    @property
    def auc(self) -> float | None:
        return (self.validation.get("knowledge") or {}).get("auc")

    @property
    def agent_auc(self) -> float | None:
        return self.agent.get("auc")


def replan(record_path, plan: EvidencePlan, output_dir, progress: Progress = SILENT) -> Replanned:
    """Re-make the surface and targets of the run whose record is `record_path` with `plan`, into `output_dir`
    (a new folder, or an empty one); see the module docstring."""
    record_path = Path(record_path)
    record = records.read_record(record_path)
    out = Path(output_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise LodestarError(f"{out} already holds files; re-planned outputs go to a new folder (give another name).")
    if out.resolve() == record_path.parent.resolve():
        raise LodestarError("A re-planned run is written beside its run, not over it: give a new folder.")
    layers = records.layers_from_record(record)
    raster_set = RasterSet(layers, progress=progress)
    plan.check_layers([spec.name for spec in layers])
    extra = rendering_zones(record, record_path.parent, plan, raster_set)
    maps = {}
    for spec in plan.specs:
        progress.check()
        maps[spec.layer] = membership_map(raster_set, spec, extra)
    knowledge = favourability_surface(raster_set, plan.specs, plan.method, plan.gamma, extra, maps)
    parameters = record["parameters"]
    mapping = parameters.get("favourability") or {}
    deposit_xy = _deposits(parameters, raster_set)
    notes = [f"Re-planned from {record_path} with the {plan.by}'s evidence plan ({plan.combination_text}); the "
             "chain was not re-run, so the targets are not judged by it."]
    infos = describe_layers(raster_set)
    baseline = (independent_rank_mean(raster_set, infos, _deposit_model(record), mapping.get("favourable_units") or {})
                if deposit_xy else RankMean(None))
    made = _surfaces(raster_set, infos, knowledge, plan, mapping, baseline, deposit_xy, notes, progress)
    targets = _targets(made, knowledge, record, record_path.parent, mapping, plan, maps, deposit_xy, notes, progress)
    result = ProspectivityMap(made.surface, knowledge, made.cv, made.weights, [], [], targets, plan.by, made.section,
                              notes=notes, uncertainty=made.uncertainty)
    figures = validation(result, deposit_xy, baseline) if deposit_xy else {}
    agent = ((record.get("favourability") or {}).get("validation") or {}).get("knowledge") or {}
    replanned = Replanned(made.surface, targets, figures, {k: agent[k] for k in ("auc", "capture", "deposits")
                                                           if k in agent}, notes)
    replanned.outputs = _write(replanned, made, plan, record, record_path, out, raster_set)
    return replanned


def _surfaces(raster_set: RasterSet, infos: list, knowledge: Surface, plan: EvidencePlan, mapping: dict,
              baseline: RankMean, deposit_xy: list, notes: list, progress: Progress) -> MapSurfaces:
    """The surfaces the targets come from: for a calibrated run its calibration fitted again, as the run fitted it
    (on the layers' measured evidence, which the plan does not change), now held against the edited plan's
    knowledge-driven surface, which it must beat out of fold to be used; else the plan's knowledge-driven surface."""
    method = mapping.get("calibrate")  # the record's, checked by `calibrated`
    if not method:
        return MapSurfaces(knowledge, weights=knowledge.table())
    return calibrated_surfaces(raster_set, infos, knowledge, plan.specs, knowledge.table(), baseline, deposit_xy,
                               method, progress, mapping.get("cross_validation") or {}, notes)


def rendering_zones(record: dict, folder: Path, plan: EvidencePlan, raster_set: RasterSet) -> dict:
    """{layer: zone geometries} of the plan's colour renderings (their evidence is nearness to the run's zones)."""
    kinds = {entry["name"]: entry.get("kind") for entry in record.get("inputs", [])}
    wanted = [spec.layer for spec in plan.specs if kinds.get(spec.layer) == "rgb"]
    if not wanted:
        return {}
    entry = (record.get("outputs") or {}).get("zones")
    path = folder / entry["file"] if entry else None
    if path is None or not path.is_file():
        raise LodestarError(f"The plan weighs colour renderings ({', '.join(wanted)}) by the zones the run marked, "
                            f"and the run's zones file is not in {folder}.")
    zones = read_vector(path, crs=raster_set.crs)
    return {name: zones[zones["layer"] == name].geometry for name in wanted}


def _deposits(parameters: dict, raster_set: RasterSet) -> list:
    deposits = parameters.get("deposits")
    if not deposits:
        return []
    xy = deposit_coordinates(Path(deposits), raster_set.crs, [])
    return list(map(tuple, np.asarray(xy).tolist()))


def _deposit_model(record: dict) -> dict:
    """The deposit model the run followed ({} for none)."""
    knowledge = record.get("knowledge") or []
    return (knowledge[0].get("model") or model_by_id(knowledge[0]["id"])) if knowledge else {}


def _targets(made: MapSurfaces, knowledge: Surface, record: dict, folder: Path, mapping: dict, plan: EvidencePlan,
             maps: dict, deposit_xy: list, notes: list, progress: Progress):
    """The targets of the surface `made` gives, ranked as the run ranks them (a calibrated surface by its expected
    deposits per km2, with its uncertainty)."""
    progress.check()
    surface, fit = made.surface, made.fit
    calibrated = surface is not knowledge
    model = _deposit_model(record)
    area_share = float(mapping.get("area_share", 0.10))
    entry = (record.get("outputs") or {}).get("nodes")
    nodes = read_vector(folder / entry["file"]) if entry and (folder / entry["file"]).is_file() else None
    analysed = float(surface.values.count()) * surface.grid.pixel_area
    sizes = target_sizes(model, surface.grid.pixel_area, area_share * analysed,
                         min_km2=mapping.get("min_target_km2"), max_km2=mapping.get("max_target_km2"),
                         count=mapping.get("max_targets"))
    contributions = {spec.layer: (spec.weight, maps[spec.layer]) for spec in plan.specs if spec.weight > 0}
    work = rank_targets(surface.values, surface.grid, surface.crs, area_share, sizes=sizes, nodes=nodes,
                        deposit_xy=deposit_xy, contributions=contributions, probability=calibrated,
                        expected=expected_deposits(fit.full, fit.cv, surface.grid, deposit_xy) if calibrated else None,
                        uncertainty=made.uncertainty.values if calibrated and made.uncertainty else None)
    notes.append(targets_note(work, analysed, area_share, calibrated))
    return work.targets


def _write(replanned: Replanned, made: MapSurfaces, plan: EvidencePlan, record: dict, record_path: Path, out: Path,
           raster_set: RasterSet) -> dict:
    check = raster_set.progress.check
    written = {}
    with OutputSet() as staged:
        def at(name: str) -> Path:
            check()
            return staged.path(out / OUTPUT_FILES[name])

        calibrated = made.fit is not None and not made.section.get("refused")
        made_by = (f"calibrated: {method_label({'method': made.surface.method})}" if calibrated
                   else plan.combination_text)
        written["favourability"] = write_surface(replanned.surface, at("favourability"),
                                                 description=f"favourability (0-1), {made_by}")
        for name, extra_surface in (("favourability_cv", made.cv), ("uncertainty", made.uncertainty)):
            if extra_surface is not None:
                written[name] = write_surface(extra_surface, at(name), description=extra_surface.method)
        written["weights"] = write_weights_csv(made.weights, at("weights"))
        written["prospectivity"] = write_vector(replanned.targets, at("prospectivity"), stamp=record["created_utc"])
        written["plan"] = write_text_atomic(at("plan"), plan_text(plan))
        section = {"format": FORMAT, "created_utc": record["created_utc"],
                   "replanned": {"record": str(record_path.resolve()), "sha256": records.sha256_file(record_path)},
                   "plan": plan.to_dict(), "validation": replanned.validation, "agent_validation": replanned.agent,
                   **({"calibration": made.section} if made.section else {}),
                   "targets": [{k: v for k, v in row.items() if k != "geometry"}
                               for row in replanned.targets.drop(columns="geometry").to_dict("records")],
                   "notes": list(replanned.notes),
                   "outputs": {name: {"file": path.name, "sha256": records.sha256_file(path)}
                               for name, path in written.items()}}
        written["record"] = records.write_record(jsonable(section), at("record"))
    return {name: out / OUTPUT_FILES[name] for name in written}
