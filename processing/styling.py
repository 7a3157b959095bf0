"""Outputs that Processing loads into the project get the Lodestar style (resources/styles)."""
from __future__ import annotations

from pathlib import Path

from qgis.core import QgsProcessingLayerPostProcessorInterface, QgsRasterLayer, QgsVectorLayer

from ..plugin.vector_io import write_vector
from .params import output_path

STYLES = Path(__file__).resolve().parents[1] / "resources" / "styles"


class StyleOnLoad(QgsProcessingLayerPostProcessorInterface):
    """Gives an output the Lodestar style when Processing loads it into the project."""

    _kept: dict = {}  # the Python side of each post-processor, kept alive while Processing may call it

    def __init__(self, style: str):
        super().__init__()
        self.style = style

    def postProcessLayer(self, layer, context, feedback):  # noqa: N802 (QGIS API name)
        if isinstance(layer, (QgsVectorLayer, QgsRasterLayer)):
            layer.loadNamedStyle(str(STYLES / self.style))
            layer.triggerRepaint()


def style_output(context, path: str, style: str) -> None:
    """Style the output `path` with `style` if Processing is to load it into the project (toolbox, models)."""
    if context.willLoadLayerOnCompletion(path):
        processor = StyleOnLoad._kept[path] = StyleOnLoad(style)
        context.layerToLoadOnCompletionDetails(path).setPostProcessor(processor)


def write_zones(algorithm, parameters, key, context, result, progress, name: str) -> dict:
    """A tool's log lines to the feedback and its zones to the destination `key`; the algorithm's results."""
    for line in result.log:
        progress.log(line)
    path = output_path(algorithm, parameters, key, context, name)
    write_vector(result.zones, path)
    style_output(context, path, "zones.qml")
    return {key: path}
