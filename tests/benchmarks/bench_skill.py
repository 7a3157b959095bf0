"""Skill benchmark on districts of another generator: does "best out of fold" beat the equal-weight rank mean and
the short scripts (short_scripts.py) on the same blocks, on districts built like the ones issue 40 keeps out of
the repository (many units, a few dozen to a few hundred clustered deposits, a layer that runs against the
deposit model's favourable side)?

The generator here is written for this benchmark and NOT used while developing the models: its districts are
held out (seed SEED; the first run's figures were recorded in docs/results.md before any change they could
shape). Each district, seeded by its index, is a 400 x 400 grid of 125 m pixels (50 km square, EPSG:32611):
- geology: N units (15-110) as folded strata (bands of 0.2-2 km across a warped strike coordinate, each band a
  unit drawn with repetition) cut by 2-4 granite plutons (two more units); 2-4 of the strata's units host;
- faults: 2-3 regional faults along strike across the district and 30-80 splays of 1-8 km branching from them;
- magnetics: higher over a "mafic" group of units (half the hosts and as many others) plus noise at 2 km;
- EM conductivity: noise at 1.5 km; in about half the districts the deposits lie where it is low, though the
  geologist calls "high" favourable (issue 40's EM layers at AUC 0.42-0.45);
- till geochemistry: a lognormal background with a halo of 1-2 km around about 60 % of the deposits (the rest
  blind), without data over about 10 % of the district in blotches;
- gravity: noise;
and deposits (24-250, each district its own count) in camps: camp centres drawn by the generator's
favourability, deposits drawn near their camp (within 3 km) by its square. The favourability's logit: host
units, proximity to any fault (1 km) and to a regional one (5 km), the host-fault interaction, magnetics' middle
band (not its extremes: no monotone response) and the EM's sign.

Rows per district, all out of fold on calibrate's blocks (5 folds of 10 km, seed 0) and scored on the same cells
by calibrate's own scoring: Lodestar "best" (its choice, made on the folds it is scored on: the ensemble unless one
model beats it in every fold; before 2026-11-29's seventh session the highest of five out-of-fold AUCs), "best"
with the choice made out of fold (each fold takes the surface of the model the same rule picks on the other folds)
and its logistic regression alone (no choice among models); the equal-weight rank mean of the geologist's
memberships (host units named with two wrong ones, the ordered layers on their "favourable" side,
EM "high"); the two short scripts. Writes build/bench/skill.md, and build/bench/skill.json the figures the README
quotes. Run:
`.venv/bin/python tests/benchmarks/run_all.py skill` (LODESTAR_SKILL_DISTRICTS changes the count).
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from affine import Affine
from pyproj import CRS
from rasterio.features import rasterize
from scipy.ndimage import distance_transform_edt, gaussian_filter
from shapely.geometry import LineString

from lodestar.plugin.favourability.baseline import equal_weight_ranks
from lodestar.plugin.favourability.calibration import _choose, _losses_allowed, _score, calibrate, deposit_cells
from lodestar.plugin.favourability.measured import CATEGORICAL, ORDERED, MeasuredLayer
from lodestar.plugin.favourability.models import LABELS
from lodestar.plugin.files import write_text_atomic
from lodestar.plugin.raster_io import RasterGrid

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
import short_scripts  # noqa: E402  (the short scripts every fitted surface is scored beside)
from readme_figures import write_figures  # noqa: E402  (tests/: on the path through run_all)

ROOT = HERE.parents[1]
OUT = ROOT / "build" / "bench" / "skill.md"
SEED = 31_337
DISTRICTS = int(os.environ.get("LODESTAR_SKILL_DISTRICTS", "12"))
SIDE = 400
PIXEL_M = 125.0
RANK_MEAN = "equal-weight rank mean (geologist's memberships)"


def smooth(rng: np.random.Generator, sigma_m: float) -> np.ndarray:
    field = gaussian_filter(rng.standard_normal((SIDE, SIDE)), sigma_m / PIXEL_M, mode="reflect")
    return (field - field.mean()) / field.std()


def geology(rng: np.random.Generator, n_units: int, strike: float) -> np.ndarray:
    """Unit codes: folded strata across a warped strike coordinate, then plutons (codes n_units + 1, + 2)."""
    rows, cols = np.mgrid[0:SIDE, 0:SIDE] * PIXEL_M
    across = cols * np.cos(strike) - rows * np.sin(strike)
    along = cols * np.sin(strike) + rows * np.cos(strike)
    across = across + 2500.0 * np.sin(2 * np.pi * along / rng.uniform(15_000, 40_000)) + 1500.0 * smooth(rng, 6000)
    edges = np.cumsum(rng.uniform(200.0, 2000.0, 400)) + across.min()
    band = np.searchsorted(edges, across)
    codes = rng.integers(1, n_units + 1, band.max() + 1)
    units = codes[band].astype(float)
    for _ in range(rng.integers(2, 5)):
        r0, c0 = rng.uniform(0, SIDE * PIXEL_M, 2)
        radius = rng.uniform(2000, 6000) * (1 + 0.2 * smooth(rng, 3000))
        units[np.hypot(rows - r0, cols - c0) < radius] = n_units + rng.integers(1, 3)
    return units


def faults(rng: np.random.Generator, strike: float) -> tuple[list, list]:
    """(regional faults, splays) as map-pixel LineStrings (col, row)."""
    regional, splays = [], []
    for _ in range(rng.integers(2, 4)):
        r0, c0 = rng.uniform(0.15, 0.85, 2) * SIDE
        angle = strike + rng.normal(0, 0.15)
        d = np.array([np.sin(angle), np.cos(angle)]) * SIDE * 1.5
        regional.append(LineString([(c0 - d[0], r0 - d[1]), (c0 + d[0], r0 + d[1])]))
    for _ in range(rng.integers(30, 81)):
        parent = regional[rng.integers(len(regional))]
        start = parent.interpolate(rng.uniform(0, 1), normalized=True)
        angle = rng.uniform(0, np.pi) if rng.uniform() < 0.5 else strike + rng.normal(0.5, 0.2)
        length = rng.uniform(1000, 8000) / PIXEL_M
        splays.append(LineString([(start.x, start.y), (start.x + length * np.sin(angle),
                                                       start.y + length * np.cos(angle))]))
    return regional, splays


def distance_m(lines: list) -> np.ndarray:
    burnt = rasterize(((g, 1) for g in lines), out_shape=(SIDE, SIDE), fill=0, all_touched=True, dtype="uint8")
    return distance_transform_edt(burnt == 0) * PIXEL_M


def district(index: int):
    """(grid, measured layers, deposit points, named host units, description) of district `index`."""
    rng = np.random.default_rng([SEED, index])
    grid = RasterGrid(Affine(PIXEL_M, 0.0, 400_000.0, 0.0, -PIXEL_M, 4_400_000.0), SIDE, SIDE, CRS.from_epsg(32611))
    n_units, strike = int(rng.integers(15, 111)), rng.uniform(0, np.pi)
    units = geology(rng, n_units, strike)
    strata = np.unique(units[units <= n_units]).astype(int)
    hosts = rng.choice(strata, int(rng.integers(2, 5)), replace=False)
    mafic = np.concatenate([hosts[: max(1, len(hosts) // 2)], rng.choice(strata, len(hosts), replace=False)])
    regional, splays = faults(rng, strike)
    to_fault, to_regional = distance_m(regional + splays), distance_m(regional)
    magnetics = 1.2 * gaussian_filter(np.isin(units, mafic).astype(float), 2) + smooth(rng, 2000)
    em = smooth(rng, 1500)
    em_sign = -1.0 if rng.uniform() < 0.5 else 0.5
    host = np.isin(units, hosts).astype(float)
    near = np.exp(-to_fault / 1000.0)
    logit = (2.0 * host + 2.0 * near + 1.0 * np.exp(-to_regional / 5000.0) + 1.5 * host * near
             - 0.6 * (magnetics - 0.8) ** 2 + 0.7 * em_sign * em)
    weight = np.exp(logit - logit.max()).ravel()
    n_deposits = int(rng.integers(24, 251))
    camps = rng.choice(weight.size, max(4, n_deposits // 6), replace=False, p=weight / weight.sum())
    rows, cols = np.divmod(np.arange(weight.size), SIDE)
    picked = []
    for camp in rng.choice(camps, n_deposits):
        nearby = np.hypot(rows - rows[camp], cols - cols[camp]) * PIXEL_M < 3000.0
        p = np.where(nearby, weight ** 2, 0.0)
        picked.append(rng.choice(weight.size, p=p / p.sum()))
    picked = np.array(picked)
    d_rows, d_cols = np.divmod(picked, SIDE)
    halo = np.zeros((SIDE, SIDE))
    shows = rng.uniform(size=n_deposits) < 0.6
    np.add.at(halo, (d_rows[shows], d_cols[shows]), rng.lognormal(0, 0.5, int(shows.sum())))
    halo = gaussian_filter(halo, rng.uniform(1000, 2000) / PIXEL_M) * 40.0
    till = np.exp(0.5 * smooth(rng, 1000)) + halo
    gaps = smooth(rng, 3000) > 1.28
    x, y = grid.pixel_to_map(d_cols + rng.uniform(0.05, 0.95, n_deposits),
                             d_rows + rng.uniform(0.05, 0.95, n_deposits))
    whole = np.zeros((SIDE, SIDE), dtype=bool)
    legend = {code: f"unit {code}" for code in range(1, n_units + 3)}
    layers = [
        MeasuredLayer(f"geology ({n_units + 2} units)", CATEGORICAL, np.ma.masked_array(units, mask=whole), "unit", "",
                      legend),
        MeasuredLayer("magnetics", ORDERED, np.ma.masked_array(300.0 * magnetics, mask=whole.copy()), "nT", "high", {}),
        MeasuredLayer("EM conductivity", ORDERED, np.ma.masked_array(np.exp(em), mask=whole.copy()), "mS/m", "high",
                      {}),
        MeasuredLayer("till gold", ORDERED, np.ma.masked_array(np.where(gaps, np.nan, till), mask=gaps), "ppb", "high",
                      {}),
        MeasuredLayer("gravity", ORDERED, np.ma.masked_array(smooth(rng, 4000), mask=whole.copy()), "mGal", "high", {}),
        MeasuredLayer("distance to faults", ORDERED, np.ma.masked_array(to_fault, mask=whole.copy()), "m", "low", {}),
    ]
    wrong = rng.choice(np.setdiff1d(strata, hosts), 2, replace=False)
    named = np.concatenate([hosts, wrong])
    text = (f"{n_deposits} deposits in {len(camps)} camps, {n_units + 2} units ({len(hosts)} hosts), "
            f"EM {'against' if em_sign < 0 else 'with'} the deposits")
    return grid, layers, list(zip(x.tolist(), y.tolist())), named, text


def rank_mean(layers: list, named) -> np.ma.MaskedArray:
    """The geologist's equal-weight rank mean: named units 1 else 0, ordered layers on their favourable side."""
    maps = {}
    for layer in layers:
        if layer.categorical:
            maps[layer.name] = np.ma.masked_array(np.isin(layer.values.filled(-1), named).astype(float),
                                                  mask=np.ma.getmaskarray(layer.values))
        else:
            maps[layer.name] = -layer.values if layer.favourable == "low" else layer.values
    return equal_weight_ranks(maps)


