"""A model server as it really behaves (issue 17; issue 13 items 2, 4, 6, 10), against the scripted loopback server:
the schema sent and honoured, a server refusing it, text-only models, max_tokens, refusals and timeouts named in
one line, a total deadline per call, cancellation that closes the HTTP connection within a second, and
requests estimated against the token budget before they go."""
from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path

import pytest

from lodestar.models import run_analysis
from lodestar.models.llm_client import (
    BudgetExceeded,
    LLMClient,
    answer_tokens_for,
    sent_schema,
    strict_schema,
)
from lodestar.models.openai_reasoner import OpenAIReasoner
from lodestar.plugin.analysis import AnalysisRequest, BackendSettings
from lodestar.plugin.errors import Cancelled, LodestarError
from lodestar.plugin.progress import Progress
from lodestar.plugin.raster_io import RasterSet
from lodestar.plugin.reason.contract import PlanStep, ToolOutcome
from lodestar.plugin.reason.knowledge import retrieve
from lodestar.plugin.reason.workspace import Workspace
from lodestar.plugin.request.case import read_case
from lodestar.tests.fakes.openai_server import FakeOpenAIServer, Reply
from lodestar.tests.fakes.sta_cot_scripts import ACCEPT_A, copy_sample, porphyry_script

SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "sample" / "porphyry-demo"
SCHEMA = {"type": "object", "required": ["answer"],
          "properties": {"answer": {"type": "string", "enum": ["A", "B"]}, "why": {"type": "string"},
                         "params": {"type": "object"}}}
MESSAGES = [{"role": "system", "content": "Role: verifier\nAnswer in JSON."},
            {"role": "user", "content": "Is there a deposit?"}]
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
NO_LIST = 'can only concatenate str (not "list") to str'  # what llama-cpp-python says to images for a text model
SILENT = 3600.0  # a reply delay no test waits for


def _settings(server, **overrides) -> BackendSettings:
    values = dict(backend="openai", base_url=server.base_url, api_key="",
                  models={"planner": "plan-m", "executor": "exec-m", "verifier": "ver-m"},
                  retry_backoff_s=0.01, timeout_s=5.0, max_retries=2)
    values.update(overrides)
    return BackendSettings(**values)


def _client(server, logs=None, progress=None, **overrides) -> LLMClient:
    return LLMClient(_settings(server, **overrides),
                     progress or Progress(on_log=logs.append if logs is not None else None))


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    folder = tmp_path_factory.mktemp("case")
    shutil.copytree(SAMPLE, folder / "case")
    case = read_case(folder / "case")
    return Workspace(case.question, case.choices, RasterSet(case.layers), folder / "evidence", case.id,
                     knowledge=retrieve(case.question, [spec.role for spec in case.layers]))


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    return read_case(copy_sample(tmp_path_factory.mktemp("cases")))


# ---- the schema a server is given ---------------------------------------------------------------
def test_the_sent_schema_is_closed_and_bounded_and_strict_only_when_it_can_be():
    sent = sent_schema(SCHEMA)
    assert sent["additionalProperties"] is False
    assert sent["properties"]["why"] == {"type": "string", "maxLength": 240}
    assert sent["properties"]["answer"] == SCHEMA["properties"]["answer"]  # choices are bound already
    assert sent["properties"]["params"] == {"type": "object"}  # free-form: no strict mode for it
    assert strict_schema(sent) is False
    bounded = sent_schema({"type": "number", "minimum": 0, "maximum": 3})  # a grammar cannot hold a bound
    assert bounded["enum"] == [0, *[round(0.1 * k, 10) for k in range(1, 30)], 3.0]
    assert sent_schema({"type": "integer", "minimum": 2, "maximum": 6})["enum"] == [2, 3, 4, 5, 6]
    assert sent_schema({"type": "number", "minimum": 1, "maximum": 2})["enum"][:3] == [1, 1.025, 1.05]
    closed = sent_schema({"type": "object", "required": ["a", "b"], "properties": {
        "a": {"type": "array", "items": {"type": "string", "enum": ["x", "y", "z"]}}, "b": {"type": "integer"}}})
    assert closed["properties"]["a"]["maxItems"] == 3 and strict_schema(closed) is True
    # answer tokens from the schema's size: a short verdict gets the floor, twelve of them about 140 tokens each,
    # forty of them the ceiling
    assert answer_tokens_for(SCHEMA) == 256
    twelve = {"type": "object", "properties": {"steps": {"type": "array", "maxItems": 12, "items": sent}}}
    assert answer_tokens_for(twelve) == 1683
    assert answer_tokens_for({"type": "array", "maxItems": 40, "items": sent}) == 4096


