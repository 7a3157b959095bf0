"""Spatial graph on hand-built zones: every edge, direction, component, chain and metric worked out by hand.

Scene (EPSG:32633, metres):
  A  alt  hydrothermal   box(0,0,100,100)
  B  sil  silicification box(50,0,150,100)   A-B: IoU 5000/15000 = 1/3 -> overlap
  C  prop propylitic     box(0,150,100,250)  A-C, B-C: gap 50 = reach 0.5*(100+100)/2 -> proximity 0.1*exp(-2)
  F  sil  silicification box(60,10,90,40)    inside A: IoU 900/10000 = 0.09 <= 0.1 -> proximity, gap 0, conf 0.1
  D  alt  hydrothermal   box(300,300,350,350)
  E  geo  geochemistry   box(325,300,375,350) D-E: IoU 1250/3750 = 1/3 -> overlap
"""
from __future__ import annotations

import math

import geopandas as gpd
import networkx as nx
import numpy as np
import pytest
from pyproj import CRS
from shapely.geometry import LineString, box

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.graph import (
    GraphParams,
    build_graph,
    candidate_pairs,
    direction_word,
    graph_from_frames,
    prepare_zones,
    relate,
    write_graphml,
)

UTM = "EPSG:32633"


def zone(zone_id, layer, role, geometry, score=1.0):
    return {"zone_id": zone_id, "layer": layer, "role": role, "kind": "anomaly", "score_mean": score,
            "geometry": geometry}


def scene(crs=UTM) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame([
        zone("A", "alt", "hydrothermal_alteration", box(0, 0, 100, 100)),
        zone("B", "sil", "silicification", box(50, 0, 150, 100)),
        zone("C", "prop", "propylitic_alteration", box(0, 150, 100, 250)),
        zone("F", "sil", "silicification", box(60, 10, 90, 40)),
        zone("D", "alt", "hydrothermal_alteration", box(300, 300, 350, 350)),
        zone("E", "geo", "geochemistry", box(325, 300, 375, 350)),
    ], geometry="geometry", crs=crs)


def edge(graph, u, v):
    data = graph.graph.edges[u, v]
    return data["type"], round(data["confidence"], 6), data["direction"]


def test_edges_types_confidences_and_directions():
    g = build_graph(scene())
    assert g.graph.number_of_edges() == 10  # 5 relations, both directions
    e2 = round(0.1 * math.exp(-2), 6)
    assert edge(g, "A", "B") == ("overlap", round(1 / 3, 6), "overlaps")
    assert edge(g, "B", "A") == ("overlap", round(1 / 3, 6), "overlaps")
    assert edge(g, "A", "C") == ("proximity", e2, "north")
    assert edge(g, "C", "A") == ("proximity", e2, "south")
    assert edge(g, "B", "C") == ("proximity", e2, "north")  # bearing 341.6 degrees
    assert edge(g, "C", "B") == ("proximity", e2, "south")
    assert edge(g, "A", "F") == ("proximity", 0.1, "south-east")
    assert edge(g, "F", "A") == ("proximity", 0.1, "north-west")
    assert edge(g, "D", "E") == ("overlap", round(1 / 3, 6), "overlaps")
    assert not g.graph.has_edge("B", "F")  # same layer: never linked
    assert not g.graph.has_edge("C", "F")  # gap 110 > reach 32.5
    assert g.graph.edges["A", "C"]["gap"] == 50.0


def test_edges_frame_lines_between_centroids():
    g = build_graph(scene())
    edges = g.edges.set_index(["source", "target"])
    assert len(edges) == 10
    line = edges.loc[("A", "C"), "geometry"]
    assert list(line.coords) == [(50.0, 50.0), (50.0, 200.0)]
    assert edges.loc[("C", "A"), "direction"] == "south"
    assert set(g.edges["type"]) == {"overlap", "proximity"}


