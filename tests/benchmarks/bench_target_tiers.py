"""The work list's tier rule on a generator it was not developed on (issue 58): smooth random surfaces whose deposits
are drawn from the surface's own intensity, so the truth is known and the surface's top cells of an area are the best
that area can hold in expectation.

Each seed: a 400 x 400 grid of 200 m cells, the sum of white noise smoothed at three scales; deposits a Poisson draw,
about 60 to a district, with intensity growing as exp(6 x the cell's percentile rank). The work list is drawn with
each deposit model's sizes both ways, in the same run: tier by tier (`rank_targets`: the best 10 from the smallest tier
holding them, wider tiers filling the list) and the rule it replaced, one tier holding the whole list (the same call
with `judged` = the list's length). Reported per model: the expected deposits the best 10 hold over what the
surface's own top cells of the same area hold in expectation (1 at best), and how often the deposits drawn in the
best 10 reach those the top cells of that area hold. Camps (the models whose deposits are smaller than their
largest target): the expected deposits the best 5 camps' prospects hold over what each camp's own top cells of the same
area hold, and the deposits drawn there less those the camps' top cells hold (a tie at the cut shared out as an
expected count), with a prospect's holes kept (the rule: the prospects are then the camp's top cells, the tie whole, so
both figures are identities, 1 and 0) and filled as a target's are (the rule replaced), on these surfaces
made noisy and classed (`classed`: ties at every cut and holes among a camp's best cells whose
deposits follow the smooth field, the world where filling a hole could pay; on the smooth surfaces themselves no
prospect has a hole: both rules gave 1.0000, measured once), CAMP_SEEDS seeds.
Run: `.venv/bin/python tests/benchmarks/run_all.py target_tiers` (about two minutes); writes
build/bench/target_tiers.md.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from affine import Affine
from bench_targets import top_cells_hold, top_cells_sum  # noqa: E402  (tests/benchmarks: on the path through run_all)
from rasterio.crs import CRS
from rasterio.features import rasterize
from scipy import ndimage

from lodestar.plugin.favourability.targets import delineate, percentile_ranks
from lodestar.plugin.files import write_text_atomic
from lodestar.plugin.judge.target_table import JUDGED
from lodestar.plugin.map import work_list
from lodestar.plugin.map.target_sizes import target_sizes
from lodestar.plugin.map.work_list import rank_targets
from lodestar.plugin.raster_io import RasterGrid
from lodestar.plugin.reason.knowledge import model_by_id

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "build" / "bench" / "target_tiers.md"
SIDE = 400
GRID = RasterGrid(Affine(200.0, 0, 500_000.0, 0, -200.0, 7_000_000.0), SIDE, SIDE, CRS.from_epsg(32750))
MODELS = ("orogenic_gold", "iocg", "porphyry_cu_mo_au")
SEEDS = 30
AREA_SHARE = 0.10
BEST = 10
CAMPS = 5
CLASSES = 20
NOISE = (0.5, 1.5)
CAMP_SEEDS = 15


def world(seed: int) -> tuple[np.ma.MaskedArray, np.ndarray, np.ndarray]:
    """(surface, expected deposits per cell, deposit coordinates) of one seed."""
    rng = np.random.default_rng(seed)
    field = np.zeros((SIDE, SIDE))
    for weight, scale in ((1.0, 20), (0.6, 6), (0.3, 2)):
        smooth = ndimage.gaussian_filter(rng.standard_normal((SIDE, SIDE)), scale)
        field += weight * smooth / smooth.std()
    values = np.ma.masked_array(field.astype("float32"))
    intensity = np.exp(6 * percentile_ranks(values))
    intensity *= 60 / intensity.sum()
    counts = rng.poisson(intensity)
    rows, cols = np.nonzero(counts)
    xy = np.array([GRID.transform * (c + rng.random(), r + rng.random())
                   for r, c in zip(rows, cols) for _ in range(counts[r, c])])
    return values, intensity, xy


def best_ten(values, intensity, xy, sizes, judged: int) -> tuple[float, bool]:
    """(expected deposits of the best 10 over those of the top cells of their area, whether the deposits drawn in
    the best 10 reach those the top cells of that area hold)."""
    work = rank_targets(values, GRID, GRID.crs, AREA_SHARE, sizes=sizes, deposit_xy=xy.tolist(), judged=judged)
    best = work.targets[work.targets["rank"] <= BEST]
    inside = rasterize(best.geometry, out_shape=values.shape, transform=GRID.transform).astype(bool)
    top = np.sort(intensity.ravel())[::-1][:int(inside.sum())].sum()
    held = int(best["known_deps"].sum())
    return float(intensity[inside].sum() / top), held >= top_cells_hold(values, GRID, xy, float(best["area_km2"].sum()))


def classed(values: np.ma.MaskedArray, noise: float, seed: int) -> np.ma.MaskedArray:
    """What a knowledge-driven surface on classed layers would make of `values`: cell-scale noise of standard deviation
    `noise` added (the field's is about 1.2) and the result cut at its quantiles into CLASSES levels, so a camp has a
    few tied classes and holes of lower classes among its best cells, while the deposits follow the smooth field."""
    noisy = values.filled(0.0) + noise * np.random.default_rng(10_000 + seed).standard_normal(values.shape)
    cuts = np.quantile(noisy, np.linspace(0, 1, CLASSES + 1)[1:-1])
    return np.ma.masked_array(np.digitize(noisy, cuts).astype("float32") + 1)


def filled_holes(*args, **kwargs):
    """`delineate` filling a prospect's small holes as a target's are (the rule replaced)."""
    return delineate(*args, **dict(kwargs, fill_holes=True))


def camps(values, intensity, xy, sizes, fill: bool) -> tuple[float, float]:
    """(expected deposits of the best CAMPS camps' prospects over those of each camp's own top cells of the same area,
    the deposits drawn in the prospects less those the camps' top cells of that area hold, ties shared out)."""
    original = work_list.delineate
    work_list.delineate = filled_holes if fill else original
    try:
        work = rank_targets(values, GRID, GRID.crs, AREA_SHARE, sizes=sizes, deposit_xy=xy.tolist())
    finally:
        work_list.delineate = original
    held = top = drawn = top_drawn = 0.0
    for row in work.targets.sort_values("rank").head(CAMPS).itertuples():
        inside = work.prospects[work.prospects["camp"] == row.rank]
        if not len(inside):
            continue
        camp = rasterize([row.geometry], out_shape=values.shape, transform=GRID.transform).astype(bool)
        prospect = rasterize(inside.geometry, out_shape=values.shape, transform=GRID.transform).astype(bool)
        within = np.ma.masked_array(values.data, mask=~camp)
        held += intensity[prospect].sum()
        top += top_cells_sum(within, intensity, int(prospect.sum()))
        drawn += int(inside["known_deps"].sum())
        top_drawn += top_cells_hold(within, GRID, xy, float(inside["area_km2"].sum()))
    return (held / top if top else 1.0), drawn - top_drawn


def main() -> None:
    lines = ["# The work list's tier rule on an independent generator", "",
             f"{SEEDS} seeds per deposit model; best {BEST} against the surface's own top cells of the same area.", "",
             "| deposit model's sizes | rule | expected held / top cells' (mean, worst) | deposits reach the top "
             "cells' |", "|---|---|---|---|"]
    worlds = [world(seed) for seed in range(SEEDS)]
    models = [(model, target_sizes(model, GRID.pixel_area, AREA_SHARE * SIDE * SIDE * GRID.pixel_area))
              for model in map(model_by_id, MODELS)]
    for model, sizes in models:
        for rule, judged in ((f"tier by tier (the best {JUDGED} from the smallest tier holding them)", JUDGED),
                             (f"one tier holding all {sizes.count} (the rule replaced)", sizes.count)):
            figures = [best_ten(values, intensity, xy, sizes, judged) for values, intensity, xy in worlds]
            ratios = [ratio for ratio, _ in figures]
            lines.append(f"| {model['name']} | {rule} | {np.mean(ratios):.3f}, {min(ratios):.3f} | "
                         f"{sum(reached for _, reached in figures)} of {SEEDS} |")
            print(lines[-1], flush=True)
    lines += ["", f"Camps: the best {CAMPS} camps' prospects against each camp's own top cells of the same area, "
              f"{CAMP_SEEDS} seeds.", "",
              "| deposit model's sizes | surface | a prospect's holes | expected held / top cells' (mean, worst) | "
              "drawn deposits less the top cells' (mean, lowest) |", "|---|---|---|---|---|"]
    for model, sizes in models:
        if not sizes.prospect_km2:
            continue
        for noise in NOISE:
            for rule, fill in (("kept (the rule)", False), ("filled (the rule replaced)", True)):
                figures = [camps(classed(values, noise, seed), intensity, xy, sizes, fill)
                           for seed, (values, intensity, xy) in enumerate(worlds[:CAMP_SEEDS])]
                ratios = [ratio for ratio, _ in figures]
                gaps = [gap for _, gap in figures]
                lines.append(f"| {model['name']} | noise {noise:g}, {CLASSES} classes | {rule} | "
                             f"{np.mean(ratios):.4f}, {min(ratios):.4f} | {np.mean(gaps):+.3f}, {min(gaps):+.3f} |")
                print(lines[-1], flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(OUT, "\n".join(lines) + "\n")
    print(f"written {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
