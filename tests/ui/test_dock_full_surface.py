"""The dock makes a finished run's favourability surface at full resolution, block by block, in a background task
on the Dask scheduler of the Settings (local threads when none), and adds it to the run's group."""
from __future__ import annotations

import numpy as np
import rasterio
from qgis.core import QgsProject

from lodestar.plugin.favourability.blockwise import full_resolution_grid
from lodestar.plugin.runs.run_history import run_inputs
from lodestar.tests.ui.dock_steps import bar_texts, run_to_end, set_case_roles
from lodestar.ui.settings_dialog import PluginSettings
from lodestar.ui.task import wait_for


def _run(dock, sample):
    case, layers = sample
    set_case_roles(dock, case, layers)
    dock.ui.questionEdit.setPlainText(case.question)
    run_to_end(dock)
    assert dock.ui.fullSurfaceButton.isEnabled()


def test_the_full_resolution_surface_joins_the_runs_group(dock, sample):
    _run(dock, sample)
    dock.ui.fullSurfaceButton.click()
    task = dock.surface_task
    assert task is not None and not dock.ui.fullSurfaceButton.isEnabled()
    assert wait_for(task, 180) and dock.surface_task is None
    layer = dock.run_layers["favourability_full"]
    assert layer.name() == "Favourability (full resolution)" and layer.isValid()
    assert dock.run_group.findLayer(layer.id()) is not None and layer.id() in QgsProject.instance().mapLayers()
    _, grid = full_resolution_grid(run_inputs(dock.run_folder))
    with rasterio.open(dock.run_folder / "favourability_full.tif") as src:
        assert (src.width, src.height) == (grid.width, grid.height) == (layer.width(), layer.height())
        assert src.profile["tiled"] and src.overviews(1)
        values = src.read(1, masked=True)
    assert 0.0 <= float(values.min()) and float(values.max()) <= 1.0 and float(np.ptp(values)) > 0.2
    assert "Full-resolution surface:" in dock.ui.statusLabel.text() and dock.ui.fullSurfaceButton.isEnabled()


def test_the_scheduler_of_the_settings_is_used_and_an_unreachable_one_is_said(dock, sample, monkeypatch):
    from lodestar.plugin import cluster

    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT_S", 1)  # nothing listens: the wait is all the connection does
    _run(dock, sample)
    settings = PluginSettings.load()
    settings.dask_scheduler = "tcp://127.0.0.1:9"  # nothing listens there
    settings.save()
    before = set(QgsProject.instance().mapLayers())
    dock.ui.fullSurfaceButton.click()
    assert wait_for(dock.surface_task, 60) and dock.surface_task is None
    assert any("Cannot reach the Dask scheduler at tcp://127.0.0.1:9" in text for text in bar_texts(dock))
    assert set(QgsProject.instance().mapLayers()) == before and "favourability_full" not in dock.run_layers
    assert not (dock.run_folder / "favourability_full.tif").exists()
