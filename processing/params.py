"""What the Lodestar algorithms share: the files behind layers, roles, extents, number ranges, zone layers and
destination outputs that work when left at their defaults (toolbox, graphical models, batch and qgis_process)."""
from __future__ import annotations

import re
from pathlib import Path

import geopandas as gpd
from pyproj import CRS
from qgis.core import (
    QgsCoordinateReferenceSystem,
    QgsFeatureRequest,
    QgsProcessing,
    QgsProcessingLayerPostProcessorInterface,
    QgsProcessingParameterEnum,
    QgsProcessingParameterFileDestination,
    QgsProcessingParameterFolderDestination,
    QgsProcessingParameterNumber,
    QgsProcessingParameterRasterDestination,
    QgsProcessingParameterVectorDestination,
    QgsProcessingUtils,
    QgsRasterLayer,
    QgsVectorLayer,
)
from qgis.PyQt.QtCore import QVariant

from ..plugin.errors import LodestarError
from ..plugin.raster_io import LayerSpec, RasterReader, RasterSet
from ..plugin.roles import ROLES, guess_role, tagged_role
from ..plugin.vector_io import read_vector, write_vector

ROLE_OPTIONS = ("guess from the layer name",) + ROLES
STYLES = Path(__file__).resolve().parents[1] / "resources" / "styles"
_NOT_A_FILE = re.compile(r"^[A-Za-z]{2,}:")  # memory:, ogr:dbname=..., postgres:... (not a drive letter)


# -- input layers ------------------------------------------------------------------------------------------
def layer_path(layer, folder=None) -> str:
    """The file behind a QGIS layer. A vector layer that is not a whole file on its own (one layer of a
    GeoPackage, a layer with a filter, a memory or database layer) is first written, as QGIS shows it, to a
    GeoPackage in `folder` (default: a temporary folder). Rasters must be GDAL files."""
    source = layer.source()
    if isinstance(layer, QgsVectorLayer):
        if layer.providerType() == "ogr" and "|" not in source and Path(source).is_file():
            return source
        name = re.sub(r"[^\w-]+", "_", layer.name()).strip("_") or "layer"
        target = Path(folder) / f"{name}.gpkg" if folder is not None else \
            QgsProcessingUtils.generateTempFilename(f"{name}.gpkg")
        return str(write_vector(source_frame(layer), target))
    if layer.providerType() != "gdal":
        raise LodestarError(f"Layer {layer.name()} comes from the {layer.providerType()} provider; save it as a "
                            "GeoTIFF (Export > Save As) and use that file.")
    return source.split("|")[0]


def _plain(value):
    """A QGIS attribute value as a plain Python value (NULL becomes None, dates become datetime objects)."""
    if isinstance(value, QVariant):
        return None if value.isNull() else value.value()
    for convert in ("toPyDateTime", "toPyDate", "toPyTime"):
        if hasattr(value, convert):
            return getattr(value, convert)()
    return value


def source_frame(source) -> gpd.GeoDataFrame:
    """A QGIS feature source or vector layer as a GeoDataFrame (attributes and geometries in its CRS; no fid)."""
    from shapely import wkb

    names = [name for name in source.fields().names() if name != "fid"]
    records, geometries = [], []
    for feature in source.getFeatures(QgsFeatureRequest()):
        records.append({name: _plain(feature[name]) for name in names})
        geometry = feature.geometry()
        geometries.append(None if geometry.isNull() else wkb.loads(bytes(geometry.asWkb())))
    crs = CRS.from_wkt(source.sourceCrs().toWkt()) if source.sourceCrs().isValid() else None
    return gpd.GeoDataFrame(records, columns=names, geometry=gpd.GeoSeries(geometries, crs=crs), crs=crs)


def legend_beside(path) -> Path | None:
    """A categorical map's legend CSV kept beside it as `<stem>_legend.csv` (as in a case folder), or None."""
    legend = Path(path).with_name(f"{Path(path).stem}_legend.csv")
    return legend if legend.is_file() else None


def guess_favourable(path, role: str, name: str) -> str:
    """'low' for a structure layer named as a distance (e.g. 'distance to faults'), else 'high'."""
    return "low" if role == "structure" and "dist" in f"{name} {Path(path).stem}".lower() else "high"


