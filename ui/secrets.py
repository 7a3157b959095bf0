"""The API key of the model server, kept in QGIS's encrypted authentication database.

The key is stored as a "Basic" authentication configuration (the password field holds the key;
QGIS 3.22 has no API-header method). Only the configuration's id is kept in QgsSettings, so the
key itself never reaches a settings file, a project, a log or a run record.
"""
from __future__ import annotations

from qgis.core import QgsApplication, QgsAuthMethodConfig, QgsSettings

from ..plugin.errors import LodestarError

AUTHCFG_SETTING = "lodestar/authcfg"
CONFIG_NAME = "Lodestar model server API key"
METHOD = "Basic"
USERNAME = "lodestar-api-key"


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
