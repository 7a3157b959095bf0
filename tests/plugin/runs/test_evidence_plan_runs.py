"""The geologist steers a run: their evidence plan replaces the agent's (recorded as theirs, replayed byte for byte),
Re-run with this plan re-makes the surface and targets without the chain, the deposit model of their choice is
followed, and a deposit model they wrote loads and drives a run."""
from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import rasterio

from lodestar.models import run_analysis
from lodestar.plugin.errors import LodestarError
from lodestar.plugin.favourability.plan_file import EvidencePlan, read_plan, recorded_plan, write_plan
from lodestar.plugin.reason.deposit_models import load_user_models, ranked_models, save_user_model
from lodestar.plugin.reason.knowledge import model_by_id
from lodestar.plugin.request.case import read_case
from lodestar.plugin.request.record import read_record
from lodestar.plugin.request.request import BackendValues, build_request
from lodestar.plugin.runs.replan import replan
from lodestar.tests.fakes.sta_cot_scripts import copy_sample

ROOT = Path(__file__).resolve().parents[3]
COMPARED = ("zones.gpkg", "nodes.gpkg", "edges.gpkg", "prospectivity.gpkg", "favourability.tif", "weights.csv",
            "map.png")


def _digests(folder: Path, names=COMPARED) -> dict:
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in names}


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    return read_case(copy_sample(tmp_path_factory.mktemp("case")))


@pytest.fixture(scope="module")
def agent_run(case, tmp_path_factory):
    folder = tmp_path_factory.mktemp("agent") / "run"
    request = build_request(case.layers, case.question, folder, BackendValues(), choices=case.choices,
                            case_id=case.id, deposits=case.deposits)
    return run_analysis(request)


def _geologists_plan(agent_run) -> EvidencePlan:
    """The agent's plan with one weight doubled and the fault distance's midpoint halved."""
    plan = recorded_plan(read_record(agent_run.outputs["record"]))
    specs = []
    for spec in plan.specs:
        if spec.kind == "vector" and spec.transform == "distance_m":
            spec = replace(spec, params=dict(spec.params, midpoint=spec.params["midpoint"] / 2))
        elif spec.role == "hydrothermal_alteration":
            spec = replace(spec, weight=spec.weight * 2)
        specs.append(spec)
    return EvidencePlan(specs, by="geologist")


def test_the_geologists_plan_replaces_the_agents_and_replays_byte_for_byte(case, agent_run, tmp_path):
    plan = _geologists_plan(agent_run)
    assert any(s.transform == "distance_m" for s in plan.specs)
    path = write_plan(plan, tmp_path / "plan.json")
    request = build_request(case.layers, case.question, tmp_path / "run", BackendValues(), choices=case.choices,
                            case_id=case.id, deposits=case.deposits, evidence_plan=path)
    first = run_analysis(request)
    record = read_record(first.outputs["record"])
    kept = record["parameters"]["favourability"]["evidence_plan"]
    assert kept["by"] == "geologist" and kept["specs"] == [s.to_dict() for s in plan.specs]
    measured = [s for s in kept["specs"] if s["kind"] != "rgb"]  # a rendering is scored by the chain's zones on it
    assert record["favourability"]["specs"][:len(measured)] == measured  # the surface: the geologist's plan
    assert record["favourability"]["source"] == "geologist"
    assert not [t for t in record["trace"] if t["method"] == "evidence_plan"]  # the planner was not asked
    agent = read_record(agent_run.outputs["record"])
    assert agent["favourability"]["specs"] != kept["specs"]
    with rasterio.open(first.outputs["favourability"]) as mine, rasterio.open(agent_run.outputs["favourability"]) as a:
        assert np.abs(mine.read(1, masked=True) - a.read(1, masked=True)).max() > 0.01

    replay = run_analysis(replace(request, layers=[], output_dir=tmp_path / "replay", evidence_plan=None,
                                  replay=first.outputs["record"]))
    assert _digests(tmp_path / "replay") == _digests(tmp_path / "run")
    again = read_record(replay.outputs["record"])
    assert again["parameters"]["favourability"]["evidence_plan"] == kept
    assert again["replay_check"]["different"] == []


