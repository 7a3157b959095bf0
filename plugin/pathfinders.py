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
    "pt": "platinum", "pge": "platinum-group elements", "nb": "niobium", "ta": "tantalum", "cs": "caesium",
    "be": "beryllium", "rb": "rubidium", "f": "fluorine", "v": "vanadium", "zr": "zirconium", "y": "yttrium",
    "nd": "neodymium", "dy": "dysprosium", "mg": "magnesium", "na": "sodium", "ge": "germanium", "ga": "gallium",
}
"""Element symbols read in layer names, with their names. Symbols that are also common words in a layer's name are
not read: in ("Cu in soil"), s, p, re; mg is not read before kg ("Cu mg/kg")."""
AMBIGUOUS = {"al", "as", "ba", "ca", "cd", "ce", "co", "k", "la", "li", "pd", "se", "te", "th", "ti", "u", "w",
             "pt", "ta", "cs", "be", "rb", "f", "v", "y", "nd", "mg", "na", "ge", "ga", "nb"}
"""Symbols that are also words or abbreviations in names ("as", "SE grid", "W block", "La Plata", "et al",
"k-means", "Bouguer BA", "ND" for no data, "pt" for point, "F block"): read only where a name begins with its elements
("as_rcl", "K ppm", "As-Sb ratio"), where a unit or class word follows ("soil_K_ppm"), or at the end after short
prefixes only ("ss_al", "gb_ca")."""
_UNIT_WORDS = {"ppm", "ppb", "pct", "percent", "rcl", "class", "classes", "log", "idw"}
_OTHER_NAMES = {"aluminum": "al", "rare earth": "ree", "cesium": "cs", "na2o": "na", "k2o": "k", "mgo": "mg",
                "cao": "ca"}
_BY_NAME = {**{name: symbol for symbol, name in ELEMENTS.items()}, **_OTHER_NAMES}
_NOT_AFTER_A_SYMBOL = {"means", "kg"}  # "k-means clusters", "Cu mg/kg"


def named_elements(name: str, by_name: bool = True) -> set[str]:
    """Element symbols a layer's name names ("as_rcl", "Cu-Au soil", "Arsenic (ppm)"): the symbols it begins with,
    those before a unit or class word or ending a name of short prefixes (AMBIGUOUS), the other symbols anywhere,
    and with `by_name` element names anywhere."""
    words = re.sub(r"[^a-z0-9]+", " ", (name or "").lower()).split()
    leading = []
    for word in words:
        if word not in ELEMENTS:
            break
        leading.append(word)
    if len(leading) < len(words) and words[len(leading)] in _NOT_AFTER_A_SYMBOL:
        leading = leading[:-1]
    text = " " + " ".join(words) + " "
    found = set(leading) | {symbol for symbol in ELEMENTS if symbol not in AMBIGUOUS and f" {symbol} " in text}
    found |= {word for word, after in zip(words, words[1:]) if word in ELEMENTS and after in _UNIT_WORDS}
    if len(words) >= 2 and words[-1] in ELEMENTS and all(len(word) <= 3 for word in words[:-1]):
        found.add(words[-1])
    return found | {symbol for word, symbol in _BY_NAME.items() if by_name and f" {word} " in text}


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
    return symbol.upper() if symbol in ("ree", "pge") else symbol.capitalize()


def model_layers(layers, model: dict) -> list:
    """The layers (LayerInfo) that may be evidence for `model`: all but geochemistry of other elements."""
    return [info for info in layers if not off_model_reason(info.name, info.role, model)]


def off_model_note(layers, model: dict, roles) -> str:
    """A sentence naming the layers of `roles` given that are no evidence for `model`, with why; '' when none."""
    reasons = [(info.name, off_model_reason(info.name, info.role, model)) for info in layers if info.role in roles]
    off = [f"{name} ({reason})" for name, reason in reasons if reason]
    return f" The layers given with that role are no evidence for it: {'; '.join(off)}." if off else ""
