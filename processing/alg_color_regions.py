"""lodestar:color_regions - anomaly regions of an index raster, or coloured regions of a rendering, as zones."""
from __future__ import annotations

from qgis.core import (
    QgsProcessing,
    QgsProcessingParameterBoolean,
    QgsProcessingParameterEnum,
    QgsProcessingParameterExtent,
    QgsProcessingParameterNumber,
    QgsProcessingParameterRasterLayer,
)

from ..plugin.errors import LodestarError
from ..plugin.tools.color_regions import (
    FULL_RESOLUTION_LIMIT,
    METHODS,
    MODES,
    RENDERING_LIMIT,
    ColorRegionParams,
    color_regions,
    single_layer_set,
)
from .base import Group, LodestarAlgorithm
from .layer_export import layer_path
from .params import chosen_role, extent_in_crs, role_parameter, vector_destination
from .styling import write_zones

FAVOURABLE = ("high", "low")


class ColorRegionsAlgorithm(LodestarAlgorithm):
    ALGORITHM_ID = "color_regions"
    DISPLAY_NAME = "Colour / anomaly regions"
    GROUP = Group.TOOLS
    HELP = (
        "The box maker in colour mode: marks the anomalous regions of one raster as polygons in map coordinates "
        "(holes kept, simplified by about 1.5 pixels) with the standard zone attributes (zone_id, layer, role, "
        "kind, score_mean, score_max, area_m2, bbox, position, description).\n"
        "Index rasters (one band): pixels beyond a threshold - a percentile, mean + k x sigma, Otsu, or a value "
        "in layer units - after Gaussian smoothing; regions smaller than the minimum area are dropped (kind "
        "anomaly; scores are layer values, negated for layers favourable where low).\n"
        "RGB renderings (3-4 bands, 8 bit; coloured anomalies over a grey background): saturated colours are "
        "separated from the grey background, the colour bar is found, left out and read to turn colours into a "
        "0-1 value, and regions at or above the colour level are kept (kind colour_anomaly).\n"
        "Single-band rasters are analysed at full resolution up to 150 million pixels (read in blocks), "
        "renderings up to 8 million pixels, or at the pixel budget given."
    )

    INPUT = "INPUT"
    ROLE = "ROLE"
    FAVOURABLE = "FAVOURABLE"
    MODE = "MODE"
    METHOD = "METHOD"
    PERCENTILE = "PERCENTILE"
    K_SIGMA = "K_SIGMA"
    VALUE = "VALUE"
    BAND = "BAND"
    SMOOTH_PX = "SMOOTH_PX"
    MIN_AREA_PX = "MIN_AREA_PX"
    MAX_REGIONS = "MAX_REGIONS"
    LEVEL = "LEVEL"
    COLORBAR = "COLORBAR"
    MAX_PIXELS = "MAX_PIXELS"
    EXTENT = "EXTENT"
    OUTPUT = "OUTPUT"

    def initAlgorithm(self, config=None):  # noqa: N802 (QGIS API name)
        defaults = ColorRegionParams()
        number = QgsProcessingParameterNumber
        layer = QgsProcessingParameterRasterLayer(self.INPUT, "Raster layer")
        layer.setHelp("A single-band index / evidence raster, or an 8-bit RGB rendering with coloured anomalies.")
        favourable = QgsProcessingParameterEnum(self.FAVOURABLE, "Favourable values", options=list(FAVOURABLE),
                                                defaultValue=0)
        favourable.setHelp("high: large values are anomalous (alteration indices); low: small values are (e.g. "
                           "distance to faults).")
        mode = QgsProcessingParameterEnum(self.MODE, "Mode", options=list(MODES), defaultValue=0)
        mode.setHelp("auto: RGB path for 8-bit 3-4 band rasters, index path for single-band rasters; index or rgb "
                     "force a path (a mismatching raster is an error that says which mode fits).")
        method = QgsProcessingParameterEnum(self.METHOD, "Threshold method", options=list(METHODS), defaultValue=0)
        method.setHelp("percentile: keep pixels above the percentile; sigma: above mean + k x standard deviation; "
                       "otsu: Otsu's automatic cut; value: above (or, for low layers, below) the threshold value.")
        percentile = number(self.PERCENTILE, "Percentile", number.Double, defaultValue=defaults.percentile,
                            minValue=0.001, maxValue=99.999)
        percentile.setHelp("Percentile of the valid pixels used by the percentile method (95: the top 5 %).")
        k_sigma = number(self.K_SIGMA, "k (mean + k x sigma)", number.Double, defaultValue=defaults.k_sigma)
        k_sigma.setHelp("Number of standard deviations above the mean used by the sigma method.")
        value = number(self.VALUE, "Threshold value", number.Double, optional=True)
        value.setHelp("Threshold in layer units for the value method.")
        band = number(self.BAND, "Band (0 = single-band raster)", number.Integer, defaultValue=0, minValue=0)
        band.setHelp("For a multi-band raster: the band to treat as the index.")
        smooth = number(self.SMOOTH_PX, "Smoothing (pixels)", number.Double, defaultValue=defaults.smooth_px,
                        minValue=0)
        smooth.setHelp("Gaussian smoothing sigma in pixels before the threshold (0: none); for renderings any value "
                       "above 0 removes one-pixel noise.")
        min_area = number(self.MIN_AREA_PX, "Minimum region size (pixels)", number.Integer,
                          defaultValue=defaults.min_area_px, minValue=1)
        min_area.setHelp("Regions smaller than this many pixels (or than 0.1 % of the valid pixels) are dropped.")
        max_regions = number(self.MAX_REGIONS, "Maximum number of regions (0 = all)", number.Integer,
                             defaultValue=0, minValue=0)
        max_regions.setHelp("Keep only the regions with the highest mean score.")
        level = number(self.LEVEL, "Colour level (RGB, 0-1)", number.Double, defaultValue=defaults.level,
                       minValue=0, maxValue=1)
        level.setHelp("RGB renderings: keep colours at or above this fraction of the colour bar (0 low end, 1 high).")
        colorbar = QgsProcessingParameterBoolean(self.COLORBAR, "Find and read the colour bar (RGB)",
                                                 defaultValue=True)
        colorbar.setHelp("RGB renderings: look for a colour bar near an edge, leave it out and use it to read "
                         "colours; without one, colours are read on a blue (low) to red (high) ramp.")
        max_pixels = number(self.MAX_PIXELS, "Pixel budget (0 = full resolution)", number.Integer,
                            defaultValue=0, minValue=0)
        max_pixels.setHelp(f"Analyse at most this many pixels (the raster is decimated to fit); 0: single-band "
                           f"rasters at full resolution up to {FULL_RESOLUTION_LIMIT:,} pixels, renderings up to "
                           f"{RENDERING_LIMIT:,}.")
        extent = QgsProcessingParameterExtent(self.EXTENT, "Limit to extent", optional=True)
        extent.setHelp("Only look inside this extent (any CRS; reprojected to the layer's).")
        output = vector_destination(self.OUTPUT, "Anomaly regions", QgsProcessing.TypeVectorPolygon,
                                    "Polygons of the regions found, in the layer's CRS (or its UTM zone for a "
                                    "geographic CRS), with the standard zone attributes.")
        for param in (layer, role_parameter(self.ROLE), favourable, mode, method, percentile, k_sigma, value, band,
                      smooth, min_area, max_regions, level, colorbar, max_pixels, extent, output):
            self.addParameter(param)

    def run(self, parameters, context, feedback, progress) -> dict:
        layer = self.parameterAsRasterLayer(parameters, self.INPUT, context)
        if layer is None:
            raise LodestarError("Choose a raster layer.")
        raster_set = single_layer_set(
            layer_path(layer), chosen_role(self, parameters, self.ROLE, context, layer),
            favourable=FAVOURABLE[self.parameterAsEnum(parameters, self.FAVOURABLE, context)], name=layer.name(),
            max_pixels=self.parameterAsInt(parameters, self.MAX_PIXELS, context) or None)
        has_value = parameters.get(self.VALUE) not in (None, "")
        params = ColorRegionParams(
            mode=MODES[self.parameterAsEnum(parameters, self.MODE, context)],
            method=METHODS[self.parameterAsEnum(parameters, self.METHOD, context)],
            percentile=self.parameterAsDouble(parameters, self.PERCENTILE, context),
            k_sigma=self.parameterAsDouble(parameters, self.K_SIGMA, context),
            value=self.parameterAsDouble(parameters, self.VALUE, context) if has_value else None,
            band=self.parameterAsInt(parameters, self.BAND, context) or None,
            smooth_px=self.parameterAsDouble(parameters, self.SMOOTH_PX, context),
            min_area_px=self.parameterAsInt(parameters, self.MIN_AREA_PX, context),
            max_regions=self.parameterAsInt(parameters, self.MAX_REGIONS, context) or None,
            level=self.parameterAsDouble(parameters, self.LEVEL, context),
            colorbar=self.parameterAsBool(parameters, self.COLORBAR, context),
        )
        bounds = extent_in_crs(self, parameters, self.EXTENT, context, raster_set.crs)
        result = color_regions(raster_set, layer.name(), params, bounds=bounds, progress=progress)
        return write_zones(self, parameters, self.OUTPUT, context, result, progress, "anomaly_regions.gpkg")
