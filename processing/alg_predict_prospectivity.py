"""lodestar:predict_prospectivity - a model written by 'Train prospectivity model' applied to evidence layers on a
grid: a probability raster."""
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
from .mpm_inputs import measured_layers, raster_set, write_raster
from .params import output_path, raster_destination

DECISION = ("logistic", "boosting")
"""Models whose score is a logit (turned into a probability by the logistic function)."""


class PredictProspectivityAlgorithm(LodestarAlgorithm):
    ALGORITHM_ID = "predict_prospectivity"
    DISPLAY_NAME = "Predict prospectivity (apply a trained model)"
    GROUP = Group.MAPPING
    HELP = (
        "Applies a model written by 'Train prospectivity model' to evidence layers: the same layers, in the same "
        "order and units, here or over another area. The grid is the layers' analysis grid (the first projected "
        "raster's CRS, their common extent, the finest resolution). Writes the probability of a deposit at each "
        "cell: weights of evidence's posterior per unit cell; for the other models the probability of the model "
        "fitted on deposits against a background sample weighted to equal totals (a relative score: compare cells, "
        "not areas); for the ensemble the mean of its models' ranks, 0-1 (also relative). The layers derived at "
        "training (fault density, distance to unit contacts) are derived again from the layers given. "
        "Cells where no layer has data are nodata.\n"
        "Only Lodestar model files are read: a file without the Lodestar header, of another format, or altered after "
        "it was written is refused before it is loaded (loading a model file runs the code it holds)."
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
        output = raster_destination(self.OUTPUT, "Probability", "The probability of a deposit at each cell.")
        for param in (layers, model, output):
            self.addParameter(param)
        self.addOutput(QgsProcessingOutputString(self.METHOD, "The model's method"))

    def run(self, parameters, context, feedback, progress) -> dict:
        from ..plugin.favourability.model_file import load_model
        from ..plugin.favourability.models import LABELS

        header, model = load_model(self.parameterAsFile(parameters, self.MODEL, context))
        expected = header["layers"]
        given = [e for e in expected if not e.get("source")]
        rasters = raster_set(self.parameterAsLayerList(parameters, self.INPUT, context), progress)
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
                     f"probability of a deposit: {LABELS[model.method]}", LABELS[model.method])
        return {self.OUTPUT: path, self.METHOD: model.method}
