"""Generated multispectral scenes of three sensors' standard products, with a known porphyry alteration pattern, and
the same case given as index rasters (tests/ is on sys.path through conftest.py).

Each scene is one stacked GeoTIFF whose bands carry the product's own metadata: band names as the product names
them, centre wavelengths, scale / offset and nodata:
- ASTER AST_07XT + AST_05: int16 reflectance / emissivity x 1000 (GDAL scale 0.001), bands B01 B02 B3N B04-B14,
  nodata -9999;
- Landsat 8/9 Collection 2 Level-2: uint16 counts SR_B1-SR_B7 (reflectance = DN x 0.0000275 - 0.2, which the
  product states in its MTL file, not in GDAL tags) and QA_PIXEL, nodata 0;
- Sentinel-2 L2A (processing baseline 04.00+): uint16 counts B01-B12 and B8A (no B10 in L2A),
  BOA_ADD_OFFSET -1000 and BOA_QUANTIFICATION_VALUE 10000, and SCL, nodata 0.

The pattern: a porphyry core at the centre (an AlOH absorption near 2.2 um, ferric iron raising red over blue,
and on ASTER a silica low of band 10 emissivity), on a rock background with 1 % noise; a cloud block (Landsat and
Sentinel-2, flagged by their quality band), a water block and a vegetation block, away from the core.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import rasterio
from affine import Affine

SIZE = 96
TRANSFORM = Affine(30, 0, 500000, 0, -30, 4000000)
CRS = "EPSG:32612"
CORE = (48, 48)  # row, col
CLOUD = (slice(4, 16), slice(4, 16))
WATER = (slice(76, 86), slice(4, 24))
VEGETATION = (slice(4, 16), slice(78, 90))
NODATA_INDEX = -9999.0

ASTER_BANDS = ("B01", "B02", "B3N", "B04", "B05", "B06", "B07", "B08", "B09", "B10", "B11", "B12", "B13", "B14")
ASTER_UM = (0.556, 0.661, 0.807, 1.656, 2.167, 2.209, 2.262, 2.336, 2.400, 8.291, 8.634, 9.075, 10.657, 11.318)
LANDSAT_UM = (0.443, 0.482, 0.561, 0.655, 0.865, 1.609, 2.201)
S2_BANDS = ("B01", "B02", "B03", "B04", "B05", "B06", "B07", "B08", "B8A", "B09", "B11", "B12")
S2_NM = (443, 490, 560, 665, 705, 740, 783, 842, 865, 945, 1610, 2190)
QA_CLEAR, QA_CLOUD, QA_WATER = 21824, 22280, 21952  # Landsat C2 QA_PIXEL values of clear land, cloud, clear water
SCL_BARE, SCL_VEGETATION, SCL_WATER, SCL_CLOUD = 5, 4, 6, 9


def _core() -> np.ndarray:
    rows, cols = np.mgrid[0:SIZE, 0:SIZE]
    return np.exp(-((rows - CORE[0]) ** 2 + (cols - CORE[1]) ** 2) / (2 * 6.0 ** 2))


def _reflectance(base: dict, seed: int, noise: float = 0.01) -> dict:
    rng = np.random.default_rng(seed)
    return {k: v * (1 + noise * rng.standard_normal((SIZE, SIZE))) for k, v in base.items()}


def _surfaces(out: dict, green: str, red: str, nir: str, cloud: bool) -> None:
    """Water and vegetation blocks (and a cloud block) painted over a scene's reflectance bands."""
    for key in out:
        if cloud:
            out[key][CLOUD] = 0.6
        out[key][WATER] = 0.03
        out[key][VEGETATION] = 0.2
    out[green][WATER], out[nir][WATER] = 0.06, 0.02
    out[red][VEGETATION], out[nir][VEGETATION] = 0.04, 0.45


