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


RULE = {"type": "object", "required": ["valid", "answer"], "description": "no positive answer without support",
        "properties": {"valid": {"type": "boolean"}, "answer": {"type": ["string", "null"], "enum": ["A", "B", None]},
                       "support": {"type": "object", "properties": {"core": {"type": "boolean"}}}},
        "anyOf": [{"properties": {"valid": {"enum": [False]}}}, {"properties": {"answer": {"enum": ["B", None]}}},
                  {"required": ["support"], "properties": {"support": {"properties": {"core": {"enum": [True]}}}}}]}


def test_a_rule_tying_fields_together_is_checked_and_sent_as_whole_alternatives():
    assert validate({"valid": True, "answer": "A", "support": {"core": True}}, RULE) == []
    assert validate({"valid": False, "answer": "A", "support": {"core": False}}, RULE) == []
    assert validate({"valid": True, "answer": "B"}, RULE) == []
    assert validate({"valid": True, "answer": "A", "support": {"core": False}}, RULE) == [
        "$: no positive answer without support"]
    assert validate({"valid": True, "answer": "A"}, RULE) == ["$: no positive answer without support"]
    assert validate({"valid": "yes", "answer": "A"}, RULE) == ["$.valid must be boolean, got \"yes\""]  # plain first

    from lodestar.models.llm_client import sent_schema

    sent = sent_schema(RULE)
    assert set(sent) == {"anyOf"} and len(sent["anyOf"]) == 3
    first, second, third = sent["anyOf"]
    assert list(first["properties"]) == ["valid", "answer", "support"]  # the base's order: the order written
    assert first["properties"]["valid"] == {"type": "boolean", "enum": [False]}
    assert second["properties"]["answer"] == {"enum": ["B", None]}  # no list of types beside an enum
    assert third["required"] == ["valid", "answer", "support"] and third["additionalProperties"] is False
    assert third["properties"]["support"]["properties"]["core"] == {"type": "boolean", "enum": [True]}
    for value in ({"valid": True, "answer": "A", "support": {"core": True}}, {"valid": False, "answer": "A"}):
        assert any(validate(value, variant) == [] for variant in sent["anyOf"])  # what the rule allows, sent allows
    assert not any(validate({"valid": True, "answer": "A", "support": {"core": False}}, v) == [] for v in sent["anyOf"])
