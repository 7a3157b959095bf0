"""Run records and replay: a replayed run makes no model call and writes the same output files byte for
byte; the API key never reaches the record, the report or the log."""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest, BackendSettings
from lodestar.plugin.errors import LodestarError
from lodestar.plugin.progress import Progress
from lodestar.plugin.request.case import read_case
from lodestar.plugin.request.record import read_record, scrub, sha256_file
from lodestar.plugin.request.request import replay_request
from lodestar.tests.fakes.openai_server import FakeOpenAIServer
from lodestar.tests.fakes.sta_cot_scripts import ACCEPT_A, copy_sample, porphyry_script, reject

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "resources" / "sample" / "porphyry-demo"
KEY = "sk-replay-SECRET-424242424242"
COMPARED = ("zones.gpkg", "nodes.gpkg", "edges.gpkg", "prospectivity.gpkg", "favourability.tif", "weights.csv",
            "report.html", "map.png")


def _digests(folder: Path) -> dict:
    files = [folder / name for name in COMPARED] + sorted((folder / "evidence").glob("*.png"))
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    return read_case(copy_sample(tmp_path_factory.mktemp("case")))


def test_offline_run_replays_byte_for_byte(case, tmp_path):
    first = run_analysis(AnalysisRequest(case.layers, case.question, tmp_path / "run", dict(case.choices),
                                         case_id=case.id, deposits=case.deposits))
    record = read_record(first.outputs["record"])
    assert record["result"]["answer"] == "A"
    assert [e["name"] for e in record["inputs"]] == [s.name for s in case.layers]
    for entry, spec in zip(record["inputs"], case.layers):
        assert entry["sha256"] == sha256_file(spec.path) and entry["role"] == spec.role
    assert record["backend"]["planner"]["backend"] == "offline"
    assert [t["method"] for t in record["trace"]][:2] == ["plan", "propose"]
    assert record["outputs"]["prospectivity"]["sha256"] == sha256_file(tmp_path / "run" / "prospectivity.gpkg")
    judged = record["favourability"]["judgements"]  # the offline verifier judged the best targets by its rules
    assert len(judged) == min(10, len(first.prospectivity)) >= 1 and all(j["items"] for j in judged)

    replay = run_analysis(AnalysisRequest([], "", tmp_path / "replay", replay=first.outputs["record"]))
    assert (replay.answer, replay.valid, replay.rounds) == (first.answer, first.valid, first.rounds)
    assert _digests(tmp_path / "replay") == _digests(tmp_path / "run")
    again = read_record(replay.outputs["record"])
    assert again["replayed_from"] == str(first.outputs["record"].resolve())
    assert again["trace"] == record["trace"] and again["created_utc"] == record["created_utc"]
    assert again["favourability"]["judgements"] == judged


def test_replay_request_is_the_recorded_request_whole(case, tmp_path):
    first = run_analysis(AnalysisRequest(case.layers, case.question, tmp_path / "run", dict(case.choices),
                                         case_id=case.id, deposits=case.deposits, max_rounds=2, area_share=0.05,
                                         max_targets=7, favourable_units={case.layers[0].name: ["2"]}))
    request = replay_request(first.outputs["record"], tmp_path / "replay")
    assert (request.question, request.choices, request.case_id) == (case.question, dict(case.choices), case.id)
    assert [(s.path, s.role, s.name) for s in request.layers] == [(s.path, s.role, s.name) for s in case.layers]
    assert (request.max_rounds, request.area_share, request.max_targets) == (2, 0.05, 7)
    assert request.favourable_units == {case.layers[0].name: ["2"]}
    assert request.deposits is not None and request.deposits.name == Path(case.deposits).name
    assert request.replay == first.outputs["record"] and request.output_dir == tmp_path / "replay"
    replay = run_analysis(request)  # the same chain as the run, answered from the record
    recorded, again = read_record(first.outputs["record"]), read_record(replay.outputs["record"])
    assert again["parameters"]["favourability"] == recorded["parameters"]["favourability"]
    assert again["replay_check"]["different"] == [] and again["outputs"] == recorded["outputs"]

