"""Python warnings raised during a run, counted and written once per kind in words (not one line per warning).

A library warning repeats for every feature or block it meets (rasterio warns once per empty line each time a
layer is drawn onto a grid: 80 lines for the 40 zero-length faults of the Murchison case). `summarised_warnings`
catches them for the length of a run and hands the log one sentence per kind at its end.
"""
from __future__ import annotations

import re
import warnings
from contextlib import contextmanager
from typing import Callable, Iterator

_SKIPPED_SHAPE = re.compile(r"'type': '(\w+)'")
_SHAPE_WORDS = {"LineString": "line", "MultiLineString": "line", "Polygon": "polygon", "MultiPolygon": "polygon",
                "Point": "point", "MultiPoint": "point"}


@contextmanager
def summarised_warnings(log: Callable[[str], None]) -> Iterator[None]:
    """Catch every warning raised inside the block; on leaving it (normally or not), log `summary_lines`."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            for line in summary_lines(caught):
                log(line)


def summary_lines(caught: list) -> list[str]:
    """One sentence per kind (category) of the caught warnings, in the order each kind first came."""
    kinds: dict = {}
    for item in caught:
        kinds.setdefault(item.category.__name__, []).append(str(item.message))
    return [_skipped_shapes(messages) if name == "ShapeSkipWarning" else _other(name, messages)
            for name, messages in kinds.items()]


def _skipped_shapes(messages: list) -> str:
    """rasterio's ShapeSkipWarning, once per feature (a feature drawn onto several grids warns each time)."""
    distinct = sorted(set(messages))
    kinds = {_SHAPE_WORDS.get(m.group(1), "feature") if m else "feature"
             for m in (_SKIPPED_SHAPE.search(text) for text in distinct)}
    noun = kinds.pop() if len(kinds) == 1 else "feature"
    count = len(distinct)
    plural = noun if count == 1 else f"{noun}s"
    return (f"{count} {plural} with no length or area (empty, or all at one point) "
            f"{'was' if count == 1 else 'were'} skipped where the vector layers were drawn onto the analysis grid.")


def _other(name: str, messages: list) -> str:
    count = len(messages)
    first = " ".join(messages[0].split())
    first = first if len(first) <= 200 else first[:199] + "…"
    times = "once" if count == 1 else f"{count} times"
    return f"Warning ({name}, {times}): {first}"
