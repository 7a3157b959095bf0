"""JSON answers from language models: a minimal schema check (extraction is `plugin/json_text.py`).

`validate` checks a value against a small subset of JSON Schema (type, properties, required, enum,
items, minItems, maxItems, minimum, maximum, additionalProperties=false, anyOf) and returns readable error
messages with JSON paths, so that a model can be asked again with exactly what was wrong.

`anyOf` beside a schema's own keywords narrows it (JSON Schema's meaning): the value must meet the schema and
at least one of the listed overlays; a rule that ties fields together (e.g. "no positive answer while a
critical item is false") is written so, with the rule in words as the schema's `description`, which is the
message when no overlay fits.
"""
from __future__ import annotations

import json

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def _describe(value) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def validate(value, schema: dict, path: str = "$") -> list[str]:
    """Error messages for `value` against `schema` (empty when it conforms)."""
    errors: list[str] = []
    wanted = schema.get("type")
    if wanted is not None:
        names = wanted if isinstance(wanted, list) else [wanted]
        if not any(_TYPES[name](value) for name in names):
            return [f"{path} must be {' or '.join(names)}, got {_describe(value)}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path} must be one of {', '.join(json.dumps(v) for v in schema['enum'])}, "
                      f"got {_describe(value)}")
    if _TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{path} must be >= {schema['minimum']}, got {value}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{path} must be <= {schema['maximum']}, got {value}")
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{path} is missing the required key {key!r}")
        for key, item in value.items():
            if key in properties:
                errors.extend(validate(item, properties[key], f"{path}.{key}"))
            elif schema.get("additionalProperties") is False:
                errors.append(f"{path} has an unexpected key {key!r}")
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            errors.append(f"{path} must have at least {schema['minItems']} item(s), got {len(value)}")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{path} must have at most {schema['maxItems']} item(s), got {len(value)}")
        if "items" in schema:
            for index, item in enumerate(value):
                errors.extend(validate(item, schema["items"], f"{path}[{index}]"))
    if "anyOf" in schema and not errors and all(validate(value, overlay, path) for overlay in schema["anyOf"]):
        errors.append(f"{path}: {schema.get('description') or 'matches none of the allowed combinations'}")
    return errors
