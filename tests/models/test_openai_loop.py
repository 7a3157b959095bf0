"""Whole STA-CoT runs (`run_analysis`, back-end "openai") against the scripted loopback server."""
from __future__ import annotations

import json
import re
import socket

import pytest

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest, BackendSettings
from lodestar.plugin.errors import Cancelled
from lodestar.plugin.labels import zone_label
from lodestar.plugin.progress import Progress
from lodestar.plugin.request.case import read_case
from lodestar.tests.fakes.openai_server import FakeOpenAIServer
from lodestar.tests.fakes.sta_cot_scripts import (
    ACCEPT_A,
    ALOH,
    GOOD_BOX,
    QUARTZ,
    SCENARIOS,
    TOO_LARGE_BOX,
    copy_sample,
    porphyry_script,
    reject,
)

KEY = "sk-loop-SECRET-777777777"
MODELS = {"planner": "strong-planner", "executor": "light-executor", "verifier": "strong-verifier"}


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    return read_case(copy_sample(tmp_path_factory.mktemp("cases")))


def _settings(base_url: str, **overrides) -> BackendSettings:
    values = dict(backend="openai", base_url=base_url, api_key=KEY, models=dict(MODELS), retry_backoff_s=0.01,
                  max_retries=2, timeout_s=10.0)
    values.update(overrides)
    return BackendSettings(**values)


def _run(case, out, server_or_url, max_rounds=3, progress=None, **overrides):
    url = server_or_url if isinstance(server_or_url, str) else server_or_url.base_url
    request = AnalysisRequest(layers=case.layers, question=case.question, output_dir=out, choices=case.choices,
                              settings=_settings(url, **overrides), max_rounds=max_rounds, case_id=case.id)
    return run_analysis(request, progress or Progress())


def _calls(result) -> dict:
    return {role: row["calls"] for role, row in result.usage.items()}


def _no_key_anywhere(result) -> None:
    for name in ("record", "report"):
        assert KEY not in result.outputs[name].read_text(encoding="utf-8")


def test_clean_chain(case, tmp_path):
    kwargs, overrides, rounds = SCENARIOS["clean chain"]
    with FakeOpenAIServer(porphyry_script(**kwargs)) as server:
        result = _run(case, tmp_path, server, rounds, **overrides)
        requests = server.chat_requests
    assert (result.answer, result.valid, result.voted, result.rounds) == ("A", True, False, 1)
    assert [node["observation"]["sub_inference"] for node in result.chain] == ["Yes", "Yes", "Yes"]
    assert [node["observation"]["error"] for node in result.chain] == ["", "", ""]
    # the verifier's second call judges the best targets on their own evidence
    assert _calls(result) == {"planner": 1, "executor": 6, "verifier": 2, "localization": 1, "evidence": 1}
    assert [(r.role, r.phase) for r in requests] == [("planner", "")] + [("executor", "act"), ("executor", "observe")] \
        * 3 + [("verifier", ""), ("localization", ""), ("evidence", ""), ("verifier", "targets")]
    judged = result.prospectivity[result.prospectivity["verdict"] != ""]
    assert len(judged) == min(10, len(result.prospectivity)) >= 1
    assert [t["target"] for t in requests[-1].data["targets"]] == list(range(1, len(judged) + 1))
    assert all("scripted verifier" in why for why in judged["why"]) or all(judged["verdict"] != "moderate")
    # the model's evidence plan makes the surface (the rendering it left out enters through its marked zones)
    assert [(w["layer"], w["weight"]) for w in result.weights][:2] == [(ALOH, 2.0), (QUARTZ, 1.0)]
    assert {r.body["model"] for r in requests if r.role == "executor"} == {"light-executor"}
    assert {r.body["temperature"] for r in requests} == {0.05} and {r.body["seed"] for r in requests} == {7}
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in requests)
    assert len(requests[1].images) == 1 and len(requests[2].images) == 1  # evidence view, then evidence image
    assert len(result.prospectivity) >= 1 and len(result.zones) == 2
    _no_key_anywhere(result)


def test_controller_retries_a_bad_box(case, tmp_path):
    kwargs, overrides, rounds = SCENARIOS["controller retries a bad box"]
    with FakeOpenAIServer(porphyry_script(**kwargs)) as server:
        result = _run(case, tmp_path, server, rounds, **overrides)
        acts = [r.data for r in server.chat_requests if r.phase == "act" and r.data["step"]["index"] == 2]
    observation = result.chain[1]["observation"]
    assert [call["boxes"] for call in observation["calls"]] == [[TOO_LARGE_BOX], [GOOD_BOX]]
    assert [v["ok"] for v in observation["controller"]] == [False, True]
    assert "too_large" in {e["code"] for e in observation["controller"][0]["errors"]}
    assert [a["attempt"] for a in acts] == [1, 2] and acts[1]["feedback"]  # the controller's feedback went back
    assert result.answer == "A" and result.valid
    assert _calls(result)["executor"] == 7


