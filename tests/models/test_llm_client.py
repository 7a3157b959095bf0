"""The LLM client through the real `openai` package against a loopback OpenAI-compatible server."""
from __future__ import annotations

import base64
import email.utils
import json
import socket
import sys
import time

import pytest

from lodestar.models import llm_client
from lodestar.models.llm_client import BudgetExceeded, LLMClient, ModelOutputError
from lodestar.plugin.analysis import BackendSettings
from lodestar.plugin.errors import Cancelled, LodestarError
from lodestar.plugin.progress import Progress
from lodestar.tests.fakes.openai_server import FakeOpenAIServer, Reply, by_role

KEY = "sk-test-SECRET-0123456789abcdef"
SCHEMA = {
    "type": "object",
    "required": ["answer", "confidence"],
    "properties": {"answer": {"type": "string", "enum": ["A", "B"]},
                   "confidence": {"type": "number", "minimum": 0, "maximum": 1}},
}
MESSAGES = [{"role": "system", "content": "Role: verifier\nAnswer in JSON."},
            {"role": "user", "content": "Is there a deposit?"}]
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24


def _settings(server, **overrides) -> BackendSettings:
    values = dict(backend="openai", base_url=server.base_url if server else "", api_key=KEY,
                  models={"planner": "plan-m", "executor": "exec-m", "verifier": "test-model"},
                  retry_backoff_s=0.01, timeout_s=5.0, max_retries=3)
    values.update(overrides)
    return BackendSettings(**values)


class _Sleeps:
    """Records back-off sleeps without waiting."""

    def __init__(self):
        self.total = 0.0

    def __call__(self, seconds: float) -> None:
        self.total += seconds


def _client(server, logs=None, progress=None, **overrides) -> LLMClient:
    progress = progress or Progress(on_log=(logs.append if logs is not None else None))
    return LLMClient(_settings(server, **overrides), progress, sleep=_Sleeps())


def test_clean_json_answer_and_request_contents():
    with FakeOpenAIServer([Reply({"answer": "A", "confidence": 0.8}, prompt_tokens=40, completion_tokens=9)]) as server:
        client = _client(server)
        value, usage = client.chat_json("verifier", MESSAGES, SCHEMA)
        request = server.chat_requests[0]
    assert value == {"answer": "A", "confidence": 0.8}
    assert usage["calls"] == 1 and usage["prompt_tokens"] == 40 and usage["completion_tokens"] == 9
    assert usage["repairs"] == 0 and usage["retries"] == 0 and usage["model"] == "test-model"
    body = request.body
    assert body["model"] == "test-model"
    assert body["temperature"] == 0.05 and body["seed"] == 7
    sent = body["response_format"]  # the schema goes with the request, closed; strict since every key is required
    assert sent["type"] == "json_schema" and sent["json_schema"]["name"] == "lodestar_verifier"
    assert sent["json_schema"]["strict"] is True
    assert sent["json_schema"]["schema"] == {**SCHEMA, "additionalProperties": False, "properties": {
        **SCHEMA["properties"], "confidence": {**SCHEMA["properties"]["confidence"],
                                               "enum": [round(0.025 * k, 10) for k in range(41)]}}}
    assert body["max_tokens"] == llm_client.answer_tokens_for(SCHEMA) == 256
    assert body["messages"] == MESSAGES
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert KEY not in request.raw.decode("utf-8")
    assert request.role == "verifier"


def test_images_travel_as_png_data_urls_in_the_last_user_message():
    with FakeOpenAIServer([Reply({"answer": "B", "confidence": 0.2})]) as server:
        _client(server).chat_json("executor", MESSAGES, SCHEMA, images=[PNG, PNG])
        request = server.chat_requests[0]
    assert request.body["model"] == "exec-m"
    content = request.body["messages"][-1]["content"]
    assert content[0] == {"type": "text", "text": "Is there a deposit?"}
    assert request.images == ["data:image/png;base64," + base64.b64encode(PNG).decode()] * 2
    assert MESSAGES[-1]["content"] == "Is there a deposit?"  # the caller's messages are not modified


