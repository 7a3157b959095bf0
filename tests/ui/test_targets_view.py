"""The Results tab's Targets page: sortable, each target holding its prospects, zoom to, select on the map, export the
selection."""
from __future__ import annotations

import geopandas as gpd
import pandas as pd
import pytest
from qgis.core import QgsProject, QgsVectorLayer
from qgis.PyQt.QtCore import Qt
from qgis.PyQt.QtWidgets import QToolBox
from shapely.geometry import box

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.judge.target_table import PROSPECT_COLUMNS, TARGET_COLUMNS, typed
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
        row["prospects"] = 2 if rank == 1 else 0
        rows.append(row)
    return typed(gpd.GeoDataFrame(rows, geometry="geometry", crs="EPSG:32611"))


def _prospects() -> gpd.GeoDataFrame:
    """Two prospects inside target 1 (x 0-1000)."""
    rows = []
    for rank, x in ((1, 100), (2, 600)):
        row = {c: None for c in PROSPECT_COLUMNS}
        row.update(camp=1, rank=rank, tier=2.0, area_km2=0.09, centroid_x=x + 150.0, centroid_y=150.0, lon=10.0,
                   lat=45.0, fav_mean=0.9, fav_p90=0.95 - rank / 100, known_deps=2 - rank, score=0.95 - rank / 100,
                   layers="faults", why=f"prospect {rank} of target 1", geometry=box(x, 0, x + 300, 300))
        rows.append(row)
    return typed(gpd.GeoDataFrame(rows, geometry="geometry", crs="EPSG:32611"))


@pytest.fixture
def view(qgis_iface, tmp_path):
    targets, prospects = _targets(), _prospects()
    layer = QgsVectorLayer(str(write_vector(targets, tmp_path / "prospectivity.gpkg")), "Prospectivity", "ogr")
    inside = QgsVectorLayer(str(write_vector(prospects, tmp_path / "prospects.gpkg")), "Prospects", "ogr")
    QgsProject.instance().addMapLayers([layer, inside])
    toolbox = QToolBox()
    shown = TargetsView(toolbox, qgis_iface)
    shown.show(targets, layer, prospects, inside)
    yield shown, toolbox, layer
    QgsProject.instance().removeMapLayers([layer.id(), inside.id()])


def test_the_tree_lists_every_target_with_its_prospects_and_sorts_by_number(view):
    shown, toolbox, _ = view
    tree = shown.tree
    assert toolbox.itemText(shown.index) == "Targets" and tree.topLevelItemCount() == 3
    headers = [tree.headerItem().text(c) for c in range(tree.columnCount())]
    assert headers[:4] == ["Rank", "Tier (%)", "Area (km²)", "Verdict"] and "Prospects" in headers
    assert [tree.topLevelItem(r).text(3) for r in range(3)] == ["strong", "weak", ""]
    first = tree.topLevelItem(0)
    assert first.childCount() == 2 and [first.child(k).text(len(headers) - 1) for k in range(2)] == [
        "prospect 1 of target 1", "prospect 2 of target 1"]
    assert first.text(headers.index("Prospects")) == "2" and tree.topLevelItem(1).childCount() == 0
    tree.sortItems(2, Qt.AscendingOrder)  # by area, as numbers
    assert [tree.topLevelItem(r).data(0, Qt.DisplayRole) for r in range(3)] == [3, 2, 1]
    assert tree.topLevelItem(0).toolTip(len(headers) - 1) == "target 3"
    shown.show(_targets().astype({"known_deps": float}), None)  # as a layer read back stores them: shown whole
    known = headers.index("Known deposits")
    assert [tree.topLevelItem(r).text(known) for r in range(3)] == ["3", "0", "1"]


def test_zoom_select_and_export_the_selected_targets(view, qgis_iface, tmp_path):
    shown, _, layer = view
    assert not shown.zoom_to_selected() and shown.select_on_map() == 0
    with pytest.raises(LodestarError, match="Select one or more targets"):
        shown.export_selection(tmp_path / "none.gpkg")
    shown.tree.topLevelItem(1).setSelected(True)
    assert shown.selected_ranks() == [2]
    canvas = qgis_iface.mapCanvas()
    canvas.setDestinationCrs(layer.crs())
    assert shown.zoom_to_selected()
    extent = canvas.extent()
    assert extent.xMinimum() <= 5000 and extent.xMaximum() >= 6000 and extent.width() < 8000
    assert shown.select_on_map() == 1 and [f["rank"] for f in layer.selectedFeatures()] == [2]
    for suffix in (".shp", ".gpkg"):
        written = shown.export_selection(tmp_path / f"picked{suffix}")
        back = read_vector(written[0])
        assert len(written) == 1 and list(back["rank"]) == [2] and back["verdict"].iloc[0] == "weak"
        assert back["known_deps"].iloc[0] == 0 and back["layers"].iloc[0] == "faults, gold"
    with pytest.raises(LodestarError, match=".shp or .gpkg"):
        shown.export_selection(tmp_path / "picked.csv")
    first = shown.tree.topLevelItem(0)
    shown.tree.clearSelection()
    first.setSelected(True)
    first.child(1).setSelected(True)  # a target with one of its prospects
    assert shown.selected_ranks() == [1] and shown.selected_prospects() == [(1, 2)]
    assert shown.select_on_map() == 2 and [f["rank"] for f in shown.prospects_layer.selectedFeatures()] == [2]
    targets, prospects = (read_vector(p) for p in shown.export_selection(tmp_path / "camp.gpkg"))
    assert list(targets["rank"]) == [1] and list(prospects["rank"]) == [1, 2] and set(prospects["camp"]) == {1}
    assert (tmp_path / "camp_prospects.gpkg").is_file()
    shown.show(None, None)
    assert shown.tree.topLevelItemCount() == 0 and not shown.export_button.isEnabled()


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


def test_the_largest_and_smallest_target_and_the_targets_drawn_are_set_in_the_ask_tab(dock, tmp_path):
    options = dock.map_options
    spin = options.largest
    assert spin.value() == 0 and spin.text() == "footprint"  # 0: the deposit model's footprint
    assert options.smallest.value() == 0 and options.smallest.text() == "auto" and options.count.value() == 30
    values = options.request_values(tmp_path)
    assert values["max_target_km2"] is None and values["min_target_km2"] is None and values["max_targets"] is None
    spin.setValue(40.0)
    options.smallest.setValue(0.5)
    options.count.setValue(12)
    values = options.request_values(tmp_path)
    assert (values["max_target_km2"], values["min_target_km2"], values["max_targets"]) == (40.0, 0.5, 12)


def test_the_banner_names_the_best_three_targets_of_a_where_answer():
    from lodestar.plugin.judge.target_table import where_answer
    from lodestar.ui.results_view import banner_text

    targets = _targets()
    text = banner_text(where_answer(targets))
    assert text == where_answer(targets)  # three targets: all named
    more = gpd.GeoDataFrame(pd.concat([targets, targets.assign(rank=targets["rank"] + 3)]), crs=targets.crs)
    assert banner_text(where_answer(more)).endswith("1. 3 km2 at 45.000°N 10.000°E, strong; 2. 2 km2 at 45.000°N "
                                                    "10.000°E, weak; 3. 1 km2 at 45.000°N 10.000°E; … (3 more on the "
                                                    "Targets page).")
    assert banner_text("Yes") == "Yes" and banner_text("") == ""
