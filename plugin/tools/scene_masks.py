"""Clouds, water and vegetation of a multispectral scene: from the product's quality band where it has one (Landsat
Collection 2 QA_PIXEL bits, Sentinel-2 L2A scene classification SCL), and from two simple indices everywhere their
bands exist (NDVI for green vegetation, NDWI for open water). Masked pixels hold no mineral signal an alteration
index can read: they become nodata in the index rasters."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rasterio.windows import Window

from ..raster_io import RasterReader
from .scene_products import Scene


@dataclass(frozen=True)
class MaskSettings:
    """Thresholds of the simple masks, each with its reason."""

    ndvi: float = 0.4
    """NDVI (Rouse et al. 1974) above 0.4: moderate to dense green vegetation, whose chlorophyll and leaf water
    swamp the 2.2 um and iron-oxide features (0.3-0.5 is the range used in alteration mapping)."""
    ndwi: float = 0.0
    """NDWI (McFeeters 1996, green vs near infrared) above 0: open water."""


SETTINGS = MaskSettings()
CLASSES = ("cloud", "water", "vegetation")
_QA_CLOUD_BITS = (1, 2, 3, 4, 5)  # dilated cloud, cirrus, cloud, cloud shadow, snow (Landsat C2 QA_PIXEL)
_QA_WATER_BIT = 7
_SCL = {"cloud": (3, 8, 9, 10, 11), "water": (6,), "vegetation": (4,), "nodata": (0, 1)}
"""Sentinel-2 SCL classes: 3 cloud shadow, 8/9 cloud medium / high probability, 10 thin cirrus, 11 snow; 6 water;
4 vegetation; 0 no data, 1 saturated or defective."""
_INDEX_BANDS = {"aster": ("b1", "b2", "b3"), "landsat_oli": ("b3", "b4", "b5"), "sentinel2": ("b3", "b4", "b8")}
"""Green, red and near-infrared band of each sensor."""


def mask_sources(scene: Scene) -> dict:
    """What says each class is masked, in words (for the step's text and the record)."""
    product = {"qa_pixel": "QA_PIXEL", "scl": "SCL"}.get(scene.mask_kind, "")
    green, red, nir = _INDEX_BANDS[scene.preset.name]
    simple = {"water": f"NDWI ({green}, {nir}) > {SETTINGS.ndwi:g}",
              "vegetation": f"NDVI ({red}, {nir}) > {SETTINGS.ndvi:g}"}
    have = all(b in scene.bands for b in (green, red, nir))
    out = {}
    for name in CLASSES:
        parts = [product] if product and (name != "vegetation" or scene.mask_kind == "scl") else []
        if have and name in simple:
            parts.append(simple[name])
        out[name] = " or ".join(parts) if parts else "none"
    return out


def read_scaled(reader: RasterReader, scene: Scene, labels, window: Window) -> dict:
    """Band label -> float64 values of a window in reflectance (NaN where no data)."""
    data = reader.read([scene.bands[label] for label in labels], window=window)
    out = {}
    for i, label in enumerate(labels):
        scale, offset = scene.scaling.get(label, (1.0, 0.0))
        out[label] = data[i].filled(np.nan).astype("float64") * scale + offset
    return out


def window_masks(reader: RasterReader, scene: Scene, window: Window) -> tuple[dict, np.ndarray]:
    """(class -> boolean mask, product nodata) of a window of the scene."""
    shape = (int(window.height), int(window.width))
    masks = {name: np.zeros(shape, dtype=bool) for name in CLASSES}
    nodata = np.zeros(shape, dtype=bool)
    if scene.mask_band is not None:
        quality = reader.read([scene.mask_band], window=window)[0]
        missing = np.ma.getmaskarray(quality)
        codes = quality.filled(0).astype(np.int64)
        if scene.mask_kind == "qa_pixel":
            nodata |= (codes & 1).astype(bool)
            masks["cloud"] |= np.any([(codes >> bit) & 1 for bit in _QA_CLOUD_BITS], axis=0).astype(bool)
            masks["water"] |= ((codes >> _QA_WATER_BIT) & 1).astype(bool)
        else:
            for name, values in _SCL.items():
                hit = np.isin(codes, values)
                if name == "nodata":
                    nodata |= hit
                else:
                    masks[name] |= hit
        for name in CLASSES:
            masks[name] &= ~missing
    green, red, nir = _INDEX_BANDS[scene.preset.name]
    if all(b in scene.bands for b in (green, red, nir)):
        scaled = read_scaled(reader, scene, (green, red, nir), window)
        with np.errstate(divide="ignore", invalid="ignore"):
            ndvi = (scaled[nir] - scaled[red]) / (scaled[nir] + scaled[red])
            ndwi = (scaled[green] - scaled[nir]) / (scaled[green] + scaled[nir])
        masks["vegetation"] |= np.nan_to_num(ndvi, nan=-1.0) > SETTINGS.ndvi
        masks["water"] |= np.nan_to_num(ndwi, nan=-1.0) > SETTINGS.ndwi
    masks["cloud"] &= ~nodata
    masks["water"] &= ~(nodata | masks["cloud"])
    masks["vegetation"] &= ~(nodata | masks["cloud"] | masks["water"])
    return masks, nodata
