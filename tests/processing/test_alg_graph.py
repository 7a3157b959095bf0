"""lodestar:spatial_graph, lodestar:localize and lodestar:evaluate through real Processing (outputs read back)."""
from __future__ import annotations

import csv
import math

import geopandas as gpd
import networkx as nx
import numpy as np
import pytest
import rasterio
from affine import Affine
from shapely.geometry import Point, box

UTM = "EPSG:32633"


def layer_file(tmp_path, name, rows, crs=UTM):
    """A zone layer file; rows are (zone_id, role, geometry, score)."""
    frame = gpd.GeoDataFrame({"zone_id": [r[0] for r in rows], "role": [r[1] for r in rows],
                              "score_mean": [r[3] for r in rows]}, geometry=[r[2] for r in rows], crs=UTM)
    path = tmp_path / f"{name}.gpkg"
    frame.to_crs(crs).to_file(path, driver="GPKG")
    return str(path)


@pytest.fixture
def zone_layers(tmp_path):
    """The graph test's scene as four layer files; 'prop' is stored in Web Mercator (reprojected back)."""
    return [
        layer_file(tmp_path, "alt", [("A", "hydrothermal_alteration", box(0, 0, 100, 100), 0.9),
                                     ("D", "hydrothermal_alteration", box(300, 300, 350, 350), 0.5)]),
        layer_file(tmp_path, "sil", [("B", "silicification", box(50, 0, 150, 100), 0.8),
                                     ("F", "silicification", box(60, 10, 90, 40), 0.4)]),
        layer_file(tmp_path, "prop", [("C", "propylitic_alteration", box(0, 150, 100, 250), 0.7)], crs="EPSG:3857"),
        layer_file(tmp_path, "geo", [("E", "geochemistry", box(325, 300, 375, 350), 0.6)]),
    ]


def test_spatial_graph_outputs(tmp_path, zone_layers, run):
    out = {"OUTPUT_NODES": str(tmp_path / "nodes.gpkg"), "OUTPUT_EDGES": str(tmp_path / "edges.gpkg"),
           "OUTPUT_GRAPHML": str(tmp_path / "graph.graphml")}
    result = run("lodestar:spatial_graph", {"INPUT": zone_layers, **out})
    assert (result["NODES"], result["EDGES"], result["COMPONENTS"], result["CHAIN_NODES"]) == (6, 10, 2, 4)
    nodes = gpd.read_file(result["OUTPUT_NODES"]).set_index("zone_id")
    assert nodes.crs.to_epsg() == 32633
    assert nodes["degree"].to_dict() == {"A": 3, "D": 1, "B": 2, "F": 1, "C": 2, "E": 1}
    assert nodes["component"].to_dict() == {"A": 0, "D": 1, "B": 0, "F": 0, "C": 0, "E": 1}
    assert nodes.loc["A", "between_c"] == pytest.approx(0.2)
    assert nodes["layer"].to_dict()["C"] == "prop"
    edges = gpd.read_file(result["OUTPUT_EDGES"]).set_index(["source", "target"])
    assert len(edges) == 10
    assert edges.loc[("A", "C"), "direction"] == "north"
    assert edges.loc[("C", "A"), "direction"] == "south"
    assert edges.loc[("A", "B"), "type"] == "overlap"
    assert edges.loc[("A", "B"), "confidence"] == pytest.approx(1 / 3, abs=1e-6)
    assert edges.loc[("A", "C"), "confidence"] == pytest.approx(0.1 * math.exp(-2), abs=1e-5)
    graph = nx.read_graphml(result["OUTPUT_GRAPHML"])
    assert graph.number_of_edges() == 10 and graph.edges["F", "A"]["direction"] == "north-west"


