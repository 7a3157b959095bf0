"""The knowledge-driven surface's principles (docs/engine.md): every layer the mineral system speaks to, each read
the way geology says, weights within a bounded ratio, every unit named, combined by rank (so that with equal
weights it is the independent equal-weight mean of the layers' ranks)."""
from __future__ import annotations

import copy
from pathlib import Path

import numpy as np

from lodestar.plugin.evaluation import deposit_points, evaluate_surface
from lodestar.plugin.favourability.baseline import independent_rank_mean
from lodestar.plugin.favourability.knowledge import ITEM_WEIGHT, knowledge_specs
from lodestar.plugin.favourability.overlay import favourability_surface
from lodestar.plugin.raster_io import RasterSet
from lodestar.plugin.reason.knowledge import model_by_id
from lodestar.plugin.reason.workspace import LayerInfo, describe_layers
from lodestar.plugin.request.case import read_case

MURCHISON = Path(__file__).resolve().parents[2] / "data" / "murchison-gold"
STATS = {"min": 1.0, "p50": 50.0, "max": 900.0}


def _model(**changes) -> dict:
    model = copy.deepcopy(model_by_id("orogenic_gold"))
    model["favourability"] = {k: v for k, v in model["favourability"].items() if k != "weights"}
    model.update(changes)
    return model


def test_every_layer_an_item_names_weighs_the_same_critical_or_secondary():
    infos = [LayerInfo("Au ppb", "geochemistry", "index", stats=STATS),
             LayerInfo("faults", "structure", "vector"),
             LayerInfo("geology", "geological_map", "categorical", units={1: "Basalt", 2: "Granite"})]
    specs, left_out = knowledge_specs(infos, _model())
    assert left_out == [] and {s.layer: s.weight for s in specs} == dict.fromkeys(["Au ppb", "faults", "geology"],
                                                                                 ITEM_WEIGHT)


def test_a_models_own_weights_stay_within_a_factor_of_two_and_the_reason_says_so():
    model = _model(favourability={"weights": {"structure": 4.0, "geochemistry": 1.0}})
    specs, _ = knowledge_specs([LayerInfo("Au ppb", "geochemistry", "index", stats=STATS),
                                LayerInfo("faults", "structure", "vector")], model)
    weights = {s.layer: s for s in specs}
    assert weights["faults"].weight == 4.0 and weights["Au ppb"].weight == 2.0
    assert "weight 2 (the model gives 1, raised to half its largest weight" in weights["Au ppb"].why


def test_geophysics_is_read_by_the_models_signature():
    model = _model(geophysics=[{"property": "magnetics", "sign": "low", "what": "magnetite destroyed",
                                "source": "a"},
                               {"property": "conductivity", "sign": "high", "what": "sulphides", "source": "b"}])
    infos = [LayerInfo("TMI (nT)", "geophysics", "index", stats=STATS),
             LayerInfo("apparent resistivity", "geophysics", "index", stats=STATS),
             LayerInfo("Bouguer gravity", "geophysics", "index", stats=STATS)]
    specs, left_out = knowledge_specs(infos, model)
    chosen = {s.layer: s for s in specs}
    assert chosen["TMI (nT)"].membership == "invert" and "magnetics signature is a low" in chosen["TMI (nT)"].why
    assert chosen["apparent resistivity"].membership == "invert" and "a resistivity low" in \
        chosen["apparent resistivity"].why
    assert left_out == [{"layer": "Bouguer gravity", "reason": "The Orogenic gold model gives no gravity signature "
                                                               "(its geophysics: magnetics, conductivity)."}]


def test_a_depleted_element_is_read_low_and_a_low_setting_always_stands():
    model = _model(depleted=["sr"])
    infos = [LayerInfo("Sr ppm", "geochemistry", "index", stats=STATS),
             LayerInfo("distance to shear (m)", "structure", "index", "low", stats=STATS)]
    specs, left_out = knowledge_specs(infos, model)
    chosen = {s.layer: s for s in specs}
    assert left_out == [] and chosen["Sr ppm"].membership == "invert"
    assert "depletion of strontium" in chosen["Sr ppm"].why
    assert chosen["distance to shear (m)"].membership == "invert"


def test_a_map_of_90_units_names_every_one_of_them():
    units = {code: (f"basalt flow {code}" if code <= 7 else f"sandstone {code}") for code in range(1, 91)}
    specs, _ = knowledge_specs([LayerInfo("geology", "geological_map", "categorical", units=units)], _model())
    why = specs[0].why
    assert "(7 of 90 units)" in why and "the other 83 units (sandstone 8, " in why
    assert all(name in why for name in units.values())


def test_with_equal_weights_over_the_same_layers_the_surface_is_the_independent_baseline():
    """Murchison (greenstone map, fault lines): the orogenic model's two layers, weighed alike and combined by rank,
    give the independent equal-weight mean of ranks cell for cell."""
    case = read_case(MURCHISON)
    raster_set = RasterSet(case.layers, max_pixels=200_000)
    infos = describe_layers(raster_set)
    specs, _ = knowledge_specs(infos, _model())
    surface = favourability_surface(raster_set, specs, method="rank")
    baseline = independent_rank_mean(raster_set, infos, _model())
    assert [row["layer"] for row in baseline.used] == [s.layer for s in specs]
    assert np.allclose(surface.values.filled(-1), baseline.values.filled(-1), atol=1e-6)
    xy = [(p.x, p.y) for p in deposit_points(case.deposits, raster_set.crs, [])]
    assert evaluate_surface(surface.values, raster_set.grid, xy)["auc"] > 0.9


def test_a_model_servers_plan_is_held_to_the_same_bound():
    from lodestar.plugin.favourability.evidence import EvidenceSpec
    from lodestar.plugin.favourability.knowledge import bounded_specs

    specs = [EvidenceSpec("AlOH", "hydrothermal_alteration", "index", "percentile_rank", weight=4.0, why="core."),
             EvidenceSpec("quartz", "silicification", "index", "percentile_rank", weight=1.0, why="cap."),
             EvidenceSpec("gravity", "geophysics", "index", "percentile_rank", weight=0.0, why="left out.")]
    held = {s.layer: s for s in bounded_specs(specs)}
    assert [held[n].weight for n in ("AlOH", "quartz", "gravity")] == [4.0, 2.0, 0.0]
    assert held["quartz"].why == ("cap. Weight 2: the planner gave 1, raised to half the largest weight (without "
                                  "deposits no weight is known better than within a factor of 2).")
    assert held["AlOH"].why == "core." and held["gravity"].why == "left out."
