"""lodestar:controller_check - the rule-based output controller on a layer of proposed regions."""
from __future__ import annotations

import json

from qgis.core import (
    QgsProcessing,
    QgsProcessingOutputBoolean,
    QgsProcessingOutputString,
    QgsProcessingParameterBoolean,
    QgsProcessingParameterField,
    QgsProcessingParameterNumber,
    QgsProcessingParameterRasterLayer,
    QgsProcessingParameterVectorDestination,
    QgsProcessingParameterVectorLayer,
)

from ..plugin.controller import ControllerLimits, enforce, regions_from_frame, validate
from ..plugin.errors import LodestarError
from ..plugin.raster_io import RasterReader
from ..plugin.vector_io import read_vector, write_vector
from .base import Group, LodestarAlgorithm
from .layer_export import layer_path
from .params import output_path


class ControllerCheckAlgorithm(LodestarAlgorithm):
    ALGORITHM_ID = "controller_check"
    DISPLAY_NAME = "Check regions (rule-based controller)"
    GROUP = Group.REASONING
    HELP = (
        "Runs the STA-CoT rule-based controller on proposed regions (polygons) over a reference raster: a region "
        "too large or too small for the image, two regions overlapping by more than the limit (intersection over "
        "the smaller one), more regions than allowed, regions together covering too much of the image, and "
        "location words (left / right / top / bottom, or north / south / east / west) that contradict where a "
        "region lies. Returns whether the regions pass, the structured errors (JSON) and the feedback a model "
        "would get at the given attempt (general, then operational, and on the last attempt a checklist with the "
        "coordinate-system reference). Optionally writes the regions that the deterministic fixer keeps."
    )

    ZONES = "ZONES"
    REFERENCE = "REFERENCE"
    LOCATION_FIELD = "LOCATION_FIELD"
    ATTEMPT = "ATTEMPT"
    MAX_ATTEMPTS = "MAX_ATTEMPTS"
    MIN_AREA = "MIN_AREA"
    MAX_AREA = "MAX_AREA"
    MAX_OVERLAP = "MAX_OVERLAP"
    MAX_REGIONS = "MAX_REGIONS"
    MAX_TOTAL = "MAX_TOTAL"
    ENFORCE = "ENFORCE"
    OUTPUT = "OUTPUT"
    VALID = "VALID"
    ERRORS = "ERRORS"
    FEEDBACK = "FEEDBACK"

    def initAlgorithm(self, config=None):  # noqa: N802 (QGIS API name)
        d = ControllerLimits()
        number = QgsProcessingParameterNumber
        zones = QgsProcessingParameterVectorLayer(self.ZONES, "Proposed regions", [QgsProcessing.TypeVectorPolygon])
        zones.setHelp("Polygons to check, e.g. a Lodestar tool's zones (zone_id, description, position, score_mean "
                      "are used when present).")
        reference = QgsProcessingParameterRasterLayer(self.REFERENCE, "Reference raster (the image)")
        reference.setHelp("The image the regions were marked on: its extent is the 100 % of the area limits and "
                          "the frame for left / right / top / bottom.")
        location = QgsProcessingParameterField(self.LOCATION_FIELD, "Field with stated locations", optional=True,
                                               parentLayerParameterName=self.ZONES)
        location.setHelp("A text field holding where the proposer said each region is ('top-left', 'north-east'); "
                         "without it the 'position' field, then the description, is used.")
        attempt = number(self.ATTEMPT, "Attempt number", number.Integer, defaultValue=1, minValue=1)
        attempt.setHelp("Which try this is: feedback is general on the first, operational on later ones, and a "
                        "checklist with the coordinate reference on the last.")
        attempts = number(self.MAX_ATTEMPTS, "Number of attempts", number.Integer, defaultValue=d.max_attempts,
                          minValue=1)
        attempts.setHelp("The attempt with this number is the last one.")
        min_area = number(self.MIN_AREA, "Smallest region (fraction of the image)", number.Double,
                          defaultValue=d.min_area_fraction, minValue=0, maxValue=1)
        min_area.setHelp("Regions below this fraction of the image are flagged as too small.")
        max_area = number(self.MAX_AREA, "Largest region (fraction of the image)", number.Double,
                          defaultValue=d.max_area_fraction, minValue=0, maxValue=1)
        max_area.setHelp("Regions above this fraction of the image are flagged as too large.")
        overlap = number(self.MAX_OVERLAP, "Largest overlap (fraction of the smaller region)", number.Double,
                         defaultValue=d.max_overlap, minValue=0.01, maxValue=1)
        overlap.setHelp("Two regions sharing more than this fraction of the smaller one are redundant (paper: 0.5).")
        regions = number(self.MAX_REGIONS, "Most regions", number.Integer, defaultValue=d.max_regions, minValue=1)
        regions.setHelp("At most this many regions per step (paper: 5).")
        total = number(self.MAX_TOTAL, "Largest total area (fraction of the image)", number.Double,
                       defaultValue=d.max_total_fraction, minValue=0.01, maxValue=1)
        total.setHelp("All regions together must cover less than this fraction (paper: 0.7).")
        fix = QgsProcessingParameterBoolean(self.ENFORCE, "Write the regions the fixer keeps", defaultValue=False)
        fix.setHelp("Drop regions that break the limits, keeping the best-scoring ones, and write them to the "
                    "output layer.")
        output = QgsProcessingParameterVectorDestination(self.OUTPUT, "Kept regions", QgsProcessing.TypeVectorPolygon,
                                                         optional=True, createByDefault=False)
        output.setHelp("The regions kept by the fixer (only written when the fixer is on).")
        for param in (zones, reference, location, attempt, attempts, min_area, max_area, overlap, regions, total,
                      fix, output):
            self.addParameter(param)
        self.addOutput(QgsProcessingOutputBoolean(self.VALID, "Regions pass"))
        self.addOutput(QgsProcessingOutputString(self.ERRORS, "Errors (JSON)"))
        self.addOutput(QgsProcessingOutputString(self.FEEDBACK, "Feedback"))

    def run(self, parameters, context, feedback, progress) -> dict:
        zones_layer = self.parameterAsVectorLayer(parameters, self.ZONES, context)
        reference = self.parameterAsRasterLayer(parameters, self.REFERENCE, context)
        if zones_layer is None or reference is None:
            raise LodestarError("Choose the proposed regions and the reference raster.")
        grid = RasterReader(layer_path(reference)).grid
        frame = read_vector(layer_path(zones_layer), crs=grid.crs)
        if "zone_id" not in frame.columns:
            frame["zone_id"] = [str(i + 1) for i in range(len(frame))]
        field = self.parameterAsString(parameters, self.LOCATION_FIELD, context)
        if field:
            frame["position"] = frame[field].fillna("").astype(str)
        limits = ControllerLimits(
            min_area_fraction=self.parameterAsDouble(parameters, self.MIN_AREA, context),
            max_area_fraction=self.parameterAsDouble(parameters, self.MAX_AREA, context),
            max_overlap=self.parameterAsDouble(parameters, self.MAX_OVERLAP, context),
            max_regions=self.parameterAsInt(parameters, self.MAX_REGIONS, context),
            max_total_fraction=self.parameterAsDouble(parameters, self.MAX_TOTAL, context),
            max_attempts=self.parameterAsInt(parameters, self.MAX_ATTEMPTS, context),
        )
        regions = regions_from_frame(frame)
        verdict = validate(regions, grid, self.parameterAsInt(parameters, self.ATTEMPT, context), limits)
        progress.log(verdict.feedback)
        outputs = {self.VALID: verdict.ok, self.FEEDBACK: verdict.feedback,
                   self.ERRORS: json.dumps(verdict.to_dict()["errors"])}
        if self.parameterAsBool(parameters, self.ENFORCE, context):
            path = output_path(self, parameters, self.OUTPUT, context, "kept_regions.gpkg")
            kept = enforce(frame, grid, limits)
            for zone_id, reason in kept.dropped.items():
                progress.log(f"Dropped {zone_id}: {reason}.")
            write_vector(kept.regions, path)
            outputs[self.OUTPUT] = path
        return outputs
