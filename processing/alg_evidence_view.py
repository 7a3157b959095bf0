"""lodestar:evidence_view - a zoomed, sharpened, georeferenced view of a raster (PNG + world file, or GeoTIFF)."""
from __future__ import annotations

from qgis.core import (
    QgsProcessingOutputString,
    QgsProcessingParameterBoolean,
    QgsProcessingParameterExtent,
    QgsProcessingParameterNumber,
    QgsProcessingParameterRasterLayer,
)

from ..plugin.errors import LodestarError
from ..plugin.raster_io import RasterReader
from ..plugin.tools.evidence_view import evidence_view
from .base import Group, LodestarAlgorithm
from .layer_export import layer_path
from .params import extent_in_crs, output_path, raster_destination


class EvidenceViewAlgorithm(LodestarAlgorithm):
    ALGORITHM_ID = "evidence_view"
    DISPLAY_NAME = "Evidence view (zoom, sharpen, contrast)"
    GROUP = Group.TOOLS
    HELP = (
        "Writes a zoomed view of a raster for inspection by a person or a vision model: the window is an extent, "
        "or a normalised centre (0-1, (0, 0) top-left) with a zoom factor (2 shows half the width and height). "
        "A window reaching past the raster's edge is shifted back inside, never shrunk. The crop is stretched "
        "(2-98 % percentiles; single-band rasters get the magma colour map), resized to the output size on its "
        "longest side, optionally sharpened with an unsharp mask and contrast-enhanced. A .png output gets a "
        "world file (.pgw) and its CRS (.aux.xml) so it lies in place in QGIS; a .tif output is a GeoTIFF."
    )

    INPUT = "INPUT"
    EXTENT = "EXTENT"
    CENTER_X = "CENTER_X"
    CENTER_Y = "CENTER_Y"
    ZOOM = "ZOOM"
    SHARPEN = "SHARPEN"
    CONTRAST = "CONTRAST"
    OUT_SIZE = "OUT_SIZE"
    GRID = "GRID"
    OUTPUT = "OUTPUT"
    NOTES = "NOTES"

    def initAlgorithm(self, config=None):  # noqa: N802 (QGIS API name)
        number = QgsProcessingParameterNumber
        layer = QgsProcessingParameterRasterLayer(self.INPUT, "Raster layer")
        layer.setHelp("Any raster: an index map, a rendering, a geological map or imagery.")
        extent = QgsProcessingParameterExtent(self.EXTENT, "View extent", optional=True)
        extent.setHelp("The map window to show (any CRS). Leave empty to use the centre and zoom factor.")
        center_x = number(self.CENTER_X, "Centre x (0 left - 1 right)", number.Double, defaultValue=0.5,
                          minValue=0, maxValue=1)
        center_x.setHelp("Horizontal position of the view's centre as a fraction of the raster's width.")
        center_y = number(self.CENTER_Y, "Centre y (0 top - 1 bottom)", number.Double, defaultValue=0.5,
                          minValue=0, maxValue=1)
        center_y.setHelp("Vertical position of the view's centre as a fraction of the raster's height (0 = top).")
        zoom = number(self.ZOOM, "Zoom factor", number.Double, defaultValue=2.0, minValue=1.0)
        zoom.setHelp("The view covers 1/zoom of the raster's width and height (1: the whole raster).")
        sharpen = number(self.SHARPEN, "Sharpen intensity (0 = none)", number.Double, defaultValue=0.0,
                         minValue=0.0)
        sharpen.setHelp("Unsharp mask strength (radius 2, threshold 3); 2 means 200 %, GeoScout's default.")
        contrast = number(self.CONTRAST, "Contrast factor", number.Double, defaultValue=1.0, minValue=0.1)
        contrast.setHelp("1 leaves contrast as stretched; above 1 increases it.")
        out_size = number(self.OUT_SIZE, "Output size (pixels, longest side)", number.Integer, defaultValue=448,
                          minValue=16, maxValue=8192)
        out_size.setHelp("The view is resized so its longest side has this many pixels.")
        grid = QgsProcessingParameterBoolean(self.GRID, "Draw a coordinate grid", defaultValue=False)
        grid.setHelp("Draw map-coordinate grid lines with labels and a north arrow over the view.")
        output = raster_destination(self.OUTPUT, "Evidence view", "A .png (with .pgw world file) or a .tif GeoTIFF.")
        for param in (layer, extent, center_x, center_y, zoom, sharpen, contrast, out_size, grid, output):
            self.addParameter(param)
        self.addOutput(QgsProcessingOutputString(self.NOTES, "Notes on the window"))

    def run(self, parameters, context, feedback, progress) -> dict:
        layer = self.parameterAsRasterLayer(parameters, self.INPUT, context)
        if layer is None:
            raise LodestarError("Choose a raster layer.")
        reader = RasterReader(layer_path(layer))
        bbox = extent_in_crs(self, parameters, self.EXTENT, context, reader.grid.crs)
        center = None if bbox is not None else (self.parameterAsDouble(parameters, self.CENTER_X, context),
                                                self.parameterAsDouble(parameters, self.CENTER_Y, context))
        draw = self.parameterAsBool(parameters, self.GRID, context)
        path = output_path(self, parameters, self.OUTPUT, context, "evidence_view.png")
        view = evidence_view(reader, bbox=bbox, center=center,
                             zoom=self.parameterAsDouble(parameters, self.ZOOM, context),
                             sharpen=self.parameterAsDouble(parameters, self.SHARPEN, context),
                             contrast=self.parameterAsDouble(parameters, self.CONTRAST, context),
                             out_size=self.parameterAsInt(parameters, self.OUT_SIZE, context),
                             grid=draw, north_arrow=draw, out_path=path)
        for line in view.notes:
            progress.log(line)
        return {self.OUTPUT: str(view.path), self.NOTES: " ".join(view.notes)}
