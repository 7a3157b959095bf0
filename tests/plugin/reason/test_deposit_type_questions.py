"""A question about any deposit type is answered, never refused (issue 57): a type of the knowledge base with its
model, a type it lacks with the nearest model or the generic one, saying so, and a question naming no type with the
model the layers' elements and rocks fit, through the engine on generated worlds (scripts/deposit_worlds.py)."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import deposit_worlds
import pytest

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.reason.deposit_models import ranked_models
from lodestar.plugin.reason.knowledge import model_by_id, retrieve
from lodestar.plugin.request.case import read_case
from lodestar.plugin.request.run_choices import model_choice

SIZE = 160
WHERE = " Answer: A. Yes, there are targets worth exploring B. No, nothing stands out."


def _run(folder: Path, out: Path, replay=None):
    case = read_case(folder)
    request = AnalysisRequest(case.layers, case.question, out, dict(case.choices), case_id=case.id,
                              **({"replay": replay} if replay else {}))
    result = run_analysis(request)
    return result, json.loads(Path(result.outputs["record"]).read_text(encoding="utf-8"))


def test_the_vms_question_is_answered_with_the_vms_model(tmp_path):
    """Before, it was refused before any layer was read: 'No deposit model of the knowledge base covers volcanogenic
    massive sulphide'."""
    question = "Where are volcanogenic massive sulphide (VMS) deposits likely in this region?" + WHERE
    folder = deposit_worlds.make_world(tmp_path / "vms", model_by_id("vms_bimodal_felsic"), size=SIZE,
                                       question=question)
    result, record = _run(folder, tmp_path / "out")
    assert record["knowledge"][0]["id"] == "vms_bimodal_felsic"
    assert result.answer in ("A", "B") and not any(n.startswith("No model of the knowledge") for n in result.notes)


def test_a_type_the_base_lacks_is_answered_with_the_nearest_model_and_says_so(tmp_path):
    question = "Where are epithermal manganese deposits likely?" + WHERE
    folder = deposit_worlds.make_world(tmp_path / "mn", model_by_id("low_sulphidation_epithermal"), size=SIZE,
                                       question=question)
    result, record = _run(folder, tmp_path / "out")
    said = ("No model of the knowledge base is for manganese; the nearest is Low-sulphidation epithermal Au-Ag "
            "(shares epithermal with the question), so its evidence items are used.")
    assert record["knowledge"][0]["id"] == "low_sulphidation_epithermal"
    assert record["knowledge"][0]["stands_in"] == said and result.notes[0] == said
    assert model_choice(record)["text"].startswith(said + " Deposit model: Low-sulphidation epithermal")
    replayed, again = _run(folder, tmp_path / "replay", replay=result.outputs["record"])
    assert again["knowledge"][0]["stands_in"] == said and replayed.notes[0] == said


def test_a_type_nothing_is_near_is_answered_with_the_generic_mineral_system(tmp_path):
    question = "Where is graphite likely?" + WHERE
    folder = deposit_worlds.make_world(tmp_path / "graphite", model_by_id("sediment_hosted_copper"), size=SIZE,
                                       question=question)
    result, record = _run(folder, tmp_path / "out")
    assert record["knowledge"][0]["id"] == "generic"
    assert result.notes[0].startswith("No model of the knowledge base is for graphite, and none shares a commodity "
                                      "or deposit type the question names; the generic mineral-system model is used")
    # every geochemistry layer is evidence for it (no pathfinders): none is left out as another model's
    assert not [row for row in result.unused if "pathfinder" in row["reason"]]
    assert {"any_anomaly", "near_structure"} <= set(record["knowledge"][0]["testable"])
    replayed, _ = _run(folder, tmp_path / "replay", replay=result.outputs["record"])
    assert replayed.notes[0] == result.notes[0]


def test_where_should_we_explore_over_a_base_metal_survey_and_felsic_volcanics_follows_vms(tmp_path):
    """Before, over a VMS district the planner followed Carlin-type gold and left out Cu, Pb, Zn, Ag and Ba."""
    folder = deposit_worlds.make_world(tmp_path / "district", model_by_id("vms_bimodal_felsic"), size=SIZE,
                                       question="Where should we explore?" + WHERE,
                                       elements=["Cu", "Pb", "Zn", "Ag", "Ba"])
    legend = (folder / "geology_legend.csv").read_text(encoding="utf-8")
    assert "Rhyolite unit" in legend and "Felsic volcanic unit" in legend
    result, record = _run(folder, tmp_path / "out")
    assert record["knowledge"][0]["id"] == "vms_bimodal_felsic"
    assert not [row for row in result.unused if row["layer"].endswith(" ppm")]  # every element is evidence


@pytest.mark.parametrize("question, expected", [
    ("Where is manganese likely?", "my_manganese"),  # by its commodity: no keyword of it names manganese
    ("Where are epithermal manganese deposits likely?", "my_manganese"),
])
def test_the_users_own_models_take_part_in_the_choice(question, expected):
    mine = copy.deepcopy(model_by_id("low_sulphidation_epithermal"))
    mine.update(id="my_manganese", name="My epithermal Mn", commodities=["Mn"], source="user",
                keywords=["my epithermal"])
    roles, names = ["geological_map", "geochemistry", "structure"], ["geology", "Mn ppm", "faults"]
    ranked = ranked_models(question, roles, names, user_models=[mine])
    assert ranked[0]["id"] == expected and "stands_in" not in ranked[0]
    assert retrieve(question, roles, names=names)[0].get("stands_in")  # without it: the nearest, said so
