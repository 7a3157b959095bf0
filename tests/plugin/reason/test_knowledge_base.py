"""The knowledge base's schema (issue 57): at least 20 mineral-system models, each with its commodities, pathfinder
and depleted elements, host and source rocks the legend matcher knows, geophysical signature, footprints and a source
for every number; a question naming a type retrieves its model."""
from __future__ import annotations

import json

import pytest

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.pathfinders import AMBIGUOUS, ELEMENTS
from lodestar.plugin.reason.knowledge import (
    GEOPHYSICS,
    KNOWLEDGE_PATH,
    QUESTION_WORDS_NOT_KEYWORDS,
    generic_model,
    load_knowledge,
    retrieve,
    unsourced_numbers,
)
from lodestar.plugin.tools.legend_words import vocabulary
from lodestar.plugin.tools.lithology_words import matched_units, synonyms

MODELS = load_knowledge()
QUESTIONS = {
    "porphyry_cu_mo_au": "Where are porphyry copper deposits likely?",
    "high_sulphidation_epithermal": "Is there a high-sulphidation epithermal system here?",
    "low_sulphidation_epithermal": "Where are low-sulfidation epithermal veins likely?",
    "orogenic_gold": "Where are orogenic gold deposits likely?",
    "carlin_type_gold": "Where are Carlin-type gold deposits likely?",
    "skarn": "Could a skarn have formed here?",
    "iocg": "Where are IOCG deposits likely?",
    "vms_bimodal_felsic": "Where are volcanogenic massive sulphide (VMS) deposits likely in this region?",
    "vms_mafic": "Are there Cyprus-type massive sulfide deposits in these pillow basalts?",
    "mvt_zn_pb": "Where are Mississippi Valley-type zinc deposits likely?",
    "sedex_zn_pb": "Is there a clastic-dominated (SEDEX) Zn-Pb deposit here?",
    "magmatic_ni_cu_pge": "Where is komatiite-hosted nickel sulphide likely?",
    "lct_pegmatite": "Where are spodumene pegmatites likely?",
    "carbonatite_ree": "Are there carbonatite-hosted rare earth deposits here?",
    "ion_adsorption_ree": "Where are ion-adsorption clay REE deposits likely?",
    "unconformity_uranium": "Where are unconformity-related uranium deposits likely?",
    "sandstone_uranium": "Where are roll-front uranium deposits likely?",
    "granite_sn_w": "Where are tin-tungsten greisen deposits likely?",
    "intrusion_related_gold": "Where are intrusion-related gold deposits likely?",
    "sediment_hosted_copper": "Where is sediment-hosted stratiform copper likely?",
    "podiform_chromite": "Where is podiform chromite likely?",
    "laterite_nickel": "Where are nickel laterite deposits likely?",
}
ROLES = ["geological_map", "geochemistry", "structure", "geophysics"]


def test_the_base_holds_at_least_twenty_mineral_systems_and_a_question_for_each():
    ids = [m["id"] for m in MODELS]
    assert len(ids) >= 20 and len(set(ids)) == len(ids)
    assert set(QUESTIONS) == set(ids)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m["id"])
def test_each_model_holds_the_schema_with_a_source_for_every_number(model):
    assert unsourced_numbers(model) == []
    assert model["commodities"] and model["pathfinders"] and model["favourable_units"] and model["source_rocks"]
    for key in ("commodities", "pathfinders", "depleted"):
        assert all(e.lower() in ELEMENTS for e in model[key]), key
    assert model["geophysics"], "a geophysical signature"
    for entry in model["geophysics"]:
        assert entry["property"] in GEOPHYSICS and entry["sign"] in ("high", "low") and entry["source"]
    for scale in ("deposit", "camp"):
        assert model["footprints"][scale]["km2"] > 0 and model["footprints"][scale]["source"]
    assert model["footprints"]["deposit"]["km2"] < model["footprints"]["camp"]["km2"]
    assert model["favourability"]["fault_distance_m"]["source"]
    # a keyword that is a symbol and also a word of questions ("co-located", "U.S.") is never read as one
    assert all(k not in AMBIGUOUS or k in QUESTION_WORDS_NOT_KEYWORDS for k in model["keywords"])


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m["id"])
def test_every_host_and_source_word_is_a_rock_the_legend_matcher_knows(model):
    known = vocabulary()
    for word in model["favourable_units"] + model["source_rocks"]:
        legend = {1: f"{word.capitalize()} unit", 2: "Alluvium"}
        assert set(matched_units(legend, [word])) == {1}, word
        for synonym in synonyms(word)[1:]:  # a legend naming the rock otherwise is matched too
            assert set(matched_units({1: f"{synonym} unit", 2: "Alluvium"}, [word])) == {1}, (word, synonym)
    rock_words = [w for w in model["favourable_units"] + model["source_rocks"]
                  if model["id"] != "carlin_type_gold" or w not in ("lower plate", "roberts mountains", "popovich",
                                                                     "hanson creek")]  # Nevada formation names
    for word in rock_words:
        assert set(word.lower().replace("-", " ").split()) <= known, word


@pytest.mark.parametrize("model_id, question", QUESTIONS.items())
def test_a_question_naming_a_type_retrieves_its_model(model_id, question):
    ranked = retrieve(question, ROLES)
    assert ranked[0]["id"] == model_id
    assert "stands_in" not in ranked[0]


def test_a_number_without_a_source_is_refused(tmp_path):
    data = json.loads(KNOWLEDGE_PATH.read_text(encoding="utf-8"))
    del data["models"][7]["localization"]["source"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(LodestarError, match=r"'vms_bimodal_felsic': every number needs a source .* none for "
                                            r"localization.degree_centrality_weight"):
        load_knowledge(bad)
    data = json.loads(KNOWLEDGE_PATH.read_text(encoding="utf-8"))
    data["models"][8]["geophysics"][0]["sign"] = "strong"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(LodestarError, match="a geophysics entry needs a property of magnetics.* not 'conductivity' "
                                            "'strong'"):
        load_knowledge(bad)
    data = json.loads(KNOWLEDGE_PATH.read_text(encoding="utf-8"))
    data["models"][9]["depleted"] = ["Xx"]
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(LodestarError, match=r"unknown depleted elements \['Xx'\]"):
        load_knowledge(bad)
    data = json.loads(KNOWLEDGE_PATH.read_text(encoding="utf-8"))
    del data["models"][10]["footprints"]
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(LodestarError, match="'sedex_zn_pb' lacks 'footprints'"):
        load_knowledge(bad)


def test_the_generic_model_holds_the_schema():
    generic = generic_model()
    assert generic["id"] == "generic" and unsourced_numbers(generic) == []
    assert generic["pathfinders"] == [] and generic["favourable_units"] == []  # every layer speaks for it
    assert [i["kind"] for i in generic["evidence"] if i["level"] == "critical"] == ["anomaly", "structure"]
