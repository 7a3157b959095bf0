"""The Results tab's evidence weights: one row per evidence layer of the favourability surface (layer, role,
transformation, membership, weight, why, and the fitted figures when calibrated), and the layers left unused with
their reasons."""
from __future__ import annotations

from html import escape

from qgis.PyQt.QtCore import Qt
from qgis.PyQt.QtWidgets import QHeaderView, QTableWidgetItem

from ..plugin.favourability.calibration import BASIS as FITTED
from ..plugin.labels import humanize, role_label
from .table_fit import name_tip

LAYER_WIDTH_PX = 150
"""The Layer column's widest: longer names are elided in the middle (the whole name in the tooltip)."""

COLUMNS = (("layer", "Layer"), ("role", "Role"), ("transformation", "Transformation"), ("membership", "Membership"),
           ("weight", "Weight"), ("why", "Why"))
CALIBRATION_COLUMNS = (("method", "Fitted by"), ("pattern", "Pattern"), ("area_share", "Area share"),
                       ("deposits_in_pattern", "Deposits in pattern"), ("w_plus", "W+"), ("s_w_plus", "s(W+)"),
                       ("w_minus", "W-"), ("s_w_minus", "s(W-)"), ("contrast", "Contrast"),
                       ("s_contrast", "s(contrast)"), ("studentised_contrast", "Studentised contrast"),
                       ("coefficient", "Coefficient"), ("parameters", "Chosen in the folds"),
                       ("importance", "Importance (AUC drop)"), ("lowers_skill", "Lowers skill"), ("basis", "Basis"))
"""Columns of a calibrated table, shown when any row has a value in them."""


def cell_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1e-3 and value else f"{value:.3f}".rstrip("0").rstrip(".")
    return str(value)


def shown(key: str, value) -> str:
    """A cell as the table shows it: roles and the reasons in words, numbers as `cell_text`."""
    if key == "role" and value:
        return role_label(value)
    if key in ("why", "basis", "transformation") and isinstance(value, str):
        return humanize(value)
    return cell_text(value)


def columns_of(rows: list) -> list:
    """(key, header) of the table: the knowledge columns, then the calibration columns some row fills."""
    filled = [(key, header) for key, header in CALIBRATION_COLUMNS
              if any(row.get(key) not in (None, "") for row in rows)]
    return list(COLUMNS) + filled


def unused_text(unused: list, weights: list = ()) -> str:
    """The layers left out and why, for the label under the table ('' when every layer was used). With a calibrated
    run they are left out of the knowledge-driven surface only: the models fitted on the deposits weigh every
    measured layer, and a layer with a fitted row says so."""
    if not unused:
        return ""
    fitted = {row.get("layer") for row in weights if str(row.get("basis") or "").startswith(FITTED)}
    items = "".join(f"<li><b>{escape(str(row.get('layer', '')))}</b>: {escape(humanize(row.get('reason', '')))}"
                    + (" The models fitted on the deposits weigh it too (its row above)." if row.get("layer") in fitted
                       else "") + "</li>" for row in unused)
    heading = "Left out of the knowledge-driven surface" if fitted else "Layers not used"
    return f"<b>{heading}</b><ul style='margin:0'>{items}</ul>"


class EvidenceView:
    """The weights table (`ui.weightsTable`) and the unused layers (`ui.unusedLabel`) of the dock's form `ui`."""

    def __init__(self, ui):
        self.ui = ui
        ui.weightsTable.verticalHeader().setVisible(False)
        ui.weightsTable.horizontalHeader().setSectionResizeMode(QHeaderView.Interactive)
        ui.weightsTable.setTextElideMode(Qt.ElideMiddle)
        ui.weightsTable.setHorizontalScrollBarPolicy(Qt.ScrollBarAsNeeded)  # the last columns are scrolled to

    def clear(self) -> None:
        self.ui.weightsTable.setRowCount(0)
        self.ui.weightsTable.setColumnCount(0)
        self.ui.unusedLabel.clear()

    def show(self, weights: list, unused: list) -> None:
        table = self.ui.weightsTable
        columns = columns_of(weights)
        table.setColumnCount(len(columns))
        table.setHorizontalHeaderLabels([header for _, header in columns])
        table.setRowCount(len(weights))
        for row, values in enumerate(weights):
            for col, (key, _) in enumerate(columns):
                item = QTableWidgetItem(shown(key, values.get(key)))
                why = shown("why", values.get("why"))
                item.setToolTip(name_tip(item.text(), why) if key == "layer" else why if key == "why" else item.text())
                table.setItem(row, col, item)
        table.resizeColumnsToContents()
        table.setColumnWidth(0, min(table.columnWidth(0), LAYER_WIDTH_PX))
        why = [key for key, _ in columns].index("why")
        table.setColumnWidth(why, min(table.columnWidth(why), 320))
        empty = "" if weights else "<b>No favourability surface</b>: no layer could be turned into evidence.<br>"
        self.ui.unusedLabel.setText(empty + unused_text(unused, weights))
