"""The Results tab's "Choices and thresholds" page: every choice the engine made, in words (the deposit model, the
runner-up and why; the layers left out and why; what the run wants the user to know), the thresholds each step used,
and an Advanced section where the controller's and the localization's thresholds can be changed for a re-run."""
from __future__ import annotations

from html import escape

from qgis.PyQt.QtCore import QObject, Qt, pyqtSignal
from qgis.PyQt.QtWidgets import (
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSpinBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..plugin.errors import LodestarError
from ..plugin.labels import humanize, tool_label
from ..plugin.request.run_choices import (
    THRESHOLDS,
    controller_line,
    left_out,
    model_choice,
    step_thresholds,
    used_thresholds,
)
from ..plugin.runs.run_history import read_record

PAGE_TITLE = "Choices and thresholds"
NO_RUN = "Run an analysis: the deposit model it follows, the layers it leaves out and its thresholds appear here."


def wrapped_label(parent) -> QLabel:
    label = QLabel(parent)
    label.setWordWrap(True)
    label.setOpenExternalLinks(False)
    return label


class ChoicesView(QObject):
    """The page (`page`), added to the dock's results tool box. `rerun` is emitted by its Re-run button;
    `overrides()` gives the thresholds the user changed, for the next request."""

    rerun = pyqtSignal()

    def __init__(self, toolbox):
        super().__init__(toolbox)
        self.page = QWidget(toolbox)
        self.page.setObjectName("choicesPage")
        layout = QVBoxLayout(self.page)
        self.model_label = wrapped_label(self.page)
        self.model_label.setObjectName("modelChoiceLabel")
        self.model_label.setTextFormat(Qt.PlainText)
        self.left_out_label = wrapped_label(self.page)
        self.notes_label = wrapped_label(self.page)
        self.steps = QTreeWidget(self.page)
        self.steps.setHeaderLabels(["Step", "Tool and thresholds"])
        self.steps.setRootIsDecorated(False)
        self.steps.setWordWrap(True)
        self.steps.header().setSectionResizeMode(0, QHeaderView.ResizeToContents)
        self.steps.header().setStretchLastSection(True)
        self.steps.setMaximumHeight(160)
        for widget in (self.model_label, self.left_out_label, self.notes_label, self.steps):
            layout.addWidget(widget)
        layout.addWidget(self._advanced())
        layout.addStretch(1)
        toolbox.addItem(self.page, PAGE_TITLE)
        self._used: dict = {}
        self._set: dict = {}  # (section, key) -> value the user set (kept for every later run until cleared)
        self.clear()

    def _advanced(self) -> QGroupBox:
        self.advanced = QGroupBox("Advanced: thresholds for the next run", self.page)
        self.advanced.setObjectName("advancedGroup")
        form = QFormLayout(self.advanced)
        form.setRowWrapPolicy(QFormLayout.WrapLongRows)
        self.controller_label = wrapped_label(self.advanced)
        form.addRow(self.controller_label)
        self.spins: dict = {}
        for item in THRESHOLDS:
            spin = QSpinBox(self.advanced) if item.whole else QDoubleSpinBox(self.advanced)
            if not item.whole:
                spin.setDecimals(3)
                spin.setSingleStep(0.05)
            if item.whole:
                spin.setRange(int(item.low), int(item.high))
            else:
                spin.setRange(float(item.low), float(item.high))
            spin.setToolTip(item.tip)
            spin.valueChanged.connect(self._edited)
            label = QLabel(item.label, self.advanced)
            label.setWordWrap(True)
            label.setToolTip(item.tip)
            form.addRow(label, spin)
            self.spins[(item.section, item.key)] = (item, spin)
        buttons = QHBoxLayout()
        self.rerun_button = QPushButton("Re-run with these", self.advanced)
        self.rerun_button.setToolTip("Run the same question on the same layers again, with the thresholds above")
        self.rerun_button.clicked.connect(lambda *_: self.rerun.emit())
        self.reset_button = QPushButton("Clear changes", self.advanced)
        self.reset_button.setToolTip("Forget the thresholds set here: the next run uses the defaults")
        self.reset_button.clicked.connect(lambda *_: self.reset())
        buttons.addWidget(self.rerun_button)
        buttons.addWidget(self.reset_button)
        form.addRow(buttons)
        self.changed_label = wrapped_label(self.advanced)
        form.addRow(self.changed_label)
        return self.advanced

    # ----- the last run
    def clear(self) -> None:
        self.model_label.setText(NO_RUN)
        self.left_out_label.clear()
        self.notes_label.clear()
        self.steps.clear()
        self.controller_label.clear()
        self._used = {}
        self.advanced.setEnabled(False)
        self.changed_label.clear()

    def show(self, result, record_path) -> None:
        """The choices of a run (its AnalysisResult and record.json); the Advanced values set to those it used."""
        self.clear()
        try:
            record = read_record(record_path.parent) if record_path is not None else {}
        except LodestarError as exc:
            self.model_label.setText(str(exc))
            record = {}
        choice = model_choice(record) if record else {}
        self.model_label.setText(choice.get("text", "No deposit model was retrieved for this run."))
        rows = left_out(result.unused)
        self.left_out_label.setText(
            "<b>Layers left out</b><ul style='margin:0'>" + "".join(
                f"<li><b>{escape(layer)}</b>: {escape(humanize(reason))}</li>" for layer, reason in rows) + "</ul>"
            if rows else "Every layer given was used.")
        notes = [humanize(note) for note in result.notes or []]
        self.notes_label.setText("<b>Notes of the run</b><ul style='margin:0'>"
                                 + "".join(f"<li>{escape(note)}</li>" for note in notes) + "</ul>" if notes else "")
        for index, tool, layers, words in step_thresholds(record):
            tool = tool_label(tool)
            item = QTreeWidgetItem([str(index), f"{tool} on {layers}: {words}" if layers else f"{tool}: {words}"])
            item.setToolTip(1, item.text(1))
            self.steps.addTopLevelItem(item)
        if record:
            self.controller_label.setText(escape(controller_line(record)))
            self._used = used_thresholds(record)
            self._show_values()
            self.advanced.setEnabled(True)

    # ----- the Advanced section
    def reset(self) -> None:
        """Forget the thresholds the user set; the values shown are the last run's again."""
        self._set = {}
        self._show_values()

    def _show_values(self) -> None:
        for key, (item, spin) in self.spins.items():
            value = self._set.get(key, self._used.get(key))
            spin.blockSignals(True)
            shown = (value if value is not None else item.low) * item.scale
            spin.setValue(int(round(shown)) if item.whole else float(shown))
            spin.blockSignals(False)
        self._say_changed()

    def set_value(self, section: str, key: str, value: float) -> None:
        """Set a threshold as the user would (in the unit shown)."""
        self.spins[(section, key)][1].setValue(value)

    def overrides(self) -> dict:
        """{"controller": {...}, "localization": {...}}: the thresholds the user set, for every next run until
        cleared (empty sections when none)."""
        out: dict = {"controller": {}, "localization": {}}
        for (section, key), value in self._set.items():
            out[section][key] = value
        return out

    def _edited(self, *_) -> None:
        for key, (item, spin) in self.spins.items():
            value = spin.value() / item.scale
            value = int(round(value)) if item.whole else round(value, 6)
            used = self._used.get(key)
            if key in self._set or used is None or abs(float(used) - value) > 1e-9:
                self._set[key] = value
        self._say_changed()

    def _say_changed(self) -> None:
        changed = [f"{item.label}: {spin.text()}" for key, (item, spin) in self.spins.items() if key in self._set]
        self.changed_label.setText("Set for the next runs: " + "; ".join(changed) if changed
                                   else "The next run uses the defaults.")
