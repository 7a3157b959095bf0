"""Benchmark: Segment Anything refinement with the real vit_b architecture (random weights, real cost).

A vit_b SAM with random weights is saved as a checkpoint and loaded through `load_sam`, as users load
theirs. On a 1024 x 1024 float32 index raster with eight anomalies, `refine_zones` runs with one zone
(one box per window) and with all eight zones (eight boxes sharing one window). Printed: checkpoint
load time, image-embedding time per window (timed inside the image encoder), mask-decoding time per
zone, and the cost per zone with shared windows against the baseline of one embedding per zone,
measured in the same run. Run: `make bench`, or
`.venv/bin/python tests/benchmarks/run_all.py sam` (`--device cuda` with `python bench_sam.py`).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SIZE = 1024
PIXEL = 10.0
ORIGIN = (400_000.0, 4_500_000.0)
# (row, col, radius in pixels): the anomalies, one zone each
ANOMALIES = ((150, 200, 40), (300, 700, 60), (520, 380, 35), (700, 850, 50),
             (820, 150, 45), (460, 560, 30), (900, 520, 40), (120, 900, 35))


def make_raster(path: Path) -> Path:
    import rasterio
    from rasterio.transform import from_origin

    rng = np.random.default_rng(7)
    rows, cols = np.mgrid[0:SIZE, 0:SIZE].astype("float32")
    data = rng.normal(scale=0.2, size=(SIZE, SIZE)).astype("float32")
    for row, col, radius in ANOMALIES:
        data += 2.0 * np.exp(-((rows - row) ** 2 + (cols - col) ** 2) / (2 * radius ** 2))
    with rasterio.open(path, "w", driver="GTiff", width=SIZE, height=SIZE, count=1, dtype="float32",
                       crs="EPSG:32611", transform=from_origin(ORIGIN[0], ORIGIN[1], PIXEL, PIXEL)) as ds:
        ds.write(data, 1)
    return path


def anomaly_zones(count: int):
    import geopandas as gpd
    from shapely.geometry import box

    geometries, names = [], []
    for i, (row, col, radius) in enumerate(ANOMALIES[:count]):
        x0, x1 = ORIGIN[0] + (col - radius) * PIXEL, ORIGIN[0] + (col + radius) * PIXEL
        y0, y1 = ORIGIN[1] - (row + radius) * PIXEL, ORIGIN[1] - (row - radius) * PIXEL
        geometries.append(box(x0, y0, x1, y1))
        names.append(f"index:{i + 1}")
    return gpd.GeoDataFrame({"zone_id": names, "layer": ["index"] * count}, geometry=geometries, crs="EPSG:32611")


class EncoderTimer:
    """Wall time spent in the image encoder (one call per window embedding)."""

    def __init__(self, encoder, device: str):
        import torch

        self.calls, self.seconds, self._start = 0, 0.0, 0.0
        sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)

        def before(*_):
            sync()
            self._start = time.perf_counter()

        def after(*_):
            sync()
            self.seconds += time.perf_counter() - self._start
            self.calls += 1

        self._handles = [encoder.register_forward_pre_hook(before), encoder.register_forward_hook(after)]

    def remove(self):
        for handle in self._handles:
            handle.remove()


def timed_refinement(zones, raster_set, model):
    from lodestar.models.sam import refine_zones

    timer = EncoderTimer(model.sam.image_encoder, model.device)
    start = time.perf_counter()
    try:
        out = refine_zones(zones, raster_set, model)
    finally:
        timer.remove()
    total = time.perf_counter() - start
    return out, total, timer


def main(argv=None) -> None:
    import torch
    from segment_anything import build_sam_vit_b

    from lodestar.models.sam import load_sam
    from lodestar.plugin.raster_io import LayerSpec, RasterSet

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto")
    args = parser.parse_args(argv if argv is not None else [])
    with tempfile.TemporaryDirectory(prefix="lodestar-bench-sam-") as tmp:
        folder = Path(tmp)
        torch.manual_seed(0)
        start = time.perf_counter()
        torch.save(build_sam_vit_b(checkpoint=None).state_dict(), folder / "random_vit_b.pth")
        built = time.perf_counter() - start
        start = time.perf_counter()
        model = load_sam(folder / "random_vit_b.pth", device=args.device)
        loaded = time.perf_counter() - start
        raster_set = RasterSet([LayerSpec(make_raster(folder / "index.tif"), "hydrothermal_alteration",
                                          name="index")])
        device_name = torch.cuda.get_device_name(0) if model.device.startswith("cuda") else "CPU"
        print(f"torch {torch.__version__}, {torch.get_num_threads()} CPU threads, device {model.device} "
              f"({device_name}); model {model.model_type}, input {model.input_size} px")
        print(f"build + save random vit_b checkpoint: {built:.1f} s; load_sam: {loaded:.1f} s")
        if model.device.startswith("cuda"):
            timed_refinement(anomaly_zones(1), raster_set, model)  # CUDA warm-up (kernels, allocator)
        rows = []
        for count in (1, len(ANOMALIES)):
            out, total, timer = timed_refinement(anomaly_zones(count), raster_set, model)
            embed = timer.seconds / max(1, timer.calls)
            decode = (total - timer.seconds) / count
            rows.append((count, timer.calls, total, embed, decode, total / count, int(out.sam_refined.sum())))
        print(f"{'zones':>5} {'windows':>7} {'total s':>8} {'embed s/window':>14} {'decode+polygons s/zone':>22} "
              f"{'s/zone':>7} {'refined':>7}")
        for count, windows, total, embed, decode, per_zone, refined in rows:
            print(f"{count:>5} {windows:>7} {total:>8.2f} {embed:>14.2f} {decode:>22.3f} {per_zone:>7.2f} "
                  f"{refined:>7}")
        baseline = rows[0][5]  # one embedding per zone
        shared = rows[-1][5]
        print(f"per-zone cost with {rows[-1][0]} boxes sharing one window: {shared:.2f} s vs {baseline:.2f} s with "
              f"one window per zone (x{baseline / shared:.1f} faster)")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import conftest  # noqa: F401  (puts the checkout on sys.path as the `lodestar` package)

    main(sys.argv[1:])