def test_non_png_image_is_refused_before_any_request():
    with FakeOpenAIServer([]) as server:
        with pytest.raises(LodestarError, match="PNG"):
            _client(server).chat_json("executor", MESSAGES, SCHEMA, images=[b"GIF89a...."])
        assert server.requests == []


def test_prose_fences_and_trailing_commas_are_tolerated_without_a_repair():
    reply = 'Here is my answer:\n```json\n{"answer": "B", "confidence": 0.4,}\n```\nThanks.'
    with FakeOpenAIServer([Reply(reply)]) as server:
        value, usage = _client(server).chat_json("verifier", MESSAGES, SCHEMA)
    assert value == {"answer": "B", "confidence": 0.4}
    assert usage["repairs"] == 0


def test_malformed_json_is_repaired_by_asking_again_with_the_error():
    with FakeOpenAIServer([Reply("I think the answer is A."), Reply({"answer": "A", "confidence": 0.6})]) as server:
        value, usage = _client(server).chat_json("verifier", MESSAGES, SCHEMA)
        second = server.chat_requests[1]
    assert value == {"answer": "A", "confidence": 0.6}
    assert usage["calls"] == 2 and usage["repairs"] == 1
    assert second.messages[:2] == MESSAGES
    assert second.messages[2] == {"role": "assistant", "content": "I think the answer is A."}
    assert "No JSON object could be read" in second.messages[3]["content"]
    assert '"enum":["A","B"]' in second.messages[3]["content"]  # the schema goes with the repair request


def test_schema_violations_are_named_in_the_repair_request():
    with FakeOpenAIServer([Reply({"answer": "C"}), Reply({"answer": "B", "confidence": 0.1})]) as server:
        value, _ = _client(server).chat_json("verifier", MESSAGES, SCHEMA)
        repair = server.chat_requests[1].messages[-1]["content"]
    assert value["answer"] == "B"
    assert "$ is missing the required key 'confidence'" in repair
    assert '$.answer must be one of "A", "B", got "C"' in repair


def test_truncated_output_is_repaired():
    cut = Reply('{"answer": "A", "confid', finish_reason="length")
    with FakeOpenAIServer([cut, Reply({"answer": "A", "confidence": 0.9})]) as server:
        value, usage = _client(server).chat_json("verifier", MESSAGES, SCHEMA)
        repair = server.chat_requests[1].messages[-1]["content"]
    assert value == {"answer": "A", "confidence": 0.9}
    assert usage["repairs"] == 1
    assert "cut off" in repair


def test_truncated_output_that_never_completes_fails_clearly_after_two_repairs():
    cut = '{"answer": "A", "confid'
    with FakeOpenAIServer([Reply(cut, finish_reason="length")] * 3) as server:
        with pytest.raises(ModelOutputError, match=r"verifier model \(test-model\).*2 repair.*cut off"):
            _client(server).chat_json("verifier", MESSAGES, SCHEMA)
        assert len(server.chat_requests) == 3


def test_cut_off_answer_with_every_required_key_is_used_last_with_a_warning():
    cut = '{"answer": "B", "confidence": 0.3, "notes": "the phyllic halo is'
    logs: list[str] = []
    with FakeOpenAIServer([Reply(cut, finish_reason="length")] * 3) as server:
        value, usage = _client(server, logs).chat_json("verifier", MESSAGES, SCHEMA)
    assert value == {"answer": "B", "confidence": 0.3, "notes": "the phyllic halo is"}
    assert usage["calls"] == 3 and usage["repairs"] == 2
    assert any("cut-off answer" in line for line in logs)


def test_429_then_success_honours_retry_after():
    replies = [Reply(status=429, headers={"Retry-After": "2"}), Reply(status=429, headers={"retry-after-ms": "150"}),
               Reply({"answer": "A", "confidence": 0.5})]
    with FakeOpenAIServer(replies) as server:
        client = _client(server)
        value, usage = client.chat_json("verifier", MESSAGES, SCHEMA)
    assert value["answer"] == "A"
    assert client.waits == [2.0, 0.15]
    assert client._sleep.total == pytest.approx(2.15)
    assert usage["retries"] == 2 and usage["calls"] == 1


