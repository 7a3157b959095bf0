"""Deterministic generator of synthetic `lodestar-case/1` cases in the spirit of MineBench.

Each case is one small region (UTM, 30 m pixels) with a categorical geological map (units, folded
and faulted contacts, intrusions, alluvium), alteration index maps (float32 with nodata) and
sometimes MineBench-style colour renderings (coloured anomaly over a grey background with a colour
bar near an edge), fault lines, layers of different CRS, resolution and extent, and known deposits.

Kinds
  porphyry        positive: potassic/phyllic core with silica and iron oxide, argillic shell,
                  propylitic halo, centred on a porphyry stock; deposits in the core.
  epithermal      positive: silica ledges along a fault in volcanic rocks with an argillic halo and
                  distal propylitic alteration; deposits on the ledge.
  misaligned      negative: anomalies in several layers that never coincide.
  lithology_clay  negative: clay (AlOH / argillic) high over a clay-rich unit, nothing else.
  single_layer    negative: one strong anomaly in one layer only.
  barren          negative: background texture and lithology only.

Positives also carry distractors (a clay-rich unit, a lone anomaly elsewhere); a `hard` variant
makes positives weaker, nearer an edge and partly buried under alluvium, turns a single-layer
negative into a propylitic contact ring around a barren pluton, and stripes one index layer.
A suite (`make_suite`) is half positive, half negative (SUITE_MIX), about a tenth of it plain PNG
images with no georeferencing (MineBench style), HARD_SHARE of it hard, listed in suite.csv.

Same seed and arguments give byte-identical files. Importable (`make_case`, `make_suite`) and
runnable: `python scripts/synthetic_cases.py OUT_FOLDER [N] [SEED]`.
"""
from __future__ import annotations

import csv
import json
import math
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import rasterio
from affine import Affine
from PIL import Image
from pyproj import CRS, Transformer
from rasterio.features import rasterize
from rasterio.warp import Resampling, reproject, transform_bounds
from scipy import ndimage
from shapely.geometry import LineString, mapping

FORMAT = "lodestar-case/1"
POSITIVE_KINDS = ("porphyry", "epithermal")
NEGATIVE_KINDS = ("misaligned", "lithology_clay", "single_layer", "barren")
KINDS = POSITIVE_KINDS + NEGATIVE_KINDS
NODATA = -9999.0
PIXEL_M = 30.0

REGIONS = (
    ("Atacama, northern Chile", -69.05, -22.35),
    ("Great Basin, Nevada", -116.85, 39.55),
    ("Kerman belt, Iran", 56.05, 29.95),
    ("Gangdese belt, southern Tibet", 90.65, 29.65),
    ("Sonora, Mexico", -110.25, 30.15),
    ("Lachlan fold belt, New South Wales", 148.95, -33.25),
    ("South Gobi, Mongolia", 106.85, 43.05),
    ("Arizona copper belt", -110.75, 32.45),
)

# Index layers: file stem, role, display name, lithology response keys.
INDEX_LAYERS = {
    "aloh": ("hydrothermal_alteration", "ASTER AlOH (sericite) index"),
    "argillic": ("argillic_alteration", "kaolinite-alunite index"),
    "silica": ("silicification", "ASTER TIR quartz index"),
    "propylitic": ("propylitic_alteration", "MgOH chlorite-epidote index"),
    "ferric": ("iron_oxide", "ferric iron index"),
}

# Stratigraphic columns (oldest first): code, name, lithology, index offsets (lithology response).
SEDIMENTARY_UNITS = (
    ("Pzm", "Palaeozoic metasediments", "schist and phyllite", {"aloh": 0.012}),
    ("Kls", "Cretaceous limestone", "limestone", {"propylitic": 0.035}),
    ("Kss", "Cretaceous sandstone", "quartz sandstone", {"silica": 0.02}),
    ("Jsh", "Jurassic shale", "shale and mudstone", {"aloh": 0.015, "argillic": 0.01}),
    ("Trb", "Triassic red beds", "red sandstone", {"ferric": 0.03}),
)
VOLCANIC_UNITS = (
    ("Tba", "Tertiary basaltic andesite", "basaltic andesite", {"propylitic": 0.015}),
    ("Tan", "Tertiary andesite", "andesite flows and breccia", {"propylitic": 0.01, "ferric": 0.008}),
    ("Tdt", "Tertiary dacitic tuff", "dacite tuff", {"aloh": 0.008}),
    ("Trh", "Tertiary rhyolite ignimbrite", "rhyolite ignimbrite", {"silica": 0.015}),
)
CLAY_UNIT = ("Tvc", "Tertiary lacustrine claystone", "kaolinitic claystone and tuffaceous mudstone", {})
STOCK_UNIT = ("Tqmp", "Tertiary quartz monzonite porphyry", "quartz monzonite porphyry", {})
PLUTON_UNIT = ("Kgr", "Cretaceous granite", "biotite granite", {"silica": 0.008})
ALLUVIUM_UNIT = ("Qal", "Quaternary alluvium", "gravel, sand and silt", {})

DEPOSIT_NAMES = ("Cerro Blanco", "La Colorada", "Santa Rosa", "El Alto", "Los Azules", "Quebrada Seca",
                 "Red Hill", "Copper Knob", "Silver Ridge", "Black Butte", "Kuh-e Sorkh", "Tsagaan Uul")