def test_a_plan_the_run_cannot_use_is_refused_before_the_run(case, agent_run, tmp_path):
    plan = _geologists_plan(agent_run)
    bad = EvidencePlan([replace(plan.specs[0], layer="no such layer")], by="geologist")
    with pytest.raises(LodestarError, match="names layers the run does not have: no such layer"):
        build_request(case.layers, case.question, tmp_path, BackendValues(), evidence_plan=bad)


def test_a_full_run_combines_by_the_plans_own_operator(case, agent_run, tmp_path):
    plan = EvidencePlan(_geologists_plan(agent_run).specs, "gamma", 0.9, "geologist")
    request = build_request(case.layers, case.question, tmp_path / "gamma", BackendValues(), choices=case.choices,
                            case_id=case.id, evidence_plan=plan)
    done = run_analysis(request)
    with rasterio.open(done.outputs["favourability"]) as src:
        assert "gamma 0.9" in src.tags()["LODESTAR_METHOD"]


def test_rerun_with_this_plan_remakes_surface_and_targets_without_the_chain(agent_run, tmp_path):
    plan = EvidencePlan(_geologists_plan(agent_run).specs, "gamma", 0.9, "geologist")
    done = replan(agent_run.outputs["record"], plan, tmp_path / "replanned")
    assert sorted(p.name for p in (tmp_path / "replanned").iterdir()) == sorted(
        ["favourability.tif", "weights.csv", "prospectivity.gpkg", "plan.json", "replan.json"])
    assert read_plan(done.outputs["plan"]).specs[0].to_dict() == plan.specs[0].to_dict()
    section = json.loads(done.outputs["record"].read_text(encoding="utf-8"))
    assert section["format"] == "lodestar-replan/1" and section["plan"]["method"] == "gamma"
    agent_auc = read_record(agent_run.outputs["record"])["favourability"]["validation"]["knowledge"]["auc"]
    assert done.agent_auc == agent_auc and done.auc is not None and done.auc != agent_auc
    assert section["validation"]["knowledge"]["auc"] == done.auc and len(done.targets) >= 1
    with rasterio.open(done.outputs["favourability"]) as src:
        assert "fuzzy gamma (gamma 0.9)" in src.descriptions[0]
    again = replan(agent_run.outputs["record"], plan, tmp_path / "again")  # the same run and plan: the same bytes
    names = ("favourability.tif", "weights.csv", "prospectivity.gpkg", "plan.json")
    assert _digests(tmp_path / "again", names) == _digests(tmp_path / "replanned", names)
    assert again.auc == done.auc
    with pytest.raises(LodestarError, match="already holds files"):
        replan(agent_run.outputs["record"], plan, tmp_path / "replanned")


def test_the_deposit_model_of_the_geologists_choice_is_followed(case, tmp_path):
    assert "skarn" not in case.question.lower()
    request = build_request(case.layers, case.question, tmp_path / "run", BackendValues(), choices=case.choices,
                            case_id=case.id, deposit_model="skarn")
    record = read_record(run_analysis(request).outputs["record"])
    assert record["knowledge"][0]["id"] == "skarn" and record["knowledge"][0]["chosen"] is True
    assert record["knowledge"][1]["id"] == "porphyry_cu_mo_au"  # the automatic choice, kept as the runner-up
    assert "chosen" not in record["knowledge"][1]
    with pytest.raises(LodestarError, match="Unknown deposit model 'nope'.*porphyry_cu_mo_au"):
        build_request(case.layers, case.question, tmp_path, BackendValues(), deposit_model="nope")