def test_retry_after_as_an_http_date():
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    with FakeOpenAIServer([Reply(status=429, headers={"Retry-After": when}), Reply({"answer": "A", "confidence": 1})]) \
            as server:
        client = _client(server)
        client.chat_json("verifier", MESSAGES, SCHEMA)
    assert 27.0 <= client.waits[0] <= 30.0


def test_500_is_retried_with_exponential_back_off():
    with FakeOpenAIServer([Reply(status=500), Reply(status=503), Reply({"answer": "B", "confidence": 0})]) as server:
        client = _client(server, retry_backoff_s=0.5)
        value, usage = client.chat_json("verifier", MESSAGES, SCHEMA)
    assert value["answer"] == "B"
    assert client.waits == [0.5, 1.0]
    assert usage["retries"] == 2


def test_persistent_500_gives_one_clear_error():
    with FakeOpenAIServer([Reply(status=500, error="model crashed")] * 3) as server:
        with pytest.raises(LodestarError, match=r"failed with HTTP 500 \(3 attempts\): model crashed"):
            _client(server, max_retries=2).chat_json("verifier", MESSAGES, SCHEMA)
        assert len(server.chat_requests) == 3


def test_malformed_http_body_is_retried():
    with FakeOpenAIServer([Reply(raw=b'{"id": "x", "choices": [{"mess'), Reply({"answer": "A", "confidence": 1})]) \
            as server:
        value, usage = _client(server).chat_json("verifier", MESSAGES, SCHEMA)
    assert value["answer"] == "A" and usage["retries"] == 1


def test_timeout_then_success():
    slow, quick = Reply({"answer": "A", "confidence": 1}, delay_s=3), Reply({"answer": "B", "confidence": 1})
    with FakeOpenAIServer([slow, quick]) as server:
        value, usage = _client(server, timeout_s=0.3).chat_json("verifier", MESSAGES, SCHEMA)
    assert value["answer"] == "B" and usage["retries"] == 1


def test_timeouts_that_persist_give_one_clear_error():
    with FakeOpenAIServer([Reply({"answer": "A", "confidence": 1}, delay_s=3)] * 2) as server:
        with pytest.raises(LodestarError, match=r"did not answer within 0.3 s \(2 attempts\)"):
            _client(server, timeout_s=0.3, max_retries=1).chat_json("verifier", MESSAGES, SCHEMA)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unreachable_endpoint_is_one_clear_message():
    settings = _settings(None, base_url=f"http://127.0.0.1:{_free_port()}/v1", max_retries=2)
    client = LLMClient(settings, sleep=_Sleeps())
    with pytest.raises(LodestarError) as caught:
        client.chat_json("verifier", MESSAGES, SCHEMA)
    message = str(caught.value)
    assert message.startswith(f"Cannot reach the model server at {settings.base_url} (3 attempts)")
    assert "base URL" in message and KEY not in message


def test_server_refusing_json_mode_gets_plain_requests_from_then_on():
    replies = [Reply(status=400, error="response_format is not supported"), Reply({"answer": "A", "confidence": 1}),
               Reply({"answer": "B", "confidence": 1})]
    with FakeOpenAIServer(replies) as server:
        client = _client(server, structured="json_object")
        client.chat_json("verifier", MESSAGES, SCHEMA)
        client.chat_json("verifier", MESSAGES[:1] + [{"role": "user", "content": "again"}], SCHEMA)
        bodies = [r.body for r in server.chat_requests]
    assert "response_format" in bodies[0]
    assert "response_format" not in bodies[1] and "response_format" not in bodies[2]
    assert bodies[2]["seed"] == 7


def test_server_refusing_the_seed_after_json_mode():
    replies = [Reply(status=400, error="bad"), Reply(status=400, error="unknown field seed"),
               Reply({"answer": "A", "confidence": 1})]
    with FakeOpenAIServer(replies) as server:
        _client(server, structured="json_object").chat_json("verifier", MESSAGES, SCHEMA)
        last = server.chat_requests[-1].body
    assert "seed" not in last and "response_format" not in last


