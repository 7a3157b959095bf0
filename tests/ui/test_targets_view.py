"""The Results tab's Targets page: sortable, zoom to, select on the map, export the selection."""
from __future__ import annotations

import geopandas as gpd
import pandas as pd
import pytest
from qgis.core import QgsProject, QgsVectorLayer
from qgis.PyQt.QtCore import Qt
from qgis.PyQt.QtWidgets import QToolBox
from shapely.geometry import box

from lodestar.plugin.engine.target_table import TARGET_COLUMNS
from lodestar.plugin.errors import LodestarError
from lodestar.plugin.vector_io import read_vector, write_vector
from lodestar.ui.targets_view import TargetsView


def _targets() -> gpd.GeoDataFrame:
    rows = []
    for rank, (x, verdict, known) in enumerate([(0, "strong", 3), (5000, "weak", 0), (10000, "", 1)], start=1):
        row = {c: None for c in TARGET_COLUMNS}
        row.update(rank=rank, tier=2.0 if rank == 1 else 10.0, area_km2=float(4 - rank), centroid_x=x + 500.0,
                   centroid_y=500.0, lon=10.0, lat=45.0, fav_mean=0.9 - rank / 10, fav_p90=0.95 - rank / 10,
                   known_deps=known, score=0.95 - rank / 10, verdict=verdict, layers="faults, gold", n_zones=rank,
                   why=f"target {rank}", geometry=box(x, 0, x + 1000, 1000))
        rows.append(row)
    return gpd.GeoDataFrame(rows, geometry="geometry", crs="EPSG:32611")


@pytest.fixture
def view(qgis_iface, tmp_path):
    targets = _targets()
    path = write_vector(targets, tmp_path / "prospectivity.gpkg")
    layer = QgsVectorLayer(str(path), "Prospectivity", "ogr")
    QgsProject.instance().addMapLayer(layer)
    toolbox = QToolBox()
    shown = TargetsView(toolbox, qgis_iface)
    shown.show(targets, layer)
    yield shown, toolbox, layer
    QgsProject.instance().removeMapLayer(layer.id())


def test_the_table_lists_every_target_and_sorts_by_number(view):
    shown, toolbox, _ = view
    table = shown.table
    assert toolbox.itemText(shown.index) == "Targets" and table.rowCount() == 3
    headers = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    assert headers[:4] == ["Rank", "Tier (%)", "Area (km²)", "Verdict"]
    assert [table.item(r, 3).text() for r in range(3)] == ["strong", "weak", ""]
    table.sortItems(2, Qt.AscendingOrder)  # by area, as numbers
    assert [table.item(r, 0).data(Qt.DisplayRole) for r in range(3)] == [3, 2, 1]
    assert table.item(0, len(headers) - 1).toolTip() == "target 3"
    shown.show(_targets().astype({"known_deps": float}), None)  # as a layer read back stores them: shown whole
    known = headers.index("Known deposits")
    assert [table.item(r, known).text() for r in range(3)] == ["3", "0", "1"]


def test_zoom_select_and_export_the_selected_targets(view, qgis_iface, tmp_path):
    shown, _, layer = view
    assert not shown.zoom_to_selected() and shown.select_on_map() == 0
    with pytest.raises(LodestarError, match="Select one or more targets"):
        shown.export_selection(tmp_path / "none.gpkg")
    shown.table.selectRow(1)
    assert shown.selected_ranks() == [2]
    canvas = qgis_iface.mapCanvas()
    canvas.setDestinationCrs(layer.crs())
    assert shown.zoom_to_selected()
    extent = canvas.extent()
    assert extent.xMinimum() <= 5000 and extent.xMaximum() >= 6000 and extent.width() < 8000
    assert shown.select_on_map() == 1 and [f["rank"] for f in layer.selectedFeatures()] == [2]
    for suffix in (".shp", ".gpkg"):
        back = read_vector(shown.export_selection(tmp_path / f"picked{suffix}"))
        assert list(back["rank"]) == [2] and back["verdict"].iloc[0] == "weak"
        assert back["known_deps"].iloc[0] == 0 and back["layers"].iloc[0] == "faults, gold"
    with pytest.raises(LodestarError, match=".shp or .gpkg"):
        shown.export_selection(tmp_path / "picked.csv")
    shown.show(None, None)
    assert shown.table.rowCount() == 0 and not shown.export_button.isEnabled()


def test_a_run_group_goes_under_the_users_points_and_lines_and_switches_earlier_runs_off(tmp_path):
    from lodestar.ui.layers import add_result_layers

    project = QgsProject.instance()
    deposits = QgsVectorLayer("Point?crs=EPSG:32611", "Known deposits", "memory")
    faults = QgsVectorLayer("LineString?crs=EPSG:32611", "Faults", "memory")
    geology = QgsVectorLayer("Polygon?crs=EPSG:32611", "Geology", "memory")
    root = project.layerTreeRoot()
    for layer in (geology, faults, deposits):  # each inserted at the top: deposits, faults, geology
        project.addMapLayer(layer, False)
        root.insertLayer(0, layer)
    path = write_vector(_targets(), tmp_path / "prospectivity.gpkg")
    try:
        first, _ = add_result_layers({"prospectivity": path}, "run one", project)
        second, layers = add_result_layers({"prospectivity": path}, "run two", project)
        names = [node.name() for node in root.children()]
        assert names[:4] == ["Known deposits", "Faults", "run two", "run one"] and names[4] == "Geology"
        assert second.isVisible() and not first.itemVisibilityChecked()
        assert layers["prospectivity"].featureCount() == 3
    finally:
        for group in (g for g in root.children() if g.name() in ("run one", "run two")):
            for node in group.findLayers():
                project.removeMapLayer(node.layerId())
            root.removeChildNode(group)
        for layer in (deposits, faults, geology):
            project.removeMapLayer(layer.id())


def test_the_largest_target_is_set_in_the_ask_tab(dock, tmp_path):
    spin = dock.map_options.largest
    assert spin.value() == 0 and spin.text() == "footprint"  # 0: the deposit model's footprint
    assert dock.map_options.request_values(tmp_path)["max_target_km2"] is None
    spin.setValue(40.0)
    assert dock.map_options.request_values(tmp_path)["max_target_km2"] == 40.0


def test_the_banner_names_the_best_three_targets_of_a_where_answer():
    from lodestar.plugin.engine.target_table import where_answer
    from lodestar.ui.results_view import banner_text

    targets = _targets()
    text = banner_text(where_answer(targets))
    assert text == where_answer(targets)  # three targets: all named
    more = gpd.GeoDataFrame(pd.concat([targets, targets.assign(rank=targets["rank"] + 3)]), crs=targets.crs)
    assert banner_text(where_answer(more)).endswith("1. 3 km2 at 45.000°N 10.000°E, strong; 2. 2 km2 at 45.000°N "
                                                    "10.000°E, weak; 3. 1 km2 at 45.000°N 10.000°E; … (3 more on the "
                                                    "Targets page).")
    assert banner_text("Yes") == "Yes" and banner_text("") == ""
