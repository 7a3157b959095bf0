"""lodestar:analyze_cases - every case of a folder through the analysis, here one after another or one task per case
on a Dask cluster, into a table."""
from __future__ import annotations

import json

from qgis.core import (
    QgsFeature,
    QgsField,
    QgsFields,
    QgsProcessing,
    QgsProcessingOutputFile,
    QgsProcessingOutputNumber,
    QgsProcessingOutputString,
    QgsProcessingParameterFeatureSink,
    QgsProcessingParameterFile,
    QgsWkbTypes,
)
from qgis.PyQt.QtCore import QVariant

from ..plugin.errors import LodestarError
from ..plugin.request.request import CALIBRATIONS
from ..plugin.runs.batch import BATCH_COLUMNS, CaseOutcome, run_batch
from . import backend_params
from .base import Group, LodestarAlgorithm
from .mapping_params import (
    AREA_SHARE,
    CALIBRATE,
    MAX_TARGET_KM2,
    cross_validation_inputs,
    surface_parameters,
    target_inputs,
)
from .params import folder_destination, output_path
from .scale_params import DASK_SCHEDULER, scheduler_parameter, scheduler_value

NUMERIC = {"rounds": QVariant.Int, "model_calls": QVariant.Int, "prompt_tokens": QVariant.Int,
           "completion_tokens": QVariant.Int, "tokens": QVariant.Int, "deposits": QVariant.Int,
           "deposits_found": QVariant.Int, "prospectivity_polygons": QVariant.Int, "seconds": QVariant.Double,
           "recall": QVariant.Double, "area_reduction": QVariant.Double, "success_auc": QVariant.Double,
           "cv_auc": QVariant.Double, "knowledge_auc": QVariant.Double, "baseline_auc": QVariant.Double}


def table_fields() -> QgsFields:
    """Attribute fields of the results table, one per batch column."""
    out = QgsFields()
    for name in BATCH_COLUMNS:
        out.append(QgsField(name, NUMERIC.get(name, QVariant.String)))
    return out


def table_feature(row: CaseOutcome, fields: QgsFields) -> QgsFeature:
    feature = QgsFeature(fields)
    feature.setAttributes([getattr(row, name) for name in BATCH_COLUMNS])
    return feature


