"""Regenerate the screenshots in docs/ (shown in the README): `make screenshots`, or

    .venv/bin/python scripts/screenshots.py [--out docs] [--only report] [--only dock]

Each shot is one function `shot_<name>(shots)` registered in SHOTS (in the order they run); add a shot by
writing such a function and listing it there. All shots share one QGIS application; each run is offline, in a
temporary folder, never in a user profile:

- dock:   the dock after an offline run on the Murchison case, validation page (docs/dock.png;
          scripts/screenshot_dock.py does the work);
- dock_before, dock_after: the dock before a run (Ask tab) and after it (Results tab) (docs/dock-before.png,
          docs/dock-after.png);
- report: the top of the HTML report a run writes (answer, prospectivity map with ranked targets, targets)
          rendered as a browser shows it (QtWebKit; QTextBrowser where QtWebKit is missing) (docs/report.png),
          and the report's map figure itself (docs/report_map.png).

Runs headless (QT_QPA_PLATFORM=offscreen is set when no display is given).
"""
from __future__ import annotations

import argparse
import gc
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "resources" / "sample" / "porphyry-demo" / "case.json"
MURCHISON = ROOT / "tests" / "data" / "murchison-gold" / "case.json"
REPORT_WIDTH = 1100
"""Width (pixels) of the browser window the report is shown in."""
REPORT_MAX_HEIGHT = 2600
"""The report shot ends after the summary's targets table, or at this height."""


@dataclass
class Shots:
    """What the shots share: the QGIS application, the output folder, a scratch folder and the sample run."""

    app: object
    out: Path
    scratch: Path
    written: list = field(default_factory=list)
    _run: object = None

    def sample_run(self):
        """The offline run of the sample case (made once, on first use): an AnalysisResult."""
        if self._run is None:
            from lodestar.plugin.analysis import AnalysisRequest
            from lodestar.plugin.case import read_case
            from lodestar.plugin.engine.run import run_analysis

            case = read_case(SAMPLE)
            self._run = run_analysis(AnalysisRequest(case.layers, case.question, self.scratch / "sample-run",
                                                     dict(case.choices), case_id=case.id, deposits=case.deposits))
        return self._run

    def path(self, name: str) -> Path:
        self.out.mkdir(parents=True, exist_ok=True)
        path = self.out / name
        self.written.append(path)
        return path


def shot_dock(shots: Shots) -> None:
    """docs/dock.png (the README's first picture): the dock after an offline run on the Murchison gold case, its
    Results tab on the validation page (the surface and targets against the 255 known deposits)."""
    import screenshot_dock

    args = argparse.Namespace(out=str(shots.path("dock.png")), case=str(MURCHISON), timeout=300.0, tab="results",
                              page="validation")
    screenshot_dock._screenshot(shots.app, args)


def shot_dock_before(shots: Shots) -> None:
    """docs/dock-before.png: the dock before a run (layers listed with their roles in words, the question, the
    reasoner and the map options)."""
    import screenshot_dock

    args = argparse.Namespace(out=str(shots.path("dock-before.png")), case=str(SAMPLE), timeout=300.0, tab="inputs",
                              page="chain", before=True)
    screenshot_dock._screenshot(shots.app, args)


def shot_dock_after(shots: Shots) -> None:
    """docs/dock-after.png: the dock after an offline run, its Results tab shown (answer, chain, targets)."""
    import screenshot_dock

    args = argparse.Namespace(out=str(shots.path("dock-after.png")), case=str(SAMPLE), timeout=300.0, tab="results",
                              page="chain")
    screenshot_dock._screenshot(shots.app, args)


def shot_report(shots: Shots) -> None:
    """docs/report.png: the top of the sample run's report; docs/report_map.png: its map figure."""
    from lodestar.plugin.engine.report import FIGURES

    result = shots.sample_run()
    report = Path(result.outputs["report"])
    image = render_html(report, REPORT_WIDTH, REPORT_MAX_HEIGHT, end_after="#summary table.targets")
    if not image.save(str(shots.path("report.png"))):
        raise SystemExit("could not write report.png")
    shutil.copyfile(report.parent / FIGURES["map"], shots.path("report_map.png"))


def render_html(path: Path, width: int, max_height: int, end_after: str = ""):
    """A QImage of the HTML file as a browser shows it, `width` wide, cut after the element matching the CSS
    selector `end_after` (plus a margin), at most `max_height` tall."""
    try:
        from qgis.PyQt.QtWebKitWidgets import QWebPage
    except ImportError:
        return _render_text_browser(path, width, max_height)
    from qgis.PyQt.QtCore import QEventLoop, QSize, Qt, QUrl
    from qgis.PyQt.QtGui import QColor, QImage, QPainter

    page = QWebPage()
    for orientation in (Qt.Horizontal, Qt.Vertical):
        page.mainFrame().setScrollBarPolicy(orientation, Qt.ScrollBarAlwaysOff)
    loop = QEventLoop()
    page.mainFrame().loadFinished.connect(lambda ok: loop.quit())
    page.mainFrame().load(QUrl.fromLocalFile(str(path)))
    loop.exec_()
    page.setViewportSize(QSize(width, 800))
    frame = page.mainFrame()
    height = frame.contentsSize().height()
    if end_after:
        element = frame.findFirstElement(end_after)
        if not element.isNull():
            height = element.geometry().bottom() + 40
    height = min(height, max_height)
    page.setViewportSize(QSize(width, height))
    image = QImage(width, height, QImage.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    frame.render(painter)
    painter.end()
    return image


def _render_text_browser(path: Path, width: int, max_height: int):
    """The QTextBrowser rendering (Qt's rich-text subset) where QtWebKit is not installed."""
    from qgis.PyQt.QtCore import QUrl
    from qgis.PyQt.QtWidgets import QTextBrowser

    browser = QTextBrowser()
    browser.setSearchPaths([str(path.parent)])
    browser.setSource(QUrl.fromLocalFile(str(path)))
    browser.resize(width, max_height)
    return browser.grab().toImage()


SHOTS: dict[str, Callable[[Shots], None]] = {"dock": shot_dock, "dock_after": shot_dock_after,
                                              "dock_before": shot_dock_before, "report": shot_report}
"""Every shot, in the order they run."""


def _import_path() -> None:
    """Import the checkout as the `lodestar` package (as tests do), and the other scripts."""
    package_dir = ROOT / "build" / "testpkg"
    package_dir.mkdir(parents=True, exist_ok=True)
    link = package_dir / "lodestar"
    if not link.is_symlink():
        link.symlink_to(ROOT, target_is_directory=True)
    for entry in (str(ROOT / "scripts"), str(package_dir)):
        if entry not in sys.path:
            sys.path.insert(0, entry)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs"), help="folder the screenshots are written to")
    parser.add_argument("--only", action="append", choices=sorted(SHOTS), help="take only this shot (repeatable)")
    args = parser.parse_args(argv)
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("GDAL_PAM_ENABLED", "NO")  # leave no .aux.xml beside the sample rasters
    _import_path()

    from qgis.core import QgsApplication

    profile = ROOT / "build" / "screenshot-profile"
    profile.mkdir(parents=True, exist_ok=True)
    app = QgsApplication([], True, str(profile))
    app.initQgis()
    scratch = Path(tempfile.mkdtemp(prefix="lodestar-screenshots-"))
    shots = Shots(app, Path(args.out), scratch)
    try:
        for name, shot in SHOTS.items():
            if not args.only or name in args.only:
                shot(shots)
        for path in shots.written:
            print(path)
    finally:
        gc.collect()  # Qt objects of the shots go before QGIS exits
        app.exitQgis()
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
