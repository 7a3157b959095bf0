"""Groups of lithology words that stand for one another (resources/knowledge/lithology_synonyms.json): read by the
favourable-unit matching of the surface, the legend reader's vocabulary and the offline reasoner."""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

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
