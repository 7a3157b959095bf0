"""lodestar:predict_prospectivity - a model written by 'Train prospectivity model' applied to evidence layers on a
grid: a prediction raster."""
from __future__ import annotations

import numpy as np
from qgis.core import (
    QgsProcessing,
    QgsProcessingOutputString,
    QgsProcessingParameterFile,
    QgsProcessingParameterMultipleLayers,
)

from ..plugin.errors import LodestarError
from .base import Group, LodestarAlgorithm
from .mpm_inputs import layer_specs, measured_layers, raster_set, write_raster
from .params import output_path, raster_destination

DECISION = ("logistic", "boosting")
"""Models whose score is a logit (turned into a probability by the logistic function)."""
RELATIVE = "relative favourability (0-1; compare cells, not areas: not a deposit probability)"
WHAT_IT_IS = {"wofe": "posterior probability of a deposit per unit cell"}
"""What the output's values are, by the model's method (the band's description)."""


class PredictProspectivityAlgorithm(LodestarAlgorithm):
    ALGORITHM_ID = "predict_prospectivity"
    DISPLAY_NAME = "Predict prospectivity (apply a trained model)"
    GROUP = Group.MAPPING
    HELP = (
        "Applies a model written by 'Train prospectivity model' to evidence layers: the same layers, in the same "
        "order and units, here or over another area. The grid is the layers' analysis grid (the first projected "
        "raster's CRS, their common extent, the finest resolution). Layers named as the model's but given in another "
        "order are read in its order; layers named otherwise are read in the order given, with a warning saying which "
        "is read as which. Writes at each cell weights of evidence's posterior probability per unit cell; for the "
        "other models the probability of the model fitted on deposits against a background sample weighted to equal "
        "totals (a relative favourability: compare cells, not areas); for the ensemble the mean of its models' "
        "ranks, 0-1 (also relative). The layers derived at training (fault density, distance to unit contacts) are "
        "derived again from the layers given. "
        "Cells where no layer has data are nodata.\n"
        "Only Lodestar model files are read, and only as data (the model's parameters and numeric arrays, checked "
        "one by one; nothing in the file is run): any other file, a damaged one, or one of an earlier format (which "
        "held Python objects) is refused with the reason; train the model again to get one of the current format."
    )

    INPUT = "INPUT"
    MODEL = "MODEL"
    OUTPUT = "OUTPUT"
    METHOD = "METHOD"

    def initAlgorithm(self, config=None):  # noqa: N802 (QGIS API name)
        layers = QgsProcessingParameterMultipleLayers(self.INPUT, "Evidence layers", QgsProcessing.TypeMapLayer)
        layers.setHelp("The layers the model was trained on, in the same order (the model's header lists them).")
        model = QgsProcessingParameterFile(self.MODEL, "Model file", extension="pkl")
        model.setHelp("A model file written by 'Train prospectivity model'.")
        output = raster_destination(self.OUTPUT, "Prediction", "Weights of evidence: the posterior probability of a "
                                    "deposit per unit cell; the other models: a relative favourability, 0-1.")
        for param in (layers, model, output):
            self.addParameter(param)
        self.addOutput(QgsProcessingOutputString(self.METHOD, "The model's method"))

    def run(self, parameters, context, feedback, progress) -> dict:
        from ..plugin.favourability.model_file import load_model
        from ..plugin.favourability.models import LABELS

        header, model = load_model(self.parameterAsFile(parameters, self.MODEL, context))
        expected = header["layers"]
        given = [e for e in expected if not e.get("source")]
        chosen = self.parameterAsLayerList(parameters, self.INPUT, context)
        chosen, note, mismatch = in_model_order(chosen, [spec.name for spec in layer_specs(chosen)],
                                                [e["name"] for e in given])
        if note:
            progress.log(note)
        if mismatch:
            feedback.pushWarning(mismatch)
        rasters = raster_set(chosen, progress)
        if len(rasters.layers) != len(given):
            raise LodestarError(f"The model expects {len(given)} layers ({', '.join(e['name'] for e in given)}), "
                                f"in that order; {len(rasters.layers)} were given.")
        categorical = {spec.name for spec, e in zip(rasters.layers, given) if e["categorical"]}
        layers = measured_layers(rasters, categorical, derived=True)
        if len(layers) != len(expected):
            raise LodestarError(f"The model was trained on {len(expected)} columns (the layers and those derived from "
                                f"them: {', '.join(e['name'] for e in expected)}); these layers give {len(layers)}: "
                                "give the layers the model was trained on, in their order and CRS.")
        for layer, e in zip(layers, expected):
            if layer.categorical != e["categorical"] or layer.units != e["units"]:
                raise LodestarError(f"{layer.name} is measured as {layer.kind} ({layer.units}), but the model's "
                                    f"layer {e['name']} was {e['kind']} ({e['units']}): give the layers in the "
                                    "model's order.")
        valid = np.logical_or.reduce([~np.ma.getmaskarray(layer.values) for layer in layers])
        x = np.column_stack([layer.values.filled(np.nan)[valid] for layer in layers])
        score = model.predict(x)
        if model.method in DECISION:
            score = 1.0 / (1.0 + np.exp(-score))
        out = np.zeros(valid.shape, dtype="float32")
        out[valid] = score
        progress.log(f"{LABELS[model.method]} (Lodestar {header.get('lodestar') or '?'}, written "
                     f"{header.get('written')}, out-of-fold AUC {header.get('out_of_fold_auc', float('nan')):.3f}) "
                     f"applied to {int(valid.sum()):,} cells.")
        path = output_path(self, parameters, self.OUTPUT, context, "probability.tif")
        write_raster(np.ma.masked_array(out, mask=~valid), rasters.grid, path,
                     f"{WHAT_IT_IS.get(model.method, RELATIVE)}: {LABELS[model.method]}", LABELS[model.method])
        return {self.OUTPUT: path, self.METHOD: model.method}


def in_model_order(layers: list, names: list, wanted: list) -> tuple[list, str, str]:
    """(the layers in the model's order, a note when they were reordered, a warning when their names are not the
    model's): layers named as the model's but given in another order are put in its order; layers named otherwise
    are read in the order given, each as the model's layer in its place, and the warning says which as which."""
    if names == wanted or len(names) != len(wanted):
        return layers, "", ""
    if sorted(names) == sorted(wanted):
        return ([layers[names.index(name)] for name in wanted],
                f"The layers were given in another order than the model's; read in its order: {', '.join(wanted)}.",
                "")
    pairs = ", ".join(f"{given} as {name}" for given, name in zip(names, wanted) if given != name)
    return layers, "", (f"The model was trained on {', '.join(wanted)}; the layers given are named otherwise and are "
                        f"read in the order given: {pairs}. If that is not meant, give the model's layers in its "
                        "order (the same evidence over another area may carry other names).")
