"""Targets from the favourability surface, ranked by the evidence they hold and explained by the graph."""
from __future__ import annotations

import numpy as np
import pytest
from affine import Affine
from rasterio.crs import CRS
from shapely.geometry import GeometryCollection, MultiPolygon, box
from worlds_b_run import analyse_worlds_b_case

from lodestar.plugin.engine.core_target import other_outlines, target_outline
from lodestar.plugin.engine.prospectivity import TARGET_COLUMNS, rank_targets
from lodestar.plugin.graph import GraphParams, build_graph
from lodestar.plugin.localization import LocalizationParams, node_scores
from lodestar.plugin.raster_io import RasterGrid
from lodestar.plugin.zones import zone_record, zones_frame

CRS_UTM = CRS.from_epsg(32611)


def _grid() -> RasterGrid:
    return RasterGrid(Affine(100.0, 0, 500_000.0, 0, -100.0, 4_000_000.0), 40, 40, CRS_UTM)


def _surface() -> np.ma.MaskedArray:
    """Background 0.1; patch A (4 x 4 cells) at 0.9; patch B (6 x 6 cells) at 0.7; one nodata corner."""
    values = np.full((40, 40), 0.1, dtype="float32")
    values[2:6, 2:6] = 0.9
    values[20:26, 20:26] = 0.7
    mask = np.zeros_like(values, dtype=bool)
    mask[35:, 35:] = True
    return np.ma.masked_array(values, mask=mask)


def _graph(grid: RasterGrid):
    # two zones of different roles overlap inside patch B (cells 20-26 -> x 502000-502600, y 3997400-3998000)
    records = [
        zone_record(box(502_050, 3_997_450, 502_550, 3_997_950), grid, zone_id="s1:1", layer="as", role="geochemistry",
                    kind="anomaly", score_mean=3.0, score_max=4.0, what="As anomaly"),
        zone_record(box(502_100, 3_997_500, 502_500, 3_997_900), grid, zone_id="s2:1", layer="faults",
                    role="structure", kind="fault", score_mean=1.0, score_max=1.0, what="fault corridor"),
    ]
    return build_graph(zones_frame(records, CRS_UTM), GraphParams(), crs=CRS_UTM)


def test_targets_rank_by_the_evidence_they_hold_and_name_the_zones_inside():
    grid = _grid()
    graph = _graph(grid)
    scores = node_scores(graph, LocalizationParams())
    valid_cells = 40 * 40 - 25
    share = (16 + 36) / valid_cells
    targets = rank_targets(_surface(), grid, CRS_UTM, graph, scores, share)
    assert list(targets.columns) == list(TARGET_COLUMNS) + ["geometry"]
    assert list(targets["rank"]) == [1, 2]
    first, second = targets.iloc[0], targets.iloc[1]
    # B holds more evidence (0.7 x 0.36 km2 = 0.252) than the brighter but smaller A (0.9 x 0.16 km2 = 0.144)
    assert abs(first["fav_mean"] - 0.7) < 1e-6 and first["area_m2"] == 36 * 100 * 100
    assert first["score"] == pytest.approx(0.252) and second["score"] == pytest.approx(0.144)
    assert first["zones"] == "s1:1,s2:1" and first["roles"] == "geochemistry,structure"
    assert first["graph"] == round(float(max(scores)), 6) > 0
    assert "2 zone(s) of geochemistry, structure" in first["why"] and "over 0.36 km2" in first["why"]
    assert second["fav_mean"] == pytest.approx(0.9) and second["n_zones"] == 0 and second["area_m2"] == 16 * 100 * 100
    assert "no zone of the chain" in second["why"]


def test_an_empty_graph_still_gives_ranked_targets():
    grid = _grid()
    empty = build_graph(zones_frame([], CRS_UTM), GraphParams(), crs=CRS_UTM)
    targets = rank_targets(_surface(), grid, CRS_UTM, empty, node_scores(empty, LocalizationParams()), 16 / 1575)
    assert len(targets) == 1 and targets.iloc[0]["fav_mean"] == 0.9 and targets.iloc[0]["zones"] == ""


def test_specks_of_the_top_share_are_not_targets():
    grid = _grid()
    values = np.full((40, 40), 0.1, dtype="float32")
    values[10, 10] = 0.95  # one cell: a speck
    values[20:23, 20:23] = 0.9  # nine cells
    empty = build_graph(zones_frame([], CRS_UTM), GraphParams(), crs=CRS_UTM)
    targets = rank_targets(np.ma.masked_array(values), grid, CRS_UTM, empty, node_scores(empty, LocalizationParams()),
                           10 / 1600)
    assert len(targets) == 1 and targets.iloc[0]["area_m2"] == 9 * 100 * 100


def test_the_verified_core_is_a_target_and_comes_first_even_off_the_top_share():
    grid = _grid()
    empty = build_graph(zones_frame([], CRS_UTM), GraphParams(), crs=CRS_UTM)
    core = box(503_000, 3_996_500, 503_300, 3_996_800)  # cells 30-33 x, 32-35 y: background 0.1
    targets = rank_targets(_surface(), grid, CRS_UTM, empty, node_scores(empty, LocalizationParams()),
                           (16 + 36) / 1575, core, "s1:AlOH:1")
    assert len(targets) == 3
    first = targets.iloc[0]
    assert first["rank"] == 1 and first.geometry.contains(core.centroid)
    assert first["why"].startswith("holds the verified core (s1:AlOH:1); evidence")
    assert first["area_m2"] == 9 * 100 * 100 and first["fav_mean"] == pytest.approx(0.1)
    assert [round(v, 6) for v in targets["fav_mean"][1:]] == [0.7, 0.9]  # the rest ranked as before
    assert not any("verified core" in why for why in targets["why"][1:])


