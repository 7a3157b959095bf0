"""The prospectivity-map parameters of lodestar:analyze (known deposits, calibration, target area share, favourable
units) and its favourability surface and weights table outputs."""
from __future__ import annotations

from pathlib import Path

from qgis.core import (
    QgsApplication,
    QgsProcessing,
    QgsProcessingParameterDefinition,
    QgsProcessingParameterEnum,
    QgsProcessingParameterFile,
    QgsProcessingParameterNumber,
    QgsProcessingParameterString,
    QgsProcessingParameterVectorLayer,
)

from ..plugin.errors import LodestarError
from ..plugin.files import write_bytes_atomic
from ..plugin.reason.deposit_models import load_user_models
from ..plugin.reason.knowledge import load_knowledge
from ..plugin.request.request import AREA_SHARE_RANGE, CALIBRATIONS, MAX_FOLDS
from .layer_export import layer_path
from .params import file_destination, number_parameter, output_path, raster_destination
from .styling import style_output

DEPOSITS = "DEPOSITS"
CALIBRATE = "CALIBRATE"
AREA_SHARE = "AREA_SHARE"
MAX_TARGET_KM2 = "MAX_TARGET_KM2"
MIN_TARGET_KM2 = "MIN_TARGET_KM2"
MAX_TARGETS = "MAX_TARGETS"
FAVOURABLE_UNITS = "FAVOURABLE_UNITS"
EVIDENCE_PLAN = "EVIDENCE_PLAN"
DEPOSIT_MODEL = "DEPOSIT_MODEL"
BLOCK_SIZE_M = "BLOCK_SIZE_M"
FOLDS = "FOLDS"
SEED = "SEED"
AUTOMATIC_LABEL = "automatic (from the question and the layers)"
OUTPUT_FAVOURABILITY = "OUTPUT_FAVOURABILITY"
OUTPUT_FAVOURABILITY_CV = "OUTPUT_FAVOURABILITY_CV"
OUTPUT_UNCERTAINTY = "OUTPUT_UNCERTAINTY"
OUTPUT_WEIGHTS = "OUTPUT_WEIGHTS"
OUTPUTS = {OUTPUT_FAVOURABILITY: ("favourability", "favourability.tif"),
           OUTPUT_FAVOURABILITY_CV: ("favourability_cv", "favourability_cv.tif"),
           OUTPUT_UNCERTAINTY: ("uncertainty", "uncertainty.tif"),
           OUTPUT_WEIGHTS: ("weights", "weights.csv")}
"""Output key -> (the engine's output name, the file name of a temporary output)."""
WHERE = {"favourable_units": FAVOURABLE_UNITS, "area_share": AREA_SHARE, "evidence_plan": EVIDENCE_PLAN,
         "deposit_model": DEPOSIT_MODEL, "max_target_km2": MAX_TARGET_KM2, "min_target_km2": MIN_TARGET_KM2,
         "max_targets": MAX_TARGETS,
         "block_size_m": BLOCK_SIZE_M, "folds": FOLDS, "seed": SEED,
         "deposits": f"a point layer of known deposits in {DEPOSITS} (or a CASE that lists its deposits)"}
"""How the request builder's messages name these parameters."""


