"""The parameters the Lodestar algorithms share, and how they are read: input layers, roles, extents, number ranges,
zone layers and destination outputs that work when left at their defaults (toolbox, graphical models, batch and
qgis_process)."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from qgis.core import (
    QgsCoordinateReferenceSystem,
    QgsProcessing,
    QgsProcessingParameterEnum,
    QgsProcessingParameterFileDestination,
    QgsProcessingParameterFolderDestination,
    QgsProcessingParameterNumber,
    QgsProcessingParameterRasterDestination,
    QgsProcessingParameterVectorDestination,
    QgsProcessingUtils,
    QgsRasterLayer,
)

from ..plugin.errors import LodestarError
from ..plugin.roles import ROLES
from ..plugin.vector_io import read_vector
from .layer_export import guessed_role, layer_path

if TYPE_CHECKING:  # annotations only
    from ..plugin.raster_io import LayerSpec, RasterSet

ROLE_OPTIONS = ("guess from the layer name",) + ROLES
_NOT_A_FILE = re.compile(r"^[A-Za-z]{2,}:")  # memory:, ogr:dbname=..., postgres:... (not a drive letter)


# -- input layers ------------------------------------------------------------------------------------------
def analysis_set(algorithm, parameters, reference_key, context, spec: LayerSpec, layer) -> RasterSet:
    """A raster layer on its own; a vector layer with the reference raster that defines the analysis area."""
    from ..plugin.raster_io import LayerSpec, RasterSet  # here, not at the top: algorithms that read no raster
    # load without rasterio

    if isinstance(layer, QgsRasterLayer):
        return RasterSet([spec])
    reference = algorithm.parameterAsRasterLayer(parameters, reference_key, context)
    if reference is None:
        raise LodestarError(f"{layer.name()} is a vector layer: choose a reference raster ({reference_key}) that "
                            "defines the analysis area.")
    return RasterSet([spec, LayerSpec(layer_path(reference), guessed_role(reference), name=reference.name())])


def role_parameter(key: str) -> QgsProcessingParameterEnum:
    param = QgsProcessingParameterEnum(key, "Layer role", options=list(ROLE_OPTIONS), defaultValue=0)
    param.setHelp("What the layer shows (lodestar-case/1 roles); the default takes the role a Lodestar index "
                  "raster carries in its LODESTAR_ROLE tag, else guesses it from the layer's name (e.g. 'faults' -> "
                  "structure, 'geology' -> geological_map).")
    return param


def chosen_role(algorithm, parameters, key, context, layer) -> str:
    """The role picked in a ROLE_OPTIONS enum parameter (index 0: `guessed_role`: the raster's tag, else a guess
    from the layer's words)."""
    index = algorithm.parameterAsEnum(parameters, key, context)
    return ROLES[index - 1] if index > 0 else guessed_role(layer)


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
