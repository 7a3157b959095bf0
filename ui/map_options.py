"""The Ask tab's prospectivity-map options: the target area share, known deposits, calibration (with its
cross-validation blocks, folds and seed) and favourable units, checked and turned into the request builder's values
(the same core rules as lodestar:analyze's)."""
from __future__ import annotations

from qgis.core import QgsMapLayerProxyModel
from qgis.PyQt.QtCore import QObject, pyqtSignal
from qgis.PyQt.QtWidgets import QDoubleSpinBox, QSpinBox

from ..plugin.dependencies import BY_MODULE, guidance, is_installed
from ..plugin.errors import LodestarError
from ..plugin.map.target_sizes import WORK_LIST
from ..plugin.request.request import CALIBRATIONS, MAX_FOLDS, parse_favourable_units
from ..processing.layer_export import layer_path
from .settings_dialog import WHERE

NEEDS_SKLEARN = ("logistic", "forest", "boosting", "best")
"""The calibrations that fit a scikit-learn model (the best out of fold compares all four)."""
MAX_SEED = 999_999
"""The largest seed the dock offers (lodestar:analyze takes any up to 2^31 - 1)."""


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
                    "footprint is one camp's size (250 km² for an orogenic gold camp, 491 km² for a cluster of "
                    "porphyry systems); a target larger than one deposit's footprint holds its prospects.")
    return spin


def smallest_target_spin(parent) -> QDoubleSpinBox:
    """The smallest target in km²; 0 shows as "auto": a quarter of one deposit's footprint (`target_sizes`)."""
    spin = QDoubleSpinBox(parent)
    spin.setObjectName("minTargetSpin")
    spin.setDecimals(2)
    spin.setRange(0.0, 10000.0)
    spin.setSingleStep(0.25)
    spin.setSuffix(" km²")
    spin.setSpecialValueText("auto")
    spin.setToolTip("The smallest target: a smaller piece joins the target it touches, or is dropped (the notes "
                    "count them). Auto: a quarter of one deposit's footprint, lowered where the top share could not "
                    "hold the targets drawn that large; never under 4 analysis cells.")
    return spin


def targets_drawn_spin(parent) -> QSpinBox:
    """How many targets are drawn: the work list."""
    spin = QSpinBox(parent)
    spin.setObjectName("maxTargetsSpin")
    spin.setRange(1, 1000)
    spin.setValue(WORK_LIST)
    spin.setToolTip("The best this many targets are drawn, each with its prospects; the rest of the top share stays "
                    "in the favourability surface (the notes say how much and what it holds).")
    return spin


class CrossValidation:
    """The calibration's spatial block cross-validation, three rows of the form: block side (0 shows as "auto": 10 km,
    or an eighth of the extent when smaller), folds and seed, as lodestar:analyze's BLOCK_SIZE_M, FOLDS and SEED."""

    def __init__(self, parent):
        self.block = QDoubleSpinBox(parent)
        self.block.setObjectName("blockSizeSpin")
        self.block.setDecimals(1)
        self.block.setRange(0.0, 1000.0)
        self.block.setSuffix(" km")
        self.block.setSpecialValueText("auto")
        self.block.setToolTip("Side of the square blocks dealt to the cross-validation folds; the default is 10 km, "
                              "or an eighth of the extent's shorter side when smaller. Larger blocks keep "
                              "neighbouring deposits of one system out of each other's folds.")
        self.folds = QSpinBox(parent)
        self.folds.setObjectName("foldsSpin")
        self.folds.setRange(2, MAX_FOLDS)
        self.folds.setValue(5)
        self.folds.setToolTip(f"Spatial folds (2 to {MAX_FOLDS}): each is predicted by models fitted on the others.")
        self.seed = QSpinBox(parent)
        self.seed.setObjectName("seedSpin")
        self.seed.setRange(0, MAX_SEED)
        self.seed.setToolTip("Fixes how the blocks are dealt to folds and the background sample; another seed shows "
                             "how far the figures rest on one draw.")

    def add_rows(self, form, row: int) -> None:
        for offset, (label, widget) in enumerate((("Calibration blocks", self.block), ("Folds", self.folds),
                                                  ("Seed", self.seed))):
            form.insertRow(row + offset, label, widget)

    def set_enabled(self, enabled: bool) -> None:
        for widget in (self.block, self.folds, self.seed):
            widget.setEnabled(enabled)

    def connect(self, slot) -> None:
        for widget in (self.block, self.folds, self.seed):
            widget.valueChanged.connect(slot)

    def values(self) -> dict:
        """The request builder's cross_validation."""
        return {"block_size_m": self.block.value() * 1000.0 or None, "folds": self.folds.value(),
                "seed": self.seed.value()}


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
        self.smallest = smallest_target_spin(ui.mapGroup)
        self.count = targets_drawn_spin(ui.mapGroup)
        for row, (label, spin) in enumerate((("Largest target", self.largest), ("Smallest target", self.smallest),
                                             ("Targets drawn", self.count)), start=1):
            ui.mapForm.insertRow(row, label, spin)
            spin.valueChanged.connect(self._changed)
        self.cross_validation = CrossValidation(ui.mapGroup)
        self.cross_validation.add_rows(ui.mapForm, 6)
        self.cross_validation.connect(self._changed)
        self._enable()

    def _changed(self, *_) -> None:
        self._enable()
        self.changed.emit()

    def _enable(self) -> None:
        calibrated = self.ui.calibrateCheck.isChecked() and self.ui.mapGroup.isEnabled()
        self.ui.calibrationCombo.setEnabled(calibrated)
        self.cross_validation.set_enabled(calibrated)

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
        count = self.count.value()
        return {"deposits": layer_path(layer, folder) if layer is not None else None, "calibrate": self.calibration(),
                "area_share": self.ui.areaShareSpin.value() / 100.0,
                "max_target_km2": self.largest.value() or None, "min_target_km2": self.smallest.value() or None,
                "max_targets": count if count != WORK_LIST else None,  # the default, as headless runs give it
                "favourable_units": self.ui.unitsEdit.text(),
                "cross_validation": self.cross_validation.values()}