def mapping_parameters() -> list:
    """DEPOSITS, CALIBRATE, AREA_SHARE, FAVOURABLE_UNITS and the three outputs, with help."""
    deposits = QgsProcessingParameterVectorLayer(DEPOSITS, "Known deposits (points)", [QgsProcessing.TypeVectorPoint],
                                                 optional=True)
    deposits.setHelp("Points of known deposits. The favourability surface is validated against them (success-rate "
                     "AUC and deposits captured in the top 2, 5, 10 and 20 % of the area, in the report and the "
                     "record), and CALIBRATE fits the evidence weights on them. With a CASE, empty takes the case's "
                     "deposits.")
    units = QgsProcessingParameterString(FAVOURABLE_UNITS, "Favourable units of categorical maps", optional=True)
    units.setHelp("Units you call favourable on a categorical map (a geological map, or a layer with a legend), "
                  "e.g. 'geology: LPZE, UPZC, LPZ; other map: limestone': the layer's name, a colon, its unit codes "
                  "or names comma-separated, maps separated by ';'. With a single categorical map its name may be "
                  "left out ('LPZE, UPZC'). Needed when a legend has codes only; otherwise the deposit model's host "
                  "rocks are matched against the legend's names. They replace a CASE's favourable units map by map.")
    favourability = raster_destination(OUTPUT_FAVOURABILITY, "Favourability surface",
                                       "Float32 GeoTIFF on the analysis grid, 0 (least) to 1 (most favourable), nodata "
                                       "(-9999) outside the analysed area. With CALIBRATE, the chosen model's full "
                                       "fit when it beats, out of fold, the equal-weight mean of the layers' ranks; "
                                       "else the knowledge-driven surface (the band description and the log say "
                                       "which, and why).")
    cv = raster_destination(OUTPUT_FAVOURABILITY_CV, "Favourability, cross-validated (with CALIBRATE only)",
                            "Written only with CALIBRATE: the out-of-fold surface, each spatial block predicted by a "
                            "model fitted without its deposits (the honest skill figure). Float32 GeoTIFF as "
                            "OUTPUT_FAVOURABILITY.")
    uncertainty = raster_destination(OUTPUT_UNCERTAINTY, "Uncertainty of the calibrated surface (with CALIBRATE only)",
                                     "Written only with CALIBRATE: for weights of evidence the posterior probability's "
                                     "standard deviation (weights and missing data), for the other models the "
                                     "standard deviation of the fold models' favourability (0-1); the band "
                                     "description says which. Float32 GeoTIFF on the analysis grid.")
    weights = file_destination(OUTPUT_WEIGHTS, "Evidence weights table", "CSV files (*.csv)",
                               "One row per evidence layer: layer, role, transformation, membership, weight and why; "
                               "with CALIBRATE also the fitted figures (W+, W-, contrast, studentised contrast, or the "
                               "regression coefficient), each layer's out-of-fold importance (drop in AUC when "
                               "shuffled) and whether it lowers the skill.")
    return [deposits, *surface_parameters(), units, favourability, cv, uncertainty, weights]


def surface_parameters() -> list:
    """CALIBRATE and AREA_SHARE, with help (lodestar:analyze and lodestar:analyze_cases)."""
    calibrate = QgsProcessingParameterEnum(CALIBRATE, "Calibrate with known deposits",
                                           options=[label for _, label in CALIBRATIONS], defaultValue=0)
    calibrate.setHelp("0: none: the surface is knowledge-driven (the planner's transformations and weights from the "
                      "deposit model, no deposit data used). 1: weights of evidence (categorical per unit, ordered "
                      "layers generalised at maximum studentised contrast). 2: logistic regression. 3: random "
                      "forest. 4: gradient boosting. 5: best out of fold (all four fitted and their ensemble, the "
                      "mean of their ranks; the ensemble kept unless the model of highest out-of-fold AUC also "
                      "beats it in enough folds for a sign test at 5 %, all five of 5, while with fewer than 5 folds "
                      "holding deposits the ensemble is always kept; why said in the log). "
                      "2-5 need scikit-learn. Every model fits the "
                      "layers' measured values (units, distances in metres, values; fault density and distance to unit "
                      "contacts derived from them) on DEPOSITS (or a case's "
                      "deposits) with spatial block cross-validation, hyperparameters chosen inside the training "
                      "folds: OUTPUT_FAVOURABILITY gets the full fit, OUTPUT_FAVOURABILITY_CV the out-of-fold "
                      "prediction, OUTPUT_UNCERTAINTY its uncertainty; the report compares it with the "
                      "knowledge-driven surface and the equal-weight mean of the layers' ranks. A fit that does not "
                      "beat that baseline out of fold is not used for the targets. qgis_process takes the number.")
    low, high = AREA_SHARE_RANGE
    share = number_parameter(AREA_SHARE, "Target area share (% of the analysed area)",
                             QgsProcessingParameterNumber.Double, 10.0, 100 * low, 100 * high,
                             f"The prospectivity targets are the most favourable cells covering this percentage of the "
                             f"analysed area ({100 * low:g} to {100 * high:g}; default 10). Each patch of them is "
                             "split at its peaks; nested tiers at 2 and 5 % say which targets hold the best cells.")
    largest = number_parameter(MAX_TARGET_KM2, "Largest target (km², 0: the deposit model's footprint)",
                               QgsProcessingParameterNumber.Double, 0.0, 0.0, 1e6,
                               "No target is larger than this: a patch of the top share bigger than it is split at "
                               "shallower saddles, then across its long axis where the surface is flat. 0 takes the "
                               "deposit model's camp footprint (e.g. 250 km² for an orogenic gold camp, 491 km² for a "
                               "cluster of porphyry systems; the knowledge base names its source); a target larger "
                               "than one deposit's footprint holds its prospects.")
    least = number_parameter(MIN_TARGET_KM2, "Smallest target (km², 0: from the deposit model's footprint)",
                             QgsProcessingParameterNumber.Double, 0.0, 0.0, 1e6,
                             "No target is smaller than this: a smaller piece joins the target it touches, or is "
                             "dropped (the note counts them). 0 takes a quarter of one deposit's footprint, lowered "
                             "where the top share could not hold the work list's targets that large; never under 4 "
                             "analysis cells.")
    count = number_parameter(MAX_TARGETS, "Targets drawn (the work list, 0: 30)", QgsProcessingParameterNumber.Integer,
                             0, 0, 10000, "The best this many targets are drawn, each with its prospects; the rest "
                             "of the top share stays in the favourability surface, said in one line of the notes.")
    return [calibrate, share, largest, least, count, *cross_validation_parameters()]