def evidence_spec(path, role: str, name: str, favourable: str | None = None) -> LayerSpec:
    """A layer of an analysis: its legend beside it is used; `favourable` ('high' or 'low') when given, else
    guessed (`guess_favourable`)."""
    path = Path(path)
    favourable = favourable or guess_favourable(path, role, name)
    return LayerSpec(path, role, name, favourable, legend_beside(path))


def layer_spec(layer, role: str, folder=None, favourable: str | None = None) -> LayerSpec:
    """The analysis layer of a QGIS layer (see `layer_path` and `evidence_spec`)."""
    return evidence_spec(layer_path(layer, folder), role, layer.name(), favourable)


def analysis_set(algorithm, parameters, reference_key, context, spec: LayerSpec, layer) -> RasterSet:
    """A raster layer on its own; a vector layer with the reference raster that defines the analysis area."""
    if isinstance(layer, QgsRasterLayer):
        return RasterSet([spec])
    reference = algorithm.parameterAsRasterLayer(parameters, reference_key, context)
    if reference is None:
        raise LodestarError(f"{layer.name()} is a vector layer: choose a reference raster ({reference_key}) that "
                            "defines the analysis area.")
    return RasterSet([spec, LayerSpec(layer_path(reference), guess_role(reference.name()), name=reference.name())])


def role_parameter(key: str) -> QgsProcessingParameterEnum:
    param = QgsProcessingParameterEnum(key, "Layer role", options=list(ROLE_OPTIONS), defaultValue=0)
    param.setHelp("What the layer shows (lodestar-case/1 roles); the default takes the role a Lodestar index "
                  "raster carries in its LODESTAR_ROLE tag, else guesses it from the layer's name (e.g. 'faults' -> "
                  "structure, 'geology' -> geological_map).")
    return param


def chosen_role(algorithm, parameters, key, context, layer) -> str:
    """The role picked in a ROLE_OPTIONS enum parameter (index 0: the raster's tag, else the layer's name)."""
    index = algorithm.parameterAsEnum(parameters, key, context)
    if index > 0:
        return ROLES[index - 1]
    if isinstance(layer, QgsRasterLayer):
        tagged = tagged_role(RasterReader(layer_path(layer)).tags)
        if tagged:
            return tagged
    return guess_role(layer.name(), layer.source().split("|")[0])  # no need to write a vector layer out


def extent_in_crs(algorithm, parameters, key, context, crs):
    """The optional extent parameter as (xmin, ymin, xmax, ymax) in `crs` (a pyproj CRS, or None: as given);
    None when no extent, or an empty one, is given."""
    if parameters.get(key) in (None, ""):
        return None
    target = QgsCoordinateReferenceSystem.fromWkt(crs.to_wkt()) if crs is not None else None
    rect = algorithm.parameterAsExtent(parameters, key, context, target) if target else \
        algorithm.parameterAsExtent(parameters, key, context)
    if rect.isNull() or rect.isEmpty():
        return None
    return rect.xMinimum(), rect.yMinimum(), rect.xMaximum(), rect.yMaximum()


def zone_frames(algorithm, parameters, key, context) -> list:
    """The zone layers of a multiple-layer parameter as GeoDataFrames, each with its `layer` names."""
    frames = []
    for layer in algorithm.parameterAsLayerList(parameters, key, context):
        frame = read_vector(layer_path(layer))
        if "layer" not in frame.columns:
            frame["layer"] = layer.name()
        frames.append(frame)
    return frames


# -- numbers -----------------------------------------------------------------------------------------------
def number_parameter(key, label, kind, default, low, high, help_text, optional=False):
    """A number parameter whose label and help state its allowed range (checked again by the core)."""
    limits = {"minValue": low} if high is None else {"minValue": low, "maxValue": high}
    param = QgsProcessingParameterNumber(key, label, kind, defaultValue=default, optional=optional, **limits)
    param.setHelp(help_text)
    return param


