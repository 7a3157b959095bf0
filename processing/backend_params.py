"""The model back-end parameters of lodestar:analyze and lodestar:analyze_cases, and the settings read from them."""
from __future__ import annotations

from typing import get_args

from qgis.core import (
    QgsProcessingParameterAuthConfig,
    QgsProcessingParameterDefinition,
    QgsProcessingParameterEnum,
    QgsProcessingParameterNumber,
    QgsProcessingParameterString,
)

from ..plugin.analysis import BackendSettings, Structured, Vision
from ..plugin.request import request
from ..plugin.request.request import BACKENDS, BackendValues
from . import secrets
from .secrets import KEY_ENVIRONMENT

BACKEND = "BACKEND"
BASE_URL = "BASE_URL"
AUTHCFG = "AUTHCFG"
API_KEY = "API_KEY"
PLANNER_MODEL = "PLANNER_MODEL"
EXECUTOR_MODEL = "EXECUTOR_MODEL"
VERIFIER_MODEL = "VERIFIER_MODEL"
TEMPERATURE = "TEMPERATURE"
MAX_TOKENS = "MAX_TOKENS"
MAX_ROUNDS = "MAX_ROUNDS"
TIMEOUT = "TIMEOUT"
ATTEMPTS = "ATTEMPTS"
DEADLINE = "DEADLINE"
ANSWER_TOKENS = "ANSWER_TOKENS"
VISION = "VISION"
STRUCTURED = "STRUCTURED"
VISION_OPTIONS: tuple[Vision, ...] = get_args(Vision)
"""Whether the executor's and verifier's models see images: ask the server (else try), yes, or no (text evidence)."""
STRUCTURED_OPTIONS: tuple[Structured, ...] = get_args(Structured)
"""How answers are constrained: the JSON schema where the server takes it, else JSON mode; only the schema; only
JSON mode; nothing (the repair loop alone)."""
MODEL_KEYS = {"planner": PLANNER_MODEL, "executor": EXECUTOR_MODEL, "verifier": VERIFIER_MODEL}
WHERE = {"base_url": f"in {BASE_URL}", "planner": f"in {PLANNER_MODEL}"}
"""How the request builder's messages name the back-end parameters."""


def backend_parameters(rounds_help: str, plain_key: bool) -> list:
    """BACKEND, BASE_URL, AUTHCFG, (API_KEY,) the three role models, TEMPERATURE, MAX_TOKENS and MAX_ROUNDS, with
    help."""
    backend = QgsProcessingParameterEnum(BACKEND, "Back-end", options=list(BACKENDS), defaultValue=0)
    backend.setHelp("offline: the rule-based reasoner (no network). openai: any OpenAI-compatible server.")
    base_url = QgsProcessingParameterString(BASE_URL, "Server base URL (openai)", optional=True)
    base_url.setHelp("e.g. https://api.openai.com/v1 or http://localhost:8000/v1; unused offline.")
    authcfg = QgsProcessingParameterAuthConfig(AUTHCFG, "API key (authentication configuration)", optional=True)
    authcfg.setHelp("A QGIS authentication configuration holding the API key (Basic method: the key as password); "
                    "the preferred way to give the key. Without it: " + ("API_KEY, then " if plain_key else "")
                    + f"the {KEY_ENVIRONMENT} environment variable, else the key stored in the Lodestar settings.")
    params = [backend, base_url, authcfg]
    if plain_key:
        api_key = QgsProcessingParameterString(API_KEY, "API key (plain text, not recommended)", optional=True)
        api_key.setHelp("Only for quick tests: QGIS may keep Processing inputs in its history. The key is never "
                        f"written by Lodestar. Prefer AUTHCFG or the {KEY_ENVIRONMENT} environment variable.")
        params.append(api_key)
    for key, label in ((PLANNER_MODEL, "Planner model"), (EXECUTOR_MODEL, "Executor model"),
                       (VERIFIER_MODEL, "Verifier model")):
        model = QgsProcessingParameterString(key, f"{label} (openai)", optional=True)
        model.setHelp("Model name on the server; 'offline' lets the rule-based reasoner take this role. "
                      "Empty: the planner's model.")
        params.append(model)
    temperature = QgsProcessingParameterNumber(TEMPERATURE, "Temperature", QgsProcessingParameterNumber.Double,
                                               0.05, minValue=0, maxValue=2)
    temperature.setHelp("Sampling temperature of the model calls (the paper uses 0.05).")
    tokens = QgsProcessingParameterNumber(MAX_TOKENS, "Token budget (openai)", QgsProcessingParameterNumber.Integer,
                                          400_000, minValue=1000, maxValue=100_000_000)
    tokens.setHelp("The most prompt and completion tokens a run may spend on the model server (as the token "
                   "budget of the Lodestar settings); the run stops with a message when it is reached.")
    rounds = QgsProcessingParameterNumber(MAX_ROUNDS, "Verification rounds (K)", QgsProcessingParameterNumber.Integer,
                                          3, minValue=1, maxValue=10)
    rounds.setHelp(rounds_help)
    return params + [temperature, tokens, rounds] + _call_parameters()


