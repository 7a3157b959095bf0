"""*Plugins > Lodestar > Load the sample case*: the bundled porphyry demo's layers added to the project as a user
would add them (file by file, under the names its case.json gives, which the dock reads their roles from), with its
known deposit as a point layer; the alteration rasters unticked so the map shows the geology (in its legend's units and
colours) and the faults."""
from __future__ import annotations

from pathlib import Path

from qgis.core import QgsProject, QgsRasterLayer, QgsVectorLayer

from ..plugin.errors import LodestarError
from ..plugin.request.case import read_case
from ..processing.unit_style import style_unit_map

SAMPLE = Path(__file__).resolve().parents[1] / "resources" / "sample" / "porphyry-demo" / "case.json"
GROUP = "Lodestar sample (porphyry demo)"
DEPOSITS = "known deposits"


def load_sample(project: QgsProject | None = None) -> dict:
    """Add the sample's layers to `project` (default: the current one) in a group of their own; returns them by
    name. A file that does not open (a damaged install) stops it before anything is added."""
    project = project or QgsProject.instance()
    case = read_case(SAMPLE)
    layers = {}
    for spec in case.layers:
        layer = QgsVectorLayer(str(spec.path), spec.name, "ogr") if spec.is_vector else \
            QgsRasterLayer(str(spec.path), spec.name)
        layers[spec.name] = (layer, spec)
    if case.deposits is not None:
        layers[DEPOSITS] = (QgsVectorLayer(str(case.deposits), DEPOSITS, "ogr"), None)
    broken = [name for name, (layer, _) in layers.items() if not layer.isValid()]
    if broken:
        raise LodestarError(f"The sample case's layers {', '.join(broken)} do not open ({SAMPLE.parent}): "
                            "reinstall the plugin.")
    group = project.layerTreeRoot().insertGroup(0, GROUP)
    for layer, spec in reversed(list(layers.values())):  # points and lines drawn over the rasters
        project.addMapLayer(layer, False)
        node = group.addLayer(layer)
        if spec is not None and not spec.is_vector and spec.role != "geological_map":
            node.setItemVisibilityChecked(False)
        if spec is not None and spec.legend is not None and not spec.is_vector:
            style_unit_map(layer, spec.legend)  # its units in the legend's words and colours, not grey
    return {name: layer for name, (layer, _) in layers.items()}
