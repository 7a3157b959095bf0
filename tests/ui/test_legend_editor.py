"""The legend editor: a scanned map's legend read in a background task, shown as a table (colour, name, share), names
and colours corrected, Apply writing the corrections and classifying again; opened from the dock's Legend... button."""
from __future__ import annotations

import shutil

import numpy as np
import pytest
import rasterio
from qgis.core import QgsProject, QgsRasterLayer
from qgis.PyQt.QtCore import Qt
from scanned_maps import make_scanned_map

from lodestar.plugin.tools.categorical import read_legend
from lodestar.plugin.tools.map_legend import LegendOutputs, read_sidecar
from lodestar.tests.ui.dock_steps import bar_texts
from lodestar.ui.legend_editor import COLOUR, NAME, LegendEditor
from lodestar.ui.task import wait_for

pytestmark = pytest.mark.skipif(shutil.which("tesseract") is None,
                                reason="Tesseract OCR is not installed (Debian: apt-get install tesseract-ocr)")


@pytest.fixture
def project(qgis_new_project):
    yield QgsProject.instance()
    QgsProject.instance().removeAllMapLayers()


def test_the_editor_shows_corrects_and_reclassifies(qgis_app, project, tmp_path):
    scan = make_scanned_map(9, units=6)
    image = scan.write(tmp_path / "scan.tif")
    outputs = LegendOutputs.beside(tmp_path / "legends" / "scan_units.tif")
    editor = LegendEditor(outputs)
    task = editor.read(image)
    assert wait_for(task, 120) and editor.task is None, editor.note.text()
    table = editor.table
    assert table.rowCount() == 6
    assert [table.item(r, NAME).text() for r in range(6)] == scan.names
    shares = [float(table.item(r, 3).text().split()[0]) for r in range(6)]
    assert sum(shares) == pytest.approx(100, abs=0.5) and min(shares) > 0
    assert table.item(2, COLOUR).background().color().getRgb()[:3] == editor.reading.units[2].rgb
    layer = editor.layer
    assert layer is not None and project.mapLayer(layer.id()) is layer
    assert [c.label for c in layer.renderer().classes()] == scan.names
    first_id = layer.id()

    # the geologist renames unit 1 and gives unit 2 a wrong colour: Apply writes both and classifies again
    table.item(0, NAME).setText("Porphyritic granite")
    editor.set_colour(1, (0, 0, 255))
    assert editor.corrections() == {1: {"name": "Porphyritic granite"}, 2: {"rgb": (0, 0, 255)}}
    task = editor.apply()
    assert task is not None and wait_for(task, 120) and editor.task is None, editor.note.text()
    corrections = outputs.raster.with_name("scan_units_corrections.csv").read_text(encoding="utf-8").splitlines()
    assert corrections == ["value,name,r,g,b", "1,Porphyritic granite,,,", "2,,0,0,255"]
    assert read_legend(outputs.legend)[1] == "Porphyritic granite"
    recorded = read_sidecar(outputs.sidecar).corrections
    assert [(c["value"], c["field"]) for c in recorded] == [(1, "name"), (2, "colour")]
    with rasterio.open(outputs.raster) as ds:
        codes = ds.read(1)
    assert (codes[scan.truth == 2] == 2).mean() < 0.5  # the wrong colour loses the unit's pixels
    assert table.item(0, NAME).text() == "Porphyritic granite" and "2 correction(s)" in editor.note.text()
    assert project.mapLayer(first_id) is None and editor.layer.renderer().classes()[0].label == "Porphyritic granite"
    assert len(project.mapLayers()) == 1  # the unit layer replaced, not added twice

    # the colour put back as read: the unit's pixels return
    editor.set_colour(1, editor.reading.units[1].read_rgb)
    assert editor.corrections() == {1: {"name": "Porphyritic granite"}}
    assert wait_for(editor.apply(), 120)
    with rasterio.open(outputs.raster) as ds:
        assert (ds.read(1)[scan.truth == 2] == 2).mean() > 0.95
    editor.close()


def test_the_dock_button_opens_the_editor_on_the_selected_image(dock, tmp_path):
    scan = make_scanned_map(11, units=6)
    image = scan.write(tmp_path / "scan_image.tif")
    layer = QgsRasterLayer(str(image), "scanned geology")
    assert layer.isValid()
    QgsProject.instance().addMapLayer(layer)
    tree = dock.ui.layerTree
    button = dock.body.findChild(type(dock.ui.refreshButton), "legendButton")
    assert button is not None and button.text() == "Legend..."
    # a one-band layer selected: the dock says what to select
    single = next(tree.topLevelItem(i) for i in range(tree.topLevelItemCount())
                  if QgsProject.instance().mapLayer(tree.topLevelItem(i).data(0, Qt.UserRole)).bandCount() == 1)
    tree.setCurrentItem(single)
    button.click()
    assert any("Select a map image" in text for text in bar_texts(dock))
    row = next(tree.topLevelItem(i) for i in range(tree.topLevelItemCount())
               if tree.topLevelItem(i).data(0, Qt.UserRole) == layer.id())
    tree.setCurrentItem(row)
    button.click()
    editor = dock.legend_editor
    assert wait_for(editor.task, 120), editor.note.text()
    assert [editor.table.item(r, NAME).text() for r in range(6)] == scan.names
    assert editor.outputs.raster.parent.name == "legends" and editor.outputs.raster.is_file()
    units = editor.layer
    assert units.name() == "scan_image (units)" and np.isclose(units.extent().xMinimum(), layer.extent().xMinimum())
    # the unit map joins the dock's layers as a geological map, its legend beside it
    row = next(r for r in dock.layers.rows() if r["id"] == units.id())
    assert row["combo"].currentData() == "geological_map"
    spec = next(s for s in dock.layers.named_specs() if s.name == units.name())
    assert spec.legend == editor.outputs.legend
    editor.close()
