"""The one request builder (plugin/request/request.py): choices, back-end fallbacks, layer specs, messages that say
where."""
from __future__ import annotations

from pathlib import Path

import pytest

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.raster_io import LayerSpec
from lodestar.plugin.request.request import (
    BackendValues,
    backend_problem,
    backend_settings,
    build_request,
    distinct_names,
    evidence_spec,
    guess_file_role,
    is_categorical_map,
    legend_beside,
    parse_favourable_units,
)

ALTERATION = ("Which hydrothermal alteration is present? Answer: A. Argillic or phyllic (clay, sericite) "
              "B. Propylitic (chlorite, epidote) C. Silicification D. None.")


def _layers(tmp_path):
    return [LayerSpec(tmp_path / "aloh.tif", "hydrothermal_alteration", "aloh", "high")]


def test_choices_come_from_the_question_unless_given(tmp_path):
    request = build_request(_layers(tmp_path), f"  {ALTERATION} ", tmp_path / "run", BackendValues())
    assert request.question == ALTERATION
    assert request.choices == {"A": "Argillic or phyllic (clay, sericite)", "B": "Propylitic (chlorite, epidote)",
                               "C": "Silicification", "D": "None"}
    assert build_request(_layers(tmp_path), "Any gold?", tmp_path, BackendValues()).choices == {"A": "Yes", "B": "No"}
    given = build_request(_layers(tmp_path), ALTERATION, tmp_path, BackendValues(), choices={"A": "Yes", "B": "No"})
    assert given.choices == {"A": "Yes", "B": "No"}


def test_request_fields(tmp_path):
    request = build_request(_layers(tmp_path), "Any gold?", str(tmp_path / "run"), BackendValues(temperature=0.3),
                            max_rounds="4", case_id="c1", deposits=str(tmp_path / "d.geojson"), refine_with_sam=True,
                            sam_checkpoint=str(tmp_path / "sam.pth"))
    assert request.output_dir == tmp_path / "run" and request.max_rounds == 4 and request.case_id == "c1"
    assert request.deposits == tmp_path / "d.geojson"
    assert request.refine_with_sam and request.sam_checkpoint == tmp_path / "sam.pth"
    assert (request.settings.backend, request.settings.temperature) == ("offline", 0.3)
    unrefined = build_request(_layers(tmp_path), "Any gold?", tmp_path, BackendValues(), sam_checkpoint="sam.pth")
    assert not unrefined.refine_with_sam and unrefined.sam_checkpoint is None


def test_model_server_settings_fall_back_to_the_planner():
    values = BackendValues("openai", " http://localhost:9/v1 ", " sk-key-0001 ", {"planner": " big ", "verifier": "v"},
                           0.2, 5000)
    settings = backend_settings(values)
    assert (settings.base_url, settings.api_key, settings.max_tokens) == ("http://localhost:9/v1", "sk-key-0001", 5000)
    assert settings.models == {"planner": "big", "executor": "big", "verifier": "v"}
    offline = backend_settings(BackendValues(base_url="http://x", models={"planner": "p"}, temperature=0.1))
    assert (offline.backend, offline.base_url, offline.models["planner"], offline.max_tokens) == ("offline", "", "",
                                                                                                  400_000)


@pytest.mark.parametrize("values,message", [
    (BackendValues("openai"), "Set the model server's endpoint base URL in BASE_URL."),
    (BackendValues("openai", "http://x", models={"executor": "e"}), "Name the planner model in PLANNER_MODEL"),
    (BackendValues("cloud"), "Unknown back-end 'cloud'; choose offline or openai."),
])
def test_backend_messages_name_where_to_fix(values, message):
    where = {"base_url": "in BASE_URL", "planner": "in PLANNER_MODEL"}
    assert backend_problem(values, where).startswith(message)
    with pytest.raises(LodestarError, match="^" + message.replace("(", r"\(").replace(".", r"\.")):
        backend_settings(values, where)


def test_missing_question_and_checkpoint_say_where(tmp_path):
    where = {"question": "in QUESTION", "sam_checkpoint": "in SAM_CHECKPOINT"}
    with pytest.raises(LodestarError, match="Ask a question in QUESTION"):
        build_request(_layers(tmp_path), "  ", tmp_path, BackendValues(), where=where)
    with pytest.raises(LodestarError, match="checkpoint file in SAM_CHECKPOINT"):
        build_request(_layers(tmp_path), "Gold?", tmp_path, BackendValues(), refine_with_sam=True, where=where)