def test_node_metrics_components_and_chains():
    g = build_graph(scene())
    nodes = g.nodes.set_index("zone_id")
    assert nodes["degree"].to_dict() == {"A": 3, "B": 2, "C": 2, "F": 1, "D": 1, "E": 1}
    assert nodes.loc["A", "degree_c"] == pytest.approx(3 / 5)
    # A is on the shortest paths F-B and F-C: 2 pairs * 2 / ((6-1)(6-2)) = 0.2
    assert nodes["between_c"].round(9).to_dict() == {"A": 0.2, "B": 0.0, "C": 0.0, "F": 0.0, "D": 0.0, "E": 0.0}
    reference = nx.betweenness_centrality(g.graph.to_undirected())
    assert reference["A"] == pytest.approx(0.2)
    assert nodes["component"].to_dict() == {"A": 0, "B": 0, "C": 0, "F": 0, "D": 1, "E": 1}
    assert g.components == [{"A", "B", "C", "F"}, {"D", "E"}]
    assert nodes["comp_roles"].to_dict() == {"A": 3, "B": 3, "C": 3, "F": 3, "D": 2, "E": 2}
    # A (middle of B-A-C), B, C (ends) and F (F-A-C: silicification, hydrothermal, propylitic)
    assert nodes["chain"].to_dict() == {"A": True, "B": True, "C": True, "F": True, "D": False, "E": False}
    assert g.summary() == {"nodes": 6, "edges": 10, "overlap_edges": 4, "proximity_edges": 6, "components": 2,
                           "chain_nodes": 4}


def test_chain_needs_three_different_roles_along_a_path():
    # X(hyd) - Y(sil) and X - Z(sil): two roles only; W(prop) linked to Y makes X-Y-W and Y-W... chains
    frame = gpd.GeoDataFrame([
        zone("X", "l1", "hydrothermal_alteration", box(0, 0, 10, 10)),
        zone("Y", "l2", "silicification", box(5, 0, 15, 10)),
        zone("Z", "l3", "silicification", box(-5, 0, 5, 10)),
    ], crs=UTM)
    g = build_graph(frame)
    assert not g.nodes["chain"].any()
    frame.loc[len(frame)] = zone("W", "l4", "propylitic_alteration", box(12, 0, 22, 10))
    g = build_graph(frame)
    # edges: X-Y, X-Z, Y-W (IoU 30/170 > 0.1); X-W gap 2 <= reach 5 -> proximity. Z-W: gap 7 > 5.
    assert g.graph.has_edge("X", "W") and not g.graph.has_edge("Z", "W")
    assert g.nodes.set_index("zone_id")["chain"].to_dict() == {"X": True, "Y": True, "Z": True, "W": True}


def test_distance_rules_and_params():
    g = build_graph(scene(), GraphParams(relative_distance=0.0, max_distance=40.0))
    assert not g.graph.has_edge("A", "C")  # gap 50 > 40
    assert g.graph.has_edge("A", "F")  # touching/intersecting pairs always relate
    g = build_graph(scene(), GraphParams(relative_distance=0.0, max_distance=100.0, decay=1.0))
    assert g.graph.edges["A", "C"]["confidence"] == pytest.approx(0.1 * math.exp(-0.5), abs=1e-6)
    g = build_graph(scene(), GraphParams(proximity_confidence=1.0))
    assert edge(g, "A", "F")[1] == 1.0 and edge(g, "A", "C")[1] == round(math.exp(-2), 6)
    g = build_graph(scene(), GraphParams(iou_threshold=0.5))
    assert edge(g, "A", "B")[0] == "proximity"
    with pytest.raises(LodestarError, match="iou_threshold = 1.5 is out of range; allowed: 0.0 to 1.0"):
        GraphParams(iou_threshold=1.5)
    with pytest.raises(LodestarError, match="decay"):
        GraphParams(decay=-1)


def test_direction_words():
    assert direction_word(0, 1) == "north"
    assert direction_word(1, 1) == "north-east"
    assert direction_word(1, 0) == "east"
    assert direction_word(-1, -1) == "south-west"
    assert direction_word(-1, 0.3) == "west"
    assert direction_word(0, 0) == "around"
    assert direction_word(0, 5, y_down=True) == "south"  # image rows grow downwards


