"""Localization on hand-built graphs: scores, seeds, clipped and expanded areas, merged polygons by hand."""
from __future__ import annotations

import math

import geopandas as gpd
import pytest
from shapely.geometry import Point, box

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.evaluation import evaluate_localization
from lodestar.plugin.graph import build_graph
from lodestar.plugin.localization import (
    PROSPECTIVITY_COLUMNS,
    LocalizationParams,
    area_role,
    choose_seeds,
    localize,
    node_scores,
)
from lodestar.plugin.vector_io import read_vector, write_vector

UTM = "EPSG:32633"


def zone(zone_id, layer, role, geometry, score=1.0):
    return {"zone_id": zone_id, "layer": layer, "role": role, "kind": "anomaly", "score_mean": score,
            "geometry": geometry}


def scene():
    """The graph test's scene (see test_graph.py) with distinct evidence values within each layer."""
    return gpd.GeoDataFrame([
        zone("A", "alt", "hydrothermal_alteration", box(0, 0, 100, 100), 0.9),
        zone("B", "sil", "silicification", box(50, 0, 150, 100), 0.8),
        zone("C", "prop", "propylitic_alteration", box(0, 150, 100, 250), 0.7),
        zone("F", "sil", "silicification", box(60, 10, 90, 40), 0.4),
        zone("D", "alt", "hydrothermal_alteration", box(300, 300, 350, 350), 0.5),
        zone("E", "geo", "geochemistry", box(325, 300, 375, 350), 0.6),
    ], geometry="geometry", crs=UTM)


# Edge confidences: A-B, D-E overlaps 1/3; A-C, B-C proximity 0.1*exp(-2); A-F proximity 0.1 (touching).
P = 0.1 * math.exp(-2)
STRENGTH = {"A": 1 / 3 + P + 0.1, "B": 1 / 3 + P, "C": 2 * P, "F": 0.1, "D": 1 / 3, "E": 1 / 3}
# median area (10000,10000,10000,900,2500,2500) = 6250 -> focus sqrt(0.625) for the 100 m squares
FOCUS = {"A": math.sqrt(0.625), "B": math.sqrt(0.625), "C": math.sqrt(0.625), "F": 1.0, "D": 1.0, "E": 1.0}
EVIDENCE = {"A": 1.0, "B": 1.0, "C": 1.0, "F": 0.5, "D": 0.5, "E": 1.0}  # percentile rank within each layer
BETWEEN = {"A": 1.0, "B": 0.0, "C": 0.0, "F": 0.0, "D": 0.0, "E": 0.0}  # normalised by the maximum (A: 0.2)
CHAIN = {"A": 1, "B": 1, "C": 1, "F": 1, "D": 0, "E": 0}


def expected_score(z, w_deg=1.0, w_btw=1.0, w_chain=1.0, role_w=1.0):
    top = STRENGTH["A"]
    return role_w * FOCUS[z] * (0.5 + 0.5 * EVIDENCE[z]) * (
        1 + w_deg * STRENGTH[z] / top + w_btw * BETWEEN[z] + w_chain * CHAIN[z])


def test_node_scores_follow_the_documented_formula():
    g = build_graph(scene())
    scores = node_scores(g, LocalizationParams())
    for z in "ABCDEF":
        assert scores[z] == pytest.approx(expected_score(z), rel=1e-5), z
    assert scores["A"] == pytest.approx(math.sqrt(0.625) * 4, rel=1e-5)
    weighted = node_scores(g, LocalizationParams(degree_centrality_weight=2, chain_presence_weight=3,
                                                 area_type_weights={"Silicification Zone": 1.5}))
    assert weighted["B"] == pytest.approx(expected_score("B", w_deg=2, w_chain=3, role_w=1.5), rel=1e-5)


def test_seeds_are_distinct_places():
    g = build_graph(scene())
    scores = node_scores(g, LocalizationParams())
    # order A 3.16, B 2.19, E 1.75, F 1.67, C 1.63, D 1.31; B, F, C are A's neighbours, D is E's
    assert choose_seeds(g, scores, 3) == ["A", "E"]
    assert choose_seeds(g, scores, 1) == ["A"]


