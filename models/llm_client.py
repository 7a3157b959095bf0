"""The one client for OpenAI-compatible chat servers (OpenAI, Azure OpenAI, vLLM, Ollama, LM Studio, llama.cpp...).

`LLMClient.chat_json(role, messages, schema, images, text_messages=...)` sends one request for a JSON
answer and returns the parsed object once it conforms to `schema`, re-asking the model with the
validation error a bounded number of times. Around every HTTP request it keeps the run's promises:

- structured output: the role's JSON schema goes with the request (`response_format` json_schema,
  strict when the schema allows it); what the server accepts is found once per run and model
  (json_schema, else JSON mode carrying the schema as llama-cpp-python takes it, else plain JSON
  mode, else nothing) or fixed by the `structured` setting; the repair loop stays behind it;
- images only for models that see them: the `vision` setting per role, else what the server reports
  (llama.cpp's /props, Ollama's /api/show), else tried once; a model without vision gets
  `text_messages`, the evidence as text, and the usage says which form went out;
- bounded calls: `max_tokens` per role (the setting, else sized from the schema), a timeout per
  attempt, a number of attempts and a total deadline per call, retries with back-off on 429 / 5xx /
  lost connections (honouring Retry-After), a token estimate before sending (a request that would
  pass the run's token budget is refused, or its answer allowance cut to what is left);
- cancellation within a fraction of a second, also while the server is silent: the request runs in a
  worker thread and a cancel (or the deadline) shuts the HTTP connection's socket down, so the
  server sees the client leave;
- only conforming answers: a 2xx answer that is no chat completion (a proxy's HTML page, JSON of another
  shape, token counts that are not whole numbers of 0 or more) is retried like a 5xx, then refused; a count
  is believed however large (the budget bounds what the server says it spent) and one past the whole budget
  is named when the budget stops the run;
- honest messages, one line each: the HTTP status and the server's own error text (or what it answered
  instead of a completion), timeouts as timeouts, the budget as the budget;
- temperature and seed from the settings, a response cache keyed by a hash of the request, token and
  latency accounting per role. The API key is sent in the Authorization header only: it never appears
  in log lines, error messages or cache files, nor does any run of 8 or more of its characters that a server
  echoes (masked in every reply before anything reads it).
"""
from __future__ import annotations

import base64
import copy
import email.utils
import hashlib
import json
import math
import re
import socket
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Callable

from ..plugin.analysis import ROLES_OF_MODELS, BackendSettings, Structured
from ..plugin.errors import Cancelled, LodestarError, require_package
from ..plugin.files import write_text_atomic
from ..plugin.json_text import JSONExtractionError, extract_json
from ..plugin.labels import number
from ..plugin.masking import mask_secrets
from ..plugin.progress import SILENT, Progress
from .structured import validate

MAX_REPAIRS = 2
"""How many times a model is asked again after an answer that is not valid JSON for the schema."""

MAX_WAIT_S = 60.0
"""Longest single wait before a retry, whatever the server's Retry-After says."""

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_NO_KEY = "none"  # sent as the bearer token to local servers that need no key
_POLL_S = 0.05  # how often a call in flight looks at the cancel flag and its deadline

STRING_CHARS = 240
"""The longest free text the schema sent to a server allows (its strings' maxLength): answers stay short
enough to finish within the answer tokens."""
ROUND_VALUES = 40
"""About how many round values a bounded number may take in the schema sent to a server."""
MIN_ANSWER_TOKENS, MAX_ANSWER_TOKENS = 256, 4096
"""Bounds of the answer tokens sized from a schema."""

FORMS = ("json_schema", "json_object_schema", "json_object", "none")
"""How an answer's format is asked for, strongest first: the schema as structured output (OpenAI, vLLM, Ollama,
llama.cpp's server, LM Studio), JSON mode carrying the schema (llama-cpp-python's server), plain JSON mode,
nothing."""
FORM_WORDS = {"json_schema": "the JSON schema", "json_object_schema": "JSON mode with the schema",
              "json_object": "JSON mode", "none": "no output format"}
STRUCTURED: dict[Structured, tuple[str, ...]] = {"auto": FORMS, "json_schema": ("json_schema",),
                                                  "json_object": ("json_object", "none"), "off": ("none",)}
"""The `structured` setting -> the forms tried, in order, until the server takes one."""

_OPTIONAL = {"seed": "the seed", "temperature": "the temperature"}
"""Request parameters left out, one at a time, when a server answers 400 to them."""
_FORMAT_WORDS = re.compile(r"response_format|json_schema|json_object|schema|grammar|\bjson\b", re.IGNORECASE)
_FORMAT_NAMED = re.compile(r"response_format|json_schema", re.IGNORECASE)
_IMAGE_WORDS = re.compile(r"image|vision|multimodal|modalit|mmproj|concatenate str|not \"?list|content.*list",
                          re.IGNORECASE)


class BudgetExceeded(LodestarError):
    """The run used up its model calls or tokens."""


class ModelOutputError(LodestarError):
    """A model kept answering with output that could not be used, after the allowed repairs."""


class _TimedOut(Exception):
    """One attempt ran past its time (the client's own clock: the socket was shut down)."""

    def __init__(self, seconds: float):
        super().__init__(f"no answer within {_seconds(seconds)} s")
        self.seconds = seconds


class _NotACompletion(Exception):
    """A 2xx answer that is not a chat completion the run can use: a page of another kind (a proxy's login page),
    JSON of another shape, or token counts that are not counts. `what` says what the server sent."""

    def __init__(self, what: str, advice: str):
        super().__init__(what)
        self.what = what
        self.advice = advice


