#!/usr/bin/env python3
"""A second, independent generator of `lodestar-case/1` porphyry-Cu cases ("worlds_b").

It shares no world code or parameters with `scripts/synthetic_cases.py` (the generator the offline
reasoner was developed on); it exists to measure the reasoner on worlds it was not tuned to
(issue 12, item 6). Tune on one generator, report the other.

Worlds are built from geology, in ground metres:
- a scene 5 to 60 km across somewhere a porphyry belt lies (Atacama, Arizona, Gobi, Sumbawa, ...),
  in that region's projected CRS (UTM north / south, NZTM EPSG:2193, GDA94 Albers EPSG:3577, CONUS
  Albers EPSG:5070, Web Mercator EPSG:3857, where map units are not ground metres);
- a porphyry system is a potassic core (magnetite, K) 300 m to 2 km across with an iron-oxide gossan
  over it and silicification near it, a phyllic / argillic (AlOH, sericite, clay) shell around it, a
  propylitic (chlorite / epidote, MgOH) halo out to 2-5 km; systems sit on or near faults, some are cut
  and offset by one, some overlap; the system's size does not depend on the scene's size;
- backgrounds are smooth correlated fields (two length scales, a share common to all layers, pixel
  noise), Gaussian or log-normal, with a signal of varying contrast on top;
- a geological map of folded strata (a categorical raster with a legend), with intrusive stocks under
  some systems and barren stocks elsewhere;
- faults as a distance raster (favourable low) or a GeoPackage of lines.

Each layer is written on its own grid: its own CRS (the world's, a neighbouring UTM zone, EPSG:4326,
EPSG:3857, ...), pixel size (10-120 m) and extent, with a nodata border of varying width around the
scene. Evidence layers are plain index rasters (float32 with nodata), MineBench-style RGB renderings
(coloured anomaly over a grey background, a colour bar in a corner) or plain greyscale renderings.

Kinds, balanced: half `porphyry` positives (coherent zoned multi-layer evidence, deposits at the
cores), half hard negatives in equal shares:
  decoupled       every evidence layer anomalous, but each anomaly at least FOOTPRINT_M from every
                  other (outside any one system's footprint);
  lithology_clay  AlOH / clay high over the whole of one map unit, following its outline in the
                  geological map, with no zoning and no centre;
  single_layer    one strong anomaly on one layer, the others background;
  barren          backgrounds only (smooth log-normal noise, random faults).
The layer set, rendering, CRS, extent and background of a case are drawn the same way whatever its
kind, so none of them gives the answer away.

Each case folder holds case.json, the layers, `deposits.geojson` for positives, and `.worlds_b.json`
(what the generator put where, for tests; not part of the case format). `suite.csv` beside the cases
lists id, kind and the world's figures. Deterministic: the same seed gives the same bytes.

Run: `python scripts/worlds_b.py OUT --count 60 --seed 777`.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import rasterio
from affine import Affine
from pyproj import CRS, Geod, Transformer
from scipy import ndimage
from scipy.special import expit

QUESTION = ("Given these layers, can porphyry copper deposits be detected in this area? "
            "Answer: A. Yes B. No.")
CHOICES = {"A": "Yes", "B": "No"}
KINDS = ("porphyry", "decoupled", "lithology_clay", "single_layer", "barren")
POSITIVE_KINDS = ("porphyry",)
NEGATIVE_KINDS = KINDS[1:]

EXTENT_KM = (5.0, 60.0)        # the scene's longer side, ground km
PIXEL_M = (10.0, 120.0)        # ground pixel size of any layer
MAX_PX = 600                   # the most pixels a layer has along a side
CORE_RADIUS_M = (150.0, 1000.0)  # potassic core: 300 m to 2 km across
HALO_M = (2000.0, 5000.0)      # outer radius of the propylitic halo
FOOTPRINT_M = HALO_M[1]        # nothing of a system reaches farther than this from its centre
DECOUPLED_MIN_KM = 12.0        # a decoupled case needs room for anomalies FOOTPRINT_M apart

EVIDENCE_ROLES = ("hydrothermal_alteration", "argillic_alteration", "silicification", "propylitic_alteration",
                  "iron_oxide", "geophysics", "geochemistry")
ALTERATION_ROLES = EVIDENCE_ROLES[:5]
CORE_ROLES = ("iron_oxide", "silicification", "geophysics")  # strongest over the core
CLAY_ROLES = ("hydrothermal_alteration", "argillic_alteration")

GEOD = Geod(ellps="WGS84")

# (region, world EPSG, lon, lat, other CRSs a layer of the case may come in)
REGIONS = (
    ("Atacama, Chile", 32719, -69.1, -22.9, (4326, 32718, 3857)),
    ("Southern Peru", 32718, -73.6, -15.2, (4326, 32719, 3857)),
    ("Arizona, USA", 32612, -110.8, 32.6, (4326, 5070, 3857)),
    ("Gobi, Mongolia", 32648, 106.9, 43.0, (4326, 3857, 32649)),
    ("Stikine, British Columbia", 32609, -128.6, 56.9, (4326, 3005, 32610)),
    ("Sumbawa, Indonesia", 32750, 116.9, -8.95, (4326, 3857, 32751)),
    ("Coromandel, New Zealand", 2193, 175.7, -37.3, (4326, 32760, 3857)),
    ("Kerman, Iran", 3857, 55.9, 29.9, (4326, 32640)),
    ("Lachlan Fold Belt, Australia", 3577, 149.0, -33.3, (4326, 32755, 3857)),
    ("Western Highlands, Papua New Guinea", 32754, 141.1, -5.3, (4326, 3857, 32755)),
    ("Oquirrh Mountains, Utah", 5070, -112.1, 40.5, (4326, 32612, 3857)),
)

STRATA = ("Andesite flows", "Volcaniclastic sandstone", "Limestone", "Black shale", "Rhyolite tuff", "Basalt",
          "Conglomerate", "Quartzite", "Siltstone", "Dacite ignimbrite", "Greywacke", "Marble")
INTRUSIVES = ("Quartz monzonite porphyry", "Granodiorite porphyry", "Diorite", "Granite", "Tonalite",
              "Monzonite")
FILE_STEM = {"hydrothermal_alteration": "aloh", "argillic_alteration": "sericite_clay", "silicification": "silica",
             "propylitic_alteration": "mgoh", "iron_oxide": "ferric", "geophysics": "magnetics",
             "geochemistry": "cu_soil"}
LAYER_NAME = {"hydrothermal_alteration": "AlOH (2.2 um) index", "argillic_alteration": "Sericite-kaolinite index",
              "silicification": "Silica index (TIR)", "propylitic_alteration": "MgOH chlorite-epidote index",
              "iron_oxide": "Ferric iron (gossan) index", "geophysics": "Magnetics RTP (nT)",
              "geochemistry": "Cu in soil (ppm)"}


# ----------------------------------------------------------------------------------------------
# Fields in ground metres

def inside(r: np.ndarray, radius: float) -> np.ndarray:
    """Soft indicator of r < radius (edge width about a tenth of the radius)."""
    return expit((radius - r) / (0.09 * radius + 15.0))


def ring(r: np.ndarray, inner: float, outer: float) -> np.ndarray:
    return np.clip(inside(r, outer) - inside(r, inner), 0.0, None)


@dataclass
class System:
    """A porphyry Cu system (all lengths ground metres, positions relative to the scene centre)."""

    x: float
    y: float
    core: float            # potassic core radius
    shell: float           # outer radius of the phyllic shell
    halo: float            # outer radius of the propylitic halo
    aspect: float
    angle: float
    irregular: float
    fault: tuple | None = None  # (qx, qy, ux, uy, offset): the side right of u is shifted by offset along u
    key: str = "s"

    def radius(self, world: World, dx: np.ndarray, dy: np.ndarray) -> np.ndarray:
        px, py = dx - self.x, dy - self.y
        if self.fault is not None:
            qx, qy, ux, uy, offset = self.fault
            side = (dx - qx) * uy - (dy - qy) * ux > 0
            px = np.where(side, px - offset * ux, px)
            py = np.where(side, py - offset * uy, py)
        c, s = math.cos(self.angle), math.sin(self.angle)
        a = px * c + py * s
        b = (-px * s + py * c) * self.aspect
        wobble = world.noise(f"shape-{self.key}", max(250.0, 0.8 * self.core)).sample(dx, dy)
        return np.hypot(a, b) * (1.0 + self.irregular * np.tanh(wobble))

    def profile(self, role: str, r: np.ndarray) -> np.ndarray:
        rc = self.core
        if role == "iron_oxide":  # gossan over the core, weaker over the shell
            return inside(r, 1.1 * rc) + 0.25 * ring(r, 1.1 * rc, 1.8 * rc)
        if role == "silicification":  # silica near the core
            return 0.85 * inside(r, 0.8 * rc) + 0.5 * ring(r, 0.8 * rc, 1.35 * rc)
        if role == "geophysics":  # magnetite of the potassic core, magnetite destroyed in the phyllic shell
            return inside(r, rc) - 0.4 * ring(r, 1.2 * rc, self.shell)
        if role == "hydrothermal_alteration":  # AlOH: phyllic / argillic shell
            return ring(r, 0.8 * rc, self.shell) + 0.3 * inside(r, 0.8 * rc)
        if role == "argillic_alteration":  # sericite / kaolinite, outer part of the shell
            return ring(r, 1.3 * rc, self.shell + 0.3 * rc) + 0.2 * inside(r, 1.3 * rc)
        if role == "propylitic_alteration":  # chlorite / epidote halo
            return 0.9 * ring(r, self.shell, self.halo)
        if role == "geochemistry":  # Cu in soil over core and shell
            return inside(r, 0.5 * (rc + self.shell))
        return np.zeros_like(r)


@dataclass
class Blob:
    """A lone anomaly on one layer: a blob, or a ring shaped like a system's zone."""

    role: str
    x: float
    y: float
    radius: float
    aspect: float
    angle: float
    shape: str = "blob"
    key: str = "b"
    contrast: float = 0.0

    def profile(self, world: World, dx: np.ndarray, dy: np.ndarray) -> np.ndarray:
        px, py = dx - self.x, dy - self.y
        c, s = math.cos(self.angle), math.sin(self.angle)
        r = np.hypot(px * c + py * s, (-px * s + py * c) * self.aspect)
        r = r * (1.0 + 0.2 * np.tanh(world.noise(f"blob-{self.key}", max(200.0, 0.7 * self.radius)).sample(dx, dy)))
        if self.shape == "ring":
            return ring(r, 0.5 * self.radius, self.radius)
        return inside(r, self.radius)


