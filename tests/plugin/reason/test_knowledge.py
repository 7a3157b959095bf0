"""The deposit-model knowledge base: its content is valid and retrieval follows the question and the roles."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from lodestar.models.offline import favourable_units
from lodestar.plugin.errors import LodestarError
from lodestar.plugin.reason.knowledge import KNOWLEDGE_PATH, load_knowledge, model_by_id, retrieve, score_parts
from lodestar.plugin.reason.workspace import LayerInfo
from lodestar.plugin.roles import ROLES

MINEBENCH_ROLES = ["geological_map", "hydrothermal_alteration", "silicification", "propylitic_alteration",
                   "false_color_composite"]


def test_bundled_models_cover_the_deposit_types():
    models = load_knowledge()
    ids = [m["id"] for m in models]
    assert ids == ["porphyry_cu_mo_au", "high_sulphidation_epithermal", "low_sulphidation_epithermal",
                   "orogenic_gold", "carlin_type_gold", "skarn", "iocg", "vms_bimodal_felsic", "vms_mafic",
                   "mvt_zn_pb", "sedex_zn_pb", "magmatic_ni_cu_pge", "lct_pegmatite", "carbonatite_ree",
                   "ion_adsorption_ree", "unconformity_uranium", "sandstone_uranium", "granite_sn_w",
                   "intrusion_related_gold", "sediment_hosted_copper", "podiform_chromite", "laterite_nickel"]
    for model in models:
        levels = [item["level"] for item in model["evidence"]]
        assert "critical" in levels and "secondary" in levels
        assert all(set(item["roles"]) <= set(ROLES) for item in model["evidence"])
        assert model["alteration_zoning"] and model["spectral_signatures"] and model["structural_controls"]
        weights = model["localization"]["area_type_weights"]
        assert all(1.0 <= w <= 2.0 for w in weights.values())
        assert 3 <= model["localization"]["important_areas_count"] <= 7


@pytest.mark.parametrize("question,roles,expected", [
    ("Given the following remote-sensing images, can porphyry copper deposits be detected? A. Yes B. No",
     MINEBENCH_ROLES, "porphyry_cu_mo_au"),
    ("Can high-sulphidation epithermal Au-Ag deposits be detected here?", MINEBENCH_ROLES,
     "high_sulphidation_epithermal"),
    ("Where are Carlin-type gold deposits likely?", ["geological_map", "structure", "geochemistry"],
     "carlin_type_gold"),
    ("Is there an IOCG system with hematite breccias?", ["iron_oxide", "structure", "geophysics"], "iocg"),
    ("Could a skarn have formed at this contact?", ["geological_map", "propylitic_alteration"], "skarn"),
    ("Are there orogenic lode gold targets along the shear zones?", ["structure", "hydrothermal_alteration"],
     "orogenic_gold"),
])
def test_retrieval_by_question(question, roles, expected):
    assert retrieve(question, roles)[0]["id"] == expected


def test_generic_question_ranks_by_the_evidence_the_roles_can_test():
    ranked = retrieve("Can deposits be detected? A. Yes B. No", ["structure", "geochemistry", "geological_map"])
    # Carlin and orogenic models have every critical item testable with structure + geochemistry
    assert {ranked[0]["id"], ranked[1]["id"]} == {"carlin_type_gold", "orogenic_gold"}
    generic = retrieve("Can deposits be detected? A. Yes B. No", MINEBENCH_ROLES)
    # ties between fully testable models keep the knowledge base's order
    assert generic[0]["id"] == "porphyry_cu_mo_au"
    assert generic[0]["score"] == pytest.approx(3.0)  # 2 x critical coverage 1.0 + secondary coverage 1.0
    assert set(generic[0]["testable"]) == {"phyllic_core", "zoned_alteration", "propylitic_halo",
                                           "silica_or_gossan", "structural_control", "intrusive_host"}
    assert len(retrieve("anything", ["other"], top=2)) == 2


@pytest.mark.parametrize("names, expected", [
    (["geologia", "as_rcl", "sb_rcl", "falha_rcl", "gbfaults3"], "carlin_type_gold"),  # Great Basin's files
    (["greenstone", "faults"], "orogenic_gold"),  # Murchison's files
])
def test_a_commodity_question_takes_the_deposit_type_from_the_layers_names(names, expected):
    """Orogenic and Carlin-type gold tie on "Is there gold here?" with a geological map, structure and geochemistry:
    the layers a geologist loaded (an As-Sb survey, a greenstone map) tell which deposit type to test."""
    roles = (["geological_map", "structure"] if len(names) == 2
             else ["geological_map", "geochemistry", "geochemistry", "structure", "structure"])
    tied = retrieve("Is there gold here?", roles)
    assert {tied[0]["id"], tied[1]["id"]} == {"orogenic_gold", "carlin_type_gold"}
    assert tied[0]["score"] == pytest.approx(tied[1]["score"])
    assert retrieve("Is there gold here?", roles, names=names)[0]["id"] == expected
    asked = retrieve("Where are orogenic gold deposits likely?", roles, names=names)[0]  # the question rules
    assert asked["id"] == "orogenic_gold"


def test_gold_over_a_porphyry_sample_follows_the_porphyry_cu_au_model():
    """Porphyry Cu-Mo-Au and IOCG systems carry gold (their commodities say so): a gold question over the sample's
    porphyry layers ties the porphyry and epithermal models and the porphyry model, first, is followed."""
    from lodestar.plugin.request.case import read_case

    case = read_case(Path(KNOWLEDGE_PATH).parents[1] / "sample" / "porphyry-demo")
    ranked = retrieve("Is there gold here?", [s.role for s in case.layers], names=[s.name for s in case.layers])
    assert ranked[0]["id"] == "porphyry_cu_mo_au"
    assert all("gold" in model_by_id(m)["keywords"] for m in ("porphyry_cu_mo_au", "iocg"))


def test_names_of_what_a_layer_measures_do_not_choose_the_model():
    """"ferric iron index" names what the layer measures (its role): it does not make the generic question a skarn
    question (iron is a skarn keyword); "as" counts as arsenic only in a geochemistry layer's name."""
    question = "Given these layers, can mineral deposits be detected in this area? Answer: A. Yes B. No."
    roles = ["iron_oxide", "structure", "geological_map"]
    plain = retrieve(question, roles)
    named = retrieve(question, roles, names=["ferric iron index", "Faults as mapped", "geological map"])
    assert [m["id"] for m in named] == [m["id"] for m in plain]
    assert all(m["names"] == [] for m in named)
    survey = retrieve("Is there gold here?", ["geochemistry", "structure"], names=["As ppm", "faults"],
                      top=len(load_knowledge()))
    assert next(m for m in survey if m["id"] == "carlin_type_gold")["names"] == ["as"]
    assert survey[0]["id"] == "carlin_type_gold"