def test_verifier_rejection_refinement_then_acceptance(case, tmp_path):
    kwargs, overrides, rounds = SCENARIOS["rejection, refinement, acceptance"]
    with FakeOpenAIServer(porphyry_script(**kwargs)) as server:
        result = _run(case, tmp_path, server, rounds, **overrides)
        redo = [r.data for r in server.chat_requests if r.phase == "act" and r.data["feedback"]]
    assert (result.answer, result.valid, result.voted, result.rounds) == ("A", True, False, 2)
    assert result.verdicts[0]["reexecuted"] == [2, 3]  # the named step and the relation step that reads it
    assert redo[0]["step"]["index"] == 2
    assert redo[0]["feedback"] == "Box the quartz high again, tight around the AlOH core."
    assert _calls(result) == {"planner": 1, "executor": 10, "verifier": 3, "localization": 1, "evidence": 1}


def test_k_failing_rounds_end_in_a_majority_vote(case, tmp_path):
    kwargs, overrides, rounds = SCENARIOS["K failing rounds, majority vote"]
    with FakeOpenAIServer(porphyry_script(**kwargs)) as server:
        result = _run(case, tmp_path, server, rounds, **overrides)
    assert (result.answer, result.valid, result.voted, result.rounds) == ("A", False, True, 3)
    assert [v["verdict"]["answer"] for v in result.verdicts] == ["A", "B", "A"]
    assert [v["reexecuted"] for v in result.verdicts] == [[2, 3], [2, 3], []]
    assert _calls(result) == {"planner": 1, "executor": 14, "verifier": 4, "localization": 1, "evidence": 1}


def test_malformed_json_is_repaired(case, tmp_path):
    kwargs, overrides, rounds = SCENARIOS["malformed JSON repaired"]
    with FakeOpenAIServer(porphyry_script(**kwargs)) as server:
        result = _run(case, tmp_path, server, rounds, **overrides)
        repair = server.chat_requests[1]
    assert result.answer == "A" and result.valid
    assert repair.role == "planner" and "No JSON object could be read" in repair.messages[-1]["content"]
    assert result.usage["planner"]["calls"] == 2 and result.usage["planner"]["repairs"] == 1


def test_429_then_success(case, tmp_path):
    kwargs, overrides, rounds = SCENARIOS["429 then success"]
    with FakeOpenAIServer(porphyry_script(**kwargs)) as server:
        result = _run(case, tmp_path, server, rounds, **overrides)
        assert len(server.chat_requests) == 12  # the 429, then ten calls and the targets' judgement
    assert result.answer == "A" and result.valid
    assert result.usage["planner"]["retries"] == 1 and result.usage["planner"]["calls"] == 1


def test_timeout_then_success(case, tmp_path):
    kwargs, overrides, rounds = SCENARIOS["timeout then success"]
    with FakeOpenAIServer(porphyry_script(**kwargs)) as server:
        result = _run(case, tmp_path, server, rounds, **overrides)
    assert result.answer == "A" and result.valid
    assert result.usage["executor"]["retries"] == 1 and result.usage["executor"]["calls"] == 6


