"""The Results tab's validation against known deposits: per surface (cross-validated first, then the other models
the calibration compared, out of fold), its basis, the success-rate AUC and the deposits captured in the most
favourable 2, 5, 10 and 20 % of the analysed area, and the success-rate curves drawn with matplotlib (Agg) into a
picture."""
from __future__ import annotations

from html import escape
from io import BytesIO

from qgis.PyQt.QtGui import QPixmap
from qgis.PyQt.QtWidgets import QTableWidgetItem

from ..plugin.labels import TIES_NOTE, deposit_count
from .table_fit import fit_to_width, name_tip

SURFACES = (("cv", "Cross-validated"), ("knowledge", "Knowledge-driven"), ("equal_weight", "Equal-weight ranks"),
            ("fitted", "Fitted on the deposits"))
"""Validation keys in the order shown (the honest figure first), with their short names."""
SHARES = ("0.02", "0.05", "0.1", "0.2")
HEADERS = ("Surface", "AUC", "2 %", "5 %", "10 %", "20 %")
COLOURS = {"cv": "#1b5e20", "knowledge": "#1565c0", "equal_weight": "#ef6c00", "fitted": "#9e9e9e"}
NO_DEPOSITS = "Pick a known deposits layer on the Ask tab to validate the favourability surface against it."


def captured(value) -> str:
    """A capture count as shown: whole deposits ('18'; TIES_NOTE says how ties count), '' when unknown."""
    return "" if value is None else deposit_count(value)


def shown_surfaces(validation: dict) -> list:
    """(key, short name, scores) of the surfaces validated, in the order shown; after the cross-validated surface,
    the other models the calibration compared out of fold (key "model")."""
    shown = []
    for key, name in SURFACES:
        if validation.get(key):
            shown.append((key, name, validation[key]))
        if key == "cv" and validation.get(key):
            shown += [("model", scores["name"], scores) for scores in validation.get("models") or []]
    return shown


def curves_png(validation: dict, width_px: int = 330) -> bytes:
    """The success-rate curves of the validated surfaces (with the chance line; the other models compared have
    no curve here), as PNG bytes."""
    return plot_png([(name, COLOURS[key], scores.get("curve") or [], scores.get("auc"), 1.6 if key == "cv" else 1.0)
                     for key, name, scores in shown_surfaces(validation) if key != "model"], width_px)


def plot_png(curves: list, width_px: int = 330) -> bytes:
    """Success-rate curves [(name, colour, curve points with area_share and deposit_share, AUC or None, line
    width)] with the chance line, as PNG bytes (matplotlib's Agg, no window)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width_px / 90, width_px / 90 * 0.8), dpi=90)
    canvas = FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 1, 1)
    axes.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=0.8, label="chance")
    for name, colour, curve, auc, width in curves:
        auc_text = f" (AUC {auc:.2f})" if auc is not None else ""
        axes.plot([c["area_share"] for c in curve], [c["deposit_share"] for c in curve], color=colour,
                  linewidth=width, label=name + auc_text)
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1.02)
    axes.set_xlabel("share of the analysed area (most favourable first)", fontsize=8)
    axes.set_ylabel("share of known deposits", fontsize=8)
    axes.tick_params(labelsize=7)
    axes.legend(loc="lower right", fontsize=7)
    figure.tight_layout()
    buffer = BytesIO()
    canvas.print_png(buffer)
    return buffer.getvalue()


class ValidationView:
    """The capture table (`ui.validationTable`), its note (`ui.validationNote`) and the curves (`ui.curveLabel`)."""

    def __init__(self, ui):
        self.ui = ui
        table = ui.validationTable
        table.setColumnCount(len(HEADERS))
        table.setHorizontalHeaderLabels(list(HEADERS))
        table.verticalHeader().setVisible(False)
        fit_to_width(table)

    def clear(self) -> None:
        self.ui.validationTable.setRowCount(0)
        self.ui.validationNote.clear()
        self.ui.curveLabel.clear()

    def show(self, validation: dict) -> None:
        surfaces = shown_surfaces(validation or {})
        table = self.ui.validationTable
        table.setRowCount(len(surfaces))
        if not surfaces:
            self.ui.validationNote.setText(NO_DEPOSITS)
            self.ui.curveLabel.clear()
            return
        for row, (_, name, scores) in enumerate(surfaces):
            auc = scores.get("auc")
            capture = scores.get("capture") or {}
            values = [name, "" if auc is None else f"{auc:.3f}", *(captured(capture.get(s)) for s in SHARES)]
            for col, value in enumerate(values):
                item = QTableWidgetItem(value)
                item.setToolTip(name_tip(name, scores.get("basis", "")) if col == 0 else scores.get("basis", ""))
                table.setItem(row, col, item)
        deposits = surfaces[0][2].get("deposits", 0)
        bases = "".join(f"<br>&bull; {escape(basis)}"
                        for basis in dict.fromkeys(scores.get("basis", "") for _, _, scores in surfaces))
        summary = validation.get("summary")
        chosen = f"<br><b>{escape(summary)}</b>" if summary else ""
        self.ui.validationNote.setText(f"Known deposits captured in the most favourable 2, 5, 10 and 20 % of the "
                                       f"analysed area (of {deposits} inside it); AUC 0.5 is chance. "
                                       f"{escape(TIES_NOTE)}{bases}{chosen}")
        pixmap = QPixmap()
        pixmap.loadFromData(curves_png(validation))
        self.ui.curveLabel.setPixmap(pixmap)