def chosen_out_of_fold(cal, counts: np.ndarray, valid: np.ndarray) -> np.ma.MaskedArray:
    """"Best" with the choice made out of fold: each fold takes the out-of-fold surface of the model (or ensemble)
    that calibrate's own rule (`_choose`, with the losses the whole run allows) picks on the other folds, so no fold's
    figure picked its own model."""
    fold = cal.folds.fold[valid]
    data = SimpleNamespace(fold=fold, counts=counts[valid])
    runs = {name: {"oof": surface.filled(0)[valid]} for name, surface in cal.surfaces.items()}
    folds = list(np.unique(fold))
    allowed = _losses_allowed(len([k for k in folds if data.counts[fold == k].sum() > 0]))
    pooled = np.zeros(valid.shape)
    for k in folds:
        name = _choose(runs, data, [j for j in folds if j != k], allowed)[0]
        held = cal.folds.fold == k
        pooled[held] = cal.surfaces[name].filled(0)[held]
    return np.ma.masked_array(pooled, mask=~valid)


def score_district(index: int) -> dict:
    grid, layers, xy, named, text = district(index)
    start = time.perf_counter()
    cal = calibrate(layers, grid, xy, "best", baselines={RANK_MEAN: rank_mean(layers, named)})
    seconds = time.perf_counter() - start
    valid = np.logical_or.reduce([~np.ma.getmaskarray(layer.values) for layer in layers])
    counts = deposit_cells(xy, grid, valid, [])
    rows = {row["surface"]: row for row in cal.comparison}
    out = {"district": index + 1, "what": text, "chosen": LABELS[cal.method], "seconds": seconds,
           "best": rows[f"{LABELS[cal.method]}, out of fold"], "logistic": rows[f"{LABELS['logistic']}, out of fold"],
           "rank mean": rows[RANK_MEAN],
           "fair": _score("best, chosen out of fold", "out of fold", chosen_out_of_fold(cal, counts, valid), grid, xy,
                          valid, None)}
    for script, label in short_scripts.SCRIPTS.items():
        surface = short_scripts.out_of_fold(script, layers, valid, counts, cal.folds.fold)
        out[f"script {script}"] = _score(label, "out of fold", surface, grid, xy, valid, None)
    return out