def test_unreachable_endpoint_fails_the_run_with_one_clear_message(case, tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    result = _run(case, tmp_path, url)
    assert result.answer == "Failed" and not result.valid and result.chain == []
    record = result.outputs["record"].read_text(encoding="utf-8")
    assert f"No plan: Cannot reach the model server at {url} (3 attempts)" in record
    _no_key_anywhere(result)


def test_cancellation_mid_run(case, tmp_path):
    with FakeOpenAIServer(porphyry_script([ACCEPT_A])) as server:
        progress = Progress(is_cancelled=lambda: len(server.chat_requests) >= 4)
        with pytest.raises(Cancelled):
            _run(case, tmp_path, server, progress=progress)
        assert len(server.chat_requests) == 4  # no model call after the flag flipped


def test_budget_cap_stops_asking_and_settles(case, tmp_path):
    kwargs, overrides, rounds = SCENARIOS["budget cap (5 calls)"]
    with FakeOpenAIServer(porphyry_script(**kwargs)) as server:
        result = _run(case, tmp_path, server, rounds, **overrides)
        assert len(server.chat_requests) == 5
    assert (result.answer, result.valid, result.rounds) == ("Failed", False, 0)
    assert result.chain[2]["observation"]["error"].startswith(
        "Not executed: no further model calls (The run reached its budget of 5 model calls")
    record = result.outputs["record"].read_text(encoding="utf-8")
    assert "The run reached its budget of 5 model calls" in record
    assert sum(_calls(result).values()) == 5
    assert result.notes == json.loads(record)["result"]["notes"]
    assert any("no further model calls (the run reached its budget" in note.lower() for note in result.notes)


def test_token_budget(case, tmp_path):
    with FakeOpenAIServer(porphyry_script([ACCEPT_A])) as server:
        result = _run(case, tmp_path, server, max_tokens=6000)
        sent = len(server.chat_requests)
    used = sum(row["prompt_tokens"] + row["completion_tokens"] for row in result.usage.values())
    assert result.answer == "Failed" and 1 <= sent < 10
    assert used <= 6000  # each request is estimated before it goes: none that would pass the cap is sent
    record = json.loads(result.outputs["record"].read_text(encoding="utf-8"))
    reason = next(note for note in record["result"]["notes"] if note.startswith("No further model calls ("))
    assert "request was not sent: it needs about" in reason and "budget of 6000 tokens has" in reason


def test_verifier_candidates_count_in_the_vote_when_refinement_runs_out(case, tmp_path):
    with FakeOpenAIServer(porphyry_script([reject("B"), reject("B")])) as server:
        result = _run(case, tmp_path, server, max_rounds=2)
    assert (result.answer, result.valid, result.voted, result.rounds) == ("B", False, True, 2)
    assert len(result.prospectivity) == 0  # a negative answer proposes no deposit area
    assert QUARTZ in {node["step"]["layers"][0] for node in result.chain if node["step"]["layers"]}


def test_a_model_that_only_names_unknown_tools_is_never_verified(case, tmp_path):
    """Every executor call names a tool that does not exist, so every step fails and no zone is marked; the
    verifier still says "A, verified". The engine checks that claim against the chain and refuses it."""
    script = porphyry_script([ACCEPT_A, ACCEPT_A, ACCEPT_A],
                             act_prefix=tuple({"tool": "magic_wand", "layers": [ALOH]} for _ in range(40)))
    with FakeOpenAIServer(script) as server:
        result = _run(case, tmp_path, server)
    assert all(node["observation"]["error"] for node in result.chain) and len(result.zones) == 0
    assert not (result.answer == "A" and result.valid)
    assert result.answer == "Failed" and not result.voted
    record = json.loads(result.outputs["record"].read_text(encoding="utf-8"))
    assert all("every step of the chain failed" in r["verdict"]["rationale"] for r in record["rounds"])


def test_a_server_refusal_is_said_as_such_not_as_a_spent_budget(case, tmp_path):
    """HTTP 403 at the first call: the notes carry the server's own words and no line says the budget ran out."""
    from lodestar.tests.fakes.openai_server import Reply

    with FakeOpenAIServer(lambda request: Reply(status=403, error="forbidden: model not allowed")) as server:
        result = _run(case, tmp_path, server)
    assert result.answer == "Failed"
    assert "refused the request (HTTP 403): forbidden: model not allowed" in result.notes[0]
    assert any(note.startswith("No further model calls (") and "HTTP 403" in note for note in result.notes)
    assert not any("budget" in note.lower() for note in result.notes)


def test_a_model_verifier_names_its_core_zone_and_the_map_shows_it_first(case, tmp_path):
    core = f"s1:{ALOH}:1"
    named = dict(ACCEPT_A, core_zone=core)
    with FakeOpenAIServer(porphyry_script([named])) as server:
        result = _run(case, tmp_path / "named", server, 1)
        verifier = [r for r in server.chat_requests if r.role == "verifier"][0]
    assert "core_zone" in verifier.body["messages"][0]["content"]  # the prompt asks for it
    assert result.verdicts[-1]["verdict"]["core"] == {"label": core, "zone": core}
    assert result.verdicts[-1]["verdict"]["route"] == "named by the verifier model"
    assert re.fullmatch(rf"{re.escape(core)} \(\w+(-\w+)?\), the zone the model's answer rests on",
                        result.verdicts[-1]["verdict"]["place"])
    first = result.prospectivity[result.prospectivity["rank"] == 1].iloc[0]
    zone = result.zones[result.zones["zone_id"] == core].geometry.iloc[0]
    assert first["why"].startswith(f"holds the verified core ({zone_label(core)})") and first.geometry.intersects(zone)
    unknown = dict(ACCEPT_A, core_zone="s9:no such zone")
    with FakeOpenAIServer(porphyry_script([unknown])) as server:
        result = _run(case, tmp_path / "unknown", server, 1)
    assert result.answer == "A" and not any("verified core" in why for why in result.prospectivity["why"])
    assert (result.verdicts[-1]["verdict"]["place"], result.verdicts[-1]["verdict"]["route"]) == ("", "")
    assert any("names zone 's9:no such zone', which no step of the chain marked" in n for n in result.notes)