def test_as_is_a_word_in_a_question():
    parts = score_parts("Is this as prospective for gold as the belt next door?", ["geochemistry"])
    assert parts["carlin_type_gold"]["keywords"] == ["gold"]
    plain = retrieve("Is this as prospective for gold as the belt next door?", ["geochemistry"],
                     top=len(load_knowledge()))
    assert next(m for m in plain if m["id"] == "carlin_type_gold")["score"] == pytest.approx(
        next(m for m in plain if m["id"] == "orogenic_gold")["score"])  # gold and the same coverage: no 'as' bonus


def test_invalid_knowledge_files_are_refused(tmp_path):
    data = json.loads(KNOWLEDGE_PATH.read_text(encoding="utf-8"))
    data["models"][0]["evidence"][0]["level"] = "important"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(LodestarError, match="level must be critical or secondary"):
        load_knowledge(bad)
    data = json.loads(KNOWLEDGE_PATH.read_text(encoding="utf-8"))
    data["models"][1]["evidence"][1]["roles"] = ["radar"]
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(LodestarError, match="unknown roles"):
        load_knowledge(bad)
    for key, value in (("shell_scale", "four"), ("near_m", -450), ("shell_scale", True)):
        data = json.loads(KNOWLEDGE_PATH.read_text(encoding="utf-8"))
        data["models"][0]["evidence"][0][key] = value
        bad.write_text(json.dumps(data), encoding="utf-8")
        with pytest.raises(LodestarError, match=f"phyllic_core: {key} must be a positive number, not {value!r}"):
            load_knowledge(bad)
    bad.write_text(json.dumps({"format": "lodestar-knowledge/1", "models": []}), encoding="utf-8")
    with pytest.raises(LodestarError, match="non-empty 'models'"):
        load_knowledge(bad)
    with pytest.raises(LodestarError, match="No deposit model"):
        model_by_id("diamond_kimberlite")


def test_favourable_units():
    info = LayerInfo("geology", "geological_map", "categorical",
                     units={1: "Tqmp Tertiary quartz monzonite porphyry", 2: "Kls Cretaceous limestone",
                            3: "Qal Quaternary alluvium", 4: "Tdt Tertiary dacitic tuff"})
    assert favourable_units(info, model_by_id("porphyry_cu_mo_au")) == ["Tqmp Tertiary quartz monzonite porphyry"]
    assert favourable_units(info, model_by_id("carlin_type_gold")) == ["Kls Cretaceous limestone"]
    assert favourable_units(info, model_by_id("high_sulphidation_epithermal")) == ["Tdt Tertiary dacitic tuff"]


def test_geochemistry_of_other_elements_tests_nothing_of_a_model_in_retrieval():
    """A copper survey and faults, "Is there gold here?": copper is no pathfinder of orogenic gold, so its
    alteration-on-shear item is not testable and the model's coverage does not count it (before, orogenic gold was
    followed and its copper layer then left out)."""
    names, roles = ["cu_rcl", "falha_rcl", "gbfaults3"], ["geochemistry", "structure", "structure"]
    ranked = retrieve("Is there gold here?", roles, top=len(load_knowledge()), names=names)
    orogenic = next(m for m in ranked if m["id"] == "orogenic_gold")
    assert orogenic["testable"] == ["shear_corridor"]
    assert ranked[0]["id"] == "iocg" and "geochemical_support" in ranked[0]["testable"]  # Cu-Au: Cu counts
    assert score_parts("Is there gold here?", roles, names=names)["orogenic_gold"]["critical"] == 0.5
    assert score_parts("Is there gold here?", roles)["orogenic_gold"]["critical"] == 1.0  # names unknown