def test_server_refusing_the_temperature_keeps_json_mode_and_seed():
    replies = [Reply(status=400, error="Unsupported value: 'temperature' does not support 0.05 with this model."),
               Reply({"answer": "A", "confidence": 1})]
    with FakeOpenAIServer(replies) as server:
        _client(server).chat_json("verifier", MESSAGES, SCHEMA)
        last = server.chat_requests[-1].body
    assert "temperature" not in last
    assert last["response_format"]["type"] == "json_schema" and last["seed"] == 7


def test_a_bad_request_that_no_fallback_fixes_is_one_clear_error():
    with FakeOpenAIServer([Reply(status=400, error="maximum context length exceeded")] * 3) as server:
        with pytest.raises(LodestarError, match=r"refused the request \(HTTP 400\): maximum context length exceeded"):
            _client(server, structured="json_object").chat_json("verifier", MESSAGES, SCHEMA)
        assert len(server.chat_requests) == 3  # with JSON mode, without it, without the seed


def test_budget_cap_on_calls():
    with FakeOpenAIServer([Reply({"answer": "A", "confidence": 1})] * 3) as server:
        client = _client(server, max_calls=2)
        client.chat_json("verifier", MESSAGES, SCHEMA)
        client.chat_json("planner", MESSAGES, SCHEMA)
        with pytest.raises(BudgetExceeded, match="budget of 2 model calls"):
            client.chat_json("verifier", MESSAGES, SCHEMA)
        assert len(server.chat_requests) == 2
    assert client.budget_error.startswith("The run reached its budget of 2 model calls")


def test_budget_cap_on_tokens():
    reply = Reply({"answer": "A", "confidence": 1}, prompt_tokens=500, completion_tokens=100)
    with FakeOpenAIServer([reply] * 3) as server:
        client = _client(server, max_tokens=1000)
        client.chat_json("verifier", MESSAGES, SCHEMA)  # 600 used
        client.chat_json("verifier", MESSAGES, SCHEMA)  # 1200 used: the next call is refused
        with pytest.raises(BudgetExceeded, match=r"budget of 1000 tokens \(1200 used\)"):
            client.chat_json("verifier", MESSAGES, SCHEMA)
        assert len(server.chat_requests) == 2


def test_cache_hit_makes_no_http_request(tmp_path):
    cache = tmp_path / "cache"
    replies = [Reply({"answer": "A", "confidence": 0.7}), Reply({"answer": "B", "confidence": 0.1}),
               Reply({"answer": "A", "confidence": 0.3})]
    with FakeOpenAIServer(replies) as server:
        first, _ = _client(server, cache_dir=cache).chat_json("verifier", MESSAGES, SCHEMA, images=[PNG])
        again = _client(server, cache_dir=cache)
        second, usage = again.chat_json("verifier", MESSAGES, SCHEMA, images=[PNG])
        assert len(server.chat_requests) == 1
        other, _ = again.chat_json("verifier", MESSAGES[:1] + [{"role": "user", "content": "other"}], SCHEMA)
        assert len(server.chat_requests) == 2
        hotter, _ = _client(server, cache_dir=cache, temperature=0.7).chat_json("verifier", MESSAGES, SCHEMA,
                                                                                 images=[PNG])
    assert first == second == {"answer": "A", "confidence": 0.7}
    assert usage["cached"] == 1 and usage["calls"] == 0 and usage["prompt_tokens"] == 0
    assert other["answer"] == "B"
    assert hotter == {"answer": "A", "confidence": 0.3}  # another temperature is another request
    files = sorted(cache.glob("*.json"))
    assert len(files) == 3
    assert all(KEY not in path.read_text() for path in files)
    assert {json.loads(path.read_text())["model"] for path in files} == {"test-model"}


