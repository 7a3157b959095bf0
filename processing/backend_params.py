"""The model back-end parameters of lodestar:analyze and lodestar:analyze_cases, and the settings read from them."""
from __future__ import annotations

import os

from qgis.core import (
    QgsApplication,
    QgsAuthMethodConfig,
    QgsProcessingParameterAuthConfig,
    QgsProcessingParameterEnum,
    QgsProcessingParameterNumber,
    QgsProcessingParameterString,
)

from ..plugin.analysis import BackendSettings
from ..plugin.errors import LodestarError

BACKENDS = ("offline", "openai")
KEY_ENVIRONMENT = "LODESTAR_API_KEY"

BACKEND = "BACKEND"
BASE_URL = "BASE_URL"
AUTHCFG = "AUTHCFG"
API_KEY = "API_KEY"
PLANNER_MODEL = "PLANNER_MODEL"
EXECUTOR_MODEL = "EXECUTOR_MODEL"
VERIFIER_MODEL = "VERIFIER_MODEL"
TEMPERATURE = "TEMPERATURE"
MAX_ROUNDS = "MAX_ROUNDS"


def backend_parameters(rounds_help: str, plain_key: bool) -> list:
    """BACKEND, BASE_URL, AUTHCFG, (API_KEY,) the three role models, TEMPERATURE and MAX_ROUNDS, with help."""
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
    rounds = QgsProcessingParameterNumber(MAX_ROUNDS, "Verification rounds (K)", QgsProcessingParameterNumber.Integer,
                                          3, minValue=1, maxValue=10)
    rounds.setHelp(rounds_help)
    return params + [temperature, rounds]


def backend_settings(algorithm, parameters, context) -> BackendSettings:
    """The back-end settings the parameters of `backend_parameters` give."""
    backend = BACKENDS[algorithm.parameterAsEnum(parameters, BACKEND, context)]
    temperature = algorithm.parameterAsDouble(parameters, TEMPERATURE, context)
    if backend == "offline":
        return BackendSettings(temperature=temperature)
    base_url = algorithm.parameterAsString(parameters, BASE_URL, context).strip()
    if not base_url:
        raise LodestarError("The openai back-end needs the server's base URL (BASE_URL).")
    planner = algorithm.parameterAsString(parameters, PLANNER_MODEL, context).strip()
    if not planner:
        raise LodestarError("The openai back-end needs at least the planner model (PLANNER_MODEL).")
    executor = algorithm.parameterAsString(parameters, EXECUTOR_MODEL, context).strip() or planner
    verifier = algorithm.parameterAsString(parameters, VERIFIER_MODEL, context).strip() or planner
    return BackendSettings(backend="openai", base_url=base_url, api_key=api_key(algorithm, parameters, context),
                           models={"planner": planner, "executor": executor, "verifier": verifier},
                           temperature=temperature)


def api_key(algorithm, parameters, context) -> str:
    """The key from AUTHCFG, else API_KEY (where the algorithm has it), else the environment, else the settings."""
    authcfg = algorithm.parameterAsString(parameters, AUTHCFG, context).strip()
    if authcfg:
        return key_from_authcfg(authcfg)
    if algorithm.parameterDefinition(API_KEY) is not None:
        plain = algorithm.parameterAsString(parameters, API_KEY, context).strip()
        if plain:
            return plain
    if os.environ.get(KEY_ENVIRONMENT, "").strip():
        return os.environ[KEY_ENVIRONMENT].strip()
    from ..ui.secrets import read_api_key

    return read_api_key()


def key_from_authcfg(authcfg: str) -> str:
    """The API key held by a QGIS authentication configuration (Basic: the password; API header / token
    methods: their key or token field)."""
    manager = QgsApplication.authManager()
    if authcfg not in manager.configIds():
        raise LodestarError(f"No authentication configuration {authcfg!r} in QGIS; choose an existing one "
                            "(Settings > Options > Authentication).")
    loaded, config = manager.loadAuthenticationConfig(authcfg, QgsAuthMethodConfig(), True)
    if not loaded:
        raise LodestarError("QGIS could not decrypt the authentication configuration; check the master password.")
    for field in ("password", "key", "token", "apikey"):
        value = config.config(field, "")
        if value:
            return value
    raise LodestarError(f"The authentication configuration {authcfg!r} holds no key; store the API key as its "
                        "password (Basic method).")
