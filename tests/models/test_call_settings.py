"""The model-call settings of the Settings dialog (timeout, attempts, deadline, answer tokens, vision per role,
structured output): kept in QgsSettings and handed to the engine by the one request builder (issue 17; issue 13
item 10)."""
from __future__ import annotations

from lodestar.plugin.request.request import backend_settings


def test_call_settings_round_trip_to_the_engine(auth_ready):
    from lodestar.ui.settings_dialog import PluginSettings, SettingsDialog

    dialog = SettingsDialog()
    try:
        assert [dialog.structuredCombo.itemText(i) for i in range(dialog.structuredCombo.count())] == \
            ["auto", "json_schema", "json_object", "off"]
        dialog.baseUrlEdit.setText("http://127.0.0.1:9/v1")
        dialog.plannerModelEdit.setText("smollm2")
        dialog.timeoutSpin.setValue(42)
        dialog.attemptsSpin.setValue(2)
        dialog.deadlineSpin.setValue(90)
        dialog.answerTokensSpin.setValue(700)
        dialog.executorVisionCombo.setCurrentText("no")
        dialog.verifierVisionCombo.setCurrentText("yes")
        dialog.structuredCombo.setCurrentText("json_object")
        dialog.save()
    finally:
        dialog.deleteLater()
    loaded = PluginSettings.load()
    assert (loaded.timeout_s, loaded.attempts, loaded.deadline_s, loaded.answer_tokens, loaded.structured) == \
        (42.0, 2, 90.0, 700, "json_object")
    assert loaded.vision == {"executor": "no", "verifier": "yes"}
    settings = backend_settings(loaded.backend_values("openai", api_key=""))
    assert (settings.timeout_s, settings.max_retries, settings.deadline_s, settings.structured) == \
        (42.0, 1, 90.0, "json_object")
    assert settings.answer_tokens == {role: 700 for role in ("planner", "executor", "verifier", "localization",
                                                             "evidence")}
    assert settings.vision == {"executor": "no", "verifier": "yes"}
    again = SettingsDialog()
    try:
        assert (again.timeoutSpin.value(), again.executorVisionCombo.currentText(),
                again.structuredCombo.currentText()) == (42.0, "no", "json_object")
        again.answerTokensSpin.setValue(0)
        again.save()
    finally:
        again.deleteLater()
    assert backend_settings(PluginSettings.load().backend_values("openai", api_key="")).answer_tokens == {}