def test_usage_accounting_per_role():
    script = by_role({
        "planner": [Reply({"answer": "A", "confidence": 1}, prompt_tokens=100, completion_tokens=20)],
        "verifier": [Reply("not json", prompt_tokens=50, completion_tokens=5),
                     Reply({"answer": "B", "confidence": 1}, prompt_tokens=70, completion_tokens=8)],
    })
    with FakeOpenAIServer(script) as server:
        client = _client(server)
        client.chat_json("planner", [{"role": "system", "content": "Role: planner"}, MESSAGES[1]], SCHEMA)
        client.chat_json("verifier", MESSAGES, SCHEMA)
    usage = client.usage()
    assert {k: usage["planner"][k] for k in ("calls", "prompt_tokens", "completion_tokens", "repairs")} == \
        {"calls": 1, "prompt_tokens": 100, "completion_tokens": 20, "repairs": 0}
    assert {k: usage["verifier"][k] for k in ("calls", "prompt_tokens", "completion_tokens", "repairs")} == \
        {"calls": 2, "prompt_tokens": 120, "completion_tokens": 13, "repairs": 1}
    assert usage["verifier"]["seconds"] > 0
    totals = client.totals()
    assert totals["calls"] == 3 and totals["prompt_tokens"] == 220 and totals["completion_tokens"] == 33


def test_api_key_never_in_logs_or_error_messages():
    logs: list[str] = []
    with FakeOpenAIServer([Reply(status=429, headers={"Retry-After": "0"})], api_key="sk-the-right-one-000000") \
            as server:
        client = _client(server, logs)
        with pytest.raises(LodestarError) as caught:
            client.chat_json("verifier", MESSAGES, SCHEMA)
        # the fake server echoes the wrong key in its 401 body, as real servers partly do
        assert KEY in server.requests[0].headers["authorization"]
    text = str(caught.value) + "\n".join(logs) + repr(client.settings) + json.dumps(client.settings.public())
    assert "HTTP 401" in str(caught.value) and "Check the API key" in str(caught.value)
    assert KEY not in text and "SECRET" not in text


def test_cancellation_between_calls_and_during_back_off():
    state = {"cancel": False}
    progress = Progress(is_cancelled=lambda: state["cancel"])
    with FakeOpenAIServer([Reply({"answer": "A", "confidence": 1}), Reply(status=503)]) as server:
        client = LLMClient(_settings(server), progress, sleep=lambda s: state.update(cancel=True))
        client.chat_json("verifier", MESSAGES, SCHEMA)
        with pytest.raises(Cancelled):  # the 503's back-off sleep flips the flag: no further request
            client.chat_json("verifier", MESSAGES, SCHEMA)
        assert len(server.chat_requests) == 2
        with pytest.raises(Cancelled):
            client.chat_json("verifier", MESSAGES, SCHEMA)
        assert len(server.chat_requests) == 2


def test_model_fallbacks_and_settings_errors():
    client = LLMClient(_settings(None, base_url="http://localhost:1/v1", models={"planner": "big", "executor": ""}))
    assert client.model_for("executor") == "big" and client.model_for("localization") == "big"
    no_models = LLMClient(_settings(None, base_url="http://localhost:1/v1", models={}))
    with pytest.raises(LodestarError, match="No model name is set"):
        no_models.model_for("planner")
    with pytest.raises(LodestarError, match="Set the base URL"):
        LLMClient(_settings(None, base_url=""))
    with pytest.raises(LodestarError, match="must start with http"):
        LLMClient(_settings(None, base_url="localhost:11434"))


def test_missing_openai_package_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)
    client = LLMClient(_settings(None, base_url="http://localhost:1/v1"))
    with pytest.raises(LodestarError, match="pip install openai"):
        client.chat_json("verifier", MESSAGES, SCHEMA)


def test_local_server_without_a_key():
    with FakeOpenAIServer([Reply({"answer": "A", "confidence": 1})]) as server:
        _client(server, api_key="").chat_json("verifier", MESSAGES, SCHEMA)
        assert server.chat_requests[0].headers["authorization"] == "Bearer none"


def test_connection_check_lists_models():
    with FakeOpenAIServer(models=("test-model", "plan-m", "other")) as server:
        message = llm_client.test_connection(_settings(server))
        assert server.requests[0].path == "/v1/models"
    assert message == (f"Connected to {server.base_url}: 3 model(s) available. Not listed there: exec-m.")


