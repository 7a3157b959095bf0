"""lodestar:analyze through real Processing: a case or layers + roles in, shapefile / GeoPackage / report /
record out; replay; bad input messages."""
from __future__ import annotations

import json
from pathlib import Path

import geopandas as gpd
import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "resources" / "sample" / "porphyry-demo"


def _outputs(folder: Path, vector_ext: str = "gpkg") -> dict:
    return {"OUTPUT_ZONES": str(folder / f"zones.{vector_ext}"), "OUTPUT_NODES": str(folder / f"nodes.{vector_ext}"),
            "OUTPUT_EDGES": str(folder / f"edges.{vector_ext}"),
            "OUTPUT_PROSPECTIVITY": str(folder / f"prospectivity.{vector_ext}"),
            "OUTPUT_REPORT": str(folder / "report.html"), "OUTPUT_RECORD": str(folder / "record.json")}


def test_parameters_have_help(run):
    from qgis.core import QgsApplication

    alg = QgsApplication.processingRegistry().algorithmById("lodestar:analyze")
    assert alg is not None and "STA-CoT" in alg.shortHelpString()
    for param in alg.parameterDefinitions():
        assert param.help(), f"analyze.{param.name()} has no help text"
    names = {p.name() for p in alg.parameterDefinitions()}
    assert {"CASE", "RASTERS", "ROLES", "QUESTION", "BACKEND", "AUTHCFG", "MAX_ROUNDS", "REPLAY", "REFINE_WITH_SAM",
            "OUTPUT_PROSPECTIVITY", "OUTPUT_REPORT", "OUTPUT_RECORD"} <= names


def test_case_to_shapefile_and_replay(run, tmp_path):
    result = run("lodestar:analyze", {"CASE": str(SAMPLE / "case.json"), **_outputs(tmp_path / "a", "shp")})
    assert (result["ANSWER"], result["VALID"], result["ROUNDS"]) == ("A", 1, 1)
    polygons = gpd.read_file(result["OUTPUT_PROSPECTIVITY"])
    assert len(polygons) >= 1 and list(polygons["rank"]) == list(range(1, len(polygons) + 1))
    deposits = gpd.read_file(SAMPLE / "deposits.geojson").to_crs(polygons.crs)
    assert polygons.unary_union.covers(deposits.geometry.iloc[0])
    zones = gpd.read_file(result["OUTPUT_ZONES"])
    assert {"zone_id", "layer", "role", "area_m2"} <= set(zones.columns) and len(zones) >= 4
    report = Path(result["OUTPUT_REPORT"]).read_text(encoding="utf-8")
    assert "Answer: <b>A. Yes</b>" in report
    record = json.loads(Path(result["OUTPUT_RECORD"]).read_text(encoding="utf-8"))
    assert record["case_id"] == "porphyry-demo-01" and record["metrics"]["recall"] == 1.0

    again = run("lodestar:analyze", {"REPLAY": result["OUTPUT_RECORD"], **_outputs(tmp_path / "b", "shp")})
    assert again["ANSWER"] == "A"
    replayed = gpd.read_file(again["OUTPUT_PROSPECTIVITY"])
    assert replayed.geometry.equals(polygons.geometry)


def test_layers_and_roles(run, tmp_path):
    case = json.loads((SAMPLE / "case.json").read_text(encoding="utf-8"))
    rasters = [str(SAMPLE / layer["path"]) for layer in case["layers"][1:4]]
    roles = ",".join(layer["role"] for layer in case["layers"][1:4])
    result = run("lodestar:analyze", {"RASTERS": rasters, "ROLES": roles,
                                      "QUESTION": "Can porphyry copper deposits be detected? A. Yes B. No",
                                      **_outputs(tmp_path)})
    assert result["ANSWER"] == "A"
    record = json.loads(Path(result["OUTPUT_RECORD"]).read_text(encoding="utf-8"))
    assert [i["role"] for i in record["inputs"]] == roles.split(",")
    assert len(gpd.read_file(result["OUTPUT_PROSPECTIVITY"])) >= 1


def test_a_raster_with_a_legend_of_units_beside_it_is_guessed_a_geological_map(qgis_app, tmp_path):
    import shutil

    from qgis.core import QgsRasterLayer

    from lodestar.processing.layer_export import guessed_role

    murchison = ROOT / "tests" / "data" / "murchison-gold"
    shutil.copy(murchison / "greenstone.tif", tmp_path / "belts.tif")  # a name that tells no role
    assert guessed_role(QgsRasterLayer(str(tmp_path / "belts.tif"), "belts")) == "other"
    shutil.copy(murchison / "greenstone_legend.csv", tmp_path / "belts_legend.csv")
    assert guessed_role(QgsRasterLayer(str(tmp_path / "belts.tif"), "belts")) == "geological_map"


