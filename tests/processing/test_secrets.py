"""The API key round-trips through QgsAuthManager and is written to no setting, file or log; the one lookup rule
(authcfg, plain key, LODESTAR_API_KEY, stored key) serves the dock and the algorithms."""
from __future__ import annotations

import logging
import uuid
from pathlib import Path

import pytest
from qgis.core import QgsApplication, QgsSettings

from lodestar.plugin.errors import LodestarError
from lodestar.processing import secrets


def _profile_files():
    return [p for p in Path(QgsApplication.qgisSettingsDirPath()).rglob("*") if p.is_file()]


def test_key_round_trips_and_is_written_nowhere_in_clear(auth_ready, caplog):
    key = "sk-lodestar-" + uuid.uuid4().hex
    logged = []
    QgsApplication.messageLog().messageReceived.connect(lambda msg, tag, level: logged.append(msg))
    caplog.set_level(logging.DEBUG)

    config_id = secrets.store_api_key(key)

    assert len(config_id) == 7  # QGIS auth config ids are 7 characters
    assert secrets.authcfg_id() == config_id
    assert secrets.has_api_key()
    assert secrets.read_api_key() == key
    config = auth_ready.availableAuthMethodConfigs()[config_id]
    assert config.method() == "Basic" and config.name() == secrets.CONFIG_NAME

    settings = QgsSettings()
    settings.sync()
    values = [str(settings.value(k)) for k in settings.allKeys()]
    assert config_id in values
    assert not any(key in v for v in values)
    hits = [p for p in _profile_files() if key.encode() in p.read_bytes()]
    assert hits == []
    QgsApplication.processEvents()
    assert not any(key in m for m in logged)
    assert key not in caplog.text


def test_replacing_the_key_keeps_one_config(auth_ready):
    first = secrets.store_api_key("sk-first-" + uuid.uuid4().hex)
    second_key = "sk-second-" + uuid.uuid4().hex
    second = secrets.store_api_key(second_key)
    assert second == first
    assert secrets.read_api_key() == second_key
    names = [c.name() for c in auth_ready.availableAuthMethodConfigs().values()]
    assert names.count(secrets.CONFIG_NAME) == 1


def test_clear_removes_key_and_reference(auth_ready):
    config_id = secrets.store_api_key("sk-gone-" + uuid.uuid4().hex)
    secrets.clear_api_key()
    assert secrets.authcfg_id() == ""
    assert config_id not in auth_ready.configIds()
    assert secrets.read_api_key() == "" and not secrets.has_api_key()


def test_empty_key_is_refused(auth_ready):
    with pytest.raises(LodestarError, match="empty"):
        secrets.store_api_key("  ")


def _basic_config(manager, password: str) -> str:
    from qgis.core import QgsAuthMethodConfig

    config = QgsAuthMethodConfig("Basic")
    config.setName("processing key test")
    config.setConfig("username", "x")
    config.setConfig("password", password)
    stored, config = manager.storeAuthenticationConfig(config)
    assert stored
    return config.id()


def test_key_from_authcfg(auth_ready):
    config_id = _basic_config(auth_ready, "sk-in-authdb")
    try:
        assert secrets.key_from_authcfg(config_id) == "sk-in-authdb"
        with pytest.raises(LodestarError, match="No authentication configuration 'zzzzzzz'"):
            secrets.key_from_authcfg("zzzzzzz")
    finally:
        auth_ready.removeAuthenticationConfig(config_id)


def test_one_precedence_rule(auth_ready, monkeypatch):
    """authcfg, then the plain key, then LODESTAR_API_KEY, then the stored key."""
    config_id = _basic_config(auth_ready, "sk-authcfg-0001")
    secrets.store_api_key("sk-stored-0001")
    monkeypatch.setenv(secrets.KEY_ENVIRONMENT, " sk-env-0001 ")
    try:
        assert secrets.api_key(config_id, "sk-plain-0001") == "sk-authcfg-0001"
        assert secrets.api_key("", " sk-plain-0001 ") == "sk-plain-0001"
        assert secrets.api_key() == "sk-env-0001" and secrets.key_available()
        monkeypatch.delenv(secrets.KEY_ENVIRONMENT)
        assert secrets.api_key() == "sk-stored-0001" and secrets.key_available()
        secrets.clear_api_key()
        assert secrets.api_key() == "" and not secrets.key_available()
    finally:
        auth_ready.removeAuthenticationConfig(config_id)
