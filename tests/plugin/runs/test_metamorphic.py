"""Metamorphic tests: changes that carry no geological information must not change the answer.

Padding every layer with a nodata border, halving and doubling the pixel size, reprojecting one layer,
adding a barren layer, renaming layers and shuffling their order keep the offline answer of a
positive and a negative synthetic case, each with index layers only and with its AlOH and silica layers as
colour renderings, and change the favourability surface only within resampling tolerance. Random smooth
geochemistry with random faults is never a verified Yes.
"""
from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import rasterio
from rasterio.transform import Affine
from rasterio.warp import Resampling, calculate_default_transform, reproject
from scipy import ndimage

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.request.case import read_case

ROOT = Path(__file__).resolve().parents[3]
CASES = {"positive": ("porphyry", 11, "A", 110, ()), "negative": ("misaligned", 13, "B", 110, ()),
         "rendered positive": ("porphyry", 11, "A", 220, ("aloh", "silica")),
         "rendered negative": ("misaligned", 13, "B", 220, ("aloh", "silica"))}
"""name -> (kind, seed, answer, size, layers drawn as colour renderings); a rendering is drawn at twice the size so
that at twice the pixel its colour bar and zones keep their shape."""
PAD_PX = 60


def _generator():
    sys.path.insert(0, str(ROOT / "scripts"))
    import synthetic_cases

    return synthetic_cases


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    made = {}
    for name, (kind, seed, _answer, size, colour) in CASES.items():
        path = _generator().make_case(tmp_path_factory.mktemp(name.replace(" ", "-")), seed, kind, size=size,
                                      colour=colour, mixed_crs=False, structure="vector", geology_style="categorical")
        made[name] = Path(path).parent
    return made


def _run(folder: Path, out: Path):
    case = read_case(folder)
    result = run_analysis(AnalysisRequest(case.layers, case.question, out, dict(case.choices), case_id=case.id))
    with rasterio.open(result.outputs["favourability"]) as ds:
        surface = (ds.read(1, masked=True), ds.transform, ds.crs)
    return result, surface


@pytest.fixture(scope="module")
def baseline(cases, tmp_path_factory):
    return {name: _run(folder, tmp_path_factory.mktemp(f"{name.replace(' ', '-')}-base"))
            for name, folder in cases.items()}


# -- transformations of a case folder (copies; the generated case is never touched) -------------------------
def _copy(folder: Path, target: Path) -> tuple[Path, dict]:
    shutil.copytree(folder, target)
    return target, json.loads((target / "case.json").read_text(encoding="utf-8"))


