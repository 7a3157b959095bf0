"""lodestar:delineate_targets - exploration targets from a favourability raster: the top share of the area cut into
patches, each split at its peaks, none larger than a cap nor smaller than the least size, ranked, the best drawn with
the prospects inside each (the analysis's own target delineation, `work_list`)."""
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
        "surface), and cut again until none exceeds MAX_TARGET_KM2. A piece smaller than MIN_TARGET_KM2 (never "
        "under 4 cells) joins the target it touches, or is dropped, and the log counts them. Targets are ranked by "
        "how high their best tenth rises (the 90th percentile of favourability inside, a density: size only breaks "
        "ties), and the best MAX_TARGETS are drawn; the rest stay in the raster, said in one line. With "
        "PROSPECT_KM2, each target larger than it holds its prospects (OUTPUT_PROSPECTS): its own best cells, split "
        "at their peaks, none larger than PROSPECT_KM2. Each target has its rank, tier (the smallest of the 2 / 5 / "
        "10 % shares whose best cells it holds), area in km2, centroid, mean and 90th-percentile favourability, "
        "score, prospects and, with known deposits given, the deposits inside it: the fields of lodestar:analyze's "
        "targets, numbers stored as numbers."
    )

    INPUT = "INPUT"
    AREA_SHARE = "AREA_SHARE"
    MAX_TARGET_KM2 = "MAX_TARGET_KM2"
    MIN_TARGET_KM2 = "MIN_TARGET_KM2"
    MAX_TARGETS = "MAX_TARGETS"
    PROSPECT_KM2 = "PROSPECT_KM2"
    SADDLE_DEPTH = "SADDLE_DEPTH"
    DEPOSITS = "DEPOSITS"
    OUTPUT = "OUTPUT"
    OUTPUT_PROSPECTS = "OUTPUT_PROSPECTS"
    TARGETS = "TARGETS"

    def initAlgorithm(self, config=None):  # noqa: N802 (QGIS API name)
        from ..plugin.favourability.targets import SADDLE_DEPTH
        from ..plugin.map.target_sizes import MIN_TARGET_CELLS, WORK_LIST

        surface = QgsProcessingParameterRasterLayer(self.INPUT, "Favourability raster")
        surface.setHelp("A favourability or probability raster (higher = more prospective).")
        share = number_parameter(self.AREA_SHARE, "Area share selected", QgsProcessingParameterNumber.Double, 0.10,
                                 0.001, 1.0, "The share of the valid area made into targets (0.10: the best 10 %).")
        cap = number_parameter(self.MAX_TARGET_KM2, "Largest target (km2)", QgsProcessingParameterNumber.Double, None,
                               0.0001, None, "No target is larger than this; empty: no cap.", optional=True)
        least = number_parameter(self.MIN_TARGET_KM2, "Smallest target (km2)", QgsProcessingParameterNumber.Double,
                                 None, 0.0001, None, f"No target is smaller than this (never under {MIN_TARGET_CELLS} "
                                 "cells): a smaller piece joins the target it touches, or is dropped; empty: "
                                 f"{MIN_TARGET_CELLS} cells.", optional=True)
        count = number_parameter(self.MAX_TARGETS, "Targets drawn (the work list)",
                                 QgsProcessingParameterNumber.Integer, WORK_LIST, 1, None,
                                 "The best this many targets are drawn; the rest of the top share stays in the raster.")
        prospect = number_parameter(self.PROSPECT_KM2, "Largest prospect inside a target (km2)",
                                    QgsProcessingParameterNumber.Double, None, 0.0001, None,
                                    "Targets larger than this hold their prospects (OUTPUT_PROSPECTS), none larger "
                                    "than this: one deposit's footprint; empty: no prospects.", optional=True)
        depth = number_parameter(self.SADDLE_DEPTH, "Saddle depth (percentile rank)",
                                 QgsProcessingParameterNumber.Double, SADDLE_DEPTH, 0.0, 1.0,
                                 "Split two peaks where the saddle between them lies this far below the lower one "
                                 "(0.02: two percentile points); 1 never splits.")
        deposits = QgsProcessingParameterVectorLayer(self.DEPOSITS, "Known deposits",
                                                     [QgsProcessing.TypeVectorPoint], optional=True)
        deposits.setHelp("Optional: counted in each target (known_deps).")
        output = vector_destination(self.OUTPUT, "Targets", QgsProcessing.TypeVectorPolygon,
                                    "Ranked target polygons with their attributes.")
        prospects = vector_destination(self.OUTPUT_PROSPECTS, "Prospects (with PROSPECT_KM2)",
                                       QgsProcessing.TypeVectorPolygon, "The prospects inside the targets: camp (the "
                                       "target's rank), rank inside it and the targets' fields; written only with "
                                       "PROSPECT_KM2.")
        for param in (surface, share, cap, least, count, prospect, depth, deposits, output, prospects):
            self.addParameter(param)
        self.addOutput(QgsProcessingOutputNumber(self.TARGETS, "Number of targets"))

    def checkParameterValues(self, parameters, context):  # noqa: N802 (QGIS API name)
        problem = range_problem(self, parameters)
        return (False, problem) if problem else super().checkParameterValues(parameters, context)

    def run(self, parameters, context, feedback, progress) -> dict:
        from ..plugin.judge.target_table import targets_note
        from ..plugin.map.target_sizes import target_sizes
        from ..plugin.map.work_list import rank_targets
        from ..plugin.raster_io import RasterReader
        from ..plugin.vector_io import shapefile_note, write_vector

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
        share = self.parameterAsDouble(parameters, self.AREA_SHARE, context)
        analysed = float(values.count()) * grid.pixel_area
        sizes = target_sizes({}, grid.pixel_area, share * analysed, min_km2=self._optional(parameters, context,
                                                                                            self.MIN_TARGET_KM2),
                             max_km2=self._optional(parameters, context, self.MAX_TARGET_KM2),
                             count=self.parameterAsInt(parameters, self.MAX_TARGETS, context),
                             prospect_km2=self._optional(parameters, context, self.PROSPECT_KM2))
        work = rank_targets(values, grid, grid.crs, share, sizes=sizes,
                            saddle_depth=self.parameterAsDouble(parameters, self.SADDLE_DEPTH, context),
                            deposit_xy=None if xy is None else xy.tolist())
        for line in log:
            progress.log(line)
        progress.log(targets_note(work, analysed, share, False))
        outputs = {self.OUTPUT: output_path(self, parameters, self.OUTPUT, context, "targets.gpkg"),
                   self.TARGETS: len(work.targets)}
        layers = {self.OUTPUT: work.targets}
        if sizes.prospect_km2:
            outputs[self.OUTPUT_PROSPECTS] = output_path(self, parameters, self.OUTPUT_PROSPECTS, context,
                                                         "prospects.gpkg")
            layers[self.OUTPUT_PROSPECTS] = work.prospects
        for key, frame in layers.items():
            note = shapefile_note(frame, outputs[key])
            if note:
                progress.log(note)
            write_vector(frame, outputs[key])
        return outputs

    def _optional(self, parameters, context, key) -> float | None:
        """An optional number's value, None when left empty."""
        return self.parameterAsDouble(parameters, key, context) if parameters.get(key) not in (None, "") else None
