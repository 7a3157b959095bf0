"""lodestar:analyze with BACKEND openai through real Processing against the scripted loopback server: the model-call
parameters (timeout, attempts, deadline, answer tokens, vision, structured output) reach every request, a text-only
executor never gets an image, and a server refusal or timeout fails the algorithm with one line naming it (issue 17;
issue 13 items 4 and 10)."""
from __future__ import annotations

import json

import pytest

from lodestar.tests.fakes.openai_server import FakeOpenAIServer, Reply, by_role
from lodestar.tests.fakes.sta_cot_scripts import (
    ACCEPT_A,
    EVIDENCE,
    LOCALIZATION,
    PLAN,
    copy_sample,
    judge_targets,
    porphyry_script,
)

KEY = "sk-processing-SECRET-31337"


def _outputs(folder) -> dict:
    return {"OUTPUT_ZONES": str(folder / "zones.gpkg"), "OUTPUT_NODES": str(folder / "nodes.gpkg"),
            "OUTPUT_EDGES": str(folder / "edges.gpkg"), "OUTPUT_PROSPECTIVITY": str(folder / "prospectivity.gpkg"),
            "OUTPUT_REPORT": str(folder / "report.html"), "OUTPUT_RECORD": str(folder / "record.json")}


def _parameters(case, server, folder, **extra) -> dict:
    return {"CASE": str(case / "case.json"), "BACKEND": 1, "BASE_URL": server.base_url, "API_KEY": KEY,
            "PLANNER_MODEL": "plan-m", "EXECUTOR_MODEL": "exec-m", "VERIFIER_MODEL": "ver-m", "MAX_ROUNDS": 1,
            **_outputs(folder), **extra}


def _text_only_script():
    """The sample's scripted answers with a plan that needs no eyes (no mark_boxes step)."""
    plan = {"steps": [step for step in PLAN["steps"] if step["tool"] != "mark_boxes"]}
    full = porphyry_script([ACCEPT_A])
    return by_role({"planner": [plan], "executor/act": full, "executor/observe": full, "verifier": [ACCEPT_A],
                    "localization": lambda request: LOCALIZATION, "evidence": lambda request: EVIDENCE,
                    "verifier/targets": judge_targets})


def test_call_parameters_reach_every_request_and_the_record(run, tmp_path):
    case = copy_sample(tmp_path / "case")
    with FakeOpenAIServer(_text_only_script()) as server:
        result = run("lodestar:analyze", _parameters(case, server, tmp_path / "out", VISION=2, STRUCTURED=1,
                                                     ANSWER_TOKENS=333, TIMEOUT=7, ATTEMPTS=2, DEADLINE=30))
        requests = server.chat_requests
    assert result["ANSWER"] == "A"
    assert requests and all(r.body["max_tokens"] == 333 for r in requests)
    assert all(r.body["response_format"]["type"] == "json_schema" for r in requests)
    assert all(r.images == [] for r in requests)  # VISION no: evidence as text, no image ever sent
    observes = [r for r in requests if r.role == "executor" and r.phase == "observe"]
    zones = observes[0].data["evidence_text"]["zones"]  # the AlOH step's evidence image, as a table
    assert zones and {"id", "position", "area_km2", "score_mean", "score_max"} <= set(zones[0])
    record = json.loads((tmp_path / "out" / "record.json").read_text(encoding="utf-8"))
    settings = record["backend"]["settings"]
    assert (settings["timeout_s"], settings["max_retries"], settings["deadline_s"], settings["structured"]) == \
        (7.0, 1, 30.0, "json_schema")
    assert settings["vision"] == {"executor": "no", "verifier": "no"}
    assert record["backend"]["executor"]["evidence_form"]["executor"] == "text"
    assert record["usage"]["executor"]["image_calls"] == 0 and record["usage"]["executor"]["text_calls"] > 0
    assert KEY not in (tmp_path / "out" / "record.json").read_text(encoding="utf-8")


@pytest.mark.parametrize("status, words", [(401, "refused the request (HTTP 401): Invalid API key. Check the API key"),
                                           (403, "refused the request (HTTP 403): Invalid API key. The key is not"),
                                           (404, "refused the request (HTTP 404): Invalid API key. Check the base URL"),
                                           (500, "failed with HTTP 500 (2 attempts): Invalid API key. Try again")])
def test_a_server_refusal_fails_the_algorithm_with_one_line_naming_it(run, tmp_path, status, words):
    from qgis.core import QgsProcessingException

    case = copy_sample(tmp_path / "case")
    with FakeOpenAIServer(lambda request: Reply(status=status, error="Invalid API key")) as server:
        with pytest.raises(QgsProcessingException) as caught:
            run("lodestar:analyze", _parameters(case, server, tmp_path / "out", ATTEMPTS=2))
    message = str(caught.value)
    assert words in message and "\n" not in message
    assert (tmp_path / "out" / "record.json").is_file()  # the record is written before the non-zero exit


def test_a_silent_server_fails_the_algorithm_as_a_timeout_within_the_deadline(run, tmp_path):
    from qgis.core import QgsProcessingException

    case = copy_sample(tmp_path / "case")
    with FakeOpenAIServer(lambda request: Reply({"steps": []}, delay_s=3600)) as server:
        with pytest.raises(QgsProcessingException) as caught:
            run("lodestar:analyze", _parameters(case, server, tmp_path / "out", TIMEOUT=1, ATTEMPTS=5, DEADLINE=2.5))
        attempts = len(server.chat_requests)
    message = str(caught.value)
    assert "did not answer within" in message and "the 2.5 s deadline per call reached): a timeout" in message
    assert attempts < 5  # the deadline, not the attempt count, ended the call
