"""Raw multispectral scenes into the chain: the index step the engine puts before the model's plan.

A layer is a scene when the user says so (its `sensor` key: 'aster', 'landsat_oli', 'sentinel2') or when a layer of
role "other" carries a sensor's product band names or band wavelengths (`tools/scene_products.py`). Before the planner
is asked, the engine runs the tool `alteration_indices` on each scene for the index kinds the deposit model asks
for (`alteration_indices.kinds` of each model in resources/knowledge/deposit_models.json), clouds, water and
vegetation masked; the index rasters are written to the run folder (`indices/`) and replace the scene among the
layers, with the roles of their indices, so the planner, the chain and the favourability surface use them as they
use loaded index layers. The step is step 0 of the record's plan and chain (deterministic: it needs no model
decision, so every back-end gets it and a replay recomputes it from the recorded scene and compares checksums)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import LodestarError
from ..files import sha256_file
from ..progress import SILENT, Progress
from ..raster_io import LayerSpec, RasterReader, RasterSet, crs_label
from ..reason.contract import ChainNode, Observation, PlanStep
from ..reason.workspace import LayerInfo
from ..tools.alteration_indices import PRESETS
from ..tools.scene_indices import KIND_INDEX, KINDS, masked_sentence, scene_indices
from ..tools.scene_products import recognise

INDEX_FOLDER = "indices"
"""The run folder's subfolder of the index rasters computed from scenes."""
TOOL = "alteration_indices"


@dataclass
class SceneRun:
    """The layers after the index step (scenes replaced by their indices), and what the step did."""

    layers: list
    entries: list = field(default_factory=list)  # one record entry per scene (with its chain node)
    log: list = field(default_factory=list)


def is_scene(spec: LayerSpec) -> bool:
    """Whether a layer is a multispectral scene: its sensor chosen, or a raster of role "other" whose metadata name
    one."""
    if spec.is_vector:
        return False
    if spec.sensor:
        return True
    if spec.role != "other":
        return False
    return recognise(RasterReader(spec.path, spec.root)) is not None


def ranking_roles(layers: list) -> list[str]:
    """The layers' roles for choosing the deposit model, a scene's being the roles of the indices its sensor has
    (what it will show once the model's indices are computed)."""
    roles = []
    for spec in layers:
        if not is_scene(spec):
            roles.append(spec.role)
            continue
        scene = recognise(RasterReader(spec.path, spec.root), spec.sensor)
        if scene is None:
            continue
        by_name = {index.name: index.role for index in scene.preset.indices}
        roles += sorted({by_name[name] for name in KIND_INDEX[scene.preset.name].values()})
    return roles


def derive(layers: list, knowledge: list, out_dir, progress: Progress = SILENT) -> SceneRun:
    """Compute each scene's indices into `out_dir/indices` and return the layers with the scenes replaced."""
    model = knowledge[0] if knowledge else {}
    asked = model.get("alteration_indices") or {}
    kinds = [k for k in asked.get("kinds", []) if k in KINDS] or list(KINDS)
    folder = Path(out_dir) / INDEX_FOLDER
    run = SceneRun([])
    for spec in layers:
        if not is_scene(spec):
            run.layers.append(spec)
            continue
        progress.check()
        result = scene_indices(spec.path, folder, kinds, spec.sensor, spec.name, spec.root, progress)
        names = {spec.name for spec in layers}
        clash = [index.name for index in result.indices if index.name in names]
        if clash:
            raise LodestarError(f"The indices of scene {spec.name} would be named {', '.join(clash)}, as layers given "
                                "already are; rename those layers.")
        run.layers += [LayerSpec(index.path, index.role, index.name, root=folder) for index in result.indices]
        entry = _entry(spec, model, kinds, result, asked.get("source", ""))
        run.entries.append(entry)
        run.log.append(entry["node"]["observation"]["rationale"])
    if not run.layers:
        lacking = "; ".join(f"{e['layer']} ({e['sensor']}) cannot show {', '.join(e['unavailable'])}"
                            for e in run.entries)
        raise LodestarError(f"No index the deposit model asks for ({', '.join(kinds)}) can be computed from the "
                            f"scenes given: {lacking}. Add a scene of a sensor that shows them (silica and carbonate "
                            "need ASTER), or index rasters.")
    return run


