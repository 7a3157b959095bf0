"""The independent case generator (scripts/worlds_b.py): every case valid, kinds balanced, evidence
where the generator says it is (deposits in core anomalies, decoupled anomalies a footprint apart, clay
following a unit's outline), worlds that vary in extent, CRS and nodata border, and determinism.

Checks read the written files (rasters, case.json, deposits) and compare them with the generator's
own record (`.worlds_b.json`), in ground metres."""
from __future__ import annotations

import csv
import hashlib
import itertools
import json
import os
from collections import Counter

import numpy as np
import pytest
import rasterio
import worlds_b
from pyproj import Geod, Transformer

from lodestar.plugin.raster_io import RasterSet
from lodestar.plugin.request.case import read_case
from lodestar.plugin.vector_io import read_vector

# another suite: LODESTAR_WORLDS_B_TEST_CASES=60 LODESTAR_WORLDS_B_TEST_SEED=5 pytest tests/scripts/test_worlds_b.py
COUNT = int(os.environ.get("LODESTAR_WORLDS_B_TEST_CASES", "30"))
SEED = int(os.environ.get("LODESTAR_WORLDS_B_TEST_SEED", "777"))
GEOD = Geod(ellps="WGS84")


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    out = tmp_path_factory.mktemp("worlds_b")
    folders = worlds_b.generate(out, count=COUNT, seed=SEED)
    truths = [json.loads((f / ".worlds_b.json").read_text(encoding="utf-8")) for f in folders]
    with open(out / "suite.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return out, folders, truths, rows


def _of_kind(suite, kind):
    _, folders, truths, _ = suite
    return [(f, t) for f, t in zip(folders, truths) if t["kind"] == kind]


def _pixel(path, lon, lat):
    """(dataset array (bands, rows, cols) masked, row, col) of a lon/lat point in a raster."""
    with rasterio.open(path) as ds:
        x, y = Transformer.from_crs("EPSG:4326", ds.crs, always_xy=True).transform(lon, lat)
        row, col = ds.index(x, y)
        data = ds.read(masked=True)
    return data, row, col


def _anomalous(path, lon, lat, quantile=0.97) -> bool:
    """Whether a raster is anomalous at a point: an index / grey value above the layer's `quantile`
    (3 x 3 window), or a coloured (not grey) pixel in a rendering."""
    data, row, col = _pixel(path, lon, lat)
    window = data[:, max(row - 1, 0):row + 2, max(col - 1, 0):col + 2]
    if data.shape[0] >= 3:
        rgb = window[:3].astype(float)
        return bool(((rgb.max(axis=0) - rgb.min(axis=0)) > 60).filled(False).any())
    band = data[0]
    threshold = np.quantile(band.compressed(), quantile)
    return bool((window[0] > threshold).filled(False).any())


def _valid_at(path, lon, lat) -> bool:
    data, row, col = _pixel(path, lon, lat)
    inside = 0 <= row < data.shape[1] and 0 <= col < data.shape[2]
    return inside and not bool(np.ma.getmaskarray(data)[:, row, col].all())


def _rasters(folder, truth):
    return [layer for layer in truth["layers"] if not layer["path"].endswith(".gpkg")]


def test_every_case_reads_with_the_plugin_and_matches_its_kind(suite):
    _, folders, truths, _ = suite
    ids = set()
    for folder, truth in zip(folders, truths):
        case = read_case(folder)
        ids.add(case.id)
        positive = truth["kind"] in worlds_b.POSITIVE_KINDS
        assert case.answer == ("A" if positive else "B")
        assert case.choices == {"A": "Yes", "B": "No"}
        assert case.question == worlds_b.QUESTION
        roles = [s.role for s in case.layers]
        assert "geological_map" in roles and "hydrothermal_alteration" in roles
        assert {"iron_oxide", "silicification"} & set(roles)
        assert (case.deposits is not None) == positive
        for spec in case.layers:
            if spec.is_vector:
                lines = read_vector(spec.path)
                assert len(lines) >= 1 and lines.crs is not None
                assert set(lines.geom_type) <= {"LineString", "MultiLineString"}
                continue
            with rasterio.open(spec.path) as ds:
                assert ds.crs is not None and not ds.transform.is_identity
                assert max(ds.width, ds.height) <= worlds_b.MAX_PX
                if ds.count >= 3:
                    assert ds.dtypes[0] == "uint8"
        if positive:
            points = read_vector(case.deposits, crs="EPSG:4326")
            assert len(points) == len(truth["deposits"]) >= 1
            assert set(points.geom_type) == {"Point"}
            for point, deposit in zip(points.geometry, truth["deposits"]):
                assert point.x == pytest.approx(deposit["lon"], abs=1e-5)
                assert point.y == pytest.approx(deposit["lat"], abs=1e-5)
    assert len(ids) == len(folders)
    # one whole case through the plugin's reader onto one analysis grid
    case = read_case(folders[0])
    rs = RasterSet([s for s in case.layers if not s.is_vector])
    assert rs.valid_mask().mean() > 0.5


def test_kinds_are_balanced_and_listed(suite):
    _, _, truths, rows = suite
    counts = Counter(t["kind"] for t in truths)
    assert counts["porphyry"] == (COUNT + 1) // 2
    negatives = [counts[k] for k in worlds_b.NEGATIVE_KINDS]
    assert sum(negatives) == COUNT // 2 and max(negatives) - min(negatives) <= 1
    assert [r["kind"] for r in rows] == [t["kind"] for t in truths]
    assert [r["answer"] for r in rows] == [t["answer"] for t in truths]
    # layer sets are not a give-away: negatives carry as many evidence layers as positives
    def evidence(t):
        return sum(layer["role"] in worlds_b.EVIDENCE_ROLES for layer in t["layers"])
    pos = np.mean([evidence(t) for t in truths if t["answer"] == "A"])
    neg = np.mean([evidence(t) for t in truths if t["answer"] == "B"])
    assert abs(pos - neg) < 1.0


def test_positive_deposits_lie_in_their_core_anomalies(suite):
    positives = _of_kind(suite, "porphyry")
    assert positives
    for folder, truth in positives:
        assert truth["systems"] and truth["deposits"]
        cores = [layer for layer in _rasters(folder, truth) if layer["role"] in worlds_b.CORE_ROLES]
        assert cores, truth["id"]
        for deposit in truth["deposits"]:
            lon, lat = deposit["lon"], deposit["lat"]
            # at the core of one of the systems (ground metres)
            near = min(GEOD.inv(lon, lat, *s["lonlat"])[2] / s["core_m"] for s in truth["systems"])
            assert near <= 0.35, (truth["id"], near)
            # inside the data of every raster layer, and anomalous on at least one core layer
            for layer in _rasters(folder, truth):
                assert _valid_at(folder / layer["path"], lon, lat), (truth["id"], layer["path"])
            assert any(_anomalous(folder / layer["path"], lon, lat) for layer in cores), (truth["id"], deposit)
        # a distractor in a positive lies outside every system's footprint
        for blob in truth["anomalies"]:
            for system in truth["systems"]:
                assert GEOD.inv(*blob["lonlat"], *system["lonlat"])[2] > truth["footprint_m"]


def _metres_to_faults(folder, truth, lon, lat) -> float:
    """Ground distance from a point to the case's faults, read from its structure layer when it has one."""
    layer = next((layer for layer in truth["layers"] if layer["role"] == "structure"), None)
    if layer is not None and layer["path"].endswith(".tif"):
        data, row, col = _pixel(folder / layer["path"], lon, lat)
        return float(data[0, row, col])
    if layer is not None:
        lines = read_vector(folder / layer["path"], crs=f"EPSG:{truth['epsg']}")
    else:
        from shapely.geometry import LineString
        to = Transformer.from_crs("EPSG:4326", f"EPSG:{truth['epsg']}", always_xy=True)
        lines = [LineString([to.transform(*p) for p in line]) for line in truth["faults"]]
        lines = type("Lines", (), {"geometry": lines})
    from shapely.geometry import Point
    x, y = Transformer.from_crs("EPSG:4326", f"EPSG:{truth['epsg']}", always_xy=True).transform(lon, lat)
    return min(line.distance(Point(x, y)) for line in lines.geometry) / truth["scale_k"]


def test_systems_sit_on_or_near_faults(suite):
    for folder, truth in _of_kind(suite, "porphyry"):
        for system in truth["systems"]:
            gap = _metres_to_faults(folder, truth, *system["lonlat"])
            assert gap <= max(450.0, 0.85 * system["core_m"]) + 2 * truth["style"]["pixel"], (truth["id"], gap)


def test_systems_are_sized_in_metres_whatever_the_extent(suite):
    systems = [(max(t["width_m"], t["height_m"]), s) for _, t in _of_kind(suite, "porphyry") for s in t["systems"]]
    lo, hi = worlds_b.CORE_RADIUS_M
    for _, system in systems:
        assert lo <= system["core_m"] <= hi
        assert system["core_m"] < system["shell_m"] < system["halo_m"] <= worlds_b.FOOTPRINT_M
    small = [s["core_m"] for extent, s in systems if extent < 15000]
    large = [s["core_m"] for extent, s in systems if extent > 30000]
    assert small and large
    # the same ground sizes in small and large worlds (not a share of the extent)
    assert max(small) > min(large) and max(large) > min(small)


def test_decoupled_anomalies_are_farther_apart_than_a_system_footprint(suite):
    cases = _of_kind(suite, "decoupled")
    assert cases
    for folder, truth in cases:
        assert not truth["systems"] and not truth["deposits"]
        evidence = [layer for layer in _rasters(folder, truth) if layer["role"] in worlds_b.EVIDENCE_ROLES]
        anomalies = {a["role"]: a for a in truth["anomalies"]}
        # every evidence layer has its own anomaly, and it shows in the data at the recorded place
        assert sorted(anomalies) == sorted(layer["role"] for layer in evidence)
        for layer in evidence:
            anomaly = anomalies[layer["role"]]
            assert _anomalous(folder / layer["path"], *anomaly["lonlat"]), (truth["id"], layer["path"])
        for a, b in itertools.combinations(truth["anomalies"], 2):
            # every point of one anomaly farther than a system's footprint from every point of the other
            gap = GEOD.inv(*a["lonlat"], *b["lonlat"])[2] - a["radius_m"] - b["radius_m"]
            assert gap > truth["footprint_m"] >= worlds_b.HALO_M[1], (truth["id"], a["role"], b["role"], gap)


def test_single_layer_negatives_have_one_anomalous_layer(suite):
    cases = _of_kind(suite, "single_layer")
    assert cases
    for folder, truth in cases:
        assert len(truth["anomalies"]) == 1 and not truth["systems"]
        anomaly = truth["anomalies"][0]
        layer = next(layer for layer in _rasters(folder, truth) if layer["role"] == anomaly["role"])
        lon, lat = anomaly["lonlat"]
        if anomaly["shape"] == "ring":  # the ring itself (along its long axis), not its hollow centre
            lon, lat = GEOD.fwd(lon, lat, 90.0 - anomaly["angle_deg"], 0.75 * anomaly["radius_m"])[:2]
        assert _anomalous(folder / layer["path"], lon, lat), truth["id"]


def test_lithology_clay_follows_a_unit_outline(suite):
    cases = _of_kind(suite, "lithology_clay")
    assert cases
    checked = 0
    for folder, truth in cases:
        assert not truth["systems"] and not truth["anomalies"] and truth["clay_unit"]
        case = read_case(folder)
        rs = RasterSet([s for s in case.layers if not s.is_vector])
        geology = next(s for s in case.layers if s.role == "geological_map")
        unit = (rs.read(geology.name)[0] == truth["clay_unit"]).filled(False)
        assert 0.02 < unit.mean() < 0.7
        for spec in case.layers:
            if spec.role not in worlds_b.CLAY_ROLES:
                continue
            data = rs.read(spec.name)
            valid = ~np.ma.getmaskarray(data).all(axis=0)
            if data.shape[0] >= 3:
                rgb = data[:3].filled(0)
                high = (rgb.max(axis=0) - rgb.min(axis=0)) > 60
                assert high[unit & valid].mean() > 0.3, truth["id"]
                assert high[~unit & valid].mean() < 0.1, truth["id"]
            else:
                band = data[0]
                share = unit[valid].mean()
                high = (band > np.quantile(band.compressed(), 1 - share)).filled(False)
                overlap = (high & unit).sum() / max((high | unit).sum(), 1)
                assert overlap > 0.4, (truth["id"], spec.name, overlap)
                inside, outside = band[unit & valid], band[~unit & valid]
                assert np.ma.median(inside) > np.quantile(outside.compressed(), 0.9), (truth["id"], spec.name)
            checked += 1
    assert checked >= len(cases)


def test_barren_cases_hold_backgrounds_only(suite):
    cases = _of_kind(suite, "barren")
    assert cases
    for _, truth in cases:
        assert not truth["systems"] and not truth["anomalies"] and truth["clay_unit"] is None
        assert not truth["deposits"] and truth["contrast"] == {}


def test_extents_span_5_to_60_km_and_match_the_data(suite):
    _, folders, truths, _ = suite
    extents = [max(t["width_m"], t["height_m"]) / 1000 for t in truths]
    assert min(extents) >= worlds_b.EXTENT_KM[0] and max(extents) <= worlds_b.EXTENT_KM[1]
    assert min(extents) < 8 and max(extents) > 45
    for folder, truth in zip(folders, truths):
        layer = next(layer for layer in truth["layers"] if layer["role"] == "geological_map")
        with rasterio.open(folder / layer["path"]) as ds:
            valid = ds.read_masks(1) > 0
            edge = valid & ~np.pad(valid, 1)[2:, 1:-1] | valid & ~np.pad(valid, 1)[:-2, 1:-1]
            edge |= valid & ~np.pad(valid, 1)[1:-1, 2:] | valid & ~np.pad(valid, 1)[1:-1, :-2]
            rows, cols = np.nonzero(edge)
            xs, ys = ds.transform * (cols + 0.5, rows + 0.5)
            to = Transformer.from_crs(ds.crs, f"EPSG:{truth['epsg']}", always_xy=True)
            mx, my = to.transform(xs, ys)
        width = (mx.max() - mx.min()) / truth["scale_k"]
        height = (my.max() - my.min()) / truth["scale_k"]
        tolerance = 3 * layer["pixel_m"] + 0.01 * max(truth["width_m"], truth["height_m"])
        assert abs(width - truth["width_m"]) < tolerance, (truth["id"], width, truth["width_m"])
        assert abs(height - truth["height_m"]) < tolerance, (truth["id"], height, truth["height_m"])


def test_crs_resolution_and_rendering_vary(suite):
    _, folders, truths, _ = suite
    assert len({t["epsg"] for t in truths}) >= 3
    assert {t["epsg"] for t in truths} - set(range(32601, 32761))  # a national grid or Web Mercator too
    mixed = [t for t in truths if len({layer["crs"] for layer in t["layers"]}) > 1]
    assert len(mixed) >= COUNT // 5
    assert any(len({layer["pixel_m"] for layer in t["layers"]}) > 1 for t in truths)
    pixels = [layer["pixel_m"] for t in truths for layer in t["layers"]]
    assert min(pixels) >= worlds_b.PIXEL_M[0] and max(pixels) <= worlds_b.PIXEL_M[1] * 1.01
    forms = Counter()
    for folder, truth in zip(folders, truths):
        for layer in _rasters(folder, truth):
            with rasterio.open(folder / layer["path"]) as ds:
                if ds.count >= 3:
                    forms["rgb" if layer["role"] != "false_color_composite" else "composite"] += 1
                elif ds.dtypes[0] == "float32":
                    forms["index"] += 1
                    assert ds.nodata is not None
                elif layer["role"] != "geological_map":
                    forms["grey"] += 1
    assert forms["index"] and forms["rgb"] and forms["grey"], forms
    assert any(layer["path"].endswith(".gpkg") for t in truths for layer in t["layers"])
    assert any(layer["path"] == "fault_distance.tif" for t in truths for layer in t["layers"])


def test_nodata_borders_present_and_of_varying_width(suite):
    _, folders, truths, _ = suite
    bordered = 0
    shares = []
    for folder, truth in zip(folders, truths):
        framed = False
        for layer in _rasters(folder, truth):
            with rasterio.open(folder / layer["path"]) as ds:
                valid = ds.dataset_mask() > 0
            frame = np.concatenate([valid[0], valid[-1], valid[:, 0], valid[:, -1]])
            if not frame.any():
                framed = True
            shares.append(1 - valid.mean())
        bordered += framed
    assert bordered >= COUNT // 4
    assert min(shares) < 0.02 and max(shares) > 0.4


def _digests(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())
            if p.suffix in (".json", ".tif", ".geojson", ".csv")}


def test_same_seed_same_bytes_another_seed_differs(tmp_path):
    a = worlds_b.generate(tmp_path / "a", count=5, seed=31)
    b = worlds_b.generate(tmp_path / "b", count=5, seed=31)
    c = worlds_b.generate(tmp_path / "c", count=5, seed=32)
    for fa, fb in zip(a, b):
        assert (fa / "case.json").read_bytes() == (fb / "case.json").read_bytes()
        assert _digests(fa) == _digests(fb)
        assert len([n for n in _digests(fa) if n.endswith(".tif")]) >= 3
    assert (tmp_path / "a" / "suite.csv").read_bytes() == (tmp_path / "b" / "suite.csv").read_bytes()
    assert [_digests(f) for f in a] != [_digests(f) for f in c]


def test_command_line_writes_the_cases(tmp_path):
    assert worlds_b.main([str(tmp_path / "cli"), "--count", "2", "--seed", "5"]) == 0
    assert sorted(p.name for p in (tmp_path / "cli").iterdir()) == ["case_000", "case_001", "suite.csv"]
    assert all(read_case(tmp_path / "cli" / f"case_00{i}").id == f"wb5-00{i}" for i in range(2))
