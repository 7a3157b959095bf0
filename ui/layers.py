"""Result layers in the project: one styled group per run (vector outputs above the favourability surface), and
zooming the map to zones."""
from __future__ import annotations

from pathlib import Path

from qgis.core import (
    QgsCoordinateTransform,
    QgsFeatureRequest,
    QgsLayerTree,
    QgsProject,
    QgsRasterLayer,
    QgsRectangle,
    QgsVectorLayer,
    QgsWkbTypes,
)

from ..plugin.errors import LodestarError
from ..processing.styling import apply_style

RESULT_PROPERTY = "lodestar/result"  # layer custom property marking Lodestar outputs (saved with the project)

RESULT_LAYERS = (  # output key, layer name, style file, shown when added; top of the group first
    ("edges", "Graph edges", "graph_edges.qml", False),
    ("nodes", "Graph nodes", "graph_nodes.qml", False),
    ("prospects", "Prospects (inside the targets)", "prospects.qml", True),
    ("prospectivity", "Prospectivity", "prospectivity.qml", True),
    ("zones", "Candidate zones", "zones.qml", True),
    ("favourability", "Favourability", "favourability.qml", True),
    ("favourability_cv", "Favourability (cross-validated)", "favourability.qml", False),
    ("uncertainty", "Uncertainty (calibrated surface)", "uncertainty.qml", False),
)
RASTER_SUFFIXES = (".tif", ".tiff")


def unique_group_name(name: str, project: QgsProject | None = None) -> str:
    """`name`, or `name (2)`, `name (3)`... so two runs never share a group."""
    root = (project or QgsProject.instance()).layerTreeRoot()
    candidate, n = name, 1
    while root.findGroup(candidate) is not None:
        n += 1
        candidate = f"{name} ({n})"
    return candidate


def load_styled_layer(path: Path, name: str, style: str):
    """Open a vector or raster (GeoTIFF) output and apply its style; raise if either fails."""
    raster = path.suffix.lower() in RASTER_SUFFIXES
    layer = QgsRasterLayer(str(path), name) if raster else QgsVectorLayer(str(path), name, "ogr")
    if not layer.isValid():
        raise LodestarError(f"QGIS cannot open the result layer {path}; the run folder may have been moved.")
    message, ok = apply_style(layer, style)
    if not ok:
        raise LodestarError(f"The style {style} could not be applied to {name}: {message}")
    layer.setCustomProperty(RESULT_PROPERTY, True)
    return layer


def is_result_layer(layer) -> bool:
    """Whether a layer is a Lodestar output (never offered as an input)."""
    return str(layer.customProperty(RESULT_PROPERTY, False)).lower() in ("true", "1")


def add_result_layers(outputs: dict, group_name: str, project: QgsProject | None = None):
    """Add the run's outputs, styled, in a new group of the layer tree: under the user's own point and line layers at
    the top of the tree (known deposits and faults stay drawn over the surface), earlier runs' groups switched off.

    All layers are opened and styled before any is added, so a failure adds nothing.
    Returns (group, {output key: layer}).
    """
    project = project or QgsProject.instance()
    layers = {}
    for key, name, style, _ in RESULT_LAYERS:
        path = outputs.get(key)
        if path is None or not Path(path).exists():
            continue
        try:
            layers[key] = load_styled_layer(Path(path), name, style)
        except LodestarError:
            # An empty output may be written with a placeholder geometry type its style cannot take;
            # it has nothing to show, so it is left out. A non-empty one that fails is a real error.
            if Path(path).suffix.lower() in RASTER_SUFFIXES or QgsVectorLayer(str(path), name, "ogr").featureCount():
                raise
    if not layers:
        raise LodestarError("The run produced no result layers to add.")
    root = project.layerTreeRoot()
    for earlier in root.children():
        if QgsLayerTree.isGroup(earlier) and earlier.customProperty(RUN_GROUP_PROPERTY, False):
            earlier.setItemVisibilityChecked(False)
    group = root.insertGroup(_under_points_and_lines(root), unique_group_name(group_name, project))
    group.setCustomProperty(RUN_GROUP_PROPERTY, True)
    for key, _, _, shown in RESULT_LAYERS:
        if key in layers:
            project.addMapLayer(layers[key], False)
            node = group.addLayer(layers[key])
            node.setItemVisibilityChecked(shown)
    return group, layers


RUN_GROUP_PROPERTY = "lodestar/run_group"
"""Set on the layer-tree group of each run's outputs."""


def _under_points_and_lines(root) -> int:
    """The tree position just below the leading run of the user's point and line layers (0 when the tree starts
    with anything else)."""
    position = 0
    for node in root.children():
        layer = node.layer() if QgsLayerTree.isLayer(node) else None
        if not isinstance(layer, QgsVectorLayer) or is_result_layer(layer) or \
                layer.geometryType() not in (QgsWkbTypes.PointGeometry, QgsWkbTypes.LineGeometry):
            break
        position += 1
    return position


def zones_extent(layer: QgsVectorLayer, zone_ids, canvas_crs) -> tuple[QgsRectangle, int]:
    """The extent (in the canvas CRS) of the features whose zone_id is in `zone_ids`, and how many there are.

    The features found are selected on the layer.
    """
    ids = [str(z) for z in zone_ids]
    extent = QgsRectangle()
    extent.setMinimal()
    if not ids or layer.fields().indexOf("zone_id") < 0:
        return extent, 0
    quoted = ", ".join("'" + z.replace("'", "''") + "'" for z in ids)
    request = QgsFeatureRequest().setFilterExpression(f'"zone_id" IN ({quoted})')
    transform = QgsCoordinateTransform(layer.crs(), canvas_crs, QgsProject.instance())
    found = []
    for feature in layer.getFeatures(request):
        found.append(feature.id())
        box = feature.geometry().boundingBox()
        extent.combineExtentWith(transform.transformBoundingBox(box) if layer.crs().isValid() else box)
    layer.selectByIds(found)
    return extent, len(found)


def zoom_to_zones(canvas, layer: QgsVectorLayer, zone_ids) -> bool:
    """Select the zones on `layer` and zoom the canvas to them (with a margin); False when none found."""
    extent, count = zones_extent(layer, zone_ids, canvas.mapSettings().destinationCrs())
    if count == 0:
        return False
    extent.scale(1.2)
    canvas.setExtent(extent)
    canvas.refresh()
    return True
