"""Dask: a 40,000 x 40,000 favourability surface block by block under a 2 GB memory ceiling, and lodestar:analyze_cases'
batch on a local cluster of 2 worker processes against the serial run.

Surface: three layers over 1,000 km x 1,000 km at 25 m (EPSG:32612), made here once (build/bench/dask/, kept between
runs): an alteration index (float32, smooth anomalies and noise), a unit map (uint8, 6 units) and fault lines
(GeoJSON, a network about every 10 km); evidence: percentile rank -> fuzzy large, favourable units, distance to
faults -> fuzzy small, weighted overlay. Each measurement runs in its own process (peak RSS from getrusage): the
blockwise path (local threads, blocks of 2048) at 40,000^2 and at 4,000^2, and the single-process in-memory path
(RasterSet at full resolution + overlay.favourability_surface + outputs.write_surface) at 4,000^2; the in-memory path
at 40,000^2 would need about its 4,000^2 peak x 100 and is not attempted on this machine (24 GiB).
Batch: scripts/synthetic_cases.make_suite(60) run serially and through a LocalCluster(2 workers x 1 thread,
processes); the results tables are compared without the columns that say where and how fast a case ran.
Run: `.venv/bin/python tests/benchmarks/run_all.py dask` (`LODESTAR_BENCH_DASK_SIZE` changes 40000). At 40000 the
block-by-block surface takes about 20 minutes on 2 cores (1,161 s, 1.45 GB peak, on 2026-11-24)."""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "build" / "bench" / "dask"
PIXEL = 25.0
ORIGIN = (300_000.0, 5_500_000.0)
BLOCK = 2048
CEILING_MB = 2048
CASES = 60


def _layers(folder: Path, size: int) -> list[dict]:
    return [{"path": str(folder / "alteration.tif"), "role": "hydrothermal_alteration", "name": "alteration"},
            {"path": str(folder / "units.tif"), "role": "geological_map", "name": "units"},
            {"path": str(folder / "faults.geojson"), "role": "structure", "name": "faults"}]


def _specs() -> list[dict]:
    return [{"layer": "alteration", "role": "hydrothermal_alteration", "kind": "index", "transform": "percentile_rank",
             "membership": "large", "params": {"midpoint": 0.7, "spread": 5.0}, "weight": 2.0},
            {"layer": "units", "role": "geological_map", "kind": "units", "transform": "units",
             "params": {"units": ["2", "5"], "outside": 0.1}, "weight": 1.0},
            {"layer": "faults", "role": "structure", "kind": "lines", "transform": "distance_m", "membership": "small",
             "params": {"midpoint": 1500.0, "spread": 3.0}, "weight": 1.0}]


