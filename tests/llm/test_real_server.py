"""lodestar:analyze with BACKEND openai against a real OpenAI-compatible server: llama.cpp's server (llama-cpp-python)
serving SmolLM2-135M-Instruct, started by scripts/test_llm.sh (`make test-llm`), which sets LODESTAR_LLM_URL and
LODESTAR_LLM_MODEL. A recording proxy between Lodestar and the server keeps every request and response, so the
test checks the server's own words: every answer conforms to the schema sent with its request (no repair), the
run's token counts equal the server's `usage`, images refused by the text-only model are sent as text, and a cancel
stops the run within a second and closes the connection. The answers may be wrong: the point is the path.

Figures (calls, tokens, seconds per role, beside the scripted server's for the same run) go to
build/llm/figures.json and are printed."""
from __future__ import annotations

import http.client
import json
import os
import re
import select
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from lodestar.models.llm_client import LLMClient
from lodestar.models.structured import validate
from lodestar.plugin.analysis import BackendSettings
from lodestar.plugin.progress import Progress
from lodestar.tests.fakes.openai_server import FakeOpenAIServer, by_role
from lodestar.tests.fakes.sta_cot_scripts import (
    ACCEPT_A,
    EVIDENCE,
    LOCALIZATION,
    PLAN,
    copy_sample,
    judge_targets,
    porphyry_script,
)

URL = os.environ.get("LODESTAR_LLM_URL", "")
MODEL = os.environ.get("LODESTAR_LLM_MODEL", "smollm2")
ROOT = Path(__file__).resolve().parents[2]
FIGURES = ROOT / "build" / "llm" / "figures.json"
EXCHANGES = ROOT / "build" / "llm" / "exchanges.json"
ROLE_LINE = re.compile(r"\bRole:\s*([A-Za-z_]+)")
PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde\x00\x00"
       b"\x00\x0cIDATx\x9cc\xf8\xcf\xc0\x00\x00\x03\x01\x01\x00\xc9\xfe\x92\xef\x00\x00\x00\x00IEND\xaeB`\x82")


class RecordingProxy:
    """A loopback HTTP proxy to the model server that records each exchange and notices a client that leaves."""

    def __init__(self, upstream: str):
        parts = urlsplit(upstream)
        self.host, self.port, self.prefix = parts.hostname, parts.port, parts.path.rstrip("/")
        self.exchanges: list[dict] = []
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format, *args):  # noqa: A002 - quiet
                return

            def do_GET(self):  # noqa: N802
                self._forward(b"")

            def do_POST(self):  # noqa: N802
                self._forward(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

            def _left(self) -> bool:
                readable, _, _ = select.select([self.connection], [], [], 0)
                try:
                    return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
                except OSError:
                    return True

            def _forward(self, body: bytes):
                entry = {"path": self.path, "arrived": time.monotonic(),
                         "request": json.loads(body) if body else None}
                with proxy.lock:
                    proxy.exchanges.append(entry)
                upstream = http.client.HTTPConnection(proxy.host, proxy.port, timeout=3600)
                headers = {k: v for k, v in self.headers.items() if k.lower() in ("content-type", "authorization")}
                answer: dict = {}

                def ask():
                    try:
                        upstream.request(self.command, self.path, body=body or None, headers=headers)
                        response = upstream.getresponse()
                        answer.update(status=response.status, body=response.read())
                    except OSError as exc:
                        answer.update(error=str(exc))

                worker = threading.Thread(target=ask, daemon=True)
                worker.start()
                while worker.is_alive():
                    worker.join(0.02)
                    if worker.is_alive() and self._left():
                        entry["client_left"] = time.monotonic()
                        try:
                            upstream.sock.shutdown(socket.SHUT_RDWR)
                        except (OSError, AttributeError):
                            pass
                        self.close_connection = True
                        return
                if "error" in answer:
                    entry["error"] = answer["error"]
                    self.close_connection = True
                    return
                entry["status"], entry["seconds"] = answer["status"], time.monotonic() - entry["arrived"]
                try:
                    entry["response"] = json.loads(answer["body"])
                except ValueError:
                    entry["response"] = None
                try:
                    self.send_response(answer["status"])
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(answer["body"])))
                    self.end_headers()
                    self.wfile.write(answer["body"])
                except OSError:
                    self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{self.prefix}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    def chats(self) -> list[dict]:
        return [e for e in self.exchanges if e["path"].endswith("/chat/completions")]


