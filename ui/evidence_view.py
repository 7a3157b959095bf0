"""The Results tab's evidence weights: one row per evidence layer of the favourability surface (layer, role,
transformation, membership, weight, why), the calibration's table when calibrated (weights of evidence beside the
fitted model's importances), and the layers left unused with their reasons."""
from __future__ import annotations

from html import escape

from qgis.PyQt.QtCore import QEvent, QObject, Qt
from qgis.PyQt.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QTableWidget, QTableWidgetItem

from ..plugin.favourability.calibration import BASIS as FITTED
from ..plugin.labels import humanize, role_label
from .table_fit import name_tip

COLUMNS = (("layer", "Layer"), ("weight", "Weight"), ("why", "Why"), ("role", "Role"),
           ("transformation", "Transformation"), ("membership", "Membership"))
"""The knowledge-driven surface's table: what each layer weighs and why first, so both stay in view at the dock's
width; how it was transformed after (elided, whole in the tooltip)."""
WIDEST = {"layer": 150, "role": 160, "transformation": 150, "membership": 130}
"""The widest (pixels) a column is drawn before its text is elided (the whole text is its tooltip)."""
WHY_MIN_PX = 180
"""The Why column's narrowest: it takes the width the other columns leave, down to this."""
FIT_COLUMNS = (("layer", "Layer"), ("pattern", "Pattern"), ("w_plus", "W+"), ("s_w_plus", "s(W+)"),
               ("w_minus", "W-"), ("s_w_minus", "s(W-)"), ("contrast", "Contrast"),
               ("s_contrast", "s(contrast)"), ("studentised_contrast", "Studentised contrast"))
"""The weights-of-evidence table of a calibrated run (ArcSDM's columns), beside the models' importances."""
MODEL_COLUMNS = (("method", "Fitted by"), ("importance", "Importance (AUC drop)"), ("lowers_skill", "Lowers skill"),
                 ("coefficient", "Coefficient"), ("parameters", "Chosen in the folds"), ("basis", "Basis"))
"""The fitted model's figures per layer, shown when any row has them."""


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
    if isinstance(value, bool):
        return "yes" if value else "no"
    if key in ("why", "basis", "transformation", "membership", "pattern") and isinstance(value, str):
        return humanize(value)
    return cell_text(value)


def fit_columns(wofe: list, weights: list) -> list:
    """(key, header) of the calibration's table: the weights-of-evidence columns its rows fill, then the fitted
    model's; [] for a run that was not calibrated."""
    rows = fit_rows(wofe, weights)
    keys = [(key, header) for key, header in FIT_COLUMNS + MODEL_COLUMNS if any(row.get(key) not in (None, "")
                                                                                  for row in rows)]
    return keys if any(key not in ("layer", "pattern") for key, _ in keys) else []


def fit_rows(wofe: list, weights: list) -> list:
    """One row per layer the calibration weighed: its weights of evidence (the run's own, else its ensemble's
    weights-of-evidence member's) beside the fitted model's figures."""
    fitted = [row for row in weights if row.get("basis") or row.get("importance") is not None]
    by_layer = {row["layer"]: row for row in wofe or []}
    rows = []
    for row in fitted:
        merged = {k: row.get(k) for k, _ in MODEL_COLUMNS}
        merged.update({k: v for k, v in by_layer.get(row["layer"], {}).items()} or
                      {k: row.get(k) for k, _ in FIT_COLUMNS})
        rows.append(dict(merged, layer=row["layer"]))
    return rows


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


