"""Targets from the favourability surface, ranked by the evidence they hold and explained by the graph."""
from __future__ import annotations

import numpy as np
import pytest
import shapely.wkt
from affine import Affine
from rasterio.crs import CRS
from shapely.geometry import GeometryCollection, MultiPolygon, Point, box
from worlds_b_run import analyse_worlds_b_case

from lodestar.plugin.graph import GraphParams, build_graph
from lodestar.plugin.judge.target_table import TARGET_COLUMNS
from lodestar.plugin.map.core_target import other_outlines, target_outline
from lodestar.plugin.map.target_sizes import TargetSizes
from lodestar.plugin.map.work_list import rank_targets
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


def _sizes(max_km2=None, min_km2=0.04, prospect_km2=None, count=30) -> TargetSizes:
    """Sizes on the 1 ha cells of `_grid`: by default a least target of 4 cells, no cap, no prospects."""
    return TargetSizes(min_km2, max_km2, prospect_km2, count, "set for the test", "set for the test")


def _ranked(values, share, **kwargs):
    return rank_targets(values, _grid(), CRS_UTM, share, **kwargs).targets


def test_targets_rank_by_how_high_they_rise_and_say_why_in_words():
    grid = _grid()
    graph = _graph(grid)
    valid_cells = 40 * 40 - 25
    share = (16 + 36) / valid_cells
    targets = _ranked(_surface(), share, nodes=graph.nodes, deposit_xy=[(502_250.0, 3_997_750.0)])
    assert list(targets.columns) == list(TARGET_COLUMNS) + ["geometry"]
    assert list(targets["rank"]) == [1, 2]
    first, second = targets.iloc[0], targets.iloc[1]
    # A rises higher (0.9) than the larger B (0.7): one candidate system each, ranked by its best tenth
    assert first["fav_p90"] == pytest.approx(0.9) and first["area_km2"] == pytest.approx(0.16)
    assert second["fav_p90"] == pytest.approx(0.7) and second["area_km2"] == pytest.approx(0.36)
    assert first["score"] == pytest.approx(0.9) and first["exp_deps"] is None or np.isnan(first["exp_deps"])
    assert (first["known_deps"], second["known_deps"]) == (0, 1)
    assert (first["centroid_x"], first["centroid_y"]) == (500_400.0, 3_999_600.0)
    assert second["n_zones"] == 2 and first["n_zones"] == 0
    assert -117.0 < first["lon"] < -116.9 and 36.1 < first["lat"] < 36.2  # UTM 11N, 500 km E, 4,000 km N
    assert "the chain marked 2 zones here" in second["why"] and "s1:1" not in second["why"]
    assert second["why"].startswith("0.36 km2 in the top") and "best tenth at favourability 0.70" in second["why"]


def test_a_two_peak_patch_splits_at_its_saddle_and_a_one_peak_patch_does_not():
    y, x = np.mgrid[0:40, 0:40]
    two = np.exp(-((x - 12) ** 2 + (y - 20) ** 2) / 30.0) + np.exp(-((x - 28) ** 2 + (y - 20) ** 2) / 30.0)
    one = np.exp(-((x - 20) ** 2 + (y - 20) ** 2) / 60.0)
    share = 0.2
    split = _ranked(np.ma.masked_array(two), share)
    whole = _ranked(np.ma.masked_array(one), share)
    assert len(split) == 2 and len(whole) == 1
    left, right = sorted(split.geometry, key=lambda g: g.centroid.x)
    assert left.centroid.x < 501_600 < right.centroid.x  # the saddle at x = 20 cells (502,000 m) parts them
    assert split["area_km2"].sum() == pytest.approx(whole["area_km2"].sum(), rel=0.05)
    shallow = _ranked(np.ma.masked_array(two), share, saddle_depth=0.5)  # a saddle shallower than the depth
    assert len(shallow) == 1