def _role(request: dict) -> str:
    system = next((m["content"] for m in request["messages"] if m["role"] == "system"), "")
    found = ROLE_LINE.search(system if isinstance(system, str) else "")
    return found.group(1).lower() if found else ""


def _outputs(folder: Path) -> dict:
    return {"OUTPUT_ZONES": str(folder / "zones.gpkg"), "OUTPUT_NODES": str(folder / "nodes.gpkg"),
            "OUTPUT_EDGES": str(folder / "edges.gpkg"), "OUTPUT_PROSPECTIVITY": str(folder / "prospectivity.gpkg"),
            "OUTPUT_REPORT": str(folder / "report.html"), "OUTPUT_RECORD": str(folder / "record.json")}


def _parameters(case: Path, base_url: str, folder: Path, model: str) -> dict:
    """The sample case, one verification round, a text-only model (VISION no), structured output auto."""
    return {"CASE": str(case / "case.json"), "BACKEND": 1, "BASE_URL": base_url, "PLANNER_MODEL": model,
            "MAX_ROUNDS": 1, "VISION": 2, "STRUCTURED": 0, "TIMEOUT": 900, "ATTEMPTS": 1, "DEADLINE": 900,
            **_outputs(folder)}


def _figures(usage: dict) -> dict:
    return {role: {"calls": row["calls"], "prompt_tokens": row["prompt_tokens"],
                   "completion_tokens": row["completion_tokens"], "seconds": round(row["seconds"], 1)}
            for role, row in usage.items() if row.get("calls")}


def _save(name: str, figures: dict) -> None:
    FIGURES.parent.mkdir(parents=True, exist_ok=True)
    found = json.loads(FIGURES.read_text(encoding="utf-8")) if FIGURES.is_file() else {}
    found[name] = figures
    FIGURES.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
    print(f"\n{name}:")
    for role, row in figures.items():
        if "calls" not in row:
            print(f"  {role}: {row}")
            continue
        print(f"  {role:<13} {row['calls']:>3} calls {row['prompt_tokens']:>7} prompt {row['completion_tokens']:>6} "
              f"completion {row['seconds']:>7.1f} s")


def test_images_refused_by_the_text_only_model_go_as_text():
    """Vision 'auto': the server does not report it, the first image is refused (HTTP 500), the evidence goes as
    text from then on, all in one call."""
    with RecordingProxy(URL) as proxy:
        client = LLMClient(BackendSettings(backend="openai", base_url=proxy.base_url, models={"executor": MODEL},
                                           timeout_s=300, deadline_s=600), Progress())
        schema = {"type": "object", "required": ["colour"], "properties": {"colour": {"type": "string",
                                                                                      "enum": ["red", "grey"]}}}
        messages = [{"role": "system", "content": "Role: executor\nAnswer in JSON."},
                    {"role": "user", "content": "Which colour is the attached pixel?"}]
        text = [messages[0], {"role": "user", "content": "The pixel is 200 on a 0-255 red scale. Which colour?"}]
        value, usage = client.chat_json("executor", messages, schema, images=[PNG], text_messages=text)
        chats = proxy.chats()
    assert value["colour"] in ("red", "grey") and usage["text_calls"] == 1 and usage["repairs"] == 0
    assert [e["status"] for e in chats][-1] == 200
    refused = [e for e in chats if isinstance(e["request"]["messages"][-1]["content"], list)]
    assert refused and refused[0]["status"] == 500
    assert client.server()[MODEL]["sees_images"] is False


