"""lodestar:delineate_targets - exploration targets from a favourability raster: the top share of the area cut into
patches, each split at its peaks and none larger than a cap (the analysis's own target delineation)."""
from __future__ import annotations

from qgis.core import (
    QgsProcessing,
    QgsProcessingOutputNumber,
    QgsProcessingParameterNumber,
    QgsProcessingParameterRasterLayer,
    QgsProcessingParameterVectorLayer,
)

from ..plugin.errors import LodestarError
from .base import Group, LodestarAlgorithm
from .layer_export import layer_path
from .mpm_inputs import deposit_points
from .params import number_parameter, output_path, range_problem, vector_destination


class DelineateTargetsAlgorithm(LodestarAlgorithm):
    ALGORITHM_ID = "delineate_targets"
    DISPLAY_NAME = "Delineate targets"
    GROUP = Group.MAPPING
    HELP = (
        "Draws ranked target polygons from a favourability (or probability) raster, as the analysis does: the top "
        "AREA_SHARE of the valid area is cut into patches; a patch is split at its peaks where a saddle lies at "
        "least SADDLE_DEPTH below the lower peak (on the percentile-rank scale, so the depth means the same on any "
        "surface), and cut again until none exceeds MAX_TARGET_KM2. Each target has its rank, tier (the smallest of "
        "the 2 / 5 / 10 % shares whose best cells it holds), area in km2, centroid, mean and 90th-percentile "
        "favourability, score, and, with known deposits given, the deposits inside it."
    )

    INPUT = "INPUT"
    AREA_SHARE = "AREA_SHARE"
    MAX_TARGET_KM2 = "MAX_TARGET_KM2"
    SADDLE_DEPTH = "SADDLE_DEPTH"
    DEPOSITS = "DEPOSITS"
    OUTPUT = "OUTPUT"
    TARGETS = "TARGETS"

    def initAlgorithm(self, config=None):  # noqa: N802 (QGIS API name)
        from ..plugin.favourability.targets import SADDLE_DEPTH

        surface = QgsProcessingParameterRasterLayer(self.INPUT, "Favourability raster")
        surface.setHelp("A favourability or probability raster (higher = more prospective).")
        share = number_parameter(self.AREA_SHARE, "Area share selected", QgsProcessingParameterNumber.Double, 0.10,
                                 0.001, 1.0, "The share of the valid area made into targets (0.10: the best 10 %).")
        cap = number_parameter(self.MAX_TARGET_KM2, "Largest target (km2)", QgsProcessingParameterNumber.Double, None,
                               0.0001, None, "No target is larger than this; empty: no cap.", optional=True)
        depth = number_parameter(self.SADDLE_DEPTH, "Saddle depth (percentile rank)",
                                 QgsProcessingParameterNumber.Double, SADDLE_DEPTH, 0.0, 1.0,
                                 "Split two peaks where the saddle between them lies this far below the lower one "
                                 "(0.02: two percentile points); 1 never splits.")
        deposits = QgsProcessingParameterVectorLayer(self.DEPOSITS, "Known deposits",
                                                     [QgsProcessing.TypeVectorPoint], optional=True)
        deposits.setHelp("Optional: counted in each target (known_deps).")
        output = vector_destination(self.OUTPUT, "Targets", QgsProcessing.TypeVectorPolygon,
                                    "Ranked target polygons with their attributes.")
        for param in (surface, share, cap, depth, deposits, output):
            self.addParameter(param)
        self.addOutput(QgsProcessingOutputNumber(self.TARGETS, "Number of targets"))

    def checkParameterValues(self, parameters, context):  # noqa: N802 (QGIS API name)
        problem = range_problem(self, parameters)
        return (False, problem) if problem else super().checkParameterValues(parameters, context)

    def run(self, parameters, context, feedback, progress) -> dict:
        from ..plugin.engine.prospectivity import rank_targets
        from ..plugin.raster_io import RasterReader
        from ..plugin.vector_io import write_vector

        layer = self.parameterAsRasterLayer(parameters, self.INPUT, context)
        if layer is None:
            raise LodestarError("Choose the favourability raster.")
        reader = RasterReader(layer_path(layer))
        values, grid = reader.read(bands=[1])[0], reader.grid
        if values.count() == 0:
            raise LodestarError(f"{layer.name()} has no valid cells.")
        log = []
        xy = None
        if parameters.get(self.DEPOSITS) not in (None, ""):
            xy = deposit_points(self, parameters, self.DEPOSITS, context, grid.crs, log)
        cap = self.parameterAsDouble(parameters, self.MAX_TARGET_KM2, context) \
            if parameters.get(self.MAX_TARGET_KM2) not in (None, "") else None
        targets, delineation, _ = rank_targets(
            values, grid, grid.crs, self.parameterAsDouble(parameters, self.AREA_SHARE, context), max_km2=cap,
            saddle_depth=self.parameterAsDouble(parameters, self.SADDLE_DEPTH, context),
            deposit_xy=None if xy is None else xy.tolist())
        for line in log:
            progress.log(line)
        progress.log(f"{len(targets)} targets; {delineation.split_at_peaks} patch(es) split at their peaks, "
                     f"{delineation.cut_to_cap} cut to the cap.")
        path = output_path(self, parameters, self.OUTPUT, context, "targets.gpkg")
        write_vector(targets, path)
        return {self.OUTPUT: path, self.TARGETS: len(targets)}
