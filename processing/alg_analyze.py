"""lodestar:analyze - the STA-CoT analysis of one question over a case or a set of layers."""
from __future__ import annotations

import json
import re
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from qgis.core import (
    QgsProcessing,
    QgsProcessingException,
    QgsProcessingOutputNumber,
    QgsProcessingOutputString,
    QgsProcessingParameterBoolean,
    QgsProcessingParameterFile,
    QgsProcessingParameterMultipleLayers,
    QgsProcessingParameterString,
    QgsProcessingUtils,
    QgsRasterLayer,
)

from ..plugin.analysis import AnalysisRequest
from ..plugin.confinement import check_path_text
from ..plugin.errors import LodestarError
from ..plugin.events import log_lines
from ..plugin.files import OutputSet, write_bytes_atomic
from ..plugin.labels import humanize, plural
from ..plugin.masking import mask_secrets
from ..plugin.progress import Progress
from ..plugin.reason.contract import FAILED
from ..plugin.request.case import read_case
from ..plugin.request.request import build_request, distinct_names, replay_request
from ..plugin.roles import ROLES, check_role
from ..plugin.vector_io import check_output_path, shapefile_note, write_vector
from . import backend_params, mapping_params
from .base import Group, LodestarAlgorithm
from .layer_export import guessed_role, layer_name, layer_spec, raster_file
from .mapping_params import (
    mapping_destinations,
    mapping_inputs,
    mapping_parameters,
    model_choices,
    steering_inputs,
    steering_parameters,
    write_mapping_outputs,
)
from .params import file_destination, output_path, vector_destination
from .scale_params import full_resolution_parameters, scheduler_parameter, write_full_resolution_output
from .styling import style_output

WHERE = {**backend_params.WHERE, **mapping_params.WHERE, "question": "in QUESTION",
         "sam_checkpoint": "in SAM_CHECKPOINT"}
"""How the request builder's messages name this algorithm's parameters."""


def _parse_roles(text: str, count: int, names: list[str]) -> list[str]:
    roles = [r.strip() for r in (text or "").split(",") if r.strip()]
    if not roles:
        return []
    if len(roles) != count:
        raise LodestarError(f"ROLES lists {len(roles)} role(s) for {count} layer(s) ({', '.join(names)}); give one "
                            f"role per layer, in the same order, from: {', '.join(ROLES)}.")
    return [check_role(r) for r in roles]


def _parse_favourable_low(text: str, layers: list) -> set[int] | None:
    """The indices of the RASTERS layers named (or given by 1-based position) in FAVOURABLE_LOW; None when empty."""
    items = [item.strip() for item in (text or "").split(",") if item.strip()]
    if not items:
        return None
    names = [layer_name(layer) for layer in layers]
    listing = ", ".join(f"{i}. {name}" for i, name in enumerate(names, 1))
    chosen = set()
    for item in items:
        if item in names:
            index = names.index(item)
        elif item.isdigit() and 1 <= int(item) <= len(names):
            index = int(item) - 1
        else:
            raise LodestarError(f"FAVOURABLE_LOW: {item!r} is not one of the layers; give names or 1-based positions "
                                f"of RASTERS, comma-separated: {listing}.")
        if not isinstance(layers[index], (QgsRasterLayer, Path)):
            raise LodestarError(f"FAVOURABLE_LOW: {names[index]} is a vector layer; only rasters have low or high "
                                f"values. Layers: {listing}.")
        chosen.add(index)
    return chosen


_NO_ANSWER = re.compile(r"No plan: |The planner gave no usable step|No further model calls |Round \d+: no verdict ")
"""The engine's notes that say why a run reached no answer."""


def _why_no_answer(notes: list) -> str:
    """Why a run ended Failed, in one line: the last of the engine's notes on it (the one that ended the run)."""
    said = [str(note) for note in notes if _NO_ANSWER.match(str(note))]
    return said[-1] if said else "no verification round named an answer."


def kept_record(record: str) -> str:
    """Where the run is kept: its record (replayable, with the report beside it when asked for). The run's own
    working folder lives in the Processing temporary folder, which qgis_process deletes when it exits, so its path
    is never printed; a record left at its default is there too, and the line says so."""
    temporary = Path(QgsProcessingUtils.tempFolder()).resolve()
    if temporary == Path(record).resolve() or temporary in Path(record).resolve().parents:
        return (f"Run record: {record} (temporary: deleted when QGIS or qgis_process exits; give OUTPUT_RECORD "
                "to keep it).")
    return f"Run record: {record}."


