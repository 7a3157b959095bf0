"""A deposit model written or copied by the geologist: a form over the knowledge base's model schema, saved as JSON in
the user's profile (QGIS profile folder/lodestar/deposit_models/<id>.json) and loaded like the shipped models.

The form starts from a copy of a model (shipped or the user's): its id and name, the question words that name it,
its host units, its critical and secondary evidence (id, level, kind, the layer roles that test it, its reach in
metres, what it is), the weight of each role in the favourability surface, the fault distance (midpoint and spread in
metres) and the footprint of one system (km2). What the form does not show (alteration zoning, spectral signatures,
localization settings) is kept from the model copied. Saving checks the model as the shipped ones are checked and says
what to fix."""
from __future__ import annotations

import copy

from qgis.PyQt.QtCore import pyqtSignal
from qgis.PyQt.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from ..plugin.errors import LodestarError
from ..plugin.labels import identifier, role_label, role_of_words, words
from ..plugin.reason.deposit_models import save_user_model
from ..plugin.reason.knowledge import EVIDENCE_KINDS
from ..plugin.roles import ROLES

EVIDENCE_HEADERS = ("Evidence", "Level", "Kind", "Layer roles (comma-separated)", "Reach (m)", "What")
LEVELS = ("critical", "secondary")


def _words(text: str) -> list:
    return [w.strip() for w in text.split(",") if w.strip()]


