"""Opening a run's report: in the system's browser, and when none opens it (no browser registered: QGIS's
`QDesktopServices.openUrl` returns False), a dialog that says where the report is and offers to show it inside QGIS,
open its folder or copy its path; never nothing."""
from __future__ import annotations

from pathlib import Path

from qgis.PyQt.QtCore import Qt, QUrl
from qgis.PyQt.QtWidgets import (
    QApplication,
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
)

from .messages import breakable


class ReportInQgis(QDialog):
    """The report rendered by Qt's own HTML viewer (its images found beside it)."""

    def __init__(self, report: Path, parent=None):
        super().__init__(parent)
        self.setWindowTitle(f"Lodestar report - {report.parent.name}")
        self.resize(820, 700)
        layout = QVBoxLayout(self)
        self.browser = QTextBrowser(self)
        self.browser.setOpenExternalLinks(False)
        self.browser.setSearchPaths([str(report.parent)])
        self.browser.setSource(QUrl.fromLocalFile(str(report)))
        layout.addWidget(self.browser)


class ReportNotOpened(QDialog):
    """Said when no browser opened the report: its path (selectable), and Show it here / Open folder / Copy path."""

    def __init__(self, report: Path, open_url, parent=None):
        super().__init__(parent)
        self.report = Path(report)
        self.open_url = open_url
        self.viewer: ReportInQgis | None = None
        self.setWindowTitle("Lodestar: the report did not open")
        layout = QVBoxLayout(self)
        self.label = QLabel(breakable(f"No web browser opened the report. It is here:\n{self.report}"), self)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        layout.addWidget(self.label)
        self.folder_label = QLabel(self)
        self.folder_label.setWordWrap(True)
        layout.addWidget(self.folder_label)
        buttons = QHBoxLayout()
        self.show_button = QPushButton("Show it in QGIS", self)
        self.show_button.clicked.connect(lambda *_: self.show_here())
        self.folder_button = QPushButton("Open folder", self)
        self.folder_button.clicked.connect(lambda *_: self.open_folder())
        self.copy_button = QPushButton("Copy path", self)
        self.copy_button.clicked.connect(lambda *_: self.copy_path())
        close = QPushButton("Close", self)
        close.clicked.connect(self.accept)
        for button in (self.show_button, self.folder_button, self.copy_button, close):
            buttons.addWidget(button)
        layout.addLayout(buttons)

    def show_here(self) -> ReportInQgis:
        self.viewer = ReportInQgis(self.report, self.parentWidget())
        self.viewer.show()
        return self.viewer

    def open_folder(self) -> bool:
        opened = bool(self.open_url(QUrl.fromLocalFile(str(self.report.parent))))
        if not opened:
            self.folder_label.setText(breakable(f"No file manager opened the folder either: {self.report.parent} "
                                                "(use Copy path, or Show it in QGIS)."))
        return opened

    def copy_path(self) -> str:
        QApplication.clipboard().setText(str(self.report))
        self.folder_label.setText("The report's path is on the clipboard.")
        return str(self.report)


def open_report(report, open_url, parent=None) -> ReportNotOpened | None:
    """Open `report` with `open_url` (QDesktopServices.openUrl or a replacement); when that fails, show and return
    the dialog that offers the other ways (None when the browser took it)."""
    if open_url(QUrl.fromLocalFile(str(report))):
        return None
    dialog = ReportNotOpened(Path(report), open_url, parent)
    dialog.show()
    return dialog
