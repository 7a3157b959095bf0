"""Evaluation metrics against values worked out by hand.

Grid: 10 x 10 cells of 10 m over (0..100, 0..100), EPSG:32633; column 9 (x 90..100) is nodata,
so the analysed area is 90 cells = 9000 m2.
Prospectivity: rank 1 box(0,0,20,20) (400 m2), rank 2 box(50,50,80,70) (600 m2),
rank 3 box(80,0,100,20) (200 m2 valid, the rest on nodata).
Deposits: P1 (10,10) rank 1; P2 (20,5) on rank 1's boundary (found); P3 (60,60) rank 2;
P4 (30,90) missed; P5 (95,50) on nodata and P6 (150,50) off the grid: outside.
Capture at area shares reads the ranked curve (0, 0), (2/45, 2), (1/9, 3), (2/15, 3) linearly: at 2 %
2 x 0.02 / (2/45) = 0.9; at 5 % 2 + (0.05 - 2/45) / (1/9 - 2/45) = 2.0833; at 10 % 2.8333; at 20 %,
past the selection, the 3 found (the unselected rest earns nothing).
"""
from __future__ import annotations

import csv

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from affine import Affine
from pyproj import CRS
from shapely.geometry import Point, box

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.evaluation import (
    answer_intervals,
    classification_metrics,
    evaluate_localization,
    evaluate_surface,
    plot_success_curve,
    rank_positions,
    resampled_scores,
    score_positions,
    write_curve_csv,
)
from lodestar.plugin.raster_io import RasterGrid

UTM = "EPSG:32633"
TRANSFORM = Affine(10, 0, 0, 0, -10, 100)
GRID = RasterGrid(TRANSFORM, 10, 10, CRS.from_string(UTM))
MASK = np.ones((10, 10), dtype=bool)
MASK[:, 9] = False

AUC_POLYGONS = (2 / 45) * 0.25 + (1 / 9 - 2 / 45) * 0.625 + (2 / 15 - 1 / 9) * 0.75 + (13 / 15) * 0.875


def prospectivity():
    return gpd.GeoDataFrame({"rank": [2, 1, 3], "score": [2.0, 3.0, 1.0]},
                            geometry=[box(50, 50, 80, 70), box(0, 0, 20, 20), box(80, 0, 100, 20)], crs=UTM)


def deposits():
    points = [Point(10, 10), Point(20, 5), Point(60, 60), Point(30, 90), Point(95, 50), Point(150, 50)]
    return gpd.GeoDataFrame({"name": [f"P{k}" for k in range(1, 7)]}, geometry=points, crs=UTM)


def check_polygon_metrics(m):
    assert (m["deposits"], m["inside"], m["outside"], m["found"]) == (6, 4, 2, 3)
    assert m["recall"] == pytest.approx(0.75)
    assert m["valid_area"] == pytest.approx(9000)
    assert m["selected_area"] == pytest.approx(1200)
    assert m["area_reduction"] == pytest.approx(1 - 1200 / 9000)
    assert [c["rank"] for c in m["curve"]] == [0, 1, 2, 3]
    assert [c["area_share"] for c in m["curve"]] == pytest.approx([0, 2 / 45, 1 / 9, 2 / 15])
    assert [c["deposit_share"] for c in m["curve"]] == pytest.approx([0, 0.5, 0.75, 0.75])
    assert m["auc"] == pytest.approx(AUC_POLYGONS)
    assert m["auc"] == pytest.approx(0.8277778, abs=1e-7)
    assert m["deposit_ranks"] == [1, 1, 2, None, None, None]
    assert m["capture"] == pytest.approx({0.02: 0.9, 0.05: 2 + 0.05 * 15 - 2 / 3, 0.10: 2 + 0.10 * 15 - 2 / 3, 0.20: 3})


def test_polygons_with_valid_mask():
    check_polygon_metrics(evaluate_localization(prospectivity(), deposits(), valid_mask=MASK, grid=GRID))


def test_polygons_with_valid_extent_polygon():
    check_polygon_metrics(evaluate_localization(prospectivity(), deposits(), valid_geometry=box(0, 0, 90, 100)))


