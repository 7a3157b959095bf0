"""The synthetic case generator: determinism, format validity, where deposits and anomalies lie,
and the committed sample case matching its generator."""
from __future__ import annotations

import hashlib
import json

import make_sample_case
import numpy as np
import pytest
import synthetic_cases

from lodestar.plugin.raster_io import RasterSet
from lodestar.plugin.request.case import read_case
from lodestar.plugin.vector_io import read_vector


def _digests(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def _hot_layers(case):
    """Per raster alteration layer on the analysis grid: boolean 'anomalous' mask (index above its
    median + 0.05, or a saturated colour pixel in a rendering)."""
    rasters = [s for s in case.layers if not s.is_vector and s.role not in ("geological_map", "geophysics",
                                                                             "structure")]
    rs = RasterSet(rasters)
    hot = {}
    for spec in rasters:
        data = rs.read(spec.name)
        if data.shape[0] == 3:
            rgb = data.filled(0)
            hot[spec.role] = (rgb.max(axis=0) - rgb.min(axis=0)) > 80
        else:
            band = data[0]
            hot[spec.role] = (band > np.ma.median(band) + 0.05).filled(False)
    return rs, hot


def test_same_seed_gives_identical_bytes_and_another_seed_differs(tmp_path):
    a = synthetic_cases.make_case(tmp_path / "a", 11, "epithermal", 120)
    b = synthetic_cases.make_case(tmp_path / "b", 11, "epithermal", 120)
    c = synthetic_cases.make_case(tmp_path / "c", 12, "epithermal", 120)
    assert _digests(a.parent) == _digests(b.parent)
    assert len(_digests(a.parent)) >= 6
    assert _digests(a.parent) != _digests(c.parent)


@pytest.mark.parametrize("kind", synthetic_cases.KINDS)
def test_every_kind_writes_a_valid_case(tmp_path, kind):
    path = synthetic_cases.make_case(tmp_path / kind, 3, kind, 130)
    case = read_case(path)
    positive = kind in synthetic_cases.POSITIVE_KINDS
    assert case.answer == ("A" if positive else "B")
    assert case.choices == {"A": "Yes", "B": "No"}
    assert "A. Yes B. No" in case.question
    roles = [s.role for s in case.layers]
    assert roles[0] == "geological_map" and {"hydrothermal_alteration", "silicification"} <= set(roles)
    assert (case.deposits is not None) == positive
    rs = RasterSet([s for s in case.layers if not s.is_vector])
    assert rs.crs.is_projected and rs.grid.width > 100
    geology = rs.read(case.layers[0].name)
    if case.layers[0].legend is not None:
        legend = case.layers[0].legend.read_text().splitlines()
        assert legend[0] == "value,name,lithology"
        assert set(np.unique(geology.compressed()).astype(int)) <= set(range(1, len(legend)))


def test_mixed_crs_layers_and_pixel_space_cases(tmp_path):
    path = synthetic_cases.make_case(tmp_path / "m", 5, "porphyry", 150, mixed_crs=True,
                                     layers=["aloh", "silica", "propylitic"], colour=set())
    case = read_case(path)
    rs = RasterSet([s for s in case.layers if not s.is_vector])
    assert any("EPSG:4326" in line for line in rs.log)
    png = read_case(synthetic_cases.make_case(tmp_path / "p", 5, "barren", 150, georeferenced=False))
    assert all(s.path.suffix == ".png" for s in png.layers) and png.deposits is None
    assert RasterSet(png.layers).crs is None


@pytest.mark.parametrize("kind,seed,hard", [("porphyry", 1, False), ("porphyry", 2, False), ("porphyry", 4, False),
                                            ("porphyry", 5, True), ("epithermal", 1, False), ("epithermal", 2, False),
                                            ("epithermal", 4, False), ("epithermal", 5, True)])
def test_deposits_lie_on_the_cross_layer_anomaly(tmp_path, kind, seed, hard):
    case = read_case(synthetic_cases.make_case(tmp_path / kind, seed, kind, 160, hard=hard))
    rs, hot = _hot_layers(case)
    deposits = read_vector(case.deposits, crs=rs.crs)
    assert 1 <= len(deposits) <= 5
    for point in deposits.geometry:
        col, row = rs.grid.map_to_pixel(point.x, point.y)
        r0, c0 = int(row), int(col)
        near = {role: mask[max(r0 - 2, 0):r0 + 3, max(c0 - 2, 0):c0 + 3].any() for role, mask in hot.items()}
        assert near["silicification"], near
        assert sum(near.values()) >= 2, near


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_misaligned_anomalies_never_coincide(tmp_path, seed):
    case = read_case(synthetic_cases.make_case(tmp_path / "n", seed, "misaligned", 160, colour=set()))
    _, hot = _hot_layers(case)
    count = sum(mask.astype(int) for mask in hot.values())
    assert sum(mask.sum() > 30 for mask in hot.values()) >= 2  # anomalies exist in several layers
    assert (count >= 2).mean() < 0.002


def test_hard_single_layer_is_a_propylitic_ring_around_a_barren_pluton(tmp_path):
    case = read_case(synthetic_cases.make_case(tmp_path / "s", 3, "single_layer", 160, colour=set(), hard=True,
                                               layers=["aloh", "silica", "propylitic"]))
    assert "geophysics" in [s.role for s in case.layers]
    legend = case.layers[0].legend.read_text()
    assert "Kgr Cretaceous granite" in legend
    _, hot = _hot_layers(case)
    assert hot["propylitic_alteration"].mean() > 0.01
    others = hot["hydrothermal_alteration"] | hot["silicification"]
    assert (others & hot["propylitic_alteration"]).sum() < 0.02 * hot["propylitic_alteration"].sum()


def test_lithology_clay_has_clay_without_silica(tmp_path):
    case = read_case(synthetic_cases.make_case(tmp_path / "c", 2, "lithology_clay", 160, colour=set(),
                                               layers=["aloh", "argillic", "silica", "propylitic"]))
    _, hot = _hot_layers(case)
    clay = hot["hydrothermal_alteration"] & hot["argillic_alteration"]
    assert clay.mean() > 0.02
    assert (clay & hot["silicification"]).sum() < 0.02 * clay.sum()


def test_suite_is_balanced_and_recorded(tmp_path):
    plan = synthetic_cases.suite_plan(60)
    assert len(plan) == 60 and sum(k in synthetic_cases.POSITIVE_KINDS for k in plan) == 30
    assert {k: plan.count(k) for k in synthetic_cases.KINDS} == {
        "porphyry": 16, "epithermal": 14, "misaligned": 8, "lithology_clay": 8, "single_layer": 8, "barren": 6}
    paths = synthetic_cases.make_suite(tmp_path / "suite", n=4, seed=7, size=120)
    rows = (tmp_path / "suite" / "suite.csv").read_text().splitlines()
    assert len(paths) == 4 and len(rows) == 5 and rows[1].startswith("syn-001,porphyry,A")
    assert [read_case(p).id for p in paths] == ["syn-001", "syn-002", "syn-003", "syn-004"]


def test_committed_sample_matches_its_generator(tmp_path):
    committed = make_sample_case.SAMPLE_DIR
    path = make_sample_case.make_sample(tmp_path / "sample")
    generated = _digests(path.parent)
    committed_files = _digests(committed)
    assert {name: committed_files.get(name) for name in generated} == generated  # GDAL may add .aux.xml there
    total = sum((committed / name).stat().st_size for name in generated)
    assert total < 2_000_000
    case = read_case(committed)
    assert case.answer == "A" and 4 <= len(case.layers) <= 6
    data = json.loads((committed / "case.json").read_text())
    assert data["id"] == "porphyry-demo-01"
