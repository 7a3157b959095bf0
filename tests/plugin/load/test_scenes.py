"""Raw multispectral scenes in the chain: each sensor's scene, loaded as it comes, gives the deposit model's indices
(step 0, tool alteration_indices), clouds, water and vegetation masked with the share reported, the same answer and
targets as the same case given as index rasters, on the offline and the OpenAI-compatible back-end; the record
replays."""
from __future__ import annotations

import json

import numpy as np
import pytest
import rasterio
import scene_testdata as st

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest, BackendSettings
from lodestar.plugin.errors import LodestarError
from lodestar.plugin.raster_io import LayerSpec, RasterReader
from lodestar.plugin.request.case import read_case
from lodestar.plugin.runs.run_history import run_inputs
from lodestar.plugin.tools.scene_products import recognise
from lodestar.tests.fakes.openai_server import FakeOpenAIServer, by_role
from lodestar.tests.fakes.sta_cot_scripts import ACCEPT_A, LOCALIZATION, judge_targets

QUESTION = "Can porphyry copper deposits be detected here? A. Yes B. No"
CHOICES = {"A": "Yes", "B": "No"}
INDICES = {"aster": [("scene_aloh", "hydrothermal_alteration"), ("scene_ferric_iron", "iron_oxide"),
                     ("scene_silica", "silicification")],
           "landsat_oli": [("scene_clay", "argillic_alteration"), ("scene_iron_oxide", "iron_oxide")],
           "sentinel2": [("scene_clay", "argillic_alteration"), ("scene_iron_oxide", "iron_oxide")]}
PIXELS = st.SIZE * st.SIZE
SHARES = {"aster": {"cloud": 0.0, "water": 200 / PIXELS, "vegetation": 144 / PIXELS},
          "landsat_oli": {"cloud": 144 / PIXELS, "water": 200 / PIXELS, "vegetation": 144 / PIXELS},
          "sentinel2": {"cloud": 144 / PIXELS, "water": 200 / PIXELS, "vegetation": 144 / PIXELS}}


def _run(layers, out, settings=None, replay=None):
    request = AnalysisRequest(layers=layers, question=QUESTION, output_dir=out, choices=dict(CHOICES),
                              settings=settings or BackendSettings(), replay=replay)
    return run_analysis(request)


def _record(result) -> dict:
    return json.loads(result.outputs["record"].read_text(encoding="utf-8"))


def _core_in(frame) -> bool:
    x, y = st.TRANSFORM * (st.CORE[1] + 0.5, st.CORE[0] + 0.5)
    from shapely.geometry import Point

    return bool(frame.geometry.intersects(Point(x, y)).any())


@pytest.mark.parametrize("sensor", ["aster", "landsat_oli", "sentinel2"])
def test_a_scene_as_it_comes_gives_the_index_case_answer(sensor, tmp_path):
    scene = st.write_scene(sensor, tmp_path / "scene")
    result = _run([LayerSpec(scene, "other", "scene")], tmp_path / "run")
    record = _record(result)
    # step 0: the deposit model's indices, which the user never named, from the recognised product
    entry = record["scenes"][0]
    assert (entry["sensor"], entry["recognised_from"], entry["model"]) == (sensor, "product band names",
                                                                             "porphyry_cu_mo_au")
    assert entry["kinds"] == ["aloh", "ferric_iron", "silica"]
    assert entry["unavailable"] == ([] if sensor == "aster" else ["silica"])
    assert [(i["name"], i["role"]) for i in entry["indices"]] == INDICES[sensor]
    assert record["plan"][0]["tool"] == "alteration_indices" and record["plan"][0]["index"] == 0
    assert record["chain"][0]["observation"]["tool"] == "alteration_indices"
    assert [layer["name"] for layer in record["layers"]] == [name for name, _ in INDICES[sensor]]
    assert [(i["name"], i["role"], i["kind"]) for i in record["inputs"]] == [("scene", "other", "scene")]
    # masking: the share of each class in the record and in the step's text
    for name, share in SHARES[sensor].items():
        assert entry["masked"][name] == pytest.approx(share, abs=1e-4)
    total = sum(SHARES[sensor].values())
    assert entry["masked"]["total"] == pytest.approx(total, abs=1e-4)
    assert f"Masked {total:.1%} of the scene's pixels" in record["chain"][0]["observation"]["rationale"]
    with rasterio.open(result.outputs["record"].parent / entry["indices"][0]["file"]) as ds:
        written = ds.read(1)
        assert ds.tags()["LODESTAR_KIND"] == "aloh" and ds.nodata == st.NODATA_INDEX
    assert np.array_equal(written == st.NODATA_INDEX, st.masked(sensor))
    # the run's layers read again (full-resolution surface): the indices in the run folder stand for the scene
    assert [(s.name, s.role, s.path.is_file()) for s in run_inputs(tmp_path / "run")] == [
        (name, role, True) for name, role in INDICES[sensor]]
    # the same case given as index rasters: same answer, same targets
    layers = [LayerSpec(path, role, name) for path, role, name in st.write_index_case(sensor, tmp_path / "idx",
                                                                                      "scene")]
    given = _run(layers, tmp_path / "given")
    assert result.answer == given.answer == "A"
    assert _core_in(result.prospectivity) and _core_in(given.prospectivity)
    assert len(result.prospectivity) == len(given.prospectivity)
    for ours, theirs in zip(result.prospectivity.geometry, given.prospectivity.geometry):
        assert ours.symmetric_difference(theirs).area <= 0.02 * theirs.area
    # replay: the indices computed again from the recorded scene, the same outputs
    replayed = _run([], tmp_path / "replay", replay=result.outputs["record"])
    again = _record(replayed)
    assert replayed.answer == "A"
    assert again["replay_check"]["indices_different"] == [] and again["replay_check"]["different"] == []
    assert [i["sha256"] for i in again["scenes"][0]["indices"]] == [i["sha256"] for i in entry["indices"]]