def test_schema_sent_and_honoured_with_max_tokens_per_role():
    with FakeOpenAIServer([{"answer": "B", "why": "no alteration"}, {"answer": "A"}]) as server:
        client = _client(server, answer_tokens={"executor": 300})
        value, usage = client.chat_json("verifier", MESSAGES, SCHEMA)
        client.chat_json("executor", MESSAGES, SCHEMA)
        verifier, executor = (r.body for r in server.chat_requests)
    assert value == {"answer": "B", "why": "no alteration"} and usage["repairs"] == 0
    fmt = verifier["response_format"]
    assert fmt == {"type": "json_schema", "json_schema": {"name": "lodestar_verifier", "schema": sent_schema(SCHEMA),
                                                          "strict": False}}
    assert verifier["max_tokens"] == 256 and executor["max_tokens"] == 300  # from the schema; from the setting
    assert client.server() == {"ver-m": {"response_format": "json_schema", "sees_images": None},
                               "exec-m": {"response_format": "json_schema", "sees_images": None}}


def test_a_server_refusing_json_schema_falls_back_once_per_run_to_json_mode_with_the_schema():
    refusal = Reply(status=422, error="response_format.type: Input should be 'text' or 'json_object'")
    with FakeOpenAIServer([refusal, {"answer": "A"}, {"answer": "B"}]) as server:
        logs = []
        client = _client(server, logs)
        assert client.chat_json("verifier", MESSAGES, SCHEMA)[0] == {"answer": "A"}
        assert client.chat_json("verifier", MESSAGES, SCHEMA)[0] == {"answer": "B"}
        formats = [r.body["response_format"] for r in server.chat_requests]
    assert formats[0]["type"] == "json_schema"
    assert formats[1] == formats[2] == {"type": "json_object", "schema": sent_schema(SCHEMA)}  # found once
    assert client.server()["ver-m"]["response_format"] == "json_object_schema"
    assert any("refused the JSON schema for ver-m; asking with JSON mode with the schema from now on" in line
               for line in logs)
    assert client.usage()["verifier"]["repairs"] == 0


def test_json_mode_and_the_repair_loop_stay_behind_the_schema():
    refusals = [Reply(status=400, error="json_schema is not supported"),
                Reply(status=400, error="unknown field: response_format.schema")]
    with FakeOpenAIServer([*refusals, "Sure! {\"answer\": \"C\"}", {"answer": "A"}]) as server:
        client = _client(server)
        value, usage = client.chat_json("verifier", MESSAGES, SCHEMA)
        bodies = [r.body for r in server.chat_requests]
    assert value == {"answer": "A"} and usage["repairs"] == 1
    assert [b["response_format"]["type"] for b in bodies] == ["json_schema", "json_object", "json_object",
                                                              "json_object"]
    assert "schema" not in bodies[2]["response_format"]
    assert '$.answer must be one of "A", "B"' in bodies[3]["messages"][-1]["content"]


def test_a_server_refusing_the_schema_when_it_is_required_is_one_clear_error():
    with FakeOpenAIServer([Reply(status=400, error="response_format json_schema not supported")]) as server:
        with pytest.raises(LodestarError) as caught:
            _client(server, structured="json_schema").chat_json("verifier", MESSAGES, SCHEMA)
        assert len(server.chat_requests) == 1
    assert str(caught.value) == (f"The model server at {server.base_url} refused the request (HTTP 400): "
                                 "response_format json_schema not supported. Check the model name and the server's "
                                 "requirements.")


def test_a_server_refusing_max_tokens_gets_max_completion_tokens():
    refusal = Reply(status=400, error="Unsupported parameter: 'max_tokens' is not supported with this model. "
                                      "Use 'max_completion_tokens' instead.")
    with FakeOpenAIServer([refusal, {"answer": "A"}]) as server:
        _client(server).chat_json("verifier", MESSAGES, SCHEMA)
        last = server.chat_requests[-1].body
    assert "max_tokens" not in last and last["max_completion_tokens"] == 256
    assert last["response_format"]["type"] == "json_schema"


