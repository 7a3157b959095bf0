"""The one CSV writer of Lodestar's outputs, safe to open in a spreadsheet.

A cell that a spreadsheet would take for a formula (text starting with `=`, `+`, `-`, `@`, a tab or a carriage
return that is not a number: the OWASP rule for CSV injection) is written with a leading apostrophe, so a layer
named `=HYPERLINK(...)` or a case id `=cmd|' /C calc'!A0` is shown as text and never run. Numbers, negative
ones included, are written as they are. Every CSV the plugin writes (weights, batch results, success-rate
curves, vector layers written as CSV) goes through `safe_cell`.
"""
from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from .files import write_text_atomic

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def safe_cell(value):
    """`value` as a CSV cell no spreadsheet runs: text starting with =, +, -, @, tab or CR that is not a number
    gets a leading apostrophe; anything else (numbers, other text, None) is returned unchanged."""
    if not isinstance(value, str) or not value.startswith(FORMULA_STARTS) or _NUMBER.fullmatch(value):
        return value
    return "'" + value


def csv_text(fieldnames, rows, *, lineterminator: str = "\n", restval="") -> str:
    """The rows (dicts) as CSV text, header first, every cell (header names too) through `safe_cell`."""
    fieldnames = list(fieldnames)
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator=lineterminator)
    writer.writerow([safe_cell(str(name)) for name in fieldnames])
    for row in rows:
        writer.writerow([safe_cell(row.get(name, restval)) for name in fieldnames])
    return buffer.getvalue()


def write_csv(path, fieldnames, rows, *, lineterminator: str = "\n", restval="") -> Path:
    """Write the rows as a UTF-8 CSV file (see `csv_text`), whole or not at all."""
    return write_text_atomic(path, csv_text(fieldnames, rows, lineterminator=lineterminator, restval=restval))
