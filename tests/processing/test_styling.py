"""Result layers styled as a geologist reads them: legends list only the roles (or edge types) in the layer, in
words; the role field shows words; areas also in km²; a target's roles in words. Through the same `apply_style`
the dock and Processing outputs use."""
from __future__ import annotations

import geopandas as gpd
from shapely.geometry import LineString, box

from lodestar.plugin.vector_io import write_vector
from lodestar.processing.styling import AREA_KM2, ROLE_NAMES, apply_style

CRS = "EPSG:32612"


def _layer(path, name="zones"):
    from qgis.core import QgsVectorLayer

    layer = QgsVectorLayer(str(path), name, "ogr")
    assert layer.isValid()
    return layer


def _legend(layer) -> list:
    return [(str(c.value()), c.label()) for c in layer.renderer().categories()]


def _shown(layer, field: str) -> list:
    """The field's values as the attribute table shows them (through its editor widget's formatter)."""
    from qgis.core import QgsApplication

    index = layer.fields().indexOf(field)
    setup = layer.editorWidgetSetup(index)
    formatter = QgsApplication.fieldFormatterRegistry().fieldFormatter(setup.type())
    return [formatter.representValue(layer, index, setup.config(), None, f[field]) for f in layer.getFeatures()]


def test_zone_legend_lists_only_the_roles_present_in_words(qgis_app, tmp_path):
    zones = gpd.GeoDataFrame({"zone_id": ["a:1", "a:2", "s:1"], "layer": ["aloh", "aloh", "silica"],
                              "role": ["hydrothermal_alteration", "hydrothermal_alteration", "silicification"],
                              "area_m2": [6.245e6, 2.0e9, 62_500.0]},
                             geometry=[box(0, 0, 2500, 2498), box(0, 0, 1, 1), box(5, 5, 6, 6)], crs=CRS)
    write_vector(zones, tmp_path / "zones.gpkg")
    layer = _layer(tmp_path / "zones.gpkg")
    message, ok = apply_style(layer, "zones.qml")
    assert ok, message
    assert _legend(layer) == [("hydrothermal_alteration", "Hydrothermal alteration"),
                              ("silicification", "Silicification")]
    assert _shown(layer, "role") == ["Hydrothermal alteration", "Hydrothermal alteration", "Silicification"]
    assert [f[AREA_KM2] for f in layer.getFeatures()] == [6.245, 2000.0, 0.063]
    assert layer.attributeDisplayName(layer.fields().indexOf("area_m2")) == "Area (m²)"
    assert layer.attributeDisplayName(layer.fields().indexOf(AREA_KM2)) == "Area (km²)"
    assert layer.attributeDisplayName(layer.fields().indexOf("zone_id")) == "Zone"


def test_graph_legends_fit_the_layer(qgis_app, tmp_path):
    nodes = gpd.GeoDataFrame({"zone_id": ["f:1", "g:1"], "role": ["structure", "false_color_composite"],
                              "area_m2": [1e6, 4e6]}, geometry=[box(0, 0, 1, 1), box(2, 2, 3, 3)], crs=CRS)
    edges = gpd.GeoDataFrame({"source": ["f:1"], "target": ["g:1"], "type": ["proximity"], "confidence": [0.4]},
                             geometry=[LineString([(0.5, 0.5), (2.5, 2.5)])], crs=CRS)
    write_vector(nodes, tmp_path / "nodes.gpkg")
    write_vector(edges, tmp_path / "edges.gpkg")
    node_layer, edge_layer = _layer(tmp_path / "nodes.gpkg", "nodes"), _layer(tmp_path / "edges.gpkg", "edges")
    assert apply_style(node_layer, "graph_nodes.qml")[1] and apply_style(edge_layer, "graph_edges.qml")[1]
    assert _legend(node_layer) == [("false_color_composite", "False-colour composite"),
                                   ("structure", "Structure (faults, lineaments)")]
    assert _legend(edge_layer) == [("proximity", "proximity edge")]  # no overlap edge in this graph


def test_target_roles_in_words(qgis_app, tmp_path):
    targets = gpd.GeoDataFrame({"rank": [1], "roles": ["hydrothermal_alteration,iron_oxide,structure"],
                                "area_m2": [3_470_562_500.0]}, geometry=[box(0, 0, 10, 10)], crs=CRS)
    write_vector(targets, tmp_path / "prospectivity.gpkg")
    layer = _layer(tmp_path / "prospectivity.gpkg", "targets")
    assert apply_style(layer, "prospectivity.qml")[1]
    [feature] = layer.getFeatures()
    assert feature[ROLE_NAMES] == "Hydrothermal alteration, Iron oxide, Structure (faults, lineaments)"
    assert feature[AREA_KM2] == 3470.563


def test_only_the_best_ten_targets_are_labelled(qgis_app, tmp_path):
    """The targets' labels: '#1' to '#10' and none on the others (before, every one of 47-123 targets carried a
    label), the same ten the report's map labels."""
    from qgis.core import QgsExpression, QgsExpressionContext, QgsExpressionContextUtils

    from lodestar.plugin.report.report_map import LABELLED

    targets = gpd.GeoDataFrame({"rank": list(range(1, 31)), "area_m2": [1e6] * 30},
                               geometry=[box(i * 10, 0, i * 10 + 5, 5) for i in range(30)], crs=CRS)
    write_vector(targets, tmp_path / "targets.gpkg")
    layer = _layer(tmp_path / "targets.gpkg", "Prospectivity")
    message, ok = apply_style(layer, "prospectivity.qml")
    assert ok, message
    settings = layer.labeling().settings()
    assert layer.labelsEnabled() and settings.isExpression
    expression = QgsExpression(settings.fieldName)
    context = QgsExpressionContext(QgsExpressionContextUtils.globalProjectLayerScopes(layer))
    texts = {}
    for feature in layer.getFeatures():
        context.setFeature(feature)
        texts[feature["rank"]] = expression.evaluate(context)
    assert not expression.hasEvalError(), expression.evalErrorString()
    assert LABELLED == 10
    assert [texts[rank] for rank in range(1, 11)] == [f"#{rank}" for rank in range(1, 11)]
    assert all(texts[rank] is None for rank in range(11, 31))


def test_the_surface_legend_and_the_report_map_share_the_five_classes(qgis_app, tmp_path):
    """The dock's legend of the favourability surface (its style) and the report's map draw the same classes."""
    import numpy as np
    import rasterio
    from qgis.core import QgsRasterLayer

    from lodestar.plugin.map_classes import favourability_classes

    path = tmp_path / "favourability.tif"
    with rasterio.open(path, "w", driver="GTiff", width=4, height=4, count=1, dtype="float32", crs=CRS,
                       transform=rasterio.transform.from_origin(0, 40, 10, 10), nodata=-1) as out:
        out.write(np.linspace(0, 1, 16, dtype="float32").reshape(1, 4, 4))
    layer = QgsRasterLayer(str(path), "Favourability")
    message, ok = apply_style(layer, "favourability.qml")
    assert ok, message
    legend = [(label, colour.name()) for label, colour in layer.renderer().legendSymbologyItems()]
    classes = favourability_classes()
    assert legend == [(c.label, c.colour) for c in classes]
    assert len(classes) == 5 and [c.upper for c in classes] == [0.2, 0.4, 0.6, 0.8, 1.0]
