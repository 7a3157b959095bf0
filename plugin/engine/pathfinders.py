"""Which geochemistry layers are evidence for a deposit model: those of its pathfinder elements.

A multi-element survey loaded whole (As, Sb, Al, Ca, K of a stream-sediment survey) holds one layer per element;
a Carlin-type question is answered by the As and Sb anomalies, not by the aluminium or potassium ones. A layer's
elements are read from its name ("as_rcl", "Cu in soil (ppm)", "arsenic"); a layer whose name names no element
(a principal component, a "soil anomaly" index) is evidence for every model, as is every layer of a model that
lists no pathfinders.
"""
from __future__ import annotations

import re

ELEMENTS = {
    "ag": "silver", "al": "aluminium", "as": "arsenic", "au": "gold", "ba": "barium", "bi": "bismuth",
    "ca": "calcium", "cd": "cadmium", "ce": "cerium", "co": "cobalt", "cr": "chromium", "cu": "copper",
    "fe": "iron", "hg": "mercury", "k": "potassium", "la": "lanthanum", "li": "lithium", "mn": "manganese",
    "mo": "molybdenum", "ni": "nickel", "pb": "lead", "pd": "palladium", "sb": "antimony", "se": "selenium",
    "sn": "tin", "sr": "strontium", "te": "tellurium", "th": "thorium", "ti": "titanium", "tl": "thallium",
    "u": "uranium", "w": "tungsten", "zn": "zinc", "ree": "rare earth elements",
}
"""Element symbols read in layer names, with their names. Symbols that are also common words or units in a layer's
name are not read: in ("Cu in soil"), mg ("mg/kg"), s, p, v, na, re, pt."""
_OTHER_NAMES = {"aluminum": "al", "rare earth": "ree"}
_BY_NAME = {**{name: symbol for symbol, name in ELEMENTS.items()}, **_OTHER_NAMES}


def named_elements(name: str) -> set[str]:
    """Element symbols a layer's name names, as words or by their names ("as_rcl" and "Arsenic (ppm)": {'as'})."""
    text = " " + re.sub(r"[^a-z0-9]+", " ", (name or "").lower()) + " "
    found = {symbol for symbol in ELEMENTS if f" {symbol} " in text}
    return found | {symbol for word, symbol in _BY_NAME.items() if f" {word} " in text and symbol in ELEMENTS}


def off_model_reason(name: str, role: str, model: dict) -> str:
    """Why a geochemistry layer named `name` is no evidence for `model` (its elements are none of the model's
    pathfinders), said in a sentence without the final stop; '' when it is evidence (or not geochemistry)."""
    pathfinders = [p.lower() for p in (model or {}).get("pathfinders", [])]
    elements = named_elements(name) if role == "geochemistry" else set()
    if not pathfinders or not elements or elements & set(pathfinders):
        return ""
    listed = " and ".join(ELEMENTS[e] for e in sorted(elements))
    verb = "is not a pathfinder" if len(elements) == 1 else "are not pathfinders"
    wanted = ", ".join(_symbol(p) for p in pathfinders)
    return f"{listed} {verb} of {model.get('name', 'this deposit model')} ({wanted})"


def _symbol(symbol: str) -> str:
    return symbol.upper() if symbol == "ree" else symbol.capitalize()


def model_layers(layers, model: dict) -> list:
    """The layers (LayerInfo) that may be evidence for `model`: all but geochemistry of other elements."""
    return [info for info in layers if not off_model_reason(info.name, info.role, model)]
