#!/usr/bin/env python3
"""Generated worlds, one per deposit model of the knowledge base (issue 57): a `lodestar-case/1` folder whose
deposits follow the type's textbook signature, for tests and for benchmarking knowledge-driven surfaces.

A world is SIZE x SIZE cells of PIXEL_M metres in a projected CRS (UTM 33N) and holds:
- a geological map (categorical GeoTIFF and legend CSV) of irregular units named with the model's host rocks, its
  source rock and other rocks that none of its words match;
- faults (a GeoPackage of lines);
- geochemistry, one layer per element named by it ("Cu ppm"): the model's pathfinders, its depleted elements and
  distractor elements none of its lists name; one pathfinder layer answers weakly;
- geophysics, one layer per property of the model's signature, named plainly ("Bouguer gravity (mGal)"), high or low
  over the deposits as the signature says, and one property outside the signature that is only background;
- an alteration index when the model's first critical item is alteration;
- deposits.gpkg: the truth. Deposits are drawn where host rock, closeness to a fault and closeness to the source rock
  coincide (with noise); a few are blind (no geochemical dispersion: under cover), and every signal has noise.
The truth reads the model's rocks, elements and geophysical signature, never its favourability weights or reaches
(`favourability`), so a surface built from those is scored on ground it was not fitted to. Deterministic: the same
model and seed give the same files.

Run: `python scripts/deposit_worlds.py OUT [--model ID] [--seed 57] [--size 300]`.
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
import zlib
from pathlib import Path

import numpy as np
import rasterio
from affine import Affine
from scipy import ndimage

ROOT = Path(__file__).resolve().parents[1]
CRS = "EPSG:32633"
ORIGIN = (400000.0, 6600000.0)  # the world's north-west corner in UTM 33N
PIXEL_M = 100.0
SIZE = 300
DEPOSITS = 14
BLIND = 3
GEOPHYSICS_NAMES = {
    "magnetics": "total magnetic intensity (nT)", "gravity": "Bouguer gravity (mGal)",
    "radiometric_k": "radiometric K (%)", "radiometric_th": "radiometric eTh (ppm)",
    "radiometric_u": "radiometric eU (ppm)", "conductivity": "EM conductivity (mS/m)",
    "chargeability": "IP chargeability (mV/V)",
}
ALTERATION_NAMES = {
    "hydrothermal_alteration": "AlOH (sericite) index", "argillic_alteration": "kaolinite index",
    "silicification": "TIR quartz index", "propylitic_alteration": "MgOH (chlorite) index",
    "iron_oxide": "ferric iron index",
}
OTHER_ROCKS = ("alluvium", "quartzite", "conglomerate", "marl", "phyllite", "granulite", "chert", "andesite",
               "anorthosite", "gneiss", "limestone", "sandstone", "basalt", "granite")
"""Rocks a world's other units are named from: those none of the model's host or source words match."""
DISTRACTOR_ELEMENTS = ("Ti", "Sr", "Zr", "Y", "Rb", "Ga", "V", "Ce", "La", "Th", "Cr", "Ni", "Mn", "Co")
"""Elements a world's distractor layers measure: those none of the model's lists name."""
HALO_M = {"geochemistry": 900.0, "geophysics": 700.0, "alteration": 600.0}
"""How far each kind of signal reaches around a deposit (Gaussian sigma in metres): stream and soil dispersion
spreads further than a body's geophysical response or its alteration."""


def model_seed(model_id: str, seed: int) -> int:
    return (zlib.crc32(model_id.encode()) + 1009 * seed) % (2 ** 32)


def smooth(rng: np.random.Generator, shape: tuple, scale_px: float) -> np.ndarray:
    """A smooth random field of unit spread."""
    field = ndimage.gaussian_filter(rng.standard_normal(shape), scale_px, mode="reflect")
    return (field - field.mean()) / (field.std() + 1e-12)


def _plain(words) -> list[str]:
    return [str(w) for w in words]


