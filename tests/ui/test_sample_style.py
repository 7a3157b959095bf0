"""Load the sample case: its geological map is drawn in its legend's units and colours (issue 61: it loaded in grey
although its legend CSV sits beside it)."""
from __future__ import annotations

from qgis.core import QgsProject

from lodestar.plugin.tools.categorical import read_legend
from lodestar.processing.unit_style import UNIT_COLOURS, style_unit_map
from lodestar.ui.sample_case import SAMPLE, load_sample


def test_the_sample_geological_map_loads_in_its_units_colours(qgis_new_project):
    layers = load_sample()
    try:
        geology = layers["geological map"]
        renderer = geology.renderer()
        assert renderer.type() == "paletted"
        legend = read_legend(SAMPLE.parent / "geology_legend.csv")
        classes = renderer.classes()
        assert [(c.value, c.label) for c in classes] == sorted(legend.items())
        assert len({c.color.name() for c in classes}) == len(classes) == 6  # six units, six colours
        assert classes[4].label == "Tqmp Tertiary quartz monzonite porphyry"
        assert classes[0].color.name() == UNIT_COLOURS[0]
    finally:
        QgsProject.instance().removeAllMapLayers()
        QgsProject.instance().layerTreeRoot().removeAllChildren()


def test_a_legend_with_colours_gives_its_own_and_a_bad_legend_leaves_the_layer(qgis_new_project, tmp_path):
    from qgis.core import QgsRasterLayer

    layer = QgsRasterLayer(str(SAMPLE.parent / "geology.tif"), "geology")
    legend = tmp_path / "geology_legend.csv"
    legend.write_text("value,name,r,g,b\n1,schist,200,10,10\n2,limestone,10,200,10\n")
    assert style_unit_map(layer, legend)
    assert [(c.label, c.color.name()) for c in layer.renderer().classes()] == [("schist", "#c80a0a"),
                                                                                 ("limestone", "#0ac80a")]
    before = layer.renderer().type()
    assert not style_unit_map(layer, tmp_path / "missing.csv") and layer.renderer().type() == before
