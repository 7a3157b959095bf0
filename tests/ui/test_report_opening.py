"""Open report never does nothing (issue 61): on a desktop with no program for web pages QGIS handed the page to
xdg-open, called it opened and nothing showed; now the dock asks first and shows the report's path, a Copy path
button and the reason."""
from __future__ import annotations

import os
import sys

import geopandas as gpd
import pytest
from qgis.PyQt.QtGui import QDesktopServices
from qgis.PyQt.QtWidgets import QApplication

from lodestar.plugin.analysis import AnalysisResult
from lodestar.ui.report_view import ReportNotOpened, browser_problem

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="xdg-open is Linux's opener")


def _programs(folder, *names):
    folder.mkdir(exist_ok=True)
    for name in names:
        path = folder / name
        path.write_text("#!/bin/sh\nexit 0\n")
        path.chmod(0o755)
    return str(folder)


def test_no_program_for_web_pages_is_said(monkeypatch, tmp_path):
    monkeypatch.delenv("BROWSER", raising=False)
    monkeypatch.setenv("PATH", _programs(tmp_path / "none"))
    assert browser_problem() == "xdg-open is not installed, so no program can be asked to open web pages"
    monkeypatch.setenv("PATH", _programs(tmp_path / "bare", "xdg-open", "xdg-mime"))  # xdg-mime answers nothing
    assert browser_problem().startswith("no program is set to open web pages")
    monkeypatch.setenv("PATH", _programs(tmp_path / "desktop", "xdg-open", "xdg-mime", "firefox"))
    assert browser_problem() == ""
    monkeypatch.setenv("BROWSER", "lynx")
    assert browser_problem() == ""


def test_open_report_without_a_program_for_web_pages_shows_the_path_a_copy_button_and_why(dock, monkeypatch,
                                                                                           tmp_path):
    monkeypatch.delenv("BROWSER", raising=False)
    monkeypatch.setenv("PATH", _programs(tmp_path / "bare", "xdg-open", "xdg-mime"))
    report = tmp_path / "report.html"
    report.write_text("<html><body>the report</body></html>")
    empty = gpd.GeoDataFrame(geometry=[])
    dock.results.result = AnalysisResult("A", "Yes", True, False, 1, empty, empty, empty, empty,
                                         outputs={"report": report})
    called = []
    monkeypatch.setattr(QDesktopServices, "openUrl", staticmethod(lambda url: called.append(url) or True))
    dock.results.open_url = QDesktopServices.openUrl  # the system's opener, as the dock has it
    dialog = dock.results.open_report()
    assert isinstance(dialog, ReportNotOpened) and dialog.isVisible() and not called  # not handed to nothing
    assert str(report) in dialog.label.text().replace("\u200b", "")
    assert dialog.error.text().replace("\u200b", "").startswith("Why: no program is set to open web pages")
    assert dialog.copy_button.isVisible() and dialog.copy_path() == str(report)
    assert QApplication.clipboard().text() == str(report)
    dialog.close()
    assert os.environ["PATH"].startswith(str(tmp_path))
