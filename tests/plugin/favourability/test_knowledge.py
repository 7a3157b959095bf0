"""The offline planner's evidence choice per layer, with reasons for the layers it leaves out."""
from __future__ import annotations

from pathlib import Path

import pytest

from lodestar.plugin.favourability.knowledge import ITEM_WEIGHT, OTHER_UNITS, knowledge_specs
from lodestar.plugin.raster_io import RasterSet
from lodestar.plugin.reason.knowledge import model_by_id
from lodestar.plugin.reason.workspace import LayerInfo, describe_layers
from lodestar.plugin.request.case import read_case

GREAT_BASIN = Path(__file__).resolve().parents[2] / "data" / "great-basin-gold"
CARLIN = model_by_id("carlin_type_gold")
CODES = {1: "TPC", 13: "Q", 14: "LPZ", 38: "LPZE", 45: "UPZC"}


def _by_layer(specs):
    return {s.layer: s for s in specs}


def test_carlin_choices_per_layer():
    infos = [
        LayerInfo("As ppm", "geochemistry", "index", stats={"min": 0.5, "p50": 4.2, "max": 880.0}),
        LayerInfo("Sb classes", "geochemistry", "index", stats={"min": 1.0, "p50": 2.0, "max": 20.0}),
        LayerInfo("fault distance", "structure", "index", "low", stats={"min": 0.0, "p50": 2500.5, "max": 9e3}),
        LayerInfo("geology", "geological_map", "categorical", units={1: "Granite", 2: "Silty limestone"}),
    ]
    specs, left_out = knowledge_specs(infos, CARLIN)
    assert left_out == []
    chosen = _by_layer(specs)
    assert (chosen["As ppm"].transform, chosen["As ppm"].membership) == ("percentile_rank", "identity")
    assert "scale-free" in chosen["As ppm"].why  # ranked as every ordered layer: the surface combines by rank
    assert chosen["Sb classes"].transform == "percentile_rank" and "classes" in chosen["Sb classes"].why
    assert (chosen["fault distance"].transform, chosen["fault distance"].membership) == ("percentile_rank", "invert")
    assert chosen["As ppm"].weight == chosen["fault distance"].weight == ITEM_WEIGHT  # every item's layer alike
    geology = chosen["geology"]
    assert geology.transform == "units" and geology.params["outside"] == OTHER_UNITS
    assert geology.params["units"] == CARLIN["favourable_units"]
    assert "Silty limestone" in geology.why and "1 of 2 units" in geology.why
    assert "the other unit (Granite) scores 0.1" in geology.why  # every unit of the map named
    assert "silty carbonate host units (secondary evidence)" in geology.why


def test_a_codes_only_legend_is_left_out_with_its_reason_until_units_are_named():
    infos = [LayerInfo("geology", "geological_map", "categorical", units=CODES)]
    specs, left_out = knowledge_specs(infos, CARLIN)
    assert specs == []
    reason = left_out[0]["reason"]
    assert left_out[0]["layer"] == "geology"
    assert "only unit codes (TPC, Q, LPZ, LPZE, UPZC)" in reason and "name the favourable units" in reason
    specs, left_out = knowledge_specs(infos, CARLIN, {"geology": ["LPZE", "UPZC", "LPZ"]})
    assert left_out == [] and specs[0].params["units"] == ["LPZE", "UPZC", "LPZ"]
    assert "named by you" in specs[0].why and "3 of 5 units" in specs[0].why
    specs, left_out = knowledge_specs(infos, CARLIN, {"geology": ["Limestone"]})
    assert specs == [] and left_out[0]["reason"].startswith("None of the units named for it (Limestone)")


def test_layers_that_cannot_be_scored_are_listed_with_reasons():
    infos = [
        LayerInfo("composite", "false_color_composite", "rgb"),
        LayerInfo("falha", "structure", "index", "low", stats={"min": 1.0, "p50": 10.0, "max": 20.0}),
        LayerInfo("faults", "structure", "vector"),
        LayerInfo("propylitic", "propylitic_alteration", "index", stats={"min": 0.1, "p50": 0.5, "max": 0.9}),
        LayerInfo("geology", "geological_map", "categorical", units={1: "Granite", 2: "Rhyolite"}),
    ]
    specs, left_out = knowledge_specs(infos, CARLIN)
    assert [s.layer for s in specs] == ["falha"]
    reasons = {item["layer"]: item["reason"] for item in left_out}
    assert list(reasons) == ["composite", "faults", "propylitic", "geology"]
    assert reasons["composite"].startswith("An RGB rendering")
    assert "already given by falha" in reasons["faults"]
    assert "does not use propylitic alteration evidence" in reasons["propylitic"]
    assert reasons["geology"].startswith("None of its units (Granite, Rhyolite) is a host rock")