def test_localize_clips_neighbours_and_ranks_polygons():
    g = build_graph(scene())
    result = localize(g, LocalizationParams(important_areas_count=3, clip_ratio=1.0))
    assert list(result.columns) == list(PROSPECTIVITY_COLUMNS) + ["geometry"]
    assert list(result["rank"]) == [1, 2]
    first, second = result.iloc[0], result.iloc[1]
    # seed A grown by 1.0 * sqrt(10000) = 100 m: B and F whole, C clipped to y <= 200
    assert first["zones"] == "A,B,C,F"
    assert first["roles"] == "hydrothermal_alteration,propylitic_alteration,silicification"
    assert first["n_zones"] == 4 and first["seeds"] == "A"
    assert first["score"] == pytest.approx(expected_score("A"), rel=1e-5)
    assert first["area_m2"] == pytest.approx(15000 + 5000)
    assert first.geometry.symmetric_difference(box(0, 0, 150, 100).union(box(0, 150, 100, 200))).area < 1e-6
    assert second["zones"] == "D,E" and second["seeds"] == "E"
    assert second["area_m2"] == pytest.approx(3750)
    assert second["score"] == pytest.approx(expected_score("E"), rel=1e-5)
    assert result.crs == g.crs


def test_without_clipping_neighbours_are_whole():
    g = build_graph(scene())
    result = localize(g, LocalizationParams(important_areas_count=3, clip_ratio=0))
    assert result.iloc[0]["area_m2"] == pytest.approx(15000 + 10000)


def test_two_hop_ring_is_expanded_and_touching_areas_merge():
    # S - M - R path: S(sil) touches M(structure); R(geochem) 10 m from M, 110 m from S (reach 35: unlinked)
    frame = gpd.GeoDataFrame([
        zone("S", "a", "silicification", box(0, 0, 100, 100)),
        zone("M", "b", "structure", box(100, 0, 200, 100)),
        zone("R", "c", "geochemistry", box(210, 0, 250, 40)),
    ], crs=UTM)
    g = build_graph(frame)
    assert not g.graph.has_edge("S", "R")
    params = LocalizationParams(important_areas_count=3, clip_ratio=0, hop2_expansion_width=1.5,
                                hop2_expansion_height=1.25, area_type_weights={"Silicification Zone": 2.0})
    scores = node_scores(g, params)
    m_strength = 0.1 + 0.1 * math.exp(-2 * 10 / 35)
    assert scores["S"] == pytest.approx(2.0 * (1 + 0.1 / m_strength + 0 + 1), rel=1e-5)
    assert scores["M"] == pytest.approx(4.0, rel=1e-5)
    assert choose_seeds(g, scores, 3) == ["S", "R"]  # M is S's neighbour; R is not
    result = localize(g, params)
    assert len(result) == 1
    row = result.iloc[0]
    # S's area: S, M, R scaled 1.5 x 1.25 about (230, 20) = box(200,-5,260,45);
    # R's area: R, M, S scaled about (50, 50) = box(-25,-12.5,125,112.5); merged:
    expected = box(-25, -12.5, 125, 112.5).union(box(0, 0, 200, 100)).union(box(200, -5, 260, 45))
    assert row["area_m2"] == pytest.approx(18750 + 7500 + 3000)
    assert row.geometry.symmetric_difference(expected).area < 1e-6
    assert row["seeds"] == "S,R" and row["zones"] == "M,R,S" and row["n_zones"] == 3
    assert row["score"] == pytest.approx(scores["S"], rel=1e-5)


def test_empty_graph_gives_empty_layer(tmp_path):
    empty = gpd.GeoDataFrame({"zone_id": [], "layer": []}, geometry=gpd.GeoSeries([], crs=UTM))
    g = build_graph(empty)
    result = localize(g)
    assert len(result) == 0 and list(result.columns) == list(PROSPECTIVITY_COLUMNS) + ["geometry"]
    assert any("No zones to localize" in line for line in g.log)
    write_vector(result, tmp_path / "empty.gpkg")


def test_prospectivity_exports_to_shapefile(tmp_path):
    result = localize(build_graph(scene()), LocalizationParams(important_areas_count=3))
    path = write_vector(result, tmp_path / "prospectivity.shp")
    back = read_vector(path)
    assert list(back["rank"]) == [1, 2]
    assert back.iloc[0]["zones"] == "A,B,C,F"
    assert set(PROSPECTIVITY_COLUMNS) <= set(back.columns)