@dataclass
class NoiseGrid:
    """A smooth standard-normal field over the scene (ground metres, origin at the scene centre)."""

    data: np.ndarray
    cell: float
    half_w: float
    half_h: float

    def sample(self, dx: np.ndarray, dy: np.ndarray) -> np.ndarray:
        cols = (dx + self.half_w) / self.cell
        rows = (self.half_h - dy) / self.cell
        return ndimage.map_coordinates(self.data, [rows.ravel(), cols.ravel()], order=1,
                                       mode="nearest").reshape(dx.shape)


@dataclass
class World:
    """One scene: where it is, its CRS, its geology, faults and features."""

    seed: int
    index: int
    kind: str
    region: str
    epsg: int
    alternatives: tuple
    lon: float
    lat: float
    width: float   # ground m
    height: float  # ground m
    crs: CRS = field(init=False)
    cx: float = field(init=False)
    cy: float = field(init=False)
    k: float = field(init=False)  # map units per ground metre at the scene centre
    faults: list = field(default_factory=list)     # polylines [(x, y), ...] in ground m
    systems: list = field(default_factory=list)
    blobs: list = field(default_factory=list)
    contrast: dict = field(default_factory=dict)   # role -> background sigmas of the system signal
    clay_unit: int | None = None
    clay_contrast: float = 0.0
    geology: dict = field(default_factory=dict)
    deposits: list = field(default_factory=list)   # (x, y) ground m
    _noise: dict = field(default_factory=dict)

    def __post_init__(self):
        self.crs = CRS.from_epsg(self.epsg)
        to_map = Transformer.from_crs("EPSG:4326", self.crs, always_xy=True)
        self.cx, self.cy = to_map.transform(self.lon, self.lat)
        _, _, ground = GEOD.inv(self.lon, self.lat, self.lon, self.lat + 0.01)
        x1, y1 = to_map.transform(self.lon, self.lat + 0.01)
        self.k = math.hypot(x1 - self.cx, y1 - self.cy) / ground

    def rng(self, *parts) -> np.random.Generator:
        return np.random.default_rng([self.seed, self.index] + [int(p) for p in parts])

    def noise(self, name: str, length: float) -> NoiseGrid:
        """A smooth field with correlation length `length` ground metres, cached by name."""
        key = (name, int(round(length)))
        if key not in self._noise:
            cell = max(self.width, self.height) / 240.0
            sigma = max(length / cell, 0.6)
            step = max(1, int(sigma // 4))  # a long field is drawn on a coarser grid: same look, less work
            cell *= step
            sigma /= step
            shape = (int(self.height / cell) + 3, int(self.width / cell) + 3)
            pad = int(min(3 * sigma, 100)) + 1
            rng = self.rng(11, zlib.crc32(name.encode()), key[1])
            raw = ndimage.gaussian_filter(rng.standard_normal((shape[0] + 2 * pad, shape[1] + 2 * pad)), sigma,
                                          mode="wrap")
            data = raw[pad:pad + shape[0], pad:pad + shape[1]]
            data = (data - data.mean()) / (data.std() or 1.0)
            self._noise[key] = NoiseGrid(data, cell, self.width / 2 + cell, self.height / 2 + cell)
        return self._noise[key]

    # ground <-> map (world CRS)
    def to_map(self, x, y):
        return self.cx + np.asarray(x) * self.k, self.cy + np.asarray(y) * self.k

    def to_ground(self, mx, my):
        return (np.asarray(mx) - self.cx) / self.k, (np.asarray(my) - self.cy) / self.k

    def lonlat(self, x, y) -> tuple[float, float]:
        mx, my = self.to_map(x, y)
        lon, lat = Transformer.from_crs(self.crs, "EPSG:4326", always_xy=True).transform(float(mx), float(my))
        return lon, lat

    def in_scene(self, dx, dy) -> np.ndarray:
        return (np.abs(dx) <= self.width / 2) & (np.abs(dy) <= self.height / 2)

    # what the ground holds
    def units(self, dx: np.ndarray, dy: np.ndarray) -> np.ndarray:
        g = self.geology
        c, s = math.cos(g["strike"]), math.sin(g["strike"])
        along = dx * c + dy * s
        across = -dx * s + dy * c
        u = (across + g["amplitude"] * np.sin(2 * math.pi * along / g["wavelength"] + g["phase"])
             + g["roughness"] * self.noise("contacts", g["thickness"]).sample(dx, dy))
        codes = (1 + np.mod(np.floor(u / g["thickness"] + g["offset"]), len(g["strata"]))).astype("int16")
        for stock in g["stocks"]:
            r = np.hypot(dx - stock["x"], dy - stock["y"])
            r = r * (1 + 0.2 * np.tanh(self.noise(f"stock-{stock['code']}", stock["radius"]).sample(dx, dy)))
            codes = np.where(r < stock["radius"], stock["code"], codes)
        return codes

    def legend(self) -> list[tuple[int, str]]:
        g = self.geology
        rows = [(i + 1, name) for i, name in enumerate(g["strata"])]
        rows += [(stock["code"], stock["name"]) for stock in g["stocks"]]
        return rows

    def signal(self, role: str, dx: np.ndarray, dy: np.ndarray) -> np.ndarray:
        """The anomaly of one evidence role, in background sigmas (0 where there is none)."""
        out = np.zeros(dx.shape)
        if self.systems and self.contrast.get(role, 0.0) > 0:
            best = np.full(dx.shape, -np.inf)
            for system in self.systems:
                best = np.maximum(best, system.profile(role, system.radius(self, dx, dy)))
            out += self.contrast[role] * best
        for blob in self.blobs:
            if blob.role == role:
                out += blob.contrast * blob.profile(self, dx, dy)
        if self.clay_unit is not None and role in CLAY_ROLES:
            unit = (self.units(dx, dy) == self.clay_unit).astype("float64")
            out += self.clay_contrast * unit * (0.9 + 0.1 * np.tanh(self.noise("clay", 400.0).sample(dx, dy)))
        return out

    def fault_distance(self, dx: np.ndarray, dy: np.ndarray) -> np.ndarray:
        best = np.full(dx.shape, np.inf)
        for line in self.faults:
            for (x0, y0), (x1, y1) in zip(line[:-1], line[1:]):
                vx, vy = x1 - x0, y1 - y0
                t = np.clip(((dx - x0) * vx + (dy - y0) * vy) / (vx * vx + vy * vy), 0, 1)
                best = np.minimum(best, np.hypot(dx - x0 - t * vx, dy - y0 - t * vy))
        return best


# ----------------------------------------------------------------------------------------------
# Building a world

def _random_fault(world: World, rng: np.random.Generator, through=None, angle=None) -> list:
    """A fault across the scene: a gently bent polyline, or a straight line through a given point."""
    half_w, half_h = world.width / 2, world.height / 2
    straight = through is not None
    if through is None:
        through = (rng.uniform(-0.8, 0.8) * half_w, rng.uniform(-0.8, 0.8) * half_h)
        angle = rng.uniform(0, math.pi)
    reach = 1.2 * math.hypot(half_w, half_h)
    ts = np.linspace(-reach, reach, 2 if straight else int(rng.integers(3, 6)))
    bend = 0.0 if straight else rng.uniform(0, 0.04) * reach
    nx, ny = -math.sin(angle), math.cos(angle)
    pts = []
    for t in ts:
        wiggle = rng.uniform(-bend, bend) if bend else 0.0
        pts.append((through[0] + t * math.cos(angle) + wiggle * nx, through[1] + t * math.sin(angle) + wiggle * ny))
    return pts


def _near_fault(world: World, rng: np.random.Generator, box: tuple) -> tuple[float, float] | None:
    """A point within 0-400 m of a fault, inside `box` (half sizes); None when no fault crosses the box."""
    for _ in range(200):
        line = world.faults[int(rng.integers(len(world.faults)))]
        i = int(rng.integers(len(line) - 1))
        t = rng.random()
        (x0, y0), (x1, y1) = line[i], line[i + 1]
        length = math.hypot(x1 - x0, y1 - y0) or 1.0
        off = rng.uniform(-400, 400)
        x = x0 + t * (x1 - x0) - off * (y1 - y0) / length
        y = y0 + t * (y1 - y0) + off * (x1 - x0) / length
        if abs(x) <= box[0] and abs(y) <= box[1]:
            return x, y
    return None


def _place(world: World, rng: np.random.Generator, margin: float, near_fault: bool) -> tuple[float, float]:
    box = (max(world.width / 2 - margin, 0.0), max(world.height / 2 - margin, 0.0))
    spot = _near_fault(world, rng, box) if near_fault and world.faults else None
    if spot is not None:
        return spot
    x, y = rng.uniform(-box[0], box[0]), rng.uniform(-box[1], box[1])
    if near_fault:  # no mapped fault crosses the box: a fault of its own passes 0-300 m away
        angle, off = rng.uniform(0, math.pi), rng.uniform(-300, 300)
        world.faults.append(_random_fault(world, rng, through=(x - off * math.sin(angle), y + off * math.cos(angle)),
                                          angle=angle))
    return x, y


def _margin(world: World, radius: float) -> float:
    return min(max(0.15 * min(world.width, world.height), 1.2 * radius), 0.45 * min(world.width, world.height))


def build_geology(world: World, rng: np.random.Generator) -> None:
    strata = [str(s) for s in rng.choice(STRATA, size=int(rng.integers(3, 7)), replace=False)]
    thickness = rng.uniform(600, 4000)
    world.geology = {"strata": strata, "strike": rng.uniform(0, math.pi), "thickness": thickness,
                     "wavelength": rng.uniform(3000, 20000), "amplitude": rng.uniform(0, 0.25) * thickness * 3,
                     "phase": rng.uniform(0, 2 * math.pi), "roughness": rng.uniform(0.05, 0.25) * thickness,
                     "offset": rng.random(), "stocks": []}


def add_stock(world: World, rng: np.random.Generator, x: float, y: float, radius: float) -> None:
    stocks = world.geology["stocks"]
    used = {s["name"] for s in stocks}
    names = [n for n in INTRUSIVES if n not in used] or list(INTRUSIVES)
    stocks.append({"x": x, "y": y, "radius": radius, "name": str(names[int(rng.integers(len(names)))]),
                   "code": len(world.geology["strata"]) + len(stocks) + 1})


def new_system(world: World, rng: np.random.Generator, key: str, at=None) -> System:
    core = math.exp(rng.uniform(math.log(CORE_RADIUS_M[0]), math.log(CORE_RADIUS_M[1])))
    shell = core * rng.uniform(1.9, 2.4)
    halo = float(np.clip(rng.uniform(*HALO_M), shell + 0.6 * core + 500, HALO_M[1]))
    if at is None:
        at = _place(world, rng, _margin(world, 1.5 * core), near_fault=True)
    return System(x=float(at[0]), y=float(at[1]), core=core, shell=shell, halo=halo, aspect=rng.uniform(1.0, 1.7),
                  angle=rng.uniform(0, math.pi), irregular=rng.uniform(0.05, 0.25), key=key)


def populate_porphyry(world: World, rng: np.random.Generator, roles: list) -> None:
    first = new_system(world, rng, "s1")
    world.systems.append(first)
    if rng.random() < 0.3:  # an overlapping second system: halos overlap, cores apart
        second = new_system(world, rng, "s2", at=(0.0, 0.0))
        lo = 1.2 * (first.core + second.core) + 300
        hi = max(lo + 300, min(first.halo, second.halo) + 500)
        margin = _margin(world, 1.5 * second.core)
        box = (world.width / 2 - margin, world.height / 2 - margin)
        spot = None
        for _ in range(300):  # on or near a mapped fault, if one passes at the right distance
            near = _near_fault(world, rng, box)
            if near is not None and lo <= math.hypot(near[0] - first.x, near[1] - first.y) <= hi:
                spot = near
                break
        for _ in range(100 if spot is None else 0):  # else anywhere at that distance, on a fault of its own
            d, a = rng.uniform(lo, hi), rng.uniform(0, 2 * math.pi)
            x, y = first.x + d * math.cos(a), first.y + d * math.sin(a)
            if abs(x) <= box[0] and abs(y) <= box[1]:
                spot = (x, y)
                angle = rng.uniform(0, math.pi)
                off = rng.uniform(-300, 300)
                world.faults.append(_random_fault(world, rng, through=(x - off * math.sin(angle),
                                                                       y + off * math.cos(angle)), angle=angle))
                break
        if spot is not None:
            second.x, second.y = spot
            world.systems.append(second)
    for system in world.systems:
        if rng.random() < 0.35:  # a fault cuts the system and offsets the zones on one side
            angle = rng.uniform(0, math.pi)
            ux, uy = math.cos(angle), math.sin(angle)
            # the fault passes 0.2-0.8 core radii beside the centre; the centre's side stays in place
            gap = rng.uniform(0.2, 0.8) * system.core
            qx, qy = system.x + gap * uy, system.y - gap * ux  # the right of u is the shifted side
            offset = rng.uniform(200, 800) * (1 if rng.random() < 0.5 else -1)
            system.fault = (qx, qy, ux, uy, offset)
            world.faults.append(_random_fault(world, rng, through=(qx, qy), angle=angle))
        if rng.random() < 0.65:
            add_stock(world, rng, system.x, system.y, system.core * rng.uniform(0.5, 1.3))
        for _ in range(int(rng.integers(1, 3))):  # deposits in the core, on the side the fault left in place
            for _ in range(50):
                r, a = rng.uniform(0, 0.3) * system.core, rng.uniform(0, 2 * math.pi)
                x, y = system.x + r * math.cos(a), system.y + r * math.sin(a)
                if system.fault is None:
                    break
                qx, qy, ux, uy, _ = system.fault
                if (x - qx) * uy - (y - qy) * ux < -0.1 * system.core:
                    break
            else:
                x, y = system.x, system.y
            world.deposits.append((x, y))
    evidence = [r for r in roles if r in EVIDENCE_ROLES]
    for role in evidence:
        world.contrast[role] = rng.uniform(2.0, 5.0)
    weak = [r for r in evidence if r not in CORE_ROLES and r != "hydrothermal_alteration"]
    if weak and rng.random() < 0.3:
        world.contrast[weak[int(rng.integers(len(weak)))]] = rng.uniform(0.8, 1.8)
    cores = [r for r in evidence if r in CORE_ROLES]
    world.contrast[cores[int(rng.integers(len(cores)))]] = rng.uniform(4.0, 6.0)
    if rng.random() < 0.3:  # a lone distractor anomaly elsewhere, outside every system's footprint
        role = evidence[int(rng.integers(len(evidence)))]
        radius = rng.uniform(250, 900)
        for _ in range(100):
            x, y = _place(world, rng, _margin(world, radius), near_fault=False)
            if all(math.hypot(x - s.x, y - s.y) > FOOTPRINT_M + radius for s in world.systems):
                world.blobs.append(_blob(rng, role, x, y, radius, rng.uniform(2.5, 5.0), "d1"))
                break


def _blob(rng, role, x, y, radius, contrast, key, shape="blob") -> Blob:
    return Blob(role=role, x=float(x), y=float(y), radius=float(radius), aspect=rng.uniform(1.0, 1.8),
                angle=rng.uniform(0, math.pi), shape=shape, key=key, contrast=float(contrast))


def populate_decoupled(world: World, rng: np.random.Generator, roles: list) -> bool:
    """One anomaly per evidence layer, every pair at least FOOTPRINT_M apart; False when they do not fit."""
    evidence = [r for r in roles if r in EVIDENCE_ROLES]
    radii = [rng.uniform(250, 800) for _ in evidence]
    for _ in range(300):
        spots = []
        for radius in radii:
            for _ in range(60):
                x, y = _place(world, rng, _margin(world, radius), near_fault=rng.random() < 0.5)
                # every point of one anomaly more than a footprint from every point of another
                if all(math.hypot(x - sx, y - sy) >= FOOTPRINT_M + radius + sr + 100 for sx, sy, sr in spots):
                    spots.append((x, y, radius))
                    break
            else:
                break
        if len(spots) == len(evidence):
            for i, (role, (x, y, radius)) in enumerate(zip(evidence, spots)):
                world.blobs.append(_blob(rng, role, x, y, radius, rng.uniform(4.5, 7.0), f"a{i}"))
            return True
    return False


def populate_lithology_clay(world: World, rng: np.random.Generator) -> None:
    """Clay high over one whole stratum: the unit with a share of the scene nearest a drawn target."""
    ys, xs = np.mgrid[0:60, 0:60]
    dx = (xs / 59 - 0.5) * world.width
    dy = (ys / 59 - 0.5) * world.height
    codes = world.units(dx, dy)
    target = rng.uniform(0.1, 0.35)
    shares = {i + 1: float((codes == i + 1).mean()) for i in range(len(world.geology["strata"]))}
    present = {c: s for c, s in shares.items() if s > 0.03} or shares
    world.clay_unit = min(present, key=lambda c: (abs(present[c] - target), c))
    world.clay_contrast = rng.uniform(4.0, 6.0)


def populate_single_layer(world: World, rng: np.random.Generator, roles: list) -> None:
    evidence = [r for r in roles if r in EVIDENCE_ROLES]
    role = evidence[int(rng.integers(len(evidence)))]
    radius = rng.uniform(250, 1200)
    x, y = _place(world, rng, _margin(world, radius), near_fault=rng.random() < 0.5)
    shape = "ring" if role in CLAY_ROLES + ("propylitic_alteration",) and rng.random() < 0.4 else "blob"
    world.blobs.append(_blob(rng, role, x, y, radius * (2 if shape == "ring" else 1), rng.uniform(4.5, 8.0), "l1",
                             shape))


def choose_roles(rng: np.random.Generator) -> list:
    """The case's layers, drawn the same way for every kind."""
    roles = ["geological_map", "hydrothermal_alteration"]
    for role, p in (("argillic_alteration", 0.35), ("silicification", 0.6), ("propylitic_alteration", 0.6),
                    ("iron_oxide", 0.6), ("geophysics", 0.3), ("geochemistry", 0.25)):
        if rng.random() < p:
            roles.append(role)
    if not any(r in roles for r in ("iron_oxide", "silicification")):
        roles.append("iron_oxide" if rng.random() < 0.5 else "silicification")
    if rng.random() < 0.75:
        roles.append("structure")
    if rng.random() < 0.2:
        roles.append("false_color_composite")
    return roles


def build_world(seed: int, index: int, kind: str, region: tuple, extent_km: float) -> tuple[World, list, dict]:
    rng = np.random.default_rng([seed, index, 1])
    roles = choose_roles(rng)
    name, epsg, lon, lat, alternatives = region
    lon += rng.uniform(-0.3, 0.3)
    lat += rng.uniform(-0.3, 0.3)
    aspect = rng.uniform(0.7, 1.0)
    extent = extent_km * 1000.0
    if kind == "decoupled":
        n_evidence = sum(r in EVIDENCE_ROLES for r in roles)
        extent = max(extent, DECOUPLED_MIN_KM * 1000.0, min(EXTENT_KM[1], 8.0 * math.sqrt(n_evidence)) * 1000.0)
    for attempt in range(12):
        width, height = (extent, extent * aspect) if rng.random() < 0.5 else (extent * aspect, extent)
        world = World(seed=seed, index=index, kind=kind, region=name, epsg=epsg, alternatives=alternatives,
                      lon=lon, lat=lat, width=width, height=height)
        build_geology(world, rng)
        for _ in range(int(rng.integers(1, 4))):
            world.faults.append(_random_fault(world, rng))
        if kind == "porphyry":
            populate_porphyry(world, rng, roles)
        elif kind == "decoupled" and not populate_decoupled(world, rng, roles):
            extent = min(EXTENT_KM[1] * 1000.0, extent * 1.2)
            aspect = min(1.0, aspect + 0.1)
            if attempt == 11:
                raise RuntimeError(f"case {index}: the decoupled anomalies do not fit a {extent / 1000:.0f} km scene")
            continue
        elif kind == "lithology_clay":
            populate_lithology_clay(world, rng)
        elif kind == "single_layer":
            populate_single_layer(world, rng, roles)
        break
    if rng.random() < 0.45:  # barren stocks, whatever the kind
        for _ in range(int(rng.integers(1, 3))):
            radius = rng.uniform(300, 2000)
            x, y = _place(world, rng, _margin(world, radius), near_fault=False)
            add_stock(world, rng, x, y, radius)
    style = {
        "background": ["normal", "lognormal", "mixed"][int(rng.integers(3))],
        "shared": rng.uniform(0.0, 0.5),
        "border": ["none", "thin", "wide"][int(rng.choice(3, p=[0.25, 0.4, 0.35]))],
        "all_rgb": bool(rng.random() < 0.15),
        "mixed_crs": bool(rng.random() < 0.6),
        "pixel": float(np.clip(max(width, height) / rng.uniform(150, 450), *PIXEL_M)),
        "deposit_crs": "4326" if rng.random() < 0.5 else "world",
    }
    return world, roles, style


# ----------------------------------------------------------------------------------------------
# Layer grids and values

@dataclass
class Grid:
    crs: CRS
    epsg: int
    transform: Affine
    width: int
    height: int
    pixel_m: float


def layer_grid(world: World, rng: np.random.Generator, epsg: int, pixel_m: float, border: str) -> Grid:
    """A grid in `epsg` covering the scene plus a nodata border (ground metres on each side drawn)."""
    crs = CRS.from_epsg(epsg)
    half_w, half_h = world.width / 2, world.height / 2
    t = np.linspace(-1, 1, 21)
    ring_x = np.concatenate([t * half_w, np.full(21, half_w), -t * half_w, np.full(21, -half_w)])
    ring_y = np.concatenate([np.full(21, -half_h), t * half_h, np.full(21, half_h), -t * half_h])
    mx, my = world.to_map(ring_x, ring_y)
    if epsg != world.epsg:
        mx, my = Transformer.from_crs(world.crs, crs, always_xy=True).transform(mx, my)
    if crs.is_geographic:
        per_m_x = 1.0 / (111320.0 * math.cos(math.radians(world.lat)))
        per_m_y = 1.0 / 110574.0
    elif epsg == world.epsg:
        per_m_x = per_m_y = world.k
    else:
        to = Transformer.from_crs("EPSG:4326", crs, always_xy=True)
        x0, y0 = to.transform(world.lon, world.lat)
        x1, y1 = to.transform(world.lon, world.lat + 0.01)
        _, _, ground = GEOD.inv(world.lon, world.lat, world.lon, world.lat + 0.01)
        per_m_x = per_m_y = math.hypot(x1 - x0, y1 - y0) / ground
    span = max(world.width, world.height)
    limit = {"none": 0.0, "thin": 0.08, "wide": 0.6}[border]
    sides = [rng.uniform(0, limit) * span if limit and rng.random() < 0.85 else 0.0 for _ in range(4)]
    # the scene's bounds in this CRS, in ground metres (a reprojected scene is a rotated rectangle)
    ext_x = (mx.max() - mx.min()) / per_m_x
    ext_y = (my.max() - my.min()) / per_m_y
    # at most MAX_PX pixels a side: shrink the border first, then coarsen the pixel
    for i, ext in ((0, ext_x), (1, ext_y)):
        room = MAX_PX * PIXEL_M[1] * 0.97 - ext
        pair = sides[i] + sides[i + 2]
        if pair > room:
            sides[i] *= max(room, 0.0) / pair
            sides[i + 2] *= max(room, 0.0) / pair
    pixel_m = float(np.clip(pixel_m, *PIXEL_M))
    pixel_m = max(pixel_m, (ext_x + sides[0] + sides[2]) / MAX_PX * 1.02, (ext_y + sides[1] + sides[3]) / MAX_PX * 1.02)
    px, py = pixel_m * per_m_x, pixel_m * per_m_y  # square on the ground (not in degrees)
    x0 = mx.min() - sides[0] * per_m_x
    x1 = mx.max() + sides[2] * per_m_x
    y0 = my.min() - sides[1] * per_m_y
    y1 = my.max() + sides[3] * per_m_y
    # snap the origin to the pixel size (as a real product's grid would be)
    x0 = math.floor(x0 / px) * px
    y1 = math.ceil(y1 / py) * py
    width = int(math.ceil((x1 - x0) / px))
    height = int(math.ceil((y1 - y0) / py))
    return Grid(crs, epsg, Affine(px, 0, x0, 0, -py, y1), width, height, pixel_m)


def grid_ground(world: World, grid: Grid) -> tuple[np.ndarray, np.ndarray]:
    """Ground coordinates (m from the scene centre) of every pixel centre of a grid."""
    cols, rows = np.meshgrid(np.arange(grid.width) + 0.5, np.arange(grid.height) + 0.5)
    mx, my = grid.transform * (cols, rows)
    if grid.epsg != world.epsg:
        mx, my = Transformer.from_crs(grid.crs, world.crs, always_xy=True).transform(mx, my)
    return world.to_ground(mx, my)


@dataclass
class Background:
    model: str
    base: float
    scale: float  # sigma (normal: value units; lognormal: log units)
    lengths: tuple
    weights: tuple
    shared: float
    white: float


UNITS = {  # role -> (base, scale) of a normal background; lognormal uses base and a log sigma
    "hydrothermal_alteration": (1.05, 0.02), "argillic_alteration": (0.9, 0.03), "silicification": (1.1, 0.015),
    "propylitic_alteration": (1.0, 0.025), "iron_oxide": (1.4, 0.08), "geophysics": (0.0, 120.0),
    "geochemistry": (35.0, 8.0),
}


def draw_background(rng: np.random.Generator, role: str, style: dict) -> Background:
    model = style["background"]
    if model == "mixed":
        model = "lognormal" if rng.random() < 0.5 else "normal"
    if role == "geochemistry":
        model = "lognormal"
    if role == "geophysics":
        model = "normal"
    base, scale = UNITS[role]
    base *= rng.uniform(0.8, 1.25)
    if model == "lognormal":
        scale = rng.uniform(0.3, 1.0)
    else:
        scale *= rng.uniform(0.6, 1.6)
    if role == "geophysics":
        base = rng.uniform(-200.0, 200.0)
    short = rng.uniform(150, 1200)
    long = rng.uniform(1500, 8000)
    w_short = rng.uniform(0.3, 1.0)
    return Background(model, base, scale, (short, long), (w_short, rng.uniform(0.3, 1.0)), style["shared"],
                      rng.uniform(0.05, 0.5))


def standard_values(world: World, role: str, bg: Background, dx, dy, valid, rng, tag: str) -> np.ndarray:
    """Background (standardised, mean 0, sd 1 over the valid cells) plus the role's signal in sigmas."""
    z = (bg.weights[0] * world.noise(f"{tag}-short", bg.lengths[0]).sample(dx, dy)
         + bg.weights[1] * world.noise(f"{tag}-long", bg.lengths[1]).sample(dx, dy)
         + bg.shared * world.noise("shared", 900.0).sample(dx, dy)
         + bg.white * rng.standard_normal(dx.shape))
    sel = z[valid]
    z = (z - sel.mean()) / (sel.std() or 1.0)
    return z + world.signal(role, dx, dy)


def physical(bg: Background, z: np.ndarray) -> np.ndarray:
    if bg.model == "lognormal":
        v = bg.base * np.exp(bg.scale * z)
        step = bg.base * bg.scale / 400.0
    else:
        v = bg.base + bg.scale * z
        step = bg.scale / 400.0
    return np.round(v / step) * step


# ----------------------------------------------------------------------------------------------
# Renderings

RAMPS = {
    "jet": np.array([[20, 20, 170], [10, 110, 250], [10, 215, 245], [110, 245, 110], [250, 225, 20],
                     [250, 120, 10], [190, 10, 10]], dtype=float),
    "hot": np.array([[255, 245, 120], [255, 190, 40], [240, 110, 20], [200, 30, 20], [130, 10, 60]], dtype=float),
}


def ramp(name: str, t: np.ndarray) -> np.ndarray:
    stops = RAMPS[name]
    pos = np.clip(t, 0, 1) * (len(stops) - 1)
    i = np.minimum(pos.astype(int), len(stops) - 2)
    f = (pos - i)[..., None]
    return stops[i] * (1 - f) + stops[i + 1] * f


def grey_backdrop(world: World, dx, dy) -> np.ndarray:
    shade = (0.75 * world.noise("terrain", 2500.0).sample(dx, dy)
             + 0.45 * world.noise("terrain-fine", 300.0).sample(dx, dy))
    return np.clip(125 + 38 * shade, 35, 220)


def render_rgb(world: World, rng: np.random.Generator, z: np.ndarray, valid: np.ndarray, dx, dy) -> tuple:
    """MineBench style: anomaly classes coloured over a grey backdrop, a colour bar in a corner of the data."""
    grey = grey_backdrop(world, dx, dy)
    rgb = np.repeat(grey[..., None], 3, axis=2)
    threshold = rng.uniform(2.2, 3.2)
    top = max(threshold + 1.5, float(np.quantile(z[valid], 0.999)))
    t = (z - threshold) / (top - threshold)
    classes = int(rng.integers(3, 6)) if rng.random() < 0.5 else 0
    if classes:
        t = np.minimum(np.floor(t * classes), classes - 1) / max(classes - 1, 1)
    name = "jet" if rng.random() < 0.6 else "hot"
    hot = (z > threshold) & valid
    rgb[hot] = ramp(name, t[hot])
    rows, cols = np.nonzero(valid)
    r0, r1, c0, c1 = rows.min(), rows.max(), cols.min(), cols.max()
    h, w = r1 - r0 + 1, c1 - c0 + 1
    vertical = rng.random() < 0.6
    bar_h, bar_w = (int(0.3 * h), max(int(0.035 * w), 3)) if vertical else (max(int(0.035 * h), 3), int(0.3 * w))
    corner = int(rng.integers(4))
    inset = max(int(0.02 * min(h, w)), 2)
    top_row = r0 + inset if corner in (0, 1) else r1 - inset - bar_h
    left = c0 + inset if corner in (0, 3) else c1 - inset - bar_w
    frame = 2
    rgb[top_row - frame:top_row + bar_h + frame, left - frame:left + bar_w + frame] = 250.0
    steps = np.linspace(1, 0, bar_h)[:, None] if vertical else np.linspace(0, 1, bar_w)[None, :]
    colours = ramp(name, np.broadcast_to(steps, (bar_h, bar_w)))
    rgb[top_row:top_row + bar_h, left:left + bar_w] = colours
    painted = np.zeros(valid.shape, dtype=bool)
    painted[max(top_row - frame, 0):top_row + bar_h + frame, max(left - frame, 0):left + bar_w + frame] = True
    return np.clip(np.round(rgb), 0, 255).astype("uint8"), threshold, painted


def stretch(v: np.ndarray, valid: np.ndarray, lo_q=0.005, hi_q=0.995) -> np.ndarray:
    lo, hi = np.quantile(v[valid], [lo_q, hi_q])
    return np.clip(1 + 254 * (v - lo) / ((hi - lo) or 1.0), 1, 255)


# ----------------------------------------------------------------------------------------------
# Writing

def write_raster(path: Path, data: np.ndarray, grid: Grid, nodata=None, alpha: np.ndarray | None = None,
                 tags: dict | None = None) -> None:
    data = data if data.ndim == 3 else data[None]
    count = data.shape[0] + (1 if alpha is not None else 0)
    profile = {"driver": "GTiff", "width": grid.width, "height": grid.height, "count": count,
               "dtype": str(data.dtype), "crs": grid.crs, "transform": grid.transform, "compress": "deflate",
               "zlevel": 6, "predictor": 3 if data.dtype.kind == "f" else 2}
    if nodata is not None:
        profile["nodata"] = nodata
    if data.shape[0] == 3:
        profile["photometric"] = "RGB"
    if alpha is not None:
        profile.update(photometric="RGB", alpha="YES")
    with rasterio.open(path, "w", **profile) as ds:
        ds.write(data, indexes=list(range(1, data.shape[0] + 1)))
        if alpha is not None:
            ds.write(alpha.astype(data.dtype), data.shape[0] + 1)
        if tags:
            ds.update_tags(**tags)


def _round(obj, digits: int):
    if isinstance(obj, float):
        return round(obj, digits)
    if isinstance(obj, (list, tuple)):
        return [_round(o, digits) for o in obj]
    if isinstance(obj, dict):
        return {k: _round(v, digits) for k, v in obj.items()}
    return obj


def write_faults_gpkg(path: Path, world: World, grid: Grid) -> None:
    import fiona
    import geopandas as gpd
    from shapely.geometry import LineString, box

    scene = box(-world.width / 2, -world.height / 2, world.width / 2, world.height / 2)
    lines = []
    for line in world.faults:
        clipped = LineString(line).intersection(scene)
        if clipped.is_empty:
            continue
        parts = list(getattr(clipped, "geoms", [clipped]))
        for part in parts:
            xs, ys = np.asarray(part.coords).T
            mx, my = world.to_map(xs, ys)
            if grid.epsg != world.epsg:
                mx, my = Transformer.from_crs(world.crs, grid.crs, always_xy=True).transform(mx, my)
            lines.append(LineString(list(zip(np.round(mx, 6 if grid.crs.is_geographic else 2),
                                             np.round(my, 6 if grid.crs.is_geographic else 2)))))
    frame = gpd.GeoDataFrame({"name": [f"F{i + 1}" for i in range(len(lines))], "type": ["fault"] * len(lines)},
                             geometry=lines, crs=grid.crs)
    with fiona.Env(OGR_CURRENT_DATE="2000-01-01T00:00:00.000Z"):
        frame.to_file(path, driver="GPKG", layer="faults")


def write_case(world: World, roles: list, style: dict, folder: Path, case_id: str) -> dict:
    """Write one case folder; returns the truth record."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        if old.is_file():
            old.unlink()
    rng = world.rng(3)
    alternatives = list(world.alternatives)
    n_layers = len(roles)
    # which layers come in another CRS: at most half, never all
    crs_of = [world.epsg] * n_layers
    if style["mixed_crs"]:
        for i in rng.choice(n_layers, size=int(rng.integers(1, max(2, n_layers // 2 + 1))), replace=False):
            crs_of[int(i)] = int(alternatives[int(rng.integers(len(alternatives)))])
    if all(c != world.epsg for c in crs_of):
        crs_of[0] = world.epsg
    factors = (0.5, 0.75, 1.0, 1.0, 1.0, 1.5, 2.0, 3.0)
    layers, truth_layers = [], []
    order = list(range(n_layers))
    if rng.random() < 0.5:
        rng.shuffle(order)
    entries = {}
    for i, role in enumerate(roles):
        lrng = world.rng(7, i)
        pixel_m = style["pixel"] * factors[int(lrng.integers(len(factors)))]
        grid = layer_grid(world, lrng, crs_of[i], pixel_m, style["border"])
        dx, dy = grid_ground(world, grid)
        valid = world.in_scene(dx, dy)
        entry, record = write_layer(world, lrng, role, style, folder, grid, dx, dy, valid)
        record.update({"crs": f"EPSG:{grid.epsg}", "pixel_m": round(grid.pixel_m, 2), "width": grid.width,
                       "height": grid.height,
                       "border_cells": int((~valid).sum()), "border_share": round(float((~valid).mean()), 4)})
        entries[i] = (entry, record)
    for i in order:
        layers.append(entries[i][0])
        truth_layers.append(entries[i][1])
    data = {"format": "lodestar-case/1", "id": case_id, "question": QUESTION, "choices": dict(CHOICES),
            "answer": "A" if world.kind in POSITIVE_KINDS else "B", "layers": layers}
    deposits = []
    if world.deposits:
        for j, (x, y) in enumerate(world.deposits):
            lon, lat = world.lonlat(x, y)
            deposits.append({"name": f"{case_id}-D{j + 1}", "lon": lon, "lat": lat, "x": x, "y": y})
        write_deposits(folder / "deposits.geojson", world, deposits, style["deposit_crs"])
        data["deposits"] = "deposits.geojson"
    (folder / "case.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    truth = {
        "generator": "worlds_b", "id": case_id, "kind": world.kind, "answer": data["answer"], "region": world.region,
        "epsg": world.epsg, "centre_lonlat": [world.lon, world.lat], "scale_k": world.k,
        "width_m": world.width, "height_m": world.height, "footprint_m": FOOTPRINT_M, "style": style,
        "systems": [{"x": s.x, "y": s.y, "lonlat": list(world.lonlat(s.x, s.y)), "core_m": s.core, "shell_m": s.shell,
                     "halo_m": s.halo, "faulted": s.fault is not None,
                     "fault_offset_m": None if s.fault is None else s.fault[4]} for s in world.systems],
        "contrast": {r: c for r, c in sorted(world.contrast.items())},
        "anomalies": [{"role": b.role, "x": b.x, "y": b.y, "lonlat": list(world.lonlat(b.x, b.y)),
                       "radius_m": b.radius, "shape": b.shape, "contrast": b.contrast, "aspect": b.aspect,
                       "angle_deg": math.degrees(b.angle)} for b in world.blobs],
        "clay_unit": world.clay_unit, "clay_contrast": world.clay_contrast,
        "clay_unit_name": None if world.clay_unit is None else world.geology["strata"][world.clay_unit - 1],
        "deposits": deposits, "layers": truth_layers,
        "faults": [[list(world.lonlat(x, y)) for x, y in line] for line in world.faults],
    }
    (folder / ".worlds_b.json").write_text(json.dumps(_round(truth, 6), indent=1) + "\n", encoding="utf-8")
    return truth


def write_deposits(path: Path, world: World, deposits: list, crs: str) -> None:
    collection = {"type": "FeatureCollection"}
    features = []
    for d in deposits:
        if crs == "4326":
            coords = [round(d["lon"], 7), round(d["lat"], 7)]
        else:
            mx, my = world.to_map(d["x"], d["y"])
            coords = [round(float(mx), 2), round(float(my), 2)]
        features.append({"type": "Feature", "properties": {"name": d["name"]},
                         "geometry": {"type": "Point", "coordinates": coords}})
    if crs != "4326":
        collection["crs"] = {"type": "name", "properties": {"name": f"urn:ogc:def:crs:EPSG::{world.epsg}"}}
    collection["features"] = features
    path.write_text(json.dumps(collection, indent=1) + "\n", encoding="utf-8")


def write_layer(world: World, rng: np.random.Generator, role: str, style: dict, folder: Path, grid: Grid,
                dx, dy, valid) -> tuple[dict, dict]:
    record = {"role": role}
    if role == "geological_map":
        codes = world.units(dx, dy).astype("uint8")
        codes[~valid] = 0
        write_raster(folder / "geology.tif", codes, grid, nodata=0)
        with open(folder / "geology_legend.csv", "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(["value", "name"])
            writer.writerows(world.legend())
        record.update(path="geology.tif", form="categorical")
        return {"path": "geology.tif", "role": role, "name": "Geological map", "legend": "geology_legend.csv"}, record
    if role == "structure":
        if rng.random() < 0.5:
            dist = world.fault_distance(dx, dy).astype("float32")
            dist = np.round(dist, 1)
            dist[~valid] = -1.0
            write_raster(folder / "fault_distance.tif", dist, grid, nodata=-1.0)
            record.update(path="fault_distance.tif", form="distance")
            return {"path": "fault_distance.tif", "role": role, "name": "Distance to faults (m)",
                    "favourable": "low"}, record
        write_faults_gpkg(folder / "faults.gpkg", world, grid)
        record.update(path="faults.gpkg", form="lines")
        return {"path": "faults.gpkg", "role": role, "name": "Mapped faults"}, record
    if role == "false_color_composite":
        base = grey_backdrop(world, dx, dy)
        red = base + 22 * np.tanh(world.signal("iron_oxide", dx, dy) / 3) + 8 * world.noise("fcc-r", 600).sample(dx, dy)
        blue = base + 22 * np.tanh(world.signal("hydrothermal_alteration", dx, dy) / 3)
        green = 0.8 * base + 12 * world.noise("fcc-g", 2000).sample(dx, dy)
        rgb = np.stack([stretch(c, valid) for c in (red, green, blue)]).astype("uint8")
        rgb[:, ~valid] = 0
        write_raster(folder / "false_colour.tif", rgb, grid, nodata=0)
        record.update(path="false_colour.tif", form="composite")
        return {"path": "false_colour.tif", "role": role, "name": "False-colour composite (SWIR-NIR-R)"}, record
    bg = draw_background(rng, role, style)
    z = standard_values(world, role, bg, dx, dy, valid, rng, f"{role}")
    stem = FILE_STEM[role]
    if role in ALTERATION_ROLES:
        form = "rgb" if style["all_rgb"] else ["index", "rgb", "grey"][int(rng.choice(3, p=[0.55, 0.3, 0.15]))]
    else:
        form = "index" if rng.random() < 0.85 else "grey"
    record.update(form=form, background=bg.model, background_sigma=bg.scale, contrast=world.contrast.get(role))
    name = LAYER_NAME[role]
    if form == "index":
        v = physical(bg, z).astype("float32")
        nodata = -9999.0 if rng.random() < 0.7 else float("nan")
        v[~valid] = nodata
        path = f"{stem}.tif"
        write_raster(folder / path, v, grid, nodata=nodata)
    elif form == "grey":
        v = physical(bg, z)
        g = stretch(np.log(v) if bg.model == "lognormal" and rng.random() < 0.5 else v, valid)
        g = np.round(g).astype("uint8")
        g[~valid] = 0
        path = f"{stem}_grey.tif"
        name += " (greyscale)"
        write_raster(folder / path, g, grid, nodata=0)
    else:
        rgb, threshold, painted = render_rgb(world, rng, z, valid, dx, dy)
        record.update(colour_threshold_sigma=threshold, colour_bar_cells=int(painted.sum()))
        path = f"{stem}_map.tif"
        name += " (anomaly map)"
        rgb = np.moveaxis(rgb, 2, 0)
        if rng.random() < 0.5:
            alpha = np.where(valid | painted, 255, 0).astype("uint8")
            rgb[:, ~(valid | painted)] = 0
            write_raster(folder / path, rgb, grid, alpha=alpha)
        else:
            rgb = np.maximum(rgb, 1)
            rgb[:, ~(valid | painted)] = 0
            write_raster(folder / path, rgb, grid, nodata=0)
    record["path"] = path
    return {"path": path, "role": role, "name": name}, record


# ----------------------------------------------------------------------------------------------
# Suites

def plan(count: int, seed: int) -> list[tuple[str, tuple, float]]:
    """(kind, region, extent km) per case: half positives, negatives in equal shares, regions cycled,
    extents log-stratified over EXTENT_KM."""
    rng = np.random.default_rng([seed, 0xB])
    n_pos = (count + 1) // 2
    kinds = ["porphyry"] * n_pos + [NEGATIVE_KINDS[i % len(NEGATIVE_KINDS)] for i in range(count - n_pos)]
    rng.shuffle(kinds)
    regions = [REGIONS[i % len(REGIONS)] for i in rng.permutation(max(count, len(REGIONS)))[:count]]
    strata = rng.permutation(count)
    lo, hi = math.log(EXTENT_KM[0]), math.log(EXTENT_KM[1])
    extents = [math.exp(lo + (hi - lo) * (strata[i] + rng.random()) / count) for i in range(count)]
    return list(zip(kinds, regions, extents))


def make_case(folder, seed: int, index: int, kind: str, region: tuple, extent_km: float) -> tuple[Path, dict]:
    world, roles, style = build_world(seed, index, kind, region, extent_km)
    case_id = f"wb{seed}-{index:03d}"
    truth = write_case(world, roles, style, Path(folder), case_id)
    return Path(folder), truth


def generate(out_dir, count: int = 60, seed: int = 777) -> list[Path]:
    """Write `count` cases into out_dir/case_NNN and out_dir/suite.csv; returns the case folders."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    folders, rows = [], []
    for index, (kind, region, extent_km) in enumerate(plan(count, seed)):
        folder, truth = make_case(out / f"case_{index:03d}", seed, index, kind, region, extent_km)
        folders.append(folder)
        crss = sorted({layer["crs"] for layer in truth["layers"]})
        rows.append({"id": truth["id"], "folder": folder.name, "kind": kind, "answer": truth["answer"],
                     "region": truth["region"], "world_crs": f"EPSG:{truth['epsg']}", "layer_crs": " ".join(crss),
                     "extent_km": f"{max(truth['width_m'], truth['height_m']) / 1000:.2f}",
                     "pixel_m": f"{truth['style']['pixel']:.1f}", "border": truth["style"]["border"],
                     "background": truth["style"]["background"], "systems": len(truth["systems"]),
                     "layers": len(truth["layers"])})
    with open(out / "suite.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]) if rows else ["id", "kind"], lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return folders


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="folder to write the cases into")
    parser.add_argument("--count", type=int, default=60)
    parser.add_argument("--seed", type=int, default=777)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    folders = generate(args.out, args.count, args.seed)
    print(f"{len(folders)} cases in {args.out} ({time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