def test_no_target_exceeds_the_cap_and_splitting_drops_no_cell():
    y, x = np.mgrid[0:40, 0:40]
    one = np.exp(-((x - 20) ** 2 + (y - 20) ** 2) / 200.0)
    share = 0.25
    whole = _ranked(np.ma.masked_array(one), share)
    capped = _ranked(np.ma.masked_array(one), share, sizes=_sizes(0.8))  # 80 cells of 1 ha
    assert len(whole) == 1 and whole["area_km2"].iloc[0] == pytest.approx(4.0, abs=0.02)  # ties at the cut
    assert len(capped) >= 5 and capped["area_km2"].max() <= 0.8
    assert capped["area_km2"].sum() == pytest.approx(whole["area_km2"].iloc[0])


def test_targets_know_their_tier():
    values = np.full((40, 40), 0.1)
    values[2:5, 2:5] = 0.9  # 9 cells: within the top 2 % (32 cells)
    values[20:30, 20:30] = np.linspace(0.3, 0.5, 100).reshape(10, 10)  # the rest of the top 10 %
    targets = _ranked(np.ma.masked_array(values), 0.10)
    assert sorted(targets["tier"]) == [2, 2] or sorted(targets["tier"]) == [2, 10]
    top = targets[targets["fav_p90"] > 0.8].iloc[0]
    assert top["tier"] == 2


def test_an_empty_graph_still_gives_ranked_targets():
    targets = _ranked(_surface(), 16 / 1575)
    assert len(targets) == 1 and targets.iloc[0]["fav_mean"] == 0.9 and targets.iloc[0]["n_zones"] == 0


def test_specks_of_the_top_share_are_not_targets():
    values = np.full((40, 40), 0.1, dtype="float32")
    values[10, 10] = 0.95  # one cell: a speck
    values[20:23, 20:23] = 0.9  # nine cells
    targets = _ranked(np.ma.masked_array(values), 10 / 1600)
    assert len(targets) == 1 and targets.iloc[0]["area_km2"] == pytest.approx(0.09)


def test_the_verified_core_is_a_target_and_comes_first_even_off_the_top_share():
    core = box(503_000, 3_996_500, 503_300, 3_996_800)  # cells 30-33 x, 32-35 y: background 0.1
    targets = _ranked(_surface(), (16 + 36) / 1575, core=core, core_label="s1:AlOH:1")
    assert len(targets) == 3
    first = targets.iloc[0]
    assert first["rank"] == 1 and first.geometry.contains(core.centroid)
    assert first["why"].startswith("holds the verified core (s1:AlOH:1); 0.09 km2")
    assert first["area_km2"] == pytest.approx(0.09) and first["fav_mean"] == pytest.approx(0.1)
    assert [round(v, 6) for v in targets["fav_mean"][1:]] == [0.9, 0.7]  # the rest ranked as before
    assert not any("verified core" in why for why in targets["why"][1:])


def test_a_core_inside_a_top_patch_ranks_that_patch_first_without_growing_it():
    core = box(502_250, 3_997_450, 502_450, 3_997_650)  # inside patch B (cells 20-26)
    targets = _ranked(_surface(), (16 + 36) / 1575, core=core, core_label="place")
    assert list(targets["fav_mean"].round(6)) == [0.7, 0.9]
    assert targets.iloc[0]["area_km2"] == pytest.approx(0.36) and "verified core (place)" in targets.iloc[0]["why"]


def test_the_best_targets_are_judged_and_reordered_by_their_verdict():
    seen = []

    def judge(labels, best):
        seen.append(list(best))
        return [{"items": [], "verdict": "unsupported", "why": "unsupported: nothing here."},
                {"items": [], "verdict": "strong", "why": "strong: everything here."}]

    work = rank_targets(_surface(), _grid(), CRS_UTM, (16 + 36) / 1575, judge=judge)
    targets, judgements = work.targets, work.judgements
    assert len(seen[0]) == 2
    # A (p90 0.9) judged unsupported: 0.9 x 0.4 = 0.36 falls below B's 0.7 x 1.0
    assert list(targets["fav_p90"].round(6)) == [0.7, 0.9] and list(targets["verdict"]) == ["strong", "unsupported"]
    assert "strong: everything here" in targets.iloc[0]["why"]
    assert sorted(j["rank"] for j in judgements) == [1, 2]


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


