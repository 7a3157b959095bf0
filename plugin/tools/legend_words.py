"""The vocabulary of geological legends, and OCR words checked against it.

Words come from resources/knowledge/geology_words.txt and the lithology words of lithology_synonyms.json. Tesseract
is given them as user words; a read word that is not in the vocabulary but one edit (after the usual OCR confusions,
`rn` read as `m` and the like) from exactly one word of it is taken for that word, and the change is recorded.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from ..decisions import CORE
from .lithology_words import lithology_groups

WORDS_PATH = Path(__file__).resolve().parents[2] / "resources" / "knowledge" / "geology_words.txt"
# decision numbers: their reasons and provenance are in plugin/decisions.py
MIN_LETTERS = CORE.min_letters
CONFUSIONS = (("rn", "m"), ("cl", "d"), ("vv", "w"))
"""Letter groups OCR takes for one another (each compared as the second)."""


@lru_cache(maxsize=1)
def vocabulary() -> frozenset:
    """The lower-case words of geological legends."""
    words = set()
    for line in WORDS_PATH.read_text(encoding="utf-8").splitlines():
        line = line.strip().lower()
        if line and not line.startswith("#"):
            words.add(line)
    for names in lithology_groups().values():
        for name in names:
            words.update(name.split())
    return frozenset(words)


def user_words_text() -> str:
    """The vocabulary as a Tesseract user-words file (each word also capitalised)."""
    words = sorted(vocabulary())
    return "\n".join(words + [w.capitalize() for w in words]) + "\n"


def correct_name(text: str) -> tuple[str, list]:
    """The name with its misread words replaced, and the replacements made as (read, taken) pairs."""
    changes = []

    def replace(match: re.Match) -> str:
        word = match.group(0)
        taken = _closest(word.lower())
        if taken is None or taken == word.lower():
            return word
        fixed = taken.capitalize() if word[0].isupper() else taken
        changes.append((word, fixed))
        return fixed

    return re.sub(r"[A-Za-z]+", replace, text), changes


def _closest(word: str) -> str | None:
    """The one vocabulary word within one edit of `word` (after OCR confusions), or None."""
    words = vocabulary()
    if word in words or len(word) < MIN_LETTERS:
        return None
    plain = _normal(word)
    hits = {w for w in words if abs(len(w) - len(word)) <= 2 and _within_one(plain, _normal(w))}
    return hits.pop() if len(hits) == 1 else None


def _normal(word: str) -> str:
    for seen, meant in CONFUSIONS:
        word = word.replace(seen, meant)
    return word


def _within_one(a: str, b: str) -> bool:
    """Whether two words are at most one insertion, deletion or substitution apart."""
    if a == b:
        return True
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    return a[i + (len(a) == len(b)):] == b[i + 1:]