# ---- models without vision ----------------------------------------------------------------------
def _texts(request) -> str:
    return "\n".join(request.texts("user"))


def test_a_model_the_server_reports_as_text_only_gets_text_evidence():
    text_messages = [MESSAGES[0], {"role": "user", "content": "evidence_text: zone 1 at top-left"}]
    with FakeOpenAIServer([{"answer": "A"}], vision=False) as server:
        client = _client(server)
        _, usage = client.chat_json("executor", MESSAGES, SCHEMA, images=[PNG], text_messages=text_messages)
        request = server.chat_requests[0]
        probes = [r.path for r in server.requests if not r.path.endswith("/chat/completions")]
    assert probes == ["/props"] and request.images == [] and "zone 1 at top-left" in _texts(request)
    assert usage["text_calls"] == 1 and usage["image_calls"] == 0 and client.evidence_forms == {"executor": "text"}
    assert client.server()["exec-m"]["sees_images"] is False


def test_images_go_to_a_model_that_sees_them_and_the_setting_wins_over_the_server():
    text_messages = [MESSAGES[0], {"role": "user", "content": "as text"}]
    with FakeOpenAIServer([{"answer": "A"}, {"answer": "A"}], vision=True) as server:
        client = _client(server, vision={"verifier": "no"})
        client.chat_json("executor", MESSAGES, SCHEMA, images=[PNG], text_messages=text_messages)
        client.chat_json("verifier", MESSAGES, SCHEMA, images=[PNG], text_messages=text_messages)
        executor, verifier = server.chat_requests
    assert len(executor.images) == 1 and verifier.images == [] and _texts(verifier) == "as text"
    assert client.evidence_forms == {"executor": "image", "verifier": "text"}


def test_a_server_refusing_images_switches_the_model_to_text_evidence_for_the_run():
    def script(request):
        return Reply(status=500, error=NO_LIST) if request.images else {"answer": "A"}

    text_messages = [MESSAGES[0], {"role": "user", "content": "as text"}]
    with FakeOpenAIServer(script) as server:
        logs = []
        client = _client(server, logs)
        client.chat_json("executor", MESSAGES, SCHEMA, images=[PNG], text_messages=text_messages)
        client.chat_json("executor", MESSAGES, SCHEMA, images=[PNG], text_messages=text_messages)
        sent = [len(r.images) for r in server.chat_requests]
    assert sent == [1, 0, 0]  # one refusal, then text for the rest of the run, no retry of the refused form
    assert client.usage()["executor"]["text_calls"] == 2 and client.usage()["executor"]["retries"] == 0
    assert any(f"the server refused images for exec-m (HTTP 500: {NO_LIST})" in line for line in logs)


def test_the_reasoner_sends_text_evidence_and_no_box_tool_to_a_text_only_executor(ws, tmp_path):
    aloh = ws.layer_names()[1]
    step = PlanStep(1, "Mark the AlOH anomalies", [aloh], "phyllic", "color_regions", "threshold", "compact zones")
    zone = {"zone_id": f"{aloh}:1", "layer": aloh, "role": "alteration_aloh", "kind": "anomaly", "score_mean": 0.41,
            "score_max": 0.73, "area_m2": 2_500_000.0, "bbox": "0,0,1,1", "position": "center-right",
            "description": "strong AlOH anomaly"}
    png = ws.render_view(aloh, None, max_size=200).png_bytes
    (tmp_path / "step01.png").write_bytes(png)
    outcome = ToolOutcome("color_regions", [aloh], [zone], {"coincidence": [{"zone": f"{aloh}:1", "overlaps": 2}]},
                          [], str(tmp_path / "step01.png"), {"ok": True, "feedback": ""})
    call = {"tool": "color_regions", "layers": [aloh], "params": {"method": "otsu"}}
    judged = {"rationale": "one strong zone", "sub_inference": "Yes", "global_inference": "continue"}
    with FakeOpenAIServer([call, judged]) as server:
        reasoner = OpenAIReasoner(_settings(server, vision={"executor": "no"}))
        reasoner.propose(ws, step, "", 1)
        reasoner.observe(ws, step, outcome)
        act, observe = server.chat_requests
    assert act.images == [] and observe.images == []
    tools = act.body["response_format"]["json_schema"]["schema"]["properties"]["tool"]["enum"]
    assert "mark_boxes" not in tools and "color_regions" in tools and "mark_boxes" not in act.data["tools"]
    layer = act.data["evidence_text"]["layer"]
    assert layer["name"] == aloh and set(layer["statistics"]) >= {"p50", "p98"}
    shown = observe.data["evidence_text"]
    assert shown["zones"] == [{"id": f"{aloh}:1", "layer": aloh, "kind": "anomaly", "position": "center-right",
                               "area_km2": 2.5, "score_mean": 0.41, "score_max": 0.73,
                               "description": "strong AlOH anomaly"}]
    assert shown["controller"] == {"ok": True, "feedback": ""}
    assert shown["relations"] == [{"zone": f"{aloh}:1", "overlaps": 2}]
    usage = reasoner.usage()["executor"]
    assert (usage["text_calls"], usage["image_calls"]) == (2, 0)
    assert reasoner.public_settings()["evidence_form"] == {"executor": "text"}


