"""Missing Python packages in the dock: what needs each, the install command for this platform with *Copy
command*, and *Install missing packages*, which runs pip with QGIS's own Python into the QGIS profile (progress
and a clear result). `MissingPackagesDock` stands in for the Lodestar dock when a package it needs is missing."""
from __future__ import annotations

from pathlib import Path

from qgis.core import QgsApplication
from qgis.gui import QgsCollapsibleGroupBox, QgsDockWidget
from qgis.PyQt.QtCore import QProcess, Qt
from qgis.PyQt.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..plugin.dependencies import (
    PLATFORM_NAMES,
    Package,
    detect_platform,
    install_command,
    pip_install_args,
    profile_packages_dir,
    where_to_run,
)

LOG_TAIL_LINES = 12
"""The last lines of pip's output quoted in a failure message."""


class PackagesPanel(QWidget):
    """The missing `packages` (public for tests: `command`, `copy_button`, `install_button`, `progress`, `log`,
    `result`, `process`); `python` and `profile_dir` default to QGIS's own."""

    def __init__(self, packages: list[Package], parent=None, platform: str | None = None, python: str | None = None,
                 profile_dir: str | None = None):
        super().__init__(parent)
        self.setObjectName("lodestarPackagesPanel")
        self.packages = list(packages)
        self.platform = platform or detect_platform()
        self.profile_dir = profile_dir or QgsApplication.qgisSettingsDirPath()
        self.args = pip_install_args(self.packages, self.profile_dir, python)
        self.process: QProcess | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        needs = QLabel("<br>".join(f"<b>{p.pip}</b>: {p.needed_for}" for p in self.packages), self)
        needs.setWordWrap(True)
        layout.addWidget(needs)
        where = QLabel(f"On {PLATFORM_NAMES[self.platform]}, run this {where_to_run(self.platform)}:", self)
        where.setWordWrap(True)
        layout.addWidget(where)
        self.command = QLineEdit(install_command(self.packages, self.platform), self)
        self.command.setReadOnly(True)
        self.command.setCursorPosition(0)
        self.command.setToolTip(self.command.text())
        layout.addWidget(self.command)
        buttons = QHBoxLayout()
        self.copy_button = QPushButton("Copy command", self)
        self.copy_button.clicked.connect(lambda *_: QApplication.clipboard().setText(self.command.text()))
        buttons.addWidget(self.copy_button)
        self.install_button = QPushButton("Install missing packages", self)
        self.install_button.setToolTip("Runs pip with QGIS's own Python, installing into your QGIS profile "
                                       f"({profile_packages_dir(self.profile_dir)}); needs an internet connection")
        self.install_button.clicked.connect(lambda *_: self.install())
        buttons.addWidget(self.install_button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 0)  # pip gives no fraction done: a busy bar while it runs
        self.progress.setVisible(False)
        layout.addWidget(self.progress)
        self.log = QPlainTextEdit(self)
        self.log.setReadOnly(True)
        self.log.setMaximumHeight(120)
        self.log.setVisible(False)
        layout.addWidget(self.log)
        self.result = QLabel(self)
        self.result.setWordWrap(True)
        self.result.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.result.setVisible(False)
        layout.addWidget(self.result)

    def install(self) -> QProcess:
        """Start pip (`self.args`) in the background; its output goes to the log, its result to `result`."""
        self.install_button.setEnabled(False)
        self.progress.setVisible(True)
        self.log.setVisible(True)
        self.log.setPlainText(" ".join(self.args))
        self.result.setVisible(False)
        process = QProcess(self)
        process.setProcessChannelMode(QProcess.MergedChannels)
        process.readyReadStandardOutput.connect(self._output)
        process.finished.connect(self._finished)
        process.errorOccurred.connect(self._failed_to_start)
        self.process = process
        process.start(self.args[0], self.args[1:])
        return process

    def _output(self) -> None:
        text = bytes(self.process.readAllStandardOutput()).decode("utf-8", "replace").rstrip()
        if text:
            self.log.appendPlainText(text)

    def _finished(self, code: int, _status=None) -> None:
        self._output()
        if code == 0:
            self._show(f"Installed {', '.join(p.pip for p in self.packages)} into "
                       f"{profile_packages_dir(self.profile_dir)}. Restart QGIS to use them.", ok=True)
        else:
            tail = "\n".join(self.log.toPlainText().splitlines()[-LOG_TAIL_LINES:])
            self._show(f"pip failed (exit code {code}), nothing was changed in QGIS. Its last lines:\n{tail}\n"
                       f"Run the command above instead.", ok=False)

    def _failed_to_start(self, error) -> None:
        if error == QProcess.FailedToStart:
            self._show(f"Could not start {Path(self.args[0]).name} ({self.args[0]}): run the command above "
                       "instead.", ok=False)

    def _show(self, text: str, ok: bool) -> None:
        self.progress.setVisible(False)
        self.install_button.setEnabled(not ok)
        self.result.setText(text)
        self.result.setStyleSheet(f"color: {'#1b5e20' if ok else '#b71c1c'};")
        self.result.setVisible(True)


def optional_packages_box(packages: list[Package], parent=None) -> QgsCollapsibleGroupBox:
    """The optional packages not installed, collapsed under one line that names them (for the top of the dock)."""
    box = QgsCollapsibleGroupBox(f"Optional packages not installed: {', '.join(p.pip for p in packages)}", parent)
    box.setObjectName("lodestarOptionalPackages")
    layout = QVBoxLayout(box)
    layout.addWidget(PackagesPanel(packages, box))
    box.setCollapsed(True)
    return box


class MissingPackagesDock(QgsDockWidget):
    """The Lodestar dock when a package it needs is missing: what to install and how, and nothing that could
    fail. The Processing algorithms that need none of them stay in the Toolbox."""

    def __init__(self, packages: list[Package], parent=None):
        super().__init__("Lodestar", parent)
        self.setObjectName("LodestarDock")
        body = QWidget(self)
        layout = QVBoxLayout(body)
        intro = QLabel("Lodestar needs Python packages that this QGIS does not have. Install them, then restart "
                       "QGIS; until then the Processing algorithms that need none of them work from the "
                       "Toolbox.", body)
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.packages = PackagesPanel(packages, body)
        layout.addWidget(self.packages)
        layout.addStretch(1)
        self.setWidget(body)

    def shutdown(self, timeout_s: float = 0.0) -> None:
        """Unloading: stop a pip still running (the dock's API)."""
        process = self.packages.process
        if process is not None and process.state() != QProcess.NotRunning:
            process.kill()
            process.waitForFinished(int(timeout_s * 1000) or 1000)