def range_problem(algorithm, parameters) -> str:
    """A message naming the allowed range of the first number parameter given out of range, or ""."""
    for param in algorithm.parameterDefinitions():
        if not isinstance(param, QgsProcessingParameterNumber) or parameters.get(param.name()) in (None, ""):
            continue
        try:
            value = float(parameters[param.name()])
        except (TypeError, ValueError):
            continue  # expressions and other value sources are checked by Processing itself
        low, high = param.minimum(), param.maximum()
        if value < low or value > high:
            allowed = f"{low:g} to {high:g}" if high < 1e300 else f"at least {low:g}"
            return f"{param.description()}: {value:g} is out of range; allowed: {allowed}."
    return ""


# -- outputs -----------------------------------------------------------------------------------------------
# Destinations are optional with a TEMPORARY_OUTPUT default: qgis_process (QGIS 3.22) treats a mandatory
# destination without a value as missing, while the toolbox and models still offer a temporary output by default.
def vector_destination(key, label, geometry_type, help_text) -> QgsProcessingParameterVectorDestination:
    param = QgsProcessingParameterVectorDestination(key, label, geometry_type, QgsProcessing.TEMPORARY_OUTPUT,
                                                    True, True)
    param.setHelp(help_text)
    return param


def file_destination(key, label, file_filter, help_text) -> QgsProcessingParameterFileDestination:
    param = QgsProcessingParameterFileDestination(key, label, file_filter, QgsProcessing.TEMPORARY_OUTPUT, True, True)
    param.setHelp(help_text)
    return param


def raster_destination(key, label, help_text) -> QgsProcessingParameterRasterDestination:
    param = QgsProcessingParameterRasterDestination(key, label, QgsProcessing.TEMPORARY_OUTPUT, True, True)
    param.setHelp(help_text)
    return param


def folder_destination(key, label, help_text) -> QgsProcessingParameterFolderDestination:
    param = QgsProcessingParameterFolderDestination(key, label, QgsProcessing.TEMPORARY_OUTPUT, True, True)
    param.setHelp(help_text)
    return param


def write_zones(algorithm, parameters, key, context, result, progress, name: str) -> dict:
    """A tool's log lines to the feedback and its zones to the destination `key`; the algorithm's results."""
    for line in result.log:
        progress.log(line)
    path = output_path(algorithm, parameters, key, context, name)
    write_vector(result.zones, path)
    style_output(context, path, "zones.qml")
    return {key: path}


class StyleOnLoad(QgsProcessingLayerPostProcessorInterface):
    """Gives an output the Lodestar style (resources/styles) when Processing loads it into the project."""

    _kept: dict = {}  # the Python side of each post-processor, kept alive while Processing may call it

    def __init__(self, style: str):
        super().__init__()
        self.style = style

    def postProcessLayer(self, layer, context, feedback):  # noqa: N802 (QGIS API name)
        if isinstance(layer, QgsVectorLayer):
            layer.loadNamedStyle(str(STYLES / self.style))
            layer.triggerRepaint()


def style_output(context, path: str, style: str) -> None:
    """Style the output `path` with `style` if Processing is to load it into the project (toolbox, models)."""
    if context.willLoadLayerOnCompletion(path):
        processor = StyleOnLoad._kept[path] = StyleOnLoad(style)
        context.layerToLoadOnCompletionDetails(path).setPostProcessor(processor)


def output_path(algorithm, parameters, key, context, name: str) -> str:
    """The file a destination parameter names (a temporary one when left at its default, or a temporary file
    `name` when an output without a default is left empty). Memory layers and database tables are refused with
    a message saying to choose a file."""
    definition = algorithm.parameterDefinition(key)
    if isinstance(definition, (QgsProcessingParameterVectorDestination, QgsProcessingParameterRasterDestination)):
        path = algorithm.parameterAsOutputLayer(parameters, key, context)
    else:
        path = algorithm.parameterAsFileOutput(parameters, key, context)
    path = (path or "").split("|")[0]
    if _NOT_A_FILE.match(path):
        raise LodestarError(f"{definition.description()}: choose a file (GeoPackage, Shapefile, GeoJSON...) rather "
                            f"than {path.split(':')[0]} output.")
    return path or QgsProcessingUtils.generateTempFilename(name)