def aster_reflectance(seed: int = 11) -> dict:
    g = _core()
    base = {"b1": 0.15, "b2": 0.18, "b3": 0.25, "b4": 0.32, "b5": 0.30, "b6": 0.30, "b7": 0.29, "b8": 0.27,
            "b9": 0.26}
    out = _reflectance({k: np.full((SIZE, SIZE), v) for k, v in base.items()}, seed)
    out["b6"] *= 1 - 0.2 * g  # AlOH absorption at 2.2 um
    out["b2"] *= 1 + 0.3 * g  # ferric iron: red over green
    _surfaces(out, "b1", "b2", "b3", cloud=False)
    emissivity = {"b10": 0.93, "b11": 0.94, "b12": 0.945, "b13": 0.96, "b14": 0.965}
    tir = _reflectance({k: np.full((SIZE, SIZE), v) for k, v in emissivity.items()}, seed + 1, noise=0.003)
    tir["b10"] *= 1 - 0.06 * g  # quartz reststrahlen: low band 10 emissivity over silica
    out.update(tir)
    return out


def landsat_reflectance(seed: int = 12) -> dict:
    g = _core()
    base = {"b1": 0.09, "b2": 0.10, "b3": 0.13, "b4": 0.16, "b5": 0.25, "b6": 0.30, "b7": 0.27}
    out = _reflectance({k: np.full((SIZE, SIZE), v) for k, v in base.items()}, seed)
    out["b7"] *= 1 - 0.2 * g  # clay / AlOH absorption in SWIR 2
    out["b4"] *= 1 + 0.3 * g  # ferric iron: red over blue
    _surfaces(out, "b3", "b4", "b5", cloud=True)
    return out


def sentinel2_reflectance(seed: int = 13) -> dict:
    g = _core()
    base = {"b1": 0.09, "b2": 0.10, "b3": 0.13, "b4": 0.16, "b5": 0.19, "b6": 0.22, "b7": 0.24, "b8": 0.25,
            "b8a": 0.26, "b9": 0.20, "b11": 0.30, "b12": 0.27}
    out = _reflectance({k: np.full((SIZE, SIZE), v) for k, v in base.items()}, seed)
    out["b12"] *= 1 - 0.2 * g
    out["b4"] *= 1 + 0.3 * g
    _surfaces(out, "b3", "b4", "b8", cloud=True)
    return out


def _profile(count: int, dtype: str, nodata) -> dict:
    return dict(driver="GTiff", width=SIZE, height=SIZE, count=count, dtype=dtype, crs=CRS, transform=TRANSFORM,
                nodata=nodata)


def write_aster(path) -> Path:
    """An ASTER AST_07XT (VNIR + SWIR reflectance) + AST_05 (TIR emissivity) stack, int16 x 1000."""
    values = aster_reflectance()
    with rasterio.open(path, "w", **_profile(14, "int16", -9999)) as ds:
        for i, (name, um) in enumerate(zip(ASTER_BANDS, ASTER_UM), start=1):
            label = "b" + name[1:].lstrip("0").rstrip("N").lower()
            ds.write(np.round(values[label] * 1000).astype("int16"), i)
            ds.set_band_description(i, name)
            ds.update_tags(i, WAVELENGTH=f"{um}", WAVELENGTH_UNITS="micrometers")
        ds.scales = (0.001,) * 14
        ds.offsets = (0.0,) * 14
        ds.update_tags(PRODUCT="AST_07XT + AST_05", SENSOR="ASTER")
    return Path(path)


def write_landsat(path) -> Path:
    """A Landsat 9 Collection 2 Level-2 stack: SR_B1-SR_B7 counts and QA_PIXEL."""
    values = landsat_reflectance()
    with rasterio.open(path, "w", **_profile(8, "uint16", 0)) as ds:
        for i in range(1, 8):
            ds.write(np.round((values[f"b{i}"] + 0.2) / 0.0000275).astype("uint16"), i)
            ds.set_band_description(i, f"SR_B{i}")
        qa = np.full((SIZE, SIZE), QA_CLEAR, dtype="uint16")
        qa[CLOUD], qa[WATER] = QA_CLOUD, QA_WATER
        ds.write(qa, 8)
        ds.set_band_description(8, "QA_PIXEL")
        ds.update_tags(SPACECRAFT_ID="LANDSAT_9", PROCESSING_LEVEL="L2SP", COLLECTION_NUMBER="02")
    return Path(path)