def _call_parameters() -> list:
    """The advanced model-call parameters (openai): timeout, attempts and deadline per call, answer tokens,
    vision, structured output."""
    defaults = BackendSettings()
    timeout = QgsProcessingParameterNumber(TIMEOUT, "Timeout per attempt, s (openai)",
                                           QgsProcessingParameterNumber.Double, defaults.timeout_s, minValue=1,
                                           maxValue=3600)
    timeout.setHelp("How long one attempt may wait for the model server's answer before it counts as a timeout.")
    attempts = QgsProcessingParameterNumber(ATTEMPTS, "Attempts per call (openai)",
                                            QgsProcessingParameterNumber.Integer, defaults.max_retries + 1,
                                            minValue=1, maxValue=10)
    attempts.setHelp("How many times one model call is tried after a timeout, HTTP 429 / 5xx or a lost connection.")
    deadline = QgsProcessingParameterNumber(DEADLINE, "Deadline per call, s (openai)",
                                            QgsProcessingParameterNumber.Double, defaults.deadline_s, minValue=1,
                                            maxValue=7200)
    deadline.setHelp("The longest one model call may take, every attempt and wait before a retry included.")
    answer = QgsProcessingParameterNumber(ANSWER_TOKENS, "Answer tokens (openai, 0: from each role's schema)",
                                          QgsProcessingParameterNumber.Integer, 0, minValue=0, maxValue=100_000)
    answer.setHelp("max_tokens of every model answer; 0 sizes it per role from the answer's JSON schema.")
    vision = QgsProcessingParameterEnum(VISION, "Models see images (openai)", options=list(VISION_OPTIONS),
                                        defaultValue=0)
    vision.setHelp("auto: ask the server (llama.cpp, Ollama), else send images and switch to text if refused; "
                   "no: the executor and verifier get the evidence as text (zones, statistics, legend, relations).")
    structured = QgsProcessingParameterEnum(STRUCTURED, "Structured output (openai)", options=list(STRUCTURED_OPTIONS),
                                            defaultValue=0)
    structured.setHelp("auto: send each answer's JSON schema and fall back to JSON mode when the server refuses it; "
                       "json_schema: the schema only; json_object: JSON mode only; off: neither.")
    params = [timeout, attempts, deadline, answer, vision, structured]
    for param in params:
        param.setFlags(param.flags() | QgsProcessingParameterDefinition.FlagAdvanced)
    return params


def _call_values(algorithm, parameters, context) -> dict:
    """The model-call settings the advanced parameters give, as BackendSettings fields."""
    answer = algorithm.parameterAsInt(parameters, ANSWER_TOKENS, context)
    vision = VISION_OPTIONS[algorithm.parameterAsEnum(parameters, VISION, context)]
    return {"timeout_s": algorithm.parameterAsDouble(parameters, TIMEOUT, context),
            "max_retries": algorithm.parameterAsInt(parameters, ATTEMPTS, context) - 1,
            "deadline_s": algorithm.parameterAsDouble(parameters, DEADLINE, context),
            "answer_tokens": {role: answer for role in (*MODEL_KEYS, "localization", "evidence")} if answer > 0 else {},
            "vision": {"executor": vision, "verifier": vision},
            "structured": STRUCTURED_OPTIONS[algorithm.parameterAsEnum(parameters, STRUCTURED, context)]}


def backend_values(algorithm, parameters, context) -> BackendValues:
    """The back-end as the parameters of `backend_parameters` give it (the key is looked up for a model server
    only, by the one rule of `secrets.api_key`)."""
    backend = BACKENDS[algorithm.parameterAsEnum(parameters, BACKEND, context)]
    values = BackendValues(backend=backend, temperature=algorithm.parameterAsDouble(parameters, TEMPERATURE, context),
                           max_tokens=algorithm.parameterAsInt(parameters, MAX_TOKENS, context))
    if backend == "offline":
        return values
    values.base_url = algorithm.parameterAsString(parameters, BASE_URL, context)
    values.models = {role: algorithm.parameterAsString(parameters, key, context) for role, key in MODEL_KEYS.items()}
    plain = algorithm.parameterAsString(parameters, API_KEY, context) if algorithm.parameterDefinition(API_KEY) else ""
    values.api_key = secrets.api_key(algorithm.parameterAsString(parameters, AUTHCFG, context), plain)
    values.calls = _call_values(algorithm, parameters, context)
    return values


def backend_settings(algorithm, parameters, context) -> BackendSettings:
    """The back-end settings the parameters of `backend_parameters` give (the core's one builder)."""
    return request.backend_settings(backend_values(algorithm, parameters, context), WHERE)
