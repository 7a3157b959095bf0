"""The settings dialog: settings in QgsSettings, the typed key in the auth database only, the connection test."""
from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from qgis.core import QgsApplication, QgsSettings

from lodestar.plugin.request.request import backend_settings
from lodestar.processing import secrets


def _profile_files():
    return [p for p in Path(QgsApplication.qgisSettingsDirPath()).rglob("*") if p.is_file()]


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
    backend = backend_settings(loaded.backend_values("openai"))
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


def test_the_planner_model_is_enough(auth_ready, monkeypatch):
    """As in lodestar:analyze: executor and verifier left empty take the planner's model; the key may also come from
    LODESTAR_API_KEY (the one lookup rule)."""
    from lodestar.ui.settings_dialog import PluginSettings

    monkeypatch.setenv(secrets.KEY_ENVIRONMENT, "sk-env-dialog-0001")
    settings = PluginSettings(base_url="http://127.0.0.1:9/v1",
                              models={"planner": "big", "executor": "", "verifier": ""})
    assert settings.openai_problem() == ""
    backend = backend_settings(settings.backend_values("openai"))
    assert backend.models == {"planner": "big", "executor": "big", "verifier": "big"}
    assert backend.api_key == "sk-env-dialog-0001"
    settings.models["planner"] = ""
    assert settings.openai_problem().startswith("Name the planner model in Lodestar settings (the gear button)")
    monkeypatch.delenv(secrets.KEY_ENVIRONMENT)
    settings.models["planner"] = "big"
    assert "API key" in settings.openai_problem()
