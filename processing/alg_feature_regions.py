"""lodestar:feature_regions - faults, lineaments, contacts and texture anomalies of a layer as zones."""
from __future__ import annotations

from qgis.core import (
    QgsProcessing,
    QgsProcessingParameterEnum,
    QgsProcessingParameterExtent,
    QgsProcessingParameterFile,
    QgsProcessingParameterMapLayer,
    QgsProcessingParameterNumber,
    QgsProcessingParameterRasterLayer,
)

from ..plugin.errors import LodestarError
from ..plugin.raster_io import LayerSpec
from ..plugin.request.request import legend_beside
from ..plugin.tools.feature_regions import MODES, FeatureRegionParams, feature_regions
from .base import Group, LodestarAlgorithm
from .layer_export import layer_path
from .params import analysis_set, chosen_role, extent_in_crs, role_parameter, vector_destination
from .styling import write_zones


class FeatureRegionsAlgorithm(LodestarAlgorithm):
    ALGORITHM_ID = "feature_regions"
    DISPLAY_NAME = "Feature regions (faults, lineaments, contacts, texture)"
    GROUP = Group.TOOLS
    HELP = (
        "The box maker in feature mode: marks structural and textural features of one layer as polygons in map "
        "coordinates, with the standard zone attributes (zone_id, layer, role, kind, score_mean, score_max, "
        "area_m2, bbox, position, description).\n"
        "Modes: faults - thin dark linear features on a map or image (kind fault, score = darkness contrast); "
        "lineaments - density of straight edges on imagery (kind lineament_density, score = share of lineament "
        "pixels, the description gives the main trend); contacts - buffered contacts between units of a "
        "categorical map (with its legend) or between colour units of a coloured geological map (kind contact, "
        "score = km of contact per km2); texture - areas of unusually high (or low) local variance (kind "
        "texture, score = robust z-score). Automatic picks contacts for geological maps, lineaments for imagery "
        "and structure rasters, texture for other index rasters.\n"
        "A vector layer (fault lines, unit polygons) needs a reference raster for the analysis area; fault lines "
        "become buffered fault zones scored by fault density, unit polygons become unit zones."
    )

    INPUT = "INPUT"
    ROLE = "ROLE"
    LEGEND = "LEGEND"
    REFERENCE = "REFERENCE"
    MODE = "MODE"
    BUFFER_PX = "BUFFER_PX"
    MIN_AREA_PX = "MIN_AREA_PX"
    MAX_ZONES = "MAX_ZONES"
    EXTENT = "EXTENT"
    OUTPUT = "OUTPUT"

    def initAlgorithm(self, config=None):  # noqa: N802 (QGIS API name)
        layer = QgsProcessingParameterMapLayer(self.INPUT, "Layer")
        layer.setHelp("A raster (map, image, index or categorical geological map) or a vector layer of fault lines "
                      "or unit polygons.")
        legend = QgsProcessingParameterFile(self.LEGEND, "Legend CSV (categorical maps)", extension="csv",
                                            optional=True)
        legend.setHelp("For a categorical geological map: a CSV 'value,name[,...]' giving each unit code a name; "
                       "contact descriptions then name the units. Empty: <map name>_legend.csv beside the map, if "
                       "there is one.")
        reference = QgsProcessingParameterRasterLayer(self.REFERENCE, "Reference raster (for a vector layer)",
                                                      optional=True)
        reference.setHelp("The raster whose extent, CRS and pixel size define the analysis area when the layer is "
                          "a vector; fault zones are buffered by about 1.5 of its pixels.")
        mode = QgsProcessingParameterEnum(self.MODE, "Feature mode", options=list(MODES), defaultValue=0)
        mode.setHelp("auto, faults (dark lines), lineaments (edge density), contacts (unit boundaries) or "
                     "texture (local variance anomaly).")
        buffer = QgsProcessingParameterNumber(self.BUFFER_PX, "Zone half-width around lines (pixels)",
                                              QgsProcessingParameterNumber.Double, defaultValue=1.0, minValue=0.5)
        buffer.setHelp("Faults and contacts: how far, in analysis pixels, a zone extends on each side of the line.")
        min_area = QgsProcessingParameterNumber(self.MIN_AREA_PX, "Minimum zone size (pixels)",
                                                QgsProcessingParameterNumber.Integer, defaultValue=9, minValue=1)
        min_area.setHelp("Zones smaller than this many analysis pixels are dropped (lineaments, contacts, texture).")
        max_zones = QgsProcessingParameterNumber(self.MAX_ZONES, "Maximum number of zones (0 = all)",
                                                 QgsProcessingParameterNumber.Integer, defaultValue=10, minValue=0)
        max_zones.setHelp("Keep only the strongest zones: longest faults, densest lineaments / contacts, most "
                          "anomalous texture.")
        extent = QgsProcessingParameterExtent(self.EXTENT, "Limit to extent", optional=True)
        extent.setHelp("Only look inside this extent (any CRS; reprojected to the layer's).")
        output = vector_destination(self.OUTPUT, "Feature zones", QgsProcessing.TypeVectorPolygon,
                                    "Polygons of the features found, in the analysis CRS, with the standard zone "
                                    "attributes.")
        for param in (layer, role_parameter(self.ROLE), legend, reference, mode, buffer, min_area, max_zones,
                      extent, output):
            self.addParameter(param)

    def run(self, parameters, context, feedback, progress) -> dict:
        layer = self.parameterAsLayer(parameters, self.INPUT, context)
        if layer is None:
            raise LodestarError("Choose a layer.")
        legend = self.parameterAsFile(parameters, self.LEGEND, context) or legend_beside(layer.source().split("|")[0])
        spec = LayerSpec(layer_path(layer), chosen_role(self, parameters, self.ROLE, context, layer),
                         name=layer.name(), legend=legend)
        raster_set = analysis_set(self, parameters, self.REFERENCE, context, spec, layer)
        max_zones = self.parameterAsInt(parameters, self.MAX_ZONES, context)
        params = FeatureRegionParams(
            mode=MODES[self.parameterAsEnum(parameters, self.MODE, context)],
            buffer_px=self.parameterAsDouble(parameters, self.BUFFER_PX, context),
            min_area_px=self.parameterAsInt(parameters, self.MIN_AREA_PX, context),
            max_zones=max_zones or None,
        )
        bounds = extent_in_crs(self, parameters, self.EXTENT, context, raster_set.crs)
        result = feature_regions(raster_set, spec.name, params, bounds=bounds, progress=progress)
        return write_zones(self, parameters, self.OUTPUT, context, result, progress, "feature_zones.gpkg")