def other_rocks(model: dict, count: int) -> list[str]:
    """Rock names none of the model's host or source words match (as the surface matches them)."""
    from lodestar.plugin.tools.lithology_words import matched_units

    words = _plain(model.get("favourable_units", [])) + _plain(model.get("source_rocks", []))
    free = [rock for rock in OTHER_ROCKS if not matched_units({1: rock}, words)]
    return free[:count]


def distractors(model: dict, count: int) -> list[str]:
    named = {e.lower() for key in ("commodities", "pathfinders", "depleted") for e in model.get(key, [])}
    return [e for e in DISTRACTOR_ELEMENTS if e.lower() not in named][:count]


def geology(rng: np.random.Generator, model: dict, size: int) -> tuple[np.ndarray, dict, set, set]:
    """(unit codes, legend {code: name}, host codes, source codes): irregular units from warped Voronoi cells."""
    hosts = _plain(model.get("favourable_units", []))[:2]
    sources = _plain(model.get("source_rocks", []))[:1]
    others = other_rocks(model, 4)
    names = [f"{rock.capitalize()} unit" for rock in hosts + sources + others]
    seeds = rng.uniform(0, size, (len(names) * 2, 2))
    rows, cols = np.mgrid[0:size, 0:size].astype(float)
    rows += 12 * smooth(rng, (size, size), size / 10)
    cols += 12 * smooth(rng, (size, size), size / 10)
    nearest = np.argmin([(rows - r) ** 2 + (cols - c) ** 2 for r, c in seeds], axis=0)
    codes = (nearest % len(names) + 1).astype(np.int16)
    legend = {i + 1: name for i, name in enumerate(names)}
    host_codes = set(range(1, len(hosts) + 1))
    source_codes = set(range(len(hosts) + 1, len(hosts) + len(sources) + 1))
    return codes, legend, host_codes, source_codes


def faults(rng: np.random.Generator, size: int, count: int = 5) -> list[tuple]:
    """Straight faults across the world, as ((row, col), (row, col)) end points in cells."""
    out = []
    for _ in range(count):
        angle = rng.uniform(0, np.pi)
        r0, c0 = rng.uniform(0.15 * size, 0.85 * size, 2)
        dr, dc = np.sin(angle) * size, np.cos(angle) * size
        out.append(((r0 - dr, c0 - dc), (r0 + dr, c0 + dc)))
    return out


def fault_distance_m(lines: list, size: int) -> np.ndarray:
    rows, cols = np.mgrid[0:size, 0:size].astype(float)
    best = np.full((size, size), np.inf)
    for (r0, c0), (r1, c1) in lines:
        dr, dc = r1 - r0, c1 - c0
        t = np.clip(((rows - r0) * dr + (cols - c0) * dc) / (dr * dr + dc * dc), 0, 1)
        best = np.minimum(best, np.hypot(rows - r0 - t * dr, cols - c0 - t * dc))
    return best * PIXEL_M


def draw_deposits(rng: np.random.Generator, codes, host_codes, source_codes, distance, size: int) -> list[tuple]:
    """Deposit cells (row, col): drawn by a truth of host rock x closeness to a fault x closeness to the source rock,
    with noise, at least 1.5 km apart."""
    host = np.where(np.isin(codes, list(host_codes)), 1.0, 0.08)
    if source_codes:
        to_source = ndimage.distance_transform_edt(~np.isin(codes, list(source_codes))) * PIXEL_M
        source = 0.5 + np.exp(-to_source / 3000.0)
    else:
        source = np.ones_like(host)
    truth = host * np.exp(-distance / 1500.0) * source * np.exp(0.35 * smooth(rng, (size, size), 6))
    margin = 10
    truth[:margin], truth[-margin:], truth[:, :margin], truth[:, -margin:] = 0, 0, 0, 0
    weights = (truth ** 3).ravel()
    picked: list[tuple] = []
    for cell in rng.choice(size * size, size=50 * DEPOSITS, p=weights / weights.sum()):
        r, c = divmod(int(cell), size)
        if all(np.hypot(r - pr, c - pc) * PIXEL_M >= 1500 for pr, pc in picked):
            picked.append((r, c))
        if len(picked) == DEPOSITS:
            break
    return picked


