"""Targets on districts kept out of the repository (issue 58): the work list the analysis draws (`rank_targets`, sized
for the district's deposit model) on Lodestar's offline and calibrated ("best") surfaces and on the survey's own
prospectivity map where the district ships one, and beside them the independent equal-weight mean of the layers' ranks
(`favourability/baseline.py`, every layer, signs from geology), on the same cells; the best 10 against the surface's own
top cells of the same area (`bench_targets.top_cells_hold`), and the best 5 camps' prospects against the camps' own top
cells.

The surfaces are drawn from directly: on Cloncurry the analysis answers *Insufficient evidence* and so draws no
targets itself, yet its favourability surface is written, and a geologist can delineate it (`lodestar:delineate_targets`
does what this does). Nothing in the targets code was tuned on these districts.
Run: `.venv/bin/python tests/benchmarks/run_all.py kept_out` (about three minutes); writes build/bench/kept_out.md.
A district missing from ../shared/realdata is said and skipped.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import rasterio
from bench_targets import camps_lines, top_cells_hold  # noqa: E402  (tests/benchmarks: on the path through run_all)

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.evaluation import deposit_coordinates
from lodestar.plugin.favourability.baseline import independent_rank_mean
from lodestar.plugin.files import write_text_atomic
from lodestar.plugin.map.target_sizes import target_sizes
from lodestar.plugin.map.work_list import rank_targets
from lodestar.plugin.raster_io import RasterGrid, RasterSet
from lodestar.plugin.reason.knowledge import model_by_id
from lodestar.plugin.reason.workspace import describe_layers
from lodestar.plugin.request.case import read_case

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "build" / "bench" / "kept_out.md"
AREA_SHARE = 0.10
DISTRICTS = (("Cloncurry IOCG (Geoscience Australia)", ROOT.parent / "shared" / "realdata" / "cloncurry-iocg", "iocg",
              {"GA's posterior probability": "ga_posterior_probability.tif"}),)


def measure(title: str, path: Path, case, model: dict) -> str:
    """The table row of the surface in the GeoTIFF at `path`."""
    with rasterio.open(path) as ds:
        values = ds.read(1, masked=True)
        grid = RasterGrid(ds.transform, ds.width, ds.height, ds.crs)
    return measure_values(title, values, grid, case, model)


def measure_values(title: str, values, grid: RasterGrid, case, model: dict) -> str:
    """The table row of `values` on `grid`: the work list drawn as the analysis draws it, against the surface."""
    xy = deposit_coordinates(case.deposits, grid.crs, [])
    sizes = target_sizes(model, grid.pixel_area, AREA_SHARE * float(values.count()) * grid.pixel_area)
    work = rank_targets(values, grid, grid.crs, AREA_SHARE, sizes=sizes, deposit_xy=xy.tolist())
    targets = work.targets
    best = targets[targets["rank"] <= 10]
    area = float(best["area_km2"].sum())
    _, held, top = camps_lines(targets, work.prospects, values, grid, xy)
    tiers = ", ".join(f"{share:.0%}" for share in work.shares)
    return (f"| {title} | {len(targets)} | {tiers} | {targets['area_km2'].min():.2f} | "
            f"{int(best['known_deps'].sum())} / {top_cells_hold(values, grid, xy, area):.2f} ({area:,.1f} km2) | "
            f"{len(work.prospects)} | {held} / {top:.2f} |")


def main() -> None:
    lines = ["# Targets on districts kept out of the repository", "",
             "| surface | targets | tiers drawn | smallest km2 | best 10 hold / top cells of that area | prospects | "
             "best 5 camps' prospects / camps' top cells |", "|---|---|---|---|---|---|---|"]
    for name, folder, model_id, maps in DISTRICTS:
        if not (folder / "case.json").is_file():
            lines.append(f"| {name}: not found at {folder} | | | | | | |")
            continue
        case, model = read_case(folder / "case.json"), model_by_id(model_id)
        for title, file in maps.items():
            lines.append(measure(f"{name}, {title}", folder / file, case, model))
            print(lines[-1], flush=True)
        raster_set = RasterSet(case.layers)
        baseline = independent_rank_mean(raster_set, describe_layers(raster_set), model, dict(case.favourable_units))
        lines.append(measure_values(f"{name}, equal-weight mean of the layers' ranks", baseline.values,
                                    raster_set.grid, case, model))
        print(lines[-1], flush=True)
        for calibrate in ("", "best"):
            with tempfile.TemporaryDirectory() as out:
                result = run_analysis(AnalysisRequest(case.layers, case.question, Path(out), dict(case.choices),
                                                      case_id=case.id, deposits=case.deposits, calibrate=calibrate))
                lines.append(measure(f"{name}, Lodestar {'calibrated (best)' if calibrate else 'offline'} (answer: "
                                     f"{result.answer})", result.outputs["favourability"], case, model))
            print(lines[-1], flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(OUT, "\n".join(lines) + "\n")
    print(f"written {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
