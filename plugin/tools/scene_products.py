"""Which multispectral product a raster is: sensor, bands, reflectance scaling and quality band, read from its metadata.

A scene is recognised, strongest sign first, from the band names of the sensors' standard products in the band
descriptions or `BANDNAME` tags (ASTER L1T `ImageData3N`, AST_07 `SRF_VNIR_B3N`, AST_05 `Emissivity_Band13`, `B3N`;
Landsat Collection 2 `SR_B1`..`SR_B7` with `QA_PIXEL`; Sentinel-2 L2A `B01`..`B12`, `B8A` with `SCL`), then from the
band centre wavelengths (`WAVELENGTH`, `CENTRAL_WAVELENGTH_UM`, ENVI `wavelength`), then from the sensor the user
chose (the standard band order). Reflectance: a band's GDAL scale / offset when it has one, else the product's
documented scaling of integer counts (Landsat C2 L2 x 0.0000275 - 0.2; Sentinel-2 L2A (DN + BOA_ADD_OFFSET) /
QUANTIFICATION_VALUE; ASTER AST_07 / AST_05 x 0.001)."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import LodestarError
from ..raster_io import RasterReader
from .alteration_indices import PRESETS, SensorPreset, band_wavelengths, match_wavelengths, resolve_bands

PRODUCT_SCALING = {
    "landsat_oli": (0.0000275, -0.2, "Landsat Collection 2 Level-2 surface reflectance (x 0.0000275 - 0.2)"),
    "aster": (0.001, 0.0, "ASTER AST_07 reflectance / AST_05 emissivity (x 0.001)"),
}
"""Scaling of a product's integer counts to reflectance where the file carries no GDAL scale / offset (Sentinel-2's
comes from its BOA_ADD_OFFSET and QUANTIFICATION_VALUE tags, `_sentinel2_scaling`)."""
S2_QUANTIFICATION = 10000.0
"""Sentinel-2 L2A BOA quantification value (every processing baseline so far)."""

_NAMES = {
    "landsat_oli": (r"\bsr b0?([1-7])\b",),
    "sentinel2": (r"^b(0[1-9]|1[0-2]|8a)\b", r"^b([1-9]|1[0-2]|8a),? central wavelength"),
    "aster": (r"\bimagedata ?(\d{1,2}n?)\b", r"\bsrf (?:vnir|swir) b0?(\d{1,2}n?)\b", r"\bemissivity band ?(\d{2})\b",
              r"^b0?(3n)\b", r"^b(0[1-9]|1[0-4])\b", r"^(?:vnir|swir|tir) band ?(\d{1,2}n?)$"),
}
"""Band names of each sensor's standard products (read lower case, '_' as a space); group 1 is the band."""
_MASKS = {"landsat_oli": r"\bqa pixel\b", "sentinel2": r"^scl\b|scene classification"}
_SENSOR_WORDS = {"aster": r"\baster\b|\bast ?(07|05|l1t)", "landsat_oli": r"landsat|\boli\b|\blc0[89]\b",
                 "sentinel2": r"sentinel.?2|\bmsi\b|\bs2[ab]?\b"}


@dataclass
class Scene:
    """A recognised multispectral raster: its preset, band label -> 1-based band, and how the bands were found."""

    preset: SensorPreset
    bands: dict
    how: str
    scaling: dict = field(default_factory=dict)  # band label -> (scale, offset) applied to the values read
    scaling_note: str = ""
    mask_band: int | None = None  # 1-based band of the product's quality band (QA_PIXEL, SCL), if any
    mask_kind: str = ""  # "qa_pixel" or "scl"


def _plain(text: str) -> str:
    return re.sub(r"[_.\-]+", " ", str(text or "").lower()).strip()


def _band_texts(reader: RasterReader) -> list[str]:
    texts = []
    for i in range(reader.count):
        tags = {k.lower(): v for k, v in reader.band_tags[i].items()}
        texts.append(_plain(reader.descriptions[i] or tags.get("bandname") or ""))
    return texts


def _label(raw: str) -> str:
    raw = raw.lower().lstrip("0") or "0"
    return "b" + raw.replace("n", "")