def halo(cells: list, size: int, sigma_m: float, strengths=None) -> np.ndarray:
    rows, cols = np.mgrid[0:size, 0:size].astype(float)
    out = np.zeros((size, size))
    sigma = sigma_m / PIXEL_M
    for i, (r, c) in enumerate(cells):
        out += (1.0 if strengths is None else strengths[i]) * np.exp(-((rows - r) ** 2 + (cols - c) ** 2)
                                                                     / (2 * sigma ** 2))
    return out


def write_tif(path: Path, data: np.ndarray, nodata=None) -> None:
    transform = Affine(PIXEL_M, 0, ORIGIN[0], 0, -PIXEL_M, ORIGIN[1])
    with rasterio.open(path, "w", driver="GTiff", width=data.shape[1], height=data.shape[0], count=1,
                       dtype=data.dtype, crs=CRS, transform=transform, nodata=nodata) as dst:
        dst.write(data, 1)


def _map_xy(row: float, col: float) -> tuple[float, float]:
    return ORIGIN[0] + (col + 0.5) * PIXEL_M, ORIGIN[1] - (row + 0.5) * PIXEL_M


def write_lines(path: Path, lines: list, size: int) -> None:
    import fiona
    import geopandas as gpd
    from shapely.geometry import LineString, box

    scene = box(*_map_xy(size - 0.5, -0.5), *_map_xy(-0.5, size - 0.5))
    geometries = [LineString([_map_xy(*a), _map_xy(*b)]).intersection(scene) for a, b in lines]
    geometries = [g for g in geometries if not g.is_empty]
    frame = gpd.GeoDataFrame({"name": [f"F{i + 1}" for i in range(len(geometries))]}, geometry=geometries, crs=CRS)
    with fiona.Env(OGR_CURRENT_DATE="2000-01-01T00:00:00.000Z"):
        frame.to_file(path, driver="GPKG", layer="faults")


def write_points(path: Path, cells: list, blind: set) -> None:
    import fiona
    import geopandas as gpd
    from shapely.geometry import Point

    frame = gpd.GeoDataFrame({"name": [f"D{i + 1}" for i in range(len(cells))],
                              "blind": [int(i in blind) for i in range(len(cells))]},
                             geometry=[Point(*_map_xy(r, c)) for r, c in cells], crs=CRS)
    with fiona.Env(OGR_CURRENT_DATE="2000-01-01T00:00:00.000Z"):
        frame.to_file(path, driver="GPKG", layer="deposits")


def question_for(model: dict) -> str:
    return (f"Where are {model['name']} deposits likely in this region? Answer: A. Yes, there are targets worth "
            "exploring B. No, nothing stands out.")