def test_further_verified_systems_are_targets_ranked_by_their_own_evidence():
    core = box(503_000, 3_996_500, 503_300, 3_996_800)  # background 0.1 (cells 30-33 x, 32-35 y)
    other = box(500_800, 3_996_000, 501_000, 3_996_200)  # background 0.1, 2 x 2 cells: the least target size
    targets = _ranked(_surface(), (16 + 36) / 1575, core=core, core_label="s1:AlOH:1", others=other)
    assert len(targets) == 4 and list(targets["rank"]) == [1, 2, 3, 4]
    assert targets.iloc[0].geometry.contains(core.centroid)
    last = targets.iloc[3]
    assert last.geometry.contains(other.centroid) and last["area_km2"] == pytest.approx(0.04)
    assert last["why"].startswith("holds a further system verified on its own; 0.04 km2")
    assert [round(v, 6) for v in targets["fav_mean"][1:3]] == [0.9, 0.7]  # the surface's own targets by rank


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
    # the second system is drawn: a target of its own, or inside the core's target when the surface joins them
    other = shapely.wkt.loads(core["others"])
    own = ranked["why"].str.startswith("holds a further system verified on its own").any()
    assert own or ranked.iloc[0].geometry.intersection(other).area > 0.5 * other.area
    assert result.metrics["recall"] == 1.0 and result.metrics["area_reduction"] > 0.85


def test_a_fitted_surface_ranks_targets_by_the_deposits_cells_of_their_rank_held_out_of_fold():
    """A (16 cells at 0.9) and B (36 cells at 0.7) on 0.1 elsewhere (1,575 cells), the same surface out of fold: 2
    deposits in A, 1 in B, 1 in the background. Each tie group's deposits spread over its stretch of the ranked area
    (cells 0-16, 16-52, 52-1575), whose densities fall (2/16, 1/36, 1/1523 of the 4 per cell): A expects 2 and B 1,
    12.5 and 2.8 per km2. Before, the fitted values were summed (B 25.2 against A's 14.4, B first), which made an
    ensemble's mean ranks or a balanced fit's odds into deposits (Murchison: 48 expected where its targets held
    230)."""
    from lodestar.plugin.favourability.expected import expected_deposits

    values = _surface()
    uncertainty = np.ma.masked_array(np.full((40, 40), 0.05), mask=np.ma.getmaskarray(values))
    deposits = [(500_300.0, 3_999_700.0)] * 2 + [(502_250.0, 3_997_750.0), (503_050.0, 3_996_950.0)]
    expected = expected_deposits(values, values, _grid(), deposits)
    assert float(expected.sum()) == pytest.approx(4.0)
    targets = _ranked(values, (16 + 36) / 1575, probability=True, expected=expected, deposit_xy=deposits,
                      uncertainty=uncertainty)
    assert list(targets["fav_mean"].round(6)) == [0.9, 0.7]
    assert targets["exp_deps"].tolist() == pytest.approx([2.0, 1.0], abs=1e-3)
    assert targets["score"].tolist() == pytest.approx([2.0 / 0.16, 1.0 / 0.36], abs=1e-3)  # expected per km2
    assert targets["known_deps"].tolist() == [2, 1] and targets["uncertain"].tolist() == pytest.approx([0.05, 0.05])
    assert "2 deposits expected, 12 per km2 (what cells of its rank held out of fold)" in targets.iloc[0]["why"]