def test_connection_check_failures():
    with FakeOpenAIServer(models=("test-model",), api_key="sk-another-key-99999999") as server:
        with pytest.raises(LodestarError, match="refused the API key") as caught:
            llm_client.test_connection(_settings(server))
    assert KEY not in str(caught.value)
    with pytest.raises(LodestarError, match="Cannot reach the model server"):
        llm_client.test_connection(_settings(None, base_url=f"http://127.0.0.1:{_free_port()}/v1"))
    with FakeOpenAIServer(models=("test-model",)) as server:
        message = llm_client.test_connection(_settings(server, models={"planner": "test-model"}))
    assert message.endswith("Configured model(s) found: test-model.")


def test_usage_is_estimated_when_the_server_reports_none():
    body = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "test-model",
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": '{"answer": "A", "confidence": 1}'}}]})
    with FakeOpenAIServer([Reply(raw=body.encode())]) as server:
        _, usage = _client(server).chat_json("verifier", MESSAGES, SCHEMA, images=[PNG])
    sent = json.dumps(llm_client.with_images(MESSAGES, [PNG]), ensure_ascii=False)
    text_only = sent.replace(llm_client.png_data_url(PNG), "")
    assert usage["prompt_tokens"] == len(text_only) // 4 + llm_client.IMAGE_TOKENS
    assert usage["completion_tokens"] == len(json.dumps('{"answer": "A", "confidence": 1}')) // 4


# ---- answers that do not conform (issue 60) -------------------------------------------------------------
def _eight_char_runs(key: str) -> list[str]:
    return [key[i:i + 8] for i in range(len(key) - 7)]


@pytest.mark.parametrize("value", [-11_000_000_000, float("nan"), "many", 12.5], ids=["negative", "nan", "text",
                                                                                     "fraction"])
def test_token_counts_that_are_not_counts_are_retried_then_refused_and_never_counted(value):
    """A usage of -11e9 tokens let a run make 11 calls on a budget for 2; NaN or text counts raised ValueError. A count
    is a whole number of 0 or more: anything else is an answer that does not conform, retried, then one line."""
    reply = Reply({"answer": "A", "confidence": 1}, usage={"prompt_tokens": value, "completion_tokens": 5})
    with FakeOpenAIServer([reply] * 3) as server:
        client = _client(server, max_retries=2, max_tokens=1000)
        with pytest.raises(LodestarError) as caught:
            client.chat_json("verifier", MESSAGES, SCHEMA)
        sent = len(server.chat_requests)
    assert sent == 3  # the first attempt and two retries
    assert str(caught.value) == (
        f"The model server at {server.base_url} kept answering with no usable chat completion (3 attempts); its last "
        f"answer: HTTP 200 with application/json, usage.prompt_tokens = {json.dumps(value)}, not a count of tokens. "
        "The token budget counts only whole numbers of 0 or more: check the server's version, or that the base URL "
        "points at an OpenAI-compatible API.")
    totals = client.totals()
    assert (totals["calls"], totals["prompt_tokens"], totals["completion_tokens"], totals["retries"]) == (0, 0, 0, 2)


def test_an_html_page_answered_with_200_is_retried_then_refused_with_its_title():
    """A proxy's sign-in page answered with HTTP 200: 'Unexpected error: AttributeError', no retry. Now it is retried
    like a 5xx and the line names the server and what it answered."""
    page = (b"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Sign in - Example proxy</title></head>"
            b"<body><form>...</form></body></html>")
    with FakeOpenAIServer([Reply(raw=page, content_type="text/html; charset=utf-8")] * 3) as server:
        client = _client(server, max_retries=2)
        with pytest.raises(LodestarError) as caught:
            client.chat_json("verifier", MESSAGES, SCHEMA)
        sent = len(server.chat_requests)
    assert sent == 3 and client.usage()["verifier"]["retries"] == 2
    assert str(caught.value) == (
        f"The model server at {server.base_url} kept answering with no usable chat completion (3 attempts); its last "
        "answer: HTTP 200 with text/html, not JSON: a page titled 'Sign in - Example proxy'. Check that the base URL "
        "points at an OpenAI-compatible API (it usually ends in /v1) and that no proxy or login page answers in its "
        "place.")