def make_inputs(folder: Path, size: int) -> None:
    """The three layers, written block by block (never the whole raster in memory)."""
    import numpy as np
    import rasterio
    from affine import Affine

    done = folder / ".complete"
    if done.exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    transform = Affine(PIXEL, 0, ORIGIN[0], 0, -PIXEL, ORIGIN[1])
    base = {"driver": "GTiff", "width": size, "height": size, "count": 1, "crs": "EPSG:32612",
            "transform": transform, "tiled": True, "blockxsize": 512, "blockysize": 512, "compress": "deflate",
            "BIGTIFF": "IF_SAFER"}
    rng = np.random.default_rng(7)
    centres = rng.uniform(0, size, (max(4, size // 400), 2))
    step = 2048
    with rasterio.open(folder / "alteration.tif", "w", dtype="float32", nodata=-9999.0, predictor=3, **base) as alt, \
            rasterio.open(folder / "units.tif", "w", dtype="uint8", nodata=0, predictor=2, **base) as units:
        for r in range(0, size, step):
            for c in range(0, size, step):
                h, w = min(step, size - r), min(step, size - c)
                rows = np.arange(r, r + h, dtype="float32")[:, None]
                cols = np.arange(c, c + w, dtype="float32")[None, :]
                value = 0.2 * np.sin(rows / 900.0) * np.cos(cols / 1300.0)
                near = [(y, x) for y, x in centres if r - 600 < y < r + h + 600 and c - 600 < x < c + w + 600]
                for y, x in near:
                    value = value + np.exp(-((rows - y) ** 2 + (cols - x) ** 2) / (2 * 150.0 ** 2))
                value = np.round(value + rng.normal(0, 0.02, (h, w)), 3).astype("float32")
                window = rasterio.windows.Window(c, r, w, h)
                alt.write(value, 1, window=window)
                code = 1 + ((np.floor(rows / (size / 23.0)) * 3 + np.floor(cols / (size / 17.0))) % 6).astype("uint8")
                units.write(np.broadcast_to(code, (h, w)).astype("uint8"), 1, window=window)
    features = []
    spacing = 400  # pixels: a fault about every 10 km, both ways, slightly oblique
    for k in range(0, size + spacing, spacing):
        k = k + 0.37  # off the pixel edges, where touching a cell is a matter of rounding
        for a, b in (((k, 0), (k + size * 0.05, size)), ((0, k), (size, k + size * 0.03))):
            x0, y0 = transform * a
            x1, y1 = transform * b
            features.append({"type": "Feature", "properties": {},
                             "geometry": {"type": "LineString", "coordinates": [[x0, y0], [x1, y1]]}})
    (folder / "faults.geojson").write_text(json.dumps({
        "type": "FeatureCollection", "crs": {"type": "name", "properties": {"name": "urn:ogc:def:crs:EPSG::32612"}},
        "features": features}), encoding="utf-8")
    done.write_text("ok")


def measure(mode: str, folder: str, size: int, out: str) -> dict:
    """One measurement in this process: seconds and peak RSS (MB)."""
    import resource

    from lodestar.plugin.favourability.evidence import EvidenceSpec

    specs = [EvidenceSpec.from_dict(d) for d in _specs()]
    layers = _layers(Path(folder), size)
    start = time.perf_counter()
    if mode == "blockwise":
        from lodestar.plugin.favourability.blockwise import write_full_resolution

        write_full_resolution(layers, specs, out, block=BLOCK)
    else:
        from lodestar.plugin.favourability.outputs import write_surface
        from lodestar.plugin.favourability.overlay import favourability_surface
        from lodestar.plugin.raster_io import LayerSpec, RasterSet

        raster_set = RasterSet([LayerSpec(**d) for d in layers], max_pixels=size * size)
        write_surface(favourability_surface(raster_set, specs), out)
    seconds = time.perf_counter() - start
    return {"mode": mode, "size": size, "seconds": round(seconds, 1),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)}


def _in_child(mode: str, size: int, out: Path) -> dict:
    folder = OUT / f"inputs-{size}"
    code = (f"import sys, json; sys.path.insert(0, {str(ROOT / 'tests')!r}); import conftest; "
            f"sys.path.insert(0, {str(Path(__file__).parent)!r}); import bench_dask; "
            f"print('RESULT' + json.dumps(bench_dask.measure({mode!r}, {str(folder)!r}, {size}, {str(out)!r})))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    lines = [line for line in run.stdout.splitlines() if line.startswith("RESULT")]
    if run.returncode or not lines:
        tail = (run.stderr or run.stdout).strip().splitlines()[-3:]
        return {"mode": mode, "size": size, "failed": " | ".join(tail)}
    return json.loads(lines[-1][len("RESULT"):])


def _compare_surfaces(a: Path, b: Path) -> float:
    import numpy as np
    import rasterio

    worst = 0.0
    with rasterio.open(a) as x, rasterio.open(b) as y:
        for _, window in x.block_windows(1):
            worst = max(worst, float(np.abs(x.read(1, window=window) - y.read(1, window=window)).max()))
    return worst


def surface_benchmark(size: int) -> list[dict]:
    small = 4000 if size > 4000 else max(1000, size // 2)
    rows = []
    for n in sorted({small, size}):
        make_inputs(OUT / f"inputs-{n}", n)
    rows.append(_in_child("blockwise", size, OUT / f"blockwise-{size}.tif"))
    print(rows[-1], flush=True)
    rows.append(_in_child("blockwise", small, OUT / f"blockwise-{small}.tif"))
    print(rows[-1], flush=True)
    rows.append(_in_child("in-memory", small, OUT / f"in-memory-{small}.tif"))
    print(rows[-1], flush=True)
    if "failed" not in rows[-1] and "failed" not in rows[-2]:
        rows[-1]["max_difference_to_blockwise"] = _compare_surfaces(OUT / f"blockwise-{small}.tif",
                                                                   OUT / f"in-memory-{small}.tif")
    return rows


def batch_benchmark() -> dict:
    import synthetic_cases
    from distributed import LocalCluster

    from lodestar.models import run_analysis
    from lodestar.plugin.runs.batch import run_batch

    suite = OUT / "suite60"
    if not (suite / "suite.csv").exists():
        synthetic_cases.make_suite(suite, CASES)
    start = time.perf_counter()
    serial = run_batch(suite, OUT / "serial", analyse=run_analysis)
    serial_s = time.perf_counter() - start
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.CRITICAL) as cluster:
        start = time.perf_counter()
        spread = run_batch(suite, OUT / "cluster", analyse=run_analysis, scheduler=cluster.scheduler_address)
        cluster_s = time.perf_counter() - start
    varying = ("seconds", "timings", "output_dir", "worker")

    def found(result):
        return [{k: v for k, v in asdict(row).items() if k not in varying} for row in result.outcomes]

    workers = {}
    for row in spread.outcomes:
        workers[row.worker] = workers.get(row.worker, 0) + 1
    return {"cases": len(serial.outcomes), "serial_s": round(serial_s, 1), "cluster_s": round(cluster_s, 1),
            "speed_up": round(serial_s / cluster_s, 2), "same_table": found(serial) == found(spread),
            "cases_per_worker": sorted(workers.values()), "errors": serial.summary["errors"],
            "accuracy": serial.summary.get("accuracy")}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    size = int(os.environ.get("LODESTAR_BENCH_DASK_SIZE", "40000"))
    print(f"cores: {os.cpu_count()}; surface {size:,} x {size:,} px; blocks of {BLOCK}", flush=True)
    batch = batch_benchmark()
    print(f"analyze_cases, {batch['cases']} cases: serial {batch['serial_s']} s, LocalCluster 2 workers "
          f"{batch['cluster_s']} s (x{batch['speed_up']}); same results table: {batch['same_table']}; cases per "
          f"worker {batch['cases_per_worker']}", flush=True)
    rows = surface_benchmark(size)
    for row in rows:
        if "failed" in row:
            print(f"{row['mode']} {row['size']:,}^2: failed ({row['failed']})")
            continue
        extra = (f"; max |difference| to the blockwise surface {row['max_difference_to_blockwise']:.2g}"
                 if "max_difference_to_blockwise" in row else "")
        print(f"{row['mode']:>9} {row['size']:>6,}^2: {row['seconds']:>7.1f} s, peak RSS {row['peak_rss_mb']:>7.0f} MB"
              + (f" (under {CEILING_MB} MB: {row['peak_rss_mb'] < CEILING_MB})" if row["mode"] == "blockwise" else "")
              + extra)
    report = {"size": size, "block": BLOCK, "surfaces": rows, "batch": batch}
    (ROOT / "build" / "bench" / "dask.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