class DepositModelForm(QDialog):
    """The form; `models`: the models it may start from (shipped, then the user's); `folder`: where it saves.
    `saved(path)` is emitted once a model is written."""

    saved = pyqtSignal(str)

    def __init__(self, models: list, folder, parent=None, start: str = ""):
        super().__init__(parent)
        self.setWindowTitle("Lodestar: write a deposit model")
        self.models = [dict(m) for m in models]
        self.folder = folder
        self.saved_path = None
        layout = QVBoxLayout(self)
        self._build_form(layout)
        self._build_evidence(layout)
        self._build_weights(layout)
        self.problem = QLabel(self)
        self.problem.setWordWrap(True)
        self.problem.setObjectName("modelProblem")
        layout.addWidget(self.problem)
        buttons = QDialogButtonBox(QDialogButtonBox.Save | QDialogButtonBox.Cancel, self)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.start.currentIndexChanged.connect(lambda *_: self.copy_from(self.start.currentData()))
        index = self.start.findData(start)
        self.start.setCurrentIndex(max(0, index))
        self.copy_from(self.start.currentData())

    def _build_form(self, layout: QVBoxLayout) -> None:
        """The model's fields: the model copied, id, name, question words, hosts, fault distance and footprint."""
        form = QFormLayout()
        self.start = QComboBox(self)
        for model in self.models:
            self.start.addItem(model["name"] + (" (yours)" if model.get("source") == "user" else ""), model["id"])
        self.model_id = QLineEdit(self)
        self.model_id.setPlaceholderText("e.g. my_carlin (lower-case letters, digits, _)")
        self.name = QLineEdit(self)
        self.keywords = QLineEdit(self)
        self.hosts = QLineEdit(self)
        self.fault_mid = self._spin(0, 100_000, 0, " m")
        self.fault_spread = self._spin(0.1, 20, 1)
        self.footprint = self._spin(0, 100_000, 1, " km2")
        self.footprint_of = QLineEdit(self)
        form.addRow("Start from a copy of", self.start)
        form.addRow("Id", self.model_id)
        form.addRow("Name", self.name)
        form.addRow("Words that name it in a question", self.keywords)
        form.addRow("Host units (names or codes)", self.hosts)
        fault = QHBoxLayout()
        fault.addWidget(self.fault_mid)
        fault.addWidget(QLabel("spread", self))
        fault.addWidget(self.fault_spread)
        form.addRow("Fault distance midpoint", fault)
        form.addRow("Footprint of one system", self.footprint)
        form.addRow("Footprint: of what", self.footprint_of)
        layout.addLayout(form)

    def _build_evidence(self, layout: QVBoxLayout) -> None:
        """The evidence table, with Add evidence and Remove selected below it."""
        layout.addWidget(QLabel("Evidence (critical evidence must hold for a deposit; secondary supports it):", self))
        self.evidence = QTableWidget(0, len(EVIDENCE_HEADERS), self)
        self.evidence.setHorizontalHeaderLabels(EVIDENCE_HEADERS)
        self.evidence.horizontalHeader().setStretchLastSection(True)
        self.evidence.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        layout.addWidget(self.evidence)
        rows = QHBoxLayout()
        add, remove = QPushButton("Add evidence", self), QPushButton("Remove selected", self)
        add.clicked.connect(lambda *_: self.add_evidence({"level": "secondary", "kind": "anomaly", "roles": []}))
        remove.clicked.connect(lambda *_: self.evidence.removeRow(self.evidence.currentRow()))
        rows.addWidget(add)
        rows.addWidget(remove)
        rows.addStretch(1)
        layout.addLayout(rows)

    def _build_weights(self, layout: QVBoxLayout) -> None:
        """The table of each layer role's weight in the favourability surface."""
        layout.addWidget(QLabel("Weight of each layer role in the favourability surface (0: not used):", self))
        self.weights = QTableWidget(len(ROLES), 2, self)
        self.weights.setHorizontalHeaderLabels(("Role", "Weight"))
        self.weights.horizontalHeader().setStretchLastSection(True)
        for i, role in enumerate(ROLES):
            self.weights.setItem(i, 0, QTableWidgetItem(role_label(role)))
            self.weights.setCellWidget(i, 1, self._spin(0, 10, 2))
        layout.addWidget(self.weights)

    def _spin(self, low, high, decimals, suffix="") -> QDoubleSpinBox:
        spin = QDoubleSpinBox(self)
        spin.setRange(low, high)
        spin.setDecimals(decimals)
        spin.setSuffix(suffix)
        return spin

    def copy_from(self, model_id: str) -> None:
        """Fill the form with a copy of the model `model_id` (its id and name marked as a copy)."""
        self.base = copy.deepcopy(next(m for m in self.models if m["id"] == model_id))
        self.model_id.setText(f"my_{self.base['id']}"[:64] if self.base.get("source") != "user" else self.base["id"])
        self.name.setText(self.base["name"] if self.base.get("source") == "user" else f"{self.base['name']} (mine)")
        self.keywords.setText(", ".join(self.base.get("keywords", [])))
        self.hosts.setText(", ".join(self.base.get("favourable_units", [])))
        settings = self.base.get("favourability") or {}
        fault = settings.get("fault_distance_m") or {}
        self.fault_mid.setValue(float(fault.get("midpoint", 2000)))
        self.fault_spread.setValue(float(fault.get("spread", 3)))
        footprint = self.base.get("footprint") or {}
        self.footprint.setValue(float(footprint.get("km2", 0)))
        self.footprint_of.setText(footprint.get("of", ""))
        self.evidence.setRowCount(0)
        for item in self.base.get("evidence", []):
            self.add_evidence(item)
        weights = settings.get("weights") or {}
        for i, role in enumerate(ROLES):
            self.weights.cellWidget(i, 1).setValue(float(weights.get(role, 0 if weights else 1)))

    def add_evidence(self, item: dict) -> None:
        row = self.evidence.rowCount()
        self.evidence.insertRow(row)
        self.evidence.setItem(row, 0, QTableWidgetItem(words(item.get("id", f"item {row + 1}"))))
        for column, options, value in ((1, LEVELS, item.get("level")), (2, EVIDENCE_KINDS, item.get("kind"))):
            combo = QComboBox(self.evidence)
            for option in options:
                combo.addItem(words(option), option)
            combo.setCurrentIndex(max(0, combo.findData(value or options[0])))
            self.evidence.setCellWidget(row, column, combo)
        self.evidence.setItem(row, 3, QTableWidgetItem(", ".join(words(r) for r in item.get("roles", []))))
        self.evidence.setItem(row, 4, QTableWidgetItem(f"{item['near_m']:g}" if "near_m" in item else ""))
        self.evidence.setItem(row, 5, QTableWidgetItem(item.get("what", "")))

    def model(self) -> dict:
        """The model the form shows (raises LodestarError when a reach is not a number)."""
        model = copy.deepcopy(self.base)
        for key in ("source", "score", "testable", "names", "chosen"):
            model.pop(key, None)
        earlier = {item["id"]: item for item in self.base.get("evidence", [])}
        evidence = []
        for row in range(self.evidence.rowCount()):
            item_id = identifier(self.evidence.item(row, 0).text() if self.evidence.item(row, 0) else "")
            item = {k: v for k, v in earlier.get(item_id, {}).items() if k not in ("near_m",)}
            reach = self.evidence.item(row, 4).text().strip() if self.evidence.item(row, 4) else ""
            try:
                near = {"near_m": float(reach)} if reach else {}
            except ValueError:
                raise LodestarError(f"Evidence {item_id or row + 1}: the reach must be a number of metres, not "
                                    f"{reach!r}.") from None
            if near and near["near_m"] != earlier.get(item_id, {}).get("near_m"):  # the copied source is not for it
                item["source"] = f"near_m {near['near_m']:g}: set by the user"
            item.update(id=item_id, level=self.evidence.cellWidget(row, 1).currentData(),
                        kind=self.evidence.cellWidget(row, 2).currentData(),
                        roles=[role_of_words(r) for r in _words(self.evidence.item(row, 3).text()
                                                                if self.evidence.item(row, 3) else "")],
                        what=self.evidence.item(row, 5).text() if self.evidence.item(row, 5) else "", **near)
            evidence.append(item)
        weights = {role: self.weights.cellWidget(i, 1).value() for i, role in enumerate(ROLES)
                   if self.weights.cellWidget(i, 1).value() > 0}
        model.update(id=self.model_id.text().strip(), name=self.name.text().strip() or self.model_id.text().strip(),
                     keywords=_words(self.keywords.text()), favourable_units=_words(self.hosts.text()),
                     evidence=evidence)
        base = self.base.get("favourability") or {}
        fault = {"midpoint": self.fault_mid.value(), "spread": self.fault_spread.value()}
        base_fault = base.get("fault_distance_m") or {}
        model["favourability"] = {  # a copied source stays only beside the numbers it is for
            "weights": weights, "source": _kept_source(base, base.get("weights") == weights),
            "fault_distance_m": dict(fault, source=_kept_source(
                base_fault, {k: v for k, v in base_fault.items() if k != "source"} == fault))}
        if self.footprint.value() > 0:
            model["footprint"] = dict(model.get("footprint") or {}, km2=self.footprint.value(),
                                      of=self.footprint_of.text().strip() or "one system",
                                      source=(model.get("footprint") or {}).get("source", "set by the user"))
        else:
            model.pop("footprint", None)
        return model

    def save(self):
        """Check and write the model; a problem is shown in the form, which stays open."""
        try:
            self.saved_path = save_user_model(self.model(), self.folder)
        except (LodestarError, OSError) as exc:
            self.problem.setText(str(exc))
            return None
        self.saved.emit(str(self.saved_path))
        self.accept()
        return self.saved_path


def _kept_source(copied: dict, same: bool) -> str:
    """The copied entry's source when the form keeps its numbers (`same`), else 'set by the user'."""
    return copied["source"] if same and copied.get("source") else "set by the user"