def _entry(spec: LayerSpec, model: dict, kinds: list, result, source: str) -> dict:
    scene = result.scene
    title = PRESETS[scene.preset.name].title
    made = ", ".join(f"{index.name} = {index.formula} ({index.kind}, role {index.role})" for index in result.indices)
    lacking = (f" The {title} bands cannot show {', '.join(result.unavailable)}; no index stands in for it."
               if result.unavailable else "")
    wanted = f"the {model['name']} model" if model else "no deposit model (every kind)"
    text = (f"Scene {spec.name} recognised as {title} from its {scene.how}; {scene.scaling_note}. Computed the "
            f"indices {wanted} asks for ({', '.join(kinds)}): {made or 'none'}.{lacking} "
            f"{masked_sentence(result)}")
    step = PlanStep(0, f"Compute the alteration indices the deposit model asks for from the {title} scene",
                    [spec.name], "the raw scene holds the bands the indices are ratios of", TOOL,
                    "band ratios of the sensor's standard alteration indices, clouds, water and vegetation masked",
                    f"one index raster per kind ({', '.join(kinds)}) the sensor can show",
                    {"sensor": scene.preset.name, "kinds": list(kinds)})
    observation = Observation(0, TOOL, [spec.name], text, sub_inference="Yes" if result.indices else "No",
                              attempts=1)
    return {
        "layer": spec.name, "sensor": scene.preset.name, "recognised_from": scene.how, "scaling": scene.scaling_note,
        "bands": dict(scene.bands), "quality_band": scene.mask_band, "quality_kind": scene.mask_kind,
        "model": model.get("id", ""), "kinds": list(kinds), "kinds_source": source,
        "unavailable": list(result.unavailable), "masked": dict(result.masked), "mask_sources": dict(result.sources),
        "indices": [{"kind": i.kind, "name": i.name, "formula": i.formula, "role": i.role, "bands": dict(i.bands),
                     "file": f"{INDEX_FOLDER}/{i.path.name}", "sha256": sha256_file(i.path)} for i in result.indices],
        "node": ChainNode(step, observation).to_dict(),
    }


def index_layers(record: dict, folder) -> dict:
    """Scene name -> LayerSpecs of the index rasters a run computed from it (in the run folder `folder`), from its
    record: what stands for the scene wherever the run's layers are read again."""
    folder = Path(folder)
    return {entry["layer"]: [LayerSpec(folder / index["file"], index["role"], index["name"],
                                       root=folder / INDEX_FOLDER) for index in entry.get("indices", [])]
            for entry in record.get("scenes") or []}


def input_infos(raster_set: RasterSet, infos: list) -> list:
    """LayerInfo for each input of the raster set the user gave: the workspace's, and a scene's own."""
    known = {info.name: info for info in infos}
    out = []
    for spec in raster_set.layers:
        if spec.name in known:
            out.append(known[spec.name])
            continue
        grid = raster_set.readers[spec.name].grid
        out.append(LayerInfo(spec.name, spec.role, "scene", spec.favourable, crs_label(grid.crs),
                             [grid.width, grid.height]))
    return out


def chain_nodes(entries: list | None) -> list[dict]:
    """The index steps' chain nodes (record dicts), in scene order."""
    return [entry["node"] for entry in entries or []]


def replay_differences(recorded: list | None, replayed: list) -> list[str]:
    """Index rasters a replay computed whose checksum differs from the recorded run's."""
    before = {i["name"]: i["sha256"] for entry in recorded or [] for i in entry.get("indices", [])}
    return [i["name"] for entry in replayed for i in entry["indices"] if before.get(i["name"]) != i["sha256"]]
