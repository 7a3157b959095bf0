"""The Ask tab's steering of the evidence model before the run: the deposit model to follow (automatic, a shipped one
or the user's own, written or copied in the deposit model form), and a warning naming each ticked layer the surface
would leave out and why (`plugin/load/precheck.py`), with the one-click fix where there is one: name the favourable
units of a unit map, written into the Favourable units field. With known deposits picked and no calibration, the
layers whose favourable side ranks the deposits below the average cell (`plugin/reason/sign_check.py`), with the
one-click fix for a raster: read it the other way (its Low box)."""
from __future__ import annotations

from qgis.PyQt.QtCore import QObject, Qt, QTimer, pyqtSignal
from qgis.PyQt.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..plugin.errors import LodestarError
from ..plugin.load.precheck import unused_layers
from ..plugin.reason.deposit_models import load_user_models, ranked_models
from ..plugin.reason.knowledge import load_knowledge
from ..plugin.reason.sign_check import sides_against_deposits
from ..plugin.request.request import parse_favourable_units
from ..processing.layer_export import source_file
from ..processing.mapping_params import AUTOMATIC_LABEL, user_models_folder
from .messages import WrappedLabel
from .settings_dialog import WHERE


class SteeringOptions(QObject):
    """The deposit model row (in the map options form) and the unused-layer warning (under it) of the dock's form
    `ui`; `changed` is emitted when the model picked changes. `check(specs, question)` refreshes the warning."""

    changed = pyqtSignal()
    turn_requested = pyqtSignal(str, bool)  # a layer's name, and whether low values are to be favourable

    def __init__(self, ui):
        super().__init__(ui.mapGroup)
        self.ui = ui
        row = QWidget(ui.mapGroup)
        line = QHBoxLayout(row)
        line.setContentsMargins(0, 0, 0, 0)
        self.combo = QComboBox(row)
        self.combo.setObjectName("depositModelCombo")
        self.combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.combo.setMinimumContentsLength(6)
        self.combo.setToolTip("The deposit model the run follows: automatic (from the question's words and the "
                              "layers), or the one you pick; the Results tab gives the runner-up and why.")
        self.write_button = QToolButton(row)
        self.write_button.setText("Write...")
        self.write_button.setToolTip("Write a deposit model of your own, starting from a copy of this one")
        line.addWidget(self.combo, 1)
        line.addWidget(self.write_button)
        ui.mapForm.addRow("Deposit model", row)
        self.warning = WrappedLabel(ui.mapGroup)
        self.warning.setObjectName("unusedWarning")
        self.warning.setWordWrap(True)
        self.warning.setStyleSheet("color: #8a4b00;")
        self.fix_button = QPushButton("Name the units...", ui.mapGroup)
        self.fix_button.setObjectName("nameUnitsButton")
        ui.mapForm.addRow(self.warning)
        ui.mapForm.addRow(self.fix_button)
        self.sign_warning = WrappedLabel(ui.mapGroup)
        self.sign_warning.setObjectName("signWarning")
        self.sign_warning.setWordWrap(True)
        self.sign_warning.setStyleSheet("color: #8a4b00;")
        self.turn_button = QPushButton(ui.mapGroup)
        self.turn_button.setObjectName("turnLayerButton")
        ui.mapForm.addRow(self.sign_warning)
        ui.mapForm.addRow(self.turn_button)
        self.against: list = []
        self._checked_sides: tuple | None = None
        self.warnings: list = []
        self.problems: list = []
        self.user_models: list = []
        self._pending = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(250)
        self._timer.timeout.connect(self._check_now)
        self.combo.currentIndexChanged.connect(lambda *_: self.changed.emit())
        self.write_button.clicked.connect(lambda *_: self.write_model())
        self.fix_button.clicked.connect(lambda *_: self.name_units())
        self.turn_button.clicked.connect(lambda *_: self.turn_layer())
        self.refresh_models()
        self._show()

    # ----- the deposit model
    def refresh_models(self, select: str | None = None) -> None:
        """Fill the picker: automatic, the shipped models, the user's (files refused are said in the warning)."""
        current = select if select is not None else self.chosen()
        self.user_models, self.problems = load_user_models(user_models_folder())
        self.combo.blockSignals(True)
        self.combo.clear()
        self.combo.addItem(AUTOMATIC_LABEL, "")
        for model in load_knowledge() + self.user_models:
            self.combo.addItem(model["name"] + (" (yours)" if model.get("source") == "user" else ""), model["id"])
        self.combo.setCurrentIndex(max(0, self.combo.findData(current)))
        self.combo.blockSignals(False)
        self.changed.emit()

    def chosen(self) -> str:
        """The picked model's id; '' for automatic."""
        return self.combo.currentData() or ""

    def choose(self, model_id: str) -> None:
        self.combo.setCurrentIndex(self.combo.findData(model_id))

    def request_values(self) -> dict:
        """The request builder's keywords: the model picked and the user's models."""
        return {"deposit_model": self.chosen(), "user_models": list(self.user_models)}

    def write_model(self):
        """Open the deposit model form, starting from a copy of the model picked (or the first); on save the new
        model is loaded and picked."""
        from .deposit_model_form import DepositModelForm

        form = DepositModelForm(load_knowledge() + self.user_models, user_models_folder(), self.ui.mapGroup,
                                start=self.chosen())
        form.saved.connect(lambda _path: self.refresh_models(select=form.model_id.text().strip()))
        form.open()
        return form

    # ----- the warning before the run
    def check(self, specs: list, question: str) -> None:
        """Refresh the warning for the ticked layers `specs` and the question (after a short pause in typing)."""
        self._pending = (list(specs), question)
        self._timer.start()

    def check_now(self, specs: list, question: str) -> list:
        self._pending = (list(specs), question)
        self._check_now()
        return self.warnings

    def _check_now(self) -> None:
        if self._pending is None:
            return
        specs, question = self._pending
        try:
            units = parse_favourable_units(self.ui.unitsEdit.text(), specs, WHERE["favourable_units"])
            self.warnings = unused_layers(specs, question, units, self.chosen(), self.user_models)
        except LodestarError:
            self.warnings = []  # the dock's own checks say what is wrong with the inputs
        self._check_sides(specs, question)
        self._show()

    def _check_sides(self, specs: list, question: str) -> None:
        """The layers ranking the picked deposits below the average cell (no calibration asked for), made again
        only when the layers, question, units, model or deposits changed."""
        layer = self.ui.depositsCombo.currentLayer()
        deposits = source_file(layer) if layer is not None else None
        if deposits is None or self.ui.calibrateCheck.isChecked() or not specs:
            self.against, self._checked_sides = [], None
            return
        key = (tuple((str(s.path), s.role, s.name, s.favourable) for s in specs), question,
               self.ui.unitsEdit.text(), self.chosen(), str(deposits))
        if key == self._checked_sides:
            return
        self._checked_sides = key
        try:
            units = parse_favourable_units(self.ui.unitsEdit.text(), specs, WHERE["favourable_units"])
            model = ranked_models(question, [s.role for s in specs], [s.name for s in specs], self.chosen(),
                                  self.user_models)[0]
            self.against = sides_against_deposits(specs, deposits, model, units)
        except (LodestarError, OSError, ValueError):
            self.against = []  # the run's own checks say what is wrong with these inputs

    def turn_layer(self) -> bool:
        """Read the first raster ranking the deposits below the average cell the other way (its Low box)."""
        row = next((r for r in self.against if r["side"] in ("high", "low")), None)
        if row is None:
            return False
        self.turn_requested.emit(row["layer"], row["side"] == "high")
        return True

    def _show(self) -> None:
        lines = [f"{row['layer']} will not be used: {row['reason']}" for row in self.warnings]
        lines += [f"A deposit model of yours was not loaded: {problem}" for problem in self.problems]
        self.warning.setText("\n".join(lines))
        self.warning.setVisible(bool(lines))
        self.fix_button.setVisible(bool(self._fixable()))
        lines = [row["why"] for row in self.against]
        self.sign_warning.setText("\n".join(lines + ["Read it the other way, or leave it and let the run say so."
                                                      if lines else ""]).strip())
        self.sign_warning.setVisible(bool(lines))
        turnable = next((r for r in self.against if r["side"] in ("high", "low")), None)
        if turnable is not None:
            other = "low" if turnable["side"] == "high" else "high"
            self.turn_button.setText(f"Read {turnable['layer']} with {other} values favourable")
        self.turn_button.setVisible(turnable is not None)

    def _fixable(self) -> list:
        """The warned layers whose fix is naming their favourable units (unit maps with a legend of names)."""
        return [row for row in self.warnings if row["units"] and "name the favourable units" in row["reason"]]

    def name_units(self, chosen: dict | None = None) -> bool:
        """Name the favourable units of the first fixable layer: `chosen` ({layer: [units]}) as given, else picked
        in a dialog listing its legend's units; they are written into the Favourable units field."""
        fixable = self._fixable()
        if not fixable:
            return False
        if chosen is None:
            row = fixable[0]
            picked = pick_units(row["layer"], row["units"], self.ui.mapGroup)
            if not picked:
                return False
            chosen = {row["layer"]: picked}
        entries = [e.strip() for e in self.ui.unitsEdit.text().split(";") if e.strip()]
        entries = [e for e in entries if e.partition(":")[0].strip() not in chosen or ":" not in e]
        entries += [f"{layer}: {', '.join(units)}" for layer, units in chosen.items()]
        self.ui.unitsEdit.setText("; ".join(entries))
        return True


def pick_units(layer: str, units: list, parent=None) -> list:
    """The units ticked in a dialog listing `units` (the legend of `layer`); [] when cancelled."""
    dialog = QDialog(parent)
    dialog.setWindowTitle(f"Favourable units of {layer}")
    layout = QVBoxLayout(dialog)
    layout.addWidget(QLabel("Tick the units that host the deposits (the host rocks):", dialog))
    listing = QListWidget(dialog)
    for unit in units:
        item = QListWidgetItem(unit, listing)
        item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
        item.setCheckState(Qt.Unchecked)
    layout.addWidget(listing)
    buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel, dialog)
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    layout.addWidget(buttons)
    if not dialog.exec_():
        return []
    return [listing.item(i).text() for i in range(listing.count()) if listing.item(i).checkState() == Qt.Checked]
