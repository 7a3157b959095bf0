"""A real loopback HTTP server that speaks the OpenAI chat-completions protocol, driven by a script.

    with FakeOpenAIServer([Reply({"answer": "A"}), Reply(status=429, headers={"Retry-After": "0"})]) as server:
        settings = BackendSettings(backend="openai", base_url=server.base_url, ...)

The script is a queue of replies (Reply, dict -> JSON content, str -> raw content) or a function of
the request returning one; `by_role` builds a function that answers from one queue per role, the role
being read from the system prompt's "Role: <name>" line. Replies can be errors with headers (429 with
Retry-After, 500), malformed bodies or pages of another content type (`content_type`), usage counts
as given (`usage`: negative, NaN, text), cut-off content, or slow. Every request is recorded with its
headers and body, for asserting on prompts, images, temperature, seed and where the API key went.
GET /v1/models lists `models` (for a connection test); `api_key` makes the server demand that key.
`vision` (True / False) makes GET /props answer as llama.cpp's server does ({"modalities": {"vision": ...}});
None leaves it unknown (404). A slow reply watches its socket: a client that leaves (a cancel, a deadline)
is seen at once and noted in `disconnects` (time.monotonic() of each), and the reply is dropped.
"""
from __future__ import annotations

import json
import re
import select
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Union

ROLE_LINE = re.compile(r"\bRole:\s*([A-Za-z_]+)")
PHASE_LINE = re.compile(r"\bPhase:\s*([A-Za-z_]+)")


@dataclass
class Reply:
    """One scripted answer: chat content (dict -> JSON text) or an error status, raw body, delay."""

    content: Union[dict, str, None] = None
    status: int = 200
    headers: dict = field(default_factory=dict)
    delay_s: float = 0.0
    raw: bytes | None = None  # the HTTP body sent as-is (e.g. malformed JSON)
    finish_reason: str = "stop"
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    error: str = ""  # error message for status >= 400
    usage: object = None  # the body's "usage" sent as-is (negative, NaN or text counts), instead of the counts above
    content_type: str = "application/json"  # e.g. text/html, for a proxy's page answered with 200


Script = Union[list, Callable[["RecordedRequest"], object], None]


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict  # lower-case names
    raw: bytes
    body: dict | None

    @property
    def messages(self) -> list[dict]:
        return list((self.body or {}).get("messages") or [])

    def texts(self, who: str) -> list[str]:
        """The text parts of the messages from `who` (system, user, assistant)."""
        out = []
        for message in self.messages:
            if message.get("role") != who:
                continue
            content = message.get("content")
            if isinstance(content, str):
                out.append(content)
            elif isinstance(content, list):
                out += [part.get("text", "") for part in content if part.get("type") == "text"]
        return out

    @property
    def system(self) -> str:
        return "\n".join(self.texts("system"))

    @property
    def role(self) -> str:
        """The role named on the system prompt's "Role:" line ("" when there is none)."""
        found = ROLE_LINE.search(self.system)
        return found.group(1).lower() if found else ""

    @property
    def phase(self) -> str:
        """The phase named on the system prompt's "Phase:" line ("" when there is none)."""
        found = PHASE_LINE.search(self.system)
        return found.group(1).lower() if found else ""

    @property
    def data(self) -> dict:
        """The JSON data block of the last user message ({} when there is none)."""
        texts = self.texts("user")
        text = texts[-1] if texts else ""
        start, end = text.find("<data>"), text.rfind("</data>")
        if start == -1 or end == -1:
            return {}
        try:
            return json.loads(text[start + len("<data>"):end])
        except ValueError:
            return {}

    @property
    def images(self) -> list[str]:
        """Image URLs (data URLs) sent in any message."""
        urls = []
        for message in self.messages:
            content = message.get("content")
            if isinstance(content, list):
                urls += [part["image_url"]["url"] for part in content if part.get("type") == "image_url"]
        return urls


def by_role(replies: dict) -> Callable[[RecordedRequest], object]:
    """A script answering each role from its own queue (a list, consumed in order) or function.

    Keys are roles ("planner") or role/phase pairs ("executor/observe"), the pair winning."""
    queues = {role: (list(value) if isinstance(value, (list, tuple)) else value) for role, value in replies.items()}

    def answer(request: RecordedRequest):
        queue = queues.get(f"{request.role}/{request.phase}", queues.get(request.role))
        if queue is None:
            return Reply(status=404, error=f"fake server: no script for role {request.role!r}")
        if callable(queue):
            return queue(request)
        if not queue:
            return Reply(status=404, error=f"fake server: no scripted reply left for role {request.role!r}")
        return queue.pop(0)

    return answer


IMAGE_TOKENS = 765  # what OpenAI bills a 768 x 768 image at high detail (85 + 4 tiles x 170)


