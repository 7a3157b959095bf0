"""Every input checked at the door (issue 60): an evidence plan of 110,000 specs or of fields of the wrong type, a user
deposit model with NaN, infinity or 1e308, an older or edited run record (a key dropped, a sidecar naming
'../secret.txt', JSON nested 100,000 deep), a case.json nested as deep or too large, a folder given as a legend, and
a Sentinel-2 scene whose quantification value is 0 or negative: each refused in one line that names the field and
says what to give, before anything runs, with checks linear in the input's size."""
from __future__ import annotations

import copy
import hashlib
import json
import time
from pathlib import Path

import numpy as np
import pytest
import rasterio
import scene_testdata as st
from rasterio.transform import from_origin

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.errors import LodestarError
from lodestar.plugin.favourability.evidence import EvidenceSpec
from lodestar.plugin.favourability.plan_file import MAX_SPECS, EvidencePlan, plan_from_dict, read_plan
from lodestar.plugin.raster_io import LayerSpec, RasterReader
from lodestar.plugin.reason.deposit_models import load_user_models, save_user_model
from lodestar.plugin.reason.knowledge import model_by_id
from lodestar.plugin.request import record as records
from lodestar.plugin.request.case import read_case
from lodestar.plugin.tools.categorical import read_legend
from lodestar.plugin.tools.scene_products import recognise
from lodestar.tests.fakes.sta_cot_scripts import copy_sample

PLAN = "lodestar-evidence-plan/1"
SPEC = {"layer": "aloh", "role": "hydrothermal_alteration", "kind": "index", "transform": "percentile_rank",
        "membership": "large", "params": {"midpoint": 0.8, "spread": 10.0}, "weight": 1.0, "why": "the AlOH index"}


