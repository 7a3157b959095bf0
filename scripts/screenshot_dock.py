"""Screenshot of the Lodestar dock after an offline run on the sample case (docs/dock.png).

Run under a virtual display:  xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python scripts/screenshot_dock.py
It builds a small QGIS main window (map canvas, Layers panel, the real Lodestar dock), loads the
sample case's layers (and its known deposits, picked in the dock so that the Results tab validates the
favourability surface against them), runs the offline reasoner through the dock as a user would, and grabs
the window.
An isolated QGIS profile under build/ is used; runs are written to a temporary folder.
"""
from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIR = ROOT / "build" / "testpkg"


def _import_path() -> None:
    """Import the checkout as the `lodestar` package (as tests do)."""
    PACKAGE_DIR.mkdir(parents=True, exist_ok=True)
    link = PACKAGE_DIR / "lodestar"
    if not link.is_symlink():
        link.symlink_to(ROOT, target_is_directory=True)
    sys.path.insert(0, str(PACKAGE_DIR))


class MiniIface:
    """The part of QgisInterface the dock uses."""

    def __init__(self, window, canvas):
        self._window, self._canvas = window, canvas

    def mainWindow(self):  # noqa: N802 (QGIS API name)
        return self._window

    def mapCanvas(self):  # noqa: N802 (QGIS API name)
        return self._canvas


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "dock.png"))
    parser.add_argument("--case", default=str(ROOT / "resources" / "sample" / "porphyry-demo" / "case.json"))
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--tab", choices=("inputs", "reasoning", "results"), default="reasoning",
                        help="the dock tab shown in the screenshot")
    parser.add_argument("--page", choices=("chain", "weights", "validation", "targets"), default="chain",
                        help="the page of the Results tab shown")
    parser.add_argument("--first-run", action="store_true",
                        help="the README's first run: the sample loaded as Plugins > Lodestar > Load the sample case "
                             "does, roles as guessed, known deposits picked, 'Where should we explore?' asked")
    args = parser.parse_args(argv)
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
    try:
        _screenshot(app, args)
    finally:
        gc.collect()  # Qt objects of the window go before QGIS exits
        app.exitQgis()
    return 0


DOCK_WIDTH = 760
"""The dock's width in the pictures (the README's): every column of the Ask tab reads whole at it (issue 61)."""


