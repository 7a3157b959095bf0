"""lodestar:weights_of_evidence - the weights of several evidence layers in one run: W+, W-, contrast and
studentised contrast per class or cumulative pattern (CSV), and each layer's generalised classes (a raster band per
layer)."""
from __future__ import annotations

import numpy as np
from qgis.core import QgsProcessingOutputNumber

from ..plugin.csv_table import write_csv
from ..plugin.files import OutputSet
from ..plugin.raster_writer import new_raster
from . import wofe_params as wp
from .base import Group, LodestarAlgorithm
from .params import file_destination, output_path, range_problem, raster_destination

TABLE_COLUMNS = ("layer", "weighing", "class", "value", "area_units", "deposits", "w_plus", "s_w_plus", "w_minus",
                 "s_w_minus", "contrast", "s_contrast", "studentised_contrast", "defined", "generalised",
                 "class_code")


class WeightsOfEvidenceAlgorithm(LodestarAlgorithm):
    ALGORITHM_ID = "weights_of_evidence"
    DISPLAY_NAME = "Weights of evidence"
    GROUP = Group.MAPPING
    HELP = (
        "Weights of evidence (Bonham-Carter 1994) of several evidence layers against known deposits in one run, "
        "with the core the analysis uses.\n" + wp.WEIGHING_HELP + "\n"
        "Writes the weights table (CSV): per layer, one row per class (unique, categorical) or per cumulative "
        "pattern ('>= 1.8', '< 500' in the layer's units) with its area in unit cells, deposits, W+, s(W+), W-, "
        "s(W-), contrast, s(C), studentised contrast, whether the weights are defined (no empty count), and "
        "'generalised' marking the classes or the pattern the response uses. The generalised classes raster has a "
        "band per layer: 2 inside the pattern and 1 outside (cumulative), or the class's row number (by class); 0 "
        "where the layer has no data."
    )

    OUTPUT_TABLE = "OUTPUT_TABLE"
    OUTPUT_CLASSES = "OUTPUT_CLASSES"
    DEPOSITS_USED = "DEPOSITS_USED"

    def initAlgorithm(self, config=None):  # noqa: N802 (QGIS API name)
        wp.add_parameters(self)
        self.addParameter(file_destination(self.OUTPUT_TABLE, "Weights table", "CSV files (*.csv)",
                                           "W+, W-, contrast and studentised contrast per class or pattern."))
        self.addParameter(raster_destination(self.OUTPUT_CLASSES, "Generalised classes",
                                             "One band per layer: its generalised class at each cell."))
        self.addOutput(QgsProcessingOutputNumber(self.DEPOSITS_USED, "Deposits in the study area"))

    def checkParameterValues(self, parameters, context):  # noqa: N802 (QGIS API name)
        problem = range_problem(self, parameters)
        return (False, problem) if problem else super().checkParameterValues(parameters, context)

    def run(self, parameters, context, feedback, progress) -> dict:
        weighed = wp.weigh(self, parameters, context, progress)
        model = weighed.model
        for line in weighed.log + [model.describe(j) for j in range(len(weighed.layers))]:
            progress.log(line)
        table = output_path(self, parameters, self.OUTPUT_TABLE, context, "weights.csv")
        classes = output_path(self, parameters, self.OUTPUT_CLASSES, context, "generalised_classes.tif")
        rows = [{k: _cell(v) for k, v in row.items()} for row in model.table_rows()]
        codes = model.class_codes(weighed.x)
        with OutputSet() as staged:  # both written, or neither
            write_csv(staged.path(table), list(TABLE_COLUMNS), rows)
            write_classes(codes, weighed, [model.describe(j) for j in range(len(weighed.layers))],
                          staged.path(classes))
        return {self.OUTPUT_TABLE: table, self.OUTPUT_CLASSES: classes,
                self.DEPOSITS_USED: float(weighed.deposits.sum())}


def _cell(value):
    return f"{value:.10g}" if isinstance(value, float) else value  # a threshold read back selects the same cells


def write_classes(codes: np.ndarray, weighed, descriptions: list, path) -> None:
    """An int16 GeoTIFF, one band per layer (0: nodata), each described by its generalisation."""
    grid = weighed.grid
    profile = {"driver": "GTiff", "width": grid.width, "height": grid.height, "count": codes.shape[1],
               "dtype": "int16", "nodata": 0, "transform": grid.transform, "compress": "deflate"}
    if grid.crs is not None:
        profile["crs"] = grid.crs.to_wkt()
    with new_raster(path, profile) as dst:
        for j, description in enumerate(descriptions):
            band = np.zeros(weighed.valid.shape, dtype="int16")
            band[weighed.valid] = codes[:, j]
            dst.write(band, j + 1)
            dst.set_band_description(j + 1, description)
