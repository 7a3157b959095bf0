"""How soon a cancel stops a run while a 20,000 x 20,000 raster loads, beside reading that raster whole.

The raster is tiled, compressed and sparse (every pixel reads as 0), so reading it costs what reading any raster
of that size costs. The cancel comes at several moments inside the load; its latency is the time from the flag set
to `Cancelled` raised in the worker thread. The baseline is one whole read of the same band with rasterio, measured
in the same run: the time a load that did not check for a cancel would hold the user.
Run: `.venv/bin/python tests/benchmarks/run_all.py cancel` (about half a minute); writes build/bench/cancel.md.
"""
from __future__ import annotations

import statistics
import tempfile
import threading
import time
from pathlib import Path

import rasterio
from rasterio.transform import from_origin

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.errors import Cancelled
from lodestar.plugin.files import write_text_atomic
from lodestar.plugin.progress import Progress
from lodestar.plugin.raster_io import LayerSpec

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "build" / "bench" / "cancel.md"
SIZE = 20_000
QUESTION = "Can porphyry copper deposits be detected here? Answer: A. Yes B. No."
DELAYS_S = (0.2, 0.4, 0.8, 1.2, 1.6)


def _large(folder: Path) -> Path:
    path = folder / "aloh.tif"
    with rasterio.open(path, "w", driver="GTiff", width=SIZE, height=SIZE, count=1, dtype="uint8",
                       crs="EPSG:32612", transform=from_origin(500_000, 4_000_000, 30, 30), tiled=True,
                       blockxsize=512, blockysize=512, compress="deflate", sparse_ok=True):
        pass
    return path


def _whole_read_s(path: Path) -> float:
    started = time.perf_counter()
    with rasterio.open(path) as src:
        src.read(1)
    return time.perf_counter() - started


def _cancel_latency_s(path: Path, out: Path, delay_s: float) -> float | None:
    """Seconds from the cancel to `Cancelled` in the worker; None when the run was not stopped by it."""
    flag, stopped = threading.Event(), {}

    def work():
        try:
            run_analysis(AnalysisRequest([LayerSpec(path, "hydrothermal_alteration")], QUESTION, out),
                         Progress(is_cancelled=flag.is_set))
        except Cancelled:
            stopped["at"] = time.perf_counter()

    worker = threading.Thread(target=work)
    worker.start()
    time.sleep(delay_s)
    asked = time.perf_counter()
    flag.set()
    worker.join(120)
    return stopped["at"] - asked if "at" in stopped else None


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = _large(folder)
        whole = _whole_read_s(path)
        latencies = [_cancel_latency_s(path, folder / f"run{k}", delay) for k, delay in enumerate(DELAYS_S)]
    seen = [s for s in latencies if s is not None]
    rows = [f"| {delay:.1f} | {'not stopped' if s is None else f'{s:.3f}'} |" for delay, s in zip(DELAYS_S, latencies)]
    worst = max(seen) if seen else float("nan")
    lines = ["# Cancel while a 20,000 x 20,000 raster loads", "",
             f"Baseline, one whole read of the band (rasterio, same run): {whole:.2f} s.", "",
             "| cancel after (s) | stopped after (s) |", "|---|---|", *rows, "",
             f"Median {statistics.median(seen):.3f} s, worst {worst:.3f} s "
             f"({worst / whole:.3f} of a whole read); {len(seen)} of {len(DELAYS_S)} cancels stopped the run."
             if seen else "No cancel stopped the run."]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(OUT, "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
