"""Regenerate the screenshots in docs/ (shown in the README): `make screenshots`, or

    .venv/bin/python scripts/screenshots.py [--out docs] [--only report] [--only dock]

Each shot is one function `shot_<name>(shots)` registered in SHOTS (in the order they run); add a shot by
writing such a function and listing it there. All shots share one QGIS application; each run is offline, in a
temporary folder, never in a user profile:

- dock:   the dock after an offline run on the Murchison case, validation page (docs/dock.png;
          scripts/screenshot_dock.py does the work);
- dock_before, dock_reasoning, dock_after: the README's first run on the sample (loaded as Plugins > Lodestar >
          Load the sample case does, roles as guessed, "Where should we explore?"): the Ask tab before Run, the
          Reasoning and Results tabs after it (docs/dock-before.png, docs/dock-reasoning.png, docs/dock-after.png);
- dock_targets: the Results tab's Targets page after an offline run on the Murchison case, the best camp opened on
          its prospects (docs/dock-targets.png);
- dock_steering, dock_plan: the Great Basin case in the Ask tab before Run (the deposit model picker, and the
          warning that the geology map will not be used, with its fix) and its Results tab's editable evidence plan
          after the run (docs/dock-steering.png, docs/dock-plan.png);
- report: the top of the HTML report a run writes (answer, prospectivity map with ranked targets, targets)
          rendered as a browser shows it (QtWebKit; QTextBrowser where QtWebKit is missing) (docs/report.png),
          the report's map figure itself (docs/report_map.png), and the card of its best target
          (docs/report-target.png);
- report_prospects: the targets of the Murchison case's report and the prospects inside them (camps of an orogenic
          gold district and their prospects; docs/report-prospects.png).

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
GREAT_BASIN = ROOT / "tests" / "data" / "great-basin-gold" / "case.json"
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
            from lodestar.models import run_analysis
            from lodestar.plugin.analysis import AnalysisRequest
            from lodestar.plugin.request.case import read_case

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
    """docs/dock-before.png: the README's first run before Run: the sample loaded (Plugins > Lodestar > Load the
    sample case), its layers listed with the roles guessed, known deposits picked, "Where should we explore?"."""
    import screenshot_dock

    args = argparse.Namespace(out=str(shots.path("dock-before.png")), case=str(SAMPLE), timeout=300.0, tab="inputs",
                              page="chain", before=True, first_run=True)
    screenshot_dock._screenshot(shots.app, args)


def shot_dock_reasoning(shots: Shots) -> None:
    """docs/dock-reasoning.png: the README's first run after Run, its Reasoning tab (plan, tool calls, verdict)."""
    import screenshot_dock

    args = argparse.Namespace(out=str(shots.path("dock-reasoning.png")), case=str(SAMPLE), timeout=300.0,
                              tab="reasoning", page="chain", first_run=True)
    screenshot_dock._screenshot(shots.app, args)


def shot_dock_after(shots: Shots) -> None:
    """docs/dock-after.png: the README's first run after Run, its Results tab (answer, chain, targets)."""
    import screenshot_dock

    args = argparse.Namespace(out=str(shots.path("dock-after.png")), case=str(SAMPLE), timeout=300.0, tab="results",
                              page="chain", first_run=True)
    screenshot_dock._screenshot(shots.app, args)


def shot_dock_targets(shots: Shots) -> None:
    """docs/dock-targets.png: the Results tab's Targets page after an offline run on the Murchison case: every
    target with its tier, area, verdict, known deposits and why, the best opened on its prospects, sortable, with Zoom
    to / Select / Export."""
    import screenshot_dock

    args = argparse.Namespace(out=str(shots.path("dock-targets.png")), case=str(MURCHISON), timeout=300.0,
                              tab="results", page="targets")
    screenshot_dock._screenshot(shots.app, args)


def shot_dock_steering(shots: Shots) -> None:
    """docs/dock-steering.png: Great Basin before Run: the deposit model picker and the geology map's warning."""
    import screenshot_dock

    args = argparse.Namespace(out=str(shots.path("dock-steering.png")), case=str(GREAT_BASIN), timeout=300.0,
                              tab="inputs", page="chain", before=True)
    screenshot_dock._screenshot(shots.app, args)


