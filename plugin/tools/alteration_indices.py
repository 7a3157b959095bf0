"""Alteration index rasters (band ratios) from ASTER, Landsat 8/9 OLI and Sentinel-2 MSI imagery.

Each index is a ratio of sensor bands, written as a float32 GeoTIFF tagged with its role
(`LODESTAR_ROLE`), formula, source bands and source file, so raw imagery feeds the analysis
directly. Bands are found, in this order: an explicit band map ({"b5": 5, ...}); band names in the
GDAL band descriptions ("B5", "Band 5", "B8A"); band centre wavelengths in the metadata (band tags
`wavelength` / `CENTRAL_WAVELENGTH_UM`, in nm or um); else the preset's standard band order for the
file's band count. Nodata in any input, or a zero denominator, gives nodata.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import LodestarError
from ..progress import SILENT, Progress
from ..raster_blocks import block_windows
from ..raster_io import RasterReader
from ..raster_writer import new_raster

NODATA = -9999.0


@dataclass(frozen=True)
class IndexDef:
    name: str
    role: str
    formula: str           # over band labels, e.g. "(b5 + b7) / b6"
    meaning: str


@dataclass(frozen=True)
class SensorPreset:
    name: str
    title: str
    wavelengths: dict      # band label -> centre wavelength (um)
    orders: dict           # band count -> band labels in file order
    indices: tuple


ASTER = SensorPreset(
    "aster", "ASTER (VNIR + SWIR, optional TIR)",
    {"b1": 0.556, "b2": 0.661, "b3": 0.807, "b4": 1.656, "b5": 2.167, "b6": 2.209, "b7": 2.262, "b8": 2.336,
     "b9": 2.400, "b10": 8.291, "b11": 8.634, "b12": 9.075, "b13": 10.657, "b14": 11.318},
    {9: tuple(f"b{i}" for i in range(1, 10)), 14: tuple(f"b{i}" for i in range(1, 15)),
     5: ("b10", "b11", "b12", "b13", "b14")},
    (
        IndexDef("aloh", "hydrothermal_alteration", "(b5 + b7) / b6",
                 "AlOH minerals: sericite / muscovite / illite, phyllic alteration (2.20 um absorption)"),
        IndexDef("argillic", "argillic_alteration", "(b4 + b6) / b5",
                 "kaolinite / alunite / pyrophyllite, argillic alteration (2.17 um absorption)"),
        IndexDef("mgoh", "propylitic_alteration", "(b6 + b9) / (b7 + b8)",
                 "MgOH / carbonate, propylitic chlorite-epidote (2.33 um absorption)"),
        IndexDef("ferric_iron", "iron_oxide", "b2 / b1", "ferric iron oxides (hematite, goethite)"),
        IndexDef("ferrous_iron", "iron_oxide", "(b5 / b3) + (b1 / b2)", "ferrous iron in silicates / carbonates"),
        IndexDef("quartz", "silicification", "(b11 * b11) / (b10 * b12)", "quartz / silica (TIR reststrahlen)"),
        IndexDef("silica", "silicification", "b13 / b10", "silica-rich rocks (TIR emissivity)"),
    ),
)

LANDSAT_OLI = SensorPreset(
    "landsat_oli", "Landsat 8/9 OLI",
    {"b1": 0.443, "b2": 0.482, "b3": 0.561, "b4": 0.655, "b5": 0.865, "b6": 1.609, "b7": 2.201},
    {7: ("b1", "b2", "b3", "b4", "b5", "b6", "b7"), 6: ("b2", "b3", "b4", "b5", "b6", "b7")},
    (
        IndexDef("clay", "argillic_alteration", "b6 / b7", "clay / hydroxyl minerals (2.2 um absorption)"),
        IndexDef("iron_oxide", "iron_oxide", "b4 / b2", "iron oxides (ferric)"),
        IndexDef("ferrous_iron", "iron_oxide", "b6 / b5", "ferrous iron"),
    ),
)

SENTINEL2 = SensorPreset(
    "sentinel2", "Sentinel-2 MSI",
    {"b1": 0.443, "b2": 0.490, "b3": 0.560, "b4": 0.665, "b5": 0.705, "b6": 0.740, "b7": 0.783, "b8": 0.842,
     "b8a": 0.865, "b9": 0.945, "b10": 1.375, "b11": 1.610, "b12": 2.190},
    {13: ("b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b8a", "b9", "b10", "b11", "b12"),
     12: ("b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b8a", "b9", "b11", "b12"),
     10: ("b2", "b3", "b4", "b5", "b6", "b7", "b8", "b8a", "b11", "b12")},
    (
        IndexDef("clay", "argillic_alteration", "b11 / b12", "clay / hydroxyl minerals (2.2 um absorption)"),
        IndexDef("iron_oxide", "iron_oxide", "b4 / b2", "iron oxides (ferric)"),
        IndexDef("ferrous_iron", "iron_oxide", "b11 / b8a", "ferrous iron"),
    ),
)

PRESETS = {p.name: p for p in (ASTER, LANDSAT_OLI, SENTINEL2)}


@dataclass
class IndexOutput:
    """One written index raster."""

    name: str
    role: str
    path: Path
    formula: str
    bands: dict = field(default_factory=dict)   # band label -> 1-based band of the source file


def alteration_indices(path, out_dir, sensor: str = "auto", indices=None, band_map: dict | None = None,
                       block_rows: int = 512, progress: Progress = SILENT, scaling: dict | None = None,
                       bands_from: str = "") -> list[IndexOutput]:
    """Write the band-ratio alteration indices of a multispectral image to `out_dir`.

    sensor: 'aster', 'landsat_oli', 'sentinel2' or 'auto' (from wavelengths / band names in the
    metadata). indices: names to compute (default: every index whose bands are present).
    band_map: band label -> 1-based band number, overriding what the metadata says. scaling: band label -> (scale,
    offset) turning the values read into reflectance (a product's counts, `scene_products.recognise`); bands_from:
    how the band map was found, for the tags.
    Returns the outputs written, each `<stem>_<index>.tif`, in the preset's index order.
    """
    reader = RasterReader(path)  # reads physical values: a band's GDAL scale / offset is applied
    preset, bands, how = resolve_bands(reader, sensor, band_map)
    how = bands_from or how
    if reader.scaled:
        progress.log(f"{reader.path.name}: band values read as reflectance, with their GDAL scale and offset "
                     f"applied (band 1: x {reader.scales[0]:g} {reader.offsets[0]:+g}).")
    wanted = _select_indices(preset, bands, indices)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    outputs = []
    for number, index in enumerate(wanted):
        scaled = progress.scaled(100 * number / len(wanted), 100 * (number + 1) / len(wanted))
        target = out_dir / f"{reader.path.stem}_{index.name}.tif"
        used = {label: bands[label] for label in formula_bands(index.formula)}
        write_index(reader, index, used, target, preset, how, block_rows, scaled, scaling=scaling)
        outputs.append(IndexOutput(index.name, index.role, target, index.formula, used))
        progress.log(f"{index.name} ({index.formula}) -> {target.name}, role {index.role}")
    return outputs


def formula_bands(formula: str) -> list[str]:
    """The band labels a ratio formula uses (b4, b8a, ...), sorted, each once."""
    return sorted(set(re.findall(r"\bb\d+a?\b", formula)))


def _select_indices(preset: SensorPreset, bands: dict, indices) -> list[IndexDef]:
    known = {i.name: i for i in preset.indices}
    if indices:
        names = [indices] if isinstance(indices, str) else list(indices)
        names = [n.strip().lower() for part in names for n in str(part).split(",") if n.strip()]
        unknown = [n for n in names if n not in known]
        if unknown:
            raise LodestarError(f"Unknown index {', '.join(unknown)} for {preset.title}; "
                                f"available: {', '.join(known)}.")
        chosen = [known[n] for n in names]
        for index in chosen:
            missing = [b for b in formula_bands(index.formula) if b not in bands]
            if missing:
                raise LodestarError(f"Index {index.name} needs {preset.title} bands {', '.join(missing)}, which this "
                                    f"image lacks; bands found: {', '.join(bands) or 'none'}.")
        return chosen
    chosen = [i for i in preset.indices if all(b in bands for b in formula_bands(i.formula))]
    if not chosen:
        raise LodestarError(f"No {preset.title} index can be computed: bands found {', '.join(bands) or 'none'}; "
                            f"each index needs: " + "; ".join(f"{i.name} {i.formula}" for i in preset.indices))
    return chosen


def band_wavelengths(reader: RasterReader) -> list[float | None]:
    """Centre wavelength (um) of each band from its tags, or None."""
    out = []
    for tags in reader.band_tags:
        lowered = {k.lower(): v for k, v in tags.items()}
        value = lowered.get("central_wavelength_um") or lowered.get("wavelength") or lowered.get("center_wavelength")
        try:
            number = float(str(value).split()[0]) if value is not None else None
        except ValueError:
            number = None
        if number is not None:
            units = (lowered.get("wavelength_units") or lowered.get("units") or "").lower()
            if "nm" in units or "nano" in units or number > 100:
                number /= 1000.0
        out.append(number)
    return out


def _description_labels(reader: RasterReader) -> list[str | None]:
    labels: list[str | None] = []
    for text in reader.descriptions:
        match = re.fullmatch(r"\s*(?:b|band)[\s_]*0*(\d+)\s*([an])?\s*", text or "", flags=re.IGNORECASE)
        if match:
            suffix = (match.group(2) or "").lower()
            labels.append(f"b{match.group(1)}" + ("a" if suffix == "a" else ""))
        else:
            labels.append(None)
    return labels


def resolve_bands(reader: RasterReader, sensor: str = "auto", band_map: dict | None = None):
    """(preset, {band label: 1-based band}, how they were found) for an image."""
    sensor = (sensor or "auto").strip().lower()
    if sensor != "auto" and sensor not in PRESETS:
        raise LodestarError(f"Unknown sensor {sensor!r}; presets: {', '.join(PRESETS)} (or 'auto').")
    candidates = [PRESETS[sensor]] if sensor != "auto" else list(PRESETS.values())
    wavelengths = band_wavelengths(reader)
    described = _description_labels(reader)
    if band_map:
        preset = candidates[0] if sensor != "auto" else None
        if preset is None:
            raise LodestarError("A band map needs a sensor preset; choose one of " + ", ".join(PRESETS) + ".")
        bands = {}
        for label, number in band_map.items():
            label = str(label).strip().lower()
            if label not in preset.wavelengths:
                raise LodestarError(f"{preset.title} has no band {label!r}; bands: {', '.join(preset.wavelengths)}.")
            if not 1 <= int(number) <= reader.count:
                raise LodestarError(f"Band {number} for {label} is outside 1-{reader.count} of {reader.path.name}.")
            bands[label] = int(number)
        return preset, bands, "band map"
    if any(w is not None for w in wavelengths):
        scored = [(p, match_wavelengths(p, wavelengths)) for p in candidates]
        scored = [(p, b) for p, b in scored if b]
        if scored:
            preset, bands = max(scored, key=lambda item: len(item[1]))
            return preset, bands, "band wavelengths"
    if sensor != "auto" and any(described):
        preset = candidates[0]
        bands = {label: i + 1 for i, label in enumerate(described)
                 if label is not None and label in preset.wavelengths}
        if bands:
            return preset, bands, "band descriptions"
    if sensor != "auto":
        preset = candidates[0]
        order = preset.orders.get(reader.count)
        if order is None:
            raise LodestarError(
                f"{reader.path.name} has {reader.count} bands, not a standard {preset.title} stack "
                f"({' or '.join(str(n) for n in sorted(preset.orders))} bands); give a band map such as "
                f"b5=5,b6=6, or band wavelengths in the metadata.")
        return preset, {label: i + 1 for i, label in enumerate(order)}, f"standard {reader.count}-band order"
    raise LodestarError(f"Cannot tell the sensor of {reader.path.name}: no band wavelengths in its metadata. "
                        f"Choose a sensor preset: {', '.join(PRESETS)}.")


def match_wavelengths(preset: SensorPreset, wavelengths: list) -> dict:
    """{band label of the preset: the file band (1-based) whose wavelength is within 3% of the label's, the nearest}
    for the labels some band matches; `wavelengths`: each file band's centre wavelength in the preset's units, or
    None where unknown."""
    bands = {}
    for label, centre in preset.wavelengths.items():
        best = None
        for i, w in enumerate(wavelengths):
            if w is None or abs(w - centre) > 0.03 * centre:
                continue
            if best is None or abs(w - centre) < abs(wavelengths[best] - centre):
                best = i
        if best is not None:
            bands[label] = best + 1
    return bands


def _evaluate(formula: str, values: dict) -> np.ndarray:
    """Evaluate a ratio formula over band arrays: band labels, + - * /, parentheses (no eval)."""
    tokens = re.findall(r"b\d+a?|[()+\-*/]|\S", formula)
    position = 0

    def peek():
        return tokens[position] if position < len(tokens) else None

    def take():
        nonlocal position
        position += 1
        return tokens[position - 1]

    def expression():
        value = term()
        while peek() in ("+", "-"):
            value = value + term() if take() == "+" else value - term()
        return value

    def term():
        value = factor()
        while peek() in ("*", "/"):
            value = value * factor() if take() == "*" else value / factor()
        return value

    def factor():
        token = take() if peek() is not None else None
        if token == "(":
            value = expression()
            if take() != ")":
                raise LodestarError(f"Unbalanced parentheses in index formula {formula!r}.")
            return value
        if token is not None and re.fullmatch(r"b\d+a?", token):
            return values[token]
        raise LodestarError(f"Index formula {formula!r}: unexpected {token!r}.")

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        result = expression()
    if peek() is not None:
        raise LodestarError(f"Index formula {formula!r}: unexpected {peek()!r}.")
    return result


def write_index(reader: RasterReader, index: IndexDef, bands: dict, target: Path, preset: SensorPreset, how: str,
                block_rows: int, progress: Progress, scaling: dict | None = None, masked=None,
                tags: dict | None = None) -> None:
    """Write the raster of `index` over the reader's grid to `target`: float32, NODATA where a band has no data or
    the formula no finite value, computed in strips of `block_rows` rows and tagged with the index, the sensor
    `preset` and `how` its bands were found. `bands`: the formula's band labels -> the reader's band numbers;
    `scaling`: band label -> (scale, offset) applied to the values read (a product's counts to reflectance);
    `masked(window)`: a boolean array of pixels to leave as nodata (clouds, water); `tags`: more metadata tags."""
    scaling = scaling or {}
    grid = reader.grid
    profile = {
        "driver": "GTiff", "width": grid.width, "height": grid.height, "count": 1, "dtype": "float32",
        "nodata": NODATA, "transform": grid.transform, "compress": "deflate", "predictor": 3, "tiled": True,
        "blockxsize": 256, "blockysize": 256,
    }
    if grid.crs is not None:
        profile["crs"] = grid.crs.to_wkt()
    labels = sorted(bands)
    with new_raster(target, profile) as out:
        for window in block_windows((grid.height, grid.width), block_rows, strips=True):
            progress.check()
            data = reader.read([bands[label] for label in labels], window=window)
            values = {label: data[i].filled(np.nan).astype("float64") * scaling.get(label, (1.0, 0.0))[0]
                      + scaling.get(label, (1.0, 0.0))[1] for i, label in enumerate(labels)}
            result = _evaluate(index.formula, values)
            bad = np.ma.getmaskarray(data).any(axis=0) | ~np.isfinite(result)
            if masked is not None:
                bad |= masked(window)
            out.write(np.where(bad, NODATA, result).astype("float32"), 1, window=window)
            progress.set(100 * (window.row_off + window.height) / grid.height)
            out.set_band_description(1, f"{index.name}: {index.formula}")
            out.update_tags(
                LODESTAR_ROLE=index.role, LODESTAR_INDEX=index.name, LODESTAR_FORMULA=index.formula,
                LODESTAR_MEANING=index.meaning, LODESTAR_SENSOR=preset.name, LODESTAR_SOURCE=reader.path.name,
                LODESTAR_BANDS=",".join(f"{label}={bands[label]}" for label in labels), LODESTAR_BANDS_FROM=how,
                **(tags or {}),
            )
