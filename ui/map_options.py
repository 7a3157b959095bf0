"""The Ask tab's prospectivity-map options: the target area share, known deposits, calibration and favourable units,
checked and turned into the request builder's values (the same core rules as lodestar:analyze's)."""
from __future__ import annotations

from qgis.core import QgsMapLayerProxyModel
from qgis.PyQt.QtCore import QObject, pyqtSignal
from qgis.PyQt.QtWidgets import QDoubleSpinBox

from ..plugin.dependencies import BY_MODULE, guidance, is_installed
from ..plugin.errors import LodestarError
from ..plugin.runs.request import CALIBRATIONS, parse_favourable_units
from ..processing.layer_export import layer_path
from .settings_dialog import WHERE

NEEDS_SKLEARN = ("logistic", "forest", "boosting", "best")
"""The calibrations that fit a scikit-learn model (the best out of fold compares all four)."""


def largest_target_spin(parent) -> QDoubleSpinBox:
    """The largest target in km²; 0 shows as "footprint": the size of one system of the deposit model."""
    spin = QDoubleSpinBox(parent)
    spin.setObjectName("maxTargetSpin")
    spin.setDecimals(1)
    spin.setRange(0.0, 10000.0)
    spin.setSingleStep(10.0)
    spin.setSuffix(" km²")
    spin.setSpecialValueText("footprint")
    spin.setToolTip("The largest target: a bigger patch of the top share is split at its peaks. The deposit model's "
                    "footprint is one system's size (25 km² for a porphyry system, 250 km² for an orogenic gold camp).")
    return spin


class MapOptions(QObject):
    """The options' widgets of the dock's form `ui`; `changed` is emitted whenever one of them changes."""

    changed = pyqtSignal()

    def __init__(self, ui):
        super().__init__(ui.mapGroup)
        self.ui = ui
        combo = ui.depositsCombo
        combo.setFilters(QgsMapLayerProxyModel.PointLayer)
        combo.setAllowEmptyLayer(True)
        combo.setLayer(None)
        for key, label in CALIBRATIONS:
            if key:
                ui.calibrationCombo.addItem(label, key)
        combo.layerChanged.connect(self._changed)
        ui.calibrateCheck.toggled.connect(self._changed)
        ui.unitsEdit.textChanged.connect(self._changed)
        ui.areaShareSpin.valueChanged.connect(self._changed)
        self.largest = largest_target_spin(ui.mapGroup)
        ui.mapForm.insertRow(1, "Largest target", self.largest)
        self.largest.valueChanged.connect(self._changed)
        self._enable()

    def _changed(self, *_) -> None:
        self._enable()
        self.changed.emit()

    def _enable(self) -> None:
        self.ui.calibrationCombo.setEnabled(self.ui.calibrateCheck.isChecked() and self.ui.mapGroup.isEnabled())

    def set_enabled(self, enabled: bool) -> None:
        self.ui.mapGroup.setEnabled(enabled)
        self._enable()

    def deposits(self):
        """The picked deposits layer, or None."""
        return self.ui.depositsCombo.currentLayer()

    def set_deposits(self, layer) -> None:
        self.ui.depositsCombo.setLayer(layer)

    def set_calibration(self, method: str) -> None:
        """Tick (a CALIBRATIONS key) or untick ('') the calibration, as the user would."""
        if method:
            self.ui.calibrationCombo.setCurrentIndex(self.ui.calibrationCombo.findData(method))
        self.ui.calibrateCheck.setChecked(bool(method))

    def calibration(self) -> str:
        return self.ui.calibrationCombo.currentData() if self.ui.calibrateCheck.isChecked() else ""

    def problem(self, specs: list) -> str:
        """What stops a run in these options, said as what to do ('' when none); `specs`: the checked layers."""
        if self.calibration() and self.deposits() is None:
            return "Pick the known deposits (a point layer) to calibrate with, or untick the calibration."
        if self.calibration() in NEEDS_SKLEARN and not is_installed("sklearn"):
            return (f"Calibration by {self.ui.calibrationCombo.currentText()} needs scikit-learn (weights of evidence "
                    f"does not). {guidance([BY_MODULE['sklearn']])}")
        try:
            parse_favourable_units(self.ui.unitsEdit.text(), specs, WHERE["favourable_units"])
        except LodestarError as exc:
            return str(exc)
        return ""

    def request_values(self, folder) -> dict:
        """The request builder's keywords; a deposits layer that is not a whole file is written into `folder`."""
        layer = self.deposits()
        return {"deposits": layer_path(layer, folder) if layer is not None else None, "calibrate": self.calibration(),
                "area_share": self.ui.areaShareSpin.value() / 100.0,
                "max_target_km2": self.largest.value() or None, "favourable_units": self.ui.unitsEdit.text()}