_NOT_THE_API = ("Check that the base URL points at an OpenAI-compatible API (it usually ends in /v1) and that no "
                "proxy or login page answers in its place.")
_NOT_COUNTS = ("The token budget counts only whole numbers of 0 or more: check the server's version, or that the base "
               "URL points at an OpenAI-compatible API.")
_COUNTS = ("prompt_tokens", "completion_tokens")
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def _is_count(value) -> bool:
    """Whether a usage figure is a count of tokens: a whole number of 0 or more (12.0 too: JSON has one number)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value >= 0
    return isinstance(value, float) and math.isfinite(value) and value.is_integer() and value >= 0


def _completion(response, words: Callable[[str], str]) -> tuple[str, str, tuple[int, int] | None]:
    """(content, finish_reason, (prompt_tokens, completion_tokens), None when the server reports no usage) of a 2xx
    answer (an httpx response); _NotACompletion saying what it is otherwise. `words(text)` is the server's text as a
    message may show it (one line, the key masked, short)."""
    kind = response.headers.get("content-type", "").split(";")[0].strip() or "no content type"
    text = response.text
    said = f"HTTP {response.status_code} with {kind}"
    try:
        body = json.loads(text)
    except (ValueError, RecursionError):
        title = _TITLE.search(text)
        shown = f"a page titled '{words(title.group(1))}'" if title else f"'{words(text)}'"
        raise _NotACompletion(f"{said}, not JSON: {shown}", _NOT_THE_API) from None
    choices = body.get("choices") if isinstance(body, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, dict) else None
    if (not isinstance(choice, dict) or not isinstance(message, dict)  # (a message only comes from a dict choice)
            or not isinstance(message.get("content"), (str, type(None)))):
        raise _NotACompletion(f"{said}, JSON without a chat message in its choices: '{words(text)}'", _NOT_THE_API)
    usage = body.get("usage")
    if usage is not None and not isinstance(usage, dict):
        raise _NotACompletion(f"{said}, a usage that is not an object: '{words(json.dumps(usage))}'", _NOT_COUNTS)
    counts: list[Any] = [(usage or {}).get(name) for name in _COUNTS]  # JSON values, checked below
    for name, value in zip(_COUNTS, counts):
        if value is not None and not _is_count(value):
            raise _NotACompletion(f"{said}, usage.{name} = {words(json.dumps(value))}, not a count of tokens",
                                  _NOT_COUNTS)
    finish_reason = choice.get("finish_reason")
    finish_reason = finish_reason if isinstance(finish_reason, str) and finish_reason else "stop"
    return message.get("content") or "", finish_reason, None if None in counts else (int(counts[0]), int(counts[1]))


class _ImagesRefused(Exception):
    """The server refused a request because it carried images (a model without vision)."""

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text


def _seconds(value: float) -> str:
    """A duration for a message, to 2 significant digits ('57', '2.5', '0.3'), never '56.9556'."""
    return number(value, 2)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _empty_usage() -> dict:
    return {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "seconds": 0.0, "cached": 0,
            "retries": 0, "repairs": 0, "image_calls": 0, "text_calls": 0}


def _check_settings(settings: BackendSettings) -> str:
    url = (settings.base_url or "").strip().rstrip("/")
    if not url:
        raise LodestarError("Set the base URL of the model server, e.g. https://api.openai.com/v1 or "
                            "http://localhost:11434/v1 for Ollama.")
    if not url.startswith(("http://", "https://")):
        raise LodestarError(f"The model server URL {url!r} must start with http:// or https://.")
    return url


class _Connections:
    """The sockets of one client's HTTP connections, seen through httpx's `trace` request extension, so that a
    cancel or a deadline can shut them down: the server sees the client leave, and a thread blocked reading
    from a silent server wakes at once."""

    def __init__(self) -> None:
        self._sockets: list = []
        self._lock = threading.Lock()

    def hook(self, request) -> None:
        """httpx request event hook: ask httpcore to report the connections it opens."""
        request.extensions["trace"] = self._trace

    def _trace(self, event: str, info: dict) -> None:
        if not event.endswith("connect_tcp.complete"):
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is not None:
            with self._lock:
                self._sockets = [ref for ref in self._sockets if ref() is not None] + [weakref.ref(sock)]

    def abort(self) -> int:
        """Shut every open connection down (both directions); how many were open."""
        with self._lock:
            sockets = [ref() for ref in self._sockets]
            self._sockets = []
        shut = 0
        for sock in sockets:
            if sock is None:
                continue
            try:
                sock.shutdown(socket.SHUT_RDWR)
                shut += 1
            except OSError:  # already closed
                pass
        return shut


def _openai_client(settings: BackendSettings, timeout_s: float, http_client=None):
    openai = require_package("openai", "openai", "The OpenAI-compatible model back-end")
    extra = {} if http_client is None else {"http_client": http_client}
    return openai.OpenAI(base_url=_check_settings(settings), api_key=settings.api_key or _NO_KEY,
                         timeout=timeout_s, max_retries=0, **extra)


def png_data_url(png: bytes) -> str:
    """A data URL for PNG bytes, as chat servers take images."""
    if not isinstance(png, (bytes, bytearray)) or not bytes(png[:8]) == _PNG_SIGNATURE:
        raise LodestarError("Images for the model must be PNG bytes (render them with plugin/render.py).")
    return "data:image/png;base64," + base64.b64encode(bytes(png)).decode("ascii")


def with_images(messages: list[dict], images: list[bytes] | None) -> list[dict]:
    """A copy of `messages` whose last user message also carries `images` as image_url parts."""
    messages = copy.deepcopy(list(messages))
    if not images:
        return messages
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            parts = list(content) if isinstance(content, list) else [{"type": "text", "text": content or ""}]
            parts += [{"type": "image_url", "image_url": {"url": png_data_url(png)}} for png in images]
            message["content"] = parts
            return messages
    raise LodestarError("Images need a user message to go with; add one to the conversation.")


def _retry_after(exc) -> float | None:
    """Seconds the server asked to wait (Retry-After / retry-after-ms), if it said."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return float(milliseconds) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return None if parsed is None else max(0.0, parsed.timestamp() - time.time())