def test_pixel_space_directions():
    frame = gpd.GeoDataFrame([zone("P", "a", "silicification", box(0, 0, 10, 10)),
                              zone("Q", "b", "structure", box(0, 12, 10, 22))], geometry="geometry")
    g = build_graph(frame)
    assert edge(g, "P", "Q")[2] == "south"


def test_layers_in_different_crs_are_reprojected():
    shifted = CRS.from_proj4("+proj=tmerc +lon_0=15 +k=0.9996 +x_0=501000 +y_0=0 +datum=WGS84 +units=m +no_defs")
    base = scene()
    moved = base[base["zone_id"].isin(["C", "E"])].copy()
    moved["geometry"] = moved.geometry.translate(xoff=1000)
    moved = moved.set_crs(shifted, allow_override=True)
    rest = base[~base["zone_id"].isin(["C", "E"])]
    g = build_graph([rest, moved])
    assert g.crs == base.crs
    assert any("reprojected" in line for line in g.log)
    assert edge(g, "A", "C") == ("proximity", round(0.1 * math.exp(-2), 6), "north")
    assert edge(g, "D", "E")[0] == "overlap"
    assert g.nodes.set_index("zone_id").loc["C", "geometry"].equals_exact(box(0, 150, 100, 250), 1e-4)


def test_geographic_zones_use_metric_utm():
    lonlat = scene().to_crs("EPSG:4326")
    g = build_graph(lonlat)
    assert g.crs.is_projected and "UTM" in g.crs.name
    assert any("geographic" in line for line in g.log)
    assert edge(g, "A", "B")[0] == "overlap"


def test_empty_zones_give_empty_graph_with_message():
    empty = gpd.GeoDataFrame({"zone_id": [], "layer": [], "role": []}, geometry=gpd.GeoSeries([], crs=UTM))
    g = build_graph(empty)
    assert len(g.nodes) == 0 and len(g.edges) == 0 and g.graph.number_of_nodes() == 0
    assert any("No zones" in line for line in g.log)


def test_missing_columns_filled_and_duplicate_ids_made_unique():
    frame = gpd.GeoDataFrame({"layer": ["fault_density", "fault_density"]},
                             geometry=[box(0, 0, 1, 1), box(2, 2, 3, 3)], crs=UTM)
    prepared = prepare_zones(frame)
    assert list(prepared["zone_id"]) == ["fault_density:1", "fault_density:2"]
    assert list(prepared["role"]) == ["structure", "structure"]
    with_line = gpd.GeoDataFrame({"layer": ["a", "b"]}, geometry=[box(0, 0, 1, 1), LineString([(0, 0), (1, 1)])],
                                 crs=UTM)
    log = []
    assert len(prepare_zones(with_line, log=log)) == 1 and "1 zone without a polygon" in log[0]
    dup = scene()
    dup.loc[1, "zone_id"] = "A"
    assert list(prepare_zones(dup)["zone_id"])[:2] == ["A", "sil:1"]


def test_spatial_index_finds_the_same_edges_as_all_pairs():
    rng = np.random.default_rng(3)
    rows = []
    for k in range(150):
        x, y, s = rng.uniform(0, 2000), rng.uniform(0, 2000), rng.uniform(20, 120)
        rows.append(zone(f"z{k}", f"l{k % 4}", ("silicification", "structure", "geochemistry", "iron_oxide")[k % 4],
                         box(x, y, x + s, y + s * rng.uniform(0.5, 2))))
    frame = prepare_zones(gpd.GeoDataFrame(rows, crs=UTM))
    params = GraphParams()
    geoms, areas, layers = list(frame.geometry), frame["area_m2"].to_numpy(), list(frame["layer"])
    brute = {(i, j) for i in range(len(frame)) for j in range(i + 1, len(frame))
             if layers[i] != layers[j] and relate(geoms[i], geoms[j], areas[i], areas[j], params) is not None}
    indexed = {(i, j) for i, j in candidate_pairs(frame, params)
               if relate(geoms[i], geoms[j], areas[i], areas[j], params) is not None}
    assert len(brute) > 50
    assert indexed == brute
    assert len(candidate_pairs(frame, params)) < len(frame) * (len(frame) - 1) / 2 / 10