def test_params_defaults_and_ranges():
    p = LocalizationParams()
    assert (p.degree_centrality_weight, p.betweenness_centrality_weight, p.chain_presence_weight) == (1.0, 1.0, 1.0)
    assert p.role_weight("silicification") == 1.0
    with pytest.raises(LodestarError, match=r"degree_centrality_weight = 3.5 is out of range; allowed: 1.0 to 3.0"):
        LocalizationParams(degree_centrality_weight=3.5)
    with pytest.raises(LodestarError, match=r"important_areas_count = 8 is out of range; allowed: 3 to 7"):
        LocalizationParams(important_areas_count=8)
    with pytest.raises(LodestarError, match="whole number from 3 to 7"):
        LocalizationParams(important_areas_count=4.5)
    with pytest.raises(LodestarError, match=r"hop2_expansion_width = 0.9 is out of range; allowed: 1.0 to 1.5"):
        LocalizationParams(hop2_expansion_width=0.9)
    with pytest.raises(LodestarError, match=r"Propylitic Alteration = 2.5 is out of range; allowed: 1.0 to 2.0"):
        LocalizationParams(area_type_weights={"Propylitic Alteration": 2.5})
    with pytest.raises(LodestarError, match="Unknown area type"):
        LocalizationParams(area_type_weights={"Skarn": 1.5})
    with pytest.raises(LodestarError, match="must be a number"):
        LocalizationParams(chain_presence_weight="high")


def test_area_type_names_of_the_paper_and_roles():
    assert area_role("Silicification Zone") == "silicification"
    assert area_role("false color composition") == "false_color_composite"
    assert area_role("Hydrothermal Alteration") == "hydrothermal_alteration"
    assert area_role("propylitic_alteration") == "propylitic_alteration"
    assert area_role("geochemistry") == "geochemistry"


def test_from_dict_knowledge_defaults_with_overrides():
    model = {"degree_centrality_weight": 1.5, "betweenness_centrality_weight": 1.2, "chain_presence_weight": 2.0,
             "area_type_weights": {"hydrothermal_alteration": 1.8, "silicification": 1.4},
             "important_areas_count": 4, "hop2_expansion_height": 1.2, "hop2_expansion_width": 1.3}
    base = LocalizationParams.from_dict(model)
    assert base.important_areas_count == 4 and base.hop2_expansion_width == 1.3
    assert base.role_weight("hydrothermal_alteration") == 1.8
    overrides = {"important_areas_count": "6", "area_type_weights": {"Silicification Zone": "2"}, "unknown": 1}
    over = LocalizationParams.from_dict(overrides, base)
    assert over.important_areas_count == 6
    assert over.role_weight("silicification") == 2.0 and over.role_weight("hydrothermal_alteration") == 1.8
    assert over.degree_centrality_weight == 1.5


def test_from_model_answer_tolerates_text_strings_and_placeholders():
    answer = """Here are the parameters:
```json
{"degree_centrality_weight": "2.5", "betweenness_centrality_weight": 1.4,
 "chain_presence_weight": "float, range 1.0-3.0, default 1.0",
 "area_type_weights": {"Silicification Zone": "1.7", "Propylitic Alteration": "float, range 1.0-2.0, default 1.0"},
 "important_areas_count": 5.0, "hop2_expansion_height": "1.3", "hop2_expansion_width": 1.1}
```"""
    p = LocalizationParams.from_model_answer(answer, LocalizationParams(chain_presence_weight=1.8))
    assert p.degree_centrality_weight == 2.5 and p.betweenness_centrality_weight == 1.4
    assert p.chain_presence_weight == 1.8  # placeholder: base value kept
    assert p.role_weight("silicification") == 1.7 and p.role_weight("propylitic_alteration") == 1.0
    assert p.important_areas_count == 5 and p.hop2_expansion_height == 1.3 and p.hop2_expansion_width == 1.1
    with pytest.raises(LodestarError, match="allowed: 1.0 to 1.5"):
        LocalizationParams.from_model_answer('{"hop2_expansion_height": 2}')
    with pytest.raises(LodestarError, match="no JSON object"):
        LocalizationParams.from_model_answer("I think the defaults are fine.")
    with pytest.raises(LodestarError, match="not valid JSON"):
        LocalizationParams.from_model_answer("{degree: 2}")


