"""lodestar:refine_zones_sam - zone outlines refined with Segment Anything."""
from __future__ import annotations

from qgis.core import (
    QgsProcessing,
    QgsProcessingParameterBoolean,
    QgsProcessingParameterEnum,
    QgsProcessingParameterFeatureSource,
    QgsProcessingParameterFile,
    QgsProcessingParameterMultipleLayers,
)

from ..plugin.errors import LodestarError
from ..plugin.raster_io import LayerSpec, RasterSet
from ..plugin.roles import ROLES
from ..plugin.vector_io import write_vector
from .base import Group, LodestarAlgorithm
from .layer_export import guessed_role, layer_path, source_frame
from .params import output_path, vector_destination
from .styling import style_output

DEVICES = (("CPU", "cpu"), ("CUDA GPU", "cuda"), ("CUDA when available, else CPU", "auto"))


class RefineZonesSamAlgorithm(LodestarAlgorithm):
    ALGORITHM_ID = "refine_zones_sam"
    DISPLAY_NAME = "Refine zone outlines with Segment Anything"
    GROUP = Group.REFINEMENT
    HELP = (
        "Replaces each zone's outline by the outline Segment Anything (SAM) draws inside the zone's box on its "
        "raster: the zone's box (and, with 'Use anomaly maxima', a positive point at the most favourable value "
        "of each part of the zone) prompts SAM on a rendered window of the raster; the mask with the highest "
        "predicted IoU is kept and turned into polygons (holes kept, simplified by about 1.5 pixels). One image "
        "embedding serves all zones of a window. The output keeps every attribute and adds sam_score (mask "
        "stability), sam_iou (predicted IoU) and sam_refined (false where the zone kept its outline). Needs "
        "the Python packages torch and segment-anything, and a SAM checkpoint (vit_b, vit_l or vit_h; the model "
        "type is read from the file)."
    )

    INPUT = "INPUT"
    RASTERS = "RASTERS"
    CHECKPOINT = "CHECKPOINT"
    DEVICE = "DEVICE"
    USE_POINTS = "USE_POINTS"
    OUTPUT = "OUTPUT"

    def initAlgorithm(self, config=None):  # noqa: N802 (QGIS API name)
        zones = QgsProcessingParameterFeatureSource(self.INPUT, "Zone layer", [QgsProcessing.TypeVectorPolygon])
        zones.setHelp("Polygon zones, e.g. the candidate zones of a Lodestar run. Their 'layer' attribute names "
                      "the raster each zone was marked on.")
        rasters = QgsProcessingParameterMultipleLayers(self.RASTERS, "Rasters", QgsProcessing.TypeRaster)
        rasters.setHelp("The rasters the zones were marked on, matched to the zones' 'layer' attribute by layer "
                        "name; a single raster serves all zones.")
        checkpoint = QgsProcessingParameterFile(
            self.CHECKPOINT, "SAM checkpoint", fileFilter="PyTorch checkpoints (*.pth *.pt);;All files (*)")
        checkpoint.setHelp("A Segment Anything checkpoint file (sam_vit_b_01ec64.pth, sam_vit_l_0b3195.pth or "
                           "sam_vit_h_4b8939.pth); the model type is detected from its weights.")
        device = QgsProcessingParameterEnum(self.DEVICE, "Device", options=[label for label, _ in DEVICES],
                                            defaultValue=0)
        device.setHelp("Where SAM runs: the CPU, a CUDA GPU (an error when torch sees none), or CUDA when "
                       "available.")
        points = QgsProcessingParameterBoolean(self.USE_POINTS, "Use anomaly maxima as positive points",
                                               defaultValue=True)
        points.setHelp("Besides the box, prompt SAM with a point at the most favourable value inside each part of "
                       "the zone (single-band rasters only).")
        output = vector_destination(self.OUTPUT, "Refined zones", QgsProcessing.TypeVectorPolygon,
                                    "The zones with refined outlines and the sam_score, sam_iou and sam_refined "
                                    "attributes.")
        for param in (zones, rasters, checkpoint, device, points, output):
            self.addParameter(param)

    def run(self, parameters, context, feedback, progress) -> dict:
        from ..models.sam import refine_zones

        source = self.parameterAsSource(parameters, self.INPUT, context)
        if source is None:
            raise LodestarError("Choose a zone layer.")
        zones = source_frame(source)
        layers = self.parameterAsLayerList(parameters, self.RASTERS, context)
        if not layers:
            raise LodestarError("Choose at least one raster: the one(s) the zones were marked on.")
        roles = {}
        if "layer" in zones.columns and "role" in zones.columns:
            roles = {str(n): str(r) for n, r in zip(zones["layer"], zones["role"]) if str(r) in ROLES}
        specs = [LayerSpec(layer_path(layer), roles.get(layer.name()) or guessed_role(layer), name=layer.name())
                 for layer in layers]
        if len(specs) > 1:
            names = {spec.name for spec in specs}
            known = set(map(str, zones["layer"])) if "layer" in zones.columns else set()
            if not known & names:
                raise LodestarError(
                    "None of the zones' 'layer' values (" + ", ".join(sorted(known)[:5]) + ") names one of the "
                    "rasters given (" + ", ".join(sorted(names)) + "). Choose the rasters the zones were marked "
                    "on, or a single raster for all zones."
                )
        raster_set = RasterSet(specs, progress=progress)
        for line in raster_set.log:
            progress.log(line)
        device = DEVICES[self.parameterAsEnum(parameters, self.DEVICE, context)][1]
        refined = refine_zones(zones, raster_set, self.parameterAsFile(parameters, self.CHECKPOINT, context),
                               device=device, use_points=self.parameterAsBoolean(parameters, self.USE_POINTS, context),
                               progress=progress)
        done = int(refined["sam_refined"].sum()) if len(refined) else 0
        progress.log(f"{done} of {len(refined)} zones refined by SAM.")
        path = output_path(self, parameters, self.OUTPUT, context, "refined_zones.gpkg")
        write_vector(refined, path)
        style_output(context, path, "zones.qml")
        return {self.OUTPUT: path}
