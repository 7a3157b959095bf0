"""Each target judged on its own evidence: the executor's measurements in and around it, the verifier's rules, and a
model's judgement held to the measurements."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from lodestar.plugin.favourability.evidence import EvidenceSpec
from lodestar.plugin.judge.target_evidence import SUPPORT_RANK, checked, judge, measure_targets

MODEL = {"evidence": [
    {"id": "shear_corridor", "level": "critical", "roles": ["structure"], "what": "a shear zone"},
    {"id": "alteration_on_shear", "level": "critical", "roles": ["geochemistry"], "what": "a gold anomaly"},
    {"id": "competent_host", "level": "secondary", "roles": ["geological_map"], "what": "greenstone"},
]}


def _spec(layer, role):
    return EvidenceSpec(layer, role, "index", "percentile_rank", "identity", {}, 1.0, "")


def _case():
    """Two targets on a 30 x 30 grid: target 1 (rows 5-9, cols 5-9) where faults and gold stand out; target 2
    (rows 20-24, cols 20-24) where only the faults do. The geology favours neither."""
    rng = np.random.default_rng(3)
    faults = rng.uniform(0, 0.4, (30, 30))
    gold = rng.uniform(0, 0.4, (30, 30))
    geology = rng.uniform(0, 1, (30, 30))
    faults[5:10, 5:10] = 0.9
    faults[20:25, 20:25] = 0.95
    gold[5:10, 5:10] = 0.8
    labels = np.zeros((30, 30), dtype=np.int32)
    labels[5:10, 5:10] = 1
    labels[20:25, 20:25] = 2
    maps = {"faults": np.ma.masked_array(faults), "gold": np.ma.masked_array(gold),
            "geology": np.ma.masked_array(geology)}
    specs = [_spec("faults", "structure"), _spec("gold", "geochemistry"), _spec("geology", "geological_map")]
    return SimpleNamespace(deposit_model=MODEL), maps, specs, labels


def test_every_item_gets_a_status_with_the_measured_value_against_the_background():
    ws, maps, specs, labels = _case()
    measured = measure_targets(ws, maps, specs, labels, [1, 2])
    first, second = (judge(m) for m in measured)
    status = {i["id"]: i["status"] for i in first["items"]}
    assert status == {"shear_corridor": "supported", "alteration_on_shear": "supported", "competent_host": "absent"}
    assert first["verdict"] == "moderate"
    assert measured[0]["layers"]["gold"]["inside"] == pytest.approx(0.8)
    assert measured[0]["layers"]["gold"]["rank"] >= SUPPORT_RANK
    gold = next(i for i in first["items"] if i["id"] == "alteration_on_shear")
    assert gold["layer"] == "gold" and gold["evidence"].startswith("gold: membership 0.80 inside")
    assert "across the district" in gold["evidence"]
    assert second["verdict"] == "weak" and "not here: alteration on shear" in second["why"]


def test_the_verdict_changes_when_a_critical_layer_is_blanked_over_that_target_only():
    ws, maps, specs, labels = _case()
    before = [judge(m) for m in measure_targets(ws, maps, specs, labels, [1, 2])]
    blanked = dict(maps)
    gold = np.ma.masked_array(maps["gold"].data.copy(), mask=np.zeros((30, 30), dtype=bool))
    gold.mask[5:10, 5:10] = True  # no data over target 1, and nowhere else
    blanked["gold"] = gold
    after = [judge(m) for m in measure_targets(ws, blanked, specs, labels, [1, 2])]
    item = next(i for i in after[0]["items"] if i["id"] == "alteration_on_shear")
    assert item["status"] == "untestable" and item["evidence"] == "its layers have no data over this target"
    assert before[0]["verdict"] == "moderate" and after[0]["verdict"] != before[0]["verdict"]
    assert "cannot be tested: alteration on shear" in after[0]["why"]
    # target 2 is judged as before (its figures move a little: the district's background lost 25 cells)
    assert [(i["id"], i["status"]) for i in after[1]["items"]] == [(i["id"], i["status"]) for i in before[1]["items"]]
    assert after[1]["verdict"] == before[1]["verdict"] == "weak"


def test_an_item_no_layer_can_test_is_untestable_and_holds_the_verdict_at_weak():
    ws, maps, specs, labels = _case()
    del maps["gold"]
    maps["geology"] = np.ma.masked_array(np.where(labels == 1, 1.0, 0.2))
    result = judge(measure_targets(ws, maps, specs[::2], labels, [1])[0])
    status = {i["id"]: i["status"] for i in result["items"]}
    assert status["alteration_on_shear"] == "untestable"
    assert next(i for i in result["items"] if i["id"] == "alteration_on_shear")["evidence"] == (
        "no layer of its roles enters the surface")
    assert result["verdict"] == "weak"  # a critical item untested: no better than weak, as for the answer
    maps["gold"] = np.ma.masked_array(np.where(labels == 1, 0.9, 0.1))
    assert judge(measure_targets(ws, maps, specs, labels, [1])[0])["verdict"] == "strong"


def test_a_model_judgement_is_held_to_the_measurements():
    ws, maps, specs, labels = _case()
    measured = measure_targets(ws, maps, specs, labels, [2])[0]
    answer = {"items": [{"id": "shear_corridor", "status": "supported", "evidence": "faults stand out"},
                        {"id": "alteration_on_shear", "status": "supported", "evidence": "I think so"},
                        {"id": "competent_host", "status": "maybe", "evidence": ""}],
              "verdict": "strong", "why": "strong: all there."}
    held = checked(measured, answer)
    status = {i["id"]: i["status"] for i in held["items"]}
    # the model may call a testable item supported; an unknown status falls back to the rule's
    assert status == {"shear_corridor": "supported", "alteration_on_shear": "supported", "competent_host": "absent"}
    assert held["verdict"] == "moderate" and held["why"].startswith("moderate:")  # the rule's verdict for them
    del maps["gold"]
    blind = measure_targets(ws, maps, specs, labels, [2])[0]
    assert {i["id"]: i["status"] for i in checked(blind, answer)["items"]}["alteration_on_shear"] == "untestable"
