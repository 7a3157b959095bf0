"""Text of the HTML report: escaping, tables, images, human labels for roles, numbers and areas.

Numbers are written with sensible digits and never in exponent notation; areas in km²; role names
("hydrothermal_alteration") as words ("hydrothermal alteration").
"""
from __future__ import annotations

import base64
import html
import math
import re
from pathlib import Path

from ..roles import ROLES

_ROLE_WORDS = {"false_color_composite": "false-colour composite"}
_ROLE_PATTERN = re.compile(r"\b(" + "|".join(sorted(ROLES, key=len, reverse=True)) + r")\b")
_EXPONENT = re.compile(r"(?<![\w.])\d+(?:\.\d+)?e[+-]?\d+\b", re.IGNORECASE)


def e(value) -> str:
    """HTML-escaped text of a value (None is empty)."""
    return html.escape("" if value is None else str(value), quote=True)


def words(name) -> str:
    """A role or evidence identifier as words: 'hydrothermal_alteration' -> 'hydrothermal alteration'."""
    name = str(name or "")
    return _ROLE_WORDS.get(name, name.replace("_", " "))


def humanize(text, terms=()) -> str:
    """Text with the role identifiers in it (and the identifiers in `terms`, e.g. a deposit model's evidence
    items) written as words, and numbers in exponent notation written out."""
    text = _ROLE_PATTERN.sub(lambda m: words(m.group(1)), str(text or ""))
    terms = sorted({t for t in terms if "_" in str(t)}, key=len, reverse=True)
    if terms:
        text = re.sub(r"\b(" + "|".join(map(re.escape, terms)) + r")\b", lambda m: words(m.group(1)), text)
    return _EXPONENT.sub(lambda m: number(float(m.group(0))), text)


def number(value, digits: int = 3) -> str:
    """A number with `digits` significant digits, no exponent, no trailing zeros, thousands separated;
    '-' for None or not a number."""
    if value is None or isinstance(value, bool):
        return "-" if value is None else str(value)
    try:
        value = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(value):
        return "-" if math.isnan(value) else str(value)
    if value == 0:
        return "0"
    decimals = min(6, max(0, digits - 1 - int(math.floor(math.log10(abs(value))))))
    text = f"{value:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def km2(area_m2) -> str:
    """An area in m² written in km² with sensible digits: 6245000 -> '6.25 km²'."""
    return "-" if area_m2 is None else f"{number(float(area_m2) / 1e6)} km²"


def percent(share, digits: int = 2) -> str:
    """A share 0-1 written as a percentage: 0.1235 -> '12 %' (digits significant, at least units)."""
    return "-" if share is None else f"{number(100.0 * float(share), digits)} %"


def table(rows: list, header: list, css: str = "", row_css: list | None = None) -> str:
    """An HTML table; cells are escaped unless given as `Html`."""
    head = "".join(f"<th>{cell(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        klass = f' class="{row_css[i]}"' if row_css and row_css[i] else ""
        body.append(f"<tr{klass}>" + "".join(f"<td>{cell(c)}</td>" for c in row) + "</tr>")
    klass = f' class="{css}"' if css else ""
    return f"<table{klass}><tr>{head}</tr>{''.join(body)}</table>"


class Html(str):
    """Text that is already HTML (not escaped again in a table cell)."""


def cell(value) -> str:
    return str(value) if isinstance(value, Html) else e(value)


def image(path, alt: str, css: str = "") -> str:
    """An <img> with the PNG embedded as a data URL (empty when the file is missing)."""
    if not path or not Path(path).exists():
        return ""
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    klass = f' class="{css}"' if css else ""
    return f'<img{klass} alt="{e(alt)}" src="data:image/png;base64,{data}">'


def bullets(items, terms=()) -> str:
    """An HTML list of texts (humanized; see `humanize`); empty when there are none."""
    items = [humanize(i, terms) for i in items if str(i or "").strip()]
    return "<ul>" + "".join(f"<li>{e(i)}</li>" for i in items) + "</ul>" if items else ""
