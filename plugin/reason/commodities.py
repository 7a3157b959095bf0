"""What a question asks for: the commodities it names (element symbols, by name or by symbol) and the words of
deposit types or non-metal commodities it names, whether or not a deposit model of the knowledge base covers them."""
from __future__ import annotations

import re

from ..pathfinders import AMBIGUOUS, ELEMENTS

NAMES = {**{name: symbol for symbol, name in ELEMENTS.items() if symbol not in ("ree", "pge")},
         "rare earth": "ree", "rare earths": "ree", "rare earth element": "ree", "rare earth elements": "ree",
         "rare-earth": "ree", "platinum group": "pge", "platinum-group": "pge", "pgm": "pge", "cesium": "cs",
         "aluminum": "al", "chromite": "cr", "iron ore": "fe"}
"""Names of the commodities that are elements or element groups (lower case) and their symbols."""
VERB_NAMES = {"lead": ("to", "us", "you", "them", "the", "a", "an", "into", "towards")}
"""Element names that are also verbs, with the words that follow the verb ("what would lead us to a discovery"):
before one of those the name is no commodity."""
NOT_SYMBOLS = AMBIGUOUS | {"as", "w", "in"}
"""Symbols never read alone in a question: words or letters there ("co-located", "U.S.", "as good as")."""
OTHER_WORDS = {
    "diamond": "diamonds", "diamonds": "diamonds", "kimberlite": "kimberlite", "lamproite": "lamproite",
    "graphite": "graphite", "phosphate": "phosphate", "phosphorite": "phosphorite", "potash": "potash",
    "evaporite": "evaporite", "bauxite": "bauxite", "fluorspar": "fluorspar", "fluorite": "fluorite",
    "barite": "barite", "baryte": "barite", "placer": "placer", "placers": "placer", "manto": "manto",
    "coal": "coal", "oil": "oil", "gas": "gas", "helium": "helium", "kaolin": "kaolin", "gypsum": "gypsum",
    "halloysite": "halloysite", "vermiculite": "vermiculite", "mineral sands": "mineral sands",
    "heavy mineral sands": "mineral sands", "iron formation": "iron formation", "banded iron": "iron formation",
}
"""Words of commodities that are no elements and of deposit types (word: what to call it), read in a question so
that one about a type the knowledge base lacks is answered with the nearest model, and says so."""


def _text(question: str) -> str:
    return " " + re.sub(r"[^a-z0-9]+", " ", str(question or "").split("Answer:", 1)[0].lower()) + " "


def _find(text: str, phrase: str, not_before=()) -> int:
    """Where `phrase` is in `text` with no word of `not_before` after it; -1 when nowhere."""
    at = text.find(phrase)
    while at >= 0 and text[at + len(phrase):].split()[:1] and text[at + len(phrase):].split()[0] in not_before:
        at = text.find(phrase, at + 1)
    return at


def asked_commodities(question: str) -> list[str]:
    """The commodity symbols the question names, in the order of its words: by name ("gold", "rare earths") or by a
    symbol that is no common word ("Cu-Au", "Ni-Cu-PGE"); "lead" not as a verb ("lead to")."""
    text = _text(question)
    found: dict = {}
    for name, symbol in sorted(NAMES.items(), key=lambda pair: -len(pair[0])):
        phrase = " " + re.sub(r"[^a-z0-9]+", " ", name) + " "
        at = _find(text, phrase, VERB_NAMES.get(name, ()))
        if at >= 0:
            found.setdefault(symbol, at)
    for symbol in ELEMENTS:
        at = text.find(f" {symbol} ")
        if at >= 0 and symbol not in NOT_SYMBOLS:
            found.setdefault(symbol, at)
    return sorted(found, key=lambda symbol: found[symbol])


def asked_others(question: str) -> list[str]:
    """What the question names of OTHER_WORDS, in the singular or plural (the names to call them by), once each."""
    text = _text(question)
    out = []
    for word, name in OTHER_WORDS.items():
        if (f" {word} " in text or f" {word}s " in text) and name not in out:
            out.append(name)
    return out


def name_of(symbol: str) -> str:
    """A commodity symbol's name ("cu": "copper", "ree": "rare earth elements")."""
    return ELEMENTS.get(symbol.lower(), symbol)
