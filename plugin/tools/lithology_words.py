"""Groups of lithology words that stand for one another (resources/knowledge/lithology_synonyms.json), and the one
rule by which a named unit matches a legend's units (`matched_units`): read by the favourability surface, the unit
tools, the request's check of the units a user names, the legend reader's vocabulary and the offline reasoner."""
from __future__ import annotations

import fnmatch
import json
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import LodestarError

SYNONYMS_PATH = Path(__file__).resolve().parents[2] / "resources" / "knowledge" / "lithology_synonyms.json"


@lru_cache(maxsize=1)
def lithology_groups() -> dict[str, tuple]:
    """{group name: its lower-case words}."""
    try:
        data = json.loads(SYNONYMS_PATH.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise LodestarError(f"Cannot read the lithology synonyms {SYNONYMS_PATH}: {exc}.") from exc
    return {name: tuple(w.lower() for w in words) for name, words in data["groups"].items()}


def synonyms(word: str) -> tuple:
    """`word` and every lithology word of the groups it belongs to (or names), lower case."""
    word = word.strip().lower()
    words = [word]
    for name, group in lithology_groups().items():
        if word == name or word in group:
            words += [w for w in group if w not in words]
    return tuple(words)


_NEGATION = re.compile(r"(?<![a-z0-9])(outside|not|non|no|without|except|excluding|other than|beyond|away from)"
                       r"(?![a-z0-9])")


def _contains(name: str, word: str) -> bool:
    """Whether `word` is in `name` as a whole word, and not negated before it ("outside the greenstone
    belts" does not name a greenstone unit)."""
    found = re.search(r"(?<![a-z0-9])" + re.escape(word) + r"(?:e?s)?(?![a-z0-9])", name)
    return found is not None and _NEGATION.search(name[:found.start()]) is None


def matched_units(legend: dict, favourable) -> dict:
    """Units of a legend ({code: name}) that match favourable words, names or codes: {code: how it matched} (numeric
    codes as integers, other keys as given; a code that is not a finite number is no unit).

    A favourable entry matches a unit when it equals the unit's code or name (case-insensitive; `*`
    and `?` wildcards allowed) or when the name contains it, or a lithology synonym of it, as a whole
    word ("carbonate" matches "Silty limestone", "greenstone" matches "Metabasalt").
    """
    out: dict = {}
    legend = {code: name for code, name in legend.items()
              if not isinstance(code, (float, np.floating)) or np.isfinite(code)}
    for entry in favourable:
        term = str(entry).strip()
        if not term:
            continue
        words = synonyms(term)
        for code, name in legend.items():
            low = str(name).strip().lower()
            key = int(code) if isinstance(code, (int, float, np.number)) else code
            if key in out:
                continue
            if term.lower() in (low, str(key).lower()) or (any(ch in term for ch in "*?[") and
                                                          fnmatch.fnmatchcase(low, term.lower())):
                out[key] = str(name)
                continue
            hit = next((w for w in words if _contains(low, w)), None)
            if hit is not None:
                out[key] = f"{name} ({hit!r}" + (f", like {term!r})" if hit != term.lower() else ")")
    return out
