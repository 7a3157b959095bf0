"""What a geologist must never read (issue 61), found in any text a run shows: role, transformation and zone ids,
other snake_case identifiers, "1 zones" plurals, "a argillic" articles. Shared by the engine's, the
Processing log's and the dock's tests (tests/ is on sys.path through conftest.py)."""
from __future__ import annotations

import html
import re
from pathlib import Path

from lodestar.plugin.labels import TRANSFORM_LABELS, article
from lodestar.plugin.pathfinders import ELEMENTS
from lodestar.plugin.roles import ROLES

ROOT = Path(__file__).resolve().parents[1]
CASES = {"sample": (ROOT / "resources" / "sample" / "porphyry-demo", ""),
         "murchison": (ROOT / "tests" / "data" / "murchison-gold", "porphyry_cu_mo_au"),
         "great basin": (ROOT / "tests" / "data" / "great-basin-gold", "")}
"""The real cases a geologist tries, with the deposit model picked (Murchison under the porphyry model: Insufficient
evidence)."""

IDS = sorted({r for r in ROLES if "_" in r} | {t for t in TRANSFORM_LABELS if "_" in t}, key=len, reverse=True)
_ID = re.compile(r"\b(" + "|".join(IDS) + r")\b")
_SNAKE = re.compile(r"(?<![\w./\\-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b"
                    r"(?![.\w]*\.(?:tif|gpkg|csv|json|html|png|shp|geojson))")  # not a file's name
_ZONE = re.compile(r"\bs\d+:[^:]{1,200}:\w+")
_ONE = re.compile(r"(?<![\d.,])\b1 ([a-z]+s)\b(?! of\b)")
_SINGULAR_S = {"analysis", "class", "basis", "gas", "this", "is", "was", "has", "focus", "radius", "axis", "locus",
               "less", "across", "plus", "thus", "series", "bonus", "process", "gneiss", "schist", "lies", "holds",
               "stands", "falls", "sits", "says", "gives", "makes", "takes", "ranks", "counts", "scores", "leaves",
               "beats", "wins", "shows", "meets", "covers", "names", "tests", "reads", "means"}
_ARTICLE = re.compile(r"(?<![\w'])(a|an) ([A-Za-z][\w-]*)")


def page_text(page: str) -> str:
    """An HTML page's text as a reader sees it (no style sheet, no embedded images, tags as spaces)."""
    page = re.sub(r"<style>.*?</style>|src=\"data:[^\"]+\"", "", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def problems(text, names=()) -> list[str]:
    """Each thing in `text` a geologist should not read, with its context; `names`: the run's layer and file names,
    which may hold anything (a layer named 'as_rcl' is the user's word)."""
    text = str(text or "")
    for name in sorted(names, key=len, reverse=True):
        text = text.replace(str(name), "Layer")
    found = []

    def said(match, what):
        start, end = max(0, match.start() - 50), min(len(text), match.end() + 30)
        found.append(f"{what} {match.group(0)!r} in ...{text[start:end]}...")

    for match in _ZONE.finditer(text):
        said(match, "zone id")
    for match in _ID.finditer(text):
        said(match, "id")
    for match in _SNAKE.finditer(text):
        if not _ID.fullmatch(match.group(0)):
            said(match, "identifier")
    for match in _ONE.finditer(text):
        if match.group(1) not in _SINGULAR_S:
            said(match, "plural")
    for match in _ARTICLE.finditer(text):
        word = match.group(2)
        if word.lower() in ("few", "lot", "posteriori", "priori") or not word[:1].isalpha():
            continue
        symbol = word.split("-", 1)[0]
        if symbol[:1].isupper() and symbol[1:].islower() and symbol.lower() in ELEMENTS:
            continue  # 'a Ni-Co anomaly' (nickel) and 'an Sn-W anomaly' (S-N) are both read
        if article(word).split(" ", 1)[0] != match.group(1).lower():
            said(match, "article")
    return found


def names_of(layers) -> list:
    """A case's layer and file names (the user's words, whatever they hold)."""
    return [spec.name for spec in layers] + [spec.path.name for spec in layers]
