"""Hostile model servers (issue 60, items 7, 11, 12, 14 and 15): token counts that are negative, NaN, text or larger
than the budget, a proxy's HTML page answered with HTTP 200, the key echoed without its 'sk-' prefix or in part, and
no usable plan. A real loopback server (127.0.0.1), lodestar:analyze through real Processing and the real
`qgis_process`: every run that reaches no answer exits non-zero with one line, after writing its record and report."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

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
from lodestar.tests.reliability.test_outputs_and_secrets import _console, _outputs

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-issue60-SECRET-60606060"


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    return copy_sample(tmp_path_factory.mktemp("sample")) / "case.json"


def _openai(server, **extra) -> dict:
    return {"BACKEND": 1, "BASE_URL": server.base_url, "API_KEY": KEY, "PLANNER_MODEL": "m", "EXECUTOR_MODEL": "m",
            "VERIFIER_MODEL": "m", "MAX_ROUNDS": 1, "ATTEMPTS": 2, **extra}


def _failing(run, case, server, folder: Path, **extra) -> str:
    """The one line lodestar:analyze fails with (the QgsProcessingException qgis_process turns into exit 1)."""
    from qgis.core import QgsProcessingException

    with pytest.raises(QgsProcessingException) as caught:
        run("lodestar:analyze", {"CASE": str(case), **_openai(server, **extra), **_outputs(folder)})
    message = str(caught.value)
    assert "\n" not in message and "Unexpected error" not in message
    return message


def _kept(folder: Path) -> dict:
    """The record of a failed run: it and the report are written, the map layers and the surface are not."""
    assert (folder / "report.html").is_file()
    assert not (folder / "zones.gpkg").exists() and not (folder / "favourability.tif").exists()
    record = json.loads((folder / "record.json").read_text(encoding="utf-8"))
    assert record["result"]["answer"] == "Failed"
    return record


def _counts(usage: dict) -> list:
    return [row[key] for row in usage.values() for key in ("calls", "prompt_tokens", "completion_tokens")]


# ----------------------------------------------------- items 7 and 12: token counts that are not counts
@pytest.mark.parametrize("value", [-11_000_000_000, float("nan"), "many"], ids=["negative", "nan", "text"])
def test_token_counts_that_are_not_counts_stop_the_run_with_one_line_and_count_nothing(run, case, tmp_path, value):
    """-11e9 prompt tokens a call: the run made 11 calls on a budget for 2 and recorded -22e9 tokens (item 7); NaN or
    text: 'Unexpected error: ValueError' (item 12). Now such an answer is retried, then the run stops with one line
    naming the server and what it reported; the record holds no negative count."""
    def script(request):
        return Reply(content=PLAN, usage={"prompt_tokens": value, "completion_tokens": 40})

    with FakeOpenAIServer(script) as server:
        message = _failing(run, case, server, tmp_path, MAX_TOKENS=20_000)
        sent = len(server.chat_requests)
    assert sent == 2  # ATTEMPTS=2: the first answer and one retry, then no further call
    assert message == (
        f"The model server failed, so the run could not finish: The model server at {server.base_url} kept answering "
        f"with no usable chat completion (2 attempts); its last answer: HTTP 200 with application/json, "
        f"usage.prompt_tokens = {json.dumps(value)}, not a count of tokens. The token budget counts only whole numbers "
        "of 0 or more: check the server's version, or that the base URL points at an OpenAI-compatible API. The run "
        f"record is {tmp_path / 'record.json'}; the report is {tmp_path / 'report.html'}.")
    record = _kept(tmp_path)
    assert record["usage"]["planner"]["retries"] == 1
    assert all(isinstance(n, int) and n == 0 for n in _counts(record["usage"]))


# ------------------------------------------------------------------- item 11: an HTML page with HTTP 200
def test_an_html_page_answered_with_200_is_retried_then_one_line_naming_the_server(run, case, tmp_path):
    """A proxy's sign-in page with HTTP 200: 'Unexpected error: AttributeError', no retry (item 11)."""
    page = b"<html><head><title>Corporate sign-in</title></head><body>Log in to continue</body></html>"
    with FakeOpenAIServer(lambda request: Reply(raw=page, content_type="text/html")) as server:
        message = _failing(run, case, server, tmp_path)
        sent = len(server.chat_requests)
    assert sent == 2
    assert message.startswith(f"The model server failed, so the run could not finish: The model server at "
                              f"{server.base_url} kept answering with no usable chat completion (2 attempts); its "
                              "last answer: HTTP 200 with text/html, not JSON: a page titled 'Corporate sign-in'. "
                              "Check that the base URL points at an OpenAI-compatible API (it usually ends in /v1)")
    assert _kept(tmp_path)["result"]["stopped"].startswith(f"The model server at {server.base_url} kept answering")