def test_evidence_spec_reads_legend_and_distance_layers(tmp_path):
    (tmp_path / "geology_legend.csv").write_text("value,name\n1,granite\n", encoding="utf-8")
    geology = evidence_spec(tmp_path / "geology.tif", "geological_map", "geology")
    assert geology.legend == tmp_path / "geology_legend.csv" and geology.favourable == "high"
    distance = evidence_spec(tmp_path / "falha_rcl.tif", "structure", "Distance to faults")
    assert distance.favourable == "low" and distance.legend is None
    assert evidence_spec(tmp_path / "fault_dist.tif", "structure", "faults").favourable == "low"
    assert evidence_spec(tmp_path / "dist_grid.tif", "geophysics", "distance").favourable == "high"
    assert evidence_spec(Path("fault_dist.tif"), "structure", "faults", "high").favourable == "high"
    with pytest.raises(LodestarError, match="Unknown layer role 'gold'"):
        evidence_spec(tmp_path / "x.tif", "gold", "x")


def _maps(tmp_path):
    (tmp_path / "codes_legend.csv").write_text("value,name\n1,A1\n2,Silty limestone\n", encoding="utf-8")
    return [LayerSpec(tmp_path / "geology.tif", "geological_map", "Geology (DDS-41)"),
            LayerSpec(tmp_path / "as.tif", "geochemistry", "arsenic"),
            LayerSpec(tmp_path / "codes.tif", "other", "coded map", legend=tmp_path / "codes_legend.csv")]


def test_favourable_units_parse_names_and_merge(tmp_path):
    layers = _maps(tmp_path)
    text = " geology (dds-41): LPZE, UPZC ,LPZ; coded map: limestone\nGeology (DDS-41): LPZ, UPZE ;; "
    assert parse_favourable_units(text, layers) == {"Geology (DDS-41)": ["LPZE", "UPZC", "LPZ", "UPZE"],
                                                    "coded map": ["limestone"]}
    assert parse_favourable_units("", layers) == {} and parse_favourable_units("  ; ", layers) == {}
    one_map = layers[:2]
    assert parse_favourable_units("LPZE, carbonate", one_map) == {"Geology (DDS-41)": ["LPZE", "carbonate"]}
    assert is_categorical_map(layers[0]) and is_categorical_map(layers[2]) and not is_categorical_map(layers[1])


@pytest.mark.parametrize("text,message", [
    ("LPZE", r"^FAVOURABLE_UNITS: name the map before its units \('map name: unit, unit'\), as 2 categorical maps "
             r"are given; categorical maps: Geology \(DDS-41\), coded map\.$"),
    ("other map: limestone", r"^FAVOURABLE_UNITS: 'other map' is not among the input layers; name one of the "
                             r"categorical maps: Geology \(DDS-41\), coded map\.$"),
    ("arsenic: high", r"arsenic is not a categorical map \(its role is geochemistry and it has no legend\)"),
    ("coded map:  , ", r"give at least one unit code or name after 'coded map:'"),
    ("coded map: limestone, basalt", r"^FAVOURABLE_UNITS: no unit of coded map matches 'basalt' \(by code, name, "
                                     r"wildcard, word or rock synonym\); its units: 1 A1, 2 Silty limestone\.$"),
])
def test_favourable_units_bad_input_says_what_to_do(tmp_path, text, message):
    with pytest.raises(LodestarError, match=message):
        parse_favourable_units(text, _maps(tmp_path), "FAVOURABLE_UNITS")


def test_request_mapping_fields(tmp_path):
    layers = _maps(tmp_path)
    request = build_request(layers, "Gold?", tmp_path, BackendValues(), deposits=tmp_path / "d.gpkg",
                            favourable_units="coded map: limestone", calibrate="wofe", area_share=0.05,
                            case_units={"Geology (DDS-41)": ["LPZE"], "coded map": ["shale"]})
    assert request.favourable_units == {"Geology (DDS-41)": ["LPZE"], "coded map": ["limestone"]}
    assert (request.calibrate, request.area_share, request.deposits) == ("wofe", 0.05, tmp_path / "d.gpkg")
    plain = build_request(layers, "Gold?", tmp_path, BackendValues())
    assert (plain.calibrate, plain.area_share, plain.favourable_units) == ("", 0.10, {})
    where = {"deposits": "DEPOSITS", "area_share": "AREA_SHARE"}
    with pytest.raises(LodestarError, match=r"^Calibration with logistic regression needs known deposits: give "
                                            r"DEPOSITS, or turn calibration off\.$"):
        build_request(layers, "Gold?", tmp_path, BackendValues(), calibrate="logistic", where=where)
    with pytest.raises(LodestarError, match=r"Unknown calibration 'svm'"):
        build_request(layers, "Gold?", tmp_path, BackendValues(), calibrate="svm", deposits="d.gpkg")
    with pytest.raises(LodestarError, match=r"^Set AREA_SHARE between 0\.5% and 50% of the analysed area, not 60\.0%"):
        build_request(layers, "Gold?", tmp_path, BackendValues(), area_share=0.6, where=where)