def test_a_real_district_from_its_files_alone(run, tmp_path):
    """Murchison's bedrock map (named after its rock, its legend beside it) and faults, roles left to the guess: the
    orogenic gold model is tested on both, as with the case file (before, the map was 'other' and the run picked an
    epithermal model it could not test). The known deposits come as a CSV of longitudes and latitudes (before, it
    gave 0 deposits and the run was validated against none without a word)."""
    murchison = ROOT / "tests" / "data" / "murchison-gold"
    deposits = gpd.read_file(murchison / "gold.gpkg").to_crs("EPSG:4326")
    deposits.assign(longitude=deposits.geometry.x, latitude=deposits.geometry.y).drop(columns="geometry").to_csv(
        tmp_path / "gold.csv", index=False)
    result = run("lodestar:analyze", {"RASTERS": [str(murchison / "greenstone.tif"), str(murchison / "faults.gpkg")],
                                      "QUESTION": "Is there gold here?", "DEPOSITS": str(tmp_path / "gold.csv"),
                                      **_outputs(tmp_path)})
    record = json.loads(Path(result["OUTPUT_RECORD"]).read_text(encoding="utf-8"))
    assert [i["role"] for i in record["inputs"]] == ["geological_map", "structure"]
    assert record["knowledge"][0]["id"] == "orogenic_gold"
    hosts = [step["params"]["units"] for step in record["plan"] if step["tool"] == "categorical"]
    assert hosts == [["greenstone (Archaean greenstone belt bedrock)"]]  # not "outside the greenstone belts"
    assert (result["ANSWER"], result["VALID"]) == ("A", 1)
    targets = gpd.read_file(result["OUTPUT_PROSPECTIVITY"])
    held = deposits.to_crs(targets.crs).geometry.within(targets.unary_union).sum()
    assert (record["metrics"]["deposits"], record["metrics"]["found"]) == (255, held)
    # the work list of 30 and the rest of the top share, which stays in the surface: of 255, 200 or more in all (204
    # with the case file, when every target was drawn)
    work = record["favourability"]["work_list"]
    assert len(targets) == work["count"] == 30 and held + work["left"]["known"] >= 200
    equal = record["metrics"]["equal_area"]  # ranked by what they hold per km2, the best 10 lose nothing
    assert equal["rank"] == 10 and equal["targets"] >= equal["surface"]


def test_a_map_and_its_polygons_named_alike_are_told_apart_by_their_file_names(run, tmp_path):
    """Murchison's bedrock map as a raster and as polygons, both 'greenstone' after their files, with the faults:
    each takes its file name (before, the run was refused: "Layer names must be unique"), and both are evidence,
    sharing the host-rock weight (before, each took all of it: the map counted twice)."""
    import shutil

    import rasterio
    from rasterio.features import shapes
    from shapely.geometry import shape

    murchison = ROOT / "tests" / "data" / "murchison-gold"
    for name in ("greenstone.tif", "greenstone_legend.csv", "faults.gpkg"):
        shutil.copy(murchison / name, tmp_path / name)
    with rasterio.open(murchison / "greenstone.tif") as source:
        belts = [shape(geometry) for geometry, code in shapes(source.read(1), transform=source.transform)
                 if code == 1]
        crs = source.crs
    gpd.GeoDataFrame({"unit": ["greenstone"] * len(belts)}, geometry=belts, crs=crs).to_file(
        tmp_path / "greenstone.gpkg", driver="GPKG")
    rasters = [str(tmp_path / name) for name in ("greenstone.tif", "greenstone.gpkg", "faults.gpkg")]
    result = run("lodestar:analyze", {"RASTERS": rasters, "QUESTION": "Where should we explore for gold?",
                                      **_outputs(tmp_path / "out")})
    record = json.loads(Path(result["OUTPUT_RECORD"]).read_text(encoding="utf-8"))
    assert [(i["name"], i["role"]) for i in record["layers"]] == [
        ("greenstone.tif", "geological_map"), ("greenstone.gpkg", "geological_map"), ("faults", "structure")]
    weights = {w["layer"]: w["weight"] for w in record["favourability"]["weights"]}
    assert set(weights) == {"greenstone.tif", "greenstone.gpkg", "faults"}
    assert weights["greenstone.tif"] == weights["greenstone.gpkg"] == pytest.approx(0.5)  # one criterion, weight 1
    assert (result["ANSWER"], result["VALID"]) == ("A", 1)