def test_a_deposit_model_written_by_the_user_loads_and_drives_a_run(case, tmp_path):
    mine = model_by_id("porphyry_cu_mo_au")
    mine.update(id="my_porphyry", name="My porphyry", keywords=["bluebird"])
    roles = {role for item in mine["evidence"] for role in item["roles"]}  # the form writes a weight per role
    mine["favourability"] = dict(mine["favourability"], weights=dict(dict.fromkeys(roles, 1.0),
                                                                       hydrothermal_alteration=3.0))
    folder = tmp_path / "deposit_models"
    save_user_model(mine, folder)
    (folder / "broken.json").write_text("{", encoding="utf-8")
    (folder / "clash.json").write_text(json.dumps(dict(mine, id="skarn")), encoding="utf-8")
    models, problems = load_user_models(folder)
    assert [m["id"] for m in models] == ["my_porphyry"] and models[0]["source"] == "user"
    assert len(problems) == 2 and "broken.json: not readable as JSON" in problems[0]
    assert "'skarn' is a shipped model's id" in problems[1]
    ranked = ranked_models("Is there a bluebird system here?", ["hydrothermal_alteration"], user_models=models)
    assert ranked[0]["id"] == "my_porphyry"  # a user model is retrieved like the shipped ones

    request = build_request(case.layers, case.question, tmp_path / "run", BackendValues(), choices=case.choices,
                            case_id=case.id, deposit_model="my_porphyry", user_models=models)
    result = run_analysis(request)
    record = read_record(result.outputs["record"])
    assert record["knowledge"][0]["id"] == "my_porphyry" and record["knowledge"][0]["model"]["name"] == "My porphyry"
    weights = {row["layer"]: row["weight"] for row in result.weights}
    assert weights["ASTER AlOH (sericite) index"] == 3.0
    assert weights["MgOH chlorite-epidote index"] == 1.5  # the others raised to half the largest: a factor of 2
    replay = run_analysis(replace(request, layers=[], output_dir=tmp_path / "replay", replay=result.outputs["record"]))
    assert read_record(replay.outputs["record"])["knowledge"][0]["id"] == "my_porphyry"
    assert _digests(tmp_path / "replay") == _digests(tmp_path / "run")


def test_the_editor_rows_and_preview_follow_the_run(agent_run):
    from lodestar.plugin.favourability.plan_preview import PlanPreview
    from lodestar.plugin.raster_io import RasterSet
    from lodestar.plugin.reason.plan_rows import edited, plan_of_rows, plan_rows
    from lodestar.plugin.request import record as records
    from lodestar.plugin.runs.replan import rendering_zones

    record = read_record(agent_run.outputs["record"])
    rows, agent = plan_rows(record)
    assert [row["spec"]["layer"] for row in rows if row["spec"]["weight"] > 0] == [s.layer for s in agent.specs]
    assert plan_of_rows(rows, agent.method, 0.8, agent).by == "agent"
    raster_set = RasterSet(records.layers_from_record(record))
    preview = PlanPreview(raster_set, rendering_zones(record, agent_run.outputs["record"].parent, agent, raster_set),
                          size=64)
    with rasterio.open(agent_run.outputs["favourability"]) as src:
        full = src.read(1, masked=True)
    shown = preview.surface(agent.specs, agent.method)
    # the agent's plan combines by rank: the preview ranks its own cells, a regular sample of the analysis grid's
    assert agent.method == "rank"
    assert np.abs(shown.filled(-1) - full[::preview.step, ::preview.step].filled(-1)).max() < 0.02

    faults = next(i for i, row in enumerate(rows) if row["spec"]["transform"] == "distance_m"
                  and row["spec"]["kind"] == "vector")
    spec = rows[faults]["spec"]
    x, y = preview.curve(EvidenceSpec_of(spec))
    assert x[0] < spec["params"]["midpoint"] / 2 < spec["params"]["midpoint"] * 2 <= x[-1]  # metres from the faults
    assert y[0] > 0.9 and y[-1] < 0.2  # near is favourable
    rows[faults]["spec"] = edited(spec, midpoint=spec["params"]["midpoint"] / 4)
    # its reason says the geologist's setting, then the agent's for its own (before, the agent's alone, which named
    # the old midpoint); edited again, the agent's reason is kept once
    made = EvidenceSpec_of(rows[faults]["spec"])
    assert made.why == (f"Set by you: {made.transformation_text}, {made.membership_text}, weight {made.weight:g}. "
                        f"The agent's reason, for its own setting: {spec['why']}")
    assert edited(rows[faults]["spec"], weight=2.0)["why"].count("The agent's reason") == 1
    assert edited(spec, weight=spec["weight"])["why"] == spec["why"]  # nothing changed, nothing said
    undone = [dict(row, spec=edited(edited(spec, weight=2.0), weight=spec["weight"]))
              if row["spec"]["layer"] == spec["layer"] else row for row in rows]
    assert plan_of_rows(undone, agent.method, 0.8, agent) is agent  # an edit undone gives the agent's plan back
    bare = edited(edited(dict(spec, why=""), weight=2.0), weight=3.0)["why"]  # a plan file may give no reason
    assert bare.startswith("Set by you: ") and "The agent's reason" not in bare
    brought = edited(edited(dict(spec, why="Left out of the run's plan; brought in by you."), weight=2.0), weight=3.0)
    assert brought["why"].endswith("weight 3 (left out of the run's plan).")
    x2, y2 = preview.curve(EvidenceSpec_of(rows[faults]["spec"]))
    assert np.interp(spec["params"]["midpoint"] / 4, x2, y2) == pytest.approx(0.5, abs=0.02)
    mine = plan_of_rows(rows, agent.method, 0.8, agent)
    # ranked, a layer counts by its order alone: a monotone membership's midpoint changes nothing; as a weighted
    # overlay of the memberships' values it does
    assert mine.by == "geologist" and np.abs(preview.surface(mine.specs, "rank") - shown).max() == 0
    assert np.abs(preview.surface(mine.specs, "weighted") - preview.surface(agent.specs, "weighted")).max() > 0.01


