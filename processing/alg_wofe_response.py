"""lodestar:wofe_response - the weights-of-evidence response: posterior probability, its standard deviation and
the studentised confidence (posterior / its standard deviation), with the conditional-independence test."""
from __future__ import annotations

import numpy as np
from qgis.core import QgsProcessingOutputNumber

from ..plugin.files import OutputSet
from . import wofe_params as wp
from .base import Group, LodestarAlgorithm
from .mpm_inputs import write_raster
from .params import output_path, range_problem, raster_destination


class WofeResponseAlgorithm(LodestarAlgorithm):
    ALGORITHM_ID = "wofe_response"
    DISPLAY_NAME = "Weights-of-evidence response (posterior, standard deviation, confidence)"
    GROUP = Group.MAPPING
    HELP = (
        "The response of the weights of the evidence layers, weighed as in 'Weights of evidence' (give the same "
        "layers and settings): the posterior probability of a deposit per unit cell (prior logit plus each layer's "
        "weight; a layer weighs 0 where it has no data), its standard deviation (the weights' variances and the "
        "missing data, Bonham-Carter 1994 p. 320-322) and the confidence, posterior / standard deviation "
        "(studentised: above about 1.5-2 the posterior is well above 0).\n" + wp.WEIGHING_HELP + "\n"
        "Also reports the overall conditional-independence test: observed / predicted deposits (below 0.85 the layers "
        "overlap in what they say) and the Agterberg-Cheng z; and the pairwise test: for each pair of layers, a "
        "chi-square of the deposits counted by the two layers' classes (Bonham-Carter 1994), the pairs dependent at "
        "the 0.05 level over all pairs (Holm's correction) named in the log and counted."
    )

    OUTPUT_POSTERIOR = "OUTPUT_POSTERIOR"
    OUTPUT_STD = "OUTPUT_STD"
    OUTPUT_CONFIDENCE = "OUTPUT_CONFIDENCE"
    PRIOR = "PRIOR"
    CI_RATIO = "CI_RATIO"
    CI_Z = "CI_Z"
    CI_DEPENDENT_PAIRS = "CI_DEPENDENT_PAIRS"

    def initAlgorithm(self, config=None):  # noqa: N802 (QGIS API name)
        wp.add_parameters(self)
        for key, label, text in (
                (self.OUTPUT_POSTERIOR, "Posterior probability", "Posterior probability of a deposit per unit cell."),
                (self.OUTPUT_STD, "Posterior standard deviation", "Its standard deviation (weights, missing data)."),
                (self.OUTPUT_CONFIDENCE, "Confidence (studentised posterior)", "Posterior / standard deviation.")):
            self.addParameter(raster_destination(key, label, text))
        for key, label in ((self.PRIOR, "Prior probability per unit cell"),
                           (self.CI_RATIO, "Conditional independence: observed / predicted deposits"),
                           (self.CI_Z, "Conditional independence: Agterberg-Cheng z"),
                           (self.CI_DEPENDENT_PAIRS, "Pairwise conditional independence: pairs dependent (Holm, "
                                                     "0.05)")):
            self.addOutput(QgsProcessingOutputNumber(key, label))

    def checkParameterValues(self, parameters, context):  # noqa: N802 (QGIS API name)
        problem = range_problem(self, parameters)
        return (False, problem) if problem else super().checkParameterValues(parameters, context)

    def run(self, parameters, context, feedback, progress) -> dict:
        from ..plugin.favourability.wofe import conditional_independence, pairwise_line, posterior

        weighed = wp.weigh(self, parameters, context, progress)
        model, x = weighed.model, weighed.x
        for line in weighed.log + [model.describe(j) for j in range(len(weighed.layers))]:
            progress.log(line)
        logit, variance, _ = model.evidence(x)
        probability, weights_variance = posterior(logit, variance, model.n_deposits)
        sd = model.posterior_sd(x)
        confidence = np.divide(probability, sd, out=np.zeros_like(probability), where=sd > 0)
        ci = conditional_independence(probability, weights_variance, model.conditions(x), weighed.cell_units,
                                      model.n_deposits)
        progress.log(f"Conditional independence: {ci['observed']:g} deposits observed, {ci['predicted']:.2f} "
                     f"predicted, ratio {ci['ratio']:.2f}, z {ci['z']:.2f}"
                     + (" (doubtful: the layers overlap in what they say)." if ci["doubtful"] else "."))
        pairs = model.pairwise(x, weighed.deposits)
        progress.log(pairwise_line(pairs))
        result = {}
        with OutputSet() as staged:  # all three written, or none
            for key, values, name, description in (
                    (self.OUTPUT_POSTERIOR, probability, "posterior.tif", "posterior probability per unit cell"),
                    (self.OUTPUT_STD, sd, "posterior_std.tif", "posterior probability standard deviation"),
                    (self.OUTPUT_CONFIDENCE, confidence, "confidence.tif", "posterior / its standard deviation")):
                result[key] = output_path(self, parameters, key, context, name)
                write_raster(wp.on_grid(values, weighed.valid), weighed.grid, staged.path(result[key]), description,
                             "weights of evidence")
        prior = 1.0 / (1.0 + np.exp(-model.prior))
        return {**result, self.PRIOR: float(prior), self.CI_RATIO: float(ci["ratio"]), self.CI_Z: float(ci["z"]),
                self.CI_DEPENDENT_PAIRS: sum(p["dependent"] for p in pairs)}
