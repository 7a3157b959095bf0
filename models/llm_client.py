"""The one client for OpenAI-compatible chat servers (OpenAI, Azure OpenAI, vLLM, Ollama, LM Studio...).

`LLMClient.chat_json(role, messages, schema, images)` sends one request for a JSON answer and returns
the parsed object once it conforms to `schema`, re-asking the model with the validation error a
bounded number of times. Around every HTTP request it keeps the run's promises: JSON mode where the
server takes it, temperature and seed from the settings, timeouts, retries with exponential back-off
on 429 / 5xx / lost connections (honouring Retry-After), a budget of calls and tokens per run, a
response cache keyed by a hash of the request, token and latency accounting per role, and
cancellation between calls. The API key is sent in the Authorization header only: it never appears in
log lines, error messages or cache files.
"""
from __future__ import annotations

import base64
import copy
import email.utils
import hashlib
import json
import re
import time
from pathlib import Path
from typing import Callable

from ..plugin.analysis import ROLES_OF_MODELS, BackendSettings
from ..plugin.errors import LodestarError, require_package
from ..plugin.files import write_text_atomic
from ..plugin.json_text import JSONExtractionError, extract_json
from ..plugin.masking import mask_secrets
from ..plugin.progress import SILENT, Progress
from .structured import validate

MAX_REPAIRS = 2
"""How many times a model is asked again after an answer that is not valid JSON for the schema."""

MAX_WAIT_S = 60.0
"""Longest single wait before a retry, whatever the server's Retry-After says."""

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_NO_KEY = "none"  # sent as the bearer token to local servers that need no key


_OPTIONAL = {"response_format": "JSON mode", "seed": "the seed", "temperature": "the temperature"}
"""Request parameters left out, one at a time, when a server answers 400 to them."""


def _refused_parameter(server_text: str, sent: dict) -> str | None:
    """Which optional parameter to leave out after a 400: the one the server's message names, else JSON mode,
    then the seed (the temperature only when named, since leaving it out changes the answers)."""
    text = server_text.lower()
    named = [name for name in _OPTIONAL if name in sent and (name in text or (name == "response_format"
                                                                              and "json" in text))]
    if named:
        return named[0]
    return next((name for name in ("response_format", "seed") if name in sent), None)


class BudgetExceeded(LodestarError):
    """The run used up its model calls or tokens."""


class ModelOutputError(LodestarError):
    """A model kept answering with output that could not be used, after the allowed repairs."""


def _empty_usage() -> dict:
    return {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "seconds": 0.0, "cached": 0,
            "retries": 0, "repairs": 0}


def _check_settings(settings: BackendSettings) -> str:
    url = (settings.base_url or "").strip().rstrip("/")
    if not url:
        raise LodestarError("Set the base URL of the model server, e.g. https://api.openai.com/v1 or "
                            "http://localhost:11434/v1 for Ollama.")
    if not url.startswith(("http://", "https://")):
        raise LodestarError(f"The model server URL {url!r} must start with http:// or https://.")
    return url


