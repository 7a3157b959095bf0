"""The prospectivity-mapping steps as Processing algorithms (fuzzy membership, fuzzy overlay, weights of evidence,
response, train, predict, delineate, prediction-area) on the bundled sample case, each checked against the core
function's result or a computation by hand from the files read back."""
from __future__ import annotations

import csv
import pickle
import shutil
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from mpm_sample import ALOH, DEPOSITS, GEOLOGY, PROPYLITIC, planted_deposits, sample_set
from scipy.stats import chi2, rankdata


def read(path) -> np.ma.MaskedArray:
    with rasterio.open(path) as ds:
        return ds.read(1, masked=True).astype("float64")


def table(path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def deposit_cells(grid, valid):
    from lodestar.plugin.evaluation import cells_of, deposit_coordinates

    rows, cols, inside = cells_of(deposit_coordinates(gpd.read_file(DEPOSITS), grid.crs, []), grid, valid)
    return rows[inside], cols[inside]


def test_fuzzy_membership_is_the_core_membership_and_the_formulas_by_hand(run, tmp_path):
    from lodestar.plugin.favourability.evidence import EvidenceSpec, membership_map

    large = run("lodestar:fuzzy_membership", {"INPUT": ALOH, "MEMBERSHIP": 0, "MIDPOINT": 1.0, "SPREAD": 12.0,
                                              "OUTPUT": str(tmp_path / "large.tif")})["OUTPUT"]
    core = membership_map(sample_set(ALOH), EvidenceSpec("aloh", "other", "index", "none", "large",
                                                         {"midpoint": 1.0, "spread": 12.0}))
    mine, aloh = read(large), read(ALOH)
    assert np.array_equal(mine.mask, core.mask) and np.array_equal(mine.mask, aloh.mask)
    assert np.allclose(mine.compressed(), core.compressed())
    assert np.allclose(mine.compressed(), 1.0 / (1.0 + (aloh.compressed() / 1.0) ** -12.0), atol=1e-6)
    linear = read(run("lodestar:fuzzy_membership", {"INPUT": ALOH, "MEMBERSHIP": 2, "LOW": 0.9, "HIGH": 1.2,
                                                    "OUTPUT": str(tmp_path / "linear.tif")})["OUTPUT"])
    assert np.allclose(linear.compressed(), np.clip((aloh.compressed() - 0.9) / 0.3, 0, 1), atol=1e-6)
    units = read(run("lodestar:fuzzy_membership", {"INPUT": GEOLOGY, "MEMBERSHIP": 4, "UNITS": "porphyry",
                                                   "OUTSIDE": 0.2, "OUTPUT": str(tmp_path / "units.tif")})["OUTPUT"])
    codes = read(GEOLOGY)
    assert np.array_equal(units.mask, codes.mask)
    assert np.allclose(units.compressed(), np.where(codes.compressed() == 5, 1.0, 0.2))  # 5: quartz monzonite porphyry


def test_fuzzy_membership_says_what_a_membership_lacks(run, tmp_path):
    from qgis.core import QgsProcessingException

    with pytest.raises(QgsProcessingException, match="fuzzy large membership needs MIDPOINT"):
        run("lodestar:fuzzy_membership", {"INPUT": ALOH, "MEMBERSHIP": 0, "OUTPUT": str(tmp_path / "m.tif")})
    with pytest.raises(QgsProcessingException, match="None of the favourable units granite"):
        run("lodestar:fuzzy_membership", {"INPUT": GEOLOGY, "MEMBERSHIP": 4, "UNITS": "granite",
                                          "OUTPUT": str(tmp_path / "u.tif")})
    assert not (tmp_path / "m.tif").exists() and not (tmp_path / "u.tif").exists()


@pytest.mark.parametrize("method, gamma", [(0, None), (1, 0.7), (2, None), (4, None)])
def test_fuzzy_overlay_by_hand(run, tmp_path, method, gamma):
    m1 = run("lodestar:fuzzy_membership", {"INPUT": ALOH, "MEMBERSHIP": 0, "MIDPOINT": 1.0, "SPREAD": 12.0,
                                           "OUTPUT": str(tmp_path / "m1.tif")})["OUTPUT"]
    m2 = run("lodestar:fuzzy_membership", {"INPUT": ALOH, "MEMBERSHIP": 2, "LOW": 0.9, "HIGH": 1.2,
                                           "OUTPUT": str(tmp_path / "m2.tif")})["OUTPUT"]
    params = {"INPUT": [m1, m2], "WEIGHTS": "1, 3", "METHOD": method, "OUTPUT": str(tmp_path / "fav.tif")}
    if gamma is not None:
        params["GAMMA"] = gamma
    out = read(run("lodestar:fuzzy_overlay", params)["OUTPUT"])
    a, b = read(m1).compressed(), read(m2).compressed()
    wa, wb = 0.5, 1.5  # weights 1 and 3 scaled to a mean of 1
    product, fuzzy_sum = a ** wa * b ** wb, 1 - (1 - a) ** wa * (1 - b) ** wb
    expected = {0: (a + 3 * b) / 4, 1: fuzzy_sum ** 0.7 * product ** 0.3, 2: np.minimum(a, b), 4: product}[method]
    assert np.allclose(out.compressed(), expected, atol=1e-6)


def test_fuzzy_overlay_wants_one_weight_per_layer(run, tmp_path):
    from qgis.core import QgsProcessingException

    with pytest.raises(QgsProcessingException, match="one weight per membership raster: 2 rasters, 3 weights"):
        run("lodestar:fuzzy_overlay", {"INPUT": [ALOH, PROPYLITIC], "WEIGHTS": "1,2,3",
                                       "OUTPUT": str(tmp_path / "f.tif")})


def wofe_run(run, tmp_path, algorithm, **extra):
    return run(f"lodestar:{algorithm}", {"INPUT": [ALOH, GEOLOGY], "DEPOSITS": DEPOSITS, "WEIGHING": 0,
                                         "LAYER_WEIGHING": "geology=unique", "THRESHOLDS": "aloh=1.0", **extra})


def test_weights_of_evidence_table_and_classes_by_hand(run, tmp_path):
    from lodestar.plugin.favourability.wofe import weights

    result = wofe_run(run, tmp_path, "weights_of_evidence", OUTPUT_TABLE=str(tmp_path / "w.csv"),
                      OUTPUT_CLASSES=str(tmp_path / "classes.tif"))
    assert result["DEPOSITS_USED"] == 1
    rows = table(result["OUTPUT_TABLE"])
    rasters = sample_set(ALOH, GEOLOGY)
    aloh, geology = rasters.read("aloh")[0], rasters.read("geology")[0]
    valid = ~np.ma.getmaskarray(aloh) | ~np.ma.getmaskarray(geology)
    cell_units = rasters.grid.pixel_area / 1e6
    r, c = deposit_cells(rasters.grid, valid)
    chosen = [row for row in rows if row["layer"] == "aloh" and row["generalised"] == "True"]
    assert len(chosen) == 1 and chosen[0]["weighing"] == "cumulative descending"
    edge = float(chosen[0]["value"])
    edges = [float(row["value"]) for row in rows if row["layer"] == "aloh"]
    assert abs(edge - 1.0) == min(abs(e - 1.0) for e in edges)  # the pattern nearest the threshold set
    known = ~np.ma.getmaskarray(aloh) & valid
    inside = known & (aloh.filled(-np.inf) >= edge)
    deposits_in = float(inside[r, c].sum())
    hand = weights(inside.sum() * cell_units, deposits_in, known.sum() * cell_units, float(known[r, c].sum()))
    assert float(chosen[0]["area_units"]) == pytest.approx(inside.sum() * cell_units, rel=1e-5)
    assert float(chosen[0]["deposits"]) == deposits_in == 1
    for column, field in (("w_plus", "w_plus"), ("s_w_plus", "s_w_plus"), ("w_minus", "w_minus"), ("s_w_minus",
                          "s_w_minus"), ("contrast", "contrast"), ("studentised_contrast", "studentised")):
        assert float(chosen[0][column]) == pytest.approx(float(getattr(hand, field)[0]), rel=1e-4), column
    units = {row["class"]: row for row in rows if row["layer"] == "geology"}
    assert {row["weighing"] for row in units.values()} == {"unique"}
    porphyry = units["Tqmp Tertiary quartz monzonite porphyry"]
    assert float(porphyry["deposits"]) == 1
    assert float(porphyry["area_units"]) == pytest.approx(((geology == 5) & valid).sum() * cell_units, rel=1e-5)
    with rasterio.open(result["OUTPUT_CLASSES"]) as ds:
        assert ds.count == 2 and ds.descriptions[0].startswith("aloh: pattern >= ")
        bands = ds.read()
    assert np.array_equal(bands[0] == 2, inside) and np.array_equal(bands[0] == 1, known & ~inside)
    assert np.array_equal(bands[1] == int(porphyry["class_code"]), (geology.filled(0) == 5) & valid)


def test_wofe_response_is_the_prior_plus_the_weights_of_the_table(run, tmp_path):
    weighed = wofe_run(run, tmp_path, "weights_of_evidence", OUTPUT_TABLE=str(tmp_path / "w.csv"),
                       OUTPUT_CLASSES=str(tmp_path / "classes.tif"))
    response = wofe_run(run, tmp_path, "wofe_response", OUTPUT_POSTERIOR=str(tmp_path / "p.tif"),
                        OUTPUT_STD=str(tmp_path / "sd.tif"), OUTPUT_CONFIDENCE=str(tmp_path / "c.tif"))
    rows = table(weighed["OUTPUT_TABLE"])
    with rasterio.open(weighed["OUTPUT_CLASSES"]) as ds:
        classes = ds.read()
    valid = (classes != 0).any(axis=0)
    cell_units = sample_set(ALOH).grid.pixel_area / 1e6
    prior = np.log(1.0 / (valid.sum() * cell_units - 1.0))
    assert response["PRIOR"] == pytest.approx(1 / (1 + np.exp(-prior)))
    logit = np.full(valid.shape, prior)
    pattern = next(row for row in rows if row["layer"] == "aloh" and row["generalised"] == "True")
    logit += np.where(classes[0] == 2, float(pattern["w_plus"]), np.where(classes[0] == 1, float(pattern["w_minus"]),
                                                                          0.0))
    by_code = {int(row["class_code"]): float(row["w_plus"]) for row in rows if row["layer"] == "geology"}
    logit += np.vectorize(lambda k: by_code.get(int(k), 0.0))(classes[1])
    posterior, sd, confidence = (read(response[k]) for k in ("OUTPUT_POSTERIOR", "OUTPUT_STD", "OUTPUT_CONFIDENCE"))
    assert np.array_equal(~posterior.mask, valid)
    assert np.allclose(posterior.compressed(), (1 / (1 + np.exp(-logit)))[valid], rtol=1e-4)
    assert (sd.compressed() > 0).all()
    assert np.allclose(confidence.compressed(), posterior.compressed() / sd.compressed(), rtol=1e-4)
    assert 0 < response["CI_RATIO"] and np.isfinite(response["CI_Z"])


def test_wofe_response_counts_the_pairs_a_chi_square_by_hand_finds_dependent(run, tmp_path):
    """Deposits on the most altered ground and on scattered cells: the pairwise conditional-independence test's count
    of dependent pairs equals Pearson's chi-square worked out from the classes raster at the deposit cells, judged
    with Holm's correction over the six pairs (one of them a layer and its copy)."""
    from shapely.geometry import Point

    grid = sample_set(ALOH, PROPYLITIC, GEOLOGY).grid
    planted = gpd.read_file(planted_deposits(tmp_path))
    rng = np.random.default_rng(3)
    scattered = [Point(grid.pixel_to_map(c + 0.5, r + 0.5))
                 for r, c in zip(rng.integers(0, grid.height, 12), rng.integers(0, grid.width, 12))]
    points = tmp_path / "mixed.gpkg"
    gpd.GeoDataFrame(geometry=list(planted.geometry) + scattered, crs=planted.crs).to_file(points, driver="GPKG")
    copy = tmp_path / "propylitic_again.tif"  # the same evidence twice: a pair the test must find dependent
    shutil.copyfile(PROPYLITIC, copy)
    params = {"INPUT": [ALOH, PROPYLITIC, GEOLOGY, str(copy)], "DEPOSITS": str(points), "WEIGHING": 0,
              "LAYER_WEIGHING": "geology=categorical"}
    weighed = run("lodestar:weights_of_evidence", {**params, "OUTPUT_TABLE": str(tmp_path / "w.csv"),
                                                   "OUTPUT_CLASSES": str(tmp_path / "classes.tif")})
    response = run("lodestar:wofe_response", {**params, "OUTPUT_POSTERIOR": str(tmp_path / "p.tif"),
                                              "OUTPUT_STD": str(tmp_path / "sd.tif"),
                                              "OUTPUT_CONFIDENCE": str(tmp_path / "c.tif")})
    with rasterio.open(weighed["OUTPUT_CLASSES"]) as ds:
        classes = ds.read().astype(int)
    from lodestar.plugin.evaluation import cells_of, deposit_coordinates

    rows, cols, inside = cells_of(deposit_coordinates(gpd.read_file(points), grid.crs, []), grid,
                                  (classes != 0).any(axis=0))
    rows, cols = rows[inside], cols[inside]
    assert len(rows) == weighed["DEPOSITS_USED"]
    p_values = []
    for a in range(4):
        for b in range(a + 1, 4):
            first, second = classes[a][rows, cols], classes[b][rows, cols]
            both = (first > 0) & (second > 0)
            counts = np.zeros((first.max() + 1, second.max() + 1))
            np.add.at(counts, (first[both], second[both]), 1)
            counts = counts[counts.sum(axis=1) > 0][:, counts.sum(axis=0) > 0]
            df = (counts.shape[0] - 1) * (counts.shape[1] - 1)
            if df < 1:
                continue
            expected = np.outer(counts.sum(axis=1), counts.sum(axis=0)) / counts.sum()
            p_values.append(chi2.sf(((counts - expected) ** 2 / expected).sum(), df))
    # Holm over the pairs tested: the k-th smallest p against 0.05 / (pairs left), until one fails
    dependent = 0
    for rank, p_value in enumerate(sorted(p_values)):
        if p_value > 0.05 / (len(p_values) - rank):
            break
        dependent += 1
    assert len(p_values) == 6 and dependent >= 1 and response["CI_DEPENDENT_PAIRS"] == dependent


@pytest.mark.parametrize("method", [0, 1])
def test_train_is_the_core_calibration_and_predict_applies_its_model(run, tmp_path, method):
    from lodestar.plugin.evaluation import deposit_coordinates
    from lodestar.plugin.favourability.calibration import calibrate
    from lodestar.processing.mpm_inputs import measured_layers

    deposits = planted_deposits(tmp_path)
    trained = run("lodestar:train_prospectivity_model", {
        "INPUT": [ALOH, PROPYLITIC, GEOLOGY], "DEPOSITS": deposits, "METHOD": method, "FOLDS": 3, "SEED": 4,
        "OUTPUT_MODEL": str(tmp_path / "model.pkl"), "OUTPUT_TABLE": str(tmp_path / "comparison.csv"),
        "OUTPUT": str(tmp_path / "fav.tif"), "OUTPUT_CV": str(tmp_path / "cv.tif")})
    rasters = sample_set(ALOH, PROPYLITIC, GEOLOGY)
    layers = measured_layers(rasters, set(), derived=True)
    assert [layer.categorical for layer in layers] == [False, False, True, False]
    assert layers[3].source == layers[2].name and layers[3].units == "m"  # the distance to unit contacts
    xy = deposit_coordinates(gpd.read_file(deposits), rasters.grid.crs, [])
    # the plain baseline by hand: the mean of the two ordered inputs' ranks (mid-rank ties, 0-1), both favourable high
    total, count = np.zeros(layers[0].values.shape), np.zeros(layers[0].values.shape)
    for layer in layers[:2]:
        known = ~np.ma.getmaskarray(layer.values)
        total[known] += (rankdata(layer.values.compressed()) - 0.5) / known.sum()
        count[known] += 1
    plain = np.ma.masked_array(total / np.maximum(count, 1), mask=count == 0)
    fit = calibrate(layers, rasters.grid, xy, ("wofe", "logistic")[method], folds=3, seed=4,
                    baselines={"by hand": plain})
    assert trained["CHOSEN"] == fit.method
    rows = table(trained["OUTPUT_TABLE"])
    assert len(rows) == 2 and float(rows[0]["auc"]) == pytest.approx(fit.comparison[0]["auc"], rel=1e-5)
    assert rows[1]["surface"] == "Baseline: equal-weight mean of the ordered layers' ranks"
    assert rows[1]["basis"] == "no deposit data" and float(rows[1]["auc"]) == pytest.approx(fit.comparison[1]["auc"])
    for share in ("2", "5", "10", "20"):
        assert float(rows[0][f"capture_{share}"]) == pytest.approx(
            fit.comparison[0]["capture"][f"{float(share) / 100:g}"], rel=1e-3)
    assert trained["AUC"] == pytest.approx(fit.comparison[0]["auc"])
    assert np.allclose(read(trained["OUTPUT"]).compressed(), fit.full.compressed(), atol=1e-6)
    with rasterio.open(trained["OUTPUT_CV"]) as ds:  # the one model's out-of-fold surface, named
        assert ds.count == 1 and ds.descriptions == (rows[0]["surface"],)
        out_of_fold = ds.read(1, masked=True)
    assert np.array_equal(out_of_fold.mask, np.ma.getmaskarray(fit.cv))
    assert np.allclose(out_of_fold.compressed(), fit.cv.compressed(), atol=1e-6)
    predicted = run("lodestar:predict_prospectivity", {"INPUT": [ALOH, PROPYLITIC, GEOLOGY],
                                                       "MODEL": trained["OUTPUT_MODEL"],
                                                       "OUTPUT": str(tmp_path / "p.tif")})
    valid = ~np.ma.getmaskarray(fit.full)
    x = np.column_stack([layer.values.filled(np.nan)[valid] for layer in layers])
    score = fit.model.predict(x)
    expected = score if method == 0 else 1 / (1 + np.exp(-score))
    probability = read(predicted["OUTPUT"])
    assert np.array_equal(~probability.mask, valid)
    assert np.allclose(probability.compressed(), expected, rtol=1e-5, atol=1e-7)
    assert ((probability >= 0) & (probability <= 1)).all()
    with rasterio.open(predicted["OUTPUT"]) as ds:  # a balanced fit's probability is no deposit probability
        assert ds.descriptions[0].startswith(("posterior probability of a deposit per unit cell",
                                              "relative favourability (0-1")[method])
    shuffled = run("lodestar:predict_prospectivity", {"INPUT": [GEOLOGY, ALOH, PROPYLITIC],
                                                      "MODEL": trained["OUTPUT_MODEL"],
                                                      "OUTPUT": str(tmp_path / "q.tif")})
    again = read(shuffled["OUTPUT"])  # given in another order, read in the model's (before: read as given)
    assert np.array_equal(again.mask, probability.mask) and np.array_equal(again.compressed(),
                                                                           probability.compressed())


def test_layers_named_otherwise_are_read_in_the_order_given_with_a_warning_saying_which_as_which():
    from lodestar.processing.alg_predict_prospectivity import in_model_order

    model = ["geologia", "as_rcl", "sb_rcl"]
    assert in_model_order(["g", "a", "s"], model, model) == (["g", "a", "s"], "", "")
    layers, note, warning = in_model_order(["s", "g", "a"], ["sb_rcl", "geologia", "as_rcl"], model)
    assert layers == ["g", "a", "s"] and note.endswith("read in its order: geologia, as_rcl, sb_rcl.") and not warning
    layers, note, warning = in_model_order(["k", "a", "s"], ["k_rcl", "as_rcl", "sb_rcl"], model)
    assert layers == ["k", "a", "s"] and not note
    assert "read in the order given: k_rcl as geologia." in warning


def test_predict_refuses_a_file_that_is_not_a_lodestar_model(run, tmp_path):
    from qgis.core import QgsProcessingException

    from lodestar.plugin.favourability.model_file import load_model

    foreign = tmp_path / "foreign.pkl"
    foreign.write_bytes(pickle.dumps({"model": "anything"}))
    with pytest.raises(QgsProcessingException, match="foreign.pkl is not a valid Lodestar prospectivity model"):
        run("lodestar:predict_prospectivity", {"INPUT": [ALOH], "MODEL": str(foreign),
                                               "OUTPUT": str(tmp_path / "p.tif")})
    trained = run("lodestar:train_prospectivity_model", {
        "INPUT": [ALOH, PROPYLITIC], "DEPOSITS": planted_deposits(tmp_path), "METHOD": 0, "FOLDS": 3,
        "OUTPUT_MODEL": str(tmp_path / "model.pkl")})
    header, _ = load_model(trained["OUTPUT_MODEL"])
    assert header["method"] == "wofe" and [layer["name"] for layer in header["layers"]] == ["aloh", "propylitic"]
    assert header["out_of_fold_auc"] == pytest.approx(trained["AUC"]) and header["lodestar"]
    with pytest.raises(QgsProcessingException, match="expects 2 layers"):
        run("lodestar:predict_prospectivity", {"INPUT": [ALOH], "MODEL": trained["OUTPUT_MODEL"],
                                               "OUTPUT": str(tmp_path / "p.tif")})
    altered = tmp_path / "altered.pkl"
    data = Path(trained["OUTPUT_MODEL"]).read_bytes()
    altered.write_bytes(data[:-8] + bytes(8))
    with pytest.raises(QgsProcessingException, match="does not match its header's checksum"):
        run("lodestar:predict_prospectivity", {"INPUT": [ALOH, PROPYLITIC], "MODEL": str(altered),
                                               "OUTPUT": str(tmp_path / "p.tif")})
    assert not (tmp_path / "p.tif").exists()


def test_delineate_targets_is_the_analysis_delineation(run, tmp_path):
    from lodestar.plugin.judge.target_table import PROSPECT_COLUMNS, TARGET_COLUMNS
    from lodestar.plugin.map.target_sizes import target_sizes
    from lodestar.plugin.map.work_list import rank_targets
    from lodestar.plugin.raster_io import RasterReader

    fav = run("lodestar:fuzzy_membership", {"INPUT": ALOH, "MEMBERSHIP": 0, "MIDPOINT": 1.0, "SPREAD": 12.0,
                                            "OUTPUT": str(tmp_path / "fav.tif")})["OUTPUT"]
    result = run("lodestar:delineate_targets", {"INPUT": fav, "AREA_SHARE": 0.05, "MAX_TARGET_KM2": 0.5,
                                                "DEPOSITS": DEPOSITS, "OUTPUT": str(tmp_path / "targets.gpkg")})
    mine = gpd.read_file(result["OUTPUT"])
    reader = RasterReader(fav)
    values = reader.read(bands=[1])[0]
    xy = [tuple(p) for p in gpd.read_file(DEPOSITS).to_crs(reader.grid.crs.to_wkt()).geometry.map(
        lambda g: (g.x, g.y))]
    sizes = target_sizes({}, reader.grid.pixel_area, 0.05 * values.count() * reader.grid.pixel_area, max_km2=0.5)
    core = rank_targets(values, reader.grid, reader.grid.crs, 0.05, sizes=sizes, deposit_xy=xy).targets
    assert result["TARGETS"] == len(mine) == len(core) > 1 and "OUTPUT_PROSPECTS" not in result
    assert list(mine["rank"]) == list(range(1, len(mine) + 1))
    assert [c for c in mine.columns if c != "geometry"] == list(TARGET_COLUMNS)  # the analysis's fields
    assert np.allclose(mine["area_km2"], core["area_km2"]) and (mine["area_km2"] <= 0.5 + 1e-9).all()
    assert mine["known_deps"].sum() == 1  # the demo deposit lies in one target
    # the least size, the work list and the prospects inside each target
    nested = run("lodestar:delineate_targets", {
        "INPUT": fav, "AREA_SHARE": 0.05, "MIN_TARGET_KM2": 0.02, "MAX_TARGETS": 3, "PROSPECT_KM2": 0.05,
        "OUTPUT": str(tmp_path / "camps.shp"), "OUTPUT_PROSPECTS": str(tmp_path / "prospects.shp")})
    camps, prospects = gpd.read_file(nested["OUTPUT"]), gpd.read_file(nested["OUTPUT_PROSPECTS"])
    assert nested["TARGETS"] == len(camps) == 3 and camps["area_km2"].min() >= 0.02
    assert [c for c in prospects.columns if c != "geometry"] == list(PROSPECT_COLUMNS)
    assert len(prospects) == camps["prospects"].sum() > 0 and set(prospects["camp"]) <= set(camps["rank"])
    largest = [max(getattr(g, "geoms", [g]), key=lambda part: part.area).area / 1e6 for g in prospects.geometry]
    assert max(largest) <= 0.05 + 1e-9 and prospects["area_km2"].min() >= 0.02 - 1e-9  # specks join the nearest


def test_prediction_area_curves_by_hand(run, tmp_path):
    from lodestar.plugin.evaluation import evaluate_surface
    from lodestar.plugin.raster_io import RasterReader

    units = run("lodestar:fuzzy_membership", {"INPUT": GEOLOGY, "MEMBERSHIP": 4, "UNITS": "porphyry",
                                              "OUTPUT": str(tmp_path / "units.tif")})["OUTPUT"]
    result = run("lodestar:prediction_area", {"INPUT": units, "DEPOSITS": DEPOSITS,
                                              "OUTPUT_TABLE": str(tmp_path / "pa.csv"),
                                              "OUTPUT_PLOT": str(tmp_path / "pa.png")})
    reader = RasterReader(units)
    values = reader.read(bands=[1])[0]
    xy = np.array([(g.x, g.y) for g in gpd.read_file(DEPOSITS).to_crs(reader.grid.crs.to_wkt()).geometry])
    assert result["AUC"] == pytest.approx(evaluate_surface(values, reader.grid, xy)["auc"])
    cells = values.count()
    porphyry = int((values == 1).sum())
    fpr = (porphyry - 1) / (cells - 1)  # the deposit's cell is the one porphyry cell that is not a false positive
    assert result["ROC_AUC"] == pytest.approx(1 - fpr / 2)
    assert result["PA_AREA_SHARE"] == pytest.approx(porphyry / cells) and result["PA_DEPOSIT_SHARE"] == 1
    rows = table(result["OUTPUT_TABLE"])
    assert [float(r["threshold"]) for r in rows] == [1.0, 0.0]
    assert [int(r["deposits_found"]) for r in rows] == [1, 1]
    assert float(rows[0]["false_positive_rate"]) == pytest.approx(fpr, rel=1e-5)
    assert Path(result["OUTPUT_PLOT"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_deposits_off_the_map_and_unknown_layers_are_said_and_nothing_is_written(run, tmp_path):
    from qgis.core import QgsProcessingException
    from shapely.geometry import Point

    far = tmp_path / "far.geojson"
    gpd.GeoDataFrame(geometry=[Point(10.0, 50.0)], crs="EPSG:4326").to_file(far, driver="GeoJSON")
    outputs = {"OUTPUT_TABLE": str(tmp_path / "w.csv"), "OUTPUT_CLASSES": str(tmp_path / "c.tif")}
    with pytest.raises(QgsProcessingException, match="No known deposit lies on cells with evidence"):
        run("lodestar:weights_of_evidence", {"INPUT": [ALOH], "DEPOSITS": str(far), **outputs})
    with pytest.raises(QgsProcessingException, match="Thresholds: no layer named 'silica'; layers: aloh"):
        run("lodestar:weights_of_evidence", {"INPUT": [ALOH], "DEPOSITS": DEPOSITS, "THRESHOLDS": "silica=1",
                                             **outputs})
    with pytest.raises(QgsProcessingException, match="None of the 1 known deposits lies on the surface"):
        run("lodestar:prediction_area", {"INPUT": ALOH, "DEPOSITS": str(far), "OUTPUT_TABLE": outputs["OUTPUT_TABLE"],
                                         "OUTPUT_PLOT": str(tmp_path / "p.png")})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["far.geojson"]


def test_train_takes_shapes_at_a_point_counts_copies_once_and_refuses_blocks_under_three_cells(run, tmp_path):
    """Deposits drawn as pit outlines, one outline given 20 times: the log says, in one line each, that the 14
    polygons are taken at a point inside them and the 19 copies counted once, and the model is the one fitted on the
    14 points. Blocks of 2 cells (60 m on 30 m cells) and deposits all in one cell are refused in one line each,
    before any output is written (before: all were accepted without a word)."""
    from qgis.core import QgsProcessingException, QgsProcessingFeedback

    class Captured(QgsProcessingFeedback):
        lines: list = []

        def pushInfo(self, info):  # noqa: N802 (QGIS API name)
            self.lines.append(info)

    from shapely.geometry import Point

    planted = planted_deposits(tmp_path)
    points = gpd.read_file(planted)
    outlines = gpd.GeoDataFrame(geometry=list(points.geometry.buffer(20.0)) + [points.geometry[0].buffer(20.0)] * 19,
                                crs=points.crs)
    outlines.to_file(tmp_path / "pits.gpkg", driver="GPKG")
    common = {"INPUT": [ALOH, PROPYLITIC], "METHOD": 0, "FOLDS": 3, "OUTPUT_TABLE": str(tmp_path / "cmp.csv")}
    feedback = Captured()
    pits = run("lodestar:train_prospectivity_model", {**common, "DEPOSITS": str(tmp_path / "pits.gpkg")},
               feedback=feedback)
    said = [line for line in feedback.lines if line.startswith("Warning:")]
    assert said == [
        "Warning: 33 polygons of the 33 known deposits are not points: each is taken at one point inside it (its "
        "representative point); give the deposits as a point layer to place them yourself.",
        "Warning: 19 of the 33 known deposits repeat another's coordinates: each place is counted once (14 "
        "deposits); remove the copies from the layer if this is not meant."]
    plain = run("lodestar:train_prospectivity_model", {**common, "DEPOSITS": planted,
                                                       "OUTPUT_TABLE": str(tmp_path / "plain.csv")})
    assert pits["AUC"] == pytest.approx(plain["AUC"], abs=0.02)  # a point inside each 20 m pit: the same cells
    assert [row["deposits"] for row in table(pits["OUTPUT_TABLE"])] == ["11", "11"]  # 3 lie outside the layers
    assert table(pits["OUTPUT_TABLE"])[0]["deposits"] == table(plain["OUTPUT_TABLE"])[0]["deposits"]
    one = points.geometry[0]  # a cell's centre: 14 points within a metre of it
    gpd.GeoDataFrame(geometry=[Point(one.x + k / 14.0, one.y) for k in range(14)],
                     crs=points.crs).to_file(tmp_path / "one.gpkg", driver="GPKG")
    for deposits, block, message in (
            (planted, 60, "Calibration blocks of 60 m are under 3 analysis cells of "
                                                   "30 m: a fold would be scored on cells beside its training cells; "
                                                   "give a block size of at least 90 m, or none for the default."),
            (str(tmp_path / "one.gpkg"), None, "The 14 known deposits inside the analysed area all lie in one cell "
                                               "(30 map units across): calibration needs deposits in at least 2 "
                                               "cells to learn from; give deposits spread over the area, or turn "
                                               "calibration off.")):
        out = tmp_path / f"refused-{block}"
        with pytest.raises(QgsProcessingException) as caught:
            run("lodestar:train_prospectivity_model", {**common, "DEPOSITS": deposits, "BLOCK_SIZE_M": block,
                                                       "OUTPUT_TABLE": str(out / "cmp.csv"),
                                                       "OUTPUT_MODEL": str(out / "model.pkl")})
        assert str(caught.value) == message
        assert not out.exists()