COLUMNS = (("best", "Lodestar best"), ("fair", "Lodestar best, chosen out of fold"), ("logistic", "Lodestar logistic"),
           ("rank mean", "rank mean"), ("script logistic", "script: logistic"), ("script boosting", "script: boosting"))


def report(results: list[dict]) -> str:
    head = " | ".join(label for _, label in COLUMNS)
    lines = ["## Skill on districts of another generator (held out)", "",
             f"{len(results)} districts of `bench_skill.py`'s generator (seed {SEED}), each cell: out-of-fold AUC "
             "/ deposits in the top 10 % of the area; all on calibrate's blocks (5 folds of 10 km, seed 0).", "",
             f"| district | what | chosen | {head} | seconds |", "|---|---|---|" + "---:|" * (len(COLUMNS) + 1)]
    for r in results:
        cells = " | ".join(f"{r[key]['auc']:.3f} / {r[key]['capture']['0.1']:.1f}" for key, _ in COLUMNS)
        lines.append(f"| {r['district']} | {r['what']} | {r['chosen']} | {cells} | {r['seconds']:.0f} |")
    lines.append("")
    for mine, label in COLUMNS[:3]:
        for key, other in COLUMNS[3:]:
            gaps = np.array([r[mine]["auc"] - r[key]["auc"] for r in results])
            lines.append(f"- {label} against {other}: ahead on {int((gaps > 0).sum())} of {len(gaps)} districts, "
                         f"mean AUC difference {gaps.mean():+.3f} (lowest {gaps.min():+.3f}).")
    return "\n".join(lines) + "\n"


def main() -> None:
    results = []
    for index in range(DISTRICTS):
        result = score_district(index)
        results.append(result)
        print(result["district"], result["what"], result["chosen"], flush=True)
    text = report(results)
    print(text, flush=True)
    write_text_atomic(OUT, text)
    print(f"written {OUT.relative_to(ROOT)} and {write_figures('skill', {}, quoted(results)).relative_to(ROOT)}")


def quoted(results: list[dict]) -> dict:
    """The figures the README quotes: for each of Lodestar's columns against each other ('skill.best.rank_mean'),
    the districts it is ahead on (`.ahead`) and the mean AUC difference (`.mean`); the districts' count."""
    figures = {"skill.districts": len(results)}
    for mine, _ in COLUMNS[:3]:
        for key, _ in COLUMNS[3:]:
            gaps = np.array([r[mine]["auc"] - r[key]["auc"] for r in results])
            name = f"skill.{mine}.{key.replace(' ', '_')}"
            figures.update({f"{name}.ahead": int((gaps > 0).sum()), f"{name}.mean": float(gaps.mean())})
    return figures