def EvidenceSpec_of(spec: dict):  # noqa: N802 (reads as the class it builds)
    from lodestar.plugin.favourability.evidence import EvidenceSpec

    return EvidenceSpec.from_dict(spec)


def test_rerun_with_this_plan_keeps_a_calibrated_runs_calibration(tmp_path):
    """Murchison calibrated by logistic regression, re-run with its plan combined by fuzzy gamma: the calibration is
    fitted again as the run fitted it (the full fit, the out-of-fold surface and the uncertainty cell for cell), held
    against the edited plan's knowledge-driven surface, and the targets come from it, ranked by expected deposits
    (they came from the knowledge-driven surface, the calibration dropped without a word)."""
    case = read_case(ROOT / "tests" / "data" / "murchison-gold" / "case.json")
    run = run_analysis(build_request(case.layers, case.question, tmp_path / "run", BackendValues(),
                                     choices=case.choices, case_id=case.id, deposits=case.deposits,
                                     calibrate="logistic"))
    record = read_record(run.outputs["record"])
    method = record["favourability"]["calibration"]["method"]
    assert not record["favourability"]["calibration"]["refused"]
    plan = EvidencePlan(recorded_plan(record).specs, "gamma", 0.9, "geologist")
    done = replan(run.outputs["record"], plan, tmp_path / "replanned")
    assert sorted(p.name for p in (tmp_path / "replanned").iterdir()) == sorted(
        ["favourability.tif", "favourability_cv.tif", "uncertainty.tif", "weights.csv", "prospectivity.gpkg",
         "plan.json", "replan.json"])
    for name in ("favourability", "favourability_cv", "uncertainty"):
        with rasterio.open(run.outputs[name]) as first, rasterio.open(done.outputs[name]) as again:
            assert np.array_equal(first.read(1, masked=True).filled(-1), again.read(1, masked=True).filled(-1)), name
    section = json.loads(done.outputs["record"].read_text(encoding="utf-8"))
    assert section["calibration"]["method"] == method and section["calibration"]["refused"] == ""
    figures, recorded = section["validation"], record["favourability"]["validation"]
    assert figures["cv"]["auc"] == recorded["cv"]["auc"] and figures["method"] == method
    assert figures["knowledge"]["auc"] == done.auc != recorded["knowledge"]["auc"]  # the edited plan's own surface
    with rasterio.open(done.outputs["favourability"]) as src:
        assert "calibrated: " in src.descriptions[0] and "gamma" not in src.descriptions[0]
    assert len(done.targets) >= 1 and done.targets["exp_deps"].notna().all()  # ranked as a calibrated run ranks
    assert list(done.targets["exp_deps"]) == list(run.prospectivity.sort_values("rank")["exp_deps"])[:len(done.targets)]
