"""The History tab's "This project's runs": the runs made while this project was open, and the surfaces re-made from
them with an edited plan, saved in the project file (`plugin/runs/project_runs.py`) and listed whenever it is opened; a
run is reopened from it as from the runs folder."""
from __future__ import annotations

from pathlib import Path

from qgis.core import QgsProject
from qgis.PyQt.QtCore import QObject, Qt, pyqtSignal
from qgis.PyQt.QtWidgets import QGroupBox, QHeaderView, QPushButton, QTreeWidget, QTreeWidgetItem, QVBoxLayout

from ..plugin.errors import LodestarError
from ..plugin.runs.project_runs import entries_text, read_entries, with_replan, with_run

SCOPE, KEY = "lodestar", "runs"
COLUMNS = ("Date", "Question", "Answer", "Model and plan", "AUC of the targets' surface")
FOLDER_ROLE = Qt.UserRole + 6
AUC_OF = {"cv": "Success-rate AUC of the calibrated model the targets came from, out of fold",
          "knowledge": "Success-rate AUC of the knowledge-driven surface the targets came from"}


def project_entries(project: QgsProject | None = None) -> list[dict]:
    text, _ok = (project or QgsProject.instance()).readEntry(SCOPE, KEY, "")
    return read_entries(text)


def _store(entries: list, project: QgsProject | None = None) -> None:
    (project or QgsProject.instance()).writeEntry(SCOPE, KEY, entries_text(entries))


class ProjectRunsView(QObject):
    """The group, added to the History tab's `page`; `reopen(folder)` is emitted by its Reopen button."""

    reopen = pyqtSignal(object)

    def __init__(self, page):
        super().__init__(page)
        self.group = QGroupBox("This project's runs (saved with the project)", page)
        self.group.setObjectName("projectRunsGroup")
        layout = QVBoxLayout(self.group)
        self.tree = QTreeWidget(self.group)
        self.tree.setHeaderLabels(list(COLUMNS))
        self.tree.setWordWrap(True)
        self.tree.header().setSectionResizeMode(QHeaderView.Interactive)
        self.tree.header().setStretchLastSection(True)
        self.reopen_button = QPushButton("Reopen", self.group)
        self.reopen_button.clicked.connect(lambda *_: self._reopen_clicked())
        layout.addWidget(self.tree)
        layout.addWidget(self.reopen_button)
        page.layout().addWidget(self.group)
        QgsProject.instance().readProject.connect(self._project_read)
        QgsProject.instance().cleared.connect(self.refresh)
        self.refresh()

    def _project_read(self, *_) -> None:
        self.refresh()

    def remember(self, folder) -> None:
        """List the run in `folder` with the project (a run whose record cannot be read is not listed)."""
        try:
            _store(with_run(project_entries(), folder))
        except LodestarError:
            return
        self.refresh()

    def remember_replan(self, run_folder, folder) -> None:
        """List a surface re-made in `folder` under its run."""
        try:
            _store(with_replan(project_entries(), run_folder, folder))
        except LodestarError:
            return
        self.refresh()

    def refresh(self) -> None:
        self.tree.clear()
        for entry in project_entries():
            model = entry.get("deposit_model", "") + (" (chosen)" if entry.get("chosen") else "")
            item = QTreeWidgetItem(self.tree, [entry.get("created_utc", "").replace("T", " ").rstrip("Z")[:16],
                                               entry.get("question", ""), " ".join(
                                                   [entry.get("answer", ""), entry.get("answer_text", "")]).strip(),
                                               f"{model}; {entry.get('plan', '')}'s plan", _auc(entry.get("auc"))])
            item.setData(0, FOLDER_ROLE, entry.get("folder"))
            item.setToolTip(4, AUC_OF.get(entry.get("auc_of", "knowledge"), ""))
            item.setToolTip(0, entry.get("folder", ""))
            for replan in entry.get("replans") or []:
                child = QTreeWidgetItem(item, ["re-made", ", ".join(replan.get("layers") or []), "",
                                               f"{replan.get('plan', '')}'s plan, {replan.get('method', '')}",
                                               _auc(replan.get("auc"))])
                child.setToolTip(0, replan.get("folder", ""))
            item.setExpanded(True)
        self.group.setVisible(self.tree.topLevelItemCount() > 0)

    def _reopen_clicked(self) -> None:
        item = self.tree.currentItem()
        while item is not None and item.parent() is not None:
            item = item.parent()
        if item is not None and item.data(0, FOLDER_ROLE):
            self.reopen.emit(Path(item.data(0, FOLDER_ROLE)))


def _auc(value) -> str:
    return f"{value:.3f}" if isinstance(value, (int, float)) else "-"