def test_graphml_round_trip(tmp_path):
    g = build_graph(scene())
    path = tmp_path / "graph.graphml"
    write_graphml(g, path)
    back = nx.read_graphml(path)
    assert back.number_of_nodes() == 6 and back.number_of_edges() == 10
    assert back.nodes["A"]["chain"] is True
    assert back.nodes["A"]["degree"] == 3
    assert back.nodes["A"]["wkt"].startswith("POLYGON")
    assert back.edges["A", "C"]["direction"] == "north"
    assert back.edges["C", "A"]["direction"] == "south"
    assert "32633" in back.graph["crs"]


def test_graph_rebuilt_from_node_and_edge_layers():
    g = build_graph(scene())
    rebuilt = graph_from_frames(g.nodes, g.edges)
    assert rebuilt.graph.number_of_edges() == 10
    assert rebuilt.nodes.set_index("zone_id")["between_c"].round(9).to_dict() == \
        g.nodes.set_index("zone_id")["between_c"].round(9).to_dict()
    assert rebuilt.graph.edges["C", "A"]["direction"] == "south"


def test_sampled_betweenness_above_the_exact_limit():
    rows = [zone(f"p{k}", f"l{k % 2}", ("silicification", "structure")[k % 2], box(k * 10, 0, k * 10 + 12, 10))
            for k in range(30)]
    exact = build_graph(gpd.GeoDataFrame(rows, crs=UTM))
    sampled_params = GraphParams(betweenness_exact_max=10, betweenness_samples=15)
    sampled = build_graph(gpd.GeoDataFrame(rows, crs=UTM), sampled_params)
    e = exact.nodes["between_c"].to_numpy()
    s = sampled.nodes["between_c"].to_numpy()
    reference = nx.betweenness_centrality(exact.graph.to_undirected())  # a path of 30 zones
    assert e == pytest.approx([reference[z] for z in exact.nodes["zone_id"]])
    assert np.corrcoef(e, s)[0, 1] > 0.8
    again = build_graph(gpd.GeoDataFrame(rows, crs=UTM), sampled_params)
    assert np.array_equal(again.nodes["between_c"].to_numpy(), s)  # seeded


def test_betweenness_matches_networkx_in_small_and_large_components():
    rng = np.random.default_rng(8)
    rows = []
    for k in range(120):  # a dense cluster (one large component) and scattered small groups
        x, y = (rng.uniform(0, 600, 2) if k < 70 else rng.uniform(0, 20000, 2))
        s = rng.uniform(30, 80)
        rows.append(zone(f"r{k}", f"l{k % 5}", ("silicification", "structure", "geochemistry", "iron_oxide",
                                                 "geophysics")[k % 5], box(x, y, x + s, y + s)))
    g = build_graph(gpd.GeoDataFrame(rows, crs=UTM))
    sizes = sorted((len(c) for c in g.components), reverse=True)
    assert sizes[0] >= 24 and sizes[-1] < 24  # both the vectorised and the per-source pass are used
    reference = nx.betweenness_centrality(g.graph.to_undirected())
    ours = dict(zip(g.nodes["zone_id"], g.nodes["between_c"]))
    assert ours == pytest.approx(reference, abs=1e-12)


def test_nodes_and_edges_export_to_shapefile_with_full_field_names(tmp_path):
    from lodestar.plugin.graph import EDGE_COLUMNS, NODE_COLUMNS
    from lodestar.plugin.vector_io import read_vector, write_vector

    g = build_graph(scene())
    nodes = read_vector(write_vector(g.nodes, tmp_path / "nodes.shp"))
    edges = read_vector(write_vector(g.edges, tmp_path / "edges.shp"))
    assert set(NODE_COLUMNS) <= set(nodes.columns) and set(EDGE_COLUMNS) <= set(edges.columns)
    assert nodes.set_index("zone_id").loc["A", "between_c"] == pytest.approx(0.2)
    rebuilt = graph_from_frames(nodes, edges)
    assert rebuilt.graph.number_of_edges() == 10 and rebuilt.graph.edges["A", "C"]["direction"] == "north"
