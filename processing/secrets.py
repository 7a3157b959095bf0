"""The API key of the model server: where it is kept, and the one rule that finds it (dock and algorithms).

The stored key is a "Basic" configuration in QGIS's encrypted authentication database (the password field
holds the key; QGIS 3.22 has no API-header method). Only the configuration's id is kept in QgsSettings, so
the key itself never reaches a settings file, a project, a log or a run record.
"""
from __future__ import annotations

import os

from qgis.core import QgsApplication, QgsAuthMethodConfig, QgsSettings

from ..plugin.errors import LodestarError

KEY_ENVIRONMENT = "LODESTAR_API_KEY"
AUTHCFG_SETTING = "lodestar/authcfg"
CONFIG_NAME = "Lodestar model server API key"
METHOD = "Basic"
USERNAME = "lodestar-api-key"


def api_key(authcfg: str = "", plain: str = "") -> str:
    """The key, by the one precedence rule: an authentication configuration given for this run, else a plain key
    given for it, else the LODESTAR_API_KEY environment variable, else the key stored in the Lodestar settings."""
    if (authcfg or "").strip():
        return key_from_authcfg(authcfg.strip())
    if (plain or "").strip():
        return plain.strip()
    return os.environ.get(KEY_ENVIRONMENT, "").strip() or read_api_key()


def key_available() -> bool:
    """Whether `api_key()` finds a key without one given for the run (checked without decrypting)."""
    return bool(os.environ.get(KEY_ENVIRONMENT, "").strip()) or has_api_key()


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


def _manager():
    """The authentication manager, ready to encrypt and decrypt (asks for the master password if needed)."""
    manager = QgsApplication.authManager()
    if manager.isDisabled():
        raise LodestarError(
            "QGIS's authentication system is disabled (" + manager.disabledMessage() + "); the API key cannot "
            "be stored safely. Check that QGIS was built with Qt's SQL and crypto support."
        )
    if not manager.masterPasswordIsSet() and not manager.setMasterPassword(True):
        raise LodestarError(
            "Set the QGIS master password (Settings > Options > Authentication) so the API key can be stored "
            "encrypted, then try again."
        )
    return manager


def authcfg_id() -> str:
    """The id of the stored key's configuration ('' when none is stored)."""
    return str(QgsSettings().value(AUTHCFG_SETTING, "") or "")


def store_api_key(key: str) -> str:
    """Store (or replace) the API key in the authentication database; returns its configuration id."""
    key = (key or "").strip()
    if not key:
        raise LodestarError("The API key is empty; paste the key your model server gave you.")
    manager = _manager()
    config = QgsAuthMethodConfig(METHOD)
    existing = authcfg_id()
    if existing and existing in manager.configIds():
        manager.loadAuthenticationConfig(existing, config, True)
    config.setName(CONFIG_NAME)
    config.setMethod(METHOD)
    config.setConfig("username", USERNAME)
    config.setConfig("password", key)
    if config.id():
        stored = manager.updateAuthenticationConfig(config)
    else:
        stored, config = manager.storeAuthenticationConfig(config)
    if not stored or not config.id():
        raise LodestarError("QGIS could not store the API key in its authentication database; check the QGIS log.")
    QgsSettings().setValue(AUTHCFG_SETTING, config.id())
    return config.id()


def read_api_key() -> str:
    """The stored API key, or '' when none is stored."""
    config_id = authcfg_id()
    if not config_id:
        return ""
    manager = _manager()
    if config_id not in manager.configIds():
        return ""
    config = QgsAuthMethodConfig()
    loaded, config = manager.loadAuthenticationConfig(config_id, config, True)
    if not loaded:
        raise LodestarError(
            "QGIS could not decrypt the stored API key; check the master password, or enter the key again."
        )
    return config.config("password", "")


def has_api_key() -> bool:
    """Whether a key is stored, without decrypting it."""
    config_id = authcfg_id()
    return bool(config_id) and config_id in QgsApplication.authManager().configIds()


def clear_api_key() -> None:
    """Remove the stored key and its reference."""
    config_id = authcfg_id()
    if config_id and config_id in QgsApplication.authManager().configIds():
        QgsApplication.authManager().removeAuthenticationConfig(config_id)
    QgsSettings().remove(AUTHCFG_SETTING)
