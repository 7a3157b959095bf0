"""lodestar:analyze - the STA-CoT analysis of one question over a case or a set of layers."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from qgis.core import (
    QgsApplication,
    QgsAuthMethodConfig,
    QgsProcessing,
    QgsProcessingOutputNumber,
    QgsProcessingOutputString,
    QgsProcessingParameterAuthConfig,
    QgsProcessingParameterBoolean,
    QgsProcessingParameterEnum,
    QgsProcessingParameterFile,
    QgsProcessingParameterFileDestination,
    QgsProcessingParameterMultipleLayers,
    QgsProcessingParameterNumber,
    QgsProcessingParameterString,
    QgsProcessingParameterVectorDestination,
)

from ..plugin.analysis import AnalysisRequest, BackendSettings
from ..plugin.case import DEFAULT_CHOICES, read_case
from ..plugin.errors import LodestarError
from ..plugin.raster_io import LayerSpec
from ..plugin.roles import ROLES, check_role, guess_role
from ..plugin.vector_io import write_vector
from .alg_feature_regions import layer_path
from .base import Group, LodestarAlgorithm

BACKENDS = ("offline", "openai")
KEY_ENVIRONMENT = "LODESTAR_API_KEY"


def _parse_roles(text: str, count: int, names: list[str]) -> list[str]:
    roles = [r.strip() for r in (text or "").split(",") if r.strip()]
    if not roles:
        return []
    if len(roles) != count:
        raise LodestarError(f"ROLES lists {len(roles)} role(s) for {count} layer(s) ({', '.join(names)}); give one "
                            f"role per layer, in the same order, from: {', '.join(ROLES)}.")
    return [check_role(r) for r in roles]


def key_from_authcfg(authcfg: str) -> str:
    """The API key held by a QGIS authentication configuration (Basic: the password; API header / token
    methods: their key or token field)."""
    manager = QgsApplication.authManager()
    if authcfg not in manager.configIds():
        raise LodestarError(f"No authentication configuration {authcfg!r} in QGIS; choose an existing one "
                            "(Settings > Options > Authentication).")
    config = QgsAuthMethodConfig()
    loaded, config = manager.loadAuthenticationConfig(authcfg, config, True)
    if not loaded:
        raise LodestarError("QGIS could not decrypt the authentication configuration; check the master password.")
    for field in ("password", "key", "token", "apikey"):
        value = config.config(field, "")
        if value:
            return value
    raise LodestarError(f"The authentication configuration {authcfg!r} holds no key; store the API key as its "
                        "password (Basic method).")


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
        "MAX_ROUNDS rounds, then a majority vote. Deposits are then localized through the spatial graph of all "
        "zones.\nOutputs: candidate zones, graph nodes and edges, prospectivity polygons (any OGR format, "
        "Shapefile included), an HTML report (answer, chain, evidence images, verdicts, votes, map) and a JSON run "
        "record that REPLAY re-runs with no model calls.\nThe offline back-end (default) needs no network. The "
        "openai back-end talks to any OpenAI-compatible server; give the key through AUTHCFG (preferred), the "
        "LODESTAR_API_KEY environment variable, or the key stored in the Lodestar settings. The key is never "
        "written to the record, the report or the log."
    )

    CASE = "CASE"
    RASTERS = "RASTERS"
    ROLES = "ROLES"
    QUESTION = "QUESTION"
    BACKEND = "BACKEND"
    BASE_URL = "BASE_URL"
    AUTHCFG = "AUTHCFG"
    API_KEY = "API_KEY"
    PLANNER_MODEL = "PLANNER_MODEL"
    EXECUTOR_MODEL = "EXECUTOR_MODEL"
    VERIFIER_MODEL = "VERIFIER_MODEL"
    TEMPERATURE = "TEMPERATURE"
    MAX_ROUNDS = "MAX_ROUNDS"
    REPLAY = "REPLAY"
    REFINE_WITH_SAM = "REFINE_WITH_SAM"
    SAM_CHECKPOINT = "SAM_CHECKPOINT"
    OUTPUT_ZONES = "OUTPUT_ZONES"
    OUTPUT_NODES = "OUTPUT_NODES"
    OUTPUT_EDGES = "OUTPUT_EDGES"
    OUTPUT_PROSPECTIVITY = "OUTPUT_PROSPECTIVITY"
    OUTPUT_REPORT = "OUTPUT_REPORT"
    OUTPUT_RECORD = "OUTPUT_RECORD"
    ANSWER = "ANSWER"
    VALID = "VALID"
    ROUNDS = "ROUNDS"

    def initAlgorithm(self, config=None):  # noqa: N802 (QGIS API name)
        params = []
        case = QgsProcessingParameterFile(self.CASE, "Case (case.json)", extension="json", optional=True)
        case.setHelp("A case.json (lodestar-case/1): layers with roles, the question and the choices. Leave empty "
                     "to give RASTERS and ROLES instead.")
        rasters = QgsProcessingParameterMultipleLayers(self.RASTERS, "Layers", QgsProcessing.TypeMapLayer,
                                                       optional=True)
        rasters.setHelp("Rasters (and fault / unit vector files) to analyse, when no CASE is given. Each must be a "
                        "file (GDAL or OGR).")
        roles = QgsProcessingParameterString(self.ROLES, "Roles (comma-separated, one per layer)", optional=True)
        roles.setHelp("One role per layer, in the order of LAYERS: " + ", ".join(ROLES) + ". Empty: guessed from "
                      "the layer names.")
        question = QgsProcessingParameterString(self.QUESTION, "Question", optional=True)
        question.setHelp("The exploration question, e.g. 'Can porphyry copper deposits be detected? A. Yes B. No'. "
                         "With a CASE, empty keeps the case's question.")
        backend = QgsProcessingParameterEnum(self.BACKEND, "Back-end", options=list(BACKENDS), defaultValue=0)
        backend.setHelp("offline: the rule-based reasoner, no network. openai: an OpenAI-compatible server.")
        base_url = QgsProcessingParameterString(self.BASE_URL, "Server base URL (openai)", optional=True)
        base_url.setHelp("e.g. https://api.openai.com/v1 or http://localhost:8000/v1.")
        authcfg = QgsProcessingParameterAuthConfig(self.AUTHCFG, "API key (authentication configuration)",
                                                   optional=True)
        authcfg.setHelp("A QGIS authentication configuration holding the API key (Basic method: the key as "
                        "password). Preferred way to give the key.")
        api_key = QgsProcessingParameterString(self.API_KEY, "API key (plain text, not recommended)", optional=True)
        api_key.setHelp("Only for quick tests: QGIS may keep Processing inputs in its history. The key is never "
                        "written by Lodestar. Prefer AUTHCFG or the LODESTAR_API_KEY environment variable.")
        params += [case, rasters, roles, question, backend, base_url, authcfg, api_key]
        for key, label in ((self.PLANNER_MODEL, "Planner model"), (self.EXECUTOR_MODEL, "Executor model"),
                           (self.VERIFIER_MODEL, "Verifier model")):
            model = QgsProcessingParameterString(key, f"{label} (openai)", optional=True)
            model.setHelp("Model name on the server; 'offline' lets the rule-based reasoner take this role. "
                          "Empty: the planner's model.")
            params.append(model)
        temperature = QgsProcessingParameterNumber(self.TEMPERATURE, "Temperature",
                                                   QgsProcessingParameterNumber.Double, 0.05, minValue=0, maxValue=2)
        temperature.setHelp("Sampling temperature of the model calls (the paper uses 0.05).")
        rounds = QgsProcessingParameterNumber(self.MAX_ROUNDS, "Verification rounds (K)",
                                              QgsProcessingParameterNumber.Integer, 3, minValue=1, maxValue=10)
        rounds.setHelp("At most K verify-and-refine rounds, then a majority vote over the rounds' answers.")
        replay = QgsProcessingParameterFile(self.REPLAY, "Replay a run record", extension="json", optional=True)
        replay.setHelp("A run record (JSON) of an earlier run: its inputs and decisions are replayed with no model "
                       "call, giving the same outputs. CASE, LAYERS and the back-end are then ignored.")
        sam = QgsProcessingParameterBoolean(self.REFINE_WITH_SAM, "Refine zone outlines with Segment Anything",
                                            defaultValue=False)
        sam.setHelp("Needs torch and segment_anything and a SAM checkpoint.")
        checkpoint = QgsProcessingParameterFile(self.SAM_CHECKPOINT, "SAM checkpoint", extension="pth", optional=True)
        checkpoint.setHelp("A Segment Anything checkpoint (.pth) for the refinement.")
        params += [temperature, rounds, replay, sam, checkpoint]
        for key, label in ((self.OUTPUT_ZONES, "Candidate zones"), (self.OUTPUT_NODES, "Spatial graph nodes"),
                           (self.OUTPUT_EDGES, "Spatial graph edges"),
                           (self.OUTPUT_PROSPECTIVITY, "Prospectivity polygons")):
            output = QgsProcessingParameterVectorDestination(key, label, QgsProcessing.TypeVectorAnyGeometry,
                                                             QgsProcessing.TEMPORARY_OUTPUT, True, True)
            output.setHelp("Any OGR format by extension (GeoPackage, Shapefile, GeoJSON...); "
                           "left empty, a GeoPackage in the run folder.")
            params.append(output)
        report = QgsProcessingParameterFileDestination(self.OUTPUT_REPORT, "Report", "HTML files (*.html)",
                                                       QgsProcessing.TEMPORARY_OUTPUT, True, True)
        report.setHelp("The HTML report: answer, chain, evidence images, verdicts, votes and the map.")
        record = QgsProcessingParameterFileDestination(self.OUTPUT_RECORD, "Run record", "JSON files (*.json)",
                                                       QgsProcessing.TEMPORARY_OUTPUT, True, True)
        record.setHelp("The JSON run record (inputs with checksums, parameters, every decision); REPLAY takes it.")
        params += [report, record]
        for param in params:
            self.addParameter(param)
        self.addOutput(QgsProcessingOutputString(self.ANSWER, "Answer (choice letter or Failed)"))
        self.addOutput(QgsProcessingOutputNumber(self.VALID, "Verified (1) or voted / failed (0)"))
        self.addOutput(QgsProcessingOutputNumber(self.ROUNDS, "Verification rounds run"))

    # -- parameters -> request ------------------------------------------------------------------------
    def _layers(self, parameters, context, feedback):
        layers = self.parameterAsLayerList(parameters, self.RASTERS, context)
        if not layers:
            raise LodestarError("Give a CASE (case.json) or at least one layer in LAYERS.")
        names = [layer.name() for layer in layers]
        paths = [layer_path(layer) for layer in layers]
        roles = _parse_roles(self.parameterAsString(parameters, self.ROLES, context), len(layers), names)
        if not roles:
            roles = [guess_role(name, path) for name, path in zip(names, paths)]
            feedback.pushInfo("Roles guessed from the layer names: " + ", ".join(
                f"{n} = {r}" for n, r in zip(names, roles)))
        specs = []
        for name, path, role in zip(names, paths, roles):
            legend = Path(path).with_name(Path(path).stem + "_legend.csv")
            favourable = "low" if role == "structure" and "dist" in name.lower() else "high"
            specs.append(LayerSpec(Path(path), role, name, favourable, legend if legend.exists() else None))
        return specs

    def _settings(self, parameters, context) -> BackendSettings:
        backend = BACKENDS[self.parameterAsEnum(parameters, self.BACKEND, context)]
        temperature = self.parameterAsDouble(parameters, self.TEMPERATURE, context)
        if backend == "offline":
            return BackendSettings(temperature=temperature)
        base_url = self.parameterAsString(parameters, self.BASE_URL, context).strip()
        if not base_url:
            raise LodestarError("The openai back-end needs the server's base URL (BASE_URL).")
        planner = self.parameterAsString(parameters, self.PLANNER_MODEL, context).strip()
        executor = self.parameterAsString(parameters, self.EXECUTOR_MODEL, context).strip() or planner
        verifier = self.parameterAsString(parameters, self.VERIFIER_MODEL, context).strip() or planner
        if not planner:
            raise LodestarError("The openai back-end needs at least the planner model (PLANNER_MODEL).")
        return BackendSettings(backend="openai", base_url=base_url, api_key=self._api_key(parameters, context),
                               models={"planner": planner, "executor": executor, "verifier": verifier},
                               temperature=temperature)

    def _api_key(self, parameters, context) -> str:
        authcfg = self.parameterAsString(parameters, self.AUTHCFG, context).strip()
        if authcfg:
            return key_from_authcfg(authcfg)
        plain = self.parameterAsString(parameters, self.API_KEY, context).strip()
        if plain:
            return plain
        if os.environ.get(KEY_ENVIRONMENT):
            return os.environ[KEY_ENVIRONMENT].strip()
        from ..ui.secrets import read_api_key

        return read_api_key()

    def request(self, parameters, context, feedback, work: Path) -> AnalysisRequest:
        rounds = self.parameterAsInt(parameters, self.MAX_ROUNDS, context)
        question = self.parameterAsString(parameters, self.QUESTION, context).strip()
        replay = self.parameterAsFile(parameters, self.REPLAY, context)
        sam = self.parameterAsBool(parameters, self.REFINE_WITH_SAM, context)
        checkpoint = self.parameterAsFile(parameters, self.SAM_CHECKPOINT, context)
        if sam and not checkpoint:
            raise LodestarError("Zone refinement with SAM needs a checkpoint file (SAM_CHECKPOINT).")
        common = dict(output_dir=work, max_rounds=rounds, refine_with_sam=sam,
                      sam_checkpoint=Path(checkpoint) if checkpoint else None)
        if replay:
            return AnalysisRequest(layers=[], question="(replayed)", replay=Path(replay), **common)
        settings = self._settings(parameters, context)
        case_path = self.parameterAsFile(parameters, self.CASE, context)
        if case_path:
            case = read_case(case_path)
            return AnalysisRequest(layers=case.layers, question=question or case.question,
                                   choices=dict(case.choices), settings=settings, case_id=case.id,
                                   deposits=case.deposits, **common)
        layers = self._layers(parameters, context, feedback)
        if not question:
            raise LodestarError("Ask a QUESTION (e.g. 'Can porphyry copper deposits be detected? A. Yes B. No').")
        return AnalysisRequest(layers=layers, question=question, choices=dict(DEFAULT_CHOICES), settings=settings,
                               **common)

    # -- run ----------------------------------------------------------------------------------------------
    def run(self, parameters, context, feedback, progress) -> dict:
        from ..plugin.engine.run import run_analysis

        work = Path(tempfile.mkdtemp(prefix="lodestar-analyze-", dir=_temp_root()))
        destinations = {}
        for key in (self.OUTPUT_ZONES, self.OUTPUT_NODES, self.OUTPUT_EDGES, self.OUTPUT_PROSPECTIVITY):
            path = self.parameterAsOutputLayer(parameters, key, context)
            if path and path.startswith("memory:"):
                raise LodestarError(f"{key}: choose a file (GeoPackage, Shapefile...) rather than a memory layer.")
            destinations[key] = path or str(work / f"{key.lower()}.gpkg")
        report = self.parameterAsFileOutput(parameters, self.OUTPUT_REPORT, context) or str(work / "report.html")
        record = self.parameterAsFileOutput(parameters, self.OUTPUT_RECORD, context) or str(work / "record.json")
        request = self.request(parameters, context, feedback, work)

        def on_event(event: dict) -> None:
            line = _event_line(event)
            if line:
                feedback.pushInfo(line)

        result = run_analysis(request, progress, on_event)
        frames = {self.OUTPUT_ZONES: result.zones, self.OUTPUT_NODES: result.nodes, self.OUTPUT_EDGES: result.edges,
                  self.OUTPUT_PROSPECTIVITY: result.prospectivity}
        outputs = {}
        for key, path in destinations.items():
            outputs[key] = str(write_vector(frames[key], path.split("|")[0]))
        for key, target, source in ((self.OUTPUT_REPORT, report, result.outputs["report"]),
                                    (self.OUTPUT_RECORD, record, result.outputs["record"])):
            Path(target).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            outputs[key] = target
        feedback.pushInfo(f"Answer: {result.answer} ({result.answer_text}); "
                          f"{'verified' if result.valid else 'voted' if result.voted else 'not verified'} after "
                          f"{result.rounds} round(s). Run folder: {work}")
        outputs.update({self.ANSWER: result.answer, self.VALID: int(result.valid), self.ROUNDS: int(result.rounds)})
        return outputs


def _temp_root() -> str:
    from qgis.core import QgsProcessingUtils

    return QgsProcessingUtils.tempFolder()


def _event_line(event: dict) -> str:
    kind = event.get("kind")
    if kind == "plan":
        return "Plan: " + "; ".join(f"{s['index']}. {s['purpose']} [{s['tool']}]" for s in event["steps"])
    if kind == "step":
        obs = event["observation"]
        return f"Step {event['step']}: {obs['sub_inference']} - {obs['rationale']}"
    if kind == "controller" and not event["verdict"].get("ok"):
        return f"Controller, step {event['step']} attempt {event['attempt']}: " + "; ".join(
            e.get("message", "") for e in event["verdict"].get("errors", []))
    if kind == "verdict":
        verdict = event.get("verdict")
        if verdict is None:
            return f"Round {event['round']}: no verdict ({event.get('error')})"
        return (f"Round {event['round']}: {'valid' if verdict['valid'] else 'invalid'}, answer {verdict['answer']}"
                + (f", steps to redo {sorted(verdict['feedback'])}" if verdict.get("feedback") else ""))
    if kind == "vote":
        return f"Majority vote over {event['counts']}: {event['answer']}"
    return ""