def shot_dock_plan(shots: Shots) -> None:
    """docs/dock-plan.png: the Results tab's evidence plan after an offline run on Great Basin, edited as a geologist
    would (the host units named, the mapped faults weighed by distance with the midpoint set) and re-run: the table,
    the preview of the surface, the faults' response curve and the AUC beside the agent's plan's."""
    from qgis.PyQt.QtWidgets import QToolBox

    from lodestar.models import run_analysis
    from lodestar.plugin.request.case import read_case
    from lodestar.plugin.request.request import BackendValues, build_request
    from lodestar.ui.plan_editor import PlanEditor
    from lodestar.ui.task import wait_for

    case = read_case(GREAT_BASIN)
    run = run_analysis(build_request(case.layers, case.question, shots.scratch / "great-basin", BackendValues(),
                                     choices=case.choices, case_id=case.id, deposits=case.deposits))
    toolbox = QToolBox()
    editor = PlanEditor(toolbox)
    toolbox.resize(760, 700)
    editor.load(run.outputs["record"])
    layers = [row["spec"]["layer"] for row in editor.rows]
    for layer, key, value in (("geology (DDS-41 lithotectonic units)", "units", ["LPZE", "UPZC", "LPZ"]),
                              ("geology (DDS-41 lithotectonic units)", "weight", 1.25),
                              ("mapped faults", "midpoint", 2000.0), ("mapped faults", "weight", 0.8),
                              ("distance to faults (classes)", "weight", 0.0)):
        editor.set_value(layers.index(layer), key, value)
    editor.table.setCurrentCell(layers.index("mapped faults"), 0)
    task = editor.rerun()
    if task is None or not wait_for(task, 300) or task.result is None:
        raise SystemExit("the re-run with the edited plan did not finish: " + editor.status.text())
    toolbox.show()
    shots.app.processEvents()
    if not toolbox.grab().save(str(shots.path("dock-plan.png"))):
        raise SystemExit("could not write dock-plan.png")
    toolbox.hide()
    toolbox.deleteLater()


def shot_report(shots: Shots) -> None:
    """docs/report.png: the top of the sample run's report; docs/report_map.png: its map figure;
    docs/report-target.png: the report's card of its best target (its evidence pictured, a status per item of the
    deposit model, the verdict)."""
    from lodestar.plugin.report.report import FIGURES

    result = shots.sample_run()
    report = Path(result.outputs["report"])
    image = render_html(report, REPORT_WIDTH, REPORT_MAX_HEIGHT, end_after="#summary table.targets")
    if not image.save(str(shots.path("report.png"))):
        raise SystemExit("could not write report.png")
    shutil.copyfile(report.parent / FIGURES["map"], shots.path("report_map.png"))
    card = render_html(report, REPORT_WIDTH, REPORT_MAX_HEIGHT, end_after="div.target-card",
                       start_at="div.target-card")
    if not card.save(str(shots.path("report-target.png"))):
        raise SystemExit("could not write report-target.png")


def shot_report_prospects(shots: Shots) -> None:
    """docs/report-prospects.png: the Murchison case's report from its targets table to the prospects inside them."""
    from lodestar.models import run_analysis
    from lodestar.plugin.analysis import AnalysisRequest
    from lodestar.plugin.request.case import read_case

    case = read_case(MURCHISON)
    result = run_analysis(AnalysisRequest(case.layers, case.question, shots.scratch / "murchison-run",
                                          dict(case.choices), case_id=case.id, deposits=case.deposits))
    image = render_html(Path(result.outputs["report"]), REPORT_WIDTH, REPORT_MAX_HEIGHT,
                        end_after="#summary table.prospects", start_at="#summary table.targets")
    if not image.save(str(shots.path("report-prospects.png"))):
        raise SystemExit("could not write report-prospects.png")


def render_html(path: Path, width: int, max_height: int, end_after: str = "", start_at: str = ""):
    """A QImage of the HTML file as a browser shows it, `width` wide, from the top of the element matching the CSS
    selector `start_at` (less a margin; the page's top without it), cut after the element matching `end_after`
    (plus a margin), at most `max_height` tall."""
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
    top = 0
    if start_at:
        element = frame.findFirstElement(start_at)
        if not element.isNull():
            top = max(0, element.geometry().top() - 20)
    if end_after:
        element = frame.findFirstElement(end_after)
        if not element.isNull():
            height = element.geometry().bottom() + 40
    height = min(height - top, max_height)
    page.setViewportSize(QSize(width, top + height))
    image = QImage(width, height, QImage.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.translate(0, -top)
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


SHOTS: dict[str, Callable[[Shots], None]] = {"dock": shot_dock, "dock_before": shot_dock_before,
                                              "dock_reasoning": shot_dock_reasoning, "dock_after": shot_dock_after,
                                              "dock_targets": shot_dock_targets, "dock_steering": shot_dock_steering,
                                              "dock_plan": shot_dock_plan,
                                              "report": shot_report, "report_prospects": shot_report_prospects}
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
    from qgis.PyQt.QtCore import QCoreApplication, QSettings

    profile = ROOT / "build" / "screenshot-profile"
    profile.mkdir(parents=True, exist_ok=True)
    # settings in that profile, as QGIS keeps them (without this QSettings writes to the user's own folder)
    QCoreApplication.setOrganizationName("QGIS")
    QCoreApplication.setApplicationName("QGIS3")
    QSettings.setDefaultFormat(QSettings.IniFormat)
    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, str(profile))
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
