"""What the prospectivity-mapping step algorithms share: evidence layers read onto one analysis grid (measured in
their own units), known deposits as map points, "layer=value" lists, and rasters written with provenance."""
from __future__ import annotations

from ..plugin.errors import LodestarError
from ..plugin.evaluation import deposit_coordinates
from ..plugin.vector_io import read_vector
from .layer_export import guessed_role, layer_path, layer_spec


def layer_specs(layers) -> list:
    """The analysis specs of QGIS layers (their guessed roles, legends beside their files), distinct names; the
    output of an earlier step of a graphical model (a file in Processing's temporary folder, 'OUTPUT.tif') is named
    by what the step wrote it as (`step_name`)."""
    from dataclasses import replace

    from ..plugin.request.request import distinct_names

    if not layers:
        raise LodestarError("Choose at least one evidence layer.")
    specs = [layer_spec(layer, guessed_role(layer)) for layer in layers]
    specs, _ = distinct_names([replace(spec, name=(not spec.is_vector and step_name(spec.path)) or spec.name)
                               for spec in specs])
    return specs


def step_name(path) -> str:
    """What a step of a model named its output ('membership of aloh' of a membership raster's band description
    'membership of aloh (0-1): fuzzy large ...'), when `path` is a file in Processing's temporary folder; ''
    otherwise, or when it holds no description."""
    from pathlib import Path

    from qgis.core import QgsProcessingUtils

    from ..plugin.raster_io import RasterReader

    path = Path(path)
    if Path(QgsProcessingUtils.tempFolder()).resolve() not in path.resolve().parents:
        return ""
    try:
        described = (RasterReader(path).descriptions or ("",))[0] or ""
    except LodestarError:
        return ""
    return described.split(" (0-1)", 1)[0].strip()


def raster_set(layers, progress, memberships: bool = False):
    """The RasterSet of QGIS layers: one analysis grid (the first projected raster's CRS, the common extent, the
    finest resolution), vectors read on it. `memberships`: the layers are favourability memberships (0-1
    magnitudes, resampled bilinearly) whatever their words say: 'membership of geology' is no unit map."""
    from dataclasses import replace

    from ..plugin.raster_io import RasterSet

    specs = layer_specs(layers)
    if memberships:
        specs = [replace(spec, role="other", legend=None) if spec.role == "geological_map" or spec.legend else spec
                 for spec in specs]
    return RasterSet(specs, progress=progress)


def measured_layers(rasters, categorical: set, derived: bool = False) -> list:
    """Each layer of `rasters` (a RasterSet) in its own units (favourable.measured): a unit map (named in
    `categorical`, holding a legend beside its file, or a geological map) as unit codes, a vector as distances in
    metres (polygons of a geological map as units), other rasters as their values; with `derived`, then the layers
    derived from them (fault density, distance to unit contacts). A layer that cannot be measured is an error naming
    why."""
    from ..plugin.favourability.measured import measured_evidence
    from ..plugin.reason.workspace import LayerInfo

    infos = []
    for spec in rasters.layers:
        units = spec.name in categorical or spec.legend is not None or spec.role == "geological_map"
        kind = "vector" if spec.is_vector else "categorical" if units else "index"
        infos.append(LayerInfo(spec.name, spec.role, kind, spec.favourable))
    layers, left_out = measured_evidence(rasters, infos, derived=derived)
    if left_out:
        raise LodestarError("; ".join(f"{row['layer']}: {row['reason']}" for row in left_out))
    return layers


def deposit_points(algorithm, parameters, key, context, crs, log: list):
    """The known deposits of a point-layer parameter as an (n, 2) array of map points in `crs`."""
    layer = algorithm.parameterAsVectorLayer(parameters, key, context)
    if layer is None:
        raise LodestarError("Choose the known deposits (a point layer).")
    return deposit_coordinates(read_vector(layer_path(layer)), crs, log)


def parse_pairs(text: str, what: str, names, convert=float) -> dict:
    """'aloh=1.8; silica=1.2' -> {'aloh': 1.8, 'silica': 1.2}; names must be among `names` (the layers)."""
    out = {}
    for part in (text or "").replace("\n", ";").split(";"):
        if not part.strip():
            continue
        name, sep, value = part.rpartition("=")
        name = name.strip()
        if not sep or not name:
            raise LodestarError(f"{what}: {part.strip()!r} is not 'layer name=value' (separate entries with ';').")
        if name not in names:
            raise LodestarError(f"{what}: no layer named {name!r}; layers: {', '.join(names)}.")
        try:
            out[name] = convert(value.strip())
        except ValueError as exc:
            raise LodestarError(f"{what}: {value.strip()!r} for {name} is not valid ({exc}).") from exc
    return out


def write_raster(values, grid, path, description: str, method: str, specs=()) -> str:
    """A float32 GeoTIFF of `values` (masked: nodata) on `grid`, described and tagged (favourability.outputs)."""
    from ..plugin.favourability.outputs import write_surface
    from ..plugin.favourability.overlay import Surface

    write_surface(Surface(values, grid, grid.crs, list(specs), method), path, description)
    return str(path)