def test_from_model_answer_reads_json_after_braced_prose_and_trailing_commas():
    """The same extractor as every model answer: the first JSON object, not first '{' to last '}'."""
    p = LocalizationParams.from_model_answer('Parameters {as asked}: {"important_areas_count": 4,} Done {ok}.')
    assert p.important_areas_count == 4


def test_large_unit_does_not_swallow_the_prospectivity():
    """A geological unit covering the map links every zone; its score is scaled down by its size and the
    one-hop clip keeps only its part near the seed, so the polygon stays around the evidence."""
    frame = gpd.GeoDataFrame([
        zone("U", "geo", "geological_map", box(0, 0, 10000, 10000)),
        zone("S", "sil", "silicification", box(4900, 4900, 5100, 5100)),
        zone("H", "hyd", "hydrothermal_alteration", box(4800, 4800, 5200, 5200)),
        zone("P", "prop", "propylitic_alteration", box(4600, 4600, 5400, 5400)),
        zone("L", "iron", "iron_oxide", box(8000, 8000, 8200, 8200)),
    ], crs=UTM)
    g = build_graph(frame)
    # strengths U 0.4, S 0.45, H 0.6, P 0.45, L 0.1; U bridges L to S, H, P (betweenness max); all on chains;
    # focus: median area 1.6e5 -> U sqrt(1.6e5/1e8) = 0.04, P 0.5, the rest 1
    scores = node_scores(g, LocalizationParams())
    expected = {"U": 0.04 * (1 + 0.4 / 0.6 + 1 + 1), "S": 1 + 0.45 / 0.6 + 1, "H": 3.0,
                "P": 0.5 * (1 + 0.45 / 0.6 + 1), "L": 1 + 0.1 / 0.6 + 1}
    for z, value in expected.items():
        assert scores[z] == pytest.approx(value, rel=1e-5), z
    result = localize(g, LocalizationParams(important_areas_count=3))
    assert list(result["seeds"]) == ["H", "L"]
    assert list(result["zones"]) == ["H,P,S,U", "L,U"]
    # H grown by sqrt(1.6e5) = 400 m: a 1200 m square with round corners clips U; L grown by 200 m likewise
    rounded = [1200 ** 2 - (4 - math.pi) * 400 ** 2, 600 ** 2 - (4 - math.pi) * 200 ** 2]
    assert list(result["area_m2"]) == pytest.approx(rounded, rel=2e-3)
    assert result.iloc[0].geometry.covers(box(4400, 4800, 5600, 5200).union(box(4800, 4400, 5200, 5600)))
    deposits = gpd.GeoDataFrame(geometry=[Point(5000, 5000), Point(5150, 4950)], crs=UTM)
    metrics = evaluate_localization(result, deposits, valid_geometry=box(0, 0, 10000, 10000))
    assert metrics["recall"] == 1.0
    assert metrics["area_reduction"] == pytest.approx(1 - sum(rounded) / 1e8, rel=1e-4)


def test_a_linear_seed_is_cut_to_where_it_meets_its_linked_zones():
    from lodestar.plugin.localization import seed_area

    frame = gpd.GeoDataFrame([
        zone("T", "faults", "structure", box(0, 0, 10000, 100), 1.0),  # 10 km x 100 m: compactness 0.03
        zone("K", "alt", "hydrothermal_alteration", box(4950, 100, 5050, 200), 0.9),  # touches it
    ], geometry="geometry", crs=UTM)
    g = build_graph(frame)
    geometry = dict(zip(frame["zone_id"], frame.geometry))
    area, members = seed_area(g, "T", LocalizationParams(clip_ratio=1.0), geometry)
    assert members == {"T", "K"}
    # The strip is 2 * 1e6 / 20200 = 99.01 m wide; K (gap 0) grown by 1.0 * 99.01 m cuts the fault to
    # [4950, 5050] x [100 - 99.01, 100] plus two quarter discs of radius 99.01 m at K's lower corners;
    # plus K (10000 m2).
    width = 2 * 1_000_000 / 20200
    assert area.area == pytest.approx(100 * width + math.pi * width ** 2 / 2 + 10000, rel=2e-3)
    assert area.bounds == pytest.approx((4950 - width, 100 - width, 5050 + width, 200))
    whole, _ = seed_area(g, "T", LocalizationParams(clip_ratio=0), geometry)
    assert whole.area == pytest.approx(1_000_000 + 10000)
