"""The Results tab's "Evidence plan" page: the run's evidence plan as an editable table, a live preview of the combined
surface and of the selected layer's response curve, and Re-run with this plan, which re-makes the surface and the
targets without re-running the chain (`plugin/runs/replan.py`, in a background task), writing them to a new folder
beside the run and adding them to the project. Plans are saved and loaded as lodestar-evidence-plan/1 files (the
EVIDENCE_PLAN of lodestar:analyze).

Every layer of the run has a row: the plan's layers with their spec, the layers it left out with weight 0 and why
(give one a weight, and name its units, to bring it in). The plan stays the agent's until an edit makes it the
geologist's."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from qgis.core import QgsTask
from qgis.PyQt.QtCore import QObject, QPointF, Qt, QTimer, pyqtSignal
from qgis.PyQt.QtGui import QColor, QImage, QPainter, QPen, QPixmap
from qgis.PyQt.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..plugin.errors import LodestarError
from ..plugin.favourability.evidence import MEMBERSHIPS
from ..plugin.favourability.overlay import METHOD_LABELS, METHODS
from ..plugin.favourability.plan_file import read_plan, write_plan
from ..plugin.labels import membership_label, plural, transform_label
from ..plugin.progress import Progress
from ..plugin.reason.plan_rows import TRANSFORMS_OF_KIND, edited, plan_of_rows, plan_rows
from .task import guarded

PAGE_TITLE = "Evidence plan (editable)"
HEADERS = ("Layer", "Weight", "Transformation", "Membership", "Midpoint", "Spread", "Favourable units")
WEIGHT, TRANSFORM, MEMBERSHIP, MIDPOINT, SPREAD, UNITS = range(1, 7)
PREVIEW_PX = 180
NO_RUN = "Run an analysis: its evidence plan appears here, to edit and re-run."
RANK_HINT = ("Weighted mean of ranks: each layer counts by the order of its values and its weight alone, so a "
             "midpoint or spread changes the surface only for a Gaussian membership; choose weighted overlay to "
             "weigh the memberships' values.")


class ReplanTask(QgsTask):
    """Re-makes a run's surface and targets with a plan in a worker thread; `succeeded(Replanned)` or
    `failed(message)` is emitted from finished() on the main thread."""

    succeeded = pyqtSignal(object)
    failed = pyqtSignal(str)

    def __init__(self, record, plan, folder):
        super().__init__("Lodestar: re-run with this plan", QgsTask.CanCancel)
        self.record, self.plan, self.folder = Path(record), plan, Path(folder)
        self.result = None
        self.error = ""

    def run(self) -> bool:
        from ..plugin.runs.replan import replan

        def work():
            self.result = replan(self.record, self.plan, self.folder,
                                 Progress(on_progress=self.setProgress, is_cancelled=self.isCanceled))

        return guarded(self, "Re-run with this plan", work)

    def finished(self, ok: bool) -> None:
        if ok and self.result is not None:
            self.succeeded.emit(self.result)
        else:
            self.failed.emit(self.error or "Re-run with this plan was cancelled.")


class PlanEditor(QObject):
    """The page (`page`) in the results tool box; `load(record_path)` shows a run's plan; `plan()` is the edited
    plan; `rerun()` starts the re-make (returns its task); `replanned(Replanned)` is emitted when it is done."""

    replanned = pyqtSignal(object)

    def __init__(self, toolbox):
        super().__init__(toolbox)
        self.page = QWidget(toolbox)
        self.page.setObjectName("planPage")
        layout = QVBoxLayout(self.page)
        self.note = QLabel(NO_RUN, self.page)
        self.note.setWordWrap(True)
        self._build_table()
        combination = self._build_combination()
        previews = self._build_previews()
        buttons = self._build_buttons()
        self.status = QLabel(self.page)
        self.status.setWordWrap(True)
        self.status.setObjectName("planStatus")
        layout.addWidget(self.note)
        layout.addWidget(self.table)
        layout.addLayout(combination)
        layout.addWidget(self.combination_hint)
        layout.addLayout(previews)
        layout.addWidget(self.rerun_button)
        layout.addLayout(buttons)
        layout.addWidget(self.status)
        toolbox.addItem(self.page, PAGE_TITLE)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(150)
        self._connect()
        self.task: ReplanTask | None = None
        self.clear()

    def _build_table(self) -> None:
        """The plan's table: one row a layer."""
        self.table = QTableWidget(0, len(HEADERS), self.page)
        self.table.setObjectName("planTable")
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setMinimumHeight(140)

    def _build_combination(self) -> QHBoxLayout:
        """The combination method and its gamma (the row returned), and the hint below them."""
        combination = QHBoxLayout()
        self.method = QComboBox(self.page)
        self.method.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.method.setMinimumContentsLength(6)
        for key in METHODS:
            self.method.addItem(METHOD_LABELS[key], key)
        self.gamma = QDoubleSpinBox(self.page)
        self.gamma.setRange(0.0, 1.0)
        self.gamma.setSingleStep(0.05)
        self.gamma.setDecimals(2)
        self.gamma.setToolTip("Gamma of the fuzzy gamma operator: 0 is the fuzzy product, 1 the fuzzy sum")
        combination.addWidget(QLabel("Combination", self.page))
        combination.addWidget(self.method, 1)
        combination.addWidget(self.gamma)
        self.combination_hint = QLabel(self.page)
        self.combination_hint.setObjectName("planCombinationHint")
        self.combination_hint.setWordWrap(True)
        return combination

    def _build_previews(self) -> QHBoxLayout:
        """The row of the surface's and the response curve's previews."""
        previews = QHBoxLayout()
        self.surface_label = QLabel(self.page)
        self.surface_label.setObjectName("planSurfacePreview")
        self.curve_label = QLabel(self.page)
        self.curve_label.setObjectName("planCurvePreview")
        for label in (self.surface_label, self.curve_label):  # the previews never force the dock wider
            label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
            label.setMinimumSize(PREVIEW_PX // 2, PREVIEW_PX // 2)
            previews.addWidget(label)
        return previews

    def _build_buttons(self) -> QHBoxLayout:
        """Re-run with this plan, and the row of Save, Load and Agent's plan (returned)."""
        buttons = QHBoxLayout()
        self.rerun_button = QPushButton("Re-run with this plan", self.page)
        self.rerun_button.setToolTip("Re-make the surface and targets with this plan, without re-running the chain")
        self.save_button = QPushButton("Save plan...", self.page)
        self.load_button = QPushButton("Load plan...", self.page)
        self.reset_button = QPushButton("Agent's plan", self.page)
        for button in (self.save_button, self.load_button, self.reset_button):
            buttons.addWidget(button)
        return buttons

    def _connect(self) -> None:
        """The page's signals to their slots; an edit refreshes the preview after a short pause (`_timer`)."""
        self._timer.timeout.connect(self.refresh_preview)
        self.table.itemChanged.connect(self._item_changed)
        self.table.currentCellChanged.connect(lambda *_: self._draw_curve())
        self.method.currentIndexChanged.connect(self._combination_changed)
        self.gamma.valueChanged.connect(lambda *_: self._timer.start())
        self.rerun_button.clicked.connect(lambda *_: self.rerun())
        self.save_button.clicked.connect(lambda *_: self._save_clicked())
        self.load_button.clicked.connect(lambda *_: self._load_clicked())
        self.reset_button.clicked.connect(lambda *_: self.reset())

    # ----- showing a run
    def clear(self) -> None:
        self.record_path = None
        self.rows, self.agent, self.preview = [], None, None
        self.table.setRowCount(0)
        self.note.setText(NO_RUN)
        self.status.clear()
        self.surface_label.clear()
        self.curve_label.clear()
        self._enable(False)

    def _enable(self, enabled: bool) -> None:
        for widget in (self.table, self.method, self.rerun_button, self.save_button, self.load_button,
                       self.reset_button):
            widget.setEnabled(enabled)
        self.gamma.setEnabled(enabled and self.method.currentData() == "gamma")

    def load(self, record_path) -> None:
        """Show the plan of the run whose record is `record_path` (a run without a surface says why)."""
        from ..plugin.request import record as records

        self.clear()
        try:
            record = records.read_record(record_path)
            self.rows, self.agent = plan_rows(record)
        except LodestarError as exc:
            self.note.setText(str(exc))
            return
        self.record_path = Path(record_path)
        self.note.setText("Edit weights, midpoints (in the layer's own units), spreads (fuzzy large / small: how "
                          "steep, no unit), units, combination:")
        self.note.setToolTip("The preview follows every edit. Layers the run's plan left out have weight 0 (hover "
                             "their name for why): give one a weight, and name its units, to bring it in.")
        self._set_plan(self.agent)
        self._enable(True)

    def _set_plan(self, plan) -> None:
        by_layer = {spec.layer: spec.to_dict() for spec in plan.specs}
        for row in self.rows:
            spec = row["spec"]
            row["spec"] = by_layer.get(spec["layer"]) or dict(spec, weight=0.0)
        self.method.blockSignals(True)
        self.method.setCurrentIndex(max(0, self.method.findData(plan.method)))
        self.method.blockSignals(False)
        self.combination_hint.setText(RANK_HINT if plan.method == "rank" else "")
        self.gamma.blockSignals(True)
        self.gamma.setValue(plan.gamma)
        self.gamma.blockSignals(False)
        self._fill()
        self.refresh_preview()

    def reset(self) -> None:
        """Back to the agent's plan."""
        if self.agent is not None:
            self._set_plan(self.agent)

    # ----- the table
    def _fill(self) -> None:
        self.table.blockSignals(True)
        self.table.setRowCount(len(self.rows))
        for i, row in enumerate(self.rows):
            spec = row["spec"]
            params = spec.get("params") or {}
            name = QTableWidgetItem(spec["layer"])
            name.setFlags(name.flags() & ~Qt.ItemIsEditable)
            name.setToolTip(row["reason"] or spec.get("why", ""))
            self.table.setItem(i, 0, name)
            self.table.setItem(i, WEIGHT, QTableWidgetItem(f"{float(spec['weight']):g}"))
            units = spec["transform"] == "units"
            for column, key in ((MIDPOINT, "midpoint"), (SPREAD, "spread")):
                item = QTableWidgetItem(f"{params[key]:g}" if key in params else "")
                if units or spec["membership"] in ("identity", "invert"):
                    item.setFlags(item.flags() & ~Qt.ItemIsEditable)
                self.table.setItem(i, column, item)
            item = QTableWidgetItem(", ".join(map(str, params.get("units") or [])) if units else "")
            item.setToolTip("Units present: " + ", ".join(row["units"]) if row["units"] else "")
            if not units:
                item.setFlags(item.flags() & ~Qt.ItemIsEditable)
            self.table.setItem(i, UNITS, item)
            self.table.setCellWidget(i, TRANSFORM, self._combo(i, "transform", TRANSFORMS_OF_KIND.get(
                spec["kind"], (spec["transform"],)), spec["transform"]))
            memberships = ("identity",) if units else MEMBERSHIPS
            self.table.setCellWidget(i, MEMBERSHIP, self._combo(i, "membership", memberships, spec["membership"]))
        self.table.blockSignals(False)

    def _combo(self, row: int, key: str, options, current: str) -> QComboBox:
        combo = QComboBox(self.table)
        label = transform_label if key == "transform" else membership_label
        for option in options:
            combo.addItem(label(option), option)
        combo.setCurrentIndex(max(0, combo.findData(current)))
        combo.currentIndexChanged.connect(lambda *_: self.set_value(row, key, combo.currentData()))
        return combo

    def _item_changed(self, item: QTableWidgetItem) -> None:
        column, text = item.column(), item.text().strip()
        try:
            if column == UNITS:
                self.set_value(item.row(), "units", [u.strip() for u in text.split(",") if u.strip()])
            elif column in (WEIGHT, MIDPOINT, SPREAD):
                key = {WEIGHT: "weight", MIDPOINT: "midpoint", SPREAD: "spread"}[column]
                try:
                    value = float(text)
                except ValueError:
                    raise LodestarError(f"{self.rows[item.row()]['spec']['layer']}: the {key} must be a number, "
                                        f"not {text!r}.") from None
                self.set_value(item.row(), key, value)
        except LodestarError as exc:
            self.status.setText(str(exc))

    def set_value(self, row: int, key: str, value) -> None:
        """Edit one value of a row's spec (weight, transform, membership, midpoint, spread, units), as the table
        does; the preview follows."""
        self.rows[row]["spec"] = edited(self.rows[row]["spec"], **{key: value})
        QTimer.singleShot(0, self._fill)  # after the edit that called this has ended
        self.status.clear()
        self._timer.start()

    def _combination_changed(self, *_) -> None:
        self.gamma.setEnabled(self.method.currentData() == "gamma")
        self.combination_hint.setText(RANK_HINT if self.method.currentData() == "rank" else "")
        self._timer.start()

    def set_combination(self, method: str, gamma: float | None = None) -> None:
        self.method.setCurrentIndex(self.method.findData(method))
        if gamma is not None:
            self.gamma.setValue(gamma)

    def plan(self):
        """The plan as edited (the agent's while it equals the run's); raises LodestarError saying what to fix."""
        if self.agent is None:
            raise LodestarError(NO_RUN)
        return plan_of_rows(self.rows, self.method.currentData(), self.gamma.value(), self.agent)

    # ----- previews
    def _preview(self):
        if self.preview is None:
            from ..plugin.favourability.plan_preview import PlanPreview
            from ..plugin.raster_io import RasterSet
            from ..plugin.request import record as records
            from ..plugin.runs.replan import rendering_zones

            record = records.read_record(self.record_path)
            raster_set = RasterSet(records.layers_from_record(record))
            self.preview = PlanPreview(raster_set, rendering_zones(record, self.record_path.parent, self.agent,
                                                                   raster_set))
        return self.preview

    def refresh_preview(self) -> None:
        """Redraw the combined surface and the selected layer's curve (a plan that cannot be made says why)."""
        if self.agent is None:
            return
        try:
            plan = self.plan()
            values = self._preview().surface(plan.specs, plan.method, plan.gamma)
        except LodestarError as exc:
            self.status.setText(str(exc))
            return
        self.surface_label.setPixmap(QPixmap.fromImage(surface_image(values)).scaled(
            PREVIEW_PX, PREVIEW_PX, Qt.KeepAspectRatio, Qt.SmoothTransformation))
        self.surface_label.setToolTip(f"{plan.combination_text} of {plural(len(plan.specs), 'layer')}, the {plan.by}'s "
                                      "plan")
        self._draw_curve()

    def _draw_curve(self) -> None:
        row = self.table.currentRow()
        if self.agent is None or not 0 <= row < len(self.rows):
            return
        from ..plugin.favourability.evidence import EvidenceSpec

        spec = self.rows[row]["spec"]
        try:
            x, y = self._preview().curve(EvidenceSpec.from_dict(dict(spec, weight=max(spec["weight"], 1.0))))
        except LodestarError as exc:
            self.status.setText(str(exc))
            return
        unit = {"distance_m": "metres", "none": "the layer's values", "units": "other units / favourable units"}.get(
            spec["transform"], transform_label(spec["transform"]))
        self.curve_label.setPixmap(QPixmap.fromImage(curve_image(x, y, "m" if spec["transform"] == "distance_m"
                                                                 else "")))
        self.curve_label.setToolTip(f"{spec['layer']}: membership (0-1) against {unit}, from {x.min():g} to "
                                    f"{x.max():g}" if len(x) else spec["layer"])

    # ----- files and the re-run
    def _save_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.page, "Save the evidence plan", "", "Evidence plan (*.json)")
        if path:
            self.save(path)

    def save(self, path) -> Path | None:
        try:
            return write_plan(self.plan(), path)
        except (LodestarError, OSError) as exc:
            self.status.setText(str(exc))
            return None

    def _load_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.page, "Load an evidence plan", "", "Evidence plan (*.json)")
        if path:
            self.load_plan(path)

    def load_plan(self, path) -> None:
        try:
            plan = read_plan(path)
            plan.check_layers([row["spec"]["layer"] for row in self.rows])
        except LodestarError as exc:
            self.status.setText(str(exc))
            return
        self._set_plan(plan)

    def rerun(self) -> ReplanTask | None:
        """Start re-making the surface and targets with the edited plan (a new folder beside the run)."""
        from .task import start

        if self.task is not None:
            return None
        try:
            plan = self.plan()
        except LodestarError as exc:
            self.status.setText(str(exc))
            return None
        run = self.record_path.parent
        number = 1
        while (run.parent / f"{run.name}-plan-{number}").exists():
            number += 1
        task = ReplanTask(self.record_path, plan, run.parent / f"{run.name}-plan-{number}")
        task.succeeded.connect(self._replanned)
        task.failed.connect(self._failed)
        self.task = task
        self.rerun_button.setEnabled(False)
        self.status.setText("Re-making the surface and targets with this plan...")
        start(task)
        return task

    def _replanned(self, done) -> None:
        self.task = None
        self.rerun_button.setEnabled(True)
        self.status.setText(comparison_text(done))
        self.replanned.emit(done)

    def _failed(self, message: str) -> None:
        self.task = None
        self.rerun_button.setEnabled(True)
        self.status.setText(message)


