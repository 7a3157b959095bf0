"""Targets on the real districts and the sample, as a user gets them (`lodestar:analyze`, offline, defaults; Murchison
calibrated too, best out of fold): how many, the smallest and largest against the sizes the deposit model gives, the
deposits the best 10 hold against the surface's own top cells of the same total area (the run's own equal-area
comparison, `evaluation.beside_surface`), the prospects of the best 5 camps against each camp's own top cells of the
same area, and the verdicts of the best 10.

Run: `.venv/bin/python tests/benchmarks/run_all.py targets` (a few minutes: the calibrated run takes most); writes
build/bench/targets.md, and build/bench/targets.json the figures the documents quote.
"""
from __future__ import annotations

import re
import tempfile
import time
from pathlib import Path

import numpy as np
import rasterio
from rasterio.features import rasterize
from readme_figures import write_figures  # noqa: E402  (tests/: on the path through run_all)

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.evaluation import cells_of, deposit_coordinates
from lodestar.plugin.files import write_text_atomic
from lodestar.plugin.raster_io import RasterGrid
from lodestar.plugin.request.case import read_case

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "build" / "bench" / "targets.md"
GREAT_BASIN_UNITS = {"Geologic units (Nevada state map)": ["LPZE", "UPZC", "LPZ"]}
RUNS = (("resources/sample/porphyry-demo", "The sample (an 8 km porphyry prospect)", {}, ""),
        ("tests/data/murchison-gold", "Murchison (held out: nothing was tuned on it)", {}, ""),
        ("tests/data/great-basin-gold", "Great Basin (the knowledge base's units were tuned on it)",
         GREAT_BASIN_UNITS, ""),
        ("tests/data/murchison-gold", "Murchison, calibrated (best out of fold)", {}, "best"))
NAMES = ("sample", "murchison", "great-basin", "murchison-calibrated")
"""Each run's name in the figures the documents quote ('targets.murchison.best10')."""
CAMPS = 5
"""Camps whose prospects are held to the camp's own top cells of the same area."""


def top_cells_sum(values: np.ma.MaskedArray, weights: np.ndarray, take: int) -> float:
    """`weights` summed over the `take` best valid cells of `values`, a tie at the cut shared out as an expected value
    (as the run's equal-area comparison shares it)."""
    valid = ~np.ma.getmaskarray(values)
    data = np.asarray(values.filled(-np.inf), dtype=float)
    scores = np.sort(data[valid])[::-1]
    if take <= 0 or not scores.size:
        return 0.0
    take = min(take, scores.size)
    cut = scores[take - 1]
    above, tied = valid & (data > cut), valid & (data == cut)
    return float(weights[above].sum() + weights[tied].sum() * (take - int(above.sum())) / max(int(tied.sum()), 1))


def top_cells_hold(values: np.ma.MaskedArray, grid: RasterGrid, xy: np.ndarray, area_km2: float) -> float:
    """Deposits in the surface's own best cells of `area_km2` (`top_cells_sum` of the deposits per cell)."""
    rows, cols, inside = cells_of(xy, grid, ~np.ma.getmaskarray(values))
    counts = np.zeros(values.shape)
    np.add.at(counts, (rows[inside], cols[inside]), 1)
    return top_cells_sum(values, counts, int(round(area_km2 * 1e6 / grid.pixel_area)))


def camps_lines(targets, prospects, values, grid, xy) -> tuple[list, float, float]:
    """Per camp of the best CAMPS: its prospects' area and deposits against its own top cells of that area."""
    lines, held, top = [], 0, 0.0
    for row in targets.sort_values("rank").head(CAMPS).itertuples():
        inside = prospects[prospects["camp"] == row.rank] if prospects is not None and len(prospects) else []
        if not len(inside):
            lines.append(f"| {row.rank} | {row.area_km2:,.1f} | {row.known_deps} | 0 | - | - | - |")
            continue
        camp = rasterize([(row.geometry, 1)], out_shape=values.shape, transform=grid.transform, fill=0).astype(bool)
        within = np.ma.masked_array(values.data, mask=np.ma.getmaskarray(values) | ~camp)
        area = float(inside["area_km2"].sum())
        own = top_cells_hold(within, grid, xy, area)
        held += int(inside["known_deps"].sum())
        top += own
        lines.append(f"| {row.rank} | {row.area_km2:,.1f} | {row.known_deps} | {len(inside)} | {area:,.2f} | "
                     f"{int(inside['known_deps'].sum())} | {own:.2f} |")
    return lines, held, top