@dataclass(frozen=True)
class _Destinations:
    """Where one run's outputs go."""

    vectors: dict  # OUTPUT_ZONES ... OUTPUT_PROSPECTS -> path
    report: str
    record: str
    surfaces: dict  # the mapping outputs asked for -> path


def _refuse_unfinished(result, where: _Destinations, secrets: tuple) -> None:
    """A run stopped or Failed: its record and report reach their destinations first, then it fails with one line
    saying why (a non-zero exit)."""
    with OutputSet() as staged:
        for target, source in ((where.record, result.outputs["record"]), (where.report, result.outputs["report"])):
            write_bytes_atomic(staged.path(target), Path(source).read_bytes())
    why = (f"The model server failed, so the run could not finish: {result.stopped}" if result.stopped else
           f"The run ended without an answer (Failed): {_why_no_answer(result.notes)}")
    raise QgsProcessingException(mask_secrets(" ".join(
        f"{why} The run record is {where.record}; the report is {where.report}.".split()), secrets))


def _log_result(feedback, result, record: str, secrets: tuple) -> None:
    """The run's notes and answer in the log: what the dock shows beside the answer, here all a user reads."""
    for note in result.notes:
        if note.startswith(("Replay check:", "Warning:")):
            feedback.pushWarning(mask_secrets(humanize(note), secrets))
        else:
            feedback.pushInfo(mask_secrets(f"Note: {humanize(note)}", secrets))
    feedback.pushInfo(f"Answer: {result.answer} ({result.answer_text}); "
                      f"{'verified' if result.valid else 'voted' if result.voted else 'not verified'} after "
                      f"{plural(result.rounds, 'round')}. {kept_record(record)}")


