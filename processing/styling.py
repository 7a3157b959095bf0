"""Result layers get the Lodestar style (resources/styles), fitted to what they hold: a legend of only the roles
(or edge types) present, roles shown as words, areas also in km². The dock (ui/layers.py) and Processing
outputs loaded into the project both go through `apply_style`."""
from __future__ import annotations

from pathlib import Path

from qgis.core import (
    QgsCategorizedSymbolRenderer,
    QgsEditorWidgetSetup,
    QgsField,
    QgsProcessingLayerPostProcessorInterface,
    QgsRasterBandStats,
    QgsRasterLayer,
    QgsVectorLayer,
)
from qgis.PyQt.QtCore import QVariant

from ..plugin.labels import ROLE_LABELS, role_label
from ..plugin.vector_io import write_vector
from .params import output_path

STYLES = Path(__file__).resolve().parents[1] / "resources" / "styles"
AREA_KM2 = "area_km2"
"""The virtual field added beside `area_m2`: the area in km² (3 decimals)."""
ROLE_NAMES = "role_names"
"""The virtual field added beside a comma-separated `roles` list (targets): the roles in words."""
_ALIASES = {"area_m2": "Area (m²)", AREA_KM2: "Area (km²)", "role": "Role", "roles": "Roles (keys)",
            ROLE_NAMES: "Roles", "zone_id": "Zone", "layer": "Layer", "score_mean": "Mean score",
            "score_max": "Highest score", "degree_c": "Degree centrality", "between_c": "Betweenness centrality",
            "comp_roles": "Roles in its component", "fav_mean": "Mean favourability",
            "fav_max": "Highest favourability", "n_zones": "Zones of the chain inside", "tier": "Tier (% of the area)",
            "centroid_x": "Centroid x", "centroid_y": "Centroid y", "lon": "Longitude", "lat": "Latitude",
            "fav_p90": "Favourability (90th percentile)", "uncertain": "Mean uncertainty",
            "exp_deps": "Expected deposits", "known_deps": "Known deposits inside", "verdict": "Verdict of the chain",
            "layers": "Strongest evidence", "score": "Ranked by (per km²)", "why": "Why",
            "prospects": "Prospects inside", "camp": "Target (its rank)"}


def apply_style(layer, style: str) -> tuple[str, bool]:
    """Load the named style onto `layer`, then fit a vector layer's legend and fields to its contents
    (`fit_to_contents`). Returns loadNamedStyle's (message, ok)."""
    message, ok = layer.loadNamedStyle(str(STYLES / style))
    if ok and isinstance(layer, QgsVectorLayer):
        fit_to_contents(layer)
    elif ok and isinstance(layer, QgsRasterLayer) and layer.renderer().type() == "singlebandgray":
        stats = layer.dataProvider().bandStatistics(1, QgsRasterBandStats.Min | QgsRasterBandStats.Max)
        enhancement = layer.renderer().contrastEnhancement()
        enhancement.setMinimumValue(stats.minimumValue)
        enhancement.setMaximumValue(stats.maximumValue)
    return message, ok


def fit_to_contents(layer: QgsVectorLayer) -> None:
    """A categorized legend keeps only the categories whose value is in the layer (role categories labelled in
    words); the role field shows words in forms and the attribute table; `area_m2` gets an alias and a km²
    companion field."""
    fields = layer.fields()
    renderer = layer.renderer()
    if isinstance(renderer, QgsCategorizedSymbolRenderer) and fields.indexOf(renderer.classAttribute()) >= 0:
        attribute = renderer.classAttribute()
        present = {str(value) for value in layer.uniqueValues(fields.indexOf(attribute))}
        fitted = renderer.clone()
        for index in reversed(range(len(fitted.categories()))):
            value = str(fitted.categories()[index].value())
            if value not in present:
                fitted.deleteCategory(index)
            elif attribute == "role":
                fitted.updateCategoryLabel(index, role_label(value))
        layer.setRenderer(fitted)
    if fields.indexOf("area_m2") >= 0 and fields.indexOf(AREA_KM2) < 0:
        layer.addExpressionField('round("area_m2" / 1000000, 3)', QgsField(AREA_KM2, QVariant.Double, "double"))
    if fields.indexOf("roles") >= 0 and fields.indexOf(ROLE_NAMES) < 0:
        pairs = ", ".join(f"'{key}', '{label}'" for key, label in ROLE_LABELS.items())
        each = f"coalesce(map_get(map({pairs}), trim(@element)), replace(trim(@element), '_', ' '))"
        layer.addExpressionField(f"""array_to_string(array_foreach(string_to_array("roles", ','), {each}), ', ')""",
                                 QgsField(ROLE_NAMES, QVariant.String, "string"))
    for name, alias in _ALIASES.items():
        index = layer.fields().indexOf(name)
        if index >= 0:
            layer.setFieldAlias(index, alias)
    # after the aliases: setting an alias drops the field's editor widget (QGIS 3.22)
    if fields.indexOf("role") >= 0:
        choices = [{role_label(role): role} for role in ROLE_LABELS]
        layer.setEditorWidgetSetup(layer.fields().indexOf("role"), QgsEditorWidgetSetup("ValueMap", {"map": choices}))


class StyleOnLoad(QgsProcessingLayerPostProcessorInterface):
    """Gives an output the Lodestar style when Processing loads it into the project."""

    _kept: dict = {}  # the Python side of each post-processor, kept alive while Processing may call it

    def __init__(self, style: str):
        super().__init__()
        self.style = style

    def postProcessLayer(self, layer, context, feedback):  # noqa: N802 (QGIS API name)
        if isinstance(layer, (QgsVectorLayer, QgsRasterLayer)):
            apply_style(layer, self.style)
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
