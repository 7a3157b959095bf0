"""The favourability surface's classes, defined once: the colour ramp of its layer style
(resources/styles/favourability.qml), which the dock's layer legend shows, read here for the report's map.

A class holds the values above the previous class's upper bound up to its own (QGIS's discrete ramp:
a value equal to a bound takes the lower class).
"""
from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from .errors import LodestarError

STYLE = Path(__file__).resolve().parents[1] / "resources" / "styles" / "favourability.qml"


@dataclass(frozen=True)
class MapClass:
    """One class of the surface: values in (lower, upper], its colour (#rrggbb) and its legend label."""

    lower: float
    upper: float
    colour: str
    label: str


@lru_cache(maxsize=4)
def favourability_classes(style: Path = STYLE) -> tuple[MapClass, ...]:
    """The classes of the surface's style, lowest first."""
    try:
        shader = ElementTree.parse(style).getroot().find(".//colorrampshader")
    except (OSError, ElementTree.ParseError) as exc:
        raise LodestarError(f"The favourability style {style} cannot be read ({exc}); reinstall the plugin.") from exc
    items = shader.findall("item") if shader is not None else []
    if shader is None or shader.get("colorRampType") != "DISCRETE" or not items:
        raise LodestarError(f"The favourability style {style} has no discrete colour classes; reinstall the plugin.")
    lower = float(shader.get("minimumValue", "0"))
    classes = []
    for item in items:
        upper = float(item.attrib["value"])
        classes.append(MapClass(lower, upper, item.attrib["color"], item.get("label", "")))
        lower = upper
    return tuple(classes)


def class_index(values: np.ma.MaskedArray, classes: tuple[MapClass, ...]) -> np.ma.MaskedArray:
    """The class (0 = lowest) of every value, as the style draws it: a value on a bound takes the lower class;
    values below the first class fall in it, above the last in the last. Masked values stay masked."""
    uppers = np.array([c.upper for c in classes[:-1]], dtype="float64")
    data = np.ma.masked_invalid(np.ma.asarray(values, dtype="float64"))
    index = np.searchsorted(uppers, data.filled(0.0), side="left")
    return np.ma.array(index, mask=np.ma.getmaskarray(data))