class AnalyzeAlgorithm(LodestarAlgorithm):
    ALGORITHM_ID = "analyze"
    DISPLAY_NAME = "Analyze (STA-CoT prospectivity reasoning)"
    GROUP = Group.REASONING
    HELP = (
        "Answers an exploration question (e.g. 'Can porphyry copper deposits be detected here? A. Yes B. No') over "
        "a case (case.json, lodestar-case/1) or a set of layers with their roles, with the STA-CoT loop: a planner "
        "decomposes the question using deposit models, an executor marks candidate zones step by step with the "
        "tools (every output checked by the rule-based controller, at most 3 attempts), a verifier judges the "
        "chain (critical evidence supported, secondary present) and the steps it faults are re-executed, up to "
        "MAX_ROUNDS rounds, then a majority vote (or 'Insufficient evidence' when the critical evidence cannot be "
        "tested with the layers given).\nEvery run maps prospectivity: the planner turns each evidence layer into a "
        "0-1 membership (transformation, weight and why in the weights table) and combines them into a "
        "favourability surface; with known deposits and CALIBRATE a model is fitted on the layers' measured "
        "values (weights of evidence, logistic regression, random forest, gradient boosting, or the best of them "
        "out of fold) with spatial block cross-validation and compared with the equal-weight mean of the layers' "
        "ranks. The targets are the top AREA_SHARE % of the "
        "surface, ranked by the evidence they hold and explained through the spatial graph of all zones.\n"
        "Outputs: the favourability surface (GeoTIFF; cross-validated and its uncertainty too with CALIBRATE), the "
        "evidence weights table (CSV), candidate zones, graph nodes and edges, prospectivity polygons (any OGR "
        "format, Shapefile included), an HTML report (answer, chain, evidence images, verdicts, votes, map, "
        "validation against known deposits) and a JSON run record that REPLAY re-runs with no model calls.\n"
        "The offline back-end (default) needs no network. The "
        "openai back-end talks to any OpenAI-compatible server; give the key through AUTHCFG (preferred), the "
        "LODESTAR_API_KEY environment variable, or the key stored in the Lodestar settings. The key is never "
        "written to the record, the report or the log.\nA run that reaches no answer (Failed: no usable plan, no "
        "verdict, the budget spent, the model server failing) writes its record and report, then fails with one line "
        "saying why, so qgis_process exits non-zero."
    )

    CASE = "CASE"
    RASTERS = "RASTERS"
    ROLES = "ROLES"
    FAVOURABLE_LOW = "FAVOURABLE_LOW"
    QUESTION = "QUESTION"
    BACKEND = backend_params.BACKEND
    BASE_URL = backend_params.BASE_URL
    AUTHCFG = backend_params.AUTHCFG
    API_KEY = backend_params.API_KEY
    PLANNER_MODEL = backend_params.PLANNER_MODEL
    EXECUTOR_MODEL = backend_params.EXECUTOR_MODEL
    VERIFIER_MODEL = backend_params.VERIFIER_MODEL
    TEMPERATURE = backend_params.TEMPERATURE
    MAX_TOKENS = backend_params.MAX_TOKENS
    MAX_ROUNDS = backend_params.MAX_ROUNDS
    REPLAY = "REPLAY"
    REFINE_WITH_SAM = "REFINE_WITH_SAM"
    SAM_CHECKPOINT = "SAM_CHECKPOINT"
    DEPOSITS = mapping_params.DEPOSITS
    CALIBRATE = mapping_params.CALIBRATE
    AREA_SHARE = mapping_params.AREA_SHARE
    FAVOURABLE_UNITS = mapping_params.FAVOURABLE_UNITS
    EVIDENCE_PLAN = mapping_params.EVIDENCE_PLAN
    DEPOSIT_MODEL = mapping_params.DEPOSIT_MODEL
    OUTPUT_FAVOURABILITY = mapping_params.OUTPUT_FAVOURABILITY
    OUTPUT_FAVOURABILITY_CV = mapping_params.OUTPUT_FAVOURABILITY_CV
    OUTPUT_UNCERTAINTY = mapping_params.OUTPUT_UNCERTAINTY
    OUTPUT_WEIGHTS = mapping_params.OUTPUT_WEIGHTS
    OUTPUT_ZONES = "OUTPUT_ZONES"
    OUTPUT_NODES = "OUTPUT_NODES"
    OUTPUT_EDGES = "OUTPUT_EDGES"
    OUTPUT_PROSPECTIVITY = "OUTPUT_PROSPECTIVITY"
    OUTPUT_PROSPECTS = "OUTPUT_PROSPECTS"
    OUTPUT_REPORT = "OUTPUT_REPORT"
    OUTPUT_RECORD = "OUTPUT_RECORD"
    ANSWER = "ANSWER"
    VALID = "VALID"
    ROUNDS = "ROUNDS"

    def initAlgorithm(self, config=None):  # noqa: N802 (QGIS API name)
        case = QgsProcessingParameterFile(self.CASE, "Case (case.json)", extension="json", optional=True)
        case.setHelp("A case.json (lodestar-case/1): layers with roles, the question and the choices. Leave empty "
                     "to give RASTERS and ROLES instead.")
        rasters = QgsProcessingParameterMultipleLayers(self.RASTERS, "Layers", QgsProcessing.TypeMapLayer,
                                                       optional=True)
        rasters.setHelp("Rasters (and fault / unit vector files) to analyse, when no CASE is given. Each must be a "
                        "file (GDAL or OGR).")
        roles = QgsProcessingParameterString(self.ROLES, "Roles (comma-separated, one per layer)", optional=True)
        roles.setHelp("One role per layer, in the order of RASTERS: " + ", ".join(ROLES) + ". Empty: guessed from "
                      "the layer names.")
        favourable_low = QgsProcessingParameterString(
            self.FAVOURABLE_LOW, "Layers whose low values are favourable (comma-separated)", optional=True)
        favourable_low.setHelp("Names, or 1-based positions, of the RASTERS whose LOW values are favourable, e.g. a "
                               "distance-to-faults raster where near is good ('falha_rcl' or '3'); the others are "
                               "favourable where high. Empty: a structure layer named as a distance ('dist' in its "
                               "name) is taken as favourable where low. Ignored with a CASE (its layers say "
                               "'favourable').")
        question = QgsProcessingParameterString(self.QUESTION, "Question", optional=True)
        question.setHelp("The exploration question, its choices listed after 'Answer:' (none listed: Yes / No), e.g. "
                         "'Which alteration is present? Answer: A. Argillic B. Propylitic C. None'. With a CASE, "
                         "empty keeps the case's question and choices.")
        params = [case, rasters, roles, favourable_low, question]
        params += backend_params.backend_parameters(
            "At most K verify-and-refine rounds, then a majority vote over the rounds' answers.", plain_key=True)
        replay = QgsProcessingParameterFile(self.REPLAY, "Replay a run record", extension="json", optional=True)
        replay.setHelp("A run record (JSON) of an earlier run: its inputs and decisions are replayed with no model "
                       "call, giving the same outputs. CASE, RASTERS and the back-end are then ignored.")
        sam = QgsProcessingParameterBoolean(self.REFINE_WITH_SAM, "Refine zone outlines with Segment Anything",
                                            defaultValue=False)
        sam.setHelp("Needs torch and segment_anything and a SAM checkpoint.")
        checkpoint = QgsProcessingParameterFile(self.SAM_CHECKPOINT, "SAM checkpoint", extension="pth", optional=True)
        checkpoint.setHelp("A Segment Anything checkpoint (.pth) for the refinement.")
        params += [replay, sam, checkpoint]
        surface_params = mapping_parameters()
        params += surface_params[:6]  # deposits, calibration, area share, largest and smallest target, targets drawn
        self._models, self._model_problems = model_choices()
        params += steering_parameters(self._models)
        for key, label in ((self.OUTPUT_ZONES, "Candidate zones"), (self.OUTPUT_NODES, "Spatial graph nodes"),
                           (self.OUTPUT_EDGES, "Spatial graph edges"),
                           (self.OUTPUT_PROSPECTIVITY, "Prospectivity polygons"),
                           (self.OUTPUT_PROSPECTS, "Prospects inside the targets")):
            params.append(vector_destination(key, label, QgsProcessing.TypeVectorAnyGeometry,
                                             "Any OGR format by extension (GeoPackage, Shapefile, GeoJSON...); "
                                             "left empty, a GeoPackage in the run folder. The targets and their "
                                             "prospects are written only when the run draws targets (an answer of "
                                             "Insufficient evidence or No draws none)."))
        params.append(file_destination(self.OUTPUT_REPORT, "Report", "HTML files (*.html)",
                                       "The HTML report: answer, chain, evidence images, verdicts, votes and the map."))
        params.append(file_destination(self.OUTPUT_RECORD, "Run record", "JSON files (*.json)",
                                       "The JSON run record (inputs with checksums, parameters, every decision); "
                                       "REPLAY takes it."))
        params += surface_params[6:]
        params += [scheduler_parameter("OUTPUT_FAVOURABILITY_FULL is made there, block by block."),
                   *full_resolution_parameters()]
        for param in params:
            self.addParameter(param)
        self.addOutput(QgsProcessingOutputString(self.ANSWER, "Answer (letter, Insufficient evidence or Failed)"))
        self.addOutput(QgsProcessingOutputNumber(self.VALID, "Verified (1) or voted / failed (0)"))
        self.addOutput(QgsProcessingOutputNumber(self.ROUNDS, "Verification rounds run"))

    def checkParameterValues(self, parameters, context):  # noqa: N802 (QGIS API name)
        """DEPOSIT_MODEL also takes a model's id (the enum itself takes only the index of an option)."""
        value = parameters.get(self.DEPOSIT_MODEL)
        if isinstance(value, str) and value.strip() in {m["id"] for m in self._models}:
            parameters = {k: v for k, v in parameters.items() if k != self.DEPOSIT_MODEL}
        return super().checkParameterValues(self._layers_only(parameters, context), context)

    def validateInputCrs(self, parameters, context):  # noqa: N802 (QGIS API name)
        return super().validateInputCrs(self._layers_only(parameters, context), context)

    def _layers_only(self, parameters, context) -> dict:
        """`parameters` with the rasters RASTERS gives by their files left out: QGIS's own checks would load them as
        layers (`raster_file`); the core checks and reads them."""
        value = parameters.get(self.RASTERS)
        if not isinstance(value, (list, tuple, str)):
            return parameters
        items = [value] if isinstance(value, str) else value
        return {**parameters, self.RASTERS: [item for item in items if raster_file(item, context) is None]}

    # -- parameters -> request ------------------------------------------------------------------------
    def _layers(self, parameters, context, feedback, folder: Path):
        """The RASTERS layers with their roles; a vector layer that is not a whole file is written into `folder`."""
        layers = self._rasters(parameters, context)
        if not layers:
            raise LodestarError("Give a CASE (case.json) or at least one layer in RASTERS.")
        names = [layer_name(layer) for layer in layers]
        roles = _parse_roles(self.parameterAsString(parameters, self.ROLES, context), len(layers), names)
        if not roles:
            roles = [guessed_role(layer) for layer in layers]
            feedback.pushInfo("Roles guessed from the layer names: " + ", ".join(
                f"{n} = {r}" for n, r in zip(names, roles)))
        low = _parse_favourable_low(self.parameterAsString(parameters, self.FAVOURABLE_LOW, context), layers)
        specs, renamed = distinct_names([layer_spec(layer, role, folder, None if low is None else "low" if i in low
                                                    else "high") for i, (layer, role) in enumerate(zip(layers, roles))])
        for line in renamed:
            feedback.pushInfo(line)
        return specs

    def _rasters(self, parameters, context) -> list:
        """The RASTERS layers in order: QGIS layers, and the rasters given by their files as those files
        (`raster_file`: never loaded as layers, so nothing is written beside them; a network path is refused)."""
        value = parameters.get(self.RASTERS)
        layers = []
        for item in value if isinstance(value, (list, tuple)) else [value]:
            text = raster_file(item, context)
            if text is not None:
                check_path_text(text, "RASTERS: the layer")
                layers.append(Path(text))
            elif item is not None:
                layers += self.parameterAsLayerList({self.RASTERS: item}, self.RASTERS, context)
        return layers

    def request(self, parameters, context, feedback, work: Path) -> AnalysisRequest:
        """The request the parameters give, built by the core's one request builder (as the dock's)."""
        replay = self.parameterAsFile(parameters, self.REPLAY, context)
        if replay:
            return replay_request(replay, work)
        sam = dict(max_rounds=self.parameterAsInt(parameters, self.MAX_ROUNDS, context),
                   refine_with_sam=self.parameterAsBool(parameters, self.REFINE_WITH_SAM, context),
                   sam_checkpoint=self.parameterAsFile(parameters, self.SAM_CHECKPOINT, context) or None, where=WHERE)
        backend = backend_params.backend_values(self, parameters, context)
        for problem in self._model_problems:
            feedback.pushWarning(f"A deposit model of yours was not loaded: {problem}")
        sam.update(steering_inputs(self, parameters, context, self._models))
        question = self.parameterAsString(parameters, self.QUESTION, context).strip()
        case_path = self.parameterAsFile(parameters, self.CASE, context)
        if case_path:
            case = read_case(case_path)
            mapping = mapping_inputs(self, parameters, context, work / "inputs", case.deposits)
            return build_request(case.layers, question or case.question, work, backend,
                                 choices=None if question else case.choices, case_id=case.id,
                                 case_units=case.favourable_units, **mapping, **sam)
        layers = self._layers(parameters, context, feedback, work / "inputs")
        return build_request(layers, question, work, backend,
                             **mapping_inputs(self, parameters, context, work / "inputs"), **sam)

    # -- run ----------------------------------------------------------------------------------------------
    def run(self, parameters, context, feedback, progress) -> dict:
        from ..models import run_analysis
        from ..plugin.runs.run import RunFailed

        where = self._destinations(parameters, context)
        work = Path(tempfile.mkdtemp(prefix="lodestar-analyze-", dir=QgsProcessingUtils.tempFolder()))
        try:
            request = self.request(parameters, context, feedback, work)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        request = replace(request, output_names={  # the report names the files where the user will find them
            "prospectivity": Path(where.vectors[self.OUTPUT_PROSPECTIVITY]).name,
            "prospects": Path(where.vectors[self.OUTPUT_PROSPECTS]).name,
            **{mapping_params.OUTPUTS[key][0]: Path(path).name for key, path in where.surfaces.items()}})

        secrets = (request.settings.api_key,)  # masked in every line and message (the client masks replies already)
        progress = Progress(progress.set, lambda line: feedback.pushInfo(mask_secrets(line, secrets)),
                            progress.cancelled)

        def on_event(event: dict) -> None:
            for line in log_lines(event):
                feedback.pushInfo(mask_secrets(line, secrets))

        try:
            result = run_analysis(request, progress, on_event)
        except RunFailed as exc:  # the engine wrote the run's record before failing: it reaches its destination
            if exc.record is not None:
                with OutputSet() as staged:
                    write_bytes_atomic(staged.path(where.record), Path(exc.record).read_bytes())
            raise QgsProcessingException(mask_secrets(" ".join(
                f"{exc.cause} The run record is {where.record}.".split()), secrets)) from exc
        except BaseException:  # refused or cancelled before a record: nothing of the run is worth keeping
            shutil.rmtree(work, ignore_errors=True)
            raise
        if result.stopped or result.answer == FAILED:
            _refuse_unfinished(result, where, secrets)
        outputs = self._write_outputs(parameters, context, feedback, request, result, progress, where)
        _log_result(feedback, result, where.record, secrets)
        outputs.update({self.ANSWER: result.answer, self.VALID: int(result.valid), self.ROUNDS: int(result.rounds)})
        return outputs

    def _destinations(self, parameters, context) -> _Destinations:
        """Where the run's outputs go, every path checked before the run: no token is spent on a run that cannot
        be written."""
        vectors = {key: output_path(self, parameters, key, context, f"{key.lower()}.gpkg")
                   for key in (self.OUTPUT_ZONES, self.OUTPUT_NODES, self.OUTPUT_EDGES,
                               self.OUTPUT_PROSPECTIVITY, self.OUTPUT_PROSPECTS)}
        report = output_path(self, parameters, self.OUTPUT_REPORT, context, "report.html")
        record = output_path(self, parameters, self.OUTPUT_RECORD, context, "record.json")
        surfaces = mapping_destinations(self, parameters, context)
        for key, path in {**vectors, self.OUTPUT_REPORT: report, self.OUTPUT_RECORD: record, **surfaces}.items():
            check_output_path(path, f"{key} ({self.parameterDefinition(key).description()})",
                              vector=key in vectors)
        return _Destinations(vectors, report, record, surfaces)

    def _write_outputs(self, parameters, context, feedback, request, result, progress, where: _Destinations) -> dict:
        """Write the finished run's outputs to their destinations: {key: path}."""
        stamp = json.loads(Path(result.outputs["record"]).read_text(encoding="utf-8"))["created_utc"]
        frames = {self.OUTPUT_ZONES: result.zones, self.OUTPUT_NODES: result.nodes, self.OUTPUT_EDGES: result.edges,
                  self.OUTPUT_PROSPECTIVITY: result.prospectivity, self.OUTPUT_PROSPECTS: result.prospects}
        outputs = {}
        styles = {self.OUTPUT_ZONES: "zones.qml", self.OUTPUT_NODES: "graph_nodes.qml",
                  self.OUTPUT_EDGES: "graph_edges.qml", self.OUTPUT_PROSPECTIVITY: "prospectivity.qml",
                  self.OUTPUT_PROSPECTS: "prospects.qml"}
        with OutputSet() as staged:  # every output staged beside its destination, then all moved there at once:
            # two runs writing the same paths leave one run's complete set
            for key, path in where.vectors.items():  # stamped with the run's time: a replay writes the same bytes
                if key in (self.OUTPUT_PROSPECTIVITY, self.OUTPUT_PROSPECTS) and (frames[key] is None
                                                                                  or not len(frames[key])):
                    feedback.pushInfo(f"{key} was not written: no target was drawn (the notes say why).")
                    continue
                note = shapefile_note(frames[key], path)
                if note:
                    feedback.pushInfo(f"{key}: {note}")
                write_vector(frames[key], staged.path(path), stamp=stamp)
                outputs[key] = str(path)
                style_output(context, path, styles[key])
            for key, target, source in ((self.OUTPUT_REPORT, where.report, result.outputs["report"]),
                                        (self.OUTPUT_RECORD, where.record, result.outputs["record"])):
                write_bytes_atomic(staged.path(target), Path(source).read_bytes())
                outputs[key] = target
            outputs.update(write_mapping_outputs(where.surfaces, result.outputs, context, feedback, staged))
            outputs.update(write_full_resolution_output(self, parameters, context, request, result, progress,
                                                        staged))
        return outputs