def _screenshot(app, args) -> None:
    from qgis.core import QgsLayerTreeModel, QgsProject, QgsRasterLayer, QgsVectorLayer
    from qgis.gui import QgsLayerTreeMapCanvasBridge, QgsLayerTreeView, QgsMapCanvas
    from qgis.PyQt.QtCore import Qt
    from qgis.PyQt.QtWidgets import QDockWidget, QMainWindow, QWidget

    from lodestar.plugin.request.case import read_case
    from lodestar.ui.dock import LodestarDock
    from lodestar.ui.settings_dialog import PluginSettings
    from lodestar.ui.task import wait_for

    runs = Path(tempfile.mkdtemp(prefix="lodestar-screenshot-"))
    PluginSettings(output_dir=str(runs)).save()

    window = QMainWindow()
    window.setWindowTitle("QGIS - Lodestar")
    window.resize(250 + DOCK_WIDTH + 660, 940)
    canvas = QgsMapCanvas(window)
    canvas.setCanvasColor(Qt.white)
    window.setCentralWidget(canvas)
    project = QgsProject.instance()
    root = project.layerTreeRoot()
    bridge = QgsLayerTreeMapCanvasBridge(root, canvas)  # noqa: F841 (keeps canvas and tree in sync)
    view = QgsLayerTreeView(window)
    model = QgsLayerTreeModel(root, view)  # goes with the view (a next shot changes the tree)
    model.setFlag(QgsLayerTreeModel.AllowNodeChangeVisibility)
    view.setModel(model)
    layers_dock = QDockWidget("Layers", window)
    layers_dock.setWidget(view)
    window.addDockWidget(Qt.LeftDockWidgetArea, layers_dock)

    case = read_case(args.case)
    first_run = getattr(args, "first_run", False)
    if first_run:  # the README's first run: Load the sample case, roles as guessed, "Where should we explore?"
        from lodestar.ui.dock import PRESETS
        from lodestar.ui.sample_case import DEPOSITS, load_sample

        sample = load_sample(project)
    else:
        for spec in case.layers:
            layer = (QgsVectorLayer(str(spec.path), spec.name, "ogr") if spec.is_vector
                     else QgsRasterLayer(str(spec.path), spec.name))
            if not layer.isValid():
                raise SystemExit(f"cannot open {spec.path}")
            project.addMapLayer(layer)
            if spec.role != "geological_map" and not spec.is_vector:
                root.findLayer(layer.id()).setItemVisibilityChecked(False)

    dock = LodestarDock(MiniIface(window, canvas), window)
    window.addDockWidget(Qt.RightDockWidgetArea, dock)
    window.resizeDocks([layers_dock, dock], [250, DOCK_WIDTH], Qt.Horizontal)
    window.show()
    if first_run:
        dock.map_options.set_deposits(sample[DEPOSITS])
        dock.ui.presetCombo.setCurrentIndex([label for label, _ in PRESETS].index("Where should we explore?"))
    else:
        for spec in case.layers:
            layer = project.mapLayersByName(spec.name)[0]
            dock.layers.set_role(layer.id(), spec.role)
        dock.ui.questionEdit.setPlainText(case.question)
        if case.deposits is not None:
            deposits = QgsVectorLayer(str(case.deposits), "known deposits", "ogr")
            project.addMapLayer(deposits)
            dock.map_options.set_deposits(deposits)
    if getattr(args, "before", False):  # the dock as a user first sees it: layers listed, roles guessed, Ask tab
        dock.ui.tabs.setCurrentWidget(dock.ui.inputsTab)
        app.processEvents()  # the layer tree bridge hands the canvas its layers first
        first = project.mapLayersByName(case.layers[0].name)[0]
        canvas.setDestinationCrs(first.crs())  # the map in the layers' CRS, as QGIS sets it from the first layer
        canvas.setExtent(first.extent())
        _grab_window(app, window, canvas, Path(args.out))
        print(f"{args.out}: before a run")
        _close(app, dock, canvas, window)
        return
    task = dock.run()
    if task is None:
        raise SystemExit("the dock refused to run: " + dock.input_problem())
    if not wait_for(task, args.timeout) or dock.result is None:
        raise SystemExit("the run did not finish: " + dock.ui.statusLabel.text())
    dock.ui.tabs.setCurrentWidget(getattr(dock.ui, args.tab + "Tab"))
    dock.ui.resultsToolBox.setCurrentWidget(getattr(dock.ui, args.page + "Page", None)
                                            or dock.findChild(QWidget, args.page + "Page"))
    if args.page == "targets":  # the best target opened on its prospects
        tree = dock.results.targets.tree
        if tree.topLevelItemCount():
            tree.topLevelItem(0).setExpanded(True)
    for node in root.findLayers():
        node.setExpanded(False)
    dock.run_group.setExpanded(True)
    view.expand(view.node2index(dock.run_group))
    for node in dock.run_group.findLayers():
        node.setExpanded(node.isVisible())
    prospect = dock.run_layers.get("prospectivity")
    canvas.setDestinationCrs(prospect.crs() if prospect else canvas.mapSettings().destinationCrs())
    extent = project.mapLayersByName(case.layers[0].name)[0].extent()
    canvas.setExtent(extent)
    out = Path(args.out)
    _grab_window(app, window, canvas, out)
    print(f"{out}: answer {dock.result.answer} ({dock.ui.statusLabel.text()})")
    _close(app, dock, canvas, window)


def _close(app, dock, canvas, window) -> None:
    """Leave nothing behind for a next shot in the same application: no run, no layer, no group."""
    from qgis.core import QgsProject

    dock.shutdown()
    canvas.stopRendering()
    window.hide()
    project = QgsProject.instance()
    project.removeAllMapLayers()
    project.layerTreeRoot().removeAllChildren()
    app.processEvents()


def _grab_window(app, window, canvas, out: Path) -> None:
    """Save the window once the map is drawn."""
    canvas.refreshAllLayers()
    started = time.monotonic()
    while time.monotonic() - started < 20 and (time.monotonic() - started < 1.0 or canvas.isDrawing()):
        app.processEvents()
        time.sleep(0.05)
    app.processEvents()
    out.parent.mkdir(parents=True, exist_ok=True)
    if not window.grab().save(str(out)):
        raise SystemExit(f"could not write {out}")


if __name__ == "__main__":
    raise SystemExit(main())
