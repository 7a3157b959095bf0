"""The Lodestar dock panel."""
from __future__ import annotations

from qgis.gui import QgsDockWidget
from qgis.PyQt.QtWidgets import QLabel, QVBoxLayout, QWidget


class LodestarDock(QgsDockWidget):
    """Dock shell; the full geologist workflow lives in this widget."""

    def __init__(self, iface, parent=None):
        super().__init__("Lodestar", parent)
        self.iface = iface
        self.setObjectName("LodestarDock")
        body = QWidget(self)
        layout = QVBoxLayout(body)
        layout.addWidget(QLabel("Lodestar prospectivity agent"))
        self.setWidget(body)

    def shutdown(self):
        """Stop any running work before the dock is removed."""
