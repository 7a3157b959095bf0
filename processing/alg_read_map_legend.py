"""lodestar:read_map_legend - a scanned or exported geological map image read through its legend."""
from __future__ import annotations

from pathlib import Path

from qgis.core import (
    QgsProcessing,
    QgsProcessingOutputNumber,
    QgsProcessingOutputString,
    QgsProcessingParameterExtent,
    QgsProcessingParameterFile,
    QgsProcessingParameterNumber,
    QgsProcessingParameterRasterLayer,
)

from ..plugin.errors import LodestarError
from ..plugin.raster_io import RasterReader
from ..plugin.tools.map_legend import DEFAULT_TOLERANCE_DE, LegendOutputs, read_map_legend
from .base import Group, LodestarAlgorithm
from .layer_export import layer_path
from .params import extent_in_crs, file_destination, number_parameter, output_path, range_problem, raster_destination


class ReadMapLegendAlgorithm(LodestarAlgorithm):
    ALGORITHM_ID = "read_map_legend"
    DISPLAY_NAME = "Read a map image's legend (scanned geological map)"
    GROUP = Group.TOOLS
    HELP = (
        "Turns a geological map image (RGB or RGBA: a scan, or a map exported as an image; a GeoTIFF or a plain "
        "image) into a categorical map of unit codes. The legend box (rows of colour swatches with the unit names "
        "beside them) is found, or taken from the extent given; each swatch's colour is read, and its name with "
        "Tesseract OCR (install tesseract-ocr); every map pixel takes the unit whose swatch colour is nearest in "
        "CIELAB, within the colour tolerance. Lines, lettering, the paper and the legend box are left as nodata.\n"
        "Outputs: the unit raster (uint8, nodata 0, the input's grid and CRS, coloured like the map), the legend CSV "
        "value,name,r,g,b (by default <raster>_legend.csv, where the analysis finds it), and a JSON sidecar of what "
        "was read (OCR text and confidence, colours, the legend box, the corrections applied). Check the names: a "
        "corrections CSV (the legend CSV, edited: names and r,g,b) re-applies the classification with them."
    )

    INPUT = "INPUT"
    LEGEND_BOX = "LEGEND_BOX"
    CORRECTIONS = "CORRECTIONS"
    TOLERANCE = "TOLERANCE"
    OUTPUT = "OUTPUT"
    OUTPUT_LEGEND = "OUTPUT_LEGEND"
    OUTPUT_SIDECAR = "OUTPUT_SIDECAR"
    UNITS = "UNITS"
    NAMES = "NAMES"

    def initAlgorithm(self, config=None):  # noqa: N802 (QGIS API name)
        image = QgsProcessingParameterRasterLayer(self.INPUT, "Map image")
        image.setHelp("A geological map as an RGB(A) image of 8-bit bands, with its legend box in the image.")
        box = QgsProcessingParameterExtent(self.LEGEND_BOX, "Legend box", optional=True)
        box.setHelp("The extent of the legend (its swatches and names); empty: found automatically.")
        corrections = QgsProcessingParameterFile(self.CORRECTIONS, "Corrections CSV", extension="csv", optional=True)
        corrections.setHelp("value,name[,r,g,b] by unit code: the legend CSV written by a first run, with names or "
                            "colours corrected (blank cells keep what was read; a new code with a name and a colour "
                            "adds a unit).")
        tolerance = number_parameter(
            self.TOLERANCE, "Colour tolerance (Delta E, 1-100)", QgsProcessingParameterNumber.Double,
            DEFAULT_TOLERANCE_DE, 1.0, 100.0,
            "A pixel farther than this CIELAB colour difference from every swatch colour is left as nodata.")
        output = raster_destination(self.OUTPUT, "Geological units", "The categorical raster of unit codes.")
        legend = file_destination(self.OUTPUT_LEGEND, "Legend CSV", "CSV files (*.csv)",
                                  "value,name,r,g,b; default: <raster>_legend.csv beside the raster.")
        sidecar = file_destination(self.OUTPUT_SIDECAR, "Legend reading (JSON)", "JSON files (*.json)",
                                   "What was read and corrected; default: <raster>_legend.json beside the raster.")
        for param in (image, box, corrections, tolerance, output, legend, sidecar):
            self.addParameter(param)
        self.addOutput(QgsProcessingOutputNumber(self.UNITS, "Number of units"))
        self.addOutput(QgsProcessingOutputString(self.NAMES, "Unit names (value: name, one a line)"))

    def run(self, parameters, context, feedback, progress) -> dict:
        problem = range_problem(self, parameters)
        if problem:
            raise LodestarError(problem)
        layer = self.parameterAsRasterLayer(parameters, self.INPUT, context)
        if layer is None:
            raise LodestarError("Choose the map image.")
        image = layer_path(layer)
        box = None
        if parameters.get(self.LEGEND_BOX) not in (None, ""):
            box = extent_in_crs(self, parameters, self.LEGEND_BOX, context, RasterReader(Path(image)).grid.crs)
        raster = Path(output_path(self, parameters, self.OUTPUT, context, "geological_units.tif"))
        outputs = LegendOutputs.beside(raster)
        if _chosen(parameters, self.OUTPUT_LEGEND):
            outputs.legend = Path(output_path(self, parameters, self.OUTPUT_LEGEND, context, "legend.csv"))
        if _chosen(parameters, self.OUTPUT_SIDECAR):
            outputs.sidecar = Path(output_path(self, parameters, self.OUTPUT_SIDECAR, context, "legend.json"))
        corrections = self.parameterAsFile(parameters, self.CORRECTIONS, context) or None
        reading = read_map_legend(image, outputs, legend_box=box, corrections=corrections,
                                  tolerance=self.parameterAsDouble(parameters, self.TOLERANCE, context),
                                  progress=progress)
        for change in reading.corrections:
            feedback.pushInfo(f"Corrected unit {change['value']} ({change['field']}): {change['read']} -> "
                              f"{change['corrected']}")
        return {self.OUTPUT: str(outputs.raster), self.OUTPUT_LEGEND: str(outputs.legend),
                self.OUTPUT_SIDECAR: str(outputs.sidecar), self.UNITS: len(reading.units),
                self.NAMES: "\n".join(f"{u.value}: {u.name}" for u in reading.units)}


def _chosen(parameters, key) -> bool:
    """Whether a file destination was given a file (not left empty or temporary)."""
    value = parameters.get(key)
    sink = getattr(value, "sink", None)
    if sink is not None:
        value = sink.staticValue()
    return value not in (None, "", QgsProcessing.TEMPORARY_OUTPUT)