IMAGE_TOKENS = 765
"""Tokens counted for an image when the server reports no usage (OpenAI's price of a 768-pixel image)."""

_DATA_URL = re.compile(r"data:image/[a-z]+;base64,[A-Za-z0-9+/=]+")


def _estimate_tokens(value) -> int:
    """About four characters a token, plus a fixed price per image: the estimate of a request before it is
    sent, and the count for servers that report no usage."""
    text = json.dumps(value, ensure_ascii=False)
    images = len(_DATA_URL.findall(text))
    return max(1, len(_DATA_URL.sub("", text)) // 4) + IMAGE_TOKENS * images


# ---- the schema a server is given ----------------------------------------------------------------
def sent_schema(schema: dict) -> dict:
    """The schema as sent for structured output: every object closed (additionalProperties false where it
    lists its properties), free text bounded (maxLength), lists of choices bounded by their choices, a rule
    written as `anyOf` overlays sent as whole alternatives (what grammar-constrained servers read), an enum
    without its list of types (llama.cpp's grammar would read the types and drop the enum), a bounded number
    as its round values within the bounds (grammars cannot hold a number between bounds). What it accepts,
    `validate(schema)` accepts too."""
    if schema.get("anyOf") and (schema.get("properties") or schema.get("type")):
        base = {k: v for k, v in schema.items() if k not in ("anyOf", "description")}
        return {"anyOf": [sent_schema(_overlaid(base, overlay)) for overlay in schema["anyOf"]]}
    out = dict(schema)
    if "enum" in out and isinstance(out.get("type"), list):
        out.pop("type")
    kind = out.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "object" in kinds and out.get("properties"):
        out["properties"] = {k: sent_schema(v) for k, v in out["properties"].items()}
        out.setdefault("additionalProperties", False)
    if "array" in kinds and isinstance(out.get("items"), dict):
        out["items"] = sent_schema(out["items"])
        choices = out["items"].get("enum")
        if "maxItems" not in out:  # a list the server may not end: bounded by its choices, else by eight
            out["maxItems"] = len(choices) if choices else 8
    if "string" in kinds and "enum" not in out:
        out.setdefault("maxLength", STRING_CHARS)
    if kinds in (["number"], ["integer"]) and "enum" not in out and "minimum" in out and "maximum" in out:
        out["enum"] = _round_values(out["minimum"], out["maximum"], kinds[0] == "integer")
    return out


def _round_values(low: float, high: float, integer: bool) -> list:
    """At most about forty round values from `low` to `high` (both kept): steps of 1, 2, 2.5 or 5 times a power
    of ten."""
    span = high - low
    if span <= 0:
        return [low]
    rough = span / ROUND_VALUES
    power = 10.0 ** math.floor(math.log10(rough))
    step = next(power * m for m in (1, 2, 2.5, 5, 10) if power * m >= rough)
    if integer:
        step = max(1, math.ceil(step))
    first = math.ceil(low / step - 1e-9)
    values = [round(k * step, 10) for k in range(first, math.floor(high / step + 1e-9) + 1)]
    values = sorted({low, *values, high})
    return [int(v) for v in values] if integer else values


def _overlaid(base: dict, overlay: dict) -> dict:
    """`base` narrowed by `overlay`: its keywords replace the base's, its properties narrow the base's in turn
    (in the base's order), its required keys add to the base's."""
    out = {**base, **{k: v for k, v in overlay.items() if k not in ("properties", "required")}}
    if "properties" in overlay:
        properties = dict(base.get("properties") or {})
        for key, narrower in overlay["properties"].items():
            properties[key] = _overlaid(properties.get(key, {}), narrower)
        out["properties"] = properties
    if "required" in overlay:
        out["required"] = list(dict.fromkeys([*base.get("required", []), *overlay["required"]]))
    return out


def strict_schema(schema: dict) -> bool:
    """Whether `schema` meets strict structured output's rules (OpenAI): every object closed with all its
    properties required, and no free-form object."""
    if "anyOf" in schema:
        return all(strict_schema(variant) for variant in schema["anyOf"])
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "object" in kinds:
        properties = schema.get("properties")
        if not properties or schema.get("additionalProperties") is not False:
            return False
        if set(schema.get("required", [])) != set(properties):
            return False
        return all(strict_schema(v) for v in properties.values())
    if "array" in kinds and isinstance(schema.get("items"), dict):
        return strict_schema(schema["items"])
    return True


def _answer_size(schema: dict) -> float:
    """Tokens of the longest answer `schema` allows, roughly (three characters a token for JSON)."""
    if schema.get("anyOf"):
        return max(_answer_size(variant) for variant in schema["anyOf"])
    if schema.get("enum"):
        return 2 + max(len(json.dumps(v)) for v in schema["enum"]) / 3
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object":
        properties = schema.get("properties")
        if not properties:
            return 40.0  # a free-form object (tool parameters)
        return 2 + sum(len(k) / 3 + 2 + _answer_size(v) for k, v in properties.items())
    if kind == "array":
        items = schema.get("items")
        items = items if isinstance(items, dict) else {}
        return 2 + schema.get("maxItems", 8) * (1 + _answer_size(items))
    if kind == "string":
        return schema.get("maxLength", STRING_CHARS) / 3
    return 4.0


def answer_tokens_for(schema: dict) -> int:
    """Default `max_tokens` of an answer to `schema`: its longest answer, within 256 and 4096."""
    return int(min(MAX_ANSWER_TOKENS, max(MIN_ANSWER_TOKENS, 32 + _answer_size(sent_schema(schema)))))


def _response_format(form: str, role: str, schema: dict) -> dict | None:
    if form == "json_schema":
        sent = sent_schema(schema)
        return {"type": "json_schema", "json_schema": {"name": f"lodestar_{role}", "schema": sent,
                                                       "strict": "anyOf" not in sent and strict_schema(sent)}}
    if form == "json_object_schema":
        return {"type": "json_object", "schema": sent_schema(schema)}
    if form == "json_object":
        return {"type": "json_object"}
    return None


def _server_root(url: str) -> str:
    """The server's root for its own (non-OpenAI) endpoints: the base URL without a trailing /v1."""
    url = url.rstrip("/")
    return url[:-3] if url.endswith("/v1") else url


class LLMClient:
    """One run's connection to an OpenAI-compatible server, with its budget, cache and accounting."""

    def __init__(self, settings: BackendSettings, progress: Progress = SILENT, *,
                 max_repairs: int = MAX_REPAIRS, sleep: Callable[[float], None] = time.sleep):
        _check_settings(settings)
        if settings.structured not in STRUCTURED:
            raise LodestarError(f"Unknown structured-output mode {settings.structured!r}; use "
                                f"{', '.join(STRUCTURED)}.")
        self.settings = settings
        self.progress = progress
        self.max_repairs = max_repairs
        self._sleep = sleep
        self._client = None
        self._httpx = None
        self._connections = _Connections()
        self._dropped: dict[str, set] = {}  # model -> optional request parameters its server refused
        self._forms: dict[str, int] = {}  # model -> index into the forms its server is asked in (found once)
        self._vision: dict[str, bool | None] = {}  # model -> sees images (None: unknown)
        self._usage: dict[str, dict] = {}
        self.evidence_forms: dict[str, str] = {}  # role -> "image" or "text": how its last evidence went out
        self.found: dict[str, dict] = {}  # model -> {"response_format", "sees_images"}: kept up to date in place
        self.waits: list[float] = []  # every back-off wait, in seconds, in order
        self.budget_error: str | None = None  # set once the budget stopped the run
        self._crossed = ""  # a call the server reported as more tokens than the whole budget, in words

    # ---- accounting -------------------------------------------------------------------------
    def usage(self) -> dict:
        """role -> {calls, prompt_tokens, completion_tokens, seconds, cached, retries, repairs, image_calls,
        text_calls}."""
        return copy.deepcopy(self._usage)

    def totals(self) -> dict:
        total = _empty_usage()
        for row in self._usage.values():
            for key in total:
                total[key] += row[key]
        return total

    def _row(self, role: str) -> dict:
        return self._usage.setdefault(role, _empty_usage())

    def server(self) -> dict:
        """What was found about the server this run, per model: the output format it takes and whether the
        model sees images (None: not known)."""
        return copy.deepcopy(self.found)

    def _note(self, model: str) -> None:
        self.found[model] = {"response_format": self._form(model) if model in self._forms else None,
                             "sees_images": self._vision.get(model)}

    # ---- models ------------------------------------------------------------------------------
    def model_for(self, role: str) -> str:
        """The model configured for `role`; roles without one (e.g. localization) use the planner's,
        then any configured model."""
        models = self.settings.models or {}
        for name in (role, "planner", *ROLES_OF_MODELS):
            if (models.get(name) or "").strip():
                return models[name].strip()
        raise LodestarError("No model name is set: enter the model for the planner, executor and verifier "
                            "(the same name for all three is fine).")

    def answer_tokens(self, role: str, schema: dict) -> int:
        """`max_tokens` of one answer for `role`: the setting, else sized from the schema."""
        wanted = (self.settings.answer_tokens or {}).get(role)
        try:
            wanted = int(wanted or 0)
        except (TypeError, ValueError):
            raise LodestarError(f"The answer tokens of the {role} must be a whole number, got {wanted!r}.") from None
        return wanted if wanted > 0 else answer_tokens_for(schema)

    def sees_images(self, role: str, model: str) -> bool | None:
        """Whether `model` (answering `role`) takes images: the setting, else what the server reports, else None."""
        wanted = str((self.settings.vision or {}).get(role, "auto")).strip().lower()
        if wanted in ("yes", "true", "1"):
            return True
        if wanted in ("no", "false", "0"):
            return False
        if model not in self._vision:
            self._vision[model] = self._probe_vision(model)
            self._note(model)
        return self._vision[model]

    def _probe_vision(self, model: str) -> bool | None:
        """Ask the server whether `model` sees images: llama.cpp's GET /props (modalities), Ollama's POST
        /api/show (capabilities). None when it does not say."""
        root = _server_root(self.settings.base_url)
        self._http()
        headers = {"Authorization": f"Bearer {self.settings.api_key or _NO_KEY}"}
        probes = (("GET", f"{root}/props", None), ("POST", f"{root}/api/show", {"model": model}))
        for method, url, body in probes:
            def ask(method=method, url=url, body=body):
                return self._httpx.request(method, url, json=body, headers=headers, timeout=3.0)
            try:
                response = self._in_flight(ask, 3.0)
                data = response.json() if response.status_code == 200 else None
            except Cancelled:
                raise
            except Exception:  # noqa: BLE001 - a probe is best effort: a server that does not say is not asked again
                continue
            if isinstance(data, dict) and isinstance(data.get("modalities"), dict) and \
                    "vision" in data["modalities"]:
                return bool(data["modalities"]["vision"])
            if isinstance(data, dict) and isinstance(data.get("capabilities"), list):
                return "vision" in data["capabilities"]
        return None

    # ---- the public call ---------------------------------------------------------------------
    def chat_json(self, role: str, messages: list[dict], schema: dict, images: list[bytes] | None = None,
                  check: Callable[[dict], list[str]] | None = None,
                  text_messages: list[dict] | None = None) -> tuple[dict, dict]:
        """The model's JSON answer for `role`, validated against `schema`, and this call's usage.

        `images` go with the last user message to a model that sees images; `text_messages` (the same
        request with the evidence as text) go to one that does not, or whose server refuses the images.
        `check` may add errors the schema cannot express (e.g. ymin < ymax); they are repaired alike.
        Invalid or cut-off answers are sent back with the problem (at most `max_repairs` times);
        after that a cut-off answer that was completed by hand and conforms is used with a logged
        warning, and anything else raises ModelOutputError.
        """
        model = self.model_for(role)
        conversation, form, unknown = self._conversation(role, model, messages, images, text_messages)
        before = copy.deepcopy(self._row(role))
        answer_tokens = self.answer_tokens(role, schema)
        salvage, problem = None, ""
        for attempt in range(self.max_repairs + 1):
            if attempt:
                self._row(role)["repairs"] += 1
            try:
                content, finish_reason = self._complete(role, model, conversation, schema, answer_tokens, form,
                                                        unknown and form == "image")
            except _ImagesRefused as exc:
                conversation, form = self._as_text(role, model, exc, text_messages), "text"
                content, finish_reason = self._complete(role, model, conversation, schema, answer_tokens, form)
            try:
                extracted = extract_json(content)
            except JSONExtractionError as exc:
                problem = str(exc)
            else:
                errors = validate(extracted.value, schema)
                if not errors and check is not None:
                    errors = list(check(extracted.value))
                cut_off = extracted.truncated or finish_reason == "length"
                if not errors and not cut_off:
                    return extracted.value, self._delta(role, model, before)
                if cut_off:
                    salvage = extracted.value if not errors else salvage
                    problem = "The answer was cut off before the JSON object was complete; reply again, shorter."
                else:
                    problem = "The JSON answer does not follow the required format: " + "; ".join(errors[:8])
            self.progress.log(f"{role}: unusable answer from {model} ({problem[:160]})")
            conversation = conversation + [
                {"role": "assistant", "content": content or ""},
                {"role": "user", "content": f"{problem}\nReply with one JSON object only, following this "
                                            f"schema:\n{json.dumps(schema, separators=(',', ':'))}"},
            ]
        if salvage is not None:
            self.progress.log(f"{role}: using a cut-off answer from {model}, completed by hand, after "
                              f"{self.max_repairs} repairs")
            return salvage, self._delta(role, model, before)
        raise ModelOutputError(f"The {role} model ({model}) gave no usable answer after {self.max_repairs} "
                               f"repair request(s): {problem}")

    def _conversation(self, role: str, model: str, messages: list[dict], images: list[bytes] | None,
                      text_messages: list[dict] | None) -> tuple[list[dict], str, bool]:
        """(the messages sent first, the evidence's form: "image", "text" or "none", whether the model's vision is
        still unknown): the images go to a model that sees them or may, the text form to one that does not, or to
        every model when there are no images."""
        if images and text_messages is None:
            return with_images(messages, images), "image", False
        if images and text_messages is not None:
            sees = self.sees_images(role, model)
            if sees is False:
                return text_messages, "text", False
            return with_images(messages, images), "image", sees is None
        if text_messages is not None:  # the evidence goes as text for every model (e.g. the verifier's chain)
            return text_messages, "text", False
        return messages, "none", False

    def _as_text(self, role: str, model: str, refused: _ImagesRefused, text_messages: list[dict] | None) -> list[dict]:
        """The text form of a request whose images the server refused (`refused`); `model` is taken as seeing no
        images from now on."""
        self._vision[model] = False
        self._note(model)
        self.progress.log(f"{role}: the server refused images for {model} ({refused.text[:160]}); its evidence "
                          "goes as text from now on")
        assert text_messages is not None, "images are tried only with a text form to fall back on"
        return text_messages

    def _delta(self, role: str, model: str, before: dict) -> dict:
        now = self._row(role)
        delta = {key: now[key] - before[key] for key in now}
        delta["model"] = model
        return delta

    # ---- one request, with cache, budget and retries -----------------------------------------
    def _cache_path(self, model: str, messages: list[dict]) -> Path | None:
        if self.settings.cache_dir is None:
            return None
        request = {"model": model, "messages": messages, "temperature": self.settings.temperature,
                   "seed": self.settings.seed}
        digest = hashlib.sha256(json.dumps(request, sort_keys=True, ensure_ascii=False).encode("utf-8"))
        return Path(self.settings.cache_dir) / f"{digest.hexdigest()}.json"

    def _check_budget(self, role: str, messages: list[dict], answer_tokens: int) -> int:
        """The answer tokens this request may ask for; BudgetExceeded when the run's calls are spent, or when
        the request's estimated prompt alone, or with 64 answer tokens, would pass the token budget."""
        total = self.totals()
        used_tokens = total["prompt_tokens"] + total["completion_tokens"]
        message = None
        if total["calls"] >= self.settings.max_calls:
            message = (f"The run reached its budget of {self.settings.max_calls} model calls; raise 'max calls' "
                       "or simplify the question.")
        elif used_tokens >= self.settings.max_tokens:
            message = (f"The run reached its budget of {self.settings.max_tokens} tokens ({used_tokens} used"
                       + (f", {self._crossed}); check the token counts the server reports." if self._crossed else
                          "); raise 'max tokens' or simplify the question."))
        else:
            left = self.settings.max_tokens - used_tokens
            prompt = _estimate_tokens(messages)
            if prompt + min(answer_tokens, 64) > left:
                message = (f"The {role} request was not sent: it needs about {prompt} prompt tokens and the run's "
                           f"budget of {self.settings.max_tokens} tokens has {left} left; raise the token budget "
                           "or use fewer or smaller layers.")
            elif prompt + answer_tokens > left:
                self.progress.log(f"{role}: answer tokens cut from {answer_tokens} to {left - prompt} to stay "
                                  f"within the token budget ({left} left)")
                answer_tokens = left - prompt
        if message:
            self.budget_error = message
            raise BudgetExceeded(message)
        return answer_tokens

    def _complete(self, role: str, model: str, messages: list[dict], schema: dict, answer_tokens: int,
                  form: str, trying_images: bool = False) -> tuple[str, str]:
        """(content, finish_reason) of one completion, from the cache or the server."""
        self.progress.check()
        cache_path = self._cache_path(model, messages)
        if cache_path is not None and cache_path.is_file():
            try:
                cached = json.loads(cache_path.read_text(encoding="utf-8"))
                content, finish_reason = cached["content"], cached.get("finish_reason") or "stop"
            except (OSError, ValueError, KeyError, TypeError):
                cached = None
            if cached is not None:
                self._row(role)["cached"] += 1
                return self._masked(content), finish_reason
        answer_tokens = self._check_budget(role, messages, answer_tokens)
        (content, finish_reason, counts), seconds = self._request(role, model, messages, schema, answer_tokens,
                                                                  trying_images)
        content = self._masked(content)
        prompt_tokens, completion_tokens = counts or (_estimate_tokens(messages), _estimate_tokens(content))
        if prompt_tokens + completion_tokens > self.settings.max_tokens:  # counted as reported, however large
            self._crossed = (f"{prompt_tokens + completion_tokens} of them reported by the model server at "
                             f"{self.settings.base_url.rstrip('/')} for one {role} call of about "
                             f"{_estimate_tokens(messages)} prompt tokens and at most {answer_tokens} answer tokens, "
                             "more than the whole budget")
        row = self._row(role)
        row["calls"] += 1
        row["prompt_tokens"] += prompt_tokens
        row["completion_tokens"] += completion_tokens
        row["seconds"] += seconds
        if form in ("image", "text"):
            row[f"{form}_calls"] += 1
            self.evidence_forms[role] = form
        self.progress.log(f"{role}: {model} answered in {seconds:.1f} s "
                          f"({prompt_tokens} prompt + {completion_tokens} completion tokens"
                          f"{', evidence as ' + form if form in ('image', 'text') else ''})")
        if cache_path is not None:
            self._store(cache_path, model, content, finish_reason, prompt_tokens, completion_tokens)
        return content, finish_reason

    def _masked(self, content: str) -> str:
        """A reply's text with the API key masked, and every run of 8 or more of its characters: a server that echoes
        the key, without its 'sk-' prefix or in part (or a model that repeats it), never gets it into a step line,
        the console, the dock, the record, the report or the cache."""
        return mask_secrets(str(content), (self.settings.api_key,), parts=True)

    @staticmethod
    def _store(path: Path, model: str, content: str, finish_reason: str, prompt_tokens: int,
               completion_tokens: int) -> None:
        record = {"model": model, "content": content, "finish_reason": finish_reason,
                  "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}}
        write_text_atomic(path, json.dumps(record, ensure_ascii=False))

    def _wait(self, seconds: float) -> None:
        """Sleep in short slices so that a cancellation is seen within a fraction of a second."""
        seconds = max(0.0, min(MAX_WAIT_S, seconds))
        self.waits.append(seconds)
        left = seconds
        while left > 0:
            self.progress.check()
            step = min(0.2, left)
            self._sleep(step)
            left -= step
        self.progress.check()

    def _http(self):
        """The openai client of this run (made on first use, its connections tracked for aborting)."""
        if self._client is None:
            openai = require_package("openai", "openai", "The OpenAI-compatible model back-end")
            timeout_s = float(self.settings.timeout_s) + 5.0  # a backstop: _in_flight keeps the real limits
            self._httpx = openai.DefaultHttpxClient(timeout=timeout_s,
                                                    event_hooks={"request": [self._connections.hook]})
            self._client = _openai_client(self.settings, timeout_s, self._httpx)
        return self._client

    def close(self) -> None:
        """Close the run's HTTP connections."""
        if self._client is not None:
            self._connections.abort()
            self._client.close()
            self._client = self._httpx = None

    def _in_flight(self, work: Callable, limit_s: float):
        """`work()` run in a worker thread while this thread watches the cancel flag and the time limit; on
        either, the connections are shut down (Cancelled, or _TimedOut), within about 0.1 s."""
        outcome: dict = {}
        done = threading.Event()

        def run() -> None:
            try:
                outcome["value"] = work()
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                outcome["error"] = exc
            finally:
                done.set()

        worker = threading.Thread(target=run, name="lodestar-model-call", daemon=True)
        stop_at = time.monotonic() + max(0.0, limit_s)
        worker.start()
        reason = ""
        while not done.wait(_POLL_S):
            if self.progress.cancelled():
                reason = "cancel"
            elif time.monotonic() >= stop_at:
                reason = "time"
            if reason:
                self._connections.abort()
                done.wait(0.5)  # the worker wakes on the shut socket; do not wait on one stuck connecting
                if reason == "cancel":
                    raise Cancelled()
                raise _TimedOut(limit_s)
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]

    def _form(self, model: str) -> str:
        forms = STRUCTURED[self.settings.structured]
        return forms[min(self._forms.get(model, 0), len(forms) - 1)]

    def _step_down(self, model: str) -> bool:
        """Ask `model`'s server in the next weaker output form from now on; False when none is left."""
        forms = STRUCTURED[self.settings.structured]
        index = self._forms.get(model, 0)
        if index + 1 >= len(forms):
            return False
        self._forms[model] = index + 1
        self._note(model)
        return True

    def _kwargs(self, role: str, model: str, messages: list[dict], schema: dict, answer_tokens: int) -> dict:
        dropped = self._dropped.setdefault(model, set())
        if model not in self._forms:
            self._forms[model] = 0
            self._note(model)
        kwargs = {"model": model, "messages": messages, "temperature": self.settings.temperature}
        kwargs["max_completion_tokens" if "max_tokens" in dropped else "max_tokens"] = int(answer_tokens)
        response_format = _response_format(self._form(model), role, schema)
        if response_format is not None:
            kwargs["response_format"] = response_format
        if self.settings.seed is not None:
            kwargs["seed"] = int(self.settings.seed)
        return {k: v for k, v in kwargs.items() if k not in dropped or k == "max_completion_tokens"}

    def _refused(self, role: str, model: str, text: str, kwargs: dict) -> bool:
        """After a 400 / 422: leave out or weaken what the server's message names (the output format first when
        it names nothing); False when nothing is left to try."""
        url = self.settings.base_url.rstrip("/")
        lowered = text.lower()
        dropped = self._dropped.setdefault(model, set())
        if "max_tokens" in lowered and "max_tokens" in kwargs:
            dropped.add("max_tokens")
            self.progress.log(f"{role}: {url} refused max_tokens for {model}; sending max_completion_tokens")
            return True
        named = [name for name in _OPTIONAL if name in kwargs and name in lowered]
        format_named = "response_format" in kwargs and bool(_FORMAT_WORDS.search(text))
        if "response_format" in kwargs and (format_named or not named):
            was = self._form(model)
            if self._step_down(model):
                self.progress.log(f"{role}: {url} refused {FORM_WORDS[was]} for {model}; asking with "
                                  f"{FORM_WORDS[self._form(model)]} from now on")
                return True
            if format_named and not named:  # the one form allowed is refused: nothing else would help
                return False
        for name in named or [n for n in ("seed",) if n in kwargs]:
            dropped.add(name)
            self.progress.log(f"{role}: {url} refused {_OPTIONAL[name]} for {model}; sending none from now on")
            return True
        return False

    def _request(self, role: str, model: str, messages: list[dict], schema: dict, answer_tokens: int,
                 trying_images: bool = False):
        """One successful chat completion, as (content, finish_reason, token counts or None), and its latency; an
        answer that is no completion (another page, other JSON, counts that are not counts) is retried like a 5xx.
        Raises LodestarError with one clear line, or (when `trying_images`: images sent to a model whose vision is
        not known) _ImagesRefused when the server refuses them."""
        openai = require_package("openai", "openai", "The OpenAI-compatible model back-end")
        client = self._http()
        timeout_s = float(self.settings.timeout_s)
        deadline = time.monotonic() + float(self.settings.deadline_s)
        failures = 0
        fault = None
        while True:
            self.progress.check()
            left = deadline - time.monotonic()
            if left <= 0.05:
                raise LodestarError(self._final_message(fault, failures, deadline_hit=True)) from None
            kwargs = self._kwargs(role, model, messages, schema, answer_tokens)
            limit = min(timeout_s, left)
            started = time.monotonic()

            def ask(sent=kwargs):
                return _completion(client.chat.completions.with_raw_response.create(**sent).http_response,
                                   self._server_words)

            try:
                return self._in_flight(ask, limit), time.monotonic() - started
            except (_TimedOut, _NotACompletion) as exc:
                fault = exc
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                text = self._server_text(exc)
                if trying_images and _IMAGE_WORDS.search(text):
                    raise _ImagesRefused(f"HTTP {exc.status_code}: {text}") from None
                if not self._refused(role, model, text, kwargs):
                    raise LodestarError(self._status_message(exc, model)) from None
                continue
            except (openai.RateLimitError, openai.APIConnectionError, openai.APIStatusError) as exc:
                text = self._server_text(exc) if isinstance(exc, openai.APIStatusError) else ""
                if trying_images and text and exc.status_code in (500, 501) and _IMAGE_WORDS.search(text):
                    raise _ImagesRefused(f"HTTP {exc.status_code}: {text}") from None
                # llama-cpp-python answers 500 to a response_format it does not know: a refusal, not a fault
                if text and exc.status_code in (500, 501) and _FORMAT_NAMED.search(text) \
                        and self._refused(role, model, text, kwargs):
                    continue
                retryable = not isinstance(exc, openai.APIStatusError) or exc.status_code == 429 \
                    or exc.status_code >= 500
                if not retryable:
                    raise LodestarError(self._status_message(exc, model)) from None
                fault = exc
            if failures >= self.settings.max_retries:
                raise LodestarError(self._final_message(fault, failures + 1)) from None
            failures += 1
            self._row(role)["retries"] += 1
            asked = _retry_after(fault)
            wait = asked if asked is not None else self.settings.retry_backoff_s * 2 ** (failures - 1)
            if wait >= deadline - time.monotonic():
                raise LodestarError(self._final_message(fault, failures, deadline_hit=True)) from None
            self.progress.log(f"{role}: {self._short(fault)}; retrying in {wait:.2f} s "
                              f"({failures}/{self.settings.max_retries})")
            self._wait(wait)

    # ---- messages (one line each) ------------------------------------------------------------
    def _short(self, exc) -> str:
        import openai

        if isinstance(exc, _TimedOut):
            return str(exc)
        if isinstance(exc, _NotACompletion):
            return "no usable chat completion"
        if isinstance(exc, openai.APITimeoutError):
            return f"no answer within {_seconds(self.settings.timeout_s)} s"
        if isinstance(exc, openai.APIConnectionError):
            return "connection failed"
        return f"HTTP {getattr(exc, 'status_code', '?')}"

    def _final_message(self, exc, attempts: int, deadline_hit: bool = False) -> str:
        import openai

        url = self.settings.base_url.rstrip("/")
        tried = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        if deadline_hit:
            tried += f", the {_seconds(self.settings.deadline_s)} s deadline per call reached"
        if exc is None:
            return (f"The model server at {url} got no request within the {_seconds(self.settings.deadline_s)} s "
                    "deadline per call; raise the deadline in the Lodestar settings.")
        if isinstance(exc, (_TimedOut, openai.APITimeoutError)):
            seconds = exc.seconds if isinstance(exc, _TimedOut) else self.settings.timeout_s
            return (f"The model server at {url} did not answer within {_seconds(seconds)} s ({tried}): a timeout. "
                    "Raise the timeout or the deadline in the Lodestar settings, lower the answer tokens, pick a "
                    "smaller model, or check the server load.")
        if isinstance(exc, openai.APIConnectionError):
            return (f"Cannot reach the model server at {url} ({tried}). Check the base URL, that the server is "
                    "running, and the network or proxy settings.")
        if isinstance(exc, _NotACompletion):
            return (f"The model server at {url} kept answering with no usable chat completion ({tried}); "
                    f"its last answer: {exc.what}. {exc.advice}")
        status = exc.status_code
        if status == 429:
            return (f"The model server at {url} kept refusing requests as too many (HTTP 429, {tried}). Wait a "
                    "minute, lower the request rate, or check the account's quota.")
        return (f"The model server at {url} failed with HTTP {status} ({tried}): {self._server_text(exc)}. Try "
                "again later or check the server's logs.")

    def _status_message(self, exc, model: str) -> str:
        url = self.settings.base_url.rstrip("/")
        status = getattr(exc, "status_code", "?")
        advices: dict[object, str] = {
            401: "Check the API key in the Lodestar settings.",
            403: "The key is not allowed to use this model; check its permissions.",
            404: f"Check the base URL (usually ending in /v1) and that the model {model!r} exists on the server.",
        }
        advice = advices.get(status, "Check the model name and the server's requirements.")
        return f"The model server at {url} refused the request (HTTP {status}): {self._server_text(exc)}. {advice}"

    def _server_text(self, exc) -> str:
        body = getattr(exc, "body", None)
        text = None
        if isinstance(body, dict):
            error = body.get("error", body)
            text = error.get("message") if isinstance(error, dict) else str(error)
        return self._server_words(str(text or getattr(exc, "message", None) or str(exc)), 300).rstrip(".")

    def _server_words(self, text: str, limit: int = 160) -> str:
        """A server's text as a message shows it: one line, the key and key-shaped words masked (and every run of 8
        or more of the key's characters), at most `limit` characters."""
        words = _one_line(mask_secrets(text, (self.settings.api_key,), key_shapes=True, parts=True))
        return words if len(words) <= limit else words[:limit - 3] + "..."


def test_connection(settings: BackendSettings) -> str:
    """A short message saying whether the server answers and lists the configured models.

    Raises LodestarError when the server cannot be reached or refuses the key.
    """
    openai = require_package("openai", "openai", "The OpenAI-compatible model back-end")
    url = _check_settings(settings)
    client = _openai_client(settings, min(float(settings.timeout_s), 15.0))
    try:
        listed = sorted(model.id for model in client.models.list())
    except openai.APITimeoutError:
        raise LodestarError(f"The model server at {url} did not answer within "
                            f"{_seconds(min(float(settings.timeout_s), 15.0))} s.") from None
    except openai.APIConnectionError:
        raise LodestarError(f"Cannot reach the model server at {url}. Check the base URL and that the server "
                            "is running.") from None
    except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
        raise LodestarError(f"The model server at {url} refused the API key (HTTP {exc.status_code}). "
                            "Check the key in the Lodestar settings.") from None
    except openai.NotFoundError:
        return f"Reached {url}, but it does not list its models; the chat endpoint may still work."
    except openai.APIStatusError as exc:
        raise LodestarError(f"The model server at {url} answered HTTP {exc.status_code} when asked for its "
                            "models.") from None
    finally:
        client.close()
    wanted = sorted({name.strip() for name in (settings.models or {}).values() if name and name.strip()})
    missing = [name for name in wanted if name not in listed]
    message = f"Connected to {url}: {len(listed)} model(s) available."
    if missing:
        message += f" Not listed there: {', '.join(missing)}."
    elif wanted:
        message += f" Configured model(s) found: {', '.join(wanted)}."
    return message


test_connection.__test__ = False  # type: ignore[attr-defined]  # for pytest: a function for the dock, not a test
