"""lodestar:prediction_area - the success-rate curve, ROC curve and prediction-area plot of a favourability raster
against known deposits, as a PNG and a CSV table, with the AUCs and the P-A crossing as outputs."""
from __future__ import annotations

from qgis.core import (
    QgsProcessing,
    QgsProcessingOutputNumber,
    QgsProcessingParameterRasterLayer,
    QgsProcessingParameterVectorLayer,
)

from ..plugin.errors import LodestarError
from ..plugin.files import OutputSet
from .base import Group, LodestarAlgorithm
from .layer_export import layer_path
from .mpm_inputs import deposit_points
from .params import file_destination, output_path


class PredictionAreaAlgorithm(LodestarAlgorithm):
    ALGORITHM_ID = "prediction_area"
    DISPLAY_NAME = "Success rate, ROC and prediction-area plot"
    GROUP = Group.MAPPING
    HELP = (
        "Validates a favourability (or probability) raster against known deposits. At each value threshold (the "
        "raster's distinct values, or 200 quantiles and the deposits' values, highest first): the share of the valid "
        "area at or above it, the share of the deposits there (prediction rate) and the false-positive rate (cells "
        "without a deposit at or above it).\n"
        "Draws the success-rate curve (deposits against area; AUC exact, ties shared out, as 'Evaluate' computes "
        "it), the ROC curve (deposits against false positives; AUC by the trapezoid rule) and the prediction-area "
        "plot (prediction rate and area left against the threshold; where they cross, x % of the deposits lie in "
        "100 - x % of the area) as a PNG, and the table as CSV. Deposits outside the valid area are counted and "
        "left out."
    )

    INPUT = "INPUT"
    DEPOSITS = "DEPOSITS"
    OUTPUT_TABLE = "OUTPUT_TABLE"
    OUTPUT_PLOT = "OUTPUT_PLOT"
    AUC = "AUC"
    ROC_AUC = "ROC_AUC"
    PA_AREA_SHARE = "PA_AREA_SHARE"
    PA_DEPOSIT_SHARE = "PA_DEPOSIT_SHARE"
    PA_THRESHOLD = "PA_THRESHOLD"

    def initAlgorithm(self, config=None):  # noqa: N802 (QGIS API name)
        surface = QgsProcessingParameterRasterLayer(self.INPUT, "Favourability raster")
        surface.setHelp("A favourability or probability raster (higher = more prospective).")
        deposits = QgsProcessingParameterVectorLayer(self.DEPOSITS, "Known deposits", [QgsProcessing.TypeVectorPoint])
        deposits.setHelp("Points of known deposits (reprojected to the raster's CRS).")
        table = file_destination(self.OUTPUT_TABLE, "Curves table", "CSV files (*.csv)",
                                 "threshold, area_share, deposits_found, deposit_share, false_positive_rate.")
        plot = file_destination(self.OUTPUT_PLOT, "Curves plot", "PNG files (*.png)",
                                "The success-rate, ROC and prediction-area plots side by side.")
        for param in (surface, deposits, table, plot):
            self.addParameter(param)
        for key, label in ((self.AUC, "Success-rate AUC"), (self.ROC_AUC, "ROC AUC"),
                           (self.PA_AREA_SHARE, "Prediction-area crossing: area share"),
                           (self.PA_DEPOSIT_SHARE, "Prediction-area crossing: deposit share"),
                           (self.PA_THRESHOLD, "Prediction-area crossing: threshold")):
            self.addOutput(QgsProcessingOutputNumber(key, label))

    def run(self, parameters, context, feedback, progress) -> dict:
        from ..plugin.prediction_curves import plot_curves, prediction_curves, write_curves_csv
        from ..plugin.raster_io import RasterReader

        layer = self.parameterAsRasterLayer(parameters, self.INPUT, context)
        if layer is None:
            raise LodestarError("Choose the favourability raster.")
        reader = RasterReader(layer_path(layer))
        log = []
        xy = deposit_points(self, parameters, self.DEPOSITS, context, reader.grid.crs, log)
        curves = prediction_curves(reader.read(bands=[1])[0], reader.grid, xy)
        crossing = curves["crossing"] or {}
        for line in log:
            progress.log(line)
        progress.log(f"{curves['inside']} deposits inside the valid area ({curves['outside']} outside): success-rate "
                     f"AUC {curves['auc']:.3f}, ROC AUC {curves['roc_auc']:.3f}" + (
                         f"; {100 * crossing['deposit_share']:.0f} % of the deposits in "
                         f"{100 * crossing['area_share']:.0f} % of the area." if crossing else "."))
        table = output_path(self, parameters, self.OUTPUT_TABLE, context, "prediction_area.csv")
        plot = output_path(self, parameters, self.OUTPUT_PLOT, context, "prediction_area.png")
        with OutputSet() as staged:  # both written, or neither
            write_curves_csv(curves, staged.path(table))
            plot_curves(curves, staged.path(plot), layer.name())
        nan = float("nan")
        return {self.OUTPUT_TABLE: table, self.OUTPUT_PLOT: plot, self.AUC: curves["auc"],
                self.ROC_AUC: curves["roc_auc"], self.PA_AREA_SHARE: crossing.get("area_share", nan),
                self.PA_DEPOSIT_SHARE: crossing.get("deposit_share", nan),
                self.PA_THRESHOLD: crossing.get("threshold", nan)}
