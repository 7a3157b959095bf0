"""A JSON file a user gives (a case, an evidence plan, a run record, a deposit model), read within bounds, and its
values shown in messages.

`read_json` refuses in one line, before anything is parsed, a file that is missing, a folder or larger than its kind
may be, and after parsing, text that is not UTF-8 JSON or a value nested deeper than MAX_DEPTH. Python's json parses
recursively and stops with a RecursionError near 1,000 levels: that is caught, and the depth of what did parse is
measured without recursion, one pass over its values; every check is linear in the file's size, and no code after
it recurses into an unbounded value. `shown` gives a value in a message, short whatever its size.
"""
from __future__ import annotations

import json
from itertools import islice
from pathlib import Path

from .errors import LodestarError

MAX_DEPTH = 64
"""The deepest nesting of objects and lists a file may have: none Lodestar writes nests deeper than 12 (a run
record's trace)."""


def read_json(path, what: str, max_bytes: int, largest: str, **loads):
    """The JSON value of the file at `path`. `what` names the file in messages ('the evidence plan'); `max_bytes`
    is the largest such file and `largest` says why in the user's terms ('a plan holds at most 256 layers'); `loads`
    goes to json.loads (object_pairs_hook). Raises LodestarError."""
    path = Path(path)
    named = f"{what[0].upper()}{what[1:]} {path}"
    if path.is_dir():
        raise LodestarError(f"{named} is a folder, not a file; name the JSON file itself.")
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise LodestarError(f"{named} is {size / 2 ** 20:,.1f} MB, more than {what} can be "
                                f"({max_bytes / 2 ** 20:g} MB: {largest}); check that it is the right file.")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LodestarError(f"Cannot read {what} {path}: {exc}.") from exc
    try:
        value = json.loads(text, **loads)
        deep = nesting_depth(value, MAX_DEPTH) > MAX_DEPTH
    except json.JSONDecodeError as exc:
        raise LodestarError(f"Cannot read {what} {path}: it is not valid JSON ({exc}).") from exc
    except RecursionError:  # json's parser reached Python's recursion limit (about 1,000 levels)
        deep = True
    if deep:
        raise LodestarError(f"{named} nests objects and lists deeper than {MAX_DEPTH} levels, which no file of its "
                            "kind does; check that it is the right file.")
    return value


def nesting_depth(value, limit: int) -> int:
    """How deep objects and lists nest in `value` (a scalar: 0, [] or {}: 1), counted level by level without
    recursion, up to `limit` + 1 at most."""
    depth, level = 0, [value] if isinstance(value, (dict, list)) else []
    while level and depth <= limit:
        depth += 1
        level = [item for container in level for item in (container.values() if isinstance(container, dict)
                                                            else container) if isinstance(item, (dict, list))]
    return depth


def shown(value, depth: int = 2) -> str:
    """A value as a message shows it: at most 60 characters, a nested list or table only to `depth` levels (never
    recursing into all of a deeply nested value)."""
    if isinstance(value, (list, tuple, dict)):
        ends = "{}" if isinstance(value, dict) else "[]"
        items = list(islice(value.items() if isinstance(value, dict) else value, 4))
        if depth <= 0:
            parts = ["..."] if items else []
        elif isinstance(value, dict):
            parts = [f"{shown(k, 0)}: {shown(v, depth - 1)}" for k, v in items]
        else:
            parts = [shown(item, depth - 1) for item in items]
        text = ends[0] + ", ".join(parts + (["..."] if len(value) > 4 and depth > 0 else [])) + ends[1]
    else:
        text = repr(value[:61] if isinstance(value, str) else value)
    return text if len(text) <= 60 else text[:57] + "..."
