"""lodestar:train_prospectivity_model - the models fitted on known deposits (weights of evidence, logistic
regression, random forest, gradient boosting, or the best of them) with spatial block cross-validation
(favourability.calibration.calibrate, as the analysis fits them); writes the fitted model and the comparison."""
from __future__ import annotations

from qgis.core import (
    QgsProcessing,
    QgsProcessingOutputNumber,
    QgsProcessingOutputString,
    QgsProcessingParameterEnum,
    QgsProcessingParameterMultipleLayers,
    QgsProcessingParameterString,
    QgsProcessingParameterVectorLayer,
)

from ..plugin.csv_table import write_csv
from ..plugin.errors import LodestarError
from ..plugin.files import OutputSet
from .base import Group, LodestarAlgorithm
from .mapping_params import cross_validation_inputs, cross_validation_parameters
from .mpm_inputs import deposit_points, measured_layers, parse_pairs, raster_set, write_raster
from .params import file_destination, output_path, range_problem, raster_destination

METHODS = ("wofe", "logistic", "forest", "boosting", "best")
"""The options of METHOD, by index (calibration.CHOICES)."""
COMPARISON_COLUMNS = ("surface", "basis", "auc", "capture_2", "capture_5", "capture_10", "capture_20",
                      "pa_area_share", "pa_deposit_share", "deposits", "seconds", "parameters")