def test_polygons_with_analysis_raster_and_files(tmp_path):
    raster = tmp_path / "analysis.tif"
    data = np.ones((10, 10), dtype="float32")
    data[:, 9] = -9999
    with rasterio.open(raster, "w", driver="GTiff", width=10, height=10, count=1, dtype="float32", crs=UTM,
                       transform=TRANSFORM, nodata=-9999) as ds:
        ds.write(data, 1)
    prospectivity().to_file(tmp_path / "p.gpkg", driver="GPKG")
    deposits().to_file(tmp_path / "d.gpkg", driver="GPKG")
    m = evaluate_localization(tmp_path / "p.gpkg", tmp_path / "d.gpkg", analysis_raster=raster)
    check_polygon_metrics(m)
    deposits().to_crs("EPSG:4326").to_file(tmp_path / "d.geojson", driver="GeoJSON")  # reprojected back
    m = evaluate_localization(tmp_path / "p.gpkg", tmp_path / "d.geojson", analysis_raster=raster)
    assert (m["inside"], m["outside"]) == (4, 2)
    assert m["deposit_ranks"][0] == 1 and m["deposit_ranks"][2] == 2 and m["deposit_ranks"][3] is None


def test_area_only_counts_every_deposit_inside():
    m = evaluate_localization(prospectivity(), deposits(), valid_area=10000)
    assert (m["inside"], m["outside"], m["found"]) == (6, 0, 3)
    assert m["recall"] == pytest.approx(0.5)
    assert m["area_reduction"] == pytest.approx(1 - 1400 / 10000)
    assert any("Only the analysed area's size" in line for line in m["log"])


def test_missing_valid_area_is_an_error():
    with pytest.raises(LodestarError, match="analysed area"):
        evaluate_localization(prospectivity(), deposits())


def test_ranks_from_score_when_no_rank_field():
    frame = prospectivity().drop(columns=["rank"])
    m = evaluate_localization(frame, deposits(), valid_mask=MASK, grid=GRID)
    assert m["auc"] == pytest.approx(AUC_POLYGONS)


def test_no_prospectivity_finds_nothing():
    """An empty result is scored as finding nothing, not as an area reduction of 1.0 with a chance AUC."""
    empty = gpd.GeoDataFrame({"rank": []}, geometry=gpd.GeoSeries([], crs=UTM))
    m = evaluate_localization(empty, deposits(), valid_mask=MASK, grid=GRID)
    assert m["recall"] == 0.0 and m["found"] == 0 and m["auc"] == 0.0
    assert m["area_reduction"] is None and any("Nothing was selected" in line for line in m["log"])
    assert m["capture"] == {0.02: 0.0, 0.05: 0.0, 0.10: 0.0, 0.20: 0.0}
    none = deposits().iloc[:0]
    m = evaluate_localization(prospectivity(), none, valid_mask=MASK, grid=GRID)
    assert m["recall"] is None and m["auc"] is None and m["area_reduction"] == pytest.approx(1 - 1200 / 9000)


def test_prospectivity_raster(tmp_path):
    values = np.zeros((10, 10), dtype="float32")
    values[8:10, 0:2] = 3  # rank 1 cells
    values[3:5, 5:8] = 2  # rank 2 cells (y 50..70, x 50..80)
    values[8:10, 8:10] = 1
    values[:, 9] = -9999
    path = tmp_path / "prospectivity.tif"
    with rasterio.open(path, "w", driver="GTiff", width=10, height=10, count=1, dtype="float32", crs=UTM,
                       transform=TRANSFORM, nodata=-9999) as ds:
        ds.write(values, 1)
    m = evaluate_localization(path, deposits())
    # P2 (20,5) lies in an unselected cell of the raster: found P1 (level 1) and P3 (level 2)
    assert (m["inside"], m["outside"], m["found"]) == (4, 2, 2)
    assert m["recall"] == pytest.approx(0.5)
    assert m["selected_area"] == pytest.approx(1200)
    assert [c["value"] for c in m["curve"][1:]] == [3.0, 2.0, 1.0]
    assert [c["deposit_share"] for c in m["curve"]] == pytest.approx([0, 0.25, 0.5, 0.5])
    expected = (2 / 45) * 0.125 + (1 / 15) * 0.375 + (1 / 45) * 0.5 + (13 / 15) * 0.75
    assert m["auc"] == pytest.approx(expected)
    smaller = MASK.copy()
    smaller[:, 8] = False  # the valid mask removes the rank-3 cells
    m = evaluate_localization(path, deposits(), valid_mask=smaller, grid=GRID)
    assert m["valid_area"] == pytest.approx(8000) and m["selected_area"] == pytest.approx(1000)


