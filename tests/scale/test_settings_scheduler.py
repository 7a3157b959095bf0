"""The dock's Settings: the Dask scheduler field, kept in QgsSettings (empty: local threads)."""
from __future__ import annotations

from qgis.core import QgsSettings


def test_the_dask_scheduler_field_is_saved_and_shown_again(auth_ready):
    from lodestar.ui.settings_dialog import PREFIX, PluginSettings, SettingsDialog

    assert PluginSettings().dask_scheduler == ""
    dialog = SettingsDialog()
    try:
        assert dialog.daskSchedulerLabel.text() == "Dask scheduler"
        dialog.show_settings(PluginSettings.load())
        dialog.daskSchedulerEdit.setText("  tcp://10.0.0.5:8786 ")
        assert dialog.settings().dask_scheduler == "tcp://10.0.0.5:8786"
        dialog.save()
    finally:
        dialog.deleteLater()
    assert QgsSettings().value(PREFIX + "dask_scheduler") == "tcp://10.0.0.5:8786"
    assert PluginSettings.load().dask_scheduler == "tcp://10.0.0.5:8786"
    again = SettingsDialog()
    try:
        again.show_settings(PluginSettings.load())
        assert again.daskSchedulerEdit.text() == "tcp://10.0.0.5:8786"
        again.daskSchedulerEdit.clear()
        again.save()
    finally:
        again.deleteLater()
    assert PluginSettings.load().dask_scheduler == ""
