"""Benchmark: generated scanned geological maps read through their legends (plugin/tools/map_legend.py).

Ten seeded maps (tests/scanned_maps.py: 6-15 units in geological-map colours, the legend rendered in DejaVu Sans,
contacts, faults and unit labels over the map, blur, noise, JPEG artefacts; the legend framed over the map, in two
columns, or on the paper beside it), seeds 1001-1010 (not those the reader was developed on). Reported: the share of
unit names read exactly (the name after the vocabulary check, and Tesseract's raw text); the share of the map's unit
pixels (the truth's units: paper, the legend box and drawn ink with its 1-pixel fringe are no unit) given the right
unit, nodata counting as wrong; and the share of the other pixels (no unit) given one. Beside them the baseline
measured in the same run: each pixel to the nearest swatch colour in RGB, no smoothing and no masking (the same
swatch colours). Targets (issue 45): >= 90 % names, >= 90 % pixels. Run: `make bench` or
`.venv/bin/python tests/benchmarks/run_all.py scanned_maps`.
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import rasterio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import conftest  # noqa: E402,F401  (the checkout as the `lodestar` package)
from readme_figures import write_figures  # noqa: E402
from scanned_maps import make_scanned_map  # noqa: E402

from lodestar.plugin.tools.map_legend import LegendOutputs, read_map_legend  # noqa: E402

SEEDS = range(1001, 1011)
LAYOUTS = ({}, {"columns": 2}, {"in_margin": True})
"""By seed (seed % 3): the legend in a framed box over the map, in two columns, or unframed on the paper beside it."""


def rgb_baseline(rgb: np.ndarray, colours: list) -> np.ndarray:
    """Codes 1..n of the nearest colour in RGB for every pixel: no smoothing, nothing masked."""
    pixels = rgb.reshape(3, -1).T.astype(np.float32)
    distances = ((pixels[:, None, :] - np.asarray(colours, dtype=np.float32)[None]) ** 2).sum(axis=2)
    return (distances.argmin(axis=1) + 1).reshape(rgb.shape[1:])


def right_share(codes: np.ndarray, truth: np.ndarray, names: dict, true_names: list) -> float:
    """Share of the truth's unit pixels whose code names their unit (codes matched to units by the name read)."""
    lut = np.zeros(256, dtype=int)
    for value, name in names.items():
        if name in true_names:
            lut[value] = true_names.index(name) + 1
    inside = truth > 0
    return float((lut[codes][inside] == truth[inside]).mean())


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory(prefix="lodestar-bench-legend-") as folder:
        for seed in SEEDS:
            scan = make_scanned_map(seed, **LAYOUTS[seed % 3])
            image = scan.write(Path(folder) / f"scan_{seed}.tif")
            start = time.perf_counter()
            reading = read_map_legend(image, LegendOutputs.beside(Path(folder) / f"units_{seed}.tif"))
            seconds = time.perf_counter() - start
            with rasterio.open(Path(folder) / f"units_{seed}.tif") as ds:
                codes = ds.read(1)
            names = reading.names()
            exact = sum(u.name == n for u, n in zip(reading.units, scan.names))  # in legend order
            raw = sum(u.ocr_text == n for u, n in zip(reading.units, scan.names))
            baseline = rgb_baseline(scan.rgb, [u.rgb for u in reading.units])
            rows.append({
                "seed": seed, "units": len(scan.names), "found": len(reading.units), "exact": exact, "raw": raw,
                "pixels": right_share(codes, scan.truth, names, scan.names),
                "baseline": right_share(baseline.astype(np.uint8), scan.truth, names, scan.names),
                "masked": float((codes[scan.truth > 0] == 0).mean()),
                "false": float((codes[scan.truth == 0] > 0).mean()),
                "ink_masked": float((codes[scan.ink] == 0).mean()), "seconds": seconds})
            row = rows[-1]
            print(f"seed {seed}: {row['found']}/{row['units']} swatches, names exact {row['exact']}/{row['units']} "
                  f"(raw OCR {row['raw']}), pixels right {100 * row['pixels']:.1f} % (RGB baseline "
                  f"{100 * row['baseline']:.1f} %), unit pixels masked {100 * row['masked']:.1f} %, drawn ink masked "
                  f"{100 * row['ink_masked']:.1f} %, non-unit pixels given a unit {100 * row['false']:.1f} % "
                  f"(baseline 100 %), {row['seconds']:.1f} s", flush=True)
    units = sum(r["units"] for r in rows)
    names = sum(r["exact"] for r in rows) / units
    raw = sum(r["raw"] for r in rows) / units
    pixels = float(np.mean([r["pixels"] for r in rows]))
    baseline = float(np.mean([r["baseline"] for r in rows]))
    false = float(np.mean([r["false"] for r in rows]))
    print(f"\n{len(rows)} maps, {units} units: names read exactly {100 * names:.1f} % (target >= 90 %; Tesseract's raw "
          f"text {100 * raw:.1f} %); map pixels assigned to the right unit {100 * pixels:.1f} % (target >= 90 %; "
          f"nearest RGB colour without masking {100 * baseline:.1f} %, which also gives a unit to every pixel of "
          f"paper, legend and drawn lines and labels, where the reader gives one to {100 * false:.1f} %); "
          f"{np.mean([r['seconds'] for r in rows]):.1f} s a map (960 x 720 pixels).")
    for label, value in (("names", names), ("pixels", pixels)):
        if value < 0.9:
            print(f"TARGET MISSED: {label} {100 * value:.1f} % < 90 %")
    write_figures("scanned_maps", {"rows": rows}, {"scanned_maps.units": units, "scanned_maps.names_pct": 100 * names,
                                                  "scanned_maps.pixels_pct": 100 * pixels})


if __name__ == "__main__":
    main()
