"""lodestar:fuzzy_membership - one evidence raster as a 0-1 fuzzy membership, its parameters in the layer's own
units (favourability.evidence.membership_map, as the analysis makes each layer's membership)."""
from __future__ import annotations

from qgis.core import (
    QgsProcessingParameterEnum,
    QgsProcessingParameterNumber,
    QgsProcessingParameterRasterLayer,
    QgsProcessingParameterString,
)

from ..plugin.errors import LodestarError
from .base import Group, LodestarAlgorithm
from .mpm_inputs import raster_set, write_raster
from .params import number_parameter, output_path, range_problem, raster_destination

MEMBERSHIPS = ("large", "small", "linear", "gaussian", "units")
"""The options of MEMBERSHIP, by index (qgis_process takes the index)."""
TRANSFORMS = ("none", "percentile_rank", "log_percentile")
LABELS = ("fuzzy large: 1 / (1 + (x / midpoint) ^ -spread)", "fuzzy small: 1 / (1 + (x / midpoint) ^ spread)",
          "fuzzy linear: 0 at low, 1 at high", "fuzzy Gaussian: exp(-spread (x - midpoint)^2)",
          "favourable units of a categorical map (1; others: OUTSIDE)")


class FuzzyMembershipAlgorithm(LodestarAlgorithm):
    ALGORITHM_ID = "fuzzy_membership"
    DISPLAY_NAME = "Fuzzy membership"
    GROUP = Group.MAPPING
    HELP = (
        "Turns one evidence raster into a 0-1 fuzzy membership (float32 GeoTIFF, nodata -9999), with the same core "
        "function the analysis uses for each layer.\n"
        "MEMBERSHIP (by index in qgis_process): 0 fuzzy large 1 / (1 + (x / MIDPOINT)^-SPREAD) (0.5 at the "
        "midpoint, for favourable-high layers), 1 fuzzy small (favourable-low: distances), 2 fuzzy linear (0 at LOW, "
        "1 at HIGH; decreasing when LOW > HIGH), 3 fuzzy Gaussian exp(-SPREAD (x - MIDPOINT)^2), 4 favourable units "
        "of a categorical map (UNITS: names, words or codes of its legend; other units score OUTSIDE).\n"
        "Parameters are in the layer's own units (ppm, metres, nT, index values), unless TRANSFORM first ranks the "
        "values (0-1 percentile rank, or log10 stretched between the 2nd and 98th percentiles)."
    )

    INPUT = "INPUT"
    MEMBERSHIP = "MEMBERSHIP"
    TRANSFORM = "TRANSFORM"
    MIDPOINT = "MIDPOINT"
    SPREAD = "SPREAD"
    LOW = "LOW"
    HIGH = "HIGH"
    UNITS = "UNITS"
    OUTSIDE = "OUTSIDE"
    OUTPUT = "OUTPUT"

    def initAlgorithm(self, config=None):  # noqa: N802 (QGIS API name)
        layer = QgsProcessingParameterRasterLayer(self.INPUT, "Evidence raster")
        layer.setHelp("An evidence raster: an index, a geochemical grid, a distance raster, or a categorical map "
                      "(unit codes; its legend <name>_legend.csv beside the file names the units).")
        membership = QgsProcessingParameterEnum(self.MEMBERSHIP, "Membership", options=list(LABELS), defaultValue=0)
        membership.setHelp("How values become membership (qgis_process: the index, 0 to 4).")
        transform = QgsProcessingParameterEnum(self.TRANSFORM, "Transform the values first",
                                               options=["none: the layer's own units", "percentile rank (0-1)",
                                                        "log10, 2-98 percentile stretch (0-1)"], defaultValue=0)
        transform.setHelp("none keeps the layer's units (the parameters below are then in those units).")
        midpoint = QgsProcessingParameterNumber(self.MIDPOINT, "Midpoint", QgsProcessingParameterNumber.Double,
                                                optional=True)
        midpoint.setHelp("Fuzzy large / small: the value of membership 0.5 (positive); Gaussian: the value of "
                         "membership 1.")
        spread = number_parameter(self.SPREAD, "Spread", QgsProcessingParameterNumber.Double, None, 0.0, None,
                                  "Fuzzy large / small: the steepness (default 5); Gaussian: per squared unit "
                                  "(default 0.1).", optional=True)
        low = QgsProcessingParameterNumber(self.LOW, "Low (membership 0)", QgsProcessingParameterNumber.Double,
                                           optional=True)
        low.setHelp("Fuzzy linear: the value of membership 0.")
        high = QgsProcessingParameterNumber(self.HIGH, "High (membership 1)", QgsProcessingParameterNumber.Double,
                                            optional=True)
        high.setHelp("Fuzzy linear: the value of membership 1.")
        units = QgsProcessingParameterString(self.UNITS, "Favourable units", optional=True)
        units.setHelp("Favourable units: legend names, words (lithology synonyms count: 'porphyry', 'carbonate') or "
                      "codes, separated by commas.")
        outside = number_parameter(self.OUTSIDE, "Membership of the other units", QgsProcessingParameterNumber.Double,
                                   0.0, 0.0, 1.0, "The membership of units not named favourable (0 to 1).")
        output = raster_destination(self.OUTPUT, "Membership", "The 0-1 membership raster (nodata outside the "
                                    "layer's data).")
        for param in (layer, membership, transform, midpoint, spread, low, high, units, outside, output):
            self.addParameter(param)

    def checkParameterValues(self, parameters, context):  # noqa: N802 (QGIS API name)
        problem = range_problem(self, parameters)
        return (False, problem) if problem else super().checkParameterValues(parameters, context)

    def run(self, parameters, context, feedback, progress) -> dict:
        from ..plugin.favourability.evidence import membership_map

        layer = self.parameterAsRasterLayer(parameters, self.INPUT, context)
        if layer is None:
            raise LodestarError("Choose the evidence raster.")
        rasters = raster_set([layer], progress)
        name = rasters.layers[0].name
        spec = self.evidence_spec(parameters, context, name, rasters.layers[0].role)
        values = membership_map(rasters, spec)
        progress.log(f"{name}: {spec.transformation_text}, {spec.membership_text}; "
                     f"mean membership {float(values.mean()):.3f} over {values.count():,} cells.")
        path = output_path(self, parameters, self.OUTPUT, context, "membership.tif")
        write_raster(values, rasters.grid, path, f"membership of {name} (0-1): {spec.membership_text}",
                     spec.membership_text, [spec])
        return {self.OUTPUT: path}

    def evidence_spec(self, parameters, context, name: str, role: str):
        """The EvidenceSpec the parameters describe."""
        from ..plugin.favourability.evidence import EvidenceSpec

        membership = MEMBERSHIPS[self.parameterAsEnum(parameters, self.MEMBERSHIP, context)]
        given = {key.lower(): self.parameterAsDouble(parameters, key, context)
                 for key in (self.MIDPOINT, self.SPREAD, self.LOW, self.HIGH)
                 if parameters.get(key) not in (None, "")}
        if membership == "units":
            units = [u.strip() for u in self.parameterAsString(parameters, self.UNITS, context).split(",")
                     if u.strip()]
            if not units:
                raise LodestarError("Favourable units: name at least one unit (a legend name, a word or a code).")
            params = {"units": units, "outside": self.parameterAsDouble(parameters, self.OUTSIDE, context)}
            return EvidenceSpec(name, role, "categorical", "units", "identity", params)
        needed = {"large": ("midpoint",), "small": ("midpoint",), "linear": ("low", "high"),
                  "gaussian": ("midpoint",)}[membership]
        missing = [key.upper() for key in needed if key not in given]
        if missing:
            raise LodestarError(f"The fuzzy {membership} membership needs {' and '.join(missing)} (in the layer's "
                                "units).")
        keep = needed + (("spread",) if membership != "linear" else ())
        transform = TRANSFORMS[self.parameterAsEnum(parameters, self.TRANSFORM, context)]
        return EvidenceSpec(name, role, "index", transform, membership, {k: given[k] for k in keep if k in given})