def test_writers(tmp_path):
    m = evaluate_localization(prospectivity(), deposits(), valid_mask=MASK, grid=GRID)
    table = write_curve_csv(m, tmp_path / "curve.csv")
    rows = list(csv.DictReader(open(table, encoding="utf-8")))
    assert [r["rank"] for r in rows] == ["0", "1", "2", "3"]
    assert [float(r["deposit_share"]) for r in rows] == [0, 0.5, 0.75, 0.75]
    png = plot_success_curve(m, tmp_path / "curve.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["curve.csv", "curve.png"]  # no temporary left


# A surface on the grid above: 3 on the 4 cells x 0..20, y 0..20; 2 on the 6 cells x 50..80, y 50..70; 0 on the
# other 80 valid cells. P1 (value 3): 0 cells above, 4 tied; P3 (2): 4 above, 6 tied; P2 and P4 (0): 10
# above, 80 tied; P5, P6 outside. Area shares (above + tied / 2) / 90: 2/90, 7/90, 50/90, 50/90, so
# AUC = 1 - (109/90) / 4 = 251/360. Capture at 2 % (1.8 cells): P1 1.8/4 = 0.45; at 5 % (4.5 cells): 1 +
# 0.5/6; at 10 % (9 cells): 1 + 5/6; at 20 % (18 cells): 2 + 2 x 8/80.
def surface() -> np.ma.MaskedArray:
    values = np.zeros((10, 10))
    values[8:10, 0:2] = 3
    values[3:5, 5:8] = 2
    return np.ma.masked_array(values, mask=~MASK)


def test_surface_by_hand():
    xy = [(p.x, p.y) for p in deposits().geometry]
    m = evaluate_surface(surface(), GRID, xy)
    assert (m["deposits"], m["inside"], m["outside"]) == (6, 4, 2)
    assert m["valid_area"] == pytest.approx(9000)
    assert m["deposit_area_shares"] == pytest.approx([2 / 90, 50 / 90, 7 / 90, 50 / 90, None, None])
    assert m["auc"] == pytest.approx(251 / 360)
    assert m["capture"] == pytest.approx({0.02: 0.45, 0.05: 1 + 0.5 / 6, 0.10: 1 + 5 / 6, 0.20: 2.2})
    curve = [(c["area_share"], c["found"]) for c in m["curve"]]
    assert [c["area_share"] for c in m["curve"]] == pytest.approx([0, 4 / 90, 10 / 90, 1])
    assert [c["found"] for c in m["curve"]] == [0, 1, 2, 4]
    trapezoid = sum((x1 - x0) * (y0 + y1) / 8 for (x0, y0), (x1, y1) in zip(curve, curve[1:]))
    assert trapezoid == pytest.approx(m["auc"])  # the curve drawn is the curve scored


def test_surface_nan_is_not_area_and_ties_are_fair():
    values = surface().filled(np.nan)
    m = evaluate_surface(np.ma.masked_array(values), GRID, [(10, 10)])
    assert m["valid_area"] == pytest.approx(9000) and m["auc"] == pytest.approx(1 - 2 / 90)
    flat = evaluate_surface(np.ma.masked_array(np.ones((10, 10)), mask=~MASK), GRID, [(10, 10), (60, 60)])
    assert flat["auc"] == pytest.approx(0.5) and flat["capture"][0.10] == pytest.approx(0.2)  # chance, no better
    with pytest.raises(LodestarError, match="no valid cells"):
        evaluate_surface(np.ma.masked_all((10, 10)), GRID, [(10, 10)])


def test_rank_positions_and_capture():
    above, tied = rank_positions(np.array([1.0, 2.0, 2.0, 3.0]), np.array([3.0, 2.0]))
    assert list(above) == [0.0, 0.25] and list(tied) == [0.25, 0.5]
    assert score_positions(above, tied, shares=(0.25, 0.5)) == {"auc": 1 - (0.125 + 0.5) / 2,
                                                                "capture": {0.25: 1.0, 0.5: 1.5}}
    assert score_positions([], [])["auc"] is None


def test_surface_curve_writers(tmp_path):
    m = evaluate_surface(surface(), GRID, [(p.x, p.y) for p in deposits().geometry])
    rows = list(csv.DictReader(open(write_curve_csv(m, tmp_path / "s.csv"), encoding="utf-8")))
    assert [float(r["found"]) for r in rows] == [0, 1, 2, 4]
    png = plot_success_curve(m, tmp_path / "s.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_classification_metrics_by_hand():
    truths = ["A", "A", "A", "B", "B", "B", "B", "A"]
    predictions = ["A", "A", "B", "B", "B", "A", "Failed", "A"]
    m = classification_metrics(truths, predictions, positive="A")
    assert m["accuracy"] == pytest.approx(5 / 8)
    assert (m["tp"], m["tn"], m["fp"], m["fn"]) == (3, 2, 2, 1)  # "Failed" on a B case counts as answering A
    assert m["pos_f1"] == pytest.approx(6 / 9)
    assert m["f1"]["B"] == pytest.approx(4 / 7)
    assert m["macro_f1"] == pytest.approx((6 / 9 + 4 / 7) / 2)
    assert m["mcc"] == pytest.approx(4 / np.sqrt(240))
    assert m["invalid"] == 1
    assert m["confusion"] == {"A": {"A": 3, "B": 1}, "B": {"B": 2, "A": 1, "Failed": 1}}


@pytest.mark.parametrize("truths, predictions, labels", [
    (["A"] * 10 + ["B"] * 10, ["A"] * 8 + ["B", "Failed"] + ["B"] * 7 + ["A", "A", "Failed"], ["A", "B"]),
    (["A"] * 2 + ["B"] * 7, ["A", "B"] + ["B"] * 6 + ["A"], ["A", "B"]),  # few positives: some resamples have none
    (list("AABBCCCA"), list("ABBCCAXA"), ["A", "B", "C"]),  # three choices, one answer outside them
])
def test_every_resample_is_scored_as_classification_metrics_scores_it(truths, predictions, labels):
    picks = np.random.default_rng(3).integers(0, len(truths), size=(400, len(truths)))
    scores = resampled_scores(truths, predictions, picks, "A", labels)
    by_hand = [classification_metrics([truths[i] for i in row], [predictions[i] for i in row], "A", labels)
               for row in picks]
    for key in ("macro_f1", "mcc"):
        assert scores[key] == pytest.approx([m[key] for m in by_hand])
    if truths.count("A") == 2:
        assert any(m["tp"] + m["fn"] == 0 for m in by_hand)  # the edge where a choice is absent is met


def test_answer_intervals_are_the_percentiles_of_the_resampled_scores():
    truths = ["A"] * 10 + ["B"] * 10
    predictions = ["A"] * 8 + ["B", "Failed"] + ["B"] * 7 + ["A", "A", "Failed"]
    intervals = answer_intervals(truths, predictions, positive="A", labels=["A", "B"], draws=300, seed=7)
    picks = np.random.default_rng(7).integers(0, 20, size=(300, 20))
    scores = resampled_scores(truths, predictions, picks, "A", ["A", "B"])
    for key in ("macro_f1", "mcc"):
        assert intervals[key] == pytest.approx(tuple(np.percentile(scores[key], [2.5, 97.5])))
    point = classification_metrics(truths, predictions, "A", ["A", "B"])
    assert intervals["macro_f1"][0] < point["macro_f1"] < intervals["macro_f1"][1] < 1.0
    assert intervals["mcc"][0] < point["mcc"] < intervals["mcc"][1]
    assert answer_intervals(["A", "B"] * 5, ["A", "B"] * 5, "A", ["A", "B"]) == {"macro_f1": (1.0, 1.0),
                                                                                   "mcc": (1.0, 1.0)}


def test_answer_intervals_of_a_large_batch_are_scored_in_parts():
    truths = ["A", "B"] * 150_000  # 300,000 cases: 6 resamples at a time, and MCC's product beyond int64
    intervals = answer_intervals(truths, truths, "A", ["A", "B"], draws=20)
    assert intervals == {"macro_f1": (1.0, 1.0), "mcc": (1.0, 1.0)}


def test_classification_degenerate_cases():
    m = classification_metrics(["A", "A"], ["A", "A"])
    assert m["mcc"] == 0.0 and m["pos_f1"] == 1.0 and m["macro_f1"] == 1.0 and m["accuracy"] == 1.0
    m = classification_metrics(["A", "A"], ["A", "A"], labels=["A", "B"])
    assert m["macro_f1"] == 0.5
    m = classification_metrics(["B", "B"], ["B", "B"])
    assert m["pos_f1"] == 0.0 and m["mcc"] == 0.0 and m["f1"]["B"] == 1.0
    with pytest.raises(LodestarError, match="2 ground-truth answers but 1"):
        classification_metrics(["A", "B"], ["A"])
    with pytest.raises(LodestarError, match="No answers"):
        classification_metrics([], [])


def test_prospectivity_raster_with_a_valid_mask_in_another_crs(tmp_path):
    """The valid mask's grid is in a CRS whose false easting is 1000 m larger: the same ground, other numbers."""
    values = np.zeros((10, 10), dtype="float32")
    values[8:10, 0:2] = 3
    values[3:5, 5:8] = 2
    values[8:10, 8:10] = 1
    path = tmp_path / "prospectivity.tif"
    with rasterio.open(path, "w", driver="GTiff", width=10, height=10, count=1, dtype="float32", crs=UTM,
                       transform=TRANSFORM, nodata=-9999) as ds:
        ds.write(values, 1)
    shifted = CRS.from_proj4("+proj=tmerc +lon_0=15 +k=0.9996 +x_0=501000 +datum=WGS84 +units=m +no_defs")
    grid = RasterGrid(Affine(10, 0, 1000, 0, -10, 100), 10, 10, shifted)
    mask = np.ones((10, 10), dtype=bool)
    mask[:, 8:] = False  # x 80..100 on the ground: the rank-3 cells are left out
    m = evaluate_localization(path, deposits(), valid_mask=mask, grid=grid)
    assert m["valid_area"] == pytest.approx(8000) and m["selected_area"] == pytest.approx(1000)


def test_map_deposits_are_read_like_the_evaluated_ones(tmp_path):
    """The run's map draws the deposits the evaluation counts: multi-points split, reprojected."""
    from shapely.geometry import MultiPoint

    from lodestar.plugin.runs.run import _deposit_points

    frame = gpd.GeoDataFrame({"name": ["pair", "one"]}, geometry=[MultiPoint([(10, 10), (60, 60)]), Point(30, 90)],
                             crs=UTM)
    frame.to_crs("EPSG:4326").to_file(tmp_path / "d.geojson", driver="GeoJSON")
    points = _deposit_points(tmp_path / "d.geojson", GRID)
    assert np.allclose(points, [(10, 10), (60, 60), (30, 90)], atol=1e-3)
    with pytest.raises(LodestarError, match="does not exist"):  # refused before a run starts, not drawn as none
        _deposit_points(tmp_path / "missing.gpkg", GRID)


def test_deposits_from_a_csv_table_of_coordinates(tmp_path):
    """A CSV of deposits (longitude / latitude, or x / y in the analysis CRS) gives its points; before, it gave none
    and a run was validated against 0 deposits without a word. A table without locations, a layer with no deposit,
    metres in longitude / latitude columns, or degrees in x / y columns for a calibration, are refused before a run
    starts."""
    from lodestar.plugin.evaluation import deposit_points
    from lodestar.plugin.runs.run import _deposit_points

    lonlat = gpd.GeoSeries([Point(10, 10), Point(60, 60)], crs=UTM).to_crs("EPSG:4326")
    (tmp_path / "lonlat.csv").write_text("name,Longitude,Latitude\n"
                                         f"a,{lonlat[0].x!r},{lonlat[0].y!r}\nb,{lonlat[1].x!r},{lonlat[1].y!r}\n"
                                         "c,,\n", encoding="utf-8")
    log = []
    points = deposit_points(tmp_path / "lonlat.csv", GRID.crs, log)
    assert np.allclose([(p.x, p.y) for p in points], [(10, 10), (60, 60)], atol=1e-3)
    assert log == ["1 row of 3 without numbers in Longitude and Latitude left out.",
                   "Points read from the columns Longitude and Latitude (longitude and latitude, EPSG:4326)."]
    europe = "\n".join(f"{i};{p.x:.9f};{p.y:.9f}".replace(".", ",") for i, p in enumerate(lonlat))  # decimal commas
    (tmp_path / "europe.csv").write_text("ID;LONG_DD;LAT_DD\n" + europe + "\n", encoding="utf-8-sig")
    assert np.allclose(_deposit_points(tmp_path / "europe.csv", GRID), [(10, 10), (60, 60)], atol=1e-3)
    (tmp_path / "named.csv").write_text("long_name,Latitude,Longitude\n"
                                        f"Alpha mine,{lonlat[0].y!r},{lonlat[0].x!r}\n", encoding="utf-8")
    assert np.allclose(_deposit_points(tmp_path / "named.csv", GRID), [(10, 10)], atol=1e-3)   # not long_name
    (tmp_path / "xy.csv").write_text("id,POINT_X,POINT_Y\n1,30,90\n", encoding="utf-8")
    assert np.allclose(_deposit_points(tmp_path / "xy.csv", GRID), [(30, 90)])       # no CRS: the analysis CRS
    (tmp_path / "degrees.csv").write_text("id,x,y\n1,117.5,-27.0\n", encoding="utf-8")  # degrees as metres
    assert np.allclose(_deposit_points(tmp_path / "degrees.csv", GRID), [(117.5, -27.0)])  # for a validation, which
    # names it as left out (issue 46); a calibration, which needs deposits inside, refuses it before a run starts
    with pytest.raises(LodestarError, match="Calibration needs at least 2 known deposits within the analysed extent "
                                            r"\(0, 0, 100, 100\), and 0 of the 1 in .*degrees.csv lie there"):
        _deposit_points(tmp_path / "degrees.csv", GRID, "wofe")
    (tmp_path / "metres.csv").write_text("id,lon,lat\n1,450000,7000000\n", encoding="utf-8")
    with pytest.raises(LodestarError, match="beyond longitude .* name the columns x and y"):
        _deposit_points(tmp_path / "metres.csv", GRID)
    (tmp_path / "names.csv").write_text("name,district\nAlpha,North\n", encoding="utf-8")
    with pytest.raises(LodestarError, match=r"none of its columns \(name, district\) is read as coordinates"):
        _deposit_points(tmp_path / "names.csv", GRID)
    gpd.GeoDataFrame({"name": []}, geometry=[], crs=UTM).to_file(tmp_path / "none.gpkg", driver="GPKG")
    with pytest.raises(LodestarError, match="hold no points"):
        _deposit_points(tmp_path / "none.gpkg", GRID)


def test_deposits_given_as_shapes_or_copies_are_points_once_and_said(tmp_path):
    """Deposits drawn as polygons (mine outlines) or lines (a vein's trace) are each taken at one point inside the
    shape, and 50 copies of one point are one deposit: each said in one warning line naming the count (before: shapes
    reduced without a word, and copies counted as that many deposits, recall and capture with them)."""
    from shapely.geometry import LineString, Polygon

    from lodestar.plugin.evaluation import deposit_coordinates
    from lodestar.plugin.runs.run import _deposit_points

    horseshoe = Polygon([(0, 0), (30, 0), (30, 30), (20, 30), (20, 10), (10, 10), (10, 30), (0, 30)])
    vein, pit = LineString([(50, 50), (70, 50)]), box(80, 80, 90, 90)
    shapes = gpd.GeoDataFrame({"name": ["pit", "vein", "shaft", "pit 2"]},
                              geometry=[horseshoe, vein, Point(60, 80), pit], crs=UTM)
    shapes.to_file(tmp_path / "shapes.gpkg", driver="GPKG")
    log = []
    xy = deposit_coordinates(tmp_path / "shapes.gpkg", UTM, log)
    assert len(xy) == 4 and horseshoe.covers(Point(xy[0])) and not horseshoe.covers(horseshoe.centroid)
    assert vein.distance(Point(xy[1])) < 1e-9 and tuple(xy[2]) == (60, 80) and pit.covers(Point(xy[3]))
    assert log == ["Warning: 2 polygons and 1 line of the 4 known deposits are not points: each is taken at one point "
                   "inside it (its representative point); give the deposits as a point layer to place them yourself."]
    copies = gpd.GeoDataFrame({"name": [f"copy {k}" for k in range(50)] + ["other"]},
                              geometry=[Point(10, 10)] * 50 + [Point(60, 60)], crs=UTM)
    copies.to_file(tmp_path / "copies.shp")
    log = []
    assert deposit_coordinates(tmp_path / "copies.shp", UTM, log).tolist() == [[10, 10], [60, 60]]
    assert log == ["Warning: 49 of the 51 known deposits repeat another's coordinates: each place is counted once (2 "
                   "deposits); remove the copies from the layer if this is not meant."]
    metrics = evaluate_localization(prospectivity(), tmp_path / "copies.shp", valid_mask=MASK, grid=GRID)
    assert (metrics["deposits"], metrics["found"], metrics["recall"]) == (2, 2, 1.0)  # not 51 found of 51
    assert metrics["log"] == log
    notes = []  # a run's notes carry the warnings
    assert _deposit_points(tmp_path / "copies.shp", GRID, notes=notes) == [(10.0, 10.0), (60.0, 60.0)]
    assert notes == log