def test_fault_lines_take_the_models_distance_in_metres():
    specs, _ = knowledge_specs([LayerInfo("faults", "structure", "vector")], CARLIN)
    assert (specs[0].transform, specs[0].membership) == ("distance_m", "small")
    assert specs[0].params == {"midpoint": 1500.0, "spread": 3.0}
    assert "0.5 at 1500 m" in specs[0].why
    orogenic, _ = knowledge_specs([LayerInfo("faults", "structure", "vector")], model_by_id("orogenic_gold"))
    assert orogenic[0].params["midpoint"] == 2000.0


def test_every_bundled_model_states_favourability_weights():
    from lodestar.plugin.reason.knowledge import load_knowledge
    from lodestar.plugin.roles import ROLES

    for model in load_knowledge():  # weights are optional (the evidence items' levels give them)
        settings = model["favourability"]
        assert set(settings.get("weights", {})) <= set(ROLES)
        assert all(0 < w <= 2 for w in settings.get("weights", {}).values())
        assert settings["fault_distance_m"]["midpoint"] > 0


def test_no_deposit_model_weighs_every_role_alike():
    infos = [LayerInfo("mag", "geophysics", "index", stats={"min": -50.0, "p50": 3.3, "max": 410.7}),
             LayerInfo("geology", "geological_map", "categorical", units={1: "Granite"})]
    specs, left_out = knowledge_specs(infos, {})
    assert [(s.layer, s.transform, s.weight) for s in specs] == [("mag", "percentile_rank", 1.0)]
    assert "name the favourable units" in left_out[0]["reason"]


@pytest.mark.skipif(not GREAT_BASIN.exists(), reason="the Great Basin case is not in this checkout")
def test_great_basin_plan():
    case = read_case(GREAT_BASIN)
    infos = describe_layers(RasterSet(case.layers))
    geology, arsenic, antimony, falha, faults = (i.name for i in infos)
    specs, left_out = knowledge_specs(infos, CARLIN, {geology: ["LPZE", "UPZC", "LPZ"]})
    chosen = _by_layer(specs)
    assert list(chosen) == [geology, arsenic, antimony, falha]
    assert chosen[arsenic].transform == chosen[antimony].transform == "percentile_rank"  # classes, not ppm
    assert chosen[falha].membership == "invert"
    assert [item["layer"] for item in left_out] == [faults]


def test_geochemistry_of_elements_that_are_no_pathfinders_is_left_out_with_its_reason():
    infos = [LayerInfo("as_rcl", "geochemistry", "index", stats={"min": 1.0, "p50": 13.0, "max": 25.0}),
             LayerInfo("k_rcl", "geochemistry", "index", stats={"min": 1.0, "p50": 10.0, "max": 20.0}),
             LayerInfo("soil PC1", "geochemistry", "index", stats={"min": -2.0, "p50": 0.1, "max": 5.0})]
    specs, left_out = knowledge_specs(infos, CARLIN)
    assert [s.layer for s in specs] == ["as_rcl", "soil PC1"]
    assert left_out == [{"layer": "k_rcl", "reason": "Potassium is not a pathfinder of Carlin-type sediment-hosted "
                                                     "gold (Au, As, Sb, Hg, Tl)."}]


def test_maps_of_the_host_units_share_the_criterion_weight():
    """A survey folder loaded whole gives its map twice, as a unit raster and as polygons: one criterion, so each map
    takes half its weight and the surface weighs the host rocks as with one map."""
    units = {1: "Granite", 2: "Silty limestone"}
    infos = [LayerInfo("As ppm", "geochemistry", "index", stats={"min": 0.5, "p50": 4.2, "max": 880.0}),
             LayerInfo("geology", "geological_map", "categorical", units=units),
             LayerInfo("geology polygons", "geological_map", "vector")]
    specs, left_out = knowledge_specs(infos, CARLIN)
    chosen = _by_layer(specs)
    assert left_out == [] and chosen["As ppm"].weight == ITEM_WEIGHT
    for name in ("geology", "geology polygons"):
        assert chosen[name].weight == pytest.approx(ITEM_WEIGHT / 2)
        assert "2 maps of the host units share its weight" in chosen[name].why
    one, _ = knowledge_specs(infos[:2], CARLIN)
    assert _by_layer(one)["geology"].weight == ITEM_WEIGHT
