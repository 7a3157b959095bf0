"""Geochemistry layers are evidence for the deposit models whose pathfinders they measure (plugin.pathfinders)."""
from __future__ import annotations

import json

import pytest

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.pathfinders import model_layers, named_elements, off_model_note, off_model_reason
from lodestar.plugin.reason.knowledge import KNOWLEDGE_PATH, load_knowledge, model_by_id
from lodestar.plugin.reason.workspace import LayerInfo

CARLIN = model_by_id("carlin_type_gold")


@pytest.mark.parametrize("name, elements", [
    ("as_rcl", {"as"}),
    ("stream-sediment arsenic (classes)", {"as"}),
    ("Cu in soil (ppm)", {"cu"}),  # "in" is a word, not indium
    ("Zn mg/kg", {"zn"}),  # a unit, not magnesium
    ("k_rcl", {"k"}),
    ("Aluminum", {"al"}),
    ("Cu-Au soil", {"cu", "au"}),
    ("soil anomaly PC1", set()),
    ("", set()),
    ("As-Sb ratio", {"as", "sb"}), ("Te_ppm", {"te"}), ("K/Th ratio", {"k", "th"}),  # a name beginning with them
    ("Soil geochem SE grid", set()), ("soil geochem W block", set()),  # ambiguous symbols inside a name: words
    ("Soil anomaly PC1 (La Plata)", set()), ("stream sediment PCA k-means", set()), ("k-means clusters", set()),
    ("soil Au ppb", {"au"}),  # an unambiguous symbol anywhere
])
def test_elements_are_read_from_a_layers_name(name, elements):
    assert named_elements(name) == elements


def test_element_names_are_read_only_when_asked():
    assert named_elements("stream-sediment arsenic", by_name=False) == set()
    assert named_elements("gold", by_name=False) == set()  # the known deposits' layer, as often named


def test_geochemistry_of_other_elements_is_no_evidence_for_a_model():
    assert off_model_reason("k_rcl", "geochemistry", CARLIN) == (
        "potassium is not a pathfinder of Carlin-type sediment-hosted gold (Au, As, Sb, Hg, Tl)")
    assert "aluminium and calcium are not pathfinders" in off_model_reason("Al-Ca ratio", "geochemistry", CARLIN)
    assert off_model_reason("as_rcl", "geochemistry", CARLIN) == ""
    assert off_model_reason("As-K soil", "geochemistry", CARLIN) == ""  # one pathfinder among them is enough
    assert off_model_reason("soil anomaly PC1", "geochemistry", CARLIN) == ""  # no element named
    assert off_model_reason("k_rcl", "geophysics", CARLIN) == ""  # radiometric potassium is another role
    assert off_model_reason("k_rcl", "geochemistry", {"name": "generic"}) == ""  # a model listing no pathfinders
    assert off_model_reason("Cu in soil (ppm)", "geochemistry", model_by_id("porphyry_cu_mo_au")) == ""
    assert off_model_reason("Cu in soil (ppm)", "geochemistry", CARLIN) != ""


def test_a_note_names_the_layers_of_a_role_that_are_no_evidence_for_the_model():
    infos = [LayerInfo("al_rcl", "geochemistry", "index"), LayerInfo("k_rcl", "geochemistry", "index"),
             LayerInfo("faults", "structure", "vector")]
    assert off_model_note(infos, CARLIN, ["geochemistry", "silicification"]) == (
        " The layers given with that role are no evidence for it: al_rcl (aluminium is not a pathfinder of Carlin-type "
        "sediment-hosted gold (Au, As, Sb, Hg, Tl)); k_rcl (potassium is not a pathfinder of Carlin-type "
        "sediment-hosted gold (Au, As, Sb, Hg, Tl)).")
    assert off_model_note(infos, CARLIN, ["structure"]) == ""


def test_model_layers_keep_every_layer_but_off_model_geochemistry():
    infos = [LayerInfo("as_rcl", "geochemistry", "index"), LayerInfo("k_rcl", "geochemistry", "index"),
             LayerInfo("faults", "structure", "vector"), LayerInfo("K radiometrics", "geophysics", "index")]
    assert [i.name for i in model_layers(infos, CARLIN)] == ["as_rcl", "faults", "K radiometrics"]
    assert model_layers(infos, {}) == infos


def test_every_bundled_model_lists_its_pathfinders_and_unknown_elements_are_refused(tmp_path):
    assert all(model["pathfinders"] for model in load_knowledge())
    data = json.loads(KNOWLEDGE_PATH.read_text(encoding="utf-8"))
    data["models"][0]["pathfinders"] = ["Cu", "Xx"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(LodestarError, match=r"unknown pathfinder elements \['Xx'\]"):
        load_knowledge(bad)


@pytest.mark.parametrize("name, elements", [
    ("soil_K_ppm", {"k"}), ("sed_K_pct", {"k"}),  # an ambiguous symbol before a unit word
    ("ss_al", {"al"}), ("gb_ca", {"ca"}),  # ending a name of short prefixes
])
def test_ambiguous_symbols_are_read_beside_units_and_after_survey_prefixes(name, elements):
    assert named_elements(name) == elements
    assert off_model_reason(name, "geochemistry", CARLIN) != ""
