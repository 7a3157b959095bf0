"""The dock's History tab: the runs folder (shown, settable, openable) and the past runs in it (date, question,
answer, layers), newest first; Reopen shows a past run again (its layers, chain and report)."""
from __future__ import annotations

from pathlib import Path

from qgis.PyQt.QtCore import QObject, Qt, QUrl, pyqtSignal
from qgis.PyQt.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..plugin.runs.run_history import list_runs
from .messages import breakable
from .settings_dialog import PluginSettings

FOLDER_ROLE = Qt.UserRole + 5
COLUMNS = ("Date", "Question", "Answer", "Layers")


class RunHistoryView(QObject):
    """The History tab (`page`, added to the dock's tabs). `reopen` is emitted with a run folder (a Path)."""

    reopen = pyqtSignal(object)

    def __init__(self, tabs, open_url):
        super().__init__(tabs)
        self.open_url = open_url  # QDesktopServices.openUrl or a replacement (tests)
        self.page = QWidget(tabs)
        self.page.setObjectName("historyTab")
        layout = QVBoxLayout(self.page)
        self.folder_label = QLabel(self.page)
        self.folder_label.setWordWrap(True)
        self.folder_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        layout.addWidget(self.folder_label)
        folder_buttons = QHBoxLayout()
        self.change_button = QPushButton("Change folder...", self.page)
        self.change_button.setToolTip("Where new runs are written (and listed from); saved in the QGIS settings")
        self.change_button.clicked.connect(lambda *_: self.choose_folder())
        self.open_button = QPushButton("Open folder", self.page)
        self.open_button.clicked.connect(lambda *_: self.open_folder())
        self.refresh_button = QPushButton("Refresh", self.page)
        self.refresh_button.clicked.connect(lambda *_: self.refresh())
        for button in (self.change_button, self.open_button, self.refresh_button):
            folder_buttons.addWidget(button)
        layout.addLayout(folder_buttons)
        self.tree = QTreeWidget(self.page)
        self.tree.setHeaderLabels(list(COLUMNS))
        self.tree.setRootIsDecorated(False)
        self.tree.setWordWrap(True)
        self.tree.setUniformRowHeights(False)
        self.tree.header().setSectionResizeMode(QHeaderView.Interactive)
        self.tree.header().setStretchLastSection(True)
        self.tree.itemDoubleClicked.connect(lambda item, _col: self.reopen.emit(item.data(0, FOLDER_ROLE)))
        self.tree.itemSelectionChanged.connect(self._enable)
        layout.addWidget(self.tree, 1)
        run_buttons = QHBoxLayout()
        self.reopen_button = QPushButton("Reopen run", self.page)
        self.reopen_button.setToolTip("Add the run's layers to the project and show its answer, chain and report")
        self.reopen_button.clicked.connect(lambda *_: self._reopen_selected())
        self.run_folder_button = QPushButton("Open its folder", self.page)
        self.run_folder_button.clicked.connect(lambda *_: self._open_selected_folder())
        run_buttons.addWidget(self.reopen_button)
        run_buttons.addWidget(self.run_folder_button)
        layout.addLayout(run_buttons)
        self.status = QLabel(self.page)
        self.status.setWordWrap(True)
        layout.addWidget(self.status)
        tabs.addTab(self.page, "History")
        self.runs: list = []
        self.folder_label.setText(breakable(f"Runs folder: {self.runs_folder()}"))
        # records are read when the tab is shown (a profile may hold many runs), not when the dock opens
        tabs.currentChanged.connect(lambda index: self.refresh() if tabs.widget(index) is self.page else None)

    @staticmethod
    def runs_folder() -> Path:
        return PluginSettings.load().runs_folder()

    def set_runs_folder(self, folder) -> None:
        """Write new runs to `folder` (saved in the QGIS settings) and list the runs in it."""
        settings = PluginSettings.load()
        settings.output_dir = str(folder)
        settings.save()
        self.refresh()

    def choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self.page, "Folder for Lodestar runs", str(self.runs_folder()))
        if folder:
            self.set_runs_folder(folder)

    def open_folder(self) -> bool:
        folder = self.runs_folder()
        folder.mkdir(parents=True, exist_ok=True)
        return self._open(folder)

    def _open(self, folder: Path) -> bool:
        if self.open_url(QUrl.fromLocalFile(str(folder))):
            return True
        self.status.setText(breakable(f"No file manager opened the folder; it is {folder}"))
        return False

    def refresh(self) -> list:
        """List the runs of the runs folder again; returns them (newest first)."""
        folder = self.runs_folder()
        self.folder_label.setText(breakable(f"Runs folder: {folder}"))
        self.runs, unreadable = list_runs(folder)
        self.tree.clear()
        for run in self.runs:
            item = QTreeWidgetItem([run.date, run.question, run.answer_line, ", ".join(run.layers)])
            item.setData(0, FOLDER_ROLE, run.folder)
            for column, text in enumerate((str(run.folder), run.question, run.answer_line, "\n".join(run.layers))):
                item.setToolTip(column, text)
            self.tree.addTopLevelItem(item)
        self.tree.resizeColumnToContents(0)
        for column, width in ((1, 160), (2, 70)):
            self.tree.setColumnWidth(column, width)
        said = f"{len(self.runs)} run{'s' if len(self.runs) != 1 else ''}" if self.runs else "No runs yet."
        if unreadable:
            said += f" {len(unreadable)} folder(s) with an unreadable record: " + "; ".join(
                f"{path.name} ({why})" for path, why in unreadable)
        self.status.setText(breakable(said))
        self._enable()
        return self.runs

    def select(self, folder) -> None:
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            if Path(item.data(0, FOLDER_ROLE)) == Path(folder):
                self.tree.setCurrentItem(item)

    def selected_folder(self) -> Path | None:
        item = self.tree.currentItem()
        return Path(item.data(0, FOLDER_ROLE)) if item is not None else None

    def _enable(self) -> None:
        chosen = self.selected_folder() is not None
        self.reopen_button.setEnabled(chosen)
        self.run_folder_button.setEnabled(chosen)

    def _reopen_selected(self) -> None:
        folder = self.selected_folder()
        if folder is not None:
            self.reopen.emit(folder)

    def _open_selected_folder(self) -> None:
        folder = self.selected_folder()
        if folder is not None:
            self._open(folder)

    def set_enabled(self, enabled: bool) -> None:
        """Runs cannot be reopened or the folder changed while a run is on."""
        for widget in (self.change_button, self.tree, self.reopen_button):
            widget.setEnabled(enabled)
        if enabled:
            self._enable()