def cross_validation_parameters(advanced: bool = True) -> list:
    """BLOCK_SIZE_M, FOLDS and SEED of the calibration's spatial block cross-validation (`advanced`: shown under
    Advanced Parameters)."""
    block = number_parameter(BLOCK_SIZE_M, "Cross-validation: block size (m)", QgsProcessingParameterNumber.Double,
                             None, 1.0, None, "Side of the square blocks dealt to the cross-validation folds, in "
                             "metres; empty: 10 km, or an eighth of the extent's shorter side when smaller. Larger "
                             "blocks keep neighbouring deposits of one system out of each other's folds.",
                             optional=True)
    folds = number_parameter(FOLDS, "Cross-validation: folds", QgsProcessingParameterNumber.Integer, 5, 2, MAX_FOLDS,
                             f"Spatial folds (2 to {MAX_FOLDS}).")
    seed = number_parameter(SEED, "Cross-validation: random seed", QgsProcessingParameterNumber.Integer, 0, 0,
                            2 ** 31 - 1,
                            "Fixes how the blocks are dealt to folds and the background sample: a run is "
                            "reproducible, and another seed shows how far the figures rest on one draw.")
    if advanced:
        for param in (block, folds, seed):
            param.setFlags(param.flags() | QgsProcessingParameterDefinition.FlagAdvanced)
    return [block, folds, seed]


def cross_validation_inputs(algorithm, parameters, context) -> dict:
    """The request's cross_validation from BLOCK_SIZE_M (empty: the default), FOLDS and SEED."""
    block = parameters.get(BLOCK_SIZE_M)
    return {"block_size_m": algorithm.parameterAsDouble(parameters, BLOCK_SIZE_M, context)
            if block not in (None, "") else None,
            "folds": algorithm.parameterAsInt(parameters, FOLDS, context),
            "seed": algorithm.parameterAsInt(parameters, SEED, context)}


def user_models_folder() -> Path:
    """Where the user's own deposit models are kept: the QGIS profile's lodestar/deposit_models folder."""
    return Path(QgsApplication.qgisSettingsDirPath()) / "lodestar" / "deposit_models"


def model_choices() -> tuple[list, list]:
    """(the models DEPOSIT_MODEL offers after 'automatic': the shipped ones, then the user's; a message per user
    model file refused)."""
    user, problems = load_user_models(user_models_folder())
    return load_knowledge() + user, problems


def steering_parameters(models: list) -> list:
    """EVIDENCE_PLAN and DEPOSIT_MODEL (its options: automatic, then `models`), with help."""
    plan = QgsProcessingParameterFile(EVIDENCE_PLAN, "Evidence plan (lodestar-evidence-plan/1)", extension="json",
                                      optional=True)
    plan.setHelp("Your evidence plan, which replaces the agent's for the favourability surface: per layer its "
                 "transformation, membership (its midpoint in the layer's own units: ppm, metres, nT; a fuzzy "
                 "spread is a unitless steepness; the favourable units of a unit map) and weight. Save one from the "
                 "dock's evidence plan, or write it "
                 "from a run's plan. The run record keeps it, marked as yours, and REPLAY reproduces it. A full run "
                 "combines the layers by weighted overlay; fuzzy operators are applied by the dock's Re-run with "
                 "this plan. Empty: the agent's plan.")
    options = [AUTOMATIC_LABEL] + [f"{m['id']}: {m['name']}" + (" (yours)" if m.get("source") == "user" else "")
                                   for m in models]
    model = QgsProcessingParameterEnum(DEPOSIT_MODEL, "Deposit model", options=options, defaultValue=0)
    model.setHelp("The deposit model the run follows. 0: automatic, chosen from the question's words and the "
                  "evidence the layers can test (the runner-up and why are in the report). Otherwise the model "
                  "listed, by its number (qgis_process: DEPOSIT_MODEL=2) or its id (e.g. 'skarn'): the shipped "
                  "models, then yours, kept as JSON files in the QGIS profile's lodestar/deposit_models folder (write "
                  "them in the dock's deposit model form).")
    return [plan, model]