def test_a_gold_question_on_great_basin_files_tests_the_carlin_model_its_survey_points_to(run, tmp_path):
    """"Is there gold here?" over the Great Basin's files as its survey ships them (As and Sb stream-sediment classes,
    As with a table of class counts beside it, a potassium layer of the same survey, fault distance classes, the
    fault lines, the bare-code geology with its carbonate units named): orogenic and Carlin-type gold tie on the
    question and the roles, the As-Sb survey names Carlin-type (before, the orogenic model was followed, found no
    alteration on its shears and answered No with no map). The class counts are no legend of units (before, the
    run was refused for it), and potassium is no Carlin-type pathfinder (before, it was an As-Sb anomaly step)."""
    import shutil

    import rasterio

    great_basin = ROOT / "tests" / "data" / "great-basin-gold"
    files = ["geologia.tif", "geologia_legend.csv", "as_rcl.tif", "sb_rcl.tif", "falha_rcl.tif", "gbfaults3.gpkg"]
    for name in files:
        shutil.copy(great_basin / name, tmp_path / name)
    (tmp_path / "as_rcl_legend.csv").write_text("VALUE,COUNT\n1,13\n2,44\n3,252\n", encoding="utf-8")
    with rasterio.open(great_basin / "sb_rcl.tif") as source:
        profile, values = source.profile, source.read(1)
    with rasterio.open(tmp_path / "k_rcl.tif", "w", **profile) as target:
        target.write(values[::-1, ::-1], 1)  # a surface with its highs away from the antimony highs
    rasters = [str(tmp_path / name) for name in files if not name.endswith(".csv")] + [str(tmp_path / "k_rcl.tif")]
    result = run("lodestar:analyze", {"RASTERS": rasters, "QUESTION": "Is there gold here?",
                                      "DEPOSITS": str(great_basin / "TrainGP.gpkg"),  # counted, none fitted on
                                      "FAVOURABLE_UNITS": "LPZE, UPZC, LPZ", **_outputs(tmp_path / "out")})
    record = json.loads(Path(result["OUTPUT_RECORD"]).read_text(encoding="utf-8"))
    assert [k["id"] for k in record["knowledge"][:2]] == ["carlin_type_gold", "orogenic_gold"]
    assert (result["ANSWER"], result["VALID"]) == ("A", 1)
    layers = {info["name"]: info for info in record["layers"]}
    assert (layers["as_rcl"]["role"], layers["as_rcl"]["kind"]) == ("geochemistry", "index")
    assert layers["k_rcl"]["role"] == "geochemistry"
    assert all("k_rcl" not in step["layers"] for step in record["plan"])
    assert record["favourability"]["unused"] == [{"layer": "k_rcl", "reason": "Potassium is not a pathfinder of "
                                                  "Carlin-type sediment-hosted gold (Au, As, Sb, Hg, Tl)."}]
    targets = gpd.read_file(result["OUTPUT_PROSPECTIVITY"])
    deposits = gpd.read_file(great_basin / "TrainGP.gpkg").to_crs(targets.crs)
    # of 32: 23 since the surface is the weighted mean of ranks with equal item weights (24-25 with the weights
    # once tuned on this district), in the work list of 30 and the rest of the top share left in the surface
    left = record["favourability"]["work_list"]["left"]
    assert len(targets) == 30 and left["count"] > 0
    assert deposits.geometry.within(targets.unary_union).sum() + left["known"] >= 23


def test_choices_are_read_from_the_question(run, tmp_path):
    """As in the dock: a question listing its options gets those choices (Yes / No only when none are listed)."""
    question = ("Which hydrothermal alteration is present? Answer: A. Argillic (clay, sericite) B. Propylitic "
                "C. Silicification D. None.")
    result = run("lodestar:analyze", {"CASE": str(SAMPLE / "case.json"), "QUESTION": question, **_outputs(tmp_path)})
    record = json.loads(Path(result["OUTPUT_RECORD"]).read_text(encoding="utf-8"))
    assert record["question"] == question
    assert record["choices"] == {"A": "Argillic (clay, sericite)", "B": "Propylitic", "C": "Silicification",
                                 "D": "None"}
    # answered offline with an alteration, in the question's own choices (not "Yes")
    assert result["ANSWER"] == record["result"]["answer"] == "C" and result["VALID"] == 1


@pytest.mark.parametrize("question", [
    "Given these layers, can mineral deposits be detected in this area? Answer: A. Yes B. No.",
    "Where in this area are mineral deposits most likely, and is any part of it worth exploring? Answer: A. Yes, "
    "there are targets worth exploring B. No, nothing stands out.",
])
def test_the_yes_no_presets_are_answered_with_targets(run, tmp_path, question):
    result = run("lodestar:analyze", {"CASE": str(SAMPLE / "case.json"), "QUESTION": question, **_outputs(tmp_path)})
    assert result["ANSWER"] == "A" and result["VALID"] == 1
    assert len(gpd.read_file(result["OUTPUT_PROSPECTIVITY"])) >= 1