def _approx_tokens(value) -> int:
    """About four characters a token for text; a fixed price per image, as real servers count them."""
    text = json.dumps(value, ensure_ascii=False)
    images = text.count('"image_url"')
    text = re.sub(r"data:image/[a-z]+;base64,[A-Za-z0-9+/=]+", "", text)
    return max(1, len(text) // 4) + IMAGE_TOKENS * images


class FakeOpenAIServer:
    """The server, listening on 127.0.0.1 on a free port while the context is open."""

    def __init__(self, script: Script = None, models: tuple = ("test-model",), api_key: str | None = None,
                 vision: bool | None = None):
        self._script = list(script) if isinstance(script, (list, tuple)) else script
        self._script_is_queue = isinstance(self._script, list) or script is None
        if script is None:
            self._script = []
        self.models = list(models)
        self.api_key = api_key
        self.vision = vision
        self.disconnects: list[float] = []  # when a client left while its reply was pending (time.monotonic())
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._counter = 0
        self._port = 0

    # ---- lifecycle ------------------------------------------------------------------------
    def __enter__(self) -> FakeOpenAIServer:
        self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def start(self) -> None:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._port = self._httpd.server_address[1]
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._thread.join(timeout=5)
            self._httpd = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    # ---- script ---------------------------------------------------------------------------
    def push(self, *replies) -> None:
        """Append replies to a queue script."""
        with self._lock:
            self._script.extend(replies)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            if self._script_is_queue:
                reply = self._script.pop(0) if self._script else Reply(
                    status=404, error="fake server: no scripted reply left")
            else:
                reply = None
        if reply is None:
            reply = self._script(request)
        if isinstance(reply, Reply):
            return reply
        return Reply(content=reply)

    def _completion_body(self, request: RecordedRequest, reply: Reply) -> bytes:
        content = json.dumps(reply.content) if isinstance(reply.content, dict) else reply.content
        with self._lock:
            self._counter += 1
            number = self._counter
        prompt = reply.prompt_tokens if reply.prompt_tokens is not None else _approx_tokens(request.messages)
        completion = reply.completion_tokens if reply.completion_tokens is not None else _approx_tokens(content or "")
        usage = reply.usage if reply.usage is not None else {
            "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
        body = {
            "id": f"chatcmpl-fake-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": (request.body or {}).get("model", ""),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": reply.finish_reason}],
            "usage": usage,
        }
        return json.dumps(body).encode("utf-8")


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAIServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args) -> None:  # noqa: A002 - keep test output quiet
        return

    def _record(self, raw: bytes) -> RecordedRequest:
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        request = RecordedRequest(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, raw,
                                  body if isinstance(body, dict) else None)
        with self.fake._lock:
            self.fake.requests.append(request)
        return request

    def _send(self, status: int, body: bytes, headers: dict | None = None,
              content_type: str = "application/json") -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, str(value))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _error(self, status: int, message: str, headers: dict | None = None) -> None:
        body = json.dumps({"error": {"message": message, "type": "fake_error", "code": status}}).encode("utf-8")
        self._send(status, body, headers)

    def _client_left(self) -> bool:
        """Whether the client closed or shut down its end (its socket reads as end-of-file)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _authorised(self, request: RecordedRequest) -> bool:
        if self.fake.api_key is None:
            return True
        sent = request.headers.get("authorization", "")
        if sent == f"Bearer {self.fake.api_key}":
            return True
        # like real servers, echo what was sent: the client must keep it out of its messages
        self._error(401, f"Incorrect API key provided: {sent.replace('Bearer ', '')}")
        return False

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        request = self._record(b"")
        if not self._authorised(request):
            return
        if self.path.rstrip("/").endswith("/models"):
            data = [{"id": name, "object": "model", "created": 0, "owned_by": "fake"} for name in self.fake.models]
            self._send(200, json.dumps({"object": "list", "data": data}).encode("utf-8"))
        elif self.path.rstrip("/") == "/props" and self.fake.vision is not None:
            self._send(200, json.dumps({"modalities": {"vision": self.fake.vision}}).encode("utf-8"))
        else:
            self._error(404, f"fake server: unknown path {self.path}")

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers.get("Content-Length") or 0)
        request = self._record(self.rfile.read(length) if length else b"")
        if not self._authorised(request):
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._error(404, f"fake server: unknown path {self.path}")
            return
        try:
            reply = self.fake._next_reply(request)
        except Exception as exc:  # noqa: BLE001 - a broken test script answers visibly, not by a dropped socket
            reply = Reply(status=418, error=f"fake server: the script raised {type(exc).__name__}: {exc}")
        deadline = time.monotonic() + reply.delay_s
        while time.monotonic() < deadline and not self.fake._stopping.is_set():
            if self._client_left():
                with self.fake._lock:
                    self.fake.disconnects.append(time.monotonic())
                self.close_connection = True
                return
            time.sleep(0.01)
        if reply.raw is not None:
            self._send(reply.status, reply.raw, reply.headers, reply.content_type)
        elif reply.status >= 400:
            self._error(reply.status, reply.error or f"fake error {reply.status}", reply.headers)
        else:
            self._send(reply.status, self.fake._completion_body(request, reply), reply.headers, reply.content_type)
