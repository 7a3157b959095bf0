"""A map of unit codes drawn in its legend's words and colours: each unit a class of a paletted renderer, named as its
legend CSV names it, coloured as the CSV says (its r, g, b columns) or else by UNIT_COLOURS in code order, so a
geological map loads in colour rather than grey."""
from __future__ import annotations

from qgis.core import QgsPalettedRasterRenderer, QgsRasterLayer
from qgis.PyQt.QtGui import QColor

from ..plugin.errors import LodestarError
from ..plugin.tools.categorical import legend_colours, read_legend

UNIT_COLOURS = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5", "#d9d9d9",
                "#bc80bd", "#ccebc5", "#ffed6f")
"""Colours of units whose legend gives none (ColorBrewer Set3: twelve that tell apart, none that reads as nodata)."""


def style_unit_map(layer: QgsRasterLayer, legend) -> bool:
    """Draw `layer` (a one-band map of unit codes) with its legend's units; False, and the layer left as it was,
    when the legend cannot be read."""
    try:
        names, colours = read_legend(legend), legend_colours(legend)
    except LodestarError:
        return False
    classes = [QgsPalettedRasterRenderer.Class(code, QColor(*colours[code]) if code in colours else
                                               QColor(UNIT_COLOURS[i % len(UNIT_COLOURS)]), name)
               for i, (code, name) in enumerate(sorted(names.items()))]
    layer.setRenderer(QgsPalettedRasterRenderer(layer.dataProvider(), 1, classes))
    layer.triggerRepaint()
    return True