def test_out_of_range_parameter_is_rejected(tmp_path, zone_layers, run):
    from qgis.core import QgsProcessingException

    with pytest.raises(QgsProcessingException, match=r"IoU threshold .*: 1.5 is out of range; allowed: 0 to 1"):
        run("lodestar:spatial_graph", {"INPUT": zone_layers, "IOU_THRESHOLD": 1.5,
                                       "OUTPUT_NODES": str(tmp_path / "n.gpkg"),
                                       "OUTPUT_EDGES": str(tmp_path / "e.gpkg")})


def test_localize_from_zones_and_from_graph_layers(tmp_path, zone_layers, run):
    result = run("lodestar:localize", {"ZONES": zone_layers, "OUTPUT": str(tmp_path / "p.gpkg")})
    assert result["AREAS"] == 2
    polygons = gpd.read_file(result["OUTPUT"])
    # defaults: seeds A and E (the others are their neighbours); A grown by 100 m clips C to y <= 200
    assert list(polygons["rank"]) == [1, 2]
    assert list(polygons["zones"]) == ["A,B,C,F", "D,E"]
    assert list(polygons["area_m2"]) == pytest.approx([20000, 3750])
    graph = run("lodestar:spatial_graph", {"INPUT": zone_layers, "OUTPUT_NODES": str(tmp_path / "nodes.gpkg"),
                                           "OUTPUT_EDGES": str(tmp_path / "edges.gpkg")})
    again = run("lodestar:localize", {"NODES": graph["OUTPUT_NODES"], "EDGES": graph["OUTPUT_EDGES"],
                                      "IMPORTANT_AREAS": 3, "CLIP_RATIO": 0, "OUTPUT": str(tmp_path / "p2.shp")})
    polygons = gpd.read_file(again["OUTPUT"])
    assert list(polygons["zones"]) == ["A,B,C,F", "D,E"]
    assert list(polygons["area_m2"]) == pytest.approx([25000, 3750])  # C whole without clipping


def test_localize_with_deposit_model_and_weights(tmp_path, zone_layers, run):
    result = run("lodestar:localize", {"ZONES": zone_layers, "DEPOSIT_MODEL": 1, "W_SILICIFICATION": 2.0,
                                       "AREA_WEIGHTS": "geochemistry=2", "OUTPUT": str(tmp_path / "p.gpkg")})
    polygons = gpd.read_file(result["OUTPUT"])
    assert len(polygons) == 2 and set(polygons["zones"]) == {"A,B,C,F", "D,E"}


def test_localize_rejects_out_of_range_values(tmp_path, zone_layers, run):
    from qgis.core import QgsProcessingException

    with pytest.raises(QgsProcessingException, match=r"Hop-2 expansion width .*: 2 is out of range; allowed: 1 to 1.5"):
        run("lodestar:localize", {"ZONES": zone_layers, "HOP2_WIDTH": 2.0, "OUTPUT": str(tmp_path / "p.gpkg")})
    with pytest.raises(QgsProcessingException, match=r"structure = 2.5 is out of range; allowed: 1.0 to 2.0"):
        run("lodestar:localize", {"ZONES": zone_layers, "AREA_WEIGHTS": "structure=2.5",
                                  "OUTPUT": str(tmp_path / "p.gpkg")})


@pytest.fixture
def evaluation_inputs(tmp_path):
    """The evaluation test's hand-built case (see tests/plugin/test_evaluation.py)."""
    transform = Affine(10, 0, 0, 0, -10, 100)
    data = np.ones((10, 10), dtype="float32")
    data[:, 9] = -9999
    raster = tmp_path / "analysis.tif"
    with rasterio.open(raster, "w", driver="GTiff", width=10, height=10, count=1, dtype="float32", crs=UTM,
                       transform=transform, nodata=-9999) as ds:
        ds.write(data, 1)
    polygons = gpd.GeoDataFrame({"rank": [2, 1, 3]},
                                geometry=[box(50, 50, 80, 70), box(0, 0, 20, 20), box(80, 0, 100, 20)], crs=UTM)
    polygons.to_file(tmp_path / "prospectivity.gpkg", driver="GPKG")
    points = [Point(10, 10), Point(20, 5), Point(60, 60), Point(30, 90), Point(95, 50), Point(150, 50)]
    gpd.GeoDataFrame({"name": list("abcdef")}, geometry=points, crs=UTM).to_file(tmp_path / "deposits.gpkg",
                                                                                  driver="GPKG")
    return str(tmp_path / "prospectivity.gpkg"), str(tmp_path / "deposits.gpkg"), str(raster)