def _named_bands(reader: RasterReader, preset: SensorPreset) -> tuple[dict, int | None]:
    """Band label -> band of the product band names of one sensor, and its quality band."""
    bands: dict[str, int] = {}
    mask: int | None = None
    for i, text in enumerate(_band_texts(reader)):
        if preset.name in _MASKS and re.search(_MASKS[preset.name], text):
            mask = i + 1
            continue
        for pattern in _NAMES[preset.name]:
            match = re.search(pattern, text)
            if match and _label(match.group(1)) in preset.wavelengths:
                bands.setdefault(_label(match.group(1)), i + 1)
                break
    return bands, mask


def _distinct(preset: SensorPreset, texts: list) -> int:
    """How strongly band names tell this sensor apart: names only it uses (B3N, B8A, SR_B, ImageData)."""
    joined = " | ".join(texts)
    marks = {"aster": r"3n\b|imagedata|srf |emissivity|\bb1[34]\b", "sentinel2": r"\bb8a\b|\bb1[12]\b|\bscl\b",
             "landsat_oli": r"\bsr b"}
    return len(re.findall(marks[preset.name], joined))


def recognise(reader: RasterReader, sensor: str = "") -> Scene | None:
    """The scene a raster holds, or None when nothing in its metadata names a multispectral product and no sensor is
    chosen. `sensor`: a preset name the user chose ('aster', 'landsat_oli', 'sentinel2'); ''/'auto': from metadata.
    A raster named as one sensor's product whose bands cannot be told raises a clear error."""
    sensor = (sensor or "").strip().lower()
    if sensor in ("", "auto"):
        sensor = ""
    elif sensor not in PRESETS:
        raise LodestarError(f"Unknown sensor {sensor!r}; choose one of {', '.join(PRESETS)}.")
    if reader.count < 2:
        return None
    candidates = [PRESETS[sensor]] if sensor else list(PRESETS.values())
    texts = _band_texts(reader)
    named = []
    for preset in candidates:
        bands, mask = _named_bands(reader, preset)
        if len(bands) >= 2:
            named.append((_distinct(preset, texts), len(bands), preset, bands, mask))
    if named:
        named.sort(key=lambda row: (row[0], row[1]), reverse=True)
        if len(named) > 1 and named[0][:2] == named[1][:2] and not sensor:
            told = _told_by_tags(reader, [row[2] for row in named[:2]])
            if told is None:
                raise LodestarError(
                    f"{reader.path.name}: its band names ({', '.join(t for t in texts if t)[:120]}) fit both "
                    f"{named[0][2].title} and {named[1][2].title}; choose the sensor for this layer (layer table "
                    "or case.json key \"sensor\").")
            named = [row for row in named if row[2] is told]
        _, _, preset, bands, mask = named[0]
        return _scaled(reader, Scene(preset, bands, "product band names", mask_band=mask,
                                     mask_kind=_mask_kind(preset, mask)))
    wavelengths = band_wavelengths(reader)
    if any(w is not None for w in wavelengths):
        # the file bands a sensor explains (Sentinel-2's B8 and B8A both fit Landsat's band 5), then the share of its
        # own bands found
        scored = [(len(set(b.values())), len(b) / len(p.wavelengths), p, b) for p in candidates
                  for b in [match_wavelengths(p, wavelengths)] if len(set(b.values())) >= 2]
        if scored:
            scored.sort(key=lambda row: (row[0], row[1]), reverse=True)
            _, _, preset, bands = scored[0]
            return _scaled(reader, Scene(preset, bands, "band wavelengths"))
    if sensor:
        preset, bands, how = resolve_bands(reader, sensor)
        return _scaled(reader, Scene(preset, bands, how))
    return None


def _told_by_tags(reader: RasterReader, presets: list) -> SensorPreset | None:
    text = _plain(" ".join(f"{k} {v}" for k, v in reader.tags.items()))
    found = [p for p in presets if re.search(_SENSOR_WORDS[p.name], text)]
    return found[0] if len(found) == 1 else None


