"""Text of the HTML report: escaping, tables, images, human labels for roles, numbers and areas.

The words and numbers themselves (roles as words, areas in km², numbers without exponents) come from
plugin/labels.py, shared with the dock and the layer legends.
"""
from __future__ import annotations

import base64
import html
from pathlib import Path

from ..labels import humanize, km2, number, percent, words

__all__ = ["Html", "bullets", "cell", "e", "humanize", "image", "km2", "number", "percent", "table", "words"]


def e(value) -> str:
    """HTML-escaped text of a value (None is empty)."""
    return html.escape("" if value is None else str(value), quote=True)


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