def test_cross_validation_settings_are_checked_and_empty_ones_keep_the_defaults(tmp_path):
    layers = _maps(tmp_path)
    request = build_request(layers, "Gold?", tmp_path, BackendValues(), deposits="d.gpkg", calibrate="wofe",
                            cross_validation={"block_size_m": "2500", "folds": 3, "seed": None})
    assert request.cross_validation == {"block_size_m": 2500.0, "folds": 3}
    assert build_request(layers, "Gold?", tmp_path, BackendValues()).cross_validation == {}
    where = {"block_size_m": "BLOCK_SIZE_M", "folds": "FOLDS", "seed": "SEED"}
    for given, message in (({"block_size_m": 0}, r"^Set BLOCK_SIZE_M to a block side of at least 1 metre, or empty "
                                                 r"for 10 km \(an eighth of the extent when smaller\), not 0\.$"),
                           ({"folds": 1}, r"^Set FOLDS to a number of folds from 2 to 20, not 1\.$"),
                           ({"folds": "five"}, r"^Set FOLDS to a number of folds from 2 to 20, not 'five'\.$"),
                           ({"seed": -1}, r"^Set SEED to a seed of 0 or more, not -1\.$"),
                           ({"blocks": 5}, r"^Unknown cross-validation setting\(s\) blocks: give block_size_m, "
                                           r"folds, seed\.$")):
        with pytest.raises(LodestarError, match=message):
            build_request(layers, "Gold?", tmp_path, BackendValues(), cross_validation=given, where=where)


def test_a_table_of_class_counts_beside_a_raster_is_no_legend_of_units(tmp_path):
    """The Great Basin survey ships `as_rcl_legend.csv` (VALUE,COUNT) beside its arsenic classes: no unit names, so
    the arsenic layer stays a measured index and is not guessed a geological map (before, the run was refused)."""
    (tmp_path / "as_rcl_legend.csv").write_text("VALUE,COUNT\n1,13\n2,\n3\n", encoding="utf-8")  # blanks too
    assert legend_beside(tmp_path / "as_rcl.tif") is None
    assert evidence_spec(tmp_path / "as_rcl.tif", "geochemistry", "as_rcl").legend is None
    (tmp_path / "belts_legend.csv").write_text("VALUE,COUNT,CODE\n1,31211,TPC\n", encoding="utf-8")
    assert legend_beside(tmp_path / "belts.tif") == tmp_path / "belts_legend.csv"
    assert guess_file_role(tmp_path / "belts.tif", "belts") == "geological_map"
    (tmp_path / "classes_legend.csv").write_text("VALUE,COUNT\n1,13\n2,44\n", encoding="utf-8")
    assert guess_file_role(tmp_path / "classes.tif", "classes") == "other"  # no map for a count table
    assert guess_file_role(tmp_path / "as_rcl.tif", "arsenic classes") == "geochemistry"  # its file's symbol
    (tmp_path / "broken_legend.csv").write_text("value,name\n", encoding="utf-8")  # meant as a legend: kept, and
    assert legend_beside(tmp_path / "broken.tif") == tmp_path / "broken_legend.csv"  # reading it says what is wrong


def test_names_several_layers_share_become_their_file_names(tmp_path):
    layers = [LayerSpec(tmp_path / "greenstone.tif", "geological_map", "greenstone"),
              LayerSpec(tmp_path / "greenstone.gpkg", "geological_map", "greenstone"),
              LayerSpec(tmp_path / "faults.gpkg", "structure", "faults"),
              LayerSpec(tmp_path / "a" / "as.tif", "geochemistry", "arsenic"),
              LayerSpec(tmp_path / "b" / "as.tif", "geochemistry", "arsenic")]
    renamed, lines = distinct_names(layers)
    assert [spec.name for spec in renamed] == ["greenstone.tif", "greenstone.gpkg", "faults", "arsenic (as.tif)",
                                               "arsenic (as.tif) 2"]
    assert [spec.path for spec in renamed] == [spec.path for spec in layers]
    assert lines[0] == (f"greenstone ({tmp_path / 'greenstone.tif'}) is named greenstone.tif: layer names must be "
                        "distinct.")
    assert len(lines) == 4
    assert distinct_names(layers[2:4]) == (layers[2:4], [])