@pytest.mark.timeout(5400)  # a small model on two shared CPU cores reads about 20 prompt tokens a second
def test_analyze_completes_with_schema_valid_answers_and_the_servers_token_counts(run, tmp_path):
    case = copy_sample(tmp_path / "case")
    started = time.monotonic()
    with RecordingProxy(URL) as proxy:
        try:
            result = run("lodestar:analyze", _parameters(case, proxy.base_url, tmp_path / "out", MODEL))
        finally:  # the server's own words, kept for whoever reads a failure
            EXCHANGES.parent.mkdir(parents=True, exist_ok=True)
            EXCHANGES.write_text(json.dumps(proxy.chats(), indent=1, default=str), encoding="utf-8")
        chats = proxy.chats()
    wall = time.monotonic() - started
    record = json.loads((tmp_path / "out" / "record.json").read_text(encoding="utf-8"))
    assert result["ANSWER"] in ("A", "B", "Insufficient evidence")  # a Failed run raises (a non-zero exit)
    assert not any("No further model calls" in note for note in record["result"]["notes"])  # the run completed
    answered = [e for e in chats if e.get("status") == 200]
    formats = {e["request"]["response_format"]["type"] for e in answered}
    assert formats == {"json_object"} and all("schema" in e["request"]["response_format"] for e in answered)
    for exchange in answered:  # every answer conforms to the schema sent with its request: no repair needed
        content = exchange["response"]["choices"][0]["message"]["content"]
        # strict=False: llama.cpp's JSON grammar lets a raw line break into a string, which Lodestar reads
        assert validate(json.loads(content, strict=False), exchange["request"]["response_format"]["schema"]) == [], \
            content
        assert exchange["response"]["choices"][0]["finish_reason"] == "stop"
    usage = record["usage"]
    assert all(row["repairs"] == 0 and row["retries"] == 0 for row in usage.values())
    assert all(row["image_calls"] == 0 for row in usage.values())
    server = {}
    for exchange in answered:  # the run's token counts are the server's usage, role by role
        row = server.setdefault(_role(exchange["request"]), {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0})
        row["calls"] += 1
        row["prompt_tokens"] += exchange["response"]["usage"]["prompt_tokens"]
        row["completion_tokens"] += exchange["response"]["usage"]["completion_tokens"]
    assert server == {role: {k: row[k] for k in ("calls", "prompt_tokens", "completion_tokens")}
                      for role, row in usage.items() if row["calls"]}
    assert max(e["request"]["max_tokens"] for e in answered) <= 4096
    figures = _figures(usage)
    figures["run"] = {"answer": result["ANSWER"], "wall_s": round(wall, 1), "requests": len(chats),
                      "refused_format": sum(e.get("status") == 500 for e in chats)}
    _save("smollm2-135m (llama-cpp-python, 2 threads)", figures)


def test_the_scripted_server_on_the_same_run(run, tmp_path):
    """The same run (sample case, one round, text-only executor) against the scripted server, for the README."""
    case = copy_sample(tmp_path / "case")
    plan = {"steps": [step for step in PLAN["steps"] if step["tool"] != "mark_boxes"]}
    full = porphyry_script([ACCEPT_A])
    script = by_role({"planner": [plan], "executor/act": full, "executor/observe": full, "verifier": [ACCEPT_A],
                      "localization": lambda request: LOCALIZATION, "evidence": lambda request: EVIDENCE,
                    "verifier/targets": judge_targets})
    with FakeOpenAIServer(script) as server:
        result = run("lodestar:analyze", _parameters(case, server.base_url, tmp_path / "out", "test-model"))
    record = json.loads((tmp_path / "out" / "record.json").read_text(encoding="utf-8"))
    assert result["ANSWER"] == "A"
    figures = _figures(record["usage"])
    figures["run"] = {"answer": result["ANSWER"]}
    _save("scripted loopback server", figures)


def test_cancel_stops_the_run_before_the_server_answers_and_closes_the_connection(run, tmp_path):
    """A cancel while the server is reading or generating ends the run without waiting for the answer: the client
    leaves the connection before the server answers, and the run ends far inside one attempt's timeout (900 s here).
    How soon is recorded (build/llm/figures.json), not asserted: the server takes both cores while it works."""
    from qgis.core import QgsProcessingException, QgsProcessingFeedback

    case = copy_sample(tmp_path / "case")
    feedback = QgsProcessingFeedback()
    cancelled: list[float] = []
    with RecordingProxy(URL) as proxy:
        def cancel_during_the_first_answer():
            while not [e for e in proxy.chats() if e["request"]["response_format"]["type"] == "json_object"]:
                time.sleep(0.01)  # the first request the server takes (after its refusal of json_schema)
            time.sleep(1.0)  # the server is reading the prompt or generating
            cancelled.append(time.monotonic())
            feedback.cancel()

        threading.Thread(target=cancel_during_the_first_answer, daemon=True).start()
        with pytest.raises(QgsProcessingException):
            run("lodestar:analyze", _parameters(case, proxy.base_url, tmp_path / "out", MODEL), feedback=feedback)
        stopped = time.monotonic()
        for _ in range(100):
            if "client_left" in proxy.chats()[-1]:
                break
            time.sleep(0.02)
        first = proxy.chats()[-1]
    assert "status" not in first and "client_left" in first  # left before the answer came
    assert stopped - cancelled[0] < 10.0  # not waiting out the attempt's 900 s
    _save("cancel", {"run": {"stopped_after_s": round(stopped - cancelled[0], 3),
                             "connection_closed_after_s": round(first["client_left"] - cancelled[0], 3)}})
