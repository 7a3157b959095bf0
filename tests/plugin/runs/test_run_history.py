"""Past runs read back from their records (question, answer, date, layers; the result rebuilt from the files), and
the choices a run made said in words (deposit model and runner-up, thresholds, controller overrides)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.errors import LodestarError
from lodestar.plugin.request.case import read_case
from lodestar.plugin.request.run_choices import (
    THRESHOLDS,
    controller_line,
    model_choice,
    step_thresholds,
    used_thresholds,
)
from lodestar.plugin.runs.run_history import events_of, list_runs, past_run, result_of
from lodestar.tests.fakes.sta_cot_scripts import copy_sample


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two offline runs of the sample case in one runs folder, the second with adjusted thresholds."""
    case = read_case(copy_sample(tmp_path_factory.mktemp("case")))
    root = tmp_path_factory.mktemp("runs")
    first = run_analysis(AnalysisRequest(case.layers, case.question, root / "run-1", dict(case.choices)))
    second = run_analysis(AnalysisRequest(case.layers, case.question, root / "run-2", dict(case.choices),
                                          controller={"max_regions": 2, "min_area_m2": 120_000.0},
                                          localization={"important_areas_count": 3}))
    return case, root, first, second


def test_runs_are_listed_newest_first_with_question_answer_date_and_layers(runs, tmp_path):
    case, root, first, _ = runs
    (root / "in-progress").mkdir(exist_ok=True)  # no record: not a run
    broken = root / "broken"
    broken.mkdir(exist_ok=True)
    (broken / "record.json").write_text("{not json", encoding="utf-8")
    listed, unreadable = list_runs(root)
    assert [run.folder.name for run in listed] == ["run-2", "run-1"]  # same second: by folder name, newest first
    run = listed[1]
    assert run.question == case.question and run.answer == first.answer == "A"
    assert run.answer_line == "A. Yes"
    assert run.layers == [spec.name for spec in case.layers]
    record = json.loads((root / "run-1" / "record.json").read_text(encoding="utf-8"))
    assert run.date == record["created_utc"][:10] + " " + record["created_utc"][11:16] + " UTC"
    assert run.report == root / "run-1" / "report.html"
    assert [(folder.name, "Cannot read the run record" in why) for folder, why in unreadable] == [("broken", True)]
    assert list_runs(tmp_path / "nowhere") == ([], [])


def test_a_past_result_is_the_result_the_run_returned(runs):
    _, root, first, _ = runs
    again = result_of(root / "run-1")
    assert (again.answer, again.answer_text, again.valid, again.voted, again.rounds) == \
        (first.answer, first.answer_text, first.valid, first.voted, first.rounds)
    for key in ("zones", "nodes", "edges", "prospectivity"):
        assert len(getattr(again, key)) == len(getattr(first, key)), key
    ranks = [list(frame.prospectivity.sort_values("rank")["rank"]) for frame in (again, first)]
    assert ranks[0] == ranks[1]
    assert again.chain == json.loads(json.dumps(first.chain).replace(str((root / "run-1").resolve()) + "/", ""))
    assert again.notes == first.notes and again.weights == json.loads(json.dumps(first.weights))
    assert again.unused == first.unused and again.usage == first.usage
    assert {k: Path(v).name for k, v in again.outputs.items()} == {k: Path(v).name for k, v in first.outputs.items()
                                                                   if Path(v).exists()}


def test_past_events_point_at_the_run_folders_images(runs):
    _, root, _, _ = runs
    images = [e["observation"]["evidence_png"] for e in events_of(root / "run-1")
              if e.get("kind") == "step" and (e.get("observation") or {}).get("evidence_png")]
    assert images and all(Path(p).is_absolute() and Path(p).is_file() for p in images)


def test_a_moved_run_says_what_is_missing(runs, tmp_path):
    _, root, _, _ = runs
    copy = tmp_path / "copy"
    shutil.copytree(root / "run-1", copy)
    (copy / "zones.gpkg").unlink()
    assert past_run(copy).answer == "A"
    with pytest.raises(LodestarError, match="lacks zones"):
        result_of(copy)


def test_a_reopened_where_answer_is_its_targets_as_the_run_gave_it(runs, tmp_path):
    """A "where" question is answered by the ranked targets (`result.where` in the record); reopened, the banner said
    "A. Yes" (the choice's text) instead."""
    _, root, _, _ = runs
    copy = tmp_path / "where"
    shutil.copytree(root / "run-1", copy)
    record = json.loads((copy / "record.json").read_text(encoding="utf-8"))
    where = "2 target(s) over 0.5 km2, best first: 1. 0.16 km2 at 36.0°N 112.0°W, strong; 2. 0.36 km2 at 36.1°N."
    record["result"]["where"] = where
    (copy / "record.json").write_text(json.dumps(record), encoding="utf-8")
    assert result_of(copy).answer_text == where
    assert result_of(root / "run-1").answer_text == "Yes"  # a yes / no question: the choice's text


def test_the_deposit_model_its_runner_up_and_why(runs):
    _, root, _, _ = runs
    record = json.loads((root / "run-1" / "record.json").read_text(encoding="utf-8"))
    choice = model_choice(record)
    assert choice["picked"]["id"] == record["knowledge"][0]["id"] == "porphyry_cu_mo_au"
    assert choice["runner_up"]["id"] == record["knowledge"][1]["id"]
    text = choice["text"]
    # the score counts each commodity once, by name or symbol, with the rarity of the 22 models' keywords
    assert text.startswith(f"Deposit model: Porphyry Cu-Mo-Au (score {record['knowledge'][0]['score']:.2f}: the "
                           "question names porphyry, copper")
    assert f"Runner-up: {record['knowledge'][1]['name']} (score {record['knowledge'][1]['score']:.2f}" in text
    gap = record["knowledge"][0]["score"] - record["knowledge"][1]["score"]
    assert f"scores {gap:.2f} higher" in text
    tie = dict(record, knowledge=[record["knowledge"][0], dict(record["knowledge"][1],
                                                               score=record["knowledge"][0]["score"] + 0.00001)])
    assert "The two tie; Porphyry Cu-Mo-Au comes first in the knowledge base" in model_choice(tie)["text"]
    named = dict(tie, knowledge=[dict(tie["knowledge"][0], names=["greenstone"]), tie["knowledge"][1]])
    assert "The two tie; the layers' names name greenstone, so it was followed" in model_choice(named)["text"]
    assert model_choice(dict(record, knowledge=[])) == {}


def test_thresholds_used_and_overridden(runs):
    _, root, _, _ = runs
    default = json.loads((root / "run-1" / "record.json").read_text(encoding="utf-8"))
    adjusted = json.loads((root / "run-2" / "record.json").read_text(encoding="utf-8"))
    assert used_thresholds(default)[("controller", "max_regions")] == 5
    values = used_thresholds(adjusted)
    assert values[("controller", "max_regions")] == 2 and values[("controller", "min_area_m2")] == 120_000.0
    assert values[("localization", "important_areas_count")] == 3
    assert set(values) == {(t.section, t.key) for t in THRESHOLDS}
    assert "with user overrides" in adjusted["localization"]["source"]
    assert controller_line(adjusted).startswith("Controller: at most 2 zones a step, none under 0.12 km2")
    rows = step_thresholds(default)
    assert [row[0] for row in rows] == [step["index"] for step in default["plan"]]
    first = default["plan"][0]["params"]
    assert rows[0][1] == "color_regions" and f"threshold {first['value']:.4g}" in rows[0][3]
