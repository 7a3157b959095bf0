"""Alteration indices of a recognised multispectral scene, by kind (the deposit model asks for kinds: AlOH, ferric
iron, silica, carbonate), with clouds, water and vegetation masked and the masked share measured.

Each kind is one of the sensor's band-ratio indices (`alteration_indices` presets); a kind the sensor cannot show
(silica needs ASTER's thermal bands) is reported as such, not faked from other bands."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from rasterio.windows import Window

from ..errors import LodestarError
from ..progress import SILENT, Progress
from ..raster_blocks import block_windows
from ..raster_io import RasterReader
from .alteration_indices import formula_bands, write_index
from .scene_masks import CLASSES, mask_sources, window_masks
from .scene_products import Scene, recognise

KINDS = ("aloh", "ferric_iron", "silica", "carbonate")
KIND_INDEX = {
    "aster": {"aloh": "aloh", "ferric_iron": "ferric_iron", "silica": "silica", "carbonate": "mgoh"},
    "landsat_oli": {"aloh": "clay", "ferric_iron": "iron_oxide"},
    "sentinel2": {"aloh": "clay", "ferric_iron": "iron_oxide"},
}
"""Which index of each sensor shows each kind (ASTER's carbonate / chlorite is its MgOH 2.33 um index)."""
BLOCK_ROWS = 512


@dataclass
class SceneIndex:
    """One index raster written from a scene."""

    kind: str
    name: str
    role: str
    formula: str
    path: Path
    bands: dict  # band label -> 1-based band of the scene


@dataclass
class SceneIndices:
    """What a scene gave: its recognition, the index rasters, the kinds it cannot show, the masked share."""

    scene: Scene
    indices: list = field(default_factory=list)  # SceneIndex
    unavailable: list = field(default_factory=list)  # kinds the sensor (or the bands present) cannot show
    masked: dict = field(default_factory=dict)  # class -> share of the scene's data pixels; "total"
    sources: dict = field(default_factory=dict)  # class -> what says it (product band, index and threshold)


def stem(name: str) -> str:
    """A file-name-safe stem for a layer name."""
    return re.sub(r"[^\w.-]+", "_", name).strip("._") or "scene"


def scene_indices(path, out_dir, kinds=KINDS, sensor: str = "", name: str = "", root=None,
                  progress: Progress = SILENT) -> SceneIndices:
    """Write the indices of `kinds` a scene can show to `out_dir` as `<name>_<index>.tif`, masked pixels nodata."""
    reader = RasterReader(path, root)
    scene = recognise(reader, sensor)
    if scene is None:
        raise LodestarError(f"{reader.path.name} is not recognised as a multispectral scene: its bands carry neither "
                            "product band names nor wavelengths. Choose its sensor (aster, landsat_oli, sentinel2).")
    wanted = [k for k in kinds if k in KINDS]
    by_name = {index.name: index for index in scene.preset.indices}
    chosen, unavailable = [], []
    for kind in wanted:
        index = by_name.get(KIND_INDEX[scene.preset.name].get(kind, ""))
        if index is None or any(b not in scene.bands for b in formula_bands(index.formula)):
            unavailable.append(kind)
        else:
            chosen.append((kind, index))
    result = SceneIndices(scene, unavailable=unavailable, sources=mask_sources(scene))
    result.masked = _masked_shares(reader, scene, progress)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    label = stem(name or reader.path.stem)
    for number, (kind, index) in enumerate(chosen):
        target = out_dir / f"{label}_{index.name}.tif"
        used = {b: scene.bands[b] for b in formula_bands(index.formula)}
        write_index(reader, index, used, target, scene.preset, scene.how, BLOCK_ROWS,
                    progress.scaled(100 * number / len(chosen), 100 * (number + 1) / len(chosen)),
                    scaling=scene.scaling, masked=lambda window: _masked(reader, scene, window),
                    tags={"LODESTAR_KIND": kind, "LODESTAR_MASKED": _masked_text(result.masked)})
        result.indices.append(SceneIndex(kind, f"{label}_{index.name}", index.role, index.formula, target, used))
    return result


def _masked(reader: RasterReader, scene: Scene, window: Window) -> np.ndarray:
    masks, nodata = window_masks(reader, scene, window)
    return nodata | np.any([masks[name] for name in CLASSES], axis=0)


def _masked_shares(reader: RasterReader, scene: Scene, progress: Progress) -> dict:
    """Share of the scene's data pixels masked as each class, and in all."""
    counts = dict.fromkeys(CLASSES, 0)
    held = 0
    grid = reader.grid
    labels = sorted(scene.bands)
    for window in block_windows((grid.height, grid.width), BLOCK_ROWS, strips=True):
        progress.check()
        data = reader.read([scene.bands[b] for b in labels], window=window)
        masks, nodata = window_masks(reader, scene, window)
        valid = ~np.ma.getmaskarray(data).all(axis=0) & ~nodata
        held += int(valid.sum())
        for name in CLASSES:
            counts[name] += int((masks[name] & valid).sum())
    shares = {name: round(counts[name] / held, 4) if held else 0.0 for name in CLASSES}
    shares["total"] = round(sum(counts.values()) / held, 4) if held else 0.0
    return shares


def _masked_text(masked: dict) -> str:
    return ", ".join(f"{name} {masked[name]:.1%}" for name in (*CLASSES, "total"))


def masked_sentence(result: SceneIndices) -> str:
    """The masked share in words, with what said so."""
    parts = [f"{name} {result.masked[name]:.1%} ({result.sources[name]})" for name in CLASSES
             if result.sources[name] != "none"]
    said = "; ".join(parts) if parts else "no mask available"
    return f"Masked {result.masked['total']:.1%} of the scene's pixels: {said}."