def _openai_client(settings: BackendSettings, timeout_s: float):
    openai = require_package("openai", "openai", "The OpenAI-compatible model back-end")
    return openai.OpenAI(base_url=_check_settings(settings), api_key=settings.api_key or _NO_KEY,
                         timeout=timeout_s, max_retries=0)


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
    """About four characters a token, plus a fixed price per image, for servers that report no usage."""
    text = json.dumps(value, ensure_ascii=False)
    images = len(_DATA_URL.findall(text))
    return max(1, len(_DATA_URL.sub("", text)) // 4) + IMAGE_TOKENS * images


class LLMClient:
    """One run's connection to an OpenAI-compatible server, with its budget, cache and accounting."""

    def __init__(self, settings: BackendSettings, progress: Progress = SILENT, *,
                 max_repairs: int = MAX_REPAIRS, sleep: Callable[[float], None] = time.sleep):
        _check_settings(settings)
        self.settings = settings
        self.progress = progress
        self.max_repairs = max_repairs
        self._sleep = sleep
        self._client = None
        self._dropped: dict[str, set] = {}  # model -> optional request parameters its server refused
        self._usage: dict[str, dict] = {}
        self.waits: list[float] = []  # every back-off wait, in seconds, in order
        self.budget_error: str | None = None  # set once the budget stopped the run

    # ---- accounting -------------------------------------------------------------------------
    def usage(self) -> dict:
        """role -> {calls, prompt_tokens, completion_tokens, seconds, cached, retries, repairs}."""
        return copy.deepcopy(self._usage)

    def totals(self) -> dict:
        total = _empty_usage()
        for row in self._usage.values():
            for key in total:
                total[key] += row[key]
        return total

    def _row(self, role: str) -> dict:
        return self._usage.setdefault(role, _empty_usage())

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

    # ---- the public call ---------------------------------------------------------------------
    def chat_json(self, role: str, messages: list[dict], schema: dict, images: list[bytes] | None = None,
                  check: Callable[[dict], list[str]] | None = None) -> tuple[dict, dict]:
        """The model's JSON answer for `role`, validated against `schema`, and this call's usage.

        `check` may add errors the schema cannot express (e.g. ymin < ymax); they are repaired alike.
        Invalid or cut-off answers are sent back with the problem (at most `max_repairs` times);
        after that a cut-off answer that was completed by hand and conforms is used with a logged
        warning, and anything else raises ModelOutputError.
        """
        model = self.model_for(role)
        conversation = with_images(messages, images)
        before = copy.deepcopy(self._row(role))
        salvage, problem = None, ""
        for attempt in range(self.max_repairs + 1):
            if attempt:
                self._row(role)["repairs"] += 1
            content, finish_reason = self._complete(role, model, conversation)
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

    def _check_budget(self) -> None:
        total = self.totals()
        used_tokens = total["prompt_tokens"] + total["completion_tokens"]
        message = None
        if total["calls"] >= self.settings.max_calls:
            message = (f"The run reached its budget of {self.settings.max_calls} model calls; raise 'max calls' "
                       "or simplify the question.")
        elif used_tokens >= self.settings.max_tokens:
            message = (f"The run reached its budget of {self.settings.max_tokens} tokens ({used_tokens} used); "
                       "raise 'max tokens' or simplify the question.")
        if message:
            self.budget_error = message
            raise BudgetExceeded(message)

    def _complete(self, role: str, model: str, messages: list[dict]) -> tuple[str, str]:
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
                return content, finish_reason
        self._check_budget()
        response, seconds = self._request(role, model, messages)
        choice = response.choices[0] if response.choices else None
        content = (choice.message.content if choice is not None and choice.message is not None else "") or ""
        finish_reason = (choice.finish_reason if choice is not None else None) or "stop"
        usage = getattr(response, "usage", None)
        prompt_tokens = getattr(usage, "prompt_tokens", None)
        completion_tokens = getattr(usage, "completion_tokens", None)
        if prompt_tokens is None or completion_tokens is None:
            prompt_tokens, completion_tokens = _estimate_tokens(messages), _estimate_tokens(content)
        row = self._row(role)
        row["calls"] += 1
        row["prompt_tokens"] += int(prompt_tokens)
        row["completion_tokens"] += int(completion_tokens)
        row["seconds"] += seconds
        self.progress.log(f"{role}: {model} answered in {seconds:.1f} s "
                          f"({prompt_tokens} prompt + {completion_tokens} completion tokens)")
        if cache_path is not None:
            self._store(cache_path, model, content, finish_reason, prompt_tokens, completion_tokens)
        return content, finish_reason

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

    def _request(self, role: str, model: str, messages: list[dict]):
        """One successful chat completion and its latency; raises LodestarError with a clear message."""
        openai = require_package("openai", "openai", "The OpenAI-compatible model back-end")
        if self._client is None:
            self._client = _openai_client(self.settings, self.settings.timeout_s)
        url = self.settings.base_url.rstrip("/")
        failures = 0
        while True:
            self.progress.check()
            dropped = self._dropped.setdefault(model, set())
            kwargs = {"model": model, "messages": messages, "temperature": self.settings.temperature,
                      "response_format": {"type": "json_object"}}
            if self.settings.seed is not None:
                kwargs["seed"] = int(self.settings.seed)
            kwargs = {k: v for k, v in kwargs.items() if k not in dropped}
            started = time.monotonic()
            try:
                return self._client.chat.completions.create(**kwargs), time.monotonic() - started
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                refused = _refused_parameter(self._server_text(exc), kwargs)
                if refused is None:
                    raise LodestarError(self._status_message(exc, model)) from None
                dropped.add(refused)
                self.progress.log(f"{role}: {url} refused {_OPTIONAL[refused]} for {model}; sending none from now on")
                continue
            except (openai.RateLimitError, openai.APIConnectionError, openai.APIStatusError) as exc:
                retryable = not isinstance(exc, openai.APIStatusError) or exc.status_code == 429 \
                    or exc.status_code >= 500
                if not retryable:
                    raise LodestarError(self._status_message(exc, model)) from None
                fault = exc
            except (ValueError, openai.APIResponseValidationError) as exc:  # a body that is not a completion
                fault = exc
            if failures >= self.settings.max_retries:
                raise LodestarError(self._final_message(fault, failures + 1)) from None
            failures += 1
            self._row(role)["retries"] += 1
            asked = _retry_after(fault)
            wait = asked if asked is not None else self.settings.retry_backoff_s * 2 ** (failures - 1)
            self.progress.log(f"{role}: {self._short(fault)}; retrying in {wait:.2f} s "
                              f"({failures}/{self.settings.max_retries})")
            self._wait(wait)

    # ---- messages ----------------------------------------------------------------------------
    def _short(self, exc) -> str:
        import openai

        if isinstance(exc, openai.APITimeoutError):
            return f"no answer within {self.settings.timeout_s:g} s"
        if isinstance(exc, openai.APIConnectionError):
            return "connection failed"
        if not isinstance(exc, openai.APIStatusError):
            return "malformed response"
        return f"HTTP {getattr(exc, 'status_code', '?')}"

    def _final_message(self, exc, attempts: int) -> str:
        import openai

        url = self.settings.base_url.rstrip("/")
        if isinstance(exc, openai.APITimeoutError):
            return (f"The model server at {url} did not answer within {self.settings.timeout_s:g} s "
                    f"({attempts} attempts). Raise the timeout, pick a smaller model, or check the server load.")
        if isinstance(exc, openai.APIConnectionError):
            return (f"Cannot reach the model server at {url} ({attempts} attempts). Check the base URL, "
                    "that the server is running, and the network or proxy settings.")
        if not isinstance(exc, openai.APIStatusError):
            return (f"The model server at {url} kept sending responses that are not valid chat completions "
                    f"({attempts} attempts). Check that the base URL points at an OpenAI-compatible API.")
        status = exc.status_code
        if status == 429:
            return (f"The model server at {url} kept refusing requests as too many (HTTP 429, {attempts} "
                    "attempts). Wait a minute, lower the request rate, or check the account's quota.")
        return (f"The model server at {url} failed with HTTP {status} ({attempts} attempts): "
                f"{self._server_text(exc)}. Try again later or check the server's logs.")

    def _status_message(self, exc, model: str) -> str:
        url = self.settings.base_url.rstrip("/")
        status = getattr(exc, "status_code", "?")
        advice = {
            401: "Check the API key in the Lodestar settings.",
            403: "The key is not allowed to use this model; check its permissions.",
            404: f"Check the base URL (usually ending in /v1) and that the model {model!r} exists on the server.",
        }.get(status, "Check the model name and the server's requirements.")
        return f"The model server at {url} refused the request (HTTP {status}): {self._server_text(exc)}. {advice}"

    def _server_text(self, exc) -> str:
        body = getattr(exc, "body", None)
        text = None
        if isinstance(body, dict):
            error = body.get("error", body)
            text = error.get("message") if isinstance(error, dict) else str(error)
        text = text or getattr(exc, "message", None) or str(exc)
        return mask_secrets(str(text), (self.settings.api_key,), key_shapes=True)[:300]


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
                            f"{min(float(settings.timeout_s), 15.0):g} s.") from None
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


test_connection.__test__ = False  # a function for the dock, not a pytest test