def _one_line(text: str) -> str:
    assert "\n" not in text and "Traceback" not in text
    return text


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A run of the sample case and its record."""
    case = read_case(copy_sample(tmp_path_factory.mktemp("sample")))
    result = run_analysis(AnalysisRequest(case.layers, case.question, tmp_path_factory.mktemp("run") / "out",
                                          dict(case.choices), case_id=case.id))
    return case, json.loads(result.outputs["record"].read_text(encoding="utf-8"))


# ------------------------------------------------------------------------- scenario 8: a plan of 110,000 specs
@pytest.mark.timing
def test_a_plan_of_110000_specs_is_refused_at_once_in_a_short_line(tmp_path):
    specs = [dict(SPEC, layer=f"layer {i % 1000}") for i in range(110_000)]
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"format": PLAN, "specs": specs}), encoding="utf-8")
    assert path.stat().st_size > 10 * 2 ** 20
    started = time.perf_counter()
    with pytest.raises(LodestarError) as caught:
        read_plan(path)
    assert time.perf_counter() - started < 10  # generous: refused by its size, before it is parsed
    message = _one_line(str(caught.value))
    assert message.startswith(f"The evidence plan {path} is ") and len(message) < 300
    assert f"a plan holds at most {MAX_SPECS} specs" in message
    # the same specs given as a table (a record's plan) are counted before any is read
    started = time.perf_counter()
    with pytest.raises(LodestarError) as caught:
        plan_from_dict({"format": PLAN, "specs": specs})
    assert time.perf_counter() - started < 10
    assert _one_line(str(caught.value)).startswith(f"The evidence plan holds 110,000 specs; a plan holds at most "
                                                   f"{MAX_SPECS} (one per layer of a run, which takes at most 64 "
                                                   "layers, a scene among them giving up to 4 index layers)")
    assert MAX_SPECS == 256


def test_repeated_layers_are_named_the_first_few_and_counted(tmp_path):
    specs = [EvidenceSpec(f"layer {i % 100}", "other", "index", "none") for i in range(200)]
    with pytest.raises(LodestarError) as caught:
        EvidencePlan(specs)
    assert _one_line(str(caught.value)) == ("Each layer may enter the plan once; repeated: layer 0, layer 1, layer 10, "
                                            "layer 11, layer 12 and 95 more.")
    unknown = EvidencePlan([EvidenceSpec(f"layer {i}", "other", "index", "none") for i in range(200)])
    with pytest.raises(LodestarError) as caught:
        unknown.check_layers(["aloh"])
    assert len(_one_line(str(caught.value))) < 400 and "layer 0, layer 1, layer 2, layer 3, layer 4 and 195 more" \
        in str(caught.value)


# ---------------------------------------------------------------------- scenario 9: plan fields of the wrong type
@pytest.mark.parametrize("field,value,expected", [
    ("weight", "heavy", "aloh: the weight must be a finite number, zero or more, not 'heavy'."),
    ("weight", None, "aloh: the weight must be a finite number, zero or more, not None."),
    ("weight", "Infinity", "aloh: the weight must be a finite number, zero or more, not inf."),
    ("weight", [[1.0]], "aloh: the weight must be a finite number, zero or more, not [[1.0]]."),
    ("weight", True, "aloh: the weight must be a finite number, zero or more, not True."),
    ("params", {"midpoint": "high", "spread": 10.0},
     "aloh: params['midpoint'] must be a number in the layer's units (after its transformation), not 'high'."),
    ("params", {"midpoint": 0.8, "spread": "NaN"},
     "aloh: params['spread'] must be a positive number (the membership's steepness, unitless), not nan."),
    ("params", {"spread": 10.0}, "aloh: the large membership needs params['midpoint']"),
    ("params", [["midpoint", 0.8]], "aloh: params must be a table (midpoint, spread, low, high, units, outside), not "
                                    "[['midpoint', 0.8]]."),
    ("layer", [["aloh"]], "An evidence spec's 'layer' must be the name of one of the run's layers, not [['aloh']]."),
    ("why", ["the", "AlOH"], "aloh: 'why' must be text, not ['the', 'AlOH']."),
    ("role", 3, "aloh: 'role' must be text, not 3."),
    ("colour", "red", "aloh: a spec has no field colour; its fields are layer, role, kind, transform, membership, "
                      "params, weight, why."),
])
def test_a_plan_field_of_the_wrong_type_is_one_line_naming_it(tmp_path, field, value, expected):
    spec = dict(SPEC, **{field: value})
    text = json.dumps({"format": PLAN, "by": "geologist", "specs": [spec]})
    path = tmp_path / "plan.json"
    path.write_text(text.replace('"Infinity"', "Infinity").replace('"NaN"', "NaN"), encoding="utf-8")
    with pytest.raises(LodestarError) as caught:
        read_plan(path)
    assert _one_line(str(caught.value)).startswith(f"{path}: {expected}")


def test_nested_units_and_a_wrong_gamma_are_one_line_each(tmp_path):
    units = dict(SPEC, transform="units", membership="identity", params={"units": [["LPZE"]]})
    with pytest.raises(LodestarError, match=r"^aloh: params\['units'\] must be a list of favourable unit names or "
                                            r"codes, not \[\['LPZE'\]\]\.$"):
        plan_from_dict({"format": PLAN, "specs": [units]})
    for gamma, shown in ((True, "True"), ("0.5", "'0.5'"), (None, "None")):
        with pytest.raises(LodestarError) as caught:
            plan_from_dict({"format": PLAN, "method": "gamma", "gamma": gamma, "specs": [SPEC]})
        assert str(caught.value) == f"The plan's gamma must be a number between 0 and 1, not {shown}."
    path = tmp_path / "deep.json"
    path.write_text(f'{{"format": "{PLAN}", "specs": {_deep(100_000)}}}', encoding="utf-8")
    with pytest.raises(LodestarError) as caught:
        read_plan(path)
    assert _one_line(str(caught.value)) == (f"The evidence plan {path} nests objects and lists deeper than 64 levels, "
                                            "which no file of its kind does; check that it is the right file.")


# --------------------------------------------------------------- scenario 10: numbers of a user's deposit model
@pytest.mark.parametrize("number", ["NaN", "Infinity", "1e308"])
@pytest.mark.parametrize("where,field", [(("evidence", 1, "near_m"), "near_m"),
                                         (("favourability", "fault_distance_m", "midpoint"), "midpoint"),
                                         (("favourability", "weights", "geophysics"), "geophysics")])
def test_a_user_deposit_model_with_a_number_not_finite_or_out_of_range_is_refused_at_load(tmp_path, number, where,
                                                                                          field):
    model = copy.deepcopy(model_by_id("porphyry_cu_mo_au"))  # the shipped models stay as they are
    model.update(id="my_porphyry", name="My porphyry")
    model["favourability"]["weights"] = {"geophysics": 1.0}  # a user's model may give weights (shipped ones do not)
    inner = model
    for key in where[:-1]:
        inner = inner[key]
    inner[where[-1]] = "__number__"
    folder = tmp_path / "deposit_models"
    folder.mkdir()
    (folder / "my_porphyry.json").write_text(json.dumps(model).replace('"__number__"', number), encoding="utf-8")
    models, problems = load_user_models(folder)
    assert models == [] and len(problems) == 1
    assert _one_line(problems[0]).startswith("my_porphyry.json: ") and field in problems[0]
    assert "not nan" in problems[0] or "not inf" in problems[0] or "not 1e+308" in problems[0]
    # the form's Save checks the same
    inner[where[-1]] = json.loads(number)
    with pytest.raises(LodestarError, match=field):
        save_user_model(model, tmp_path / "saved")
    assert not (tmp_path / "saved" / "my_porphyry.json").exists()


def test_a_user_deposit_model_nested_100000_deep_is_one_line(tmp_path):
    (tmp_path / "deep.json").write_text(_deep(100_000), encoding="utf-8")
    models, problems = load_user_models(tmp_path)
    assert models == [] and _one_line(problems[0]).startswith("deep.json: not readable as JSON")
    assert "nests objects and lists deeper than 64 levels" in problems[0]


# ------------------------------------------------------------------ scenario 13: an older or edited run record
def _replay(record, tmp_path, text: str | None = None):
    path = tmp_path / "edited" / "record.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text if text is not None else json.dumps(record), encoding="utf-8")
    with pytest.raises(LodestarError) as caught:
        run_analysis(AnalysisRequest([], "", tmp_path / "replay", replay=path))
    assert not (tmp_path / "replay").exists()  # refused before any folder is made
    return path, _one_line(str(caught.value))


@pytest.mark.parametrize("edit,expected", [
    (lambda r: r.pop("question"), "question (the question asked) is missing"),
    (lambda r: r["parameters"].pop("max_rounds"), "parameters.max_rounds (the verifier's rounds) is missing"),
    (lambda r: r["parameters"].pop("favourability"),
     "parameters.favourability (the favourability settings) is missing"),
    (lambda r: r.pop("backend"), "backend (the back-end's settings) is missing"),
    (lambda r: r.__setitem__("choices", ["A", "B"]), "choices (the answer choices, letter: text) must be a table, not "
                                                     "['A', 'B']"),
    (lambda r: r["parameters"].__setitem__("max_rounds", "3"),
     "parameters.max_rounds (the verifier's rounds) must be a whole number, not '3'"),
    (lambda r: r["knowledge"][0].__setitem__("score", None), "knowledge[0].score must be a number, not None"),
    (lambda r: r["trace"].__setitem__(0, 5), "trace[0] must be a table, not 5"),
])
def test_a_record_with_a_key_dropped_or_of_the_wrong_kind_is_one_line(recorded, tmp_path, edit, expected):
    record = copy.deepcopy(recorded[1])
    edit(record)
    path, message = _replay(record, tmp_path)
    assert message == (f"Replay refused: in the run record {path}, {expected}. Replay the record.json a run of this "
                       "version wrote, unedited, or run the analysis again.")


def test_several_problems_of_a_record_are_named_the_first_few_and_counted(recorded, tmp_path):
    record = copy.deepcopy(recorded[1])
    for key in ("question", "choices", "backend", "prompt_hashes", "knowledge"):
        record.pop(key)
    _, message = _replay(record, tmp_path)
    assert "question (the question asked) is missing; choices" in message and "; and 2 more. Replay" in message
    assert len(message) < 400


def test_a_sidecar_named_outside_the_records_folder_is_refused_and_never_read(recorded, tmp_path, monkeypatch):
    case, source = recorded
    record = copy.deepcopy(source)
    secret = Path(record["inputs"][0]["root"]).parent / "secret.txt"
    secret.write_text("not for Lodestar", encoding="utf-8")
    digest = hashlib.sha256(secret.read_bytes()).hexdigest()
    read = []
    real = records.sha256_file
    monkeypatch.setattr(records, "sha256_file", lambda path: read.append(Path(path).resolve()) or real(path))
    for name in ("../secret.txt", "../../etc/passwd"):
        record["inputs"][0]["sidecars"] = {name: digest}
        _, message = _replay(record, tmp_path)
        assert message.startswith(f"Replay refused: input {record['inputs'][0]['name']!r} names ")
        assert "which lies outside" in message and "the folder its files were read from" in message
    assert secret.resolve() not in read and Path("/etc/passwd") not in read


def test_a_record_nested_100000_deep_is_one_line(tmp_path):
    path, message = _replay(None, tmp_path, f'{{"format": "lodestar-run/1", "trace": {_deep(100_000)}}}')
    assert message == (f"The run record {path} nests objects and lists deeper than 64 levels, which no file of its "
                       "kind does; check that it is the right file.")
    path.write_text(f'{{"format": "lodestar-run/1", "trace": {_deep(500)}}}', encoding="utf-8")  # parses, too deep
    with pytest.raises(LodestarError, match="nests objects and lists deeper than 64 levels"):
        records.read_record(path)


def test_a_case_json_nested_deep_or_too_large_is_one_line(tmp_path):
    case = tmp_path / "case.json"
    case.write_text(f'{{"format": "lodestar-case/1", "layers": {_deep(100_000)}}}', encoding="utf-8")
    with pytest.raises(LodestarError) as caught:
        read_case(tmp_path)
    assert _one_line(str(caught.value)) == (f"The case {case} nests objects and lists deeper than 64 levels, which "
                                            "no file of its kind does; check that it is the right file.")
    case.write_text(json.dumps({"format": "lodestar-case/1", "question": "x" * 2 ** 21}), encoding="utf-8")
    with pytest.raises(LodestarError) as caught:
        read_case(tmp_path)
    assert _one_line(str(caught.value)) == (f"The case {case} is 2.0 MB, more than the case can be (1 MB: a case "
                                            "names its files and a question); check that it is the right file.")


# -------------------------------------------------------------------------------- scenario 16: a folder as legend
def test_a_folder_as_a_legend_is_one_line_in_case_json_and_in_a_run(tmp_path):
    folder = copy_sample(tmp_path / "sample")
    data = json.loads((folder / "case.json").read_text(encoding="utf-8"))
    entry = next(layer for layer in data["layers"] if layer.get("legend"))
    index = data["layers"].index(entry) + 1
    (folder / "legends").mkdir()
    entry["legend"] = "legends"
    (folder / "case.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(LodestarError) as caught:
        read_case(folder)
    assert _one_line(str(caught.value)) == (f"{folder / 'case.json'}: layer {index}'s 'legend' 'legends' is a folder, "
                                            "not a file; name the legend CSV itself (columns value,name).")
    # a layer given with a folder as its legend (the dock's legend, RASTERS with a legend): refused before any run
    spec = LayerSpec(folder / entry["path"], entry["role"], legend=folder / "legends")
    with pytest.raises(LodestarError) as caught:
        run_analysis(AnalysisRequest([spec], "Is there porphyry copper? A. Yes B. No", tmp_path / "run"))
    assert _one_line(str(caught.value)) == (f"The legend {folder / 'legends'} is a folder, not a file; name the "
                                            "legend CSV itself (columns value,name).")
    assert not (tmp_path / "run").exists()
    with pytest.raises(LodestarError, match="is a folder, not a file"):
        read_legend(folder / "legends")


# ------------------------------------------------------------------ scenario 17: Sentinel-2 scene metadata numbers
@pytest.mark.parametrize("value,shown", [("0", "0"), ("-10000", "-10000")])
def test_a_sentinel2_quantification_value_not_positive_is_one_line(tmp_path, value, shown):
    scene = st.write_scene("sentinel2", tmp_path / "scene")
    with rasterio.open(scene, "r+") as ds:
        ds.update_tags(BOA_QUANTIFICATION_VALUE=value)
    expected = (f"{scene.name}: its Sentinel-2 tag BOA_QUANTIFICATION_VALUE is {shown}; reflectance is (DN + "
                "BOA_ADD_OFFSET) / BOA_QUANTIFICATION_VALUE, which must be positive (10000 in every processing "
                "baseline so far): correct the tag, or remove it to use 10000.")
    with pytest.raises(LodestarError) as caught:
        recognise(RasterReader(scene))
    assert _one_line(str(caught.value)) == expected
    with pytest.raises(LodestarError) as caught:  # as a run's layer: refused before any folder is made
        run_analysis(AnalysisRequest([LayerSpec(scene, "other", "scene")], "Is there porphyry copper? A. Yes B. No",
                                     tmp_path / "run"))
    assert str(caught.value) == expected and not (tmp_path / "run").exists()


def test_a_sentinel2_offset_or_a_gdal_scale_that_is_no_number_is_one_line(tmp_path):
    scene = st.write_scene("sentinel2", tmp_path / "scene")
    with rasterio.open(scene, "r+") as ds:
        ds.update_tags(2, BOA_ADD_OFFSET="nan")
    with pytest.raises(LodestarError) as caught:
        recognise(RasterReader(scene))
    assert _one_line(str(caught.value)) == (f"{scene.name}: its Sentinel-2 tag BOA_ADD_OFFSET of band 2 is 'nan', not "
                                            "a finite number; correct the tag (the product's metadata gives it), or "
                                            "remove it to use 0.")
    path = tmp_path / "scaled.tif"
    with rasterio.open(path, "w", driver="GTiff", width=8, height=8, count=1, dtype="int16", crs=st.CRS,
                       transform=from_origin(500_000, 4_000_000, 30, 30)) as ds:
        ds.write(np.ones((1, 8, 8), dtype="int16"))
        ds.scales = [float("nan")]
    with pytest.raises(LodestarError) as caught:
        RasterReader(path)
    assert _one_line(str(caught.value)).startswith("scaled.tif: band 1's GDAL scale nan and offset 0 cannot scale its "
                                                   "values")