def test_a_small_intense_target_outranks_a_large_diffuse_one_that_holds_more_in_all():
    """Calibrated: A (9 cells) expects 1.2 deposits, B (64 cells) 2.0; A holds more per km2 (13.3 against 3.1).
    Summing over the area put B first: size bought the rank (calibrated Murchison's best 10 held 35 deposits where
    the surface's own best cells of the same area held 65). Knowledge-driven, two targets whose best tenths rise
    alike are ranked by size."""
    values = np.full((40, 40), 0.1)
    values[2:5, 2:5] = 0.9
    values[20:28, 20:28] = 0.8
    expected = np.zeros((40, 40))
    expected[2:5, 2:5] = 1.2 / 9
    expected[20:28, 20:28] = 2.0 / 64
    surface = np.ma.masked_array(values)
    targets = _ranked(surface, 73 / 1600, probability=True, expected=np.ma.masked_array(expected))
    assert targets["area_km2"].tolist() == pytest.approx([0.09, 0.64])
    assert targets["exp_deps"].tolist() == pytest.approx([1.2, 2.0])
    assert targets["score"].tolist() == pytest.approx([1.2 / 0.09, 2.0 / 0.64], abs=1e-4)
    alike = values.copy()
    alike[2:5, 2:5] = 0.8
    targets = _ranked(np.ma.masked_array(alike), 73 / 1600)
    assert targets["fav_p90"].tolist() == pytest.approx([0.8, 0.8]) and targets["area_km2"].tolist() == [0.64, 0.09]


def test_a_speck_under_the_least_size_is_dropped_and_counted_and_a_fragment_joins_the_target_it_touches():
    from lodestar.plugin.favourability.targets import delineate

    values = np.full((12, 12), 0.1)
    values[1:6, 1:8] = 0.9  # 35 cells
    values[6:8, 1] = 0.9  # an arm of 2 cells: halving to the cap leaves it a fragment
    values[10, 9:11] = 0.95  # 2 cells on their own: a speck
    found = delineate(np.ma.masked_array(values), 39 / 144, max_cells=6, min_cells=3)
    sizes = np.bincount(found.labels.ravel())[1:]
    assert (found.specks, found.speck_cells, found.merged) == (1, 2, 1)
    assert sizes.sum() == 37 and sizes.max() <= 6 and sizes.min() >= 3  # every cell of the block in a target
    assert found.labels[10, 9] == 0 and found.labels[7, 1] > 0
    # the least size of a run: a 9-cell patch under 0.16 km2 (16 cells of 1 ha) is no target, and the note says it
    values = np.full((40, 40), 0.1)
    values[2:5, 2:5] = 0.9
    values[20:26, 20:26] = 0.7
    work = rank_targets(np.ma.masked_array(values), _grid(), CRS_UTM, 45 / 1600, sizes=_sizes(min_km2=0.16))
    assert work.targets["area_km2"].tolist() == [0.36] and (work.delineation.specks, work.delineation.speck_cells) \
        == (1, 9)
    from lodestar.plugin.judge.target_table import targets_note

    note = targets_note(work, 1600 * 1e4, 45 / 1600, False)
    assert "none smaller than 0.16 km2 (set for the test; 1 speck under it dropped, 0 joined to the target" in note


def test_each_target_holds_its_prospects_its_own_best_cells_split_at_their_peaks():
    """One camp-sized patch with three bumps: its prospects are its best cells (at least the share of it the targets
    are of the area), none larger than one deposit's footprint, each with the camp's rank, ranked by the same rule."""
    y, x = np.mgrid[0:40, 0:40]
    bumps = sum(h * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / 6.0) for h, cx, cy in
                ((1.0, 10, 20), (0.8, 20, 20), (0.6, 30, 20)))
    values = np.ma.masked_array(0.2 + 0.1 * np.exp(-((y - 20) ** 2) / 40.0) * (np.abs(x - 20) < 16) + bumps)
    work = rank_targets(values, _grid(), CRS_UTM, 0.25, sizes=_sizes(max_km2=4.0, prospect_km2=0.12, min_km2=0.04))
    camps, prospects = work.targets, work.prospects
    assert len(camps) >= 1 and camps["prospects"].sum() == len(prospects) > 1
    first = prospects[prospects["camp"] == 1].sort_values("rank")
    assert list(first["rank"]) == list(range(1, len(first) + 1))
    assert first["area_km2"].max() <= 0.12 and first["area_km2"].min() >= 0.04
    assert first["score"].is_monotonic_decreasing  # the same rule: how high each rises
    camp = camps[camps["rank"] == 1].geometry.iloc[0]
    assert all(camp.buffer(1.0).contains(g) for g in first.geometry)
    share = first["area_km2"].sum() / camps[camps["rank"] == 1]["area_km2"].iloc[0]
    assert 0.08 <= share <= 0.3  # the camp's own best cells: about the targets' share of the area
    assert first.iloc[0]["why"].startswith("prospect 1 of target 1: ")
    assert camps.iloc[0]["why"].count(" prospects inside") == 1


