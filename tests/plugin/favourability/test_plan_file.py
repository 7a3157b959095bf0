"""The evidence plan: an edited plan (a weight, a midpoint, gamma) changes the surface as computed by hand, the fuzzy
operators, and the plan file round-tripping byte for byte."""
from __future__ import annotations

import json

import numpy as np
import pytest

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.favourability.evidence import EvidenceSpec
from lodestar.plugin.favourability.overlay import favourability_surface
from lodestar.plugin.favourability.plan_file import EvidencePlan, plan_text, read_plan, recorded_plan, write_plan

AS = np.arange(48, dtype=float).reshape(6, 8) + 1.0  # the fixture's arsenic, in ppm
DISTANCE = np.tile(np.arange(8, dtype=float) * 100.0, (6, 1))  # its fault distance, in metres


def _plan(as_weight=2.0, as_mid=20.0, fault_mid=300.0, method="weighted", gamma=0.8) -> EvidencePlan:
    return EvidencePlan([
        EvidenceSpec("As", "geochemistry", "index", "none", "large", {"midpoint": as_mid, "spread": 2.0}, as_weight),
        EvidenceSpec("fault distance", "structure", "index", "none", "small", {"midpoint": fault_mid, "spread": 3.0},
                     1.0)], method, gamma)


def _large(x, mid, spread):
    return 1.0 / (1.0 + (x / mid) ** -spread)


def _small(x, mid, spread):
    return 1.0 / (1.0 + (x / mid) ** spread)


def _surface(raster_set, plan):
    surface = favourability_surface(raster_set, plan.specs, plan.method, plan.gamma)
    return surface.values


def test_an_edited_plan_changes_the_surface_as_computed_by_hand(raster_set):
    valid = raster_set.valid_mask()
    m_as, m_fault = _large(AS, 20.0, 2.0), _small(DISTANCE, 300.0, 3.0)
    agent = _surface(raster_set, _plan())
    assert np.array_equal(np.ma.getmaskarray(agent), ~valid)
    assert np.allclose(agent[valid], ((2 * m_as + m_fault) / 3)[valid], atol=1e-6)

    weight = _surface(raster_set, _plan(as_weight=1.0))  # the geologist weighs arsenic as the faults
    assert np.allclose(weight[valid], ((m_as + m_fault) / 2)[valid], atol=1e-6)

    m_near = _small(DISTANCE, 150.0, 3.0)  # the fault-distance midpoint moved from 300 to 150 m
    midpoint = _surface(raster_set, _plan(as_weight=1.0, fault_mid=150.0))
    assert np.allclose(midpoint[valid], ((m_as + m_near) / 2)[valid], atol=1e-6)
    assert float(midpoint[0, 3]) == pytest.approx((1 / (1 + 25) + 1 / (1 + 2.0 ** 3)) / 2, abs=1e-6)  # 4 ppm, 300 m

    gamma = _surface(raster_set, _plan(as_weight=1.0, fault_mid=150.0, method="gamma", gamma=0.5))
    product, algebraic_sum = m_as * m_near, 1 - (1 - m_as) * (1 - m_near)
    assert np.allclose(gamma[valid], (algebraic_sum ** 0.5 * product ** 0.5)[valid], atol=1e-6)
    weighted_gamma = _surface(raster_set, _plan(as_weight=3.0, fault_mid=150.0, method="gamma", gamma=0.5))
    w_as, w_fault = 1.5, 0.5  # weights 3 and 1 scaled to a mean of 1: the exponents
    expected = ((1 - (1 - m_as) ** w_as * (1 - m_near) ** w_fault) ** 0.5 * (m_as ** w_as * m_near ** w_fault) ** 0.5)
    assert np.allclose(weighted_gamma[valid], expected[valid], atol=1e-6)
    for a, b in ((agent, weight), (weight, midpoint), (midpoint, gamma)):
        assert np.abs(a[valid] - b[valid]).max() > 0.01


@pytest.mark.parametrize("method", ["and", "or", "product", "sum"])
def test_the_fuzzy_operators(raster_set, method):
    valid = raster_set.valid_mask()
    m_as, m_fault = _large(AS, 20.0, 2.0), _small(DISTANCE, 300.0, 3.0)
    expected = {"and": np.minimum(m_as, m_fault), "or": np.maximum(m_as, m_fault), "product": m_as * m_fault,
                "sum": 1 - (1 - m_as) * (1 - m_fault)}[method]
    values = _surface(raster_set, _plan(as_weight=1.0, method=method))
    assert np.allclose(values[valid], expected[valid], atol=1e-6)


def test_the_plan_file_round_trips_byte_for_byte(tmp_path):
    plan = EvidencePlan(_plan(method="gamma", gamma=0.7).specs + [
        EvidenceSpec("geology", "geological_map", "categorical", "units", "identity",
                     {"units": ["LPZE", "Silty limestone"], "outside": 0.1}, 1.25, "named by the geologist")],
        "gamma", 0.7, "geologist")
    path = write_plan(plan, tmp_path / "plan.json")
    text = path.read_bytes()
    assert json.loads(text)["format"] == "lodestar-evidence-plan/1"
    again = read_plan(path)
    assert (again.method, again.gamma, again.by) == ("gamma", 0.7, "geologist")
    assert [s.to_dict() for s in again.specs] == [s.to_dict() for s in plan.specs]
    assert write_plan(again, tmp_path / "again.json").read_bytes() == text
    assert plan_text(read_plan(tmp_path / "again.json")).encode() == text
    assert again.combination_text == "fuzzy gamma (gamma 0.7)"


@pytest.mark.parametrize("change, message", [
    ({"format": "lodestar-run/1"}, "Not a Lodestar evidence plan"),
    ({"method": "median"}, "combination must be one of weighted, rank, gamma, and, or, product, sum"),
    ({"gamma": 1.5}, "gamma must lie between 0 and 1"),
    ({"specs": []}, "names no layer"),
])
def test_a_bad_plan_file_says_what_is_wrong(tmp_path, change, message):
    data = dict(_plan().to_dict(), **change)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(LodestarError, match=message):
        read_plan(path)


def test_a_plan_naming_a_layer_twice_or_none_weighted_is_refused():
    spec = _plan().specs[0]
    with pytest.raises(LodestarError, match="repeated: As"):
        EvidencePlan([spec, spec])
    with pytest.raises(LodestarError, match="positive weight"):
        EvidencePlan([EvidenceSpec("As", "geochemistry", "index", "none", weight=0.0)])
    with pytest.raises(LodestarError, match="names layers the run does not have: fault distance"):
        _plan().check_layers(["As", "geology"])


def test_the_recorded_plan_is_the_geologists_when_the_run_had_one():
    agent = {"favourability": {"specs": [s.to_dict() for s in _plan().specs]}, "parameters": {"favourability": {}}}
    assert recorded_plan(agent).by == "agent" and recorded_plan(agent).method == "weighted"  # recorded before ranks
    ranked = dict(agent, favourability=dict(agent["favourability"], knowledge_method={"method": "rank", "gamma": None}))
    assert recorded_plan(ranked).method == "rank"
    given = dict(_plan(as_weight=5.0).to_dict(), by="geologist")
    mine = recorded_plan(dict(agent, parameters={"favourability": {"evidence_plan": given}}))
    assert mine.by == "geologist" and mine.specs[0].weight == 5.0
    with pytest.raises(LodestarError, match="no evidence plan to edit"):
        recorded_plan({"favourability": {"specs": []}, "parameters": {}})
