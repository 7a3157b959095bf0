"""The minimal schema check used for model answers."""
from __future__ import annotations

from lodestar.models.structured import validate

SCHEMA = {
    "type": "object",
    "required": ["a", "b"],
    "additionalProperties": False,
    "properties": {
        "a": {"type": "integer", "minimum": 0, "maximum": 5},
        "b": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string", "enum": ["x", "y"]}},
        "c": {"type": ["string", "null"]},
    },
}


def test_validate_accepts_conforming_values():
    assert validate({"a": 3, "b": ["x"], "c": None}, SCHEMA) == []
    assert validate({"a": 2.0, "b": ["x", "y"]}, SCHEMA) == []  # a whole float is an integer


def test_validate_names_every_problem_with_its_path():
    assert validate({"a": -1, "b": ["x", "z", "y"], "d": 1, "c": 3}, SCHEMA) == [
        "$.a must be >= 0, got -1",
        "$.b must have at most 2 item(s), got 3",
        '$.b[1] must be one of "x", "y", got "z"',
        "$ has an unexpected key 'd'",
        "$.c must be string or null, got 3",
    ]
    assert validate({"b": []}, SCHEMA) == ["$ is missing the required key 'a'",
                                           "$.b must have at least 1 item(s), got 0"]
    assert validate({"a": True, "b": ["x"]}, SCHEMA) == ["$.a must be integer, got true"]
    assert validate([], SCHEMA) == ["$ must be object, got []"]