def test_evaluate_writes_table_plot_and_results(tmp_path, evaluation_inputs, run):
    prospectivity, deposits, raster = evaluation_inputs
    result = run("lodestar:evaluate", {"PROSPECTIVITY": prospectivity, "DEPOSITS": deposits,
                                       "ANALYSIS_RASTER": raster, "OUTPUT_TABLE": str(tmp_path / "curve.csv"),
                                       "OUTPUT_PLOT": str(tmp_path / "curve.png")})
    assert result["RECALL"] == pytest.approx(0.75)
    assert result["AREA_REDUCTION"] == pytest.approx(1 - 1200 / 9000)
    assert result["AUC"] == pytest.approx(0.8277778, abs=1e-7)
    assert (result["FOUND"], result["OUTSIDE"]) == (3, 2)
    # ranks 1-3 reach 2/45, 1/9 and 2/15 of the area with 2, 3 and 3 deposits, read linearly between them
    assert [result[f"CAPTURE_{share}"] for share in (2, 5, 10, 20)] == pytest.approx([0.9, 2 + 1 / 12, 2 + 5 / 6, 3])
    rows = list(csv.DictReader(open(result["OUTPUT_TABLE"], encoding="utf-8")))
    assert [float(r["area_share"]) for r in rows] == pytest.approx([0, 2 / 45, 1 / 9, 2 / 15], abs=1e-6)
    assert open(result["OUTPUT_PLOT"], "rb").read(4) == b"\x89PNG"


def test_evaluate_with_extent_and_without_valid_area(tmp_path, evaluation_inputs, run):
    from qgis.core import QgsProcessingException

    prospectivity, deposits, _ = evaluation_inputs
    result = run("lodestar:evaluate", {"PROSPECTIVITY": prospectivity, "DEPOSITS": deposits,
                                       "EXTENT": "0,90,0,100 [EPSG:32633]", "OUTPUT_TABLE": str(tmp_path / "c.csv")})
    assert result["RECALL"] == pytest.approx(0.75) and result["AREA_REDUCTION"] == pytest.approx(1 - 1200 / 9000)
    with pytest.raises(QgsProcessingException, match=r"analysis raster \(ANALYSIS_RASTER\) or the analysed extent"):
        run("lodestar:evaluate", {"PROSPECTIVITY": prospectivity, "DEPOSITS": deposits,
                                  "OUTPUT_TABLE": str(tmp_path / "c2.csv")})