def test_json_of_another_shape_is_no_completion_not_an_empty_answer():
    """A 200 JSON body without choices was read as an empty model answer and sent back for repair twice."""
    with FakeOpenAIServer([Reply(raw=b'{"result": "ok"}')] * 2 + [Reply({"answer": "B", "confidence": 0})]) as server:
        client = _client(server, max_retries=2)
        value, usage = client.chat_json("verifier", MESSAGES, SCHEMA)
        later = [r.messages for r in server.chat_requests]
    assert value == {"answer": "B", "confidence": 0}
    assert (usage["retries"], usage["repairs"], usage["calls"]) == (2, 0, 1)
    assert later == [MESSAGES] * 3  # the same request again, no repair message
    with FakeOpenAIServer([Reply(raw=b'{"result": "ok"}')] * 2) as server:
        with pytest.raises(LodestarError) as caught:
            _client(server, max_retries=1).chat_json("verifier", MESSAGES, SCHEMA)
    assert type(caught.value) is LodestarError
    assert "(2 attempts); its last answer: HTTP 200 with application/json, JSON without a chat message in its " \
           "choices: '{\"result\": \"ok\"}'." in str(caught.value)


def test_a_count_past_the_whole_budget_is_counted_and_the_next_call_says_who_reported_it():
    """22e9 tokens reported for one small request: the budget counts what the server reports (it is what the server
    bills), so the run stops at the next call, and the line names the server and the call."""
    with FakeOpenAIServer([Reply({"answer": "A", "confidence": 1}, prompt_tokens=22_000_000_000, completion_tokens=7),
                           Reply({"answer": "B", "confidence": 1})]) as server:
        client = _client(server, max_tokens=400_000)
        value, usage = client.chat_json("verifier", MESSAGES, SCHEMA)
        with pytest.raises(BudgetExceeded) as caught:
            client.chat_json("verifier", MESSAGES, SCHEMA)
        sent = len(server.chat_requests)
    assert value["answer"] == "A" and usage["prompt_tokens"] == 22_000_000_000 and sent == 1
    prompt = len(json.dumps(MESSAGES, ensure_ascii=False)) // 4
    assert str(caught.value) == (
        f"The run reached its budget of 400000 tokens (22000000007 used, 22000000007 of them reported by the model "
        f"server at {server.base_url} for one verifier call of about {prompt} prompt tokens and at most 256 answer "
        "tokens, more than the whole budget); check the token counts the server reports.")


def test_the_key_echoed_without_its_prefix_or_in_part_is_masked_in_answers_errors_logs_and_cache(tmp_path):
    """Only the exact key was masked: a server echoing it without 'sk-' (or 8 characters of it) reached the console,
    the record and the report. Every run of 8 or more of its characters is masked in what the server says."""
    bare, part = KEY[len("sk-"):], KEY[8:16]
    logs: list[str] = []
    answer = {"answer": "A", "confidence": 1, "note": f"called with {bare}, that is {part}; safe: {KEY[8:15]}"}
    with FakeOpenAIServer([Reply(answer), Reply(status=401, error=f"Incorrect API key provided: {bare[:12]}****")]) \
            as server:
        client = _client(server, logs, cache_dir=tmp_path / "cache")
        value, _ = client.chat_json("verifier", MESSAGES, SCHEMA)
        with pytest.raises(LodestarError) as caught:
            client.chat_json("planner", MESSAGES, SCHEMA)
    assert value["note"] == f"called with ***, that is ***; safe: {KEY[8:15]}"
    assert str(caught.value).startswith(f"The model server at {server.base_url} refused the request (HTTP 401): "
                                        "Incorrect API key provided: *******. Check the API key")
    [cached] = (tmp_path / "cache").glob("*.json")
    shown = "\n".join([str(caught.value), *logs, json.dumps(value), cached.read_text(encoding="utf-8")])
    assert not [run for run in _eight_char_runs(KEY) if run in shown]
