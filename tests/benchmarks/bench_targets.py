"""Targets on the real districts, as a user gets them (offline `lodestar:analyze`, defaults): the largest target
against the cap, the deposits the best 10 targets hold against the surface's own top cells of the same total area,
and the deposits all targets hold (the top 10 %); the verdicts of the best 10.

Run: `.venv/bin/python tests/benchmarks/run_all.py targets` (about a minute); writes build/bench/targets.md.
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np
import rasterio

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.evaluation import cells_of, deposit_coordinates
from lodestar.plugin.files import write_text_atomic
from lodestar.plugin.raster_io import RasterGrid
from lodestar.plugin.runs.case import read_case

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "build" / "bench" / "targets.md"
DISTRICTS = (("murchison-gold", "Murchison (held out: nothing was tuned on it)", {}),
             ("great-basin-gold", "Great Basin (the knowledge base's units were tuned on it)",
              {"Geologic units (Nevada state map)": ["LPZE", "UPZC", "LPZ"]}))


def top_cells_hold(values: np.ma.MaskedArray, grid: RasterGrid, xy: np.ndarray, area_km2: float) -> float:
    """Deposits in the surface's own best cells of `area_km2` (ties at the cut shared out as expected values)."""
    valid = ~np.ma.getmaskarray(values)
    data = np.asarray(values.filled(-np.inf), dtype=float)
    rows, cols, inside = cells_of(xy, grid, valid)
    scores = np.sort(data[valid])[::-1]
    take = int(round(area_km2 * 1e6 / grid.pixel_area))
    if take <= 0:
        return 0.0
    cut = scores[min(take, scores.size) - 1]
    above = int((scores > cut).sum())
    tied = int((scores == cut).sum())
    at = data[rows[inside], cols[inside]]
    return float((at > cut).sum() + (at == cut).sum() * (take - above) / max(tied, 1))


def run(folder: str, title: str, units: dict) -> list[str]:
    case = read_case(ROOT / "tests" / "data" / folder / "case.json")
    with tempfile.TemporaryDirectory() as out:
        request = AnalysisRequest(case.layers, case.question, Path(out), dict(case.choices), case_id=case.id,
                                  deposits=case.deposits, favourable_units=units)
        started = time.perf_counter()
        result = run_analysis(request)
        seconds = time.perf_counter() - started
        with rasterio.open(result.outputs["favourability"]) as ds:
            values = ds.read(1, masked=True)
            grid = RasterGrid(ds.transform, ds.width, ds.height, ds.crs)
    targets = result.prospectivity
    xy = deposit_coordinates(case.deposits, grid.crs, [])
    best = targets[targets["rank"] <= 10]
    cap_note = next((n for n in result.notes if "target(s) covering" in n), "")
    verdicts = ", ".join(f"{v}: {int((best['verdict'] == v).sum())}" for v in ("strong", "moderate", "weak",
                                                                                "unsupported"))
    lines = [f"### {title}", "", cap_note, "",
             "| figure | value |", "|---|---|",
             f"| targets | {len(targets)} over {targets['area_km2'].sum():,.1f} km2 |",
             f"| largest target | {targets['area_km2'].max():,.1f} km2 |",
             f"| best 10: area, known deposits inside | {best['area_km2'].sum():,.1f} km2, "
             f"{int(best['known_deps'].sum())} |",
             f"| the surface's own top cells of that area hold | "
             f"{top_cells_hold(values, grid, xy, float(best['area_km2'].sum())):.1f} |",
             f"| all targets hold (of {len(xy)}) | {int(targets['known_deps'].sum())} |",
             f"| verdicts of the best 10 | {verdicts} |",
             f"| run time | {seconds:.0f} s |", ""]
    lines += ["| rank | tier % | km2 | known | verdict | why |", "|---|---|---|---|---|---|"]
    lines += [f"| {r.rank} | {r.tier:g} | {r.area_km2:.1f} | {r.known_deps} | {r.verdict} | {r.why} |"
              for r in best.itertuples()]
    return lines + ["", f"Answer: {result.answer_text}", ""]


def main() -> None:
    sections = ["## Targets on real districts (offline, defaults)", ""]
    for folder, title, units in DISTRICTS:
        text = "\n".join(run(folder, title, units))
        print(text, flush=True)
        sections.append(text)
    write_text_atomic(OUT, "\n".join(sections))
    print(f"written {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
