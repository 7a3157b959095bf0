"""The QGIS entry class: registers the Processing provider, the toolbar button, menu and dock."""
from __future__ import annotations

from pathlib import Path

from qgis.core import QgsApplication
from qgis.PyQt.QtCore import Qt
from qgis.PyQt.QtGui import QIcon
from qgis.PyQt.QtWidgets import QAction

from ..processing.provider import LodestarProvider

MENU = "&Lodestar"
UNLOAD_WAIT_S = 0.9
"""The longest unloading waits for a running analysis to stop (it is cancelled; QGIS must not freeze on it)."""
ICON_PATH = str(Path(__file__).resolve().parents[1] / "resources" / "icons" / "lodestar.svg")


class LodestarPlugin:
    """Owns everything the plugin adds to QGIS and removes all of it in `unload()`."""

    def __init__(self, iface):
        self.iface = iface
        self.provider: LodestarProvider | None = None
        self.dock = None
        self.action: QAction | None = None

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

    def _ensure_dock(self):
        if self.dock is None:
            from ..ui.dock import LodestarDock

            self.dock = LodestarDock(self.iface, self.iface.mainWindow())
            self.dock.visibilityChanged.connect(self._sync_action)
            self.iface.addDockWidget(Qt.RightDockWidgetArea, self.dock)
        return self.dock

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
        if self.action is not None:
            self.iface.removePluginMenu(MENU, self.action)
            self.iface.removeToolBarIcon(self.action)
            self.action.deleteLater()
            self.action = None
        if self.provider is not None:
            QgsApplication.processingRegistry().removeProvider(self.provider)
            self.provider = None