QUESTIONS = {
    "porphyry": (
        "Given the following remote-sensing images, can porphyry copper deposits be detected? "
        "Answer: A. Yes B. No.",
        "Given the geological map and alteration images of this area in the {region}, can porphyry Cu-Mo "
        "deposits be detected? Answer: A. Yes B. No.",
        "Do these images show evidence of a porphyry copper system with a mineable deposit? "
        "Answer: A. Yes B. No.",
    ),
    "epithermal": (
        "Given the following remote-sensing images, can epithermal gold deposits be detected? "
        "Answer: A. Yes B. No.",
        "Given the geological map and alteration images of this area in the {region}, can high-sulphidation "
        "epithermal Au-Ag deposits be detected? Answer: A. Yes B. No.",
        "Do these images show evidence of epithermal gold-silver mineralization? Answer: A. Yes B. No.",
    ),
    "generic": (
        "Given the following remote-sensing images, can deposits be detected? Answer: A. Yes B. No.",
        "Given the geological and hyperspectral images of this area in the {region}, can hydrothermal mineral "
        "deposits be detected? Answer: A. Yes B. No.",
    ),
}


# ----------------------------------------------------------------------------------------------
# Random fields

def smooth_noise(rng: np.random.Generator, shape: tuple[int, int], scale: float) -> np.ndarray:
    """Gaussian-smoothed white noise rescaled to zero mean and unit standard deviation."""
    field_ = ndimage.gaussian_filter(rng.standard_normal(shape), scale, mode="wrap")
    return (field_ - field_.mean()) / (field_.std() + 1e-12)