class AnalyzeCasesAlgorithm(LodestarAlgorithm):
    ALGORITHM_ID = "analyze_cases"
    DISPLAY_NAME = "Analyze a folder of cases (batch)"
    GROUP = Group.REASONING
    HELP = (
        "Runs the Lodestar analysis on every case of a folder (each case is a folder with a case.json, "
        "lodestar-case/1), one after another. Each case's outputs (zones, graph, prospectivity polygons, "
        "report, run record) go into <output folder>/<case id>/. The results table has one row per case: "
        "case id, answer, ground truth if the case has one, whether the answer is correct, whether the verifier "
        "accepted a chain, rounds, seconds, model calls and tokens, and, for cases with known deposits, recall, "
        "area reduction and success-rate AUC; calibrated, the model fitted, whether its surface was used, its "
        "out-of-fold AUC and those of the knowledge-driven surface and the equal-weight baseline. A case that "
        "fails is recorded with its error and the batch goes on. "
        "The summary (also written as results_summary.json) gives accuracy, positive-class F1, macro F1 and MCC "
        "over the cases with ground truth, mean recall, area reduction and success-rate AUC, seconds, model calls "
        "and tokens per case.\n"
        "DASK_SCHEDULER (tcp://host:8786) sends the cases to a Dask cluster, one task per case: the table keeps the "
        "cases' order and its worker column says which worker ran each; a case whose worker dies is run once more "
        "elsewhere, then recorded as failed with the reason. The case folders and the output folder must be at the "
        "same paths on every worker (a shared file system)."
    )

    CASES = "CASES"
    DASK_SCHEDULER = DASK_SCHEDULER
    # The back-end parameters are those of lodestar:analyze (but the plain-text key), read by the same code.
    BACKEND = backend_params.BACKEND
    BASE_URL = backend_params.BASE_URL
    AUTHCFG = backend_params.AUTHCFG
    PLANNER_MODEL = backend_params.PLANNER_MODEL
    EXECUTOR_MODEL = backend_params.EXECUTOR_MODEL
    VERIFIER_MODEL = backend_params.VERIFIER_MODEL
    TEMPERATURE = backend_params.TEMPERATURE
    MAX_TOKENS = backend_params.MAX_TOKENS
    MAX_ROUNDS = backend_params.MAX_ROUNDS
    OUTPUT_FOLDER = "OUTPUT_FOLDER"
    OUTPUT_TABLE = "OUTPUT_TABLE"
    OUTPUT_CSV = "OUTPUT_CSV"
    SUMMARY = "SUMMARY"
    CASE_COUNT = "CASE_COUNT"
    ERRORS = "ERRORS"

    def initAlgorithm(self, config=None):  # noqa: N802 (QGIS API name)
        cases = QgsProcessingParameterFile(self.CASES, "Folder of cases", behavior=QgsProcessingParameterFile.Folder)
        cases.setHelp("A folder whose subfolders are cases (each with a case.json), or a single case folder.")
        backend_inputs = backend_params.backend_parameters(
            "At most this many verify-and-refine rounds per case, then a majority vote.", plain_key=False)
        folder = folder_destination(self.OUTPUT_FOLDER, "Output folder",
                                    "Per-case outputs go into <folder>/<case id>/; the table into <folder>/results.csv "
                                    "and the summary into <folder>/results_summary.json.")
        table = QgsProcessingParameterFeatureSink(self.OUTPUT_TABLE, "Results table", QgsProcessing.TypeVector,
                                                  optional=True, createByDefault=True)
        table.setHelp("The results table as a layer without geometry (one row per case).")
        scheduler = scheduler_parameter("The cases run there, one task per case.")
        for param in (cases, *backend_inputs, *surface_parameters(), scheduler, folder, table):
            self.addParameter(param)
        self.addOutput(QgsProcessingOutputFile(self.OUTPUT_CSV, "Results table (CSV)"))
        self.addOutput(QgsProcessingOutputString(self.SUMMARY, "Summary figures (JSON)"))
        self.addOutput(QgsProcessingOutputNumber(self.CASE_COUNT, "Cases run"))
        self.addOutput(QgsProcessingOutputNumber(self.ERRORS, "Cases that failed with an error"))

    def run(self, parameters, context, feedback, progress) -> dict:
        from ..models import run_analysis

        source = self.parameterAsFile(parameters, self.CASES, context)
        if not source:
            raise LodestarError("Choose the folder of cases.")
        output = output_path(self, parameters, self.OUTPUT_FOLDER, context, "lodestar-cases")
        rounds = self.parameterAsInt(parameters, self.MAX_ROUNDS, context)
        settings = backend_params.backend_settings(self, parameters, context)
        surface = {"calibrate": CALIBRATIONS[self.parameterAsEnum(parameters, CALIBRATE, context)][0],
                   "area_share": self.parameterAsDouble(parameters, AREA_SHARE, context) / 100.0,
                   "max_target_km2": self.parameterAsDouble(parameters, MAX_TARGET_KM2, context) or None,
                   **target_inputs(self, parameters, context),
                   "cross_validation": {k: v for k, v in cross_validation_inputs(self, parameters, context).items()
                                        if v is not None}}
        result = run_batch(source, output, settings, rounds, progress, analyse=run_analysis, surface=surface,
                           scheduler=scheduler_value(self, parameters, context))
        outputs = {self.OUTPUT_FOLDER: output, self.OUTPUT_CSV: str(result.table),
                   self.SUMMARY: json.dumps(result.summary, default=float), self.CASE_COUNT: len(result.outcomes),
                   self.ERRORS: result.summary["errors"]}
        fields = table_fields()
        sink, dest = self.parameterAsSink(parameters, self.OUTPUT_TABLE, context, fields, QgsWkbTypes.NoGeometry)
        if sink is not None:
            for row in result.outcomes:
                sink.addFeature(table_feature(row, fields))
            outputs[self.OUTPUT_TABLE] = dest
        for key in ("accuracy", "macro_f1", "mcc", "recall", "area_reduction"):
            if result.summary.get(key) is not None:
                interval = result.summary.get(f"{key}_interval")
                feedback.pushInfo(f"{key}: {result.summary[key]:.3f}" + (
                    f" (95 % bootstrap interval {interval[0]:.3f} to {interval[1]:.3f})" if interval else ""))
        return outputs
