"""lodestar:unit_regions - units, favourable units and contacts of a categorical geological map."""
from __future__ import annotations

from qgis.core import (
    QgsProcessing,
    QgsProcessingParameterEnum,
    QgsProcessingParameterExtent,
    QgsProcessingParameterFile,
    QgsProcessingParameterMapLayer,
    QgsProcessingParameterNumber,
    QgsProcessingParameterRasterLayer,
    QgsProcessingParameterString,
    QgsRasterLayer,
)

from ..plugin.errors import LodestarError
from ..plugin.raster_io import LayerSpec
from ..plugin.request.request import legend_beside
from ..plugin.tools.categorical import UnitRegionParams, unit_regions
from ..plugin.tools.vector_evidence import VectorEvidenceParams, vector_evidence
from .base import Group, LodestarAlgorithm
from .layer_export import layer_path
from .params import analysis_set, extent_in_crs, vector_destination
from .styling import write_zones

OUTPUTS = ("units", "contacts", "both")


class UnitRegionsAlgorithm(LodestarAlgorithm):
    ALGORITHM_ID = "unit_regions"
    DISPLAY_NAME = "Unit regions (categorical geological map)"
    GROUP = Group.TOOLS
    HELP = (
        "Turns a categorical geological map (one band of integer unit codes plus a legend CSV 'value,name[,...]') "
        "into zones: unit polygons (kind unit, one per connected patch, the unit name in the description) and / "
        "or buffered contacts between units (kind contact, score = km of contact per km2, the description names "
        "the unit pairs). Name the favourable units (e.g. the carbonate units for Carlin-type gold) to keep only "
        "them (score 1) and only the contacts that touch them. A polygon layer of units also works (unit names "
        "from the legend or a name field; it needs a reference raster for the analysis area)."
    )

    INPUT = "INPUT"
    LEGEND = "LEGEND"
    UNITS = "UNITS"
    OUTPUT_KIND = "OUTPUT_KIND"
    CONTACT_BUFFER_PX = "CONTACT_BUFFER_PX"
    NAME_FIELD = "NAME_FIELD"
    REFERENCE = "REFERENCE"
    MAX_ZONES = "MAX_ZONES"
    EXTENT = "EXTENT"
    OUTPUT = "OUTPUT"

    def initAlgorithm(self, config=None):  # noqa: N802 (QGIS API name)
        layer = QgsProcessingParameterMapLayer(self.INPUT, "Geological map")
        layer.setHelp("A categorical raster of unit codes, or a polygon layer of geological units.")
        legend = QgsProcessingParameterFile(self.LEGEND, "Legend CSV", extension="csv", optional=True)
        legend.setHelp("CSV with a header: a value column (value / code number) and a name column (name, unit, "
                       "code ... or the first text column). Empty: <map name>_legend.csv beside the map if there is "
                       "one, else units are named by their codes.")
        units = QgsProcessingParameterString(self.UNITS, "Favourable units (comma-separated)", optional=True)
        units.setHelp("Units to select, case-insensitive: a code or name, * and ? wildcards, or a word or rock "
                      "synonym in the name, never a negated one (e.g. 'LPZE, UPZC', '*carbonate*' or 'limestone', "
                      "which also matches 'Silty limestone'). Empty: all units.")
        kind = QgsProcessingParameterEnum(self.OUTPUT_KIND, "Output", options=list(OUTPUTS), defaultValue=0)
        kind.setHelp("units: unit polygons; contacts: buffered contacts between units; both. A polygon layer always "
                     "gives its units.")
        buffer = QgsProcessingParameterNumber(self.CONTACT_BUFFER_PX, "Contact zone half-width (pixels)",
                                              QgsProcessingParameterNumber.Double, defaultValue=1.0, minValue=0.5)
        buffer.setHelp("How far contact zones extend on each side of the contact, in analysis pixels.")
        name_field = QgsProcessingParameterString(self.NAME_FIELD, "Unit name field (polygon layers)", optional=True)
        name_field.setHelp("For a polygon layer: the attribute holding unit names (default: name, unit, code ... "
                           "whichever exists).")
        reference = QgsProcessingParameterRasterLayer(self.REFERENCE, "Reference raster (polygon layers)",
                                                      optional=True)
        reference.setHelp("For a polygon layer: the raster whose extent and CRS define the analysis area.")
        max_zones = QgsProcessingParameterNumber(self.MAX_ZONES, "Maximum number of zones (0 = all)",
                                                 QgsProcessingParameterNumber.Integer, defaultValue=0, minValue=0)
        max_zones.setHelp("Keep only the largest unit patches / longest contact zones.")
        extent = QgsProcessingParameterExtent(self.EXTENT, "Limit to extent", optional=True)
        extent.setHelp("Only look inside this extent (any CRS; reprojected to the map's).")
        output = vector_destination(self.OUTPUT, "Unit zones", QgsProcessing.TypeVectorPolygon,
                                    "Unit and / or contact polygons with the standard zone attributes.")
        for param in (layer, legend, units, kind, buffer, name_field, reference, max_zones, extent, output):
            self.addParameter(param)

    def run(self, parameters, context, feedback, progress) -> dict:
        layer = self.parameterAsLayer(parameters, self.INPUT, context)
        if layer is None:
            raise LodestarError("Choose a geological map.")
        legend = self.parameterAsFile(parameters, self.LEGEND, context) or legend_beside(layer.source().split("|")[0])
        spec = LayerSpec(layer_path(layer), "geological_map", name=layer.name(), legend=legend)
        units = self.parameterAsString(parameters, self.UNITS, context)
        max_zones = self.parameterAsInt(parameters, self.MAX_ZONES, context) or None
        raster_set = analysis_set(self, parameters, self.REFERENCE, context, spec, layer)
        bounds = extent_in_crs(self, parameters, self.EXTENT, context, raster_set.crs)
        if isinstance(layer, QgsRasterLayer):
            params = UnitRegionParams(
                units=units, output=OUTPUTS[self.parameterAsEnum(parameters, self.OUTPUT_KIND, context)],
                contact_buffer_px=self.parameterAsDouble(parameters, self.CONTACT_BUFFER_PX, context),
                max_zones=max_zones)
            result = unit_regions(raster_set, spec.name, params, bounds=bounds, progress=progress)
        else:
            params = VectorEvidenceParams(units=units, max_zones=max_zones,
                                          name_field=self.parameterAsString(parameters, self.NAME_FIELD, context)
                                          or None)
            result = vector_evidence(raster_set, spec.name, params, bounds=bounds, progress=progress)
        return write_zones(self, parameters, self.OUTPUT, context, result, progress, "unit_zones.gpkg")
