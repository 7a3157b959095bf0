"""The plugin loads and unloads cleanly in real QGIS, twice, and registers its provider."""
from __future__ import annotations

import importlib

from qgis.core import QgsApplication


def _plugin_objects(iface):
    main = iface.mainWindow()
    from qgis.gui import QgsDockWidget
    from qgis.PyQt.QtWidgets import QAction

    docks = [d for d in main.findChildren(QgsDockWidget) if d.objectName() == "LodestarDock"]
    actions = [a for a in main.findChildren(QAction) if a.objectName() == "lodestarShowDock"]
    return docks, actions


def test_load_unload_twice_leaves_nothing(qgis_app, qgis_iface):
    package = importlib.import_module("lodestar")
    registry = QgsApplication.processingRegistry()
    for _ in range(2):
        plugin = package.classFactory(qgis_iface)
        plugin.initGui()
        assert registry.providerById("lodestar") is not None
        plugin.action.trigger()  # show the dock
        docks, actions = _plugin_objects(qgis_iface)
        assert plugin.dock is not None and not plugin.dock.isHidden()
        assert len(actions) == 1
        plugin.action.trigger()  # hide it again
        assert plugin.dock.isHidden()
        plugin.unload()
        QgsApplication.processEvents()
        from qgis.PyQt.QtCore import QCoreApplication, QEvent

        QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)
        assert registry.providerById("lodestar") is None
        docks, actions = _plugin_objects(qgis_iface)
        assert docks == [] and actions == []


def test_init_processing_alone_registers_provider(qgis_app):
    package = importlib.import_module("lodestar")
    plugin = package.classFactory(None)
    plugin.initProcessing()
    try:
        provider = QgsApplication.processingRegistry().providerById("lodestar")
        assert provider.name() == "Lodestar"
        ids = {alg.id() for alg in provider.algorithms()}
        from lodestar.processing.provider import algorithm_classes, model_files

        assert ids == ({f"lodestar:{cls.ALGORITHM_ID}" for cls in algorithm_classes()}
                       | {f"lodestar:{path.stem}" for path in model_files()})
    finally:
        plugin.unload()
    assert QgsApplication.processingRegistry().providerById("lodestar") is None