def _save(target: Path, data: dict) -> Path:
    (target / "case.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    return target


def _rasters(target: Path, data: dict):
    return [target / layer["path"] for layer in data["layers"] if layer["path"].endswith(".tif")]


def _nodata_for(ds) -> float:
    return ds.nodata if ds.nodata is not None else (-9999.0 if ds.dtypes[0].startswith("float") else 0)


def pad(folder: Path, target: Path) -> Path:
    """Every raster grown by a nodata border of PAD_PX pixels: four times more empty ground around the data (a
    rendering's border is black, declared nodata 0, as many exports are)."""
    target, data = _copy(folder, target)
    for path in _rasters(target, data):
        with rasterio.open(path) as ds:
            nodata, profile, values = _nodata_for(ds), ds.profile, ds.read()
        padded = np.full((values.shape[0], values.shape[1] + 2 * PAD_PX, values.shape[2] + 2 * PAD_PX), nodata,
                         dtype=values.dtype)
        padded[:, PAD_PX:-PAD_PX, PAD_PX:-PAD_PX] = values
        profile.update(width=padded.shape[2], height=padded.shape[1], nodata=nodata,
                       transform=profile["transform"] * Affine.translation(-PAD_PX, -PAD_PX))
        with rasterio.open(path, "w", **profile) as out:
            out.write(padded)
    return _save(target, data)


def _warp(path: Path, dst_crs, resolution=None) -> None:
    with rasterio.open(path) as ds:
        categorical = not ds.dtypes[0].startswith("float")
        nodata, profile, values = _nodata_for(ds), ds.profile, ds.read()
        transform, width, height = calculate_default_transform(ds.crs, dst_crs, ds.width, ds.height, *ds.bounds,
                                                               resolution=resolution)
        out = np.full((ds.count, height, width), nodata, dtype=values.dtype)
        reproject(values, out, src_transform=ds.transform, src_crs=ds.crs, src_nodata=ds.nodata, dst_nodata=nodata,
                  dst_transform=transform, dst_crs=dst_crs,
                  resampling=Resampling.nearest if categorical else Resampling.bilinear)
    profile.update(crs=dst_crs, transform=transform, width=width, height=height, nodata=nodata)
    with rasterio.open(path, "w", **profile) as dst:
        dst.write(out)


def resample(factor: float):
    def transform(folder: Path, target: Path) -> Path:
        target, data = _copy(folder, target)
        for path in _rasters(target, data):
            with rasterio.open(path) as ds:
                crs, size = ds.crs, abs(ds.transform.a) * factor
            _warp(path, crs, resolution=size)
        return _save(target, data)
    return transform


def reproject_one(folder: Path, target: Path) -> Path:
    """The first alteration index in Web Mercator, the others in their UTM zone."""
    target, data = _copy(folder, target)
    first = next(target / layer["path"] for layer in data["layers"] if layer["role"].endswith("alteration")
                 or layer["role"] == "silicification")
    _warp(first, "EPSG:3857")
    return _save(target, data)


def add_barren(folder: Path, target: Path) -> Path:
    """An argillic index of smooth background noise only: evidence of nothing."""
    target, data = _copy(folder, target)
    template = _rasters(target, data)[1]
    with rasterio.open(template) as ds:
        profile = ds.profile
        profile.update(count=1, dtype="float32", nodata=-9999.0)
        rng = np.random.default_rng(5)
        noise = ndimage.gaussian_filter(rng.normal(size=(ds.height, ds.width)), 6)
        values = (1.0 + 0.02 * noise / noise.std()).astype("float32")
    with rasterio.open(target / "barren_argillic.tif", "w", **profile) as out:
        out.write(values, 1)
    data["layers"].append({"path": "barren_argillic.tif", "role": "argillic_alteration",
                           "name": "kaolinite index (barren)"})
    return _save(target, data)


def rename(folder: Path, target: Path) -> Path:
    target, data = _copy(folder, target)
    for i, layer in enumerate(data["layers"]):
        layer["name"] = f"layer {chr(ord('Z') - i)}"
    return _save(target, data)


def shuffle(folder: Path, target: Path) -> Path:
    target, data = _copy(folder, target)
    data["layers"] = data["layers"][::-1]
    return _save(target, data)


TRANSFORMS = {"pad": (pad, 0.02), "half pixel": (resample(0.5), 0.08), "double pixel": (resample(2.0), 0.08),
              "reproject one": (reproject_one, 0.08), "barren layer": (add_barren, 0.12), "rename": (rename, 1e-6),
              "shuffle": (shuffle, 1e-6)}


def _surface_difference(base, other) -> float:
    """Mean absolute difference of two surfaces on the base surface's cells where both have data."""
    values, transform, crs = base
    moved = np.full(values.shape, np.nan, dtype="float32")
    reproject(other[0].filled(np.nan).astype("float32"), moved, src_transform=other[1], src_crs=other[2],
              dst_transform=transform, dst_crs=crs, src_nodata=np.nan, dst_nodata=np.nan,
              resampling=Resampling.nearest)
    both = ~np.ma.getmaskarray(values) & np.isfinite(moved)
    assert both.sum() > 0.8 * (~np.ma.getmaskarray(values)).sum()
    return float(np.mean(np.abs(values.filled(0.0)[both] - moved[both])))


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("change", list(TRANSFORMS))
def test_uninformative_changes_keep_the_answer_and_the_surface(cases, baseline, name, change, tmp_path):
    transform, tolerance = TRANSFORMS[change]
    base_result, base_surface = baseline[name]
    assert base_result.answer == CASES[name][2]
    result, surface = _run(transform(cases[name], tmp_path / "case"), tmp_path / "out")
    assert result.answer == base_result.answer, f"{change} turned {base_result.answer} into {result.answer}"
    assert _surface_difference(base_surface, surface) <= tolerance


@pytest.mark.parametrize("faults_as", ["lines", "distance raster"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_smooth_geochemistry_with_random_faults_is_never_a_verified_yes(seed, faults_as, tmp_path):
    """Lognormal smooth noise as arsenic and random straight faults, given as lines or as a distance-to-faults
    raster (favourable low, its corridors the nearest 15 % of the scene): nothing Carlin-like is there."""
    import geopandas as gpd
    from rasterio.features import rasterize
    from shapely.geometry import LineString

    rng = np.random.default_rng(seed)
    size, pixel = 200, 100.0
    transform = Affine(pixel, 0, 400_000.0, 0, -pixel, 4_500_000.0)
    field = ndimage.gaussian_filter(rng.normal(size=(size, size)), 8)
    arsenic = np.exp(1.5 + 0.8 * field / field.std()).astype("float32")
    with rasterio.open(tmp_path / "as.tif", "w", driver="GTiff", width=size, height=size, count=1, dtype="float32",
                       crs="EPSG:32611", transform=transform, nodata=-9999.0) as out:
        out.write(arsenic, 1)
    lines = []
    for _ in range(6):
        (x0, x1), (y0, y1) = rng.uniform(400_000, 420_000, 2), rng.uniform(4_480_000, 4_500_000, 2)
        lines.append(LineString([(x0, y0), (x1, y1)]))
    if faults_as == "lines":
        gpd.GeoDataFrame(geometry=lines, crs="EPSG:32611").to_file(tmp_path / "faults.gpkg", driver="GPKG")
        faults = {"path": "faults.gpkg", "role": "structure", "name": "faults"}
    else:
        on_fault = rasterize(lines, out_shape=(size, size), transform=transform, all_touched=True) == 1
        distance = ndimage.distance_transform_edt(~on_fault, sampling=pixel).astype("float32")
        with rasterio.open(tmp_path / "fault_distance.tif", "w", driver="GTiff", width=size, height=size, count=1,
                           dtype="float32", crs="EPSG:32611", transform=transform, nodata=-9999.0) as out:
            out.write(distance, 1)
        faults = {"path": "fault_distance.tif", "role": "structure", "name": "distance to faults (m)",
                  "favourable": "low"}
    data = {"format": "lodestar-case/1", "id": f"random-{seed}",
            "question": "Can Carlin-type gold deposits be detected here? Answer: A. Yes B. No.",
            "layers": [{"path": "as.tif", "role": "geochemistry", "name": "stream-sediment As (ppm)"}, faults]}
    (tmp_path / "case.json").write_text(json.dumps(data), encoding="utf-8")
    result, _ = _run(tmp_path, tmp_path / "out")
    assert not (result.answer == "A" and result.valid), result.notes


def test_a_nodata_border_leaves_a_real_district_as_it_was(great_basin_run, tmp_path):
    """The Great Basin case (four rasters of different frames, fault lines, deposits) with every raster padded by
    a nodata border: the same answer, targets and deposits found, the same surface. Layers meet where each holds
    data: before, the padded frames let one layer's data beyond another's edge into the analysis (85 targets
    became 97 and the deposit 1.5 km north of the study area counted as in it)."""
    case = read_case(pad(ROOT / "tests" / "data" / "great-basin-gold", tmp_path / "padded"))
    padded_run = run_analysis(AnalysisRequest(case.layers, case.question, tmp_path / "padded-run", dict(case.choices),
                                              case_id=case.id, deposits=case.deposits,
                                              favourable_units=dict(case.favourable_units)))
    results = []
    for result in (great_basin_run, padded_run):
        with rasterio.open(result.outputs["favourability"]) as ds:
            results.append((result, (ds.read(1, masked=True), ds.transform, ds.crs)))
    (base, base_surface), (padded, padded_surface) = results
    assert base.answer == padded.answer == "A" and base.valid and padded.valid
    assert len(padded.prospectivity) == len(base.prospectivity)
    assert padded.metrics["inside"] == base.metrics["inside"] == 31
    # the work list of 30 and the rest of the top share it leaves in the surface: 23 or more of the 31 together (24
    # with the weights once tuned on this district, when every target was drawn)
    said = (re.search(r"holding (\d+) known deposits?\) (are|is) not drawn", n)
            for r in (base, padded) for n in r.notes)
    left = [int(found.group(1)) for found in said if found]
    assert len(left) == 2 and left[0] == left[1]
    assert padded.metrics["found"] == base.metrics["found"] and base.metrics["found"] + left[0] >= 23
    assert _surface_difference(base_surface, padded_surface) == 0.0