def test_a_flat_camp_gives_its_prospects_the_whole_tie_and_the_note_says_how_much():
    """A camp whose best cells are one tied plateau over 40 % of it (a knowledge-driven surface on classed layers):
    the tie is taken whole, so the prospects cover far more than the share asked, and the note gives the share."""
    values = np.ma.masked_array(np.full((40, 40), 0.1))
    values[10:30, 10:30] = 0.5  # the camp: 400 cells
    values[12:28, 12:22] = 0.9  # its best cells, one plateau of 160 (40 % of the camp)
    work = rank_targets(values, _grid(), CRS_UTM, 0.25, sizes=_sizes(max_km2=4.0, prospect_km2=0.2, min_km2=0.04))
    camp = work.targets[work.targets["rank"] == 1]
    prospects = work.prospects[work.prospects["camp"] == 1]
    assert camp["area_km2"].iloc[0] == pytest.approx(4.0) and prospects["area_km2"].sum() == pytest.approx(1.6)
    from lodestar.plugin.judge.target_table import targets_note

    note = targets_note(work, 1600 * 1e4, 0.25, False)
    assert ("its own best cells (the top 25% of it with the cells tied at the cut: 40% of those targets' area in "
            "all)") in note


def test_a_hole_in_a_prospect_stays_a_hole_and_its_camp_holds_it():
    """A camp's best cells enclose one cell it ranks lower (ground just under the prospects' cut): a target fills such
    a hole, a prospect does not, since the camp already holds that ground and the prospect marks its best cells."""
    values = np.ma.masked_array(np.full((40, 40), 0.1))
    values[10:30, 10:30] = 0.5  # the camp: 400 cells
    values[12:28, 12:22] = 0.9  # its best cells, 160 cells round one lower cell
    values[20, 16] = 0.5
    values[25, 25] = 0.3  # and one cell of the camp below the targets' share (399 cells)
    work = rank_targets(values, _grid(), CRS_UTM, 399 / 1600,
                        sizes=_sizes(max_km2=4.0, prospect_km2=0.2, min_km2=0.04))
    camp = work.targets[work.targets["rank"] == 1]
    prospects = work.prospects[work.prospects["camp"] == 1]
    hole, target_hole = (Point(500_000.0 + (col + 0.5) * 100, 4_000_000.0 - (row + 0.5) * 100)
                         for row, col in ((20, 16), (25, 25)))
    assert camp["area_km2"].iloc[0] == pytest.approx(4.0)  # the target's hole is part of it
    assert camp.geometry.iloc[0].contains(hole) and camp.geometry.iloc[0].contains(target_hole)
    assert prospects["area_km2"].sum() == pytest.approx(1.59)  # 159 best cells; filled, the hole made it 1.60
    assert not any(g.intersects(hole) for g in prospects.geometry)