def _plan(aloh: str, other: str) -> dict:
    return {"steps": [
        {"purpose": "Mark the phyllic core on the AlOH index", "layers": [aloh], "layers_why": "AlOH absorption",
         "tool": "color_regions", "tool_why": "threshold the highest values", "expected": "one compact anomaly",
         "params": {"method": "percentile", "value": 97, "max_regions": 1}, "evidence": "phyllic_core",
         "level": "critical"},
        {"purpose": "Mark the second alteration", "layers": [other], "layers_why": "zoned system",
         "tool": "color_regions", "tool_why": "threshold", "expected": "an anomaly at the core",
         "params": {"method": "percentile", "value": 97, "max_regions": 1}, "evidence": "zoned_alteration",
         "level": "critical"},
        {"purpose": "Relate the zones", "layers": [], "layers_why": "earlier zones", "tool": "spatial_relations",
         "tool_why": "overlap", "expected": "they coincide", "evidence": "zoned_alteration", "level": "critical"}]}


def _script(aloh: str, other: str):
    def act(request):
        step = request.data["step"]
        return {"tool": step["tool"], "layers": step["layers"], "params": step.get("params", {})}

    evidence = {"evidence": [{"layer": aloh, "transform": "percentile_rank", "membership": "identity", "weight": 2.0,
                              "why": "the phyllic shell"},
                             {"layer": other, "transform": "percentile_rank", "membership": "identity",
                              "weight": 1.0, "why": "the silica cap"}], "rationale": "alteration indices"}
    return by_role({"planner": [_plan(aloh, other)], "executor/act": act,
                    "executor/observe": lambda request: {"rationale": "clear", "sub_inference": "Yes",
                                                         "global_inference": "continue"},
                    "verifier": [ACCEPT_A], "localization": lambda request: LOCALIZATION,
                    "evidence": lambda request: evidence, "verifier/targets": judge_targets})


def test_the_model_back_end_plans_on_the_scene_indices(tmp_path):
    scene = st.write_scene("aster", tmp_path / "scene")
    index_case = [LayerSpec(p, role, name) for p, role, name in st.write_index_case("aster", tmp_path / "idx",
                                                                                    "scene")]
    answers = []
    for layers, out in (([LayerSpec(scene, "other", "scene")], "run"), (index_case, "given")):
        with FakeOpenAIServer(_script("scene_aloh", "scene_silica")) as server:
            settings = BackendSettings(backend="openai", base_url=server.base_url, api_key="sk-test",
                                       models={"planner": "p", "executor": "e", "verifier": "v"},
                                       retry_backoff_s=0.01, max_retries=1, timeout_s=10.0)
            result = _run(layers, tmp_path / out, settings)
            planner = server.chat_requests[0]
        assert [layer["name"] for layer in planner.data["layers"]] == ["scene_aloh", "scene_ferric_iron",
                                                                        "scene_silica"]
        answers.append(result)
    ours, given = answers
    assert ours.answer == given.answer == "A"
    assert ours.chain[0]["observation"]["tool"] == "alteration_indices"
    assert [n["observation"]["zone_ids"] for n in ours.chain[1:]] == [n["observation"]["zone_ids"] for n in given.chain]
    assert _core_in(ours.zones)


