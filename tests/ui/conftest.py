"""Fixtures of the dock and dialog tests: the sample case's layers in the project, runs in a temporary folder, the
dock itself, and an unlocked auth database."""
from __future__ import annotations

from pathlib import Path

import pytest
from qgis.core import QgsProject, QgsRasterLayer, QgsSettings, QgsVectorLayer

from lodestar.plugin.request.case import read_case
from lodestar.tests.ui.dock_steps import open_dock
from lodestar.ui.settings_dialog import PluginSettings

SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "sample" / "porphyry-demo"


@pytest.fixture
def runs_dir(tmp_path):
    """Runs go to a temporary folder with the offline reasoner; the plugin's settings are removed afterwards."""
    settings = PluginSettings(output_dir=str(tmp_path / "runs"), max_rounds=3)
    settings.save()
    yield tmp_path / "runs"
    for key in QgsSettings().allKeys():
        if key.startswith("lodestar/") and key != "lodestar/authcfg":
            QgsSettings().remove(key)


@pytest.fixture
def sample(qgis_new_project):
    """The sample case's layers in the project, under the names and roles of its case.json."""
    case = read_case(SAMPLE / "case.json")
    layers = {}
    for spec in case.layers:
        if spec.is_vector:
            layer = QgsVectorLayer(str(spec.path), spec.name, "ogr")
        else:
            layer = QgsRasterLayer(str(spec.path), spec.name)
        assert layer.isValid(), spec.path
        layers[spec.name] = layer
    QgsProject.instance().addMapLayers(list(layers.values()))
    yield case, layers
    QgsProject.instance().removeAllMapLayers()
    QgsProject.instance().layerTreeRoot().removeAllChildren()


@pytest.fixture
def dock(qgis_iface, sample, runs_dir):
    yield from open_dock(qgis_iface)