def texture(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Realistic multi-scale spatial texture (unit variance): broad trends, blotches and speckle."""
    t = 0.55 * smooth_noise(rng, shape, shape[0] / 10) + 0.6 * smooth_noise(rng, shape, 3.0)
    t += 0.35 * smooth_noise(rng, shape, 1.0)
    return t / t.std()


def gauss(x: np.ndarray, mu: float, sigma: float) -> np.ndarray:
    return np.exp(-0.5 * ((x - mu) / sigma) ** 2)


def segment_distance(cols, rows, p0, p1) -> tuple[np.ndarray, np.ndarray]:
    """Distance (pixels) of grid points to the segment p0-p1 and the position along it (0..1)."""
    (x0, y0), (x1, y1) = p0, p1
    dx, dy = x1 - x0, y1 - y0
    t = ((cols - x0) * dx + (rows - y0) * dy) / (dx * dx + dy * dy)
    tc = np.clip(t, 0, 1)
    return np.hypot(cols - (x0 + tc * dx), rows - (y0 + tc * dy)), t


# ----------------------------------------------------------------------------------------------
# The world: one UTM grid with every field of the case

@dataclass
class World:
    rng: np.random.Generator
    size: int
    region: tuple
    crs: CRS = field(init=False)
    transform: Affine = field(init=False)
    shape: tuple = field(init=False)
    units: list = field(default_factory=list)
    geology: np.ndarray = None
    faults: list = field(default_factory=list)  # (p0, p1) in world pixel coordinates
    fields: dict = field(default_factory=dict)
    anomaly: dict = field(default_factory=dict)
    deposits: list = field(default_factory=list)  # (col, row, name, model)
    core: list = field(default_factory=list)  # (col, row, radius) of each mineralised system
    plutons: list = field(default_factory=list)  # (col, row, radius) of barren plutons

    def __post_init__(self):
        _, lon, lat = self.region
        zone = int((lon + 180) // 6) % 60 + 1
        self.crs = CRS.from_epsg((32600 if lat >= 0 else 32700) + zone)
        x, y = Transformer.from_crs("EPSG:4326", self.crs, always_xy=True).transform(lon, lat)
        n = int(round(self.size * 1.3))
        self.shape = (n, n)
        half = n * PIXEL_M / 2
        x0 = math.floor((x - half) / 1000.0) * 1000.0
        y1 = math.ceil((y + half) / 1000.0) * 1000.0
        self.transform = Affine(PIXEL_M, 0, x0, 0, -PIXEL_M, y1)
        rows, cols = np.mgrid[0:n, 0:n].astype("float64") + 0.5
        self.rows, self.cols = rows, cols

    @property
    def n(self) -> int:
        return self.shape[0]

    def to_map(self, col, row):
        return self.transform * (col, row)

    def inner_point(self, margin: float = 0.3) -> tuple[float, float]:
        """A random point in the central part of the image all layers will cover."""
        lo, hi = self.n * margin, self.n * (1 - margin)
        return float(self.rng.uniform(lo, hi)), float(self.rng.uniform(lo, hi))

    def far_point(self, others, min_dist: float, margin: float = 0.22) -> tuple[float, float]:
        """A random inner point at least min_dist pixels from every point in `others` (best effort)."""
        best, best_d = None, -1.0
        for _ in range(200):
            p = self.inner_point(margin)
            d = min((math.hypot(p[0] - o[0], p[1] - o[1]) for o in others), default=1e9)
            if d >= min_dist:
                return p
            if d > best_d:
                best, best_d = p, d
        return best

    def unit_code(self, code: str) -> int:
        return [u[0] for u in self.units].index(code) + 1


def build_geology(world: World, volcanic: bool, clay_unit: bool, stocks=(), pluton: bool = False,
                  cover: bool = False) -> None:
    """Folded, faulted layered units, optional stock / pluton, alluvium in low ground; sets world.geology.
    Alluvium is kept off the mineralised systems, or (`cover`) off their cores only, burying halos."""
    rng, n = world.rng, world.n
    cols, rows = world.cols, world.rows
    pool = list(VOLCANIC_UNITS if volcanic else SEDIMENTARY_UNITS)
    order = rng.permutation(len(pool))
    count = int(rng.integers(3, len(pool) + 1))
    column = [pool[i] for i in sorted(order[:count])]
    if clay_unit:
        column.insert(int(rng.integers(1, len(column))), CLAY_UNIT)
    strike = rng.uniform(0, math.pi)
    across = cols * math.cos(strike) + rows * math.sin(strike)
    along = -cols * math.sin(strike) + rows * math.cos(strike)
    height = across + rng.uniform(0.04, 0.12) * n * np.sin(2 * math.pi * along / rng.uniform(0.6, 1.4) / n
                                                         + rng.uniform(0, 6.3))
    height += 0.04 * n * smooth_noise(rng, world.shape, n / 8)
    for i in range(int(rng.integers(1, 4))):
        c = world.inner_point(0.3 if i == 0 else 0.15)  # the first fault crosses the central area
        angle = rng.uniform(0, math.pi)
        half = n * rng.uniform(0.5, 1.0)
        p0 = (c[0] - half * math.cos(angle), c[1] - half * math.sin(angle))
        p1 = (c[0] + half * math.cos(angle), c[1] + half * math.sin(angle))
        world.faults.append((p0, p1))
        side = np.sign((cols - p0[0]) * (p1[1] - p0[1]) - (rows - p0[1]) * (p1[0] - p0[0]))
        height += side * rng.uniform(0.03, 0.09) * n
    probs = rng.dirichlet(np.full(len(column), 3.0))
    cuts = np.quantile(height, np.cumsum(probs)[:-1])
    geology = (np.digitize(height, cuts) + 1).astype("uint8")
    units = list(column)
    if pluton:
        units.append(PLUTON_UNIT)
        c = world.far_point([s[:2] for s in stocks], n * 0.4, margin=0.05)
        size = n * rng.uniform(0.12, 0.2)
        r = np.hypot(cols - c[0], rows - c[1]) / size
        geology[r + 0.15 * smooth_noise(rng, world.shape, 4) < 1] = len(units)
        world.plutons.append((c[0], c[1], size))
    if stocks:
        units.append(STOCK_UNIT)
    for col, row, radius in stocks:
        r = np.hypot(cols - col, rows - row) / (radius * 0.55)
        geology[r + 0.18 * smooth_noise(rng, world.shape, 3) < 1] = len(units)
    units.append(ALLUVIUM_UNIT)
    low = smooth_noise(rng, world.shape, n / 7)
    for col, row, radius in world.core:  # keep mineralised systems (or, under cover, their cores) exposed
        low -= 3.0 * np.exp(-((cols - col) ** 2 + (rows - row) ** 2) / (2 * (radius * (0.45 if cover else 1.1)) ** 2))
    share = rng.uniform(0.7, 0.8) if cover else rng.uniform(0.82, 0.92)
    geology[low > np.quantile(low, share)] = len(units)
    world.units = units
    world.geology = geology


def background(world: World, layers) -> None:
    """Index fields: baseline + spatial texture + lithology response (no hydrothermal signal yet)."""
    rng = world.rng
    for key in layers:
        base = rng.uniform(0.95, 1.1)
        noise = rng.uniform(0.012, 0.02)
        value = base + noise * texture(rng, world.shape)
        for code, (_, _, _, offsets) in enumerate(world.units, start=1):
            if key in offsets:
                value[world.geology == code] += offsets[key]
        if world.units[-1] is ALLUVIUM_UNIT:
            alluvium = world.geology == len(world.units)
            value[alluvium] = base + 0.5 * (value[alluvium] - base)
        world.fields[key] = value
        world.anomaly[key] = np.zeros(world.shape)


def add(world: World, key: str, signal: np.ndarray) -> None:
    if key in world.anomaly:
        world.anomaly[key] += signal


def porphyry_system(world: World, centre, radius: float, strength: float, deposits: int) -> None:
    """Concentric porphyry zoning around a stock: phyllic, silica and iron oxide over the core,
    argillic shell, propylitic halo; deposits inside the core."""
    rng = world.rng
    col, row = centre
    aspect = rng.uniform(1.0, 1.6)
    theta = rng.uniform(0, math.pi)
    dx, dy = world.cols - col, world.rows - row
    u = (dx * math.cos(theta) + dy * math.sin(theta)) / aspect
    v = -dx * math.sin(theta) + dy * math.cos(theta)
    r = np.hypot(u, v) / radius + 0.12 * smooth_noise(rng, world.shape, 3)
    a = strength
    add(world, "aloh", a * 0.16 * (np.clip(1.0 - (r / 0.8) ** 2, 0, 1) * 0.55 + 0.6 * gauss(r, 0.5, 0.17)))
    add(world, "silica", a * 0.12 * np.clip(1.0 - (r / 0.6) ** 2, 0, 1) ** 0.7)
    add(world, "ferric", a * 0.12 * gauss(r, 0.4, 0.25) * (0.6 + 0.4 * (smooth_noise(rng, world.shape, 2) > -0.3)))
    add(world, "argillic", a * 0.12 * (gauss(r, 0.78, 0.16) + 0.35 * gauss(r, 0.3, 0.2)))
    add(world, "propylitic", a * 0.11 * np.clip(gauss(r, 1.15, 0.3) - 0.5 * gauss(r, 0.2, 0.3), 0, None))
    for _ in range(deposits):
        ang, dist = rng.uniform(0, 2 * math.pi), radius * rng.uniform(0.0, 0.3)
        world.deposits.append((col + dist * math.cos(ang), row + dist * math.sin(ang), "porphyry Cu-Mo"))


def epithermal_system(world: World, fault, strength: float, deposits: int, reach: float = 0.3) -> None:
    """Silica ledges along a fault segment with an argillic halo and distal propylitic alteration;
    deposits on the ledge, whose centre lies at least `reach` (share of the image) from every edge."""
    rng = world.rng
    (x0, y0), (x1, y1) = fault
    length = rng.uniform(0.12, 0.2) * world.n / math.hypot(x1 - x0, y1 - y0)
    inner = [t for t in np.linspace(0, 1 - length, 200)
             if all(reach * world.n <= c <= (1 - reach) * world.n
                    for c in (x0 + (t + length / 2) * (x1 - x0), y0 + (t + length / 2) * (y1 - y0)))]
    t0 = float(rng.choice(inner)) if inner else 0.5 - length / 2
    p0 = (x0 + t0 * (x1 - x0), y0 + t0 * (y1 - y0))
    p1 = (x0 + (t0 + length) * (x1 - x0), y0 + (t0 + length) * (y1 - y0))
    dist, _ = segment_distance(world.cols, world.rows, p0, p1)
    w = world.n * rng.uniform(0.025, 0.035)
    d = dist / w + 0.2 * smooth_noise(rng, world.shape, 2.5)
    a = strength
    add(world, "silica", a * 0.16 * np.exp(-0.5 * (d / 0.8) ** 2))
    add(world, "argillic", a * 0.14 * (gauss(d, 1.4, 0.8) + 0.4 * np.exp(-0.5 * (d / 0.8) ** 2)))
    add(world, "aloh", a * 0.11 * gauss(d, 1.7, 1.0))
    add(world, "ferric", a * 0.08 * gauss(d, 1.0, 1.0) * (smooth_noise(rng, world.shape, 2) > -0.4))
    add(world, "propylitic", a * 0.09 * np.clip(gauss(d, 3.6, 1.3) - 0.6 * gauss(d, 0.0, 1.2), 0, None))
    centre = ((p0[0] + p1[0]) / 2, (p0[1] + p1[1]) / 2)
    world.core.append((centre[0], centre[1], w * 3))
    for _ in range(deposits):
        t = rng.uniform(0.15, 0.85)
        world.deposits.append((p0[0] + t * (p1[0] - p0[0]), p0[1] + t * (p1[1] - p0[1]), "epithermal Au-Ag"))


def blob(world: World, centre, radius: float) -> np.ndarray:
    """A compact irregular anomaly (0..1) with no zoning."""
    r = np.hypot(world.cols - centre[0], world.rows - centre[1]) / radius
    r = r + 0.2 * smooth_noise(world.rng, world.shape, 3)
    return np.clip(1.0 - r ** 2, 0, 1) ** 0.8


def clay_over_unit(world: World, code: int, strength: float) -> None:
    """Clay (AlOH and argillic) anomaly confined to one geological unit: a lithological signal."""
    unit = ndimage.gaussian_filter((world.geology == code).astype("float64"), 1.0)
    patchy = 0.75 + 0.25 * np.tanh(smooth_noise(world.rng, world.shape, 4))
    add(world, "aloh", strength * 0.13 * unit * patchy)
    add(world, "argillic", strength * 0.15 * unit * patchy)


def striping(world: World, key: str) -> None:
    """Along-track detector striping (an ASTER SWIR artefact): line offsets of about the noise level."""
    rng = world.rng
    angle = math.radians(rng.uniform(-12, 12))
    line = np.round(world.cols * math.cos(angle) - world.rows * math.sin(angle)).astype(int)
    line -= line.min()
    offsets = ndimage.gaussian_filter1d(rng.standard_normal(line.max() + 1), 0.7)
    world.fields[key] = world.fields[key] + 0.015 * offsets[line] / (offsets.std() + 1e-12)


def contact_halo(world: World, pluton, strength: float) -> None:
    """Chlorite-epidote (propylitic-like) hornfels ring around a barren pluton: one alteration family only."""
    col, row, size = pluton
    r = np.hypot(world.cols - col, world.rows - row) / size + 0.12 * smooth_noise(world.rng, world.shape, 3)
    add(world, "propylitic", strength * 0.11 * gauss(r, 1.15, 0.22))


# ----------------------------------------------------------------------------------------------
# Layers on their own grids

@dataclass
class LayerGrid:
    crs: CRS
    transform: Affine
    width: int
    height: int


def layer_grid(world: World, crs_code: str, resolution: float, crop) -> LayerGrid:
    """The grid of one layer: a crop of the core image area (fractions per side), in its CRS."""
    n, size = world.n, world.size
    off = (n - size) / 2
    left, top, right, bottom = crop
    c0, r0 = off - left * size, off - top * size
    c1, r1 = off + size + right * size, off + size + bottom * size
    x0, y0 = world.to_map(c0, r1)
    x1, y1 = world.to_map(c1, r0)
    if crs_code == "utm":
        width, height = int(round((x1 - x0) / resolution)), int(round((y1 - y0) / resolution))
        return LayerGrid(world.crs, Affine(resolution, 0, x0, 0, -resolution, y1), width, height)
    lon0, lat0, lon1, lat1 = transform_bounds(world.crs, "EPSG:4326", x0, y0, x1, y1, densify_pts=21)
    lat_mid = math.radians((lat0 + lat1) / 2)
    dy = resolution / 111_320.0
    dx = resolution / (111_320.0 * math.cos(lat_mid))
    width, height = int(round((lon1 - lon0) / dx)), int(round((lat1 - lat0) / dy))
    return LayerGrid(CRS.from_epsg(4326), Affine(dx, 0, lon0, 0, -dy, lat1), width, height)


def warp(world: World, data: np.ndarray, grid: LayerGrid, categorical: bool = False) -> np.ndarray:
    """Resample a world field onto a layer grid (nearest for categories, bilinear otherwise)."""
    out = np.zeros((grid.height, grid.width), dtype="float64" if not categorical else "uint8")
    reproject(data, out, src_transform=world.transform, src_crs=world.crs, dst_transform=grid.transform,
              dst_crs=grid.crs, resampling=Resampling.nearest if categorical else Resampling.bilinear)
    return out


def write_tif(path: Path, data: np.ndarray, grid: LayerGrid | None, nodata=None, tags=None) -> None:
    """Write a GeoTIFF (deflate); `data` is (rows, cols) or (bands, rows, cols)."""
    data = data if data.ndim == 3 else data[None]
    profile = {"driver": "GTiff", "width": data.shape[2], "height": data.shape[1], "count": data.shape[0],
               "dtype": str(data.dtype), "compress": "deflate", "zlevel": 9,
               "predictor": 3 if data.dtype.kind == "f" else 2}
    if grid is not None:
        profile.update(crs=grid.crs, transform=grid.transform)
    if nodata is not None:
        profile["nodata"] = nodata
    if data.shape[0] == 3:
        profile["photometric"] = "RGB"
    with rasterio.open(path, "w", **profile) as ds:
        ds.write(data)
        if tags:
            ds.update_tags(**tags)


def nodata_mask(world: World, grid: LayerGrid, shape) -> np.ndarray:
    """Scene-edge and cloud gaps in an index layer, kept away from every mineralised core."""
    rng = world.rng
    rows, cols = np.mgrid[0:shape[0], 0:shape[1]]
    mask = np.zeros(shape, dtype=bool)
    if rng.random() < 0.4:  # diagonal swath edge cutting one corner
        corner = int(rng.integers(4))
        fx = cols / shape[1] if corner in (0, 3) else 1 - cols / shape[1]
        fy = rows / shape[0] if corner in (0, 1) else 1 - rows / shape[0]
        mask |= fx + fy < rng.uniform(0.15, 0.3)
    if rng.random() < 0.3:  # clouds
        clouds = smooth_noise(rng, shape, max(shape) / 25)
        mask |= clouds > np.quantile(clouds, rng.uniform(0.96, 0.99))
    if mask.any() and world.core:
        xs, ys = grid.transform * (cols + 0.5, rows + 0.5)
        to_world = Transformer.from_crs(grid.crs, world.crs, always_xy=True)
        wx, wy = to_world.transform(xs, ys)
        wc, wr = ~world.transform * (wx, wy)
        for col, row, radius in world.core:
            mask &= np.hypot(wc - col, wr - row) > radius * 1.8
    return mask


JET = np.array([[0, 0, 160], [0, 90, 255], [0, 220, 255], [120, 255, 120], [255, 230, 0], [255, 120, 0],
                [200, 0, 0]], dtype="float64")


def colour_ramp(t: np.ndarray) -> np.ndarray:
    """Blue-to-red ramp (MineBench colour bars) for t in 0..1 -> (..., 3) uint8."""
    pos = np.clip(t, 0, 1) * (len(JET) - 1)
    i = np.clip(np.floor(pos).astype(int), 0, len(JET) - 2)
    f = (pos - i)[..., None]
    return np.round(JET[i] * (1 - f) + JET[i + 1] * f).astype("uint8")


def render_colour(world: World, value: np.ndarray, grey: np.ndarray, threshold: float, top: float) -> np.ndarray:
    """MineBench-style rendering: values above threshold coloured over a grey background, colour bar."""
    rng = world.rng
    g = np.clip(grey, 0, 1)
    image = np.repeat((40 + 170 * g)[..., None], 3, axis=2).astype("uint8")
    t = (value - threshold) / (top - threshold)
    hot = t > 0
    image[hot] = colour_ramp(t[hot])
    h, w = g.shape
    length, thick = int(h * rng.uniform(0.35, 0.55)), max(5, w // 28)
    steps = np.linspace(1, 0, length)[:, None].repeat(thick, axis=1)
    bar = colour_ramp(steps)
    pad = max(3, w // 40)
    if rng.random() < 0.5:  # vertical bar near the right or left edge
        x = w - pad - thick if rng.random() < 0.7 else pad
        y = int(rng.uniform(0.05, 0.95 - length / h) * h)
        image[y - 2:y + length + 2, x - 2:x + thick + 2] = 255
        image[y:y + length, x:x + thick] = bar
        for k in range(5):
            yy = y + int(k * (length - 1) / 4)
            image[yy, x + thick:x + thick + 3] = 0
    else:  # horizontal bar near the bottom edge
        bar = np.transpose(bar[::-1], (1, 0, 2))
        y = h - pad - thick
        x = int(rng.uniform(0.05, 0.95 - length / w) * w)
        length = min(length, w - x - 2)
        image[y - 2:y + thick + 2, x - 2:x + length + 2] = 255
        image[y:y + thick, x:x + length] = bar[:, :length]
        for k in range(5):
            xx = x + int(k * (length - 1) / 4)
            image[y - 3:y, xx] = 0
    return np.transpose(image, (2, 0, 1))


UNIT_COLOURS = {
    "Pzm": (150, 160, 200), "Kls": (120, 200, 230), "Kss": (200, 230, 140), "Jsh": (90, 170, 110),
    "Trb": (220, 120, 100), "Tba": (170, 110, 170), "Tan": (230, 170, 210), "Tdt": (250, 210, 160),
    "Trh": (250, 150, 90), "Tvc": (240, 240, 170), "Tqmp": (230, 40, 40), "Kgr": (245, 160, 170),
    "Qal": (250, 245, 220),
}


def render_geology(world: World, codes: np.ndarray, grid: LayerGrid) -> np.ndarray:
    """A coloured geological map (3-band uint8): unit colours, dark contacts and red fault lines."""
    lut = np.zeros((256, 3), dtype="uint8")
    for code, unit in enumerate(world.units, start=1):
        lut[code] = UNIT_COLOURS[unit[0]]
    image = lut[codes]
    contacts = (codes != np.roll(codes, 1, axis=0)) | (codes != np.roll(codes, 1, axis=1))
    contacts[0, :] = contacts[:, 0] = False
    image[contacts] = (60, 60, 60)
    lines = fault_lines(world, grid.crs)
    if lines:
        burnt = rasterize([(line, 1) for line in lines], out_shape=codes.shape, transform=grid.transform,
                          all_touched=True)
        image[burnt == 1] = (20, 20, 20)
    return np.transpose(image, (2, 0, 1))


def fault_lines(world: World, crs: CRS) -> list[LineString]:
    to = Transformer.from_crs(world.crs, crs, always_xy=True)
    lines = []
    for p0, p1 in world.faults:
        pts = [world.to_map(p0[0] + t * (p1[0] - p0[0]), p0[1] + t * (p1[1] - p0[1])) for t in np.linspace(0, 1, 9)]
        lines.append(LineString([to.transform(x, y) for x, y in pts]))
    return lines


def write_geojson(path: Path, features: list[dict], crs_epsg: int | None = None) -> None:
    """Deterministic GeoJSON: coordinates rounded, no crs member for EPSG:4326 (the format's default)."""
    def rounded(obj):
        if isinstance(obj, float):
            return round(obj, 6 if crs_epsg in (None, 4326) else 2)
        if isinstance(obj, (list, tuple)):
            return [rounded(o) for o in obj]
        return obj

    collection = {"type": "FeatureCollection"}
    if crs_epsg not in (None, 4326):
        collection["crs"] = {"type": "name", "properties": {"name": f"urn:ogc:def:crs:EPSG::{crs_epsg}"}}
    collection["features"] = [
        {"type": "Feature", "properties": f["properties"],
         "geometry": {"type": f["geometry"]["type"], "coordinates": rounded(f["geometry"]["coordinates"])}}
        for f in features
    ]
    path.write_text(json.dumps(collection, indent=1) + "\n", encoding="utf-8")


# ----------------------------------------------------------------------------------------------
# Cases

@dataclass
class CaseMeta:
    """What the generator put in a case (for suites and tests, not part of the case format)."""

    id: str
    kind: str
    answer: str
    deposit_model: str
    layers: list
    georeferenced: bool
    deposits: int
    hard: bool = False


def _choose_layers(rng, kind: str, roles) -> list[str]:
    if roles is not None:
        return list(roles)
    keys = ["aloh", "silica", "propylitic"]
    extra = [k for k in ("argillic", "ferric") if rng.random() < 0.6]
    if kind == "epithermal" and "argillic" not in extra:
        extra.append("argillic")
    return keys + extra


def make_case(folder, seed: int, kind: str = "porphyry", size: int = 200, *, layers=None, colour=None,
              mixed_crs: bool | None = None, georeferenced: bool = True, structure: str | None = None,
              geology_style: str | None = None, magnetics: bool | None = None, subtle: bool | None = None,
              case_id: str | None = None, question: str | None = None, deposit_format: str = "geojson",
              record: bool = True, hard: bool = False) -> Path:
    """Write one synthetic case into `folder` and return the path of its case.json.

    kind: one of KINDS. size: image width in pixels of the core area (layers vary around it).
    layers: index layer keys to include (subset of aloh, argillic, silica, propylitic, ferric); default
    drawn from the seed. colour: keys rendered as MineBench-style colour images instead of float
    indices (default drawn). mixed_crs: one layer in EPSG:4326 (default drawn). georeferenced=False
    writes plain PNG images (MineBench style; no deposits file then). structure: "vector" (fault lines),
    "distance" (distance-to-fault raster, favourable low) or "none" (default drawn). geology_style:
    "categorical" (integer + legend CSV) or "colour" (RGB map). magnetics: add a magnetic layer.
    subtle: weaker alteration and smaller systems in positives. deposit_format: "geojson" (EPSG:4326, no
    crs member) or "geojson-utm" (with a crs member). record: also write `.synthetic.json` (kind,
    answer, deposit model, layers) beside case.json for suites and tests. hard: a harder but fair variant:
    positives weaker, nearer an edge and with alluvium burying their halos; a single-layer negative is a
    contact-metamorphic propylitic ring around a barren pluton (with magnetics); one index layer striped.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    seq = np.random.SeedSequence([int(seed), zlib.crc32(kind.encode()), int(size)])
    rng = np.random.default_rng(seq)
    region = REGIONS[int(rng.integers(len(REGIONS)))]
    world = World(rng, size, region)
    keys = _choose_layers(rng, kind, layers)
    colour = set(colour) if colour is not None else {k for k in keys if rng.random() < 0.3}
    mixed_crs = bool(rng.random() < 0.35) if mixed_crs is None else mixed_crs
    structure = structure or ("vector", "distance", "none")[int(rng.choice(3, p=[0.4, 0.25, 0.35]))]
    geology_style = geology_style or ("colour" if rng.random() < 0.25 else "categorical")
    subtle = bool(rng.random() < 0.3) if subtle is None else subtle
    positive = kind in POSITIVE_KINDS
    if magnetics is None:
        magnetics = bool(rng.random() < 0.3)
    if not georeferenced:
        mixed_crs, structure, geology_style = False, "none", "colour"

    n = world.n
    strength = rng.uniform(0.7, 0.9) if subtle else rng.uniform(0.85, 1.25)
    if hard and positive:
        strength = min(strength, rng.uniform(0.75, 0.95))
    radius = n * (rng.uniform(0.07, 0.09) if subtle else rng.uniform(0.085, 0.12))
    stock = None
    if kind == "porphyry":
        centre = world.inner_point(0.25 if hard else 0.33)
        stock = (centre[0], centre[1], radius)
        world.core.append(stock)
    systems_two = positive and rng.random() < 0.25
    second = None
    if kind == "porphyry" and systems_two:
        c2 = world.far_point([stock], radius * 4.5, margin=0.25)
        second = (c2[0], c2[1], radius * 0.75)
        world.core.append(second)
    volcanic = kind == "epithermal" or (kind not in POSITIVE_KINDS and rng.random() < 0.4)
    clay_unit = kind == "lithology_clay" or rng.random() < 0.3
    pluton = kind in NEGATIVE_KINDS and rng.random() < 0.4
    if hard and kind == "single_layer":
        pluton, magnetics = True, True
    build_geology(world, volcanic, clay_unit, [s for s in (stock, second) if s is not None], pluton,
                  cover=hard and positive)
    background(world, INDEX_LAYERS)

    model = {"porphyry": "porphyry Cu-Mo", "epithermal": "epithermal Au-Ag"}.get(kind, "")
    if kind == "porphyry":
        porphyry_system(world, (stock[0], stock[1]), radius, strength, int(rng.integers(1, 4)))
        if second is not None:
            porphyry_system(world, (second[0], second[1]), second[2], strength * 0.85, 1)
    elif kind == "epithermal":
        epithermal_system(world, world.faults[0], strength, int(rng.integers(1, 4)), reach=0.22 if hard else 0.3)
        if systems_two and len(world.faults) > 1:
            epithermal_system(world, world.faults[1], strength * 0.85, 1)
    elif kind == "misaligned":
        shown = [k for k in keys if k != "argillic"] or keys
        rng.shuffle(shown)
        spots = []
        for key in shown[: max(2, min(4, len(shown)))]:
            spot = world.far_point(spots, n * 0.3, margin=0.2)
            spots.append(spot)
            add(world, key, strength * 0.15 * blob(world, spot, radius * rng.uniform(0.6, 1.0)))
    elif kind == "lithology_clay":
        clay_over_unit(world, world.unit_code(CLAY_UNIT[0]), strength)
    elif kind == "single_layer" and hard and "propylitic" in keys:
        contact_halo(world, world.plutons[0], strength)
    elif kind == "single_layer":
        key = str(rng.choice(keys))
        spot = world.inner_point(0.3)
        add(world, key, strength * 0.17 * blob(world, spot, radius * rng.uniform(0.8, 1.2)))
    if positive and rng.random() < 0.5:  # a distractor away from the mineralised systems
        key = str(rng.choice(keys))
        spot = world.far_point([c[:2] for c in world.core], radius * 3.5, margin=0.2)
        add(world, key, strength * 0.12 * blob(world, spot, radius * 0.7))
    if positive and clay_unit and rng.random() < 0.6:
        clay_over_unit(world, world.unit_code(CLAY_UNIT[0]), strength * 0.6)
    if hard:
        striping(world, str(rng.choice(keys)))

    case_id = case_id or f"syn-{kind[:3]}-{seed}"
    meta_layers = []
    entries = []
    res_of = {"silica": 90.0, "ferric": 30.0}
    geo_crs = "utm"
    crs_for = {k: "utm" for k in keys}
    if mixed_crs:
        pick = int(rng.integers(len(keys) + 1))
        if pick == len(keys):
            geo_crs = "wgs84"
        else:
            crs_for[keys[pick]] = "wgs84"

    def crop():
        margins = rng.uniform(-0.02, 0.1, size=4)
        return tuple(float(v) for v in margins) if georeferenced else (0.0, 0.0, 0.0, 0.0)

    ext = ".tif" if georeferenced else ".png"
    # Geological map.
    geo_res = 30.0 if geology_style == "colour" else float(rng.choice([30.0, 50.0]))
    ggrid = layer_grid(world, geo_crs, geo_res, crop())
    codes = warp(world, world.geology.astype("uint8"), ggrid, categorical=True)
    if geology_style == "colour":
        _write_layer(folder / f"geology{ext}", render_geology(world, codes, ggrid), ggrid, georeferenced)
        entries.append({"path": f"geology{ext}", "role": "geological_map", "name": "geological map"})
    else:
        write_tif(folder / "geology.tif", codes, ggrid if georeferenced else None, nodata=0)
        with open(folder / "geology_legend.csv", "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(["value", "name", "lithology"])
            for code, unit in enumerate(world.units, start=1):
                writer.writerow([code, f"{unit[0]} {unit[1]}", unit[2]])
        entries.append({"path": "geology.tif", "role": "geological_map", "name": "geological map",
                        "legend": "geology_legend.csv"})
    meta_layers.append("geology")
    # Albedo (grey background of renderings): brightness by unit plus texture and relief shading.
    albedo = 0.45 + 0.12 * texture(rng, world.shape) + 0.1 * np.sin(world.geology * 1.7)
    # Index layers.
    for key in keys:
        role, name = INDEX_LAYERS[key]
        grid = layer_grid(world, crs_for[key], res_of.get(key, 30.0) if georeferenced else 30.0, crop())
        value = warp(world, world.fields[key] + world.anomaly[key], grid)
        if key in colour or not georeferenced:
            grey = warp(world, albedo, grid)
            base = float(np.median(world.fields[key]))
            image = render_colour(world, value, grey, base + 0.05, base + 0.15)
            path = f"{key}_map{ext}"
            _write_layer(folder / path, image, grid, georeferenced)
            entries.append({"path": path, "role": role, "name": f"{name} (colour rendering)"})
        else:
            value = np.round(value, 4).astype("float32")
            mask = nodata_mask(world, grid, value.shape)
            value[mask] = NODATA
            path = f"{key}.tif"
            write_tif(folder / path, value, grid, nodata=NODATA, tags={"index": name})
            entries.append({"path": path, "role": role, "name": name})
        meta_layers.append(key)
    if magnetics:
        grid = layer_grid(world, "utm", 60.0, crop())
        mag = 40 * texture(rng, world.shape) + 0.3 * (world.rows - n / 2)
        for code, unit in enumerate(world.units, start=1):
            if unit in (STOCK_UNIT, PLUTON_UNIT):
                mag += 250 * ndimage.gaussian_filter((world.geology == code).astype("float64"), 6)
        value = np.round(warp(world, mag, grid), 1).astype("float32")
        if georeferenced:
            write_tif(folder / "magnetics.tif", value, grid, nodata=NODATA, tags={"units": "nT"})
            entries.append({"path": "magnetics.tif", "role": "geophysics", "name": "RTP total magnetic intensity"})
            meta_layers.append("magnetics")
    if structure == "vector":
        feats = [{"properties": {"type": "fault", "id": i + 1}, "geometry": mapping(line)}
                 for i, line in enumerate(fault_lines(world, CRS.from_epsg(4326)))]
        write_geojson(folder / "faults.geojson", feats)
        entries.append({"path": "faults.geojson", "role": "structure", "name": "mapped faults"})
        meta_layers.append("faults")
    elif structure == "distance":
        grid = layer_grid(world, "utm", 60.0, crop())
        burnt = rasterize([(line, 1) for line in fault_lines(world, world.crs)], out_shape=world.shape,
                          transform=world.transform, all_touched=True)
        dist = ndimage.distance_transform_edt(burnt == 0) * PIXEL_M
        value = np.round(warp(world, dist, grid), 0).astype("float32")
        write_tif(folder / "fault_distance.tif", value, grid, nodata=NODATA, tags={"units": "m"})
        entries.append({"path": "fault_distance.tif", "role": "structure", "name": "distance to faults (m)",
                        "favourable": "low"})
        meta_layers.append("fault_distance")

    data = {"format": FORMAT, "id": case_id}
    qkind = kind if positive else str(rng.choice(["porphyry", "epithermal", "generic"]))
    if question is None:
        templates = QUESTIONS[qkind] if positive or qkind != "generic" else QUESTIONS["generic"]
        question = str(templates[int(rng.integers(len(templates)))]).format(region=region[0])
    data["question"] = question
    data["choices"] = {"A": "Yes", "B": "No"}
    data["answer"] = "A" if positive else "B"
    data["layers"] = entries
    n_deposits = 0
    if positive and georeferenced and world.deposits:
        names = list(DEPOSIT_NAMES)
        rng.shuffle(names)
        feats = []
        utm = deposit_format == "geojson-utm"
        to = Transformer.from_crs(world.crs, "EPSG:4326", always_xy=True)
        for i, (col, row, dmodel) in enumerate(world.deposits):
            x, y = world.to_map(col, row)
            coords = [x, y] if utm else list(to.transform(x, y))
            feats.append({"properties": {"name": f"{names[i % len(names)]} {i + 1}", "model": dmodel},
                          "geometry": {"type": "Point", "coordinates": coords}})
        write_geojson(folder / "deposits.geojson", feats, world.crs.to_epsg() if utm else None)
        data["deposits"] = "deposits.geojson"
        n_deposits = len(feats)
    target = folder / "case.json"
    target.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    meta = CaseMeta(case_id, kind, data["answer"], model or qkind, meta_layers, georeferenced, n_deposits, hard)
    if record:
        (folder / ".synthetic.json").write_text(json.dumps(meta.__dict__, indent=1) + "\n", encoding="utf-8")
    return target


def _write_layer(path: Path, image: np.ndarray, grid: LayerGrid, georeferenced: bool) -> None:
    if georeferenced:
        write_tif(path, image, grid)
    else:
        Image.fromarray(np.transpose(image, (1, 2, 0))).save(path, format="PNG", optimize=False, compress_level=6)


# Suite composition: (kind, share). Half positive, half hard or plain negatives; HARD_SHARE of the cases
# are drawn as the harder variant (see make_case).
SUITE_MIX = (("porphyry", 0.27), ("epithermal", 0.23), ("misaligned", 0.14), ("lithology_clay", 0.13),
             ("single_layer", 0.13), ("barren", 0.10))
HARD_SHARE = 0.35


def suite_plan(n: int) -> list[str]:
    """Kinds of an n-case suite in the SUITE_MIX proportions (largest remainders), interleaved."""
    raw = [share * n for _, share in SUITE_MIX]
    counts = [int(math.floor(r)) for r in raw]
    for i in sorted(range(len(raw)), key=lambda i: -(raw[i] - counts[i]))[: n - sum(counts)]:
        counts[i] += 1
    pools = [[kind] * c for (kind, _), c in zip(SUITE_MIX, counts)]
    plan = []
    while any(pools):
        for pool in pools:
            if pool:
                plan.append(pool.pop())
    return plan


def make_suite(folder, n: int = 60, seed: int = 1000, size: int = 200) -> list[Path]:
    """Write an n-case suite (one folder per case, ids syn-NNN) plus suite.csv (id, kind, answer, ...)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rows, paths = [], []
    rng = np.random.default_rng(seed)
    for i, kind in enumerate(suite_plan(n)):
        case_seed = seed + 17 * i
        case_id = f"syn-{i + 1:03d}"
        georef = not (rng.random() < 0.1)
        case_size = int(rng.integers(max(120, size - 50), size + 51))
        deposit_format = "geojson-utm" if rng.random() < 0.2 else "geojson"
        hard = bool(rng.random() < HARD_SHARE)
        path = make_case(folder / case_id, case_seed, kind, case_size, case_id=case_id, georeferenced=georef,
                         deposit_format=deposit_format, hard=hard)
        meta = json.loads((path.parent / ".synthetic.json").read_text(encoding="utf-8"))
        rows.append([case_id, kind, meta["answer"], meta["deposit_model"], case_seed, case_size,
                     int(meta["georeferenced"]), int(hard), meta["deposits"], " ".join(meta["layers"])])
        paths.append(path)
    with open(folder / "suite.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["id", "kind", "answer", "deposit_model", "seed", "size", "georeferenced", "hard",
                         "deposits", "layers"])
        writer.writerows(rows)
    return paths


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("build/bench/suite")
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    first_seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    for p in make_suite(out, count, first_seed):
        print(p)
