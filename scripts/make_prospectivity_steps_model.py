"""Build the graphical model resources/models/prospectivity_steps.model3 shipped with the provider.

The chain, each step a Lodestar algorithm: an alteration index -> lodestar:fuzzy_membership (fuzzy large, its
midpoint in the index's units) and a geological map -> lodestar:fuzzy_membership (favourable units) ->
lodestar:fuzzy_overlay (fuzzy gamma) -> lodestar:delineate_targets -> lodestar:prediction_area against known deposits
(success rate, ROC, prediction-area plot). The provider lists it as `lodestar:prospectivity_steps`; open it in the
Model Designer to add layers or change a step. Run: `python scripts/make_prospectivity_steps_model.py [OUT_FILE]`
(needs QGIS's Python).
"""
from __future__ import annotations

import sys
from pathlib import Path

from make_prospectivity_model import _mandatory_defaults, write_model_file

ROOT = Path(__file__).resolve().parents[1]
MODEL_FILE = ROOT / "resources" / "models" / "prospectivity_steps.model3"
MODEL_NAME = "prospectivity_steps"
HELP = (
    "Prospectivity mapping in steps: an alteration index made a fuzzy-large membership (its midpoint in the index's "
    "units), the favourable units of a geological map made a membership, the two combined by fuzzy gamma, targets "
    "delineated from the top share of the surface, and the surface validated against known deposits (success-rate "
    "curve, ROC, prediction-area plot and table). Open it in the Model Designer to add evidence layers or swap a "
    "step (weights of evidence, a trained model)."
)


def build_model():
    """The QgsProcessingModelAlgorithm of the chain (QGIS must be initialised, the Lodestar provider registered)."""
    from qgis.core import (
        QgsProcessing,
        QgsProcessingModelAlgorithm,
        QgsProcessingModelChildAlgorithm,
        QgsProcessingModelChildParameterSource,
        QgsProcessingModelOutput,
        QgsProcessingModelParameter,
        QgsProcessingParameterNumber,
        QgsProcessingParameterRasterLayer,
        QgsProcessingParameterString,
        QgsProcessingParameterVectorLayer,
    )
    from qgis.PyQt.QtCore import QPointF

    model = QgsProcessingModelAlgorithm(MODEL_NAME, "Graphical models", "models")
    help_content = {"ALG_DESC": HELP, "ALG_CREATOR": "Lodestar", "ALG_HELP_CREATOR": "Lodestar"}

    def model_input(definition, x, y, help_text):
        definition.setHelp(help_text)
        help_content[definition.name()] = help_text
        component = QgsProcessingModelParameter(definition.name())
        component.setPosition(QPointF(x, y))
        model.addModelParameter(definition, component)
        return QgsProcessingModelChildParameterSource.fromModelParameter(definition.name())

    def static(value):
        return QgsProcessingModelChildParameterSource.fromStaticValue(value)

    def output_of(child_id, key="OUTPUT"):
        return QgsProcessingModelChildParameterSource.fromChildOutput(child_id, key)

    def child(child_id, algorithm_id, description, x, y, sources, exposed=()):
        step = QgsProcessingModelChildAlgorithm(algorithm_id)
        step.setChildId(child_id)
        step.setDescription(description)
        step.setPosition(QPointF(x, y))
        for key, value in sources.items():
            step.addParameterSources(key, value if isinstance(value, list) else [value])
        for key, value in _mandatory_defaults(algorithm_id, sources).items():
            step.addParameterSources(key, [static(value)])
        outputs = {}
        for k, (key, name, description_) in enumerate(exposed):
            out = QgsProcessingModelOutput(name, description_)
            out.setChildId(child_id)
            out.setChildOutputName(key)
            out.setPosition(QPointF(x + 180 * k, y + 90))
            outputs[name] = out
        step.setModelOutputs(outputs)
        model.addChildAlgorithm(step)

    double = QgsProcessingParameterNumber.Double
    alteration = model_input(QgsProcessingParameterRasterLayer("ALTERATION", "Alteration index"), 120, 60,
                             "An alteration index raster (e.g. AlOH / sericite); high = altered.")
    midpoint = model_input(QgsProcessingParameterNumber("MIDPOINT", "Alteration midpoint (index units)", double, 1.0,
                                                        minValue=1e-9), 120, 140,
                           "The index value of membership 0.5 (fuzzy large), in the index's own units.")
    geology = model_input(QgsProcessingParameterRasterLayer("GEOLOGY", "Geological map (unit codes)"), 400, 60,
                          "A raster of unit codes with its legend <name>_legend.csv beside it.")
    units = model_input(QgsProcessingParameterString("UNITS", "Favourable units", "porphyry"), 400, 140,
                        "Favourable units: legend names, lithology words or codes, separated by commas.")
    gamma = model_input(QgsProcessingParameterNumber("GAMMA", "Fuzzy gamma", double, 0.8, minValue=0.0, maxValue=1.0),
                        680, 60, "0: fuzzy product, 1: fuzzy sum.")
    share = model_input(QgsProcessingParameterNumber("AREA_SHARE", "Target area share", double, 0.05,
                                                     minValue=0.001, maxValue=1.0), 680, 140,
                        "The share of the area made into targets (0.05: the best 5 %).")
    deposits = model_input(QgsProcessingParameterVectorLayer("DEPOSITS", "Known deposits",
                                                             [QgsProcessing.TypeVectorPoint]), 960, 60,
                           "Points of known deposits: the ground truth of the validation.")
    child("alteration_membership", "lodestar:fuzzy_membership", "Alteration: fuzzy large", 120, 280,
          {"INPUT": alteration, "MEMBERSHIP": static(0), "MIDPOINT": midpoint, "SPREAD": static(10.0),
           "OUTPUT": static("TEMPORARY_OUTPUT")})
    child("unit_membership", "lodestar:fuzzy_membership", "Geology: favourable units", 400, 280,
          {"INPUT": geology, "MEMBERSHIP": static(4), "UNITS": units, "OUTSIDE": static(0.1),
           "OUTPUT": static("TEMPORARY_OUTPUT")})
    child("overlay", "lodestar:fuzzy_overlay", "Fuzzy gamma overlay", 260, 420,
          {"INPUT": [output_of("alteration_membership"), output_of("unit_membership")], "METHOD": static(1),
           "GAMMA": gamma}, (("OUTPUT", "favourability", "Favourability"),))
    child("targets", "lodestar:delineate_targets", "Delineate targets", 160, 580,
          {"INPUT": output_of("overlay"), "AREA_SHARE": share, "DEPOSITS": deposits},
          (("OUTPUT", "targets", "Targets"),))
    child("validation", "lodestar:prediction_area", "Success rate, ROC, prediction-area", 520, 580,
          {"INPUT": output_of("overlay"), "DEPOSITS": deposits},
          (("OUTPUT_TABLE", "curves_table", "Curves table"), ("OUTPUT_PLOT", "curves_plot", "Curves plot")))
    model.setHelpContent(help_content)
    return model


def main(out=MODEL_FILE) -> Path:
    return write_model_file(build_model, out)


if __name__ == "__main__":
    print(main(Path(sys.argv[1]) if len(sys.argv) > 1 else MODEL_FILE))
