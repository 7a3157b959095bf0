"""Raw scenes into the chain: for each sensor's generated scene (tests/scene_testdata.py, 96 x 96), the offline run
on the scene as it comes against the run on the same case given as index rasters (answer, targets, their overlap,
the masked share, seconds), and the index step's speed on a scene tiled to 960 x 960 pixels.

Run: `.venv/bin/python tests/benchmarks/run_all.py scenes` (about half a minute); writes build/bench/scenes.md.
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np
import rasterio

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.files import write_text_atomic
from lodestar.plugin.raster_io import LayerSpec
from lodestar.plugin.request.record import read_record
from lodestar.plugin.tools.scene_indices import scene_indices

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "build" / "bench" / "scenes.md"
QUESTION = "Can porphyry copper deposits be detected here? A. Yes B. No"
TILES = 10


def _run(layers, out):
    started = time.perf_counter()
    result = run_analysis(AnalysisRequest(layers=layers, question=QUESTION, output_dir=out,
                                          choices={"A": "Yes", "B": "No"}))
    return result, time.perf_counter() - started


def _overlap(ours, theirs) -> float:
    a, b = ours.geometry.unary_union if len(ours) else None, theirs.geometry.unary_union if len(theirs) else None
    if a is None or b is None:
        return 0.0
    return a.intersection(b).area / a.union(b).area


def _tiled(scene: Path, target: Path) -> Path:
    with rasterio.open(scene) as ds:
        profile, data = ds.profile, ds.read()
        tags, band_tags = ds.tags(), [ds.tags(i) for i in range(1, ds.count + 1)]
        descriptions, scales, offsets = ds.descriptions, ds.scales, ds.offsets
    profile.update(width=profile["width"] * TILES, height=profile["height"] * TILES, tiled=True, blockxsize=256,
                   blockysize=256)
    with rasterio.open(target, "w", **profile) as ds:
        ds.write(np.tile(data, (1, TILES, TILES)))
        for i, text in enumerate(descriptions, start=1):
            ds.set_band_description(i, text or "")
            ds.update_tags(i, **band_tags[i - 1])
        ds.update_tags(**tags)
        ds.scales, ds.offsets = scales, offsets
    return target


def main() -> str:
    import scene_testdata as st

    rows = ["| sensor | indices from the scene | masked | answer (scene / indices) | targets | target overlap (IoU) "
            "| run s (scene / indices) | index step on 960 x 960 s |", "|---|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for sensor in st.WRITERS:
            scene = st.write_scene(sensor, tmp / sensor)
            ours, seconds = _run([LayerSpec(scene, "other", "scene")], tmp / f"{sensor}-run")
            entry = read_record(ours.outputs["record"])["scenes"][0]
            layers = [LayerSpec(p, role, name) for p, role, name in st.write_index_case(sensor, tmp / f"{sensor}-idx",
                                                                                        "scene")]
            given, given_s = _run(layers, tmp / f"{sensor}-given")
            big = _tiled(scene, tmp / f"{sensor}-big.tif")
            started = time.perf_counter()
            scene_indices(big, tmp / f"{sensor}-big-idx", entry["kinds"], name="big")
            step_s = time.perf_counter() - started
            rows.append(f"| {sensor} | {', '.join(i['name'].removeprefix('scene_') for i in entry['indices'])} "
                        f"| {entry['masked']['total']:.1%} | {ours.answer} / {given.answer} "
                        f"| {len(ours.prospectivity)} / {len(given.prospectivity)} "
                        f"| {_overlap(ours.prospectivity, given.prospectivity):.3f} | {seconds:.2f} / {given_s:.2f} "
                        f"| {step_s:.2f} |")
    text = "# Raw scenes into the chain\n\n" + "\n".join(rows) + "\n"
    OUT.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(OUT, text)
    return text


if __name__ == "__main__":
    print(main())
