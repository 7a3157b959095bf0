"""Load the plugin as QGIS does with one Python package hidden, and print what a user would see as JSON.

Run in its own process (`python hidden_package_run.py rasterio PROFILE_DIR`): a test process has the package
imported already. An import hook (a sys.meta_path finder) refuses the package and its submodules the way Python
refuses a package that is not installed; qgis.utils loads and starts the plugin from build/testpkg with a small
interface on a real main window, any error QGIS would show (qgis.utils.showException, sys.excepthook, a Python error
in the log) is recorded, the toolbar button is pressed and the dock's texts are read.
"""
from __future__ import annotations

import importlib.abc
import json
import os
import sys
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HIDDEN = sys.argv[1]


class Iface:
    """The part of QgisInterface the plugin uses, on a real main window."""

    def __init__(self, window, canvas, bar):
        self.window, self.canvas, self.bar = window, canvas, bar

    def mainWindow(self):  # noqa: N802 (QGIS API name)
        return self.window

    def mapCanvas(self):  # noqa: N802 (QGIS API name)
        return self.canvas

    def messageBar(self):  # noqa: N802 (QGIS API name)
        return self.bar

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


class HidePackage(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == HIDDEN or name.startswith(HIDDEN + "."):
            raise ModuleNotFoundError(f"No module named '{name}'", name=name)
        return None


def main() -> None:
    sys.meta_path.insert(0, HidePackage())
    for entry in (str(ROOT / "build" / "testpkg"), "/usr/share/qgis/python/plugins"):
        sys.path.insert(0, entry)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    shown = []
    sys.excepthook = lambda *exc: shown.append("".join(traceback.format_exception(*exc)))

    from qgis.core import QgsApplication
    from qgis.PyQt.QtCore import QCoreApplication, QSettings

    # settings in the profile folder, as QGIS desktop keeps them (never the user's own)
    QCoreApplication.setOrganizationName("QGIS")
    QCoreApplication.setApplicationName("QGIS3")
    QSettings.setDefaultFormat(QSettings.IniFormat)
    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, sys.argv[2])
    app = QgsApplication([], True, sys.argv[2])
    app.initQgis()
    log = []
    QgsApplication.messageLog().messageReceived.connect(lambda message, tag, level: log.append([tag, message]))

    import qgis.utils
    from qgis.gui import QgsMapCanvas, QgsMessageBar
    from qgis.PyQt.QtWidgets import QApplication, QGroupBox, QLabel, QLineEdit, QMainWindow, QPushButton

    window = QMainWindow()
    bar = QgsMessageBar(window)
    iface = Iface(window, QgsMapCanvas(window), bar)
    qgis.utils.iface = iface
    qgis.utils.showException = lambda *args, **kwargs: shown.append(
        "".join(traceback.format_exception(args[0], args[1], args[2])))
    loaded = qgis.utils.loadPlugin("lodestar") and qgis.utils.startPlugin("lodestar")
    report = {"loaded": bool(loaded), "algorithms": {}, "dock": None, "texts": [], "command": None}
    if loaded:
        provider = QgsApplication.processingRegistry().providerById("lodestar")
        for algorithm in provider.algorithms():
            ok, message = algorithm.canExecute()
            report["algorithms"][algorithm.id()] = {"runs": bool(ok), "message": message,
                                                    "name": algorithm.displayName()}
        plugin = qgis.utils.plugins["lodestar"]
        plugin.action.trigger()
        dock = plugin.dock
        report["dock"] = type(dock).__name__
        report["visible"] = dock is not None and not dock.isHidden()
        report["texts"] = [label.text() for label in dock.findChildren(QLabel)]
        commands = [edit.text() for edit in dock.findChildren(QLineEdit) if edit.parent().objectName() ==
                    "lodestarPackagesPanel"]
        report["command"] = commands[0] if commands else None
        boxes = [box.title() for box in dock.findChildren(QGroupBox) if box.objectName() == "lodestarOptionalPackages"]
        report["optional_box"] = boxes[0] if boxes else None
        plugin.unload()
    report["bar"] = [item.text() for item in bar.items()]
    copy = [button for item in bar.items() for button in item.findChildren(QPushButton)
            if button.objectName() == "lodestarCopyCommand"]
    QApplication.clipboard().clear()
    if copy:
        copy[0].click()
    report["copied"] = QApplication.clipboard().text()
    report["log"] = log
    report["shown"] = shown
    print("REPORT " + json.dumps(report))
    app.exitQgis()


if __name__ == "__main__":
    try:
        main()
    except BaseException:  # the excepthook records Qt slots' errors; the script's own go to stderr
        traceback.print_exc()
        raise SystemExit(1) from None