def _mask_kind(preset: SensorPreset, band: int | None) -> str:
    if band is None:
        return ""
    return {"landsat_oli": "qa_pixel", "sentinel2": "scl"}[preset.name]


def _scaled(reader: RasterReader, scene: Scene) -> Scene:
    """The scene with the scaling its bands need on top of what the reader applies (GDAL scale / offset)."""
    integer = np.issubdtype(np.dtype(reader.dtype), np.integer)
    unscaled = [label for label, band in scene.bands.items()
                if reader.scales[band - 1] == 1.0 and reader.offsets[band - 1] == 0.0]
    if not integer or not unscaled:
        scene.scaling_note = ("band values read with their GDAL scale and offset" if reader.scaled
                              else "band values read as stored (floating point)")
        return scene
    if scene.preset.name == "sentinel2":
        scene.scaling, scene.scaling_note = _sentinel2_scaling(reader, scene, unscaled)
        return scene
    scale, offset, what = PRODUCT_SCALING[scene.preset.name]
    scene.scaling = {label: (scale, offset) for label in unscaled}
    scene.scaling_note = f"integer counts scaled as {what}"
    return scene


def _sentinel2_scaling(reader: RasterReader, scene: Scene, labels: list) -> tuple[dict, str]:
    """(DN + BOA_ADD_OFFSET) / QUANTIFICATION_VALUE per band, from the band's or the product's tags (offset 0 for
    products before processing baseline 04.00, which carry none). A tag given must be a finite number, and the
    quantification value positive: else the scene is refused, naming the tag."""
    product = {k.upper(): v for k, v in reader.tags.items()}
    key = next((k for k in ("BOA_QUANTIFICATION_VALUE", "QUANTIFICATION_VALUE") if product.get(k) not in (None, "")),
               "BOA_QUANTIFICATION_VALUE")
    quantification = _number(reader, key, product.get(key), S2_QUANTIFICATION)
    if not quantification > 0:
        raise LodestarError(f"{reader.path.name}: its Sentinel-2 tag {key} is {quantification:g}; reflectance is "
                            f"(DN + BOA_ADD_OFFSET) / {key}, which must be positive ({S2_QUANTIFICATION:g} in every "
                            "processing baseline so far): correct the tag, or remove it to use "
                            f"{S2_QUANTIFICATION:g}.")
    scaling, offsets = {}, set()
    for label in labels:
        band = {k.upper(): v for k, v in reader.band_tags[scene.bands[label] - 1].items()}
        name = label.upper().replace("B", "B0") if len(label) == 2 else label.upper()
        given = next(((what, value) for what, value in (
            (f"BOA_ADD_OFFSET of band {scene.bands[label]}", band.get("BOA_ADD_OFFSET")),
            (f"BOA_ADD_OFFSET_{name}", product.get(f"BOA_ADD_OFFSET_{name}")),
            ("BOA_ADD_OFFSET", product.get("BOA_ADD_OFFSET"))) if value not in (None, "")), ("BOA_ADD_OFFSET", None))
        tag, value = given
        offset = _number(reader, tag, value, 0.0)
        offsets.add(offset)
        scaling[label] = (1.0 / quantification, offset / quantification)
    shown = ", ".join(f"{o:g}" for o in sorted(offsets))
    return scaling, (f"integer counts scaled as Sentinel-2 L2A reflectance ((DN + BOA_ADD_OFFSET {shown}) / "
                     f"{quantification:g})")


def _number(reader: RasterReader, tag: str, value, default: float) -> float:
    """A scene tag's number (its first word: '10000', '-1000 DN'), `default` when the tag is absent; a tag that is not
    a finite number is refused, naming it."""
    if value in (None, ""):
        return default
    try:
        number = float(str(value).split()[0])
    except (ValueError, IndexError):
        number = math.nan
    if not math.isfinite(number):
        raise LodestarError(f"{reader.path.name}: its Sentinel-2 tag {tag} is {str(value)[:40]!r}, not a finite "
                            "number; correct the tag (the product's metadata gives it), or remove it to use "
                            f"{default:g}.")
    return number
