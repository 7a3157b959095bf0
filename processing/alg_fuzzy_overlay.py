"""lodestar:fuzzy_overlay - several 0-1 memberships combined into one favourability surface: weighted overlay or
fuzzy AND / OR / product / sum / gamma, or the weighted mean of ranks (favourability.overlay.favourability_surface,
as the analysis combines)."""
from __future__ import annotations

from qgis.core import (
    QgsProcessing,
    QgsProcessingParameterEnum,
    QgsProcessingParameterMultipleLayers,
    QgsProcessingParameterNumber,
    QgsProcessingParameterString,
)

from ..plugin.errors import LodestarError
from .base import Group, LodestarAlgorithm
from .mpm_inputs import raster_set, write_raster
from .params import number_parameter, output_path, range_problem, raster_destination

METHODS = ("weighted", "gamma", "and", "or", "product", "sum", "rank")
"""The options of METHOD, by index (favourability.overlay.METHODS; new ones last, so saved indices keep their
meaning)."""


class FuzzyOverlayAlgorithm(LodestarAlgorithm):
    ALGORITHM_ID = "fuzzy_overlay"
    DISPLAY_NAME = "Fuzzy overlay (weighted, AND, OR, product, sum, gamma, ranks)"
    GROUP = Group.MAPPING
    HELP = (
        "Combines 0-1 membership rasters (e.g. from 'Fuzzy membership') into one favourability surface (float32 "
        "GeoTIFF, 0-1), with the core function the analysis uses. Layers may differ in grid: they are read onto one "
        "analysis grid (the first layer's CRS, the common extent, the finest resolution).\n"
        "METHOD (by index in qgis_process): 0 weighted overlay (weighted mean of the layers with data at a cell), "
        "1 fuzzy gamma (sum^GAMMA x product^(1 - GAMMA)), 2 fuzzy AND (least), 3 fuzzy OR (greatest), 4 fuzzy "
        "product, 5 fuzzy sum, 6 weighted mean of ranks (each membership's percentile rank over the cells where it "
        "has data, then the weighted mean: a layer counts by its order and weight alone; the analysis's "
        "knowledge-driven surface). In gamma, product and sum the weights are exponents scaled to a mean of 1 (equal "
        "weights: the plain operator); AND and OR use the layers of positive weight as they are.\n"
        "WEIGHTS: one number per layer in the order given, separated by commas (empty: equal weights); a weight of "
        "0 leaves a layer out."
    )

    INPUT = "INPUT"
    WEIGHTS = "WEIGHTS"
    METHOD = "METHOD"
    GAMMA = "GAMMA"
    OUTPUT = "OUTPUT"

    def initAlgorithm(self, config=None):  # noqa: N802 (QGIS API name)
        layers = QgsProcessingParameterMultipleLayers(self.INPUT, "Membership rasters", QgsProcessing.TypeRaster)
        layers.setHelp("0-1 membership rasters, one per evidence layer.")
        weights = QgsProcessingParameterString(self.WEIGHTS, "Weights (comma-separated, in layer order)",
                                               optional=True)
        weights.setHelp("One weight (zero or positive) per membership raster, in the order given; empty: equal.")
        method = QgsProcessingParameterEnum(self.METHOD, "Combination", options=[
            "weighted overlay", "fuzzy gamma", "fuzzy AND", "fuzzy OR", "fuzzy product", "fuzzy sum",
            "weighted mean of ranks"], defaultValue=0)
        method.setHelp("How memberships combine (qgis_process: the index, 0 to 6).")
        gamma = number_parameter(self.GAMMA, "Gamma", QgsProcessingParameterNumber.Double, 0.8, 0.0, 1.0,
                                 "Fuzzy gamma only: 0 is the fuzzy product, 1 the fuzzy sum.")
        output = raster_destination(self.OUTPUT, "Favourability", "The combined 0-1 favourability surface.")
        for param in (layers, weights, method, gamma, output):
            self.addParameter(param)

    def checkParameterValues(self, parameters, context):  # noqa: N802 (QGIS API name)
        problem = range_problem(self, parameters)
        return (False, problem) if problem else super().checkParameterValues(parameters, context)

    def run(self, parameters, context, feedback, progress) -> dict:
        from ..plugin.favourability.evidence import EvidenceSpec
        from ..plugin.favourability.overlay import METHOD_LABELS, favourability_surface

        layers = self.parameterAsLayerList(parameters, self.INPUT, context)
        rasters = raster_set(layers, progress, memberships=True)
        names = [spec.name for spec in rasters.layers]
        weights = parse_weights(self.parameterAsString(parameters, self.WEIGHTS, context), len(names))
        specs = [EvidenceSpec(name, spec.role, "membership", "none", "identity", {}, weight)
                 for name, spec, weight in zip(names, rasters.layers, weights)]
        maps = {name: rasters.read(name)[0] for name in names}
        method = METHODS[self.parameterAsEnum(parameters, self.METHOD, context)]
        gamma = self.parameterAsDouble(parameters, self.GAMMA, context)
        surface = favourability_surface(rasters, specs, method, gamma, maps=maps)
        progress.log(f"{METHOD_LABELS[method]}" + (f" (gamma {gamma:g})" if method == "gamma" else "") + " of "
                     + ", ".join(f"{s.layer} (weight {s.weight:g})" for s in specs) + ".")
        path = output_path(self, parameters, self.OUTPUT, context, "favourability.tif")
        write_raster(surface.values, surface.grid, path, f"favourability (0-1): {METHOD_LABELS[method]}",
                     method + (f" (gamma {gamma:g})" if method == "gamma" else ""), specs)
        return {self.OUTPUT: path}


def parse_weights(text: str, count: int) -> list[float]:
    """'1, 2, 0.5' -> [1.0, 2.0, 0.5] (one per layer); empty -> equal weights."""
    parts = [p.strip() for p in (text or "").replace(";", ",").split(",") if p.strip()]
    if not parts:
        return [1.0] * count
    if len(parts) != count:
        raise LodestarError(f"Give one weight per membership raster: {count} rasters, {len(parts)} weights.")
    try:
        return [float(p) for p in parts]
    except ValueError as exc:
        raise LodestarError(f"The weights must be numbers separated by commas, not {text!r}.") from exc