def test_the_users_choice_names_a_scene_its_metadata_does_not(tmp_path):
    """A nine-band ASTER stack with no band names or wavelengths: the "sensor" key in case.json tells it; without it
    it stays an ordinary layer."""
    values = st.read_back("aster")
    profile = dict(driver="GTiff", width=st.SIZE, height=st.SIZE, count=9, dtype="float32", crs=st.CRS,
                   transform=st.TRANSFORM)
    path = tmp_path / "case" / "stack.tif"
    path.parent.mkdir()
    with rasterio.open(path, "w", **profile) as ds:
        for i in range(1, 10):
            ds.write(values[f"b{i}"].astype("float32"), i)
    assert recognise(RasterReader(path)) is None
    (path.parent / "case.json").write_text(json.dumps({
        "format": "lodestar-case/1", "id": "stack", "question": QUESTION, "choices": CHOICES,
        "layers": [{"path": "stack.tif", "role": "other", "sensor": "aster", "name": "scene"}]}))
    case = read_case(path.parent)
    assert case.layers[0].sensor == "aster"
    result = _run(case.layers, tmp_path / "run")
    entry = _record(result)["scenes"][0]
    assert entry["recognised_from"] == "standard 9-band order" and entry["unavailable"] == ["silica"]
    assert [i["name"] for i in entry["indices"]] == ["scene_aloh", "scene_ferric_iron"]
    assert result.answer == "A"


def test_band_names_of_two_sensors_need_the_users_choice(tmp_path):
    path = tmp_path / "b.tif"
    profile = dict(driver="GTiff", width=8, height=8, count=4, dtype="uint16", crs=st.CRS, transform=st.TRANSFORM)
    with rasterio.open(path, "w", **profile) as ds:
        for i in range(1, 5):
            ds.write(np.full((8, 8), 1000 * i, dtype="uint16"), i)
            ds.set_band_description(i, f"B0{i + 1}")
    with pytest.raises(LodestarError, match="fit both .* choose the sensor"):
        recognise(RasterReader(path))
    assert recognise(RasterReader(path), "sentinel2").preset.name == "sentinel2"


def test_a_scene_that_cannot_show_the_models_indices_is_refused_and_leaves_no_folder(tmp_path):
    scene = st.write_scene("landsat_oli", tmp_path / "scene")
    request = AnalysisRequest(layers=[LayerSpec(scene, "other", "scene")], output_dir=tmp_path / "run",
                              question="Can Carlin-type gold deposits be detected here? A. Yes B. No",
                              choices=dict(CHOICES))
    with pytest.raises(LodestarError, match=r"\(silica, carbonate\).*scene \(landsat_oli\) cannot show silica, "
                                            r"carbonate"):
        run_analysis(request)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("sensor, centres, units", [
    ("landsat_oli", [w * 1000 for w in st.LANDSAT_UM], "nm"),  # 7 bands: Sentinel-2 matches 7 of its 12 too
    ("aster", list(st.ASTER_UM), "micrometers"),
])
def test_band_wavelengths_tell_the_sensor(tmp_path, sensor, centres, units):
    """ENVI-style band wavelengths with no product band names: the sensor whose bands they fit best, all of them."""
    path = tmp_path / "w.tif"
    profile = dict(driver="GTiff", width=8, height=8, count=len(centres), dtype="float32", crs=st.CRS,
                   transform=st.TRANSFORM)
    with rasterio.open(path, "w", **profile) as ds:
        for i, centre in enumerate(centres, start=1):
            ds.write(np.full((8, 8), 0.1 * i, dtype="float32"), i)
            ds.update_tags(i, wavelength=f"{centre:g}", wavelength_units=units)
    scene = recognise(RasterReader(path))
    assert (scene.preset.name, scene.how, scene.scaling) == (sensor, "band wavelengths", {})
    assert scene.bands == {f"b{i}": i for i in range(1, len(centres) + 1)}