def test_a_targets_pinhole_is_filled_where_the_ground_is_analysed_and_a_nodata_cell_stays_out():
    from lodestar.plugin.favourability.targets import delineate

    values = np.ma.masked_array(np.zeros((20, 30)), mask=np.zeros((20, 30), dtype=bool))
    values[2:9, 2:9] = 0.9
    values[3, 3] = 0.1  # a two-cell hole: one analysed cell under the share, one nodata cell
    values[3, 4] = np.ma.masked
    found = delineate(values, 47 / 599, min_cells=4)
    assert found.labels[3, 3] == 1 and found.labels[3, 4] == 0 and (found.labels == 1).sum() == 48
    kept = delineate(values, 47 / 599, min_cells=4, fill_holes=False)
    assert kept.labels[3, 3] == 0 and (kept.labels == 1).sum() == 47


def test_the_work_list_draws_the_best_and_says_what_is_left_in_the_surface():
    values = _surface()
    deposits = [(502_250.0, 3_997_750.0)]
    work = rank_targets(values, _grid(), CRS_UTM, (16 + 36) / 1575, sizes=_sizes(count=1), deposit_xy=deposits)
    assert len(work.targets) == 1 and work.targets["fav_p90"].tolist() == [0.9]
    # drawn from the top 2 %, the smallest tier holding one target: patch B, outside it, is the rest of the top 3 %
    assert work.share == 0.02 and work.left == {"count": 0, "km2": pytest.approx(0.36), "known": 1}
    from lodestar.plugin.judge.target_table import targets_note

    note = targets_note(work, 1575 * 1e4, (16 + 36) / 1575, False)
    assert "the top 2% of the knowledge-driven surface (the smallest tier of the top 3% holding 1 target:" in note
    assert note.endswith("The work list is the best 1: the rest of the top 3% (0.4 km2, holding 1 known deposit) is "
                         "not drawn, and stays in the favourability surface.")


def _bumps() -> np.ma.MaskedArray:
    """Three intense peaks, each on a broad rise of its own."""
    y, x = np.mgrid[0:40, 0:40]
    return np.ma.masked_array(sum(np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / 2.0)
                                  + 0.5 * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / 60.0)
                                  for cx, cy in ((8, 8), (30, 10), (18, 30))))


def test_the_work_list_is_drawn_from_the_smallest_tier_that_holds_it():
    """Three targets fit in the top 2 %: drawn from the top 10 %, each would reach down its broad rise into cells the
    surface ranks below the best cells of the others; a list of 30 needs the whole top share."""
    values = _bumps()
    work = rank_targets(values, _grid(), CRS_UTM, 0.10, sizes=_sizes(count=3, min_km2=0.04))
    labelled = work.delineation.labels > 0
    assert work.share == 0.02 and len(work.targets) == 3 and set(work.targets["tier"]) == {2.0}
    assert values[labelled].min() >= np.percentile(values.compressed(), 98) - 1e-9
    assert work.left["count"] == 0 and work.left["km2"] == pytest.approx(0.10 * 1600 * 0.01 - labelled.sum() * 0.01)
    wide = rank_targets(values, _grid(), CRS_UTM, 0.10, sizes=_sizes(count=30, min_km2=0.04))
    assert wide.share == 0.10 and wide.targets["area_km2"].sum() > work.targets["area_km2"].sum()