def comparison_text(done) -> str:
    """The re-made surface's figures beside the agent's plan's, in one paragraph."""
    plan = "your plan" if done.notes and "geologist" in done.notes[0] else "this plan"
    text = f"{plural(len(done.targets), 'target')} from {plan}, written to {Path(done.outputs['record']).parent}."
    if done.auc is not None:
        text += f" Success-rate AUC on the known deposits: {plan} {done.auc:.3f}"
        text += f", the agent's plan {done.agent_auc:.3f}." if done.agent_auc is not None else "."
    return text


def surface_image(values: np.ma.MaskedArray) -> QImage:
    """A favourability preview: dark blue (0) to yellow (1), transparent outside the analysed area."""
    data = np.clip(np.asarray(values.filled(0.0), dtype=float), 0.0, 1.0)
    low, high = np.array([40, 20, 90]), np.array([250, 230, 40])
    rgb = (low + (high - low) * data[..., None]).astype(np.uint8)
    alpha = np.where(np.ma.getmaskarray(values), 0, 255).astype(np.uint8)[..., None]
    rgba = np.ascontiguousarray(np.concatenate([rgb, alpha], axis=2))
    height, width = data.shape
    return QImage(rgba.data, width, height, 4 * width, QImage.Format_RGBA8888).copy()


def curve_image(x: np.ndarray, y: np.ndarray, unit: str = "", width: int = PREVIEW_PX,
                height: int = PREVIEW_PX // 2) -> QImage:
    """A response curve: membership (0 at the bottom, 1 at the top) across the values' range, the range's ends
    written under it (with `unit`)."""
    image = QImage(width, height, QImage.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.setPen(QPen(QColor("#bbbbbb"), 1))
    painter.drawRect(0, 0, width - 1, height - 1)
    finite = np.isfinite(y)
    if len(x) > 1 and finite.any():
        painter.setPen(QPen(QColor("#1f5fa8"), 2))
        span = float(x[-1] - x[0]) or 1.0
        points = [QPointF(4 + (width - 8) * float(xi - x[0]) / span, height - 4 - (height - 8) * float(yi))
                  for xi, yi in zip(x[finite], y[finite])]
        for a, b in zip(points, points[1:]):
            painter.drawLine(a, b)
        painter.setPen(QPen(QColor("#444444"), 1))
        painter.drawText(4, height - 6, _number(x[0]))
        right = f"{_number(x[-1])} {unit}".strip()
        painter.drawText(width - 6 - painter.fontMetrics().horizontalAdvance(right), height - 6, right)
    painter.end()
    return image


def _number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"
