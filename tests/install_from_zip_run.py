"""Install the plugin zip into a fresh QGIS profile through the plugin manager's own code, and print what it did
as JSON (run in its own process: `python install_from_zip_run.py ZIP PROFILE_DIR`).

As QGIS desktop does at start-up (QgsPythonUtils), the profile's `python/plugins` folder becomes
`qgis.utils.home_plugin_path` and a plugin path on sys.path; then `pyplugin_installer`'s
`QgsPluginInstaller.installFromZipFile` (*Plugins > Manage and Install Plugins > Install from ZIP*) unzips the
file there, loads the plugin with qgis.utils.loadPlugin and starts it with startPlugin (classFactory, initGui).
The checkout itself is not on sys.path: what runs is what the zip holds.
"""
from __future__ import annotations

import json
import os
import sys
import traceback

QGIS_PYTHON = "/usr/share/qgis/python"


class PluginManager:
    """Records what the installer tells the plugin manager window."""

    def __init__(self):
        self.messages = []

    def pushMessage(self, text, level):  # noqa: N802 (QGIS API name)
        self.messages.append([str(text), int(level)])

    def clearPythonPluginMetadata(self):  # noqa: N802 (QGIS API name)
        pass

    def addPluginMetadata(self, metadata):  # noqa: N802 (QGIS API name)
        pass

    def reloadModel(self):  # noqa: N802 (QGIS API name)
        pass

    def clearRepositoryList(self):  # noqa: N802 (QGIS API name)
        pass

    def addToRepositoryList(self, repository):  # noqa: N802 (QGIS API name)
        pass


class Iface:
    """The part of QgisInterface the installer and the plugin use, on a real main window."""

    def __init__(self, window, canvas, bar):
        self.window, self.canvas, self.bar, self.manager = window, canvas, bar, PluginManager()

    def mainWindow(self):  # noqa: N802 (QGIS API name)
        return self.window

    def mapCanvas(self):  # noqa: N802 (QGIS API name)
        return self.canvas

    def messageBar(self):  # noqa: N802 (QGIS API name)
        return self.bar

    def pluginManagerInterface(self):  # noqa: N802 (QGIS API name)
        return self.manager

    def addDockWidget(self, area, dock):  # noqa: N802 (QGIS API name)
        self.window.addDockWidget(area, dock)

    def removeDockWidget(self, dock):  # noqa: N802 (QGIS API name)
        self.window.removeDockWidget(dock)

    def addToolBarIcon(self, action):  # noqa: N802 (QGIS API name)
        self.window.addAction(action)

    def removeToolBarIcon(self, action):  # noqa: N802 (QGIS API name)
        self.window.removeAction(action)

    def addPluginToMenu(self, menu, action):  # noqa: N802 (QGIS API name)
        pass

    def removePluginMenu(self, menu, action):  # noqa: N802 (QGIS API name)
        pass


def main(zip_path: str, profile: str) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    shown = []
    from qgis.core import QgsApplication, QgsSettings
    from qgis.PyQt.QtCore import QCoreApplication, QSettings

    # settings in the profile folder, as QGIS desktop keeps them (never the user's own)
    QCoreApplication.setOrganizationName("QGIS")
    QCoreApplication.setApplicationName("QGIS3")
    QSettings.setDefaultFormat(QSettings.IniFormat)
    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, profile)
    app = QgsApplication([], True, profile)
    app.initQgis()
    import qgis.utils
    from qgis.gui import QgsMapCanvas, QgsMessageBar
    from qgis.PyQt.QtWidgets import QMainWindow

    home = os.path.join(QgsApplication.qgisSettingsDirPath(), "python", "plugins")
    qgis.utils.home_plugin_path = home
    qgis.utils.plugin_paths = [home]
    sys.path[:0] = [home, QGIS_PYTHON]
    QgsSettings().setValue("app/plugin_installer/checkOnStart", False)  # no network
    window = QMainWindow()
    iface = Iface(window, QgsMapCanvas(window), QgsMessageBar(window))
    qgis.utils.iface = iface
    qgis.utils.showException = lambda *args, **kwargs: shown.append(
        "".join(traceback.format_exception(args[0], args[1], args[2])))
    import pyplugin_installer

    pyplugin_installer.instance().installFromZipFile(zip_path)
    report = {"home": home, "installed": sorted(os.listdir(home)) if os.path.isdir(home) else [],
              "active": list(qgis.utils.active_plugins), "messages": iface.manager.messages, "shown": shown,
              "enabled": QgsSettings().value("PythonPlugins/lodestar", False, bool)}
    plugin = qgis.utils.plugins.get("lodestar")
    if plugin is not None:
        report["module_file"] = sys.modules["lodestar"].__file__
        provider = QgsApplication.processingRegistry().providerById("lodestar")
        report["algorithms"] = sorted(alg.id() for alg in provider.algorithms()) if provider else []
        plugin.action.trigger()
        report["dock"] = type(plugin.dock).__name__
        plugin.unload()
    print("REPORT " + json.dumps(report))
    app.exitQgis()


if __name__ == "__main__":
    try:
        main(sys.argv[1], sys.argv[2])
    except BaseException:
        traceback.print_exc()
        raise SystemExit(1) from None
