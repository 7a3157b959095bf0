"""Scaling parameters shared by lodestar:analyze and lodestar:analyze_cases: the Dask scheduler, and analyze's
full-resolution favourability surface (plugin.favourability.blockwise)."""
from __future__ import annotations

from qgis.core import (
    QgsProcessingParameterNumber,
    QgsProcessingParameterRasterDestination,
    QgsProcessingParameterString,
)

from ..plugin.errors import LodestarError

DASK_SCHEDULER = "DASK_SCHEDULER"
FULL_RESOLUTION = "FULL_RESOLUTION"
OUTPUT_FAVOURABILITY_FULL = "OUTPUT_FAVOURABILITY_FULL"
SCHEMES = ("tcp://", "tls://", "ucx://", "inproc://", "ws://", "wss://")


def scheduler_parameter(what: str) -> QgsProcessingParameterString:
    param = QgsProcessingParameterString(DASK_SCHEDULER, "Dask scheduler (empty: local threads)", defaultValue="",
                                         optional=True)
    param.setHelp(f"Address of a Dask scheduler, e.g. tcp://10.0.0.5:8786 (started with `dask scheduler`; on each "
                  f"machine `dask worker tcp://10.0.0.5:8786`, with the plugin's Python). {what} Empty runs "
                  "here on local threads, as without a cluster.")
    return param


def scheduler_value(algorithm, parameters, context) -> str:
    """The scheduler address given, "" for none; an address without a scheme is refused with what to write."""
    text = (algorithm.parameterAsString(parameters, DASK_SCHEDULER, context) or "").strip()
    if text and not text.startswith(SCHEMES):
        raise LodestarError(f"{DASK_SCHEDULER}: {text!r} is not a scheduler address; write it as tcp://host:8786 "
                            "(the address `dask scheduler` prints), or leave it empty to run here.")
    return text


def full_resolution_parameters() -> list:
    """FULL_RESOLUTION and OUTPUT_FAVOURABILITY_FULL of lodestar:analyze."""
    resolution = QgsProcessingParameterNumber(FULL_RESOLUTION, "Full-resolution surface: pixel size (0: finest)",
                                              QgsProcessingParameterNumber.Double, defaultValue=0.0, minValue=0.0,
                                              optional=True)
    resolution.setHelp("Pixel size in map units (metres) of OUTPUT_FAVOURABILITY_FULL; 0 takes the finest "
                       "resolution of the layers.")
    full = QgsProcessingParameterRasterDestination(OUTPUT_FAVOURABILITY_FULL, "Favourability, full resolution",
                                                   None, True, False)
    full.setHelp("Written only when given: the run's favourability surface made again at the layers' own resolution "
                 "(or FULL_RESOLUTION) over the whole common extent, block by block (memory bounded by the block, not "
                 "the raster), on DASK_SCHEDULER's cluster when given: the knowledge-driven surface, or with "
                 "CALIBRATE the chosen model's full fit (when the run maps it) with its uncertainty in a second band. "
                 "Tiled, compressed float32 GeoTIFF with overviews. The analysis itself (zones, graph, targets, "
                 "calibration) stays on its budget grid.")
    return [resolution, full]


def write_full_resolution_output(algorithm, parameters, context, request, result, progress, staged=None) -> dict:
    """OUTPUT_FAVOURABILITY_FULL when asked for: {key: path}, else {}; written into `staged` (a files.OutputSet)
    when given, to move into place with the run's other outputs."""
    from ..plugin.favourability.blockwise_fitted import write_run_surface

    if parameters.get(OUTPUT_FAVOURABILITY_FULL) in (None, ""):
        return {}
    path = algorithm.parameterAsOutputLayer(parameters, OUTPUT_FAVOURABILITY_FULL, context)
    if not path:
        return {}
    resolution = algorithm.parameterAsDouble(parameters, FULL_RESOLUTION, context) or None
    write_run_surface(result.outputs["record"], request.layers, result.zones,
                      staged.path(path) if staged is not None else path, resolution,
                      scheduler=scheduler_value(algorithm, parameters, context), progress=progress)
    return {OUTPUT_FAVOURABILITY_FULL: path}