def test_a_core_inside_a_top_patch_ranks_that_patch_first_without_growing_it():
    grid = _grid()
    empty = build_graph(zones_frame([], CRS_UTM), GraphParams(), crs=CRS_UTM)
    core = box(500_250, 3_999_450, 500_450, 3_999_650)  # inside patch A (cells 2-6)
    targets = rank_targets(_surface(), grid, CRS_UTM, empty, node_scores(empty, LocalizationParams()),
                           (16 + 36) / 1575, core, "place")
    assert list(targets["fav_mean"].round(6)) == [0.9, 0.7]
    assert targets.iloc[0]["area_m2"] == 16 * 100 * 100 and "verified core (place)" in targets.iloc[0]["why"]


def test_a_core_too_large_or_unreadable_is_not_forced_into_the_targets_and_the_note_says_why():
    notes = []
    small, large = box(0, 0, 100, 100), box(0, 0, 1000, 1000)
    assert target_outline({"label": "a", "wkt": small.wkt}, 1e6, 0.1, notes).equals(small) and notes == []
    fills = box(0, 0, 400, 450)  # 18 % of a small scene: a system filling much of it is still a target
    assert target_outline({"label": "a", "wkt": fills.wkt}, 1e6, 0.1, notes).equals(fills) and notes == []
    assert target_outline({"label": "b", "wkt": large.wkt}, 1e6, 0.1, notes) is None
    assert target_outline({"label": "c", "wkt": "POLYGON (("}, 1e6, 0.1, notes) is None
    assert target_outline({}, 1e6, 0.1, notes) is None and len(notes) == 2
    assert "(b) spans 100.0% of the analysed area, more than 2 times the targets' 10%" in notes[0]
    assert notes[1].startswith("The verdict's core is not drawn as a target: its outline is not readable WKT")


def test_further_verified_systems_are_targets_ranked_right_after_the_core():
    grid = _grid()
    empty = build_graph(zones_frame([], CRS_UTM), GraphParams(), crs=CRS_UTM)
    core = box(503_000, 3_996_500, 503_300, 3_996_800)  # background 0.1 (cells 30-33 x, 32-35 y)
    other = box(500_800, 3_996_000, 501_000, 3_996_200)  # background 0.1, 2 x 2 cells: under the least target size
    targets = rank_targets(_surface(), grid, CRS_UTM, empty, node_scores(empty, LocalizationParams()),
                           (16 + 36) / 1575, core, "s1:AlOH:1", other)
    assert len(targets) == 4 and list(targets["rank"]) == [1, 2, 3, 4]
    assert targets.iloc[0].geometry.contains(core.centroid)
    second = targets.iloc[1]
    assert second.geometry.contains(other.centroid) and second["area_m2"] == 4 * 100 * 100
    assert second["why"].startswith("holds a further system verified on its own; evidence")
    assert [round(v, 6) for v in targets["fav_mean"][2:]] == [0.7, 0.9]  # the surface's own targets after them


def test_further_systems_are_kept_in_the_verdicts_order_while_they_fit_and_the_note_says_how_many_not():
    first = box(0, 0, 100, 100)
    b = MultiPolygon([box(1000, 0, 1100, 200), box(1100, 0, 1200, 200)])  # one system in two pieces
    named = GeometryCollection([b, box(0, 1000, 400, 1400), box(2000, 0, 2100, 100)])
    core = {"label": "a", "wkt": first.wkt, "others": named.wkt, "others_label": "b, c, d"}
    notes = []
    kept = other_outlines(core, first, 1e6, 0.1, notes)  # room for 2e5 m2: the core, b and d fit; c does not
    assert kept.area == pytest.approx(40_000 + 10_000) and kept.contains(box(2000, 0, 2100, 100).centroid)
    assert notes == ["1 of the 3 further verified systems (b, c, d) are not made targets: with the core they would "
                     "span more than 2 times the targets' 10% of the analysed area."]
    assert other_outlines({"label": "a", "wkt": first.wkt}, first, 1e6, 0.1, notes) is None and len(notes) == 1
    assert other_outlines(core, None, 1e6, 0.1, notes) is None  # no core drawn: no further systems either
    assert notes[-1] == ("The further verified systems are not drawn as targets: the core they rank after is not "
                         "drawn either.")
    assert other_outlines(dict(core, others="POLYGON (("), first, 1e6, 0.1, notes) is None
    assert notes[-1].startswith("The further verified systems are not drawn as targets: their outline is not readable")


def test_a_second_system_verified_on_its_own_is_a_target_end_to_end(tmp_path):
    """worlds_b seed 1111 case 34: two porphyry systems 1.6 km apart; each gossan core has every critical item
    supported around it. Only the stronger was drawn, and the targets held 1 of the 3 deposits."""
    result, record = analyse_worlds_b_case(1111, 34, "porphyry", tmp_path, scored=True)
    assert result.answer == "A"
    core = record["rounds"][-1]["verdict"]["core"]
    assert core["others_label"] == "s2:Ferric iron (gossan) index (anomaly map):1"
    ranked = result.prospectivity.sort_values("rank")
    assert ranked.iloc[0]["why"].startswith(f"holds the verified core ({core['label']})")
    assert ranked.iloc[1]["why"].startswith("holds a further system verified on its own")
    assert result.metrics["recall"] == 1.0 and result.metrics["area_reduction"] > 0.85