def test_a_replay_follows_the_deposit_models_its_record_names(case, tmp_path):
    """A record from a version that ranked the models otherwise (here: skarn first, with its recorded score) is
    replayed with those models, not re-ranked by this version's retrieval."""
    first = run_analysis(AnalysisRequest(case.layers, case.question, tmp_path / "run", dict(case.choices),
                                         case_id=case.id))
    record = read_record(first.outputs["record"])
    assert record["knowledge"][0]["id"] == "porphyry_cu_mo_au"
    older = dict(record, knowledge=[{"id": "skarn", "name": "Skarn", "score": 9.5, "testable": ["x"]},
                                    *record["knowledge"]])
    path = tmp_path / "older.json"
    path.write_text(json.dumps(older), encoding="utf-8")
    replay = run_analysis(AnalysisRequest([], "", tmp_path / "replay", replay=path))
    again = read_record(replay.outputs["record"])
    assert [k["id"] for k in again["knowledge"]] == [k["id"] for k in older["knowledge"]]
    assert again["knowledge"][0] == {"id": "skarn", "name": "Skarn (Cu, Au, Zn-Pb, W, Fe)", "score": 9.5,
                                     "testable": ["x"], "names": []}


def test_scripted_model_run_replays_without_a_server(case, tmp_path):
    """A run with refinement through the real openai client; its replay reaches no server and matches."""
    logs = []
    with FakeOpenAIServer(porphyry_script([reject("B"), ACCEPT_A])) as server:
        settings = BackendSettings(backend="openai", base_url=server.base_url, api_key=KEY, retry_backoff_s=0.01,
                                   models={"planner": "p", "executor": "e", "verifier": "v"})
        first = run_analysis(AnalysisRequest(case.layers, case.question, tmp_path / "run", dict(case.choices),
                                             settings=settings, case_id=case.id), Progress(on_log=logs.append))
        served = len(server.requests)
    assert first.answer == "A" and first.rounds == 2 and served > 0
    for name in ("record", "report"):
        assert KEY not in first.outputs[name].read_text(encoding="utf-8")
    assert not any(KEY in line for line in logs)
    record = read_record(first.outputs["record"])
    assert record["usage"]["verifier"]["calls"] == 3 and record["prompt_hashes"]  # two rounds, then the targets
    judged = record["favourability"]["judgements"]
    assert len(judged) == min(10, len(first.prospectivity)) >= 1
    assert all(item["status"] in ("supported", "absent", "untestable") for j in judged for item in j["items"])
    # the server is gone: a replay that tried to call it would fail
    replay = run_analysis(AnalysisRequest([], "", tmp_path / "replay", replay=first.outputs["record"]))
    assert (replay.answer, replay.rounds) == ("A", 2)
    assert replay.usage == first.usage
    assert read_record(replay.outputs["record"])["favourability"]["judgements"] == judged
    assert _digests(tmp_path / "replay") == _digests(tmp_path / "run")


def test_replay_refuses_changed_inputs(case, tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(case.folder, folder)
    copy = read_case(folder)
    first = run_analysis(AnalysisRequest(copy.layers, copy.question, tmp_path / "run", dict(copy.choices)))
    with open(copy.layers[1].path, "r+b") as fh:
        fh.seek(-1, 2)
        last = fh.read(1)
        fh.seek(-1, 2)
        fh.write(bytes([last[0] ^ 1]))
    with pytest.raises(LodestarError, match="changed since the run was recorded"):
        run_analysis(AnalysisRequest([], "", tmp_path / "replay", replay=first.outputs["record"]))


def test_replay_refuses_a_changed_legend(case, tmp_path):
    """A legend names the units the chain selected: changed after the run, it would rename zones silently."""
    folder = tmp_path / "copy"
    shutil.copytree(case.folder, folder)
    copy = read_case(folder)
    first = run_analysis(AnalysisRequest(copy.layers, copy.question, tmp_path / "run", dict(copy.choices)))
    legend = next(spec.legend for spec in copy.layers if spec.legend is not None)
    legend.write_text(legend.read_text(encoding="utf-8").replace("limestone", "basalt"), encoding="utf-8")
    with pytest.raises(LodestarError, match=f"{legend.name}, beside input .* is missing or changed"):
        run_analysis(AnalysisRequest([], "", tmp_path / "replay", replay=first.outputs["record"]))


def test_bad_records_are_refused(tmp_path):
    path = tmp_path / "record.json"
    path.write_text(json.dumps({"format": "something-else"}), encoding="utf-8")
    with pytest.raises(LodestarError, match="not a Lodestar run record"):
        run_analysis(AnalysisRequest([], "", tmp_path / "out", replay=path))
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(LodestarError, match="Cannot read the run record"):
        read_record(path)
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(LodestarError, match="not a Lodestar run record"):
        read_record(path)


def test_scrub_removes_secret_keys_and_values():
    data = {"api_key": KEY, "settings": {"Authorization": "Bearer x", "base_url": "http://h", "max_tokens": 5},
            "log": [f"called with {KEY}"], "prompt_tokens": 3}
    assert scrub(data, (KEY,)) == {"settings": {"base_url": "http://h", "max_tokens": 5},
                                   "log": ["called with ***"], "prompt_tokens": 3}