# ------------------------------------------------------------- item 14: the key echoed without its prefix
def test_the_key_echoed_without_its_prefix_or_in_part_is_nowhere_in_console_record_or_report(run, case, tmp_path):
    """The server echoes the key without 'sk-' in the executor's rationale and 8 characters of it in the verifier's:
    only the exact key was masked, so both reached the console, the record (6 times) and the report (item 14)."""
    bare, part = KEY[len("sk-"):], KEY[11:19]

    def observe(request):
        return {"rationale": f"Checked for key {bare}; the tool worked.", "sub_inference": "Yes",
                "global_inference": "continue"}

    script = by_role({"planner": [PLAN], "executor/act": porphyry_script([ACCEPT_A]), "executor/observe": observe,
                      "verifier": lambda request: dict(ACCEPT_A, rationale=f"Verified ({part})."),
                      "localization": lambda request: LOCALIZATION, "evidence": lambda request: EVIDENCE,
                      "verifier/targets": judge_targets})
    console = _console()
    with FakeOpenAIServer(script) as server:
        result = run("lodestar:analyze", {"CASE": str(case), **_openai(server), **_outputs(tmp_path)},
                     feedback=console)
    assert result["ANSWER"] == "A"
    assert [line for line in console.lines if "Checked for key ***; the tool worked." in line]
    shown = {"console": console.text, **{name: (tmp_path / name).read_text(encoding="utf-8")
                                         for name in ("record.json", "report.html")}}
    runs = [KEY[i:i + 8] for i in range(len(KEY) - 7)]
    assert {where: [r for r in runs if r in text] for where, text in shown.items()} == \
        {"console": [], "record.json": [], "report.html": []}
    assert "Verified (***)." in shown["record.json"]


# ---------------------------------------------------------------------- item 15: a run that ends Failed
NO_PLAN = "The run ended without an answer (Failed): No plan: The planner model (m) gave no usable answer after 2 " \
          "repair request(s): "


@pytest.mark.parametrize("reply, said", [
    (Reply(content="I would start with the AlOH index."),
     NO_PLAN + "No JSON object could be read from the reply: no '{' was found."),
    (Reply(content={"plan": PLAN["steps"]}), NO_PLAN + "The JSON answer does not follow the required format: $ is "
                                                       "missing the required key 'steps'"),
], ids=["prose", "wrong-schema"])
def test_a_run_without_a_usable_plan_exits_non_zero_with_why(run, case, tmp_path, reply, said):
    """The planner answers prose, or JSON of the wrong schema, through every repair: 'Answer: Failed' and exit 0."""
    with FakeOpenAIServer(lambda request: reply) as server:
        message = _failing(run, case, server, tmp_path)
        planned = [r for r in server.chat_requests if r.role == "planner"]
    assert len(planned) == 3  # the answer and its two repairs
    assert message.startswith(said), message
    assert message.endswith(f"The run record is {tmp_path / 'record.json'}; the report is {tmp_path / 'report.html'}.")
    record = _kept(tmp_path)
    assert record["usage"]["planner"]["repairs"] == 2 and record["result"]["stopped"] == ""


def test_a_count_past_the_whole_budget_stops_the_run_and_exits_non_zero(run, case, tmp_path):
    """22e9 tokens reported for the plan: they are counted (the budget bounds what the server says it spent), so the
    next call is refused and the run, with no answer, exits non-zero with a line naming the server's count."""
    with FakeOpenAIServer(lambda request: Reply(content=PLAN, prompt_tokens=22_000_000_000, completion_tokens=1)) \
            as server:
        message = _failing(run, case, server, tmp_path)
        sent = len(server.chat_requests)
    assert sent == 1
    assert message.startswith("The run ended without an answer (Failed): No further model calls (The run reached its "
                              "budget of 400000 tokens (22000000001 used, 22000000001 of them reported by the model "
                              f"server at {server.base_url} for one planner call of about "), message
    assert "more than the whole budget); check the token counts the server reports." in message
    assert _kept(tmp_path)["usage"]["planner"]["prompt_tokens"] == 22_000_000_000


def test_qgis_process_exits_non_zero_when_no_usable_plan_comes(case, tmp_path):
    """The same through the real `qgis_process`: before, it printed 'Answer: Failed ...' and exited 0."""
    outputs = [f"{key}={value}" for key, value in _outputs(tmp_path / "out").items()]
    with FakeOpenAIServer(lambda request: Reply(content="no JSON here, sorry")) as server:
        done = subprocess.run([str(ROOT / "scripts" / "qgis_process.sh"), "run", "lodestar:analyze", "--",
                               f"CASE={case}", "BACKEND=1", f"BASE_URL={server.base_url}", "PLANNER_MODEL=m",
                               "EXECUTOR_MODEL=m", "VERIFIER_MODEL=m", *outputs], capture_output=True, text=True,
                              timeout=300, env={**os.environ, "LODESTAR_API_KEY": KEY})
    printed = done.stdout + done.stderr
    assert done.returncode != 0, printed[-2000:]
    [line] = [text for text in printed.splitlines() if text.startswith("ERROR:")]
    assert NO_PLAN in line and str(tmp_path / "out" / "record.json") in line
    assert "Answer:" not in printed and KEY not in printed
    assert json.loads((tmp_path / "out" / "record.json").read_text(encoding="utf-8"))["result"]["answer"] == "Failed"
