"""JSON in a model's text answer: tolerant extraction.

`extract_json` finds the JSON object in a model reply (plain, inside a ```json fence, after prose,
with trailing commas, or cut off mid-way) and tells whether it had to be closed by hand. The one
extractor for every answer read from a model: the LLM client's and the localization tool's.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)(?:```|$)", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_CLOSERS = {"{": "}", "[": "]"}
_NO_BRACE = "no '{' was found"


class JSONExtractionError(ValueError):
    """No JSON object could be read from a reply; the message says why, for the model to fix."""


@dataclass
class Extracted:
    value: dict
    truncated: bool  # the text ended inside the object and was closed by hand


def _scan(text: str, start: int) -> tuple[int | None, list[str], bool]:
    """From an opening brace at `start`: the end index of the balanced object (or None), the brackets
    still open at the end of the text, and whether the text ends inside a string."""
    stack: list[str] = []
    in_string = escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in _CLOSERS:
            stack.append(char)
        elif char in "}]":
            if not stack or _CLOSERS[stack[-1]] != char:
                return None, stack, False
            stack.pop()
            if not stack:
                return index + 1, [], False
    return None, stack, in_string


def _without_trailing_commas(text: str) -> str:
    """Drop commas right before a closing bracket, outside strings."""
    out, in_string, escaped, last = [], False, False, 0
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            out.append(_TRAILING_COMMA.sub(r"\1", text[last:index]))
            last = index
            in_string = True
    out.append(_TRAILING_COMMA.sub(r"\1", text[last:]) if not in_string else text[last:])
    return "".join(out)


def _close(fragment: str, stack: list[str], in_string: bool) -> str:
    """Close a cut-off object: end the open string, drop a dangling key or separator, close brackets."""
    text = fragment + ('"' if in_string else "")
    text = text.rstrip()
    for _ in range(3):  # a dangling `"key":`, `"key"` inside an object, or a trailing comma
        trimmed = re.sub(r'(,|\{|\[)\s*"(?:[^"\\]|\\.)*"\s*:?\s*$', r"\1", text) if stack and stack[-1] == "{" \
            else text
        trimmed = re.sub(r"[,:]\s*$", "", trimmed.rstrip())
        if trimmed == text:
            break
        text = trimmed
    _, still_open, _ = _scan(text, text.index("{"))
    return text + "".join(_CLOSERS[b] for b in reversed(still_open))


def _loads(text: str):
    """JSON with control characters allowed inside strings (a raw line break in a value, as small models write under
    a grammar that does not forbid it), and trailing commas dropped when that is what stood in the way."""
    try:
        return json.loads(text, strict=False)
    except json.JSONDecodeError:
        return json.loads(_without_trailing_commas(text), strict=False)


def extract_json(text: str | None) -> Extracted:
    """The first JSON object in `text`; raises JSONExtractionError with a reason a model can act on."""
    if not text or not text.strip():
        raise JSONExtractionError("The reply was empty; answer with one JSON object.")
    candidates = [m.group(1) for m in _FENCE.finditer(text) if "{" in m.group(1)] + [text]
    last_error = _NO_BRACE
    for candidate in candidates:
        start = candidate.find("{")
        while start != -1:
            end, stack, in_string = _scan(candidate, start)
            if end is not None:
                try:
                    value = _loads(candidate[start:end])
                except json.JSONDecodeError as exc:
                    last_error = f"the JSON object is not valid JSON ({exc.msg} at character {exc.pos})"
                else:
                    if isinstance(value, dict):
                        return Extracted(value, False)
            elif stack:  # ran off the end of the text: a cut-off answer
                try:
                    value = _loads(_close(candidate[start:], stack, in_string))
                except (json.JSONDecodeError, ValueError):
                    if last_error == _NO_BRACE:  # an object that ended but was not JSON says more than a later cut
                        last_error = "the JSON object is cut off and could not be completed"
                else:
                    if isinstance(value, dict):
                        return Extracted(value, True)
                break
            start = candidate.find("{", start + 1)
    raise JSONExtractionError(f"No JSON object could be read from the reply: {last_error}.")