def test_the_best_come_from_the_smallest_tier_holding_them_and_wider_tiers_fill_the_list():
    """The three peaks fit in the top 2 %, three lone rises only in a wider share: the best three are drawn at 2 %, the
    wider tiers add the rises clear of them; from one tier holding all six, the peaks would reach down their rises."""
    y, x = np.mgrid[0:40, 0:40]
    values = _bumps() + sum(0.45 * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / 6.0)
                            for cx, cy in ((34, 34), (4, 34), (36, 22)))
    work = rank_targets(values, _grid(), CRS_UTM, 0.10, sizes=_sizes(count=6), judged=3)
    best = work.targets[work.targets["rank"] <= 3]
    assert work.shares[0] == 0.02 and len(work.targets) == 6 and set(best["tier"]) == {2.0}
    top = np.percentile(values.compressed(), 98) - 1e-9
    assert all(values[work.delineation.labels == label].min() >= top for label in range(1, 4))
    rises = work.targets[work.targets["rank"] > 3]
    assert sorted((round((cx - 500_000) / 100 - 0.5), round((4_000_000 - cy) / 100 - 0.5))
                  for cx, cy in zip(rises["centroid_x"], rises["centroid_y"])) == [(4, 34), (34, 34), (36, 22)]
    one_tier = rank_targets(values, _grid(), CRS_UTM, 0.10, sizes=_sizes(count=6), judged=6)
    assert one_tier.shares == (0.10,) and one_tier.targets["area_km2"].head(3).min() > 4 * best["area_km2"].max()
    from lodestar.plugin.judge.target_table import targets_note

    note = targets_note(work, 1600 * 1e4, 0.10, False)
    assert ("the top 2% of the knowledge-driven surface (the smallest tier of the top 10% holding the best 3, as many "
            "as the chain judges: drawn from a wider share") in note
    assert work.shares == (0.02, 0.10) and work.added == (3, 3)  # the top 5 % adds nothing clear of the peaks
    assert ("no speck under it); the top 10%, delineated alike, then added 3 targets sharing no cell with those (to "
            "fill the list); ranked tier by tier, tightest first, then by how high") in note
    assert note.endswith("The work list is the best 6: the rest of the top 10% (1.1 km2) is not drawn, and stays in "
                         "the favourability surface.")
    short = rank_targets(values, _grid(), CRS_UTM, 0.10, sizes=_sizes(count=8), judged=3)
    assert len(short.targets) == 6 and "sharing no cell with those (the list holding 6 of 8)" in targets_note(
        short, 1600 * 1e4, 0.10, False)


def test_an_item_no_layer_can_test_at_any_target_is_said_once_and_left_out_of_the_verdicts():
    """Murchison: its layers cannot test the orogenic model's critical alteration anywhere, so every target read
    'weak' and the verdict told none apart."""
    from lodestar.plugin.judge.target_table import district_wide

    def judgement(shear, host):
        items = [{"id": "shear_corridor", "level": "critical", "status": shear},
                 {"id": "alteration_on_shear", "level": "critical", "status": "untestable"},
                 {"id": "competent_host", "level": "secondary", "status": host}]
        return {"items": items, "verdict": "weak", "why": "weak: ..."}

    notes = []
    judged = district_wide([judgement("supported", "supported"), judgement("supported", "absent"),
                            judgement("absent", "supported"), judgement("absent", "untestable")], notes)
    assert [j["verdict"] for j in judged] == ["strong", "moderate", "weak", "unsupported"]
    assert all("alteration_on_shear" not in [i["id"] for i in j["items"]] for j in judged)
    assert judged[0]["why"] == "strong: critical evidence here: shear corridor; secondary: competent host."
    assert notes == ["No layer can test the critical alteration on shear at any of the 4 targets judged: said here "
                     "once for the district, and left out of the targets' verdicts, which rest on the items the "
                     "layers can test there."]
    assert district_wide([judgement("supported", "absent")] * 2, []) != [judgement("supported", "absent")] * 2
    tested = [dict(judgement("supported", "absent"), items=[{"id": "a", "level": "critical", "status": "supported"}])]
    assert district_wide(tested, notes) == tested and len(notes) == 1  # nothing blind: as judged


def test_a_where_question_is_answered_by_the_ranked_targets():
    from lodestar.plugin.judge.target_table import where_answer

    targets = _ranked(_surface(), (16 + 36) / 1575, deposit_xy=[(502_250.0, 3_997_750.0)])
    text = where_answer(targets)
    assert text.startswith("2 targets over 0.5 km2 holding 1 known deposit, best first: 1. 0.16 km2 at 36.")
    assert "°N 116." in text or "°N 117." in text
    assert "; 2. 0.36 km2 at" in text and text.endswith(".")
    assert where_answer(targets.iloc[:0]).startswith("No target")