def write_sentinel2(path) -> Path:
    """A Sentinel-2 L2A stack (baseline 04.00+): B01-B12 and B8A counts, BOA offset -1000, and SCL."""
    values = sentinel2_reflectance()
    with rasterio.open(path, "w", **_profile(13, "uint16", 0)) as ds:
        for i, (name, nm) in enumerate(zip(S2_BANDS, S2_NM), start=1):
            ds.write(np.round(values[name.lower().replace("b0", "b")] * 10000 + 1000).astype("uint16"), i)
            ds.set_band_description(i, name)
            ds.update_tags(i, BANDNAME=name.replace("B0", "B"), WAVELENGTH=str(nm), WAVELENGTH_UNIT="nm",
                           BOA_ADD_OFFSET="-1000")
        scl = np.full((SIZE, SIZE), SCL_BARE, dtype="uint16")
        scl[CLOUD], scl[WATER], scl[VEGETATION] = SCL_CLOUD, SCL_WATER, SCL_VEGETATION
        ds.write(scl, 13)
        ds.set_band_description(13, "SCL")
        ds.update_tags(BOA_QUANTIFICATION_VALUE="10000", PRODUCT_TYPE="S2MSI2A", PROCESSING_BASELINE="05.10")
    return Path(path)


WRITERS = {"aster": write_aster, "landsat_oli": write_landsat, "sentinel2": write_sentinel2}
FILES = {"aster": "AST_07XT_scene.tif", "landsat_oli": "LC09_L2SP_scene.tif", "sentinel2": "S2B_MSIL2A_scene.tif"}

INDEX_CASES = {
    "aster": {"aloh": ("hydrothermal_alteration", lambda v: (v["b5"] + v["b7"]) / v["b6"]),
              "ferric_iron": ("iron_oxide", lambda v: v["b2"] / v["b1"]),
              "silica": ("silicification", lambda v: v["b13"] / v["b10"])},
    "landsat_oli": {"clay": ("argillic_alteration", lambda v: v["b6"] / v["b7"]),
                    "iron_oxide": ("iron_oxide", lambda v: v["b4"] / v["b2"])},
    "sentinel2": {"clay": ("argillic_alteration", lambda v: v["b11"] / v["b12"]),
                  "iron_oxide": ("iron_oxide", lambda v: v["b4"] / v["b2"])},
}
"""The porphyry model's indices of each sensor (AlOH, ferric iron, and silica where the sensor has thermal bands):
role and formula over reflectance."""


def read_back(sensor: str) -> dict:
    """The reflectance a scene's stored counts stand for (what a reader of the product computes)."""
    values = {"aster": aster_reflectance, "landsat_oli": landsat_reflectance,
              "sentinel2": sentinel2_reflectance}[sensor]()
    if sensor == "aster":
        return {k: np.round(v * 1000) * 0.001 for k, v in values.items()}
    if sensor == "landsat_oli":
        return {k: np.round((v + 0.2) / 0.0000275) * 0.0000275 - 0.2 for k, v in values.items()}
    return {k: (np.round(v * 10000 + 1000) - 1000) / 10000 for k, v in values.items()}


def masked(sensor: str) -> np.ndarray:
    """Where the scene holds cloud, water or vegetation."""
    mask = np.zeros((SIZE, SIZE), dtype=bool)
    for block in ((WATER, VEGETATION) if sensor == "aster" else (CLOUD, WATER, VEGETATION)):
        mask[block] = True
    return mask


def write_index_case(sensor: str, folder, scene_name: str) -> list:
    """The same case as index rasters: [(path, role, layer name)] named as a run names a scene's indices."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    values, mask = read_back(sensor), masked(sensor)
    out = []
    for index, (role, formula) in INDEX_CASES[sensor].items():
        data = np.where(mask, NODATA_INDEX, formula(values)).astype("float32")
        path = folder / f"{scene_name}_{index}.tif"
        with rasterio.open(path, "w", **_profile(1, "float32", NODATA_INDEX)) as ds:
            ds.write(data, 1)
        out.append((path, role, f"{scene_name}_{index}"))
    return out


def write_scene(sensor: str, folder) -> Path:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return WRITERS[sensor](folder / FILES[sensor])