# ---- bounded calls and honest messages ------------------------------------------------------------
def test_a_silent_server_is_bounded_by_the_deadline_per_call_and_every_attempt_closes_its_connection():
    with FakeOpenAIServer(lambda request: Reply({"answer": "A"}, delay_s=SILENT)) as server:
        client = _client(server, timeout_s=0.4, max_retries=10, deadline_s=1.0)
        with pytest.raises(LodestarError) as caught:
            client.chat_json("verifier", MESSAGES, SCHEMA)
        for _ in range(100):  # the server notices a shut socket within its 10 ms poll
            if len(server.disconnects) == len(server.chat_requests):
                break
            time.sleep(0.02)
        attempts = len(server.chat_requests)
        assert len(server.disconnects) == attempts and 2 <= attempts <= 4
    message = str(caught.value)
    assert message.startswith(f"The model server at {server.base_url} did not answer within ")
    assert "the 1 s deadline per call reached): a timeout. Raise the timeout or the deadline" in message
    assert "\n" not in message


def _arrivals(server_delay: float):
    """A script whose replies take `server_delay` s, and the monotonic times the requests arrived."""
    arrived: list[float] = []

    def script(request):
        arrived.append(time.monotonic())
        return Reply({"answer": "A"}, delay_s=server_delay)

    return script, arrived


@pytest.mark.parametrize("delay", [SILENT, 8.0], ids=["silent", "slow"])
def test_cancel_while_waiting_on_the_server_stops_within_a_second_and_closes_the_connection(delay):
    script, arrived = _arrivals(delay)
    cancel_at: list[float] = []

    def cancelled() -> bool:
        if arrived and not cancel_at and time.monotonic() >= arrived[0] + 0.3:
            cancel_at.append(time.monotonic())
        return bool(cancel_at)

    with FakeOpenAIServer(script) as server:
        client = _client(server, progress=Progress(is_cancelled=cancelled), timeout_s=60.0)
        with pytest.raises(Cancelled):
            client.chat_json("verifier", MESSAGES, SCHEMA)
        stopped = time.monotonic()
        for _ in range(100):
            if server.disconnects:
                break
            time.sleep(0.02)
        assert len(server.disconnects) == 1
    assert stopped - cancel_at[0] < 1.0
    assert server.disconnects[0] - cancel_at[0] < 1.0  # the server saw the client leave


def test_a_whole_run_cancelled_while_the_server_is_silent_stops_within_a_second(case, tmp_path):
    script = porphyry_script([ACCEPT_A])
    arrived: list[float] = []

    def silent_third(request):
        arrived.append(time.monotonic())
        return Reply({"answer": "A"}, delay_s=SILENT) if len(arrived) == 3 else script(request)

    flag = threading.Event()
    cancel_at: list[float] = []

    def cancelled() -> bool:
        if len(arrived) >= 3 and not cancel_at and time.monotonic() >= arrived[2] + 0.3:
            cancel_at.append(time.monotonic())
            flag.set()
        return flag.is_set()

    with FakeOpenAIServer(silent_third) as server:
        request = AnalysisRequest(layers=case.layers, question=case.question, output_dir=tmp_path,
                                  choices=case.choices, settings=_settings(server, timeout_s=60.0), case_id=case.id)
        with pytest.raises(Cancelled):
            run_analysis(request, Progress(is_cancelled=cancelled))
        stopped = time.monotonic()
        assert len(server.chat_requests) == 3
    assert stopped - cancel_at[0] < 1.0


