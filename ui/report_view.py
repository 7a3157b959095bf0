"""Opening a run's report: in the system's browser, and when none opens it (no browser registered: QGIS's
`QDesktopServices.openUrl` returns False; or, on Linux, no program set for web pages, which openUrl does not see), a
dialog that says where the report is and why it did not open, and offers to show it inside QGIS, open its folder or
copy its path; never nothing."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
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
    """Said when no browser opened the report: its path (selectable), why (`problem`, in red), and Show it in QGIS /
    Open folder / Copy path."""

    def __init__(self, report: Path, open_url, parent=None, problem: str = ""):
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
        self.error = QLabel(breakable(f"Why: {problem}.") if problem else "", self)
        self.error.setObjectName("reportError")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b71c1c;")
        self.error.setVisible(bool(problem))
        layout.addWidget(self.error)
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


BROWSERS = ("x-www-browser", "firefox", "chromium", "chromium-browser", "google-chrome", "epiphany", "konqueror",
            "falkon", "www-browser", "lynx", "w3m")
"""Programs xdg-open hands a web page to when no default is set (its generic fallback list, and the usual ones)."""


def browser_problem() -> str:
    """Why no web browser would open a local web page, '' when one would (or the system cannot be asked). On Linux
    QGIS hands the page to xdg-open and calls that a success whatever it does: with no program set for web pages
    (a bare desktop, a server under Xvfb) nothing opens and nothing is said."""
    if not sys.platform.startswith("linux") or os.environ.get("BROWSER"):
        return ""
    if shutil.which("xdg-open") is None:
        return "xdg-open is not installed, so no program can be asked to open web pages"
    try:
        default = subprocess.run(["xdg-mime", "query", "default", "text/html"], capture_output=True, text=True,
                                 timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        default = ""
    if default or any(shutil.which(name) for name in BROWSERS):
        return ""
    return "no program is set to open web pages (xdg-mime has no default for text/html and no browser is installed)"


def open_report(report, open_url, parent=None, problem: str = "") -> ReportNotOpened | None:
    """Open `report` with `open_url` (QDesktopServices.openUrl or a replacement) unless `problem` says no browser
    would (`browser_problem`); when that fails, show and return the dialog that offers the other ways, the reason on
    its last line (None when the browser took it)."""
    if not problem and open_url(QUrl.fromLocalFile(str(report))):
        return None
    dialog = ReportNotOpened(Path(report), open_url, parent, problem or "the system did not open it")
    dialog.show()
    return dialog