def test_a_question_the_offline_reasoner_cannot_answer_is_refused_and_leaves_no_run_folder(run, tmp_path):
    from qgis.core import QgsProcessingException, QgsProcessingUtils

    temp = Path(QgsProcessingUtils.tempFolder())
    before = set(temp.glob("lodestar-analyze-*"))
    with pytest.raises(QgsProcessingException, match="names no deposit, commodity, target or alteration"):
        run("lodestar:analyze", {"CASE": str(SAMPLE / "case.json"), "QUESTION": "How old is the granite?",
                                 **_outputs(tmp_path)})
    assert set(temp.glob("lodestar-analyze-*")) == before
    assert list(tmp_path.iterdir()) == []  # no output written


def test_favourable_low_names_or_positions_replace_the_guess(run, tmp_path):
    case = json.loads((SAMPLE / "case.json").read_text(encoding="utf-8"))
    rasters = [str(SAMPLE / layer["path"]) for layer in case["layers"][1:4]]
    roles = ",".join(layer["role"] for layer in case["layers"][1:4])
    names = [Path(path).stem for path in rasters]  # layers loaded from files take the file's name
    result = run("lodestar:analyze", {"RASTERS": rasters, "ROLES": roles, "FAVOURABLE_LOW": f" {names[2]} ,1",
                                      "QUESTION": "Can porphyry copper deposits be detected? A. Yes B. No",
                                      **_outputs(tmp_path)})
    record = json.loads(Path(result["OUTPUT_RECORD"]).read_text(encoding="utf-8"))
    assert [(i["name"], i["favourable"]) for i in record["inputs"]] == [
        (names[0], "low"), (names[1], "high"), (names[2], "low")]


@pytest.mark.parametrize("favourable_low,message", [
    ("gravity", r"FAVOURABLE_LOW: 'gravity' is not one of the layers.*1\. aloh, 2\. silica"),
    ("4", r"'4' is not one of the layers"),
    ("faults", r"faults is a vector layer"),
])
def test_favourable_low_bad_names(run, tmp_path, favourable_low, message):
    from qgis.core import QgsProcessingException

    params = {"RASTERS": [str(SAMPLE / "aloh.tif"), str(SAMPLE / "silica.tif"), str(SAMPLE / "faults.geojson")],
              "ROLES": "hydrothermal_alteration,silicification,structure", "FAVOURABLE_LOW": favourable_low,
              "QUESTION": "Porphyry? A. Yes B. No"}
    with pytest.raises(QgsProcessingException, match=message):
        run("lodestar:analyze", {**params, **_outputs(tmp_path)})
    assert not (tmp_path / "record.json").exists()


@pytest.mark.parametrize("params,message", [
    ({}, "Give a CASE"),
    ({"RASTERS": ["aloh.tif"], "ROLES": "silicification,propylitic_alteration",
      "QUESTION": "Porphyry? A. Yes B. No"}, "ROLES lists 2 role"),
    ({"RASTERS": ["aloh.tif"], "ROLES": "gold", "QUESTION": "Porphyry? A. Yes B. No"}, "Unknown layer role 'gold'"),
    ({"RASTERS": ["aloh.tif"], "ROLES": "hydrothermal_alteration"}, "Ask a question in QUESTION"),
    ({"CASE": "case.json", "BACKEND": 1}, "base URL"),
    ({"CASE": "case.json", "REFINE_WITH_SAM": True}, "SAM_CHECKPOINT"),
    ({"QUESTION": "Porphyry? A. Yes B. No"}, r"at least one layer in RASTERS"),  # names the parameter key
])
def test_bad_input_messages(run, tmp_path, params, message):
    from qgis.core import QgsProcessingException

    params = dict(params)
    if "RASTERS" in params:
        params["RASTERS"] = [str(SAMPLE / name) for name in params["RASTERS"]]
    if "CASE" in params:
        params["CASE"] = str(SAMPLE / params["CASE"])
    with pytest.raises(QgsProcessingException, match=message):
        run("lodestar:analyze", {**params, **_outputs(tmp_path)})
    assert not (tmp_path / "record.json").exists()


def test_outputs_default_to_the_run_folder(run):
    result = run("lodestar:analyze", {"CASE": str(SAMPLE / "case.json")})
    assert result["ANSWER"] == "A"
    polygons = gpd.read_file(result["OUTPUT_PROSPECTIVITY"])
    assert len(polygons) >= 1
    assert Path(result["OUTPUT_REPORT"]).stat().st_size > 0 and Path(result["OUTPUT_RECORD"]).exists()
