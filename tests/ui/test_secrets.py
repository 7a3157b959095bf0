"""The API key round-trips through QgsAuthManager and is written to no setting, file or log."""
from __future__ import annotations

import logging
import uuid
from pathlib import Path

import pytest
from qgis.core import QgsApplication, QgsSettings

from lodestar.plugin.errors import LodestarError
from lodestar.ui import secrets

MASTER_PASSWORD = "lodestar-test-master"


@pytest.fixture
def auth_ready(qgis_app):
    """The test profile's auth database unlocked with a known master password (never a real profile)."""
    profile = Path(QgsApplication.qgisSettingsDirPath()).resolve()
    assert ".qgis-settings" in profile.parts, f"not pytest-qgis's test profile: {profile}"
    manager = QgsApplication.authManager()
    assert not manager.isDisabled()
    if not manager.setMasterPassword(MASTER_PASSWORD, True):
        manager.eraseAuthenticationDatabase(False)
        assert manager.setMasterPassword(MASTER_PASSWORD, True)
    secrets.clear_api_key()
    yield manager
    secrets.clear_api_key()


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


def test_settings_dialog_saves_key_to_auth_db_only(auth_ready):
    from lodestar.ui.settings_dialog import PluginSettings, SettingsDialog

    key = "sk-dialog-" + uuid.uuid4().hex
    dialog = SettingsDialog()
    try:
        dialog.baseUrlEdit.setText("http://127.0.0.1:9/v1")
        dialog.plannerModelEdit.setText("big-planner")
        dialog.executorModelEdit.setText("small-vision")
        dialog.verifierModelEdit.setText("big-verifier")
        dialog.temperatureSpin.setValue(0.2)
        dialog.maxRoundsSpin.setValue(4)
        dialog.tokenBudgetSpin.setValue(123000)
        dialog.apiKeyEdit.setText(key)
        dialog.save()
        assert dialog.apiKeyEdit.text() == ""
        assert "stored" in dialog.apiKeyEdit.placeholderText()
    finally:
        dialog.deleteLater()
    loaded = PluginSettings.load()
    assert loaded.base_url == "http://127.0.0.1:9/v1"
    assert loaded.models == {"planner": "big-planner", "executor": "small-vision", "verifier": "big-verifier"}
    assert (loaded.temperature, loaded.max_rounds, loaded.max_tokens) == (0.2, 4, 123000)
    assert loaded.openai_problem() == ""
    backend = loaded.backend_settings("openai")
    assert backend.api_key == key
    assert key not in repr(backend) and key not in str(backend.public())
    settings = QgsSettings()
    settings.sync()
    assert not any(key in str(settings.value(k)) for k in settings.allKeys())
    assert not any(key.encode() in p.read_bytes() for p in _profile_files())
    secrets.clear_api_key()
    assert "API key" in PluginSettings.load().openai_problem()
    for k in QgsSettings().allKeys():
        if k.startswith("lodestar/"):
            QgsSettings().remove(k)


@pytest.fixture
def model_server():
    """A loopback server answering GET /v1/models, recording the Authorization headers it receives."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    seen = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server API name)
            seen.append(self.headers.get("Authorization"))
            body = json.dumps({"object": "list", "data": [{"id": "big-planner", "object": "model"},
                                                          {"id": "small-vision", "object": "model"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    server.shutdown()
    server.server_close()


def _wait_label(dialog, timeout_s=20):
    import time

    deadline = time.monotonic() + timeout_s
    while dialog._test_task is not None and time.monotonic() < deadline:
        QgsApplication.processEvents()
        time.sleep(0.01)
    return dialog.testResultLabel.text()


def test_test_connection_uses_the_stored_key(auth_ready, model_server):
    from lodestar.ui.settings_dialog import SettingsDialog

    url, seen = model_server
    key = "sk-conn-" + uuid.uuid4().hex
    secrets.store_api_key(key)
    dialog = SettingsDialog()
    try:
        dialog.baseUrlEdit.setText(url)
        dialog.plannerModelEdit.setText("big-planner")
        dialog.executorModelEdit.setText("small-vision")
        dialog.verifierModelEdit.setText("big-verifier")
        dialog.test_connection()
        text = _wait_label(dialog)
        assert text.startswith(f"Connected to {url}: 2 model(s) available.")
        assert "Not listed there: big-verifier." in text
        assert seen == [f"Bearer {key}"]
        assert dialog.testButton.isEnabled()
        dialog.baseUrlEdit.setText("http://127.0.0.1:9/v1")  # discard port: nothing listens
        dialog.test_connection()
        assert _wait_label(dialog).startswith("Connection failed: Cannot reach the model server")
    finally:
        dialog.deleteLater()
        for k in QgsSettings().allKeys():
            if k.startswith("lodestar/") and k != secrets.AUTHCFG_SETTING:
                QgsSettings().remove(k)


def test_a_connection_test_ending_after_the_dialog_closed_is_ignored(qgis_app):
    from qgis.PyQt.QtCore import QCoreApplication, QEvent

    from lodestar.ui.settings_dialog import SettingsDialog

    dialog = SettingsDialog()
    dialog.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)
    dialog._connection_tested(None, "Connected.")  # the task's callback: must not touch deleted widgets