def test_evaluate_scores_a_surface_exactly(tmp_path, evaluation_inputs, run):
    """Every valid cell ranked: column c holds value 9 - c, so a deposit in column c sits behind c columns and shares
    its own column's 10 cells (of 90: the analysis raster's nodata column is not area)."""
    _, deposits, analysis = evaluation_inputs
    surface = tmp_path / "favourability.tif"
    values = np.tile(9.0 - np.arange(10, dtype="float32"), (10, 1))
    with rasterio.open(surface, "w", driver="GTiff", width=10, height=10, count=1, dtype="float32", crs=UTM,
                       transform=Affine(10, 0, 0, 0, -10, 100), nodata=-9999) as ds:
        ds.write(values, 1)
    result = run("lodestar:evaluate", {"PROSPECTIVITY": str(surface), "DEPOSITS": deposits, "ANALYSIS_RASTER": analysis,
                                       "THRESHOLD": 7.5, "OUTPUT_TABLE": str(tmp_path / "curve.csv"),
                                       "OUTPUT_PLOT": str(tmp_path / "curve.png")})
    # deposits in columns 1, 2, 3 and 6: mean area share (15 + 25 + 35 + 65) / 4 / 90
    assert result["AUC"] == pytest.approx(1 - 140 / 360)
    assert (result["CAPTURE_2"], result["CAPTURE_5"], result["CAPTURE_10"]) == (0.0, 0.0, 0.0)
    assert result["CAPTURE_20"] == pytest.approx(0.8)  # 0.2 reaches 80 % into column 1's tie group
    assert (result["OUTSIDE"], result["FOUND"]) == (2, 1)  # above the threshold: columns 0 and 1
    assert result["RECALL"] == pytest.approx(0.25) and result["AREA_REDUCTION"] == pytest.approx(1 - 20 / 90)
    rows = list(csv.DictReader(open(result["OUTPUT_TABLE"], encoding="utf-8")))
    assert [float(r["area_share"]) for r in rows] == pytest.approx([0, 1 / 9, 2 / 9, 3 / 9, 4 / 9, 6 / 9, 7 / 9, 1],
                                                                  abs=1e-6)
    assert [int(r["found"]) for r in rows] == [0, 0, 1, 2, 3, 3, 4, 4]
    assert open(result["OUTPUT_PLOT"], "rb").read(4) == b"\x89PNG"


def test_evaluate_scores_an_empty_result_as_finding_nothing(tmp_path, evaluation_inputs, run):
    _, deposits, analysis = evaluation_inputs
    empty = tmp_path / "empty.gpkg"
    gpd.GeoDataFrame({"rank": []}, geometry=gpd.GeoSeries([], crs=UTM), crs=UTM).to_file(
        empty, driver="GPKG", schema={"geometry": "Polygon", "properties": {"rank": "int"}})
    result = run("lodestar:evaluate", {"PROSPECTIVITY": str(empty), "DEPOSITS": deposits, "ANALYSIS_RASTER": analysis,
                                       "OUTPUT_TABLE": str(tmp_path / "curve.csv")})
    assert (result["RECALL"], result["AUC"], result["FOUND"]) == (0.0, 0.0, 0)
    assert math.isnan(result["AREA_REDUCTION"])
    assert [result[f"CAPTURE_{share}"] for share in (2, 5, 10, 20)] == [0.0, 0.0, 0.0, 0.0]


def test_evaluate_sets_the_targets_beside_their_surface_at_equal_area(tmp_path, evaluation_inputs, run):
    """Column c of the surface holds 9 - c: its best 4, 10 and 12 cells (the areas the targets reach by rank 1, 2, 3)
    are column 0 and 2 cells of column 1, which hold no deposit and 2/10 of deposit a."""
    prospectivity, deposits, analysis = evaluation_inputs
    surface = tmp_path / "favourability.tif"
    values = np.tile(9.0 - np.arange(10, dtype="float32"), (10, 1))
    values[:, 9] = -9999  # the analysed area's own nodata column
    with rasterio.open(surface, "w", driver="GTiff", width=10, height=10, count=1, dtype="float32", crs=UTM,
                       transform=Affine(10, 0, 0, 0, -10, 100), nodata=-9999) as ds:
        ds.write(values, 1)
    result = run("lodestar:evaluate", {"PROSPECTIVITY": prospectivity, "DEPOSITS": deposits,
                                       "ANALYSIS_RASTER": analysis, "SURFACE": str(surface),
                                       "OUTPUT_TABLE": str(tmp_path / "curve.csv")})
    rows = list(csv.DictReader(open(result["OUTPUT_TABLE"], encoding="utf-8")))
    assert [int(r["found"]) for r in rows] == [0, 2, 3, 3]
    assert [float(r["surface_found"]) for r in rows] == pytest.approx([0, 0, 0, 0.2])