class EvidenceView(QObject):
    """The weights table (`ui.weightsTable`), the calibration's table below it (`fit_table`: weights of evidence and
    the models' importances) and the unused layers (`ui.unusedLabel`) of the dock's form `ui`. The weights table's
    columns are fitted to the view whenever it is resized: Weight and Why always in it."""

    def __init__(self, ui):
        super().__init__(ui.weightsTable)
        self.ui = ui
        table = ui.weightsTable
        table.verticalHeader().setVisible(False)
        table.horizontalHeader().setSectionResizeMode(QHeaderView.Interactive)
        table.setTextElideMode(Qt.ElideMiddle)
        table.setHorizontalScrollBarPolicy(Qt.ScrollBarAsNeeded)
        table.viewport().installEventFilter(self)
        self.fit_label = QLabel("<b>Calibration</b>: weights of evidence (W+, W-, contrast and its studentised value "
                                "per layer) beside the fitted model's importance of each layer", ui.weightsPage)
        self.fit_label.setWordWrap(True)
        self.fit_table = QTableWidget(0, 0, ui.weightsPage)
        self.fit_table.setObjectName("fitTable")
        self.fit_table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.fit_table.verticalHeader().setVisible(False)
        self.fit_table.setTextElideMode(Qt.ElideMiddle)
        layout = ui.weightsPageLayout
        layout.insertWidget(layout.indexOf(table) + 1, self.fit_label)
        layout.insertWidget(layout.indexOf(table) + 2, self.fit_table)
        self.clear()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt API name)
        if event.type() == QEvent.Resize:
            self.fit()
        return False

    def clear(self) -> None:
        self.ui.weightsTable.setRowCount(0)
        self.ui.weightsTable.setColumnCount(0)
        self.fit_table.setRowCount(0)
        self.fit_table.setColumnCount(0)
        self.fit_label.setVisible(False)
        self.fit_table.setVisible(False)
        self.ui.unusedLabel.clear()

    def show(self, weights: list, unused: list, wofe: list | None = None) -> None:
        """The run's weights (`weights`: the record's rows), the layers left out, and its calibration's weights of
        evidence (`wofe`: the record's calibration rows; the weights' own W+ ... when absent)."""
        table = self.ui.weightsTable
        table.setColumnCount(len(COLUMNS))
        table.setHorizontalHeaderLabels([header for _, header in COLUMNS])
        self._fill(table, COLUMNS, weights)
        table.resizeColumnsToContents()
        for col, (key, _) in enumerate(COLUMNS):
            if key in WIDEST:
                table.setColumnWidth(col, min(table.columnWidth(col), WIDEST[key]))
        self._why_content = table.columnWidth(2)
        self.fit()
        columns, rows = fit_columns(wofe or [], weights), fit_rows(wofe or [], weights)
        self.fit_label.setVisible(bool(columns))
        self.fit_table.setVisible(bool(columns))
        self.fit_table.setColumnCount(len(columns))
        self.fit_table.setHorizontalHeaderLabels([header for _, header in columns])
        self._fill(self.fit_table, columns, rows if columns else [])
        self.fit_table.resizeColumnsToContents()
        if columns:
            self.fit_table.setColumnWidth(0, min(self.fit_table.columnWidth(0), WIDEST["layer"]))
        empty = "" if weights else "<b>No favourability surface</b>: no layer could be turned into evidence.<br>"
        self.ui.unusedLabel.setText(empty + unused_text(unused, weights))

    @staticmethod
    def _fill(table, columns, rows: list) -> None:
        table.setRowCount(len(rows))
        for row, values in enumerate(rows):
            why = shown("why", values.get("why"))
            for col, (key, _) in enumerate(columns):
                item = QTableWidgetItem(shown(key, values.get(key)))
                item.setToolTip(name_tip(item.text(), why) if key == "layer" else why if key == "why" and why
                                else item.text())
                table.setItem(row, col, item)

    def fit(self) -> None:
        """The Why column takes the width the others leave in the view (at least WHY_MIN_PX), so that Weight and Why
        are in view at any dock width from 700 pixels."""
        table = self.ui.weightsTable
        if table.columnCount() != len(COLUMNS) or not hasattr(self, "_why_content"):
            return
        others = sum(table.columnWidth(c) for c in range(len(COLUMNS)) if c != 2)
        table.setColumnWidth(2, max(WHY_MIN_PX, min(self._why_content, table.viewport().width() - others)))
