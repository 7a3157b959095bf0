"""Tolerant JSON extraction from model answers."""
from __future__ import annotations

import pytest

from lodestar.plugin.json_text import JSONExtractionError, extract_json


@pytest.mark.parametrize("text, value, truncated", [
    ('{"a": 1}', {"a": 1}, False),
    ('Sure.\n```json\n{"a": [1, 2,],}\n```', {"a": [1, 2]}, False),
    ('[1, 2] then {"k": "v, with } brace"}', {"k": "v, with } brace"}, False),
    ('{"a": "hel', {"a": "hel"}, True),
    ('{"a": [1, 2', {"a": [1, 2]}, True),
    ('{"a": 1, "b":', {"a": 1}, True),
    ('{"a": 1, "b', {"a": 1}, True),
    ('x {"a": {"b": "c"}, "d": [', {"a": {"b": "c"}, "d": []}, True),
    ('```json\n{"a": 1, "s": "te', {"a": 1, "s": "te"}, True),
    # a raw line break inside a string, as SmolLM2-135M wrote under llama.cpp's grammar (was: "cut off")
    ('{ "steps": [ {"expected":"{{1}}}\n{","why":"A."} ]}', {"steps": [{"expected": "{{1}}}\n{", "why": "A."}]}, False),
])
def test_extract_json(text, value, truncated):
    extracted = extract_json(text)
    assert extracted.value == value and extracted.truncated is truncated


@pytest.mark.parametrize("text, reason", [
    ("", "empty"), ("no json here", "no '{'"), ('{"a": tru}', "not valid JSON"),
    ('{"a": tru} and {"b": "c" ]', "not valid JSON"),  # the object that ended says more than a later broken one
])
def test_extract_json_failures_say_why(text, reason):
    with pytest.raises(JSONExtractionError, match=reason):
        extract_json(text)
