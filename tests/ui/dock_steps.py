"""Steps the dock tests share: set the roles of a case's layers, read the message bar, run to the end."""
from __future__ import annotations

from qgis.core import QgsApplication

from lodestar.ui.task import wait_for

RUN_TIMEOUT_S = 240


def set_case_roles(panel, case, layers) -> None:
    for spec in case.layers:
        panel.layers.set_role(layers[spec.name].id(), spec.role)


def bar_texts(panel) -> list:
    return [item.text() for item in panel.ui.messageBar.items()]


def run_to_end(panel):
    """Start a run, wait for its task (failing with the dock's own input problem if it would not start)."""
    task = panel.run()
    assert task is not None, panel.input_problem()
    assert wait_for(task, RUN_TIMEOUT_S)
    QgsApplication.processEvents()
    assert panel.task is None
    return task


def open_dock(qgis_iface):
    """A dock panel for a fixture: yields it, then shuts it down and lets Qt delete it."""
    from qgis.PyQt.QtCore import QCoreApplication, QEvent

    from lodestar.ui.dock import LodestarDock

    panel = LodestarDock(qgis_iface, qgis_iface.mainWindow())
    yield panel
    panel.shutdown()
    panel.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)
