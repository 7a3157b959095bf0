"""lodestar:evaluate - recall, area reduction, success-rate curve, AUC and capture at fixed area shares of
prospectivity polygons or a favourability surface against known deposits."""
from __future__ import annotations

import numpy as np
from qgis.core import (
    QgsProcessing,
    QgsProcessingOutputNumber,
    QgsProcessingParameterExtent,
    QgsProcessingParameterFileDestination,
    QgsProcessingParameterMapLayer,
    QgsProcessingParameterNumber,
    QgsProcessingParameterRasterLayer,
    QgsProcessingParameterVectorLayer,
    QgsRasterLayer,
)
from rasterio.features import geometry_mask
from rasterio.warp import Resampling, reproject
from shapely.geometry import box

from ..plugin.errors import LodestarError
from ..plugin.evaluation import (
    DEFAULT_SHARES,
    beside_surface,
    deposit_coordinates,
    evaluate_localization,
    evaluate_surface,
    plot_success_curve,
    raster_valid_mask,
    write_curve_csv,
)
from ..plugin.labels import best_targets_hold
from ..plugin.raster_io import RasterReader
from ..plugin.vector_io import read_vector
from .base import Group, LodestarAlgorithm
from .layer_export import layer_path
from .params import extent_in_crs, file_destination, number_parameter, output_path, range_problem


