"""lodestar:alteration_indices - band-ratio alteration index rasters from multispectral imagery."""
from __future__ import annotations

import json

from qgis.core import (
    QgsProcessingOutputMultipleLayers,
    QgsProcessingOutputString,
    QgsProcessingParameterEnum,
    QgsProcessingParameterRasterLayer,
    QgsProcessingParameterString,
)

from ..plugin.errors import LodestarError
from ..plugin.raster_io import RasterReader
from ..plugin.tools.alteration_indices import PRESETS, alteration_indices
from ..plugin.tools.scene_products import recognise
from .base import Group, LodestarAlgorithm
from .layer_export import layer_path
from .params import folder_destination, output_path

SENSORS = ("auto",) + tuple(PRESETS)


def parse_band_map(text: str) -> dict:
    """'b5=5, b6=6' -> {'b5': 5, 'b6': 6}."""
    out = {}
    for part in (text or "").replace(";", ",").split(","):
        if not part.strip():
            continue
        label, _, number = part.partition("=")
        try:
            out[label.strip().lower()] = int(number)
        except ValueError as exc:
            raise LodestarError(f"Band map entry {part.strip()!r} is not 'label=band number' (e.g. b5=5).") from exc
    return out


class AlterationIndicesAlgorithm(LodestarAlgorithm):
    ALGORITHM_ID = "alteration_indices"
    DISPLAY_NAME = "Alteration indices (ASTER, Landsat OLI, Sentinel-2)"
    GROUP = Group.TOOLS
    HELP = (
        "Writes band-ratio alteration index rasters (float32 GeoTIFF, nodata -9999) from a multispectral image, "
        "each tagged with its Lodestar role (LODESTAR_ROLE) so it can feed an analysis directly.\n"
        "ASTER: aloh (b5+b7)/b6 (sericite / phyllic AlOH) -> hydrothermal_alteration; argillic (b4+b6)/b5 "
        "(kaolinite / alunite) -> argillic_alteration; mgoh (b6+b9)/(b7+b8) -> propylitic_alteration; "
        "ferric_iron b2/b1 and ferrous_iron (b5/b3)+(b1/b2) -> iron_oxide; with TIR bands quartz b11^2/(b10*b12) "
        "and silica b13/b10 -> silicification.\n"
        "Landsat 8/9 OLI: clay b6/b7 -> argillic_alteration; iron_oxide b4/b2 and ferrous_iron b6/b5 -> iron_oxide.\n"
        "Sentinel-2 MSI: clay b11/b12 -> argillic_alteration; iron_oxide b4/b2 and ferrous_iron b11/b8a -> "
        "iron_oxide.\n"
        "A standard product is recognised from its band names (ASTER ImageData3N / SRF_VNIR_B3N / B3N, Landsat "
        "Collection 2 SR_B1-SR_B7, Sentinel-2 L2A B01-B12 and B8A), and its integer counts are scaled to "
        "reflectance as the product states (GDAL scale / offset, else Landsat x 0.0000275 - 0.2, Sentinel-2 "
        "(DN + BOA_ADD_OFFSET) / 10000, ASTER x 0.001). Otherwise bands are found from a band map, band names in "
        "the band descriptions (B5, Band 5, B8A), band wavelengths in the metadata, or the sensor's standard band "
        "order (ASTER 9 or 14 bands, OLI 7 (b1-b7) or 6 (b2-b7), "
        "Sentinel-2 13, 12 (no B10) or 10 (20 m set)). Nodata in any input band or a zero denominator gives nodata."
    )

    INPUT = "INPUT"
    SENSOR = "SENSOR"
    INDICES = "INDICES"
    BAND_MAP = "BAND_MAP"
    OUTPUT_FOLDER = "OUTPUT_FOLDER"
    OUTPUT_LAYERS = "OUTPUT_LAYERS"
    ROLES = "ROLES"

    def initAlgorithm(self, config=None):  # noqa: N802 (QGIS API name)
        image = QgsProcessingParameterRasterLayer(self.INPUT, "Multispectral image")
        image.setHelp("A multi-band reflectance (or radiance) image: an ASTER, Landsat 8/9 OLI or Sentinel-2 stack.")
        sensor = QgsProcessingParameterEnum(self.SENSOR, "Sensor", options=list(SENSORS), defaultValue=0)
        sensor.setHelp("auto reads band wavelengths from the metadata; otherwise choose the sensor preset.")
        indices = QgsProcessingParameterString(self.INDICES, "Indices (comma-separated)", optional=True)
        indices.setHelp("Index names to compute (e.g. 'aloh, ferric_iron'); empty: every index whose bands exist.")
        band_map = QgsProcessingParameterString(self.BAND_MAP, "Band map", optional=True)
        band_map.setHelp("Which file band holds which sensor band, e.g. 'b4=1, b5=2, b6=3, b7=4' for a 4-band "
                         "ASTER SWIR subset; overrides the metadata.")
        folder = folder_destination(self.OUTPUT_FOLDER, "Output folder",
                                    "Where the index rasters <image>_<index>.tif are written.")
        for param in (image, sensor, indices, band_map, folder):
            self.addParameter(param)
        self.addOutput(QgsProcessingOutputMultipleLayers(self.OUTPUT_LAYERS, "Index rasters"))
        self.addOutput(QgsProcessingOutputString(self.ROLES, "Roles of the index rasters (JSON: path -> role)"))

    def run(self, parameters, context, feedback, progress) -> dict:
        layer = self.parameterAsRasterLayer(parameters, self.INPUT, context)
        if layer is None:
            raise LodestarError("Choose a multispectral image.")
        folder = output_path(self, parameters, self.OUTPUT_FOLDER, context, "alteration_indices")
        sensor = SENSORS[self.parameterAsEnum(parameters, self.SENSOR, context)]
        band_map = parse_band_map(self.parameterAsString(parameters, self.BAND_MAP, context)) or None
        scene = recognise(RasterReader(layer_path(layer))) if sensor == "auto" and not band_map else None
        if scene is not None:  # a standard product: its band names and the scaling of its counts
            progress.log(f"{layer.name()}: {scene.preset.title} bands found from their {scene.how}; "
                         f"{scene.scaling_note}.")
            sensor, band_map = scene.preset.name, scene.bands
        outputs = alteration_indices(
            layer_path(layer), folder, sensor=sensor,
            indices=self.parameterAsString(parameters, self.INDICES, context) or None, band_map=band_map,
            progress=progress, scaling=scene.scaling if scene else None, bands_from=scene.how if scene else "")
        paths = [str(o.path) for o in outputs]
        return {self.OUTPUT_FOLDER: folder, self.OUTPUT_LAYERS: paths,
                self.ROLES: json.dumps({str(o.path): o.role for o in outputs})}