def steering_inputs(algorithm, parameters, context, models: list) -> dict:
    """The request builder's evidence_plan, deposit_model and user_models from EVIDENCE_PLAN and DEPOSIT_MODEL
    (an index of its options, or a model id)."""
    raw = parameters.get(DEPOSIT_MODEL)
    if isinstance(raw, str) and raw.strip() and not raw.strip().isdigit():
        chosen = raw.strip()
    else:
        index = algorithm.parameterAsEnum(parameters, DEPOSIT_MODEL, context)
        chosen = models[index - 1]["id"] if index > 0 else ""
    return {"evidence_plan": algorithm.parameterAsFile(parameters, EVIDENCE_PLAN, context) or None,
            "deposit_model": chosen, "user_models": [m for m in models if m.get("source") == "user"]}


def mapping_inputs(algorithm, parameters, context, folder: Path, case_deposits=None) -> dict:
    """The request builder's keywords from these parameters (deposits: DEPOSITS, else `case_deposits`); a deposits
    layer that is not a whole file is written into `folder`."""
    layer = algorithm.parameterAsVectorLayer(parameters, DEPOSITS, context)
    deposits = layer_path(layer, folder) if layer is not None else case_deposits
    calibrate = CALIBRATIONS[algorithm.parameterAsEnum(parameters, CALIBRATE, context)][0]
    return {"deposits": deposits, "calibrate": calibrate,
            "cross_validation": cross_validation_inputs(algorithm, parameters, context),
            "area_share": algorithm.parameterAsDouble(parameters, AREA_SHARE, context) / 100.0,
            "max_target_km2": algorithm.parameterAsDouble(parameters, MAX_TARGET_KM2, context) or None,
            **target_inputs(algorithm, parameters, context),
            "favourable_units": algorithm.parameterAsString(parameters, FAVOURABLE_UNITS, context)}


def target_inputs(algorithm, parameters, context) -> dict:
    """The smallest target and the work list's length (None: the defaults)."""
    return {"min_target_km2": algorithm.parameterAsDouble(parameters, MIN_TARGET_KM2, context) or None,
            "max_targets": algorithm.parameterAsInt(parameters, MAX_TARGETS, context) or None}


def mapping_destinations(algorithm, parameters, context) -> dict:
    """Output key -> the file it names; a surface must be a GeoTIFF (checked before the run)."""
    paths = {key: output_path(algorithm, parameters, key, context, name) for key, (_, name) in OUTPUTS.items()}
    for key in (OUTPUT_FAVOURABILITY, OUTPUT_FAVOURABILITY_CV, OUTPUT_UNCERTAINTY):
        if Path(paths[key]).suffix.lower() not in (".tif", ".tiff"):
            raise LodestarError(f"{algorithm.parameterDefinition(key).description()}: the surface is written as a "
                                f"GeoTIFF; give a file name ending in .tif, not {Path(paths[key]).name}.")
    return paths


def write_mapping_outputs(paths: dict, engine_outputs: dict, context, feedback, staged=None) -> dict:
    """Copy the run's surfaces and weights table to their destinations (surfaces styled when loaded); an output
    the run did not make is dropped from the layers to load and said so. `staged` (a files.OutputSet): written
    into its staging folders, to move into place with the run's other outputs."""
    written = {}
    skipped = [path for key, path in paths.items() if OUTPUTS[key][0] not in engine_outputs]
    if skipped:  # before any style is set: Processing must not try to load a file that was not written
        context.setLayersToLoadOnCompletion({path: details for path, details in
                                             context.layersToLoadOnCompletion().items() if path not in skipped})
    for key, path in paths.items():
        name = OUTPUTS[key][0]
        if name not in engine_outputs:
            needs = key in (OUTPUT_FAVOURABILITY_CV, OUTPUT_UNCERTAINTY)
            feedback.pushInfo(f"{key} was not written: " + ("it needs CALIBRATE." if needs
                                                             else "no layer could be turned into evidence."))
            continue
        write_bytes_atomic(staged.path(path) if staged is not None else path,
                           Path(engine_outputs[name]).read_bytes())
        if key != OUTPUT_WEIGHTS:
            style_output(context, path, "uncertainty.qml" if key == OUTPUT_UNCERTAINTY else "favourability.qml")
        written[key] = path
    return written