def make_world(folder, model: dict, seed: int = 57, size: int = SIZE, question: str | None = None,
               elements=None) -> Path:
    """Write the world of `model` into `folder` (made; must be empty or absent) and return it. `question`: the
    case's question (default: one naming the model's type); `elements`: the geochemistry layers' elements (default:
    the model's first pathfinders, its depleted elements and two distractors)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(model_seed(model["id"], seed))
    codes, legend, host_codes, source_codes = geology(rng, model, size)
    lines = faults(rng, size)
    distance = fault_distance_m(lines, size)
    deposits = draw_deposits(rng, codes, host_codes, source_codes, distance, size)
    blind = set(rng.choice(len(deposits), size=min(BLIND, len(deposits) - 1), replace=False).tolist())
    seen = [cell for i, cell in enumerate(deposits) if i not in blind]
    layers = [{"path": "geology.tif", "role": "geological_map", "name": "geological map",
               "legend": "geology_legend.csv"},
              {"path": "faults.gpkg", "role": "structure", "name": "mapped faults"}]
    write_tif(folder / "geology.tif", codes, nodata=0)
    with open(folder / "geology_legend.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["value", "name"])
        writer.writerows(sorted(legend.items()))
    write_lines(folder / "faults.gpkg", lines, size)
    pathfinders = list(model.get("pathfinders", []))
    depleted = list(model.get("depleted", []))
    if elements is None:
        elements = pathfinders[:4] + depleted[:1] + distractors(model, 2)
    weak = next((e for e in elements if e in pathfinders[1:]), None)  # one pathfinder answers weakly
    for element in elements:
        background = np.exp(0.6 * smooth(rng, (size, size), 8) + 0.25 * rng.standard_normal((size, size)))
        contrast = 0.6 if element == weak else 3.0
        if element in depleted:
            values = background * np.exp(-1.2 * halo(seen, size, HALO_M["geochemistry"]))
        elif element in pathfinders or element in model.get("commodities", []):
            values = background * np.exp(contrast * halo(seen, size, HALO_M["geochemistry"]))
        else:
            values = background
        name = f"{element}_ppm"
        write_tif(folder / f"{name}.tif", (10.0 * values).astype(np.float32))
        layers.append({"path": f"{name}.tif", "role": "geochemistry", "name": f"{element} ppm"})
    signature = {entry["property"]: entry["sign"] for entry in model.get("geophysics", [])}
    outside = next(p for p in GEOPHYSICS_NAMES if p not in signature)
    for prop in list(signature) + [outside]:
        field = smooth(rng, (size, size), 12) + 0.2 * rng.standard_normal((size, size))
        if prop in signature:  # geophysics sees through cover: blind deposits answer too
            field += (1.0 if signature[prop] == "high" else -1.0) * 2.5 * halo(deposits, size, HALO_M["geophysics"])
        file = f"geophysics_{prop}.tif"
        write_tif(folder / file, field.astype(np.float32))
        layers.append({"path": file, "role": "geophysics", "name": GEOPHYSICS_NAMES[prop]})
    core = next((i for i in model.get("evidence", []) if i["level"] == "critical"), None)
    altered = [r for r in (core or {}).get("roles", []) if r in ALTERATION_NAMES]
    if altered:
        index = 0.3 * smooth(rng, (size, size), 6) + 0.15 * rng.standard_normal((size, size))
        index += 2.0 * halo(seen, size, HALO_M["alteration"])
        write_tif(folder / "alteration.tif", index.astype(np.float32))
        layers.append({"path": "alteration.tif", "role": altered[0], "name": ALTERATION_NAMES[altered[0]]})
    write_points(folder / "deposits.gpkg", deposits, blind)
    question = question or question_for(model)
    case = {"format": "lodestar-case/1", "id": f"world-{model['id']}", "question": question,
            "choices": {"A": "Yes, there are targets worth exploring", "B": "No, nothing stands out"},
            "answer": "A", "layers": layers, "deposits": "deposits.gpkg|layername=deposits"}
    (folder / "case.json").write_text(json.dumps(case, indent=2) + "\n", encoding="utf-8")
    return folder


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--model", help="one model id (default: every model of the knowledge base)")
    parser.add_argument("--seed", type=int, default=57)
    parser.add_argument("--size", type=int, default=SIZE)
    args = parser.parse_args(argv)
    package = ROOT / "build" / "testpkg"  # the checkout as the `lodestar` package, as tests/conftest.py links it
    if not (package / "lodestar").exists():
        package.mkdir(parents=True, exist_ok=True)
        (package / "lodestar").symlink_to(ROOT, target_is_directory=True)
    sys.path.insert(0, str(package))
    from lodestar.plugin.reason.knowledge import load_knowledge

    models = [m for m in load_knowledge() if args.model in (None, m["id"])]
    if not models:
        print(f"No deposit model {args.model!r}.", file=sys.stderr)
        return 2
    for model in models:
        print(make_world(args.out / model["id"], model, args.seed, args.size))
    return 0


if __name__ == "__main__":
    sys.exit(main())