class EvaluateAlgorithm(LodestarAlgorithm):
    ALGORITHM_ID = "evaluate"
    DISPLAY_NAME = "Evaluate prospectivity against known deposits"
    GROUP = Group.EVALUATION
    HELP = (
        "Measures how well prospectivity polygons (ranked by their 'rank' field, else by 'score') or a "
        "favourability / prospectivity raster (higher = more prospective) capture known deposits.\n"
        "Polygons: recall (deposits inside a polygon, boundary included, over the deposits inside the analysed "
        "area), area reduction (1 - selected area / valid analysed area; nodata cells of the analysis raster are "
        "not area), the success-rate curve (share of deposits captured against share of area, by rank; the "
        "unselected rest closes it) with its AUC (0.5 = chance), and the deposits captured within the best-ranked "
        "2, 5, 10 and 20 % of the area. An empty result is scored as finding nothing: recall 0, capture 0, AUC 0 "
        "and no area reduction (nan).\n"
        "Raster: every valid cell is ranked by its value, so the success-rate curve, AUC and capture at 2, 5, 10 "
        "and 20 % of the area are exact (ties shared out evenly); recall and area reduction are those of the cells "
        "above THRESHOLD.\nDeposits outside the analysed area are counted and reported, not scored. Writes the "
        "curve as a CSV table and a PNG plot."
    )

    PROSPECTIVITY = "PROSPECTIVITY"
    DEPOSITS = "DEPOSITS"
    ANALYSIS_RASTER = "ANALYSIS_RASTER"
    EXTENT = "EXTENT"
    THRESHOLD = "THRESHOLD"
    SURFACE = "SURFACE"
    OUTPUT_TABLE = "OUTPUT_TABLE"
    OUTPUT_PLOT = "OUTPUT_PLOT"
    RECALL = "RECALL"
    AREA_REDUCTION = "AREA_REDUCTION"
    AUC = "AUC"
    FOUND = "FOUND"
    OUTSIDE = "OUTSIDE"
    CAPTURE = {share: f"CAPTURE_{100 * share:g}" for share in DEFAULT_SHARES}  # CAPTURE_2, _5, _10, _20

    def initAlgorithm(self, config=None):  # noqa: N802 (QGIS API name)
        prospectivity = QgsProcessingParameterMapLayer(self.PROSPECTIVITY, "Prospectivity (polygons or raster)")
        prospectivity.setHelp("Polygons written by 'Localize deposits', or any prospectivity raster.")
        deposits = QgsProcessingParameterVectorLayer(self.DEPOSITS, "Known deposits",
                                                     [QgsProcessing.TypeVectorPoint])
        deposits.setHelp("Points of known deposits (reprojected to the prospectivity's CRS).")
        analysis = QgsProcessingParameterRasterLayer(self.ANALYSIS_RASTER, "Analysis raster (valid area)",
                                                     optional=True)
        analysis.setHelp("A raster of the analysis: its cells with data make the analysed area (nodata is not "
                         "area). Without it: the extent below, else (for a prospectivity raster) its own data cells.")
        extent = QgsProcessingParameterExtent(self.EXTENT, "Analysed extent", optional=True)
        extent.setHelp("The analysed area as an extent, when no analysis raster is given.")
        threshold = number_parameter(self.THRESHOLD, "Raster selection threshold", QgsProcessingParameterNumber.Double,
                                     0.0, -1e12, 1e12, "Prospectivity raster cells above this value are selected "
                                     "(recall and area reduction only; the curve, AUC and capture rank every cell).")
        table = file_destination(self.OUTPUT_TABLE, "Success-rate table", "CSV files (*.csv)",
                                 "One row per rank: cumulative area, area share, deposits found and deposit share.")
        plot = QgsProcessingParameterFileDestination(self.OUTPUT_PLOT, "Success-rate plot", "PNG files (*.png)",
                                                     optional=True)
        plot.setHelp("The success-rate curve with the chance line, recall, area reduction and AUC.")
        surface = QgsProcessingParameterRasterLayer(self.SURFACE, "Surface the targets come from", optional=True)
        surface.setHelp("For prospectivity polygons: the favourability surface they were drawn from. The table then "
                        "gives at each rank the deposits the surface's own best cells of the same area hold "
                        "(surface_found), and the log compares the best 10 targets with them.")
        for param in (prospectivity, deposits, analysis, extent, threshold, surface, table, plot):
            self.addParameter(param)
        for key, label in ((self.RECALL, "Recall"), (self.AREA_REDUCTION, "Area reduction"),
                           (self.AUC, "Success-rate AUC"), (self.FOUND, "Deposits found"),
                           (self.OUTSIDE, "Deposits outside the analysed area")):
            self.addOutput(QgsProcessingOutputNumber(key, label))
        for share, key in self.CAPTURE.items():
            self.addOutput(QgsProcessingOutputNumber(key, f"Deposits captured in the top {100 * share:g} % of the "
                                                          "area"))

    def checkParameterValues(self, parameters, context):  # noqa: N802 (QGIS API name)
        problem = range_problem(self, parameters)
        return (False, problem) if problem else super().checkParameterValues(parameters, context)

    def run(self, parameters, context, feedback, progress) -> dict:
        layer = self.parameterAsLayer(parameters, self.PROSPECTIVITY, context)
        deposits_layer = self.parameterAsVectorLayer(parameters, self.DEPOSITS, context)
        if layer is None or deposits_layer is None:
            raise LodestarError("Choose the prospectivity layer and the known deposits.")
        source = layer_path(layer)
        is_raster = isinstance(layer, QgsRasterLayer)
        prospectivity = source if is_raster else read_vector(source)
        deposits = read_vector(layer_path(deposits_layer))
        options = {"threshold": self.parameterAsDouble(parameters, self.THRESHOLD, context)}
        analysis = self.parameterAsRasterLayer(parameters, self.ANALYSIS_RASTER, context)
        crs = RasterReader(source).grid.crs if is_raster else prospectivity.crs
        extent = extent_in_crs(self, parameters, self.EXTENT, context, crs)
        if analysis is not None:
            options["analysis_raster"] = layer_path(analysis)
        elif extent is not None:
            options["valid_geometry"] = box(*extent)
        elif not is_raster:
            raise LodestarError("Give the analysis raster (ANALYSIS_RASTER) or the analysed extent (EXTENT) so that "
                                "the area reduction can be computed.")
        metrics = evaluate_localization(prospectivity, deposits, progress=progress, **options)
        surface = self.parameterAsRasterLayer(parameters, self.SURFACE, context)
        if surface is not None and not is_raster:
            reader = RasterReader(layer_path(surface))
            metrics = beside_surface(metrics, reader.read(bands=[1])[0], reader.grid,
                                     deposit_coordinates(deposits, reader.grid.crs, metrics["log"]))
            equal = metrics["equal_area"]
            if equal:
                progress.log(f"{best_targets_hold(equal['rank'], equal['targets'])} in "
                             f"{100 * equal['area_share']:.2f} % of the area; the surface's own best cells of the "
                             f"same area hold {equal['surface']:.1f}.")
        ranked = metrics
        if is_raster:
            ranked = self.surface_metrics(source, deposits, options.get("analysis_raster"), extent, metrics["log"])
        for line in metrics["log"]:
            progress.log(line)
        progress.log(f"Deposits: {ranked['deposits']} ({ranked['inside']} inside the analysed area, "
                     f"{ranked['outside']} outside); found {metrics['found']}.")
        progress.log("Captured in the top " + ", ".join(f"{100 * share:g} %: {count:.1f}" for share, count in
                                                         ranked["capture"].items()) + " of the area.")
        table = output_path(self, parameters, self.OUTPUT_TABLE, context, "success_rate.csv")
        write_curve_csv(ranked, table)
        result = {self.OUTPUT_TABLE: table}
        plot = self.parameterAsFileOutput(parameters, self.OUTPUT_PLOT, context)
        if plot:
            plot_success_curve({**ranked, "recall": metrics["recall"], "area_reduction": metrics["area_reduction"]},
                               plot, title=f"Success-rate curve: {layer.name()}")
            result[self.OUTPUT_PLOT] = plot
        nan = float("nan")
        result.update({
            self.RECALL: metrics["recall"] if metrics["recall"] is not None else nan,
            self.AREA_REDUCTION: metrics["area_reduction"] if metrics["area_reduction"] is not None else nan,
            self.AUC: ranked["auc"] if ranked["auc"] is not None else nan,
            self.FOUND: metrics["found"],
            self.OUTSIDE: ranked["outside"],
        })
        result.update({key: ranked["capture"][share] if ranked["inside"] else nan
                       for share, key in self.CAPTURE.items()})
        return result

    @staticmethod
    def surface_metrics(source: str, deposits, analysis_raster, extent, log: list) -> dict:
        """The exact success-rate curve, AUC and capture of a raster's band 1 over its data cells that lie in the
        analysed area (the analysis raster's data cells, else the extent)."""
        reader = RasterReader(source)
        values, grid = reader.read(bands=[1])[0], reader.grid
        outside = np.ma.getmaskarray(values).copy()
        if analysis_raster is not None:
            valid, valid_grid = raster_valid_mask(analysis_raster)
            sampled = np.zeros((grid.height, grid.width), dtype="uint8")
            reproject(valid.astype("uint8"), sampled, src_transform=valid_grid.transform, src_crs=valid_grid.crs,
                      dst_transform=grid.transform, dst_crs=grid.crs, resampling=Resampling.nearest)
            outside |= sampled == 0
        elif extent is not None:
            outside |= geometry_mask([box(*extent)], (grid.height, grid.width), grid.transform)
        return evaluate_surface(np.ma.masked_array(values.data, outside), grid,
                                deposit_coordinates(deposits, grid.crs, log))
