"""The parameters 'Weights of evidence' and 'Weights-of-evidence response' share, and the weighing they describe
(favourability.wofe_steps.StepWofe on the layers measured in their own units)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from qgis.core import (
    QgsProcessing,
    QgsProcessingParameterEnum,
    QgsProcessingParameterMultipleLayers,
    QgsProcessingParameterNumber,
    QgsProcessingParameterString,
    QgsProcessingParameterVectorLayer,
)

from .mpm_inputs import deposit_points, measured_layers, parse_pairs, raster_set
from .params import number_parameter

INPUT, DEPOSITS, WEIGHING, LAYER_WEIGHING, THRESHOLDS, UNIT_AREA_KM2 = (
    "INPUT", "DEPOSITS", "WEIGHING", "LAYER_WEIGHING", "THRESHOLDS", "UNIT_AREA_KM2")
WEIGHING_LABELS = ("automatic (unit maps by class, other layers cumulative in the stronger direction)",
                   "unique (every class its own weight)", "categorical (classes under 2 deposits merged)",
                   "cumulative ascending (low values favourable)", "cumulative descending (high values favourable)")
WEIGHING_HELP = (
    "Evidence layers (rasters; fault lines become distances in metres; unit polygons or a raster with a legend "
    "<name>_legend.csv beside it are unit maps) are read onto one analysis grid. The study area is the cells where "
    "at least one layer has data; a layer weighs 0 where it has none. Areas are counted in unit cells of "
    "UNIT_AREA_KM2 (1 km2, as in ArcSDM); each deposit occupies one.\n"
    "WEIGHING (by index in qgis_process): 0 automatic, 1 unique, 2 categorical, 3 cumulative ascending, 4 cumulative "
    "descending; LAYER_WEIGHING sets it per layer ('geology=categorical; faults=ascending'; words: automatic, "
    "unique, categorical, ascending, descending). A cumulative layer is generalised at the threshold of maximum "
    "studentised contrast, or at THRESHOLDS set in its own units ('aloh=1.8; faults=500')."
)


@dataclass
class Weighed:
    """The weighing of one run: the model, its measured layers, the grid, the study area and its rows."""

    model: object
    layers: list
    grid: object
    valid: np.ndarray
    x: np.ndarray
    deposits: np.ndarray
    cell_units: float
    log: list


def add_parameters(algorithm) -> None:
    layers = QgsProcessingParameterMultipleLayers(INPUT, "Evidence layers", QgsProcessing.TypeMapLayer)
    layers.setHelp("Evidence rasters in their own units, fault lines, unit maps; several in one run.")
    deposits = QgsProcessingParameterVectorLayer(DEPOSITS, "Known deposits (training points)",
                                                 [QgsProcessing.TypeVectorPoint])
    deposits.setHelp("Points of known deposits, in any CRS (reprojected to the analysis grid's).")
    weighing = QgsProcessingParameterEnum(WEIGHING, "Weighing", options=list(WEIGHING_LABELS), defaultValue=0)
    weighing.setHelp("How every layer is weighed unless LAYER_WEIGHING says otherwise (qgis_process: the index).")
    per_layer = QgsProcessingParameterString(LAYER_WEIGHING, "Weighing per layer", optional=True)
    per_layer.setHelp("'layer name=unique|categorical|ascending|descending|automatic', separated by ';'.")
    thresholds = QgsProcessingParameterString(THRESHOLDS, "Generalisation thresholds (layer units)", optional=True)
    thresholds.setHelp("'layer name=value' separated by ';': the cut-off of a cumulative layer in its own units "
                       "(ppm, metres...); the others are generalised at their maximum studentised contrast.")
    unit = number_parameter(UNIT_AREA_KM2, "Unit cell (km2)", QgsProcessingParameterNumber.Double, 1.0, 1e-6, 1e6,
                            "The area of a unit cell in km2: the areas of the weights are counted in it.")
    for param in (layers, deposits, weighing, per_layer, thresholds, unit):
        algorithm.addParameter(param)


def weigh(algorithm, parameters, context, progress) -> Weighed:
    """The StepWofe the parameters describe, fitted on the study area's cells."""
    from ..plugin.evaluation import cells_of
    from ..plugin.favourability.models import Columns
    from ..plugin.favourability.wofe_steps import KINDS, StepWofe

    rasters = raster_set(algorithm.parameterAsLayerList(parameters, INPUT, context), progress)
    names = [spec.name for spec in rasters.layers]
    kinds = parse_pairs(algorithm.parameterAsString(parameters, LAYER_WEIGHING, context), "Weighing per layer",
                        names, _kind)
    default = KINDS[algorithm.parameterAsEnum(parameters, WEIGHING, context)]
    kinds = {name: kinds.get(name, default) for name in names}
    thresholds = parse_pairs(algorithm.parameterAsString(parameters, THRESHOLDS, context), "Thresholds", names)
    layers = measured_layers(rasters, {n for n, k in kinds.items() if k in ("unique", "categorical")})
    grid = rasters.grid
    valid = np.logical_or.reduce([~np.ma.getmaskarray(layer.values) for layer in layers])
    log = list(rasters.log)
    xy = deposit_points(algorithm, parameters, DEPOSITS, context, grid.crs, log)
    rows, cols, inside = cells_of(xy, grid, valid)
    if (~inside).any():
        log.append(f"{int((~inside).sum())} of {len(inside)} deposits lie outside the study area and are not used.")
    counts = np.zeros(valid.shape)
    np.add.at(counts, (rows[inside], cols[inside]), 1)
    unit = algorithm.parameterAsDouble(parameters, UNIT_AREA_KM2, context) * 1e6
    cell_units = grid.pixel_area / unit if grid.crs is not None else 1.0
    x = np.column_stack([layer.values.filled(np.nan)[valid] for layer in layers])
    model = StepWofe(kinds, cell_units, thresholds).fit(Columns(layers), x, counts[valid])
    return Weighed(model, layers, grid, valid, x, counts[valid], cell_units, log)


def _kind(word: str) -> str:
    from ..plugin.favourability.wofe_steps import KINDS

    word = word.strip().lower().replace("cumulative ", "")
    if word not in KINDS:
        raise ValueError(f"use one of {', '.join(KINDS)}")
    return word


def on_grid(values: np.ndarray, valid: np.ndarray, dtype="float32") -> np.ma.MaskedArray:
    """Study-area rows back on the grid, masked outside."""
    out = np.zeros(valid.shape, dtype=dtype)
    out[valid] = values
    return np.ma.masked_array(out, mask=~valid)