def run(folder: str, title: str, units: dict, calibrate: str) -> tuple[list, dict]:
    case = read_case(ROOT / folder / "case.json")
    with tempfile.TemporaryDirectory() as out:
        request = AnalysisRequest(case.layers, case.question, Path(out), dict(case.choices), case_id=case.id,
                                  deposits=case.deposits, favourable_units=units, calibrate=calibrate)
        started = time.perf_counter()
        result = run_analysis(request)
        seconds = time.perf_counter() - started
        with rasterio.open(result.outputs["favourability"]) as ds:
            values = ds.read(1, masked=True)
            grid = RasterGrid(ds.transform, ds.width, ds.height, ds.crs)
    targets, prospects = result.prospectivity, result.prospects
    xy = deposit_coordinates(case.deposits, grid.crs, [])
    best = targets[targets["rank"] <= 10]
    note = next((n for n in result.notes if re.match(r"[\d,]+ targets? covering", n)), "")
    equal = (result.metrics or {}).get("equal_area") or {}
    verdicts = ", ".join(f"{v}: {int((best['verdict'] == v).sum())}" for v in ("strong", "moderate", "weak",
                                                                                "unsupported"))
    camp_rows, camp_held, camp_top = camps_lines(targets, prospects, values, grid, xy)
    figures = {"title": title, "targets": len(targets), "smallest": float(targets["area_km2"].min()),
               "largest": float(targets["area_km2"].max()), "best10": equal.get("targets"),
               "surface": equal.get("surface"), "best10_km2": float(best["area_km2"].sum()),
               "prospects": len(prospects) if prospects is not None else 0, "camp_held": camp_held,
               "camp_top": camp_top}
    lines = [f"### {title}", "", note, "",
             "| figure | value |", "|---|---|",
             f"| targets | {len(targets)} over {targets['area_km2'].sum():,.1f} km2 |",
             f"| smallest / largest target | {figures['smallest']:,.2f} / {figures['largest']:,.1f} km2 |",
             f"| best 10: area, known deposits inside | {figures['best10_km2']:,.1f} km2, {equal.get('targets')} |",
             f"| the surface's own top cells of that area hold | {equal.get('surface')} |",
             f"| all targets hold (of {len(xy)}) | {int(targets['known_deps'].sum())} |",
             f"| prospects inside the targets | {figures['prospects']} |",
             f"| prospects of the best {CAMPS} camps hold / the camps' own top cells of that area | {camp_held} / "
             f"{camp_top:.2f} |",
             f"| verdicts of the best 10 | {verdicts} |",
             f"| run time | {seconds:.0f} s |", "",
             "| camp | km2 | known | prospects | their km2 | they hold | the camp's top cells of that area hold |",
             "|---|---|---|---|---|---|---|", *camp_rows, "",
             "| rank | tier % | km2 | per km2 (score) | known | prospects | verdict | why |",
             "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r.rank} | {r.tier:g} | {r.area_km2:.2f} | {r.score:.4g} | {r.known_deps} | {r.prospects} | "
              f"{r.verdict} | {r.why} |" for r in best.itertuples()]
    return lines + ["", f"Answer: {result.answer_text}", ""], figures


def main() -> None:
    sections = ["## Targets on real districts and the sample (offline, defaults; Murchison calibrated too)", ""]
    summary = ["| run | targets | smallest km2 | best 10 hold / top cells of that area | prospects | best 5 camps' "
               "prospects hold / the camps' top cells |", "|---|---|---|---|---|---|"]
    quoted = {}
    for name, (folder, title, units, calibrate) in zip(NAMES, RUNS):
        lines, figures = run(folder, title, units, calibrate)
        quoted.update({f"targets.{name}.{key}": figures[key] for key in ("targets", "smallest", "best10", "surface",
                                                                          "best10_km2", "prospects", "camp_held",
                                                                          "camp_top")})
        text = "\n".join(lines)
        print(text, flush=True)
        sections.append(text)
        summary.append(f"| {title} | {figures['targets']} | {figures['smallest']:.2f} | {figures['best10']} / "
                       f"{figures['surface']} ({figures['best10_km2']:,.1f} km2) | {figures['prospects']} | "
                       f"{figures['camp_held']} / {figures['camp_top']:.2f} |")
    print("\n".join(summary), flush=True)
    write_text_atomic(OUT, "\n".join(sections[:2] + summary + [""] + sections[2:]))
    print(f"written {OUT.relative_to(ROOT)} and {write_figures('targets', {}, quoted).relative_to(ROOT)}")


if __name__ == "__main__":
    main()