class TrainProspectivityModelAlgorithm(LodestarAlgorithm):
    ALGORITHM_ID = "train_prospectivity_model"
    DISPLAY_NAME = "Train prospectivity model (spatial cross-validation)"
    GROUP = Group.MAPPING
    HELP = (
        "Fits a prospectivity model on known deposits with the core the analysis uses. Evidence is measured in its "
        "own units (values, unit codes, distances to fault lines in metres), with fault density (2 and 5 km) and the "
        "distance to unit contacts derived from them. METHOD (by index in qgis_process): 0 weights of evidence, 1 "
        "logistic regression, 2 random forest, 3 gradient boosting, 4 best (all four and their ensemble, the mean of "
        "their ranks; the ensemble kept unless the model of highest out-of-fold AUC also beats it in enough folds "
        "for a sign test at 5 %, all five of 5; with fewer than 5 folds holding deposits the ensemble is always "
        "kept).\n"
        "Each model is scored out of fold on spatial blocks (FOLDS folds of blocks of BLOCK_SIZE_M metres; empty: "
        "10 km, or an eighth of the extent's shorter side when that is smaller), its hyperparameters chosen inside "
        "the training folds, beside the equal-weight mean of the ordered input layers' ranks (each from its "
        "unfavourable to its favourable side; no deposit data), scored on the same cells. Writes the model "
        "fitted on every deposit (a Lodestar model file: a header with the format, the plugin version, the layers it "
        "expects and their units, the method, the scores and a checksum, then the model as parameters and numeric "
        "arrays, no code; 'Predict prospectivity' "
        "applies it and refuses any other file), the comparison table (out-of-fold AUC, deposits captured in the top "
        "2 / 5 / 10 / 20 % of the area, prediction-area crossing, seconds per model), the full fit's favourability "
        "surface (0-1: the share of the study area scoring lower) and every model's out-of-fold surface (OUTPUT_CV, "
        "one band per model)."
    )

    INPUT = "INPUT"
    DEPOSITS = "DEPOSITS"
    METHOD = "METHOD"
    CATEGORICAL = "CATEGORICAL"
    THRESHOLDS = "THRESHOLDS"
    OUTPUT_MODEL = "OUTPUT_MODEL"
    OUTPUT_TABLE = "OUTPUT_TABLE"
    OUTPUT = "OUTPUT"
    OUTPUT_CV = "OUTPUT_CV"
    AUC = "AUC"
    CHOSEN = "CHOSEN"

    def initAlgorithm(self, config=None):  # noqa: N802 (QGIS API name)
        layers = QgsProcessingParameterMultipleLayers(self.INPUT, "Evidence layers", QgsProcessing.TypeMapLayer)
        layers.setHelp("Evidence rasters in their own units, fault lines (distances), unit maps.")
        deposits = QgsProcessingParameterVectorLayer(self.DEPOSITS, "Known deposits (training points)",
                                                     [QgsProcessing.TypeVectorPoint])
        deposits.setHelp("At least 2 known deposits inside the study area.")
        method = QgsProcessingParameterEnum(self.METHOD, "Model", options=[
            "weights of evidence", "logistic regression", "random forest", "gradient boosting",
            "best out of fold"], defaultValue=0)
        method.setHelp("The model to fit (qgis_process: the index, 0 to 4).")
        categorical = QgsProcessingParameterString(self.CATEGORICAL, "Unit maps (layer names, ';')", optional=True)
        categorical.setHelp("Rasters of unit codes to treat as categorical besides those with a legend beside their "
                            "file or a geological-map role.")
        thresholds = QgsProcessingParameterString(self.THRESHOLDS, "Weights-of-evidence thresholds", optional=True)
        thresholds.setHelp("'layer name=value' separated by ';': a cut-off in the layer's units instead of the "
                           "maximum studentised contrast (weights of evidence only).")
        block, folds, seed = cross_validation_parameters(advanced=False)
        model = file_destination(self.OUTPUT_MODEL, "Model file", "Lodestar model (*.pkl)",
                                 "The fitted model with its provenance header.")
        table = file_destination(self.OUTPUT_TABLE, "Comparison table", "CSV files (*.csv)",
                                 "One row per model scored out of fold on the same cells.")
        surface = raster_destination(self.OUTPUT, "Favourability (full fit)", "The model fitted on every deposit, "
                                     "as 0-1 favourability over the study area.")
        cv = raster_destination(self.OUTPUT_CV, "Out-of-fold favourability, one band per model",
                                "Each model's out-of-fold surface (0-1, every cell predicted by models fitted on the "
                                "other folds; band descriptions name the models, in the comparison table's order): "
                                "where the models agree and where they part.")
        for param in (layers, deposits, method, categorical, thresholds, folds, block, seed, model, table, surface, cv):
            self.addParameter(param)
        self.addOutput(QgsProcessingOutputNumber(self.AUC, "Out-of-fold AUC of the chosen model"))
        self.addOutput(QgsProcessingOutputString(self.CHOSEN, "Chosen model"))

    def checkParameterValues(self, parameters, context):  # noqa: N802 (QGIS API name)
        problem = range_problem(self, parameters)
        return (False, problem) if problem else super().checkParameterValues(parameters, context)

    def run(self, parameters, context, feedback, progress) -> dict:
        from ..plugin.favourability.baseline import ORDERED_RANK_MEAN, ordered_rank_mean
        from ..plugin.favourability.calibration import calibrate
        from ..plugin.favourability.models import LABELS

        rasters = raster_set(self.parameterAsLayerList(parameters, self.INPUT, context), progress)
        names = [spec.name for spec in rasters.layers]
        categorical = {n.strip() for n in self.parameterAsString(parameters, self.CATEGORICAL, context).split(";")
                       if n.strip()}
        if categorical - set(names):
            raise LodestarError(f"Unit maps: no layer named {', '.join(sorted(categorical - set(names)))}; layers: "
                                f"{', '.join(names)}.")
        layers = measured_layers(rasters, categorical, derived=True)
        log = list(rasters.log)
        xy = deposit_points(self, parameters, self.DEPOSITS, context, rasters.grid.crs, log)
        method = METHODS[self.parameterAsEnum(parameters, self.METHOD, context)]
        plain = ordered_rank_mean(layers)
        fit = calibrate(layers, rasters.grid, xy, method, **cross_validation_inputs(self, parameters, context),
                        baselines={ORDERED_RANK_MEAN: plain} if plain is not None else None,
                        thresholds=parse_pairs(self.parameterAsString(parameters, self.THRESHOLDS, context),
                                               "Thresholds", names), progress=progress)
        for line in log + fit.log:
            progress.log(line)
        rows = comparison_rows(fit)
        chosen = next(row for row in fit.comparison if row["surface"].startswith(LABELS[fit.method]))
        model_path = output_path(self, parameters, self.OUTPUT_MODEL, context, "prospectivity_model.pkl")
        table = output_path(self, parameters, self.OUTPUT_TABLE, context, "model_comparison.csv")
        surface = output_path(self, parameters, self.OUTPUT, context, "favourability.tif")
        cv = output_path(self, parameters, self.OUTPUT_CV, context, "favourability_out_of_fold.tif")
        with OutputSet() as staged:  # the model, its table and its surfaces written together, or none
            self.write_outputs(staged, fit, rasters.grid, (model_path, table, surface, cv), rows, chosen)
        return {self.OUTPUT_MODEL: model_path, self.OUTPUT_TABLE: table, self.OUTPUT: surface, self.OUTPUT_CV: cv,
                self.AUC: float(chosen["auc"]), self.CHOSEN: fit.method}

    @staticmethod
    def write_outputs(staged, fit, grid, paths, rows, chosen) -> None:
        """The model file, the comparison table, the full fit's surface and every model's out-of-fold surface, into
        `staged` (a files.OutputSet)."""
        from ..plugin.favourability.model_file import save_model
        from ..plugin.favourability.models import LABELS
        from ..plugin.favourability.outputs import write_bands

        model_path, table, surface, cv = (staged.path(p) for p in paths)
        save_model(model_path, fit.model, {
            "deposits": chosen["deposits"], "out_of_fold_auc": chosen["auc"], "why": fit.why,
            "crs": grid.crs.to_wkt() if grid.crs is not None else None, "pixel_size": list(grid.pixel_size),
            "folds": fit.folds.summary()})
        write_csv(table, list(COMPARISON_COLUMNS), rows)
        write_raster(fit.full, grid, surface, f"favourability (0-1): {LABELS[fit.method]}, full fit",
                     LABELS[fit.method])
        write_bands({f"{LABELS[name]}, out of fold": values for name, values in fit.surfaces.items()}, grid, cv,
                    "out of fold (spatial blocks)")


def comparison_rows(fit) -> list[dict]:
    """The calibration's comparison as CSV rows (COMPARISON_COLUMNS), with each model's chosen hyperparameters."""
    from ..plugin.favourability.models import LABELS

    params = {LABELS[name]: run["params"] for name, run in fit.out_of_fold.items()}
    rows = []
    for row in fit.comparison:
        crossing = row["pa_crossing"] or {}
        label = row["surface"].split(",")[0]
        chosen = params.get(label) or []
        rows.append({"surface": row["surface"], "basis": row["basis"], "auc": f"{row['auc']:.6g}",
                     **{f"capture_{100 * float(k):g}": f"{v:.4g}" for k, v in row["capture"].items()},
                     "pa_area_share": crossing.get("area_share", ""), "pa_deposit_share": crossing.get(
                         "deposit_share", ""), "deposits": row["deposits"],
                     "seconds": "" if row["seconds"] is None else row["seconds"],
                     "parameters": " | ".join(", ".join(f"{k} {v:g}" for k, v in p.items()) for p in chosen if p)})
    return rows
