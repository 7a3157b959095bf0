"""lodestar:analyze steered by the geologist: DEPOSIT_MODEL (by index or id, a user model of the profile too) and
EVIDENCE_PLAN (recorded as the geologist's), through real Processing."""
from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "resources" / "sample" / "porphyry-demo"


def _outputs(folder: Path) -> dict:
    return {key: str(folder / name) for key, name in (
        ("OUTPUT_ZONES", "zones.gpkg"), ("OUTPUT_NODES", "nodes.gpkg"), ("OUTPUT_EDGES", "edges.gpkg"),
        ("OUTPUT_PROSPECTIVITY", "prospectivity.gpkg"), ("OUTPUT_REPORT", "report.html"),
        ("OUTPUT_RECORD", "record.json"))}


def _record(result) -> dict:
    return json.loads(Path(result["OUTPUT_RECORD"]).read_text(encoding="utf-8"))


@pytest.fixture
def user_model(qgis_app):
    """A deposit model of the user's in the test profile's folder (removed afterwards)."""
    from lodestar.plugin.reason.deposit_models import save_user_model
    from lodestar.plugin.reason.knowledge import model_by_id
    from lodestar.processing.mapping_params import user_models_folder

    folder = user_models_folder()
    assert ".qgis-settings" in folder.resolve().parts, f"not pytest-qgis's test profile: {folder}"
    existed = folder.exists()
    model = dict(model_by_id("orogenic_gold"), id="my_orogenic", name="My orogenic gold", keywords=["bluebird"])
    path = save_user_model(model, folder)
    yield model
    path.unlink()
    if not existed:
        shutil.rmtree(folder)


def test_deposit_model_picks_a_model_the_question_does_not_name(run, tmp_path):
    from qgis.core import QgsApplication

    alg = QgsApplication.processingRegistry().createAlgorithmById("lodestar:analyze")
    options = alg.parameterDefinition("DEPOSIT_MODEL").options()
    assert options[0].startswith("automatic") and options.index("skarn: Skarn (Cu, Au, Zn-Pb, W, Fe)") >= 1
    question = json.loads((SAMPLE / "case.json").read_text(encoding="utf-8"))["question"]
    assert "skarn" not in question.lower()
    by_index = run("lodestar:analyze", {"CASE": str(SAMPLE / "case.json"), "DEPOSIT_MODEL": options.index(
        "skarn: Skarn (Cu, Au, Zn-Pb, W, Fe)"), **_outputs(tmp_path / "index")})
    knowledge = _record(by_index)["knowledge"]
    assert knowledge[0]["id"] == "skarn" and knowledge[0]["chosen"] is True
    assert knowledge[1]["id"] == "porphyry_cu_mo_au"
    by_id = run("lodestar:analyze", {"CASE": str(SAMPLE / "case.json"), "DEPOSIT_MODEL": "skarn",
                                     **_outputs(tmp_path / "id")})
    assert _record(by_id)["knowledge"] == knowledge
    automatic = run("lodestar:analyze", {"CASE": str(SAMPLE / "case.json"), **_outputs(tmp_path / "auto")})
    assert _record(automatic)["knowledge"][0]["id"] == "porphyry_cu_mo_au"


def test_a_user_model_in_the_profile_is_offered_and_followed(run, user_model, tmp_path):
    from qgis.core import QgsApplication

    alg = QgsApplication.processingRegistry().createAlgorithmById("lodestar:analyze")
    options = alg.parameterDefinition("DEPOSIT_MODEL").options()
    assert options[-1] == "my_orogenic: My orogenic gold (yours)"
    result = run("lodestar:analyze", {"CASE": str(SAMPLE / "case.json"), "DEPOSIT_MODEL": len(options) - 1,
                                      **_outputs(tmp_path)})
    knowledge = _record(result)["knowledge"]
    assert knowledge[0]["id"] == "my_orogenic" and knowledge[0]["model"]["keywords"] == ["bluebird"]


def test_evidence_plan_replaces_the_agents_and_is_recorded_as_the_geologists(run, tmp_path):
    from lodestar.plugin.favourability.plan_file import EvidencePlan, recorded_plan, write_plan

    agent = _record(run("lodestar:analyze", {"CASE": str(SAMPLE / "case.json"), **_outputs(tmp_path / "agent")}))
    plan = recorded_plan(agent)
    specs = [replace(s, weight=s.weight * 3) if s.role == "silicification" else s for s in plan.specs]
    path = write_plan(EvidencePlan(specs), tmp_path / "plan.json")
    mine = _record(run("lodestar:analyze", {"CASE": str(SAMPLE / "case.json"), "EVIDENCE_PLAN": str(path),
                                            **_outputs(tmp_path / "mine")}))
    kept = mine["parameters"]["favourability"]["evidence_plan"]
    assert kept["by"] == "geologist" and kept["specs"] == [s.to_dict() for s in specs]
    weights = {row["layer"]: row["weight"] for row in mine["favourability"]["weights"]}
    agent_weights = {row["layer"]: row["weight"] for row in agent["favourability"]["weights"]}
    assert weights["ASTER TIR quartz index"] == 3 * agent_weights["ASTER TIR quartz index"]


def test_a_bad_evidence_plan_is_refused_with_what_to_do(run, tmp_path):
    from qgis.core import QgsProcessingException

    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"format": "something else"}), encoding="utf-8")
    with pytest.raises(QgsProcessingException, match="Not a Lodestar evidence plan"):
        run("lodestar:analyze", {"CASE": str(SAMPLE / "case.json"), "EVIDENCE_PLAN": str(path),
                                 **_outputs(tmp_path / "out")})
