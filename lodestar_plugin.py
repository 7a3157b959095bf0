"""The QGIS entry class: registers the Processing provider, the toolbar button, menu and dock."""
from __future__ import annotations

from pathlib import Path

from qgis.core import Qgis, QgsApplication, QgsMessageLog
from qgis.PyQt.QtCore import Qt
from qgis.PyQt.QtGui import QIcon
from qgis.PyQt.QtWidgets import QAction, QApplication, QPushButton

from .plugin.dependencies import add_profile_packages, guidance, install_command, missing, package_of
from .plugin.errors import LodestarError
from .processing.provider import LodestarProvider

MENU = "&Lodestar"
UNLOAD_WAIT_S = 0.9
"""The longest unloading waits for a running analysis to stop (it is cancelled; QGIS must not freeze on it)."""
ICON_PATH = str(Path(__file__).resolve().parent / "resources" / "icons" / "lodestar.svg")


class LodestarPlugin:
    """Owns everything the plugin adds to QGIS and removes all of it in `unload()`."""

    def __init__(self, iface):
        self.iface = iface
        add_profile_packages(QgsApplication.qgisSettingsDirPath())  # what *Install missing packages* installed
        self.provider: LodestarProvider | None = None
        self.dock = None
        self.action: QAction | None = None
        self.sample_action: QAction | None = None

    def initProcessing(self):  # noqa: N802 (QGIS API name)
        """Register the Processing provider (also called headless by qgis_process)."""
        if self.provider is None:
            self.provider = LodestarProvider()
            QgsApplication.processingRegistry().addProvider(self.provider)

    def initGui(self):  # noqa: N802 (QGIS API name)
        self.initProcessing()
        self.action = QAction(QIcon(ICON_PATH), "Lodestar prospectivity agent", self.iface.mainWindow())
        self.action.setObjectName("lodestarShowDock")
        self.action.setCheckable(True)
        self.action.toggled.connect(self._show_dock)
        self.iface.addToolBarIcon(self.action)
        self.iface.addPluginToMenu(MENU, self.action)
        self.sample_action = QAction("Load the sample case (porphyry demo)", self.iface.mainWindow())
        self.sample_action.setObjectName("lodestarLoadSample")
        self.sample_action.triggered.connect(lambda *_: self.load_sample())
        self.iface.addPluginToMenu(MENU, self.sample_action)
        required = missing(required=True)
        if required:  # said once, in words, with the command to copy; the panel has it too
            self._say_missing(required)

    def _say_missing(self, packages) -> None:
        """One message-bar warning naming the missing packages and the command, with a Copy command button."""
        text = f"{guidance(packages)} The Lodestar panel (toolbar button) can also install them."
        QgsMessageLog.logMessage(text, "Lodestar", Qgis.Warning)
        bar = self.iface.messageBar()
        item = bar.createMessage("Lodestar", text)
        button = QPushButton("Copy command", item)
        button.setObjectName("lodestarCopyCommand")
        button.clicked.connect(lambda *_: QApplication.clipboard().setText(install_command(packages)))
        item.layout().addWidget(button)
        bar.pushWidget(item, Qgis.Warning)

    def load_sample(self) -> dict:
        """Add the bundled sample case's layers to the project and open the dock on them; returns the layers by
        name ({} when a package it needs is missing: the dock then says what to install)."""
        try:
            from .ui.sample_case import load_sample
        except ImportError as exc:
            if package_of(exc) is None:
                raise
            self.action.setChecked(True)
            return {}
        try:
            layers = load_sample()
        except LodestarError as exc:
            self.iface.messageBar().pushCritical("Lodestar", str(exc))
            return {}
        self.action.setChecked(True)
        return layers

    def _ensure_dock(self):
        if self.dock is None:
            self.dock = self._new_dock()
            self.dock.visibilityChanged.connect(self._sync_action)
            self.iface.addDockWidget(Qt.RightDockWidgetArea, self.dock)
        return self.dock

    def _new_dock(self):
        """The Lodestar dock; in its place, when a package it needs is missing, the panel that says what to install
        (never a Python error): a missing package found before, or one whose import fails while the dock loads."""
        from .ui.dependencies_panel import MissingPackagesDock, optional_packages_box

        required = missing(required=True)
        if not required:
            try:
                from .ui.dock import LodestarDock

                dock = LodestarDock(self.iface, self.iface.mainWindow())
            except ImportError as exc:
                if package_of(exc) is None:
                    raise
                required = [package_of(exc)]
            else:
                optional = missing(required=False)
                if optional:
                    dock.ui.mainLayout.insertWidget(1, optional_packages_box(optional, dock.body))
                return dock
        return MissingPackagesDock(required, self.iface.mainWindow())

    def _show_dock(self, visible: bool):
        if visible or self.dock is not None:
            self._ensure_dock().setVisible(visible)

    def _sync_action(self, visible: bool):
        if self.action is not None and self.action.isChecked() != visible:
            self.action.setChecked(visible)

    def unload(self):
        if self.dock is not None:
            self.dock.shutdown(timeout_s=UNLOAD_WAIT_S)
            self.iface.removeDockWidget(self.dock)
            self.dock.deleteLater()
            self.dock = None
        if self.sample_action is not None:
            self.iface.removePluginMenu(MENU, self.sample_action)
            self.sample_action.deleteLater()
            self.sample_action = None
        if self.action is not None:
            self.iface.removePluginMenu(MENU, self.action)
            self.iface.removeToolBarIcon(self.action)
            self.action.deleteLater()
            self.action = None
        if self.provider is not None:
            QgsApplication.processingRegistry().removeProvider(self.provider)
            self.provider = None