@pytest.mark.parametrize("status, error, words", [
    (401, "Invalid API key", "Check the API key in the Lodestar settings."),
    (403, "model not allowed for this key", "The key is not allowed to use this model; check its permissions."),
    (404, "The model `plan-m` does not exist", "Check the base URL (usually ending in /v1) and that the model "
                                               "'plan-m' exists on the server."),
    (500, "CUDA out of\nmemory", "Try again later or check the server's logs."),
])
def test_server_refusals_end_the_run_with_one_line_naming_the_status_and_what_to_do(case, tmp_path, status, error,
                                                                                    words):
    with FakeOpenAIServer(lambda request: Reply(status=status, error=error)) as server:
        request = AnalysisRequest(layers=case.layers, question=case.question, output_dir=tmp_path,
                                  choices=case.choices, settings=_settings(server), case_id=case.id)
        result = run_analysis(request, Progress())
    reason = next(note for note in result.notes if note.startswith("No further model calls ("))
    shown = " ".join(error.split())
    if status == 500:
        expected = f"failed with HTTP 500 (3 attempts): {shown}. {words}"
    else:
        expected = f"refused the request (HTTP {status}): {shown}. {words}"
    assert expected in reason and "\n" not in reason and "budget" not in reason
    assert result.answer == "Failed"
    record = json.loads(result.outputs["record"].read_text(encoding="utf-8"))
    assert reason in record["result"]["notes"]


def test_a_timeout_ends_the_run_named_as_a_timeout(case, tmp_path):
    with FakeOpenAIServer(lambda request: Reply({"answer": "A"}, delay_s=SILENT)) as server:
        request = AnalysisRequest(layers=case.layers, question=case.question, output_dir=tmp_path,
                                  choices=case.choices, case_id=case.id,
                                  settings=_settings(server, timeout_s=0.3, max_retries=1, deadline_s=30.0))
        result = run_analysis(request, Progress())
    reason = next(note for note in result.notes if note.startswith("No further model calls ("))
    assert "did not answer within 0.3 s (2 attempts): a timeout. Raise the timeout or the deadline" in reason
    assert "budget" not in reason.lower() and result.answer == "Failed"


# ---- the token budget is checked before a request goes --------------------------------------------
def test_a_request_that_would_pass_the_token_budget_is_refused_before_it_is_sent():
    huge = [MESSAGES[0], {"role": "user", "content": "x" * 40_000}]  # about 10,000 tokens
    with FakeOpenAIServer([{"answer": "A"}]) as server:
        client = _client(server, max_tokens=5000)
        with pytest.raises(BudgetExceeded) as caught:
            client.chat_json("verifier", huge, SCHEMA)
        assert server.chat_requests == []
    assert str(caught.value).startswith("The verifier request was not sent: it needs about 100")
    assert "the run's budget of 5000 tokens has 5000 left" in str(caught.value)


def test_an_answer_allowance_past_the_budget_is_cut_to_what_is_left():
    logs = []
    with FakeOpenAIServer([Reply({"answer": "A"}, prompt_tokens=10, completion_tokens=5)]) as server:
        client = _client(server, logs, max_tokens=1200, answer_tokens={"verifier": 2000})
        client.chat_json("verifier", MESSAGES, SCHEMA)
        sent = server.chat_requests[0].body["max_tokens"]
    prompt = len(json.dumps(MESSAGES, ensure_ascii=False)) // 4
    assert sent == 1200 - prompt
    assert any(f"answer tokens cut from 2000 to {sent} to stay within the token budget" in line for line in logs)


def test_llama_cpp_python_refusing_json_schema_with_http_500_is_a_refusal_not_a_fault():
    said = ("1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': "
            "\"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}")  # llama-cpp-python 0.3's words
    with FakeOpenAIServer([Reply(status=500, error=said), {"answer": "A"}]) as server:
        client = _client(server)
        value, usage = client.chat_json("verifier", MESSAGES, SCHEMA)
        formats = [r.body["response_format"]["type"] for r in server.chat_requests]
    assert value == {"answer": "A"} and usage["retries"] == 0 and client.waits == []
    assert formats == ["json_schema", "json_object"]
    assert client.server()["ver-m"]["response_format"] == "json_object_schema"
