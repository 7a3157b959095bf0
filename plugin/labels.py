"""Words a geologist reads instead of the engine's keys, shared by the dock (ui/), the Processing outputs and layer
legends (processing/), the event text (events.py) and the HTML report:

- roles: `role_label("hydrothermal_alteration")` -> "Hydrothermal alteration" (legends, table cells) and back
  (`role_of_label`), `words(...)` -> "hydrothermal alteration" (inside a sentence);
- tools: `tool_label("spatial_relations")` -> "spatial relations";
- numbers: sensible significant digits, never exponent notation (`number`), areas given in m² as km²
  (`format_area_km2`, the one area formatter; `km2` is its report form), shares as percentages (`percent`);
- free text: `humanize` writes the role identifiers in it (and other given identifiers) as words and numbers in
  exponent notation out;
- model use: `usage_rows` gives the calls / tokens table, or says "offline: no model calls";
- the evidence plan: transformations, memberships, combinations and calibration methods (`transform_label`,
  `membership_label`, `method_label`);
- the chain's zones: `zone_label("s4:ferric iron index:1")` -> "zone 1 of step 4 on ferric iron index" (also inside
  free text, by `humanize`), units of a map (`unit5_1` -> "unit 5 part 1"), faults and contacts;
- grammar: counts with their noun (`plural(1, "zone")` -> "1 zone"), articles (`article("argillic alteration")` ->
  "an argillic alteration"), layers of roles (`layer_of(roles)` -> "a hydrothermal alteration or argillic
  alteration layer"), distances with their unit (`distance(10_000)` -> "10 km"), a report's title from its
  question's words (`question_title`).
"""
from __future__ import annotations

import math
import re

from .pathfinders import ELEMENTS
from .roles import ROLES

ROLE_LABELS = {
    "geological_map": "Geological map",
    "hydrothermal_alteration": "Hydrothermal alteration",
    "silicification": "Silicification",
    "propylitic_alteration": "Propylitic alteration",
    "argillic_alteration": "Argillic alteration",
    "iron_oxide": "Iron oxide",
    "false_color_composite": "False-colour composite",
    "structure": "Structure (faults, lineaments)",
    "geochemistry": "Geochemistry",
    "geophysics": "Geophysics",
    "other": "Other",
}
"""One label per role of `plugin.roles.ROLES`, capitalised as a legend entry."""

_ROLE_WORDS = {"false_color_composite": "false-colour composite"}
"""Roles whose in-sentence words are not just the identifier with spaces."""

TOOL_LABELS = {
    "color_regions": "colour / anomaly regions",
    "feature_regions": "feature regions",
    "categorical": "geological units",
    "vector_evidence": "mapped features",
    "mark_boxes": "boxes marked on the image",
    "spatial_relations": "spatial relations",
    "integrate_evidence": "evidence integration",
    "none": "no tool",
    "alteration_indices": "alteration indices from a scene",
}
"""The engine's tools (plugin/reason/contract.py TOOLSET) in words."""

TRANSFORM_LABELS = {"none": "values as they are", "percentile_rank": "percentile rank",
                    "log_percentile": "log10, 2-98 percentile stretch", "distance_m": "distance to features (m)",
                    "units": "favourable units"}
"""How an evidence layer's values are made comparable (plugin/favourability/evidence.py TRANSFORMS), in words."""

MEMBERSHIP_LABELS = {"identity": "as transformed", "invert": "inverted (1 - x)", "large": "fuzzy large",
                     "small": "fuzzy small", "linear": "fuzzy linear", "gaussian": "fuzzy Gaussian"}
"""How transformed values become favourability (evidence.py MEMBERSHIPS), in words."""

COMBINATION_LABELS = {"weighted": "weighted overlay", "rank": "weighted mean of ranks", "gamma": "fuzzy gamma",
                      "and": "fuzzy AND", "or": "fuzzy OR", "product": "fuzzy product", "sum": "fuzzy sum"}
"""How the memberships are combined into one surface (plugin/favourability/overlay.py METHODS), in words."""

CALIBRATION_LABELS = {"wofe": "weights of evidence", "logistic": "logistic regression", "forest": "random forest",
                      "boosting": "gradient boosting", "ensemble": "ensemble of the four (mean rank)",
                      "best": "the best out of fold"}
"""The models a calibration fits on known deposits (plugin/favourability/models.py), in words."""

KIND_LABELS = {"index": "values", "rgb": "colour rendering", "categorical": "map units", "vector": "vector features"}
"""What a layer holds (plugin/reason/workspace.py LayerInfo.kind), in words."""

OFFLINE_USAGE = "offline: no model calls"
"""What the model-use table says when no model was called (the offline rule-based reasoner)."""

_ROLE_PATTERN = re.compile(r"(?<![/\\])\b(" + "|".join(sorted(ROLES, key=len, reverse=True)) + r")\b(?!\.\w)")
_SNAKE_TERMS = {key: label for key, label in TRANSFORM_LABELS.items() if "_" in key}
_TERM_PATTERN = re.compile(r"(?<![/\\])\b(" + "|".join(sorted(_SNAKE_TERMS, key=len, reverse=True)) + r")\b(?!\.\w)")
"""Identifiers in free text; not inside a file's path or name ('/data/geological_map.tif' stays as it is)."""
_ZONE_START = re.compile(r"\bs(\d+):")
_ZONE_LOCAL = re.compile(r"(?:unit(\d+)_(\d+)|([a-z]+)(\d+)|(\d+))(?!\w|[,.]\d)")
_ZONE_LAYER_CHARS = 200
"""The longest layer name a zone id is read with inside free text."""
_ACRONYM_VOWELS = "AEFHILMNORSX"
"""Letters whose spoken name begins with a vowel sound ('an MVT', 'an REE', 'an LCT pegmatite')."""
_CONSONANT_SOUNDS = ("uni", "use", "usu", "ura", "uro", "eu", "one", "once")
_VOWEL_SOUNDS = ("hour", "honest", "heir", "8", "11", "18")
_EXPONENT = re.compile(r"(?<![\w.])\d+(?:\.\d+)?e[+-]?\d+\b", re.IGNORECASE)


def role_label(role: str) -> str:
    """'Hydrothermal alteration' for 'hydrothermal_alteration'; an unknown key in words ('my_role' -> 'My role')."""
    key = str(role or "").strip()
    if key in ROLE_LABELS:
        return ROLE_LABELS[key]
    text = key.replace("_", " ").strip()
    return text[:1].upper() + text[1:]


def role_of_label(label: str) -> str:
    """The role key of a label of `role_label` (the key itself when `label` is already one)."""
    for key, text in ROLE_LABELS.items():
        if label in (key, text):
            return key
    return str(label)


def role_of_words(text) -> str:
    """The role a geologist's words name: its label, its words or its key, in any case ('iron oxide', 'Structure
    (faults, lineaments)', 'false-colour composite' -> their keys); the text itself when it names none."""
    said = " ".join(str(text or "").split())
    for key in ROLE_LABELS:
        if said.lower() in (key, words(key), ROLE_LABELS[key].lower()):
            return key
    return said


def identifier(text) -> str:
    """Words as the identifier they stand for: 'Gossan cap' -> 'gossan_cap' (lower case, other characters as '_')."""
    return re.sub(r"[^a-z0-9]+", "_", str(text or "").strip().lower()).strip("_")


def words(name) -> str:
    """A role or other identifier inside a sentence: 'hydrothermal_alteration' -> 'hydrothermal alteration',
    'false_color_composite' -> 'false-colour composite', 'phyllic_core' -> 'phyllic core'."""
    name = str(name or "")
    return _ROLE_WORDS.get(name, name.replace("_", " "))


def tool_label(tool) -> str:
    """An engine tool in words: 'spatial_relations' -> 'spatial relations'."""
    name = str(tool or "")
    return TOOL_LABELS.get(name, name.replace("_", " "))


def transform_label(key) -> str:
    """A transformation in words: 'distance_m' -> 'distance to features (m)'."""
    return TRANSFORM_LABELS.get(str(key), words(key))


def membership_label(key) -> str:
    """A membership in words: 'small' -> 'fuzzy small'."""
    return MEMBERSHIP_LABELS.get(str(key), words(key))


def method_label(key) -> str:
    """A combination or calibration method in words: 'rank' -> 'weighted mean of ranks', 'wofe' -> 'weights of
    evidence'."""
    key = str(key or "")
    return COMBINATION_LABELS.get(key) or CALIBRATION_LABELS.get(key) or words(key)


def kind_label(kind) -> str:
    """What a layer holds in words: 'rgb' -> 'colour rendering'."""
    return KIND_LABELS.get(str(kind), words(kind))


def zone_label(zone_id) -> str:
    """A zone of the chain in words: 's4:ferric iron index:1' -> 'zone 1 of step 4 on ferric iron index',
    's6:geological map:unit5_1' -> 'unit 5 part 1 of step 6 on geological map', 's1:faults:fault49' -> 'fault 49 of
    step 1 on faults'; anything else as it is."""
    text = str(zone_id or "")
    found = _zone_at(text, 0)
    return found[1] if found is not None and found[0] == len(text) else text


def _zone_at(text: str, start: int) -> tuple[int, str] | None:
    """(end, words) of the zone id that begins at `start` of `text` ('s<step>:<layer>:<zone>'; the layer the
    shortest run of text with its brackets closed, so '(1:500,000 geology)' stays part of it), None when none does."""
    head = _ZONE_START.match(text, start)
    if head is None:
        return None
    colon = text.find(":", head.end())
    while 0 <= colon - head.end() <= _ZONE_LAYER_CHARS:
        layer = text[head.end():colon]
        local = _ZONE_LOCAL.match(text, colon + 1)
        if layer.strip() and "\n" not in layer and layer.count("(") == layer.count(")") and local is not None:
            unit, part, kind, index, zone = local.groups()
            thing = (f"unit {unit} part {part}" if unit else f"{kind} {index}" if kind else f"zone {zone}")
            return local.end(), f"{thing} of step {head.group(1)} on {layer}"
        colon = text.find(":", colon + 1)
    return None


def _zones_in_words(text: str) -> str:
    out, done = [], 0
    for head in _ZONE_START.finditer(text):
        if head.start() < done:
            continue
        found = _zone_at(text, head.start())
        if found is not None:
            out += [text[done:head.start()], found[1]]
            done = found[0]
    return "".join(out) + text[done:]


def plural(count, noun: str, many: str = "") -> str:
    """A count with its noun in the right number: '1 zone', '3 zones', '1,204 known deposits', '2 boxes' (`many`:
    the plural where it is not regular)."""
    value = float(count)
    shown = f"{int(value):,}" if value == int(value) else number(value)
    if value == 1:
        return f"{shown} {noun}"
    if not many:
        head, _, last = noun.rpartition(" ")
        if last.endswith(("s", "x", "ch", "sh")):
            last += "es"
        elif last.endswith("y") and last[-2:-1] not in ("a", "e", "o", "u", ""):
            last = last[:-1] + "ies"
        else:
            last += "s"
        many = f"{head} {last}".strip()
    return f"{shown} {many}"


def the(count, noun: str) -> str:
    """'the known deposit' for one, 'the 12 known deposits' for more."""
    return f"the {noun}" if float(count) == 1 else f"the {plural(count, noun)}"


def verb(count, stem: str) -> str:
    """A present-tense verb agreeing with a count: 'holds' for one, 'hold' for more."""
    return f"{stem}s" if float(count) == 1 else stem


def best_targets_hold(rank, deposits) -> str:
    """'The 4 best targets hold 3 deposits' ('The best target holds 1 deposit')."""
    return f"{the(rank, 'best target').capitalize()} {verb(rank, 'hold')} {plural(deposits, 'deposit')}"


def article(phrase) -> str:
    """The phrase after 'a' or 'an' as it is spoken: 'an argillic alteration', 'a unit', 'an MVT deposit',
    'a hydrothermal alteration', 'a Ni-Co anomaly' (an element symbol read as its name)."""
    phrase = str(phrase or "").strip()
    first = phrase.split(" ", 1)[0].strip("(\"'")
    symbol = first.split("-", 1)[0]
    if len(symbol) <= 2 and symbol[:1].isupper() and symbol[1:].islower() and symbol.lower() in ELEMENTS:
        first = ELEMENTS[symbol.lower()]  # an element is read by its name: 'a Ni-Cu-PGE anomaly', 'an Au anomaly'
    if sum(c.isupper() for c in first) >= 2 or (len(first) == 1 and first.isupper()):
        vowel = first[:1] in _ACRONYM_VOWELS
    else:
        low = first.lower()
        vowel = (low[:1] in "aeiou" and not low.startswith(_CONSONANT_SOUNDS)) or low.startswith(_VOWEL_SOUNDS)
    return f"{'an' if vowel else 'a'} {phrase}"


def listed(items, conjunction: str = "and") -> str:
    """'a', 'a and b', 'a, b and c'."""
    items = [str(i) for i in items if str(i)]
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {conjunction} {items[-1]}" if items else ""


def roles_words(roles, conjunction: str = "or") -> str:
    """Roles inside a sentence: 'hydrothermal alteration or argillic alteration'."""
    return listed([words(r) for r in roles], conjunction)


def layer_of(roles) -> str:
    """'a hydrothermal alteration or argillic alteration layer', 'an argillic alteration layer'."""
    return article(f"{roles_words(roles)} layer")


def distance(metres) -> str:
    """A distance with its unit: '450 m', '1.5 km', '10 km'; '-' when unknown."""
    if metres is None:
        return "-"
    value = float(metres)
    return f"{number(value / 1000.0)} km" if abs(value) >= 1000 else f"{number(value)} m"


def question_title(question, fallback: str = "Lodestar analysis", limit: int = 110) -> str:
    """A report's title from its question's words: its first sentence, without the answer choices and without a
    leading clause that only states the inputs ('Given the following remote-sensing images, can porphyry copper
    deposits be detected?' -> 'Can porphyry copper deposits be detected?'), cut at a word under `limit` characters;
    `fallback` when the question says nothing."""
    text = " ".join(str(question or "").split())
    text = re.split(r"\s*\bAnswer\s*:", text, maxsplit=1)[0].strip()
    text = re.sub(r"^given\b[^,?]*,\s*", "", text, flags=re.IGNORECASE)
    first = re.match(r".*?[?.!](?=\s|$)", text)
    text = (first.group(0) if first else text).strip()
    if not text:
        return fallback
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "\u2026"
    return text[:1].upper() + text[1:]


def humanize(text, terms=()) -> str:
    """Text with the role identifiers in it (and the identifiers in `terms`, e.g. a deposit model's evidence
    items), the transformations and the chain's zone ids written as words, and numbers in exponent notation written
    out."""
    text = _zones_in_words(str(text or ""))
    text = _TERM_PATTERN.sub(lambda m: _SNAKE_TERMS[m.group(1)], text)
    text = _ROLE_PATTERN.sub(lambda m: words(m.group(1)), text)
    terms = sorted({str(t) for t in terms if "_" in str(t)}, key=len, reverse=True)
    if terms:
        text = re.sub(r"\b(" + "|".join(map(re.escape, terms)) + r")\b", lambda m: words(m.group(1)), text)
    return _EXPONENT.sub(lambda m: number(float(m.group(0))), text)


def number(value, digits: int = 3) -> str:
    """A number with `digits` significant digits, no exponent, no trailing zeros, thousands separated;
    '-' for None or not a number."""
    if value is None or isinstance(value, bool):
        return "-" if value is None else str(value)
    try:
        value = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(value):
        return "-" if math.isnan(value) else str(value)
    if value == 0:
        return "0"
    decimals = min(6, max(0, digits - 1 - int(math.floor(math.log10(abs(value))))))
    text = f"{value:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def format_area_km2(m2, unit: str = "km2") -> str:
    """An area given in square metres as km2 with three significant digits, thousands separated, never an
    exponent: '2,000 km2', '312 km2', '6.25 km2', '0.48 km2', '0.0031 km2'; '' when unknown."""
    if m2 is None:
        return ""
    try:
        value = float(m2) / 1e6
    except (TypeError, ValueError):
        return ""
    return "" if math.isnan(value) else f"{number(value)} {unit}"


def km2(area_m2) -> str:
    """`format_area_km2` as the report writes it: '6.25 km²', '-' when unknown."""
    return format_area_km2(area_m2, "km²") or "-"


TIES_NOTE = ("Counts are whole deposits: a deposit on cells of equal favourability that straddle a cut-off is "
             "counted by the share of those cells above it, and the sum rounded.")
"""The one sentence on ties that goes with capture counts (report and dock), said once beside them."""


def whole_deposits(value) -> int:
    """A capture count of deposits (an expected count where tied cells straddle a cut-off: TIES_NOTE) rounded half
    up to whole deposits."""
    return int(math.floor(float(value) + 0.5))


def deposit_count(value) -> str:
    """A capture count as shown: whole deposits ('75'), '-' for None."""
    return "-" if value is None else f"{whole_deposits(value):,}"


def percent(share, digits: int = 2) -> str:
    """A share 0-1 written as a percentage: 0.1235 -> '12 %' (digits significant, at least units)."""
    return "-" if share is None else f"{number(100.0 * float(share), digits)} %"


def usage_rows(usage: dict) -> tuple[list, str]:
    """The model-use table of a run: ([role, calls, tokens, seconds] rows, '') when a model was called, else
    ([], OFFLINE_USAGE) rather than a table of zeros."""
    usage = usage or {}
    if not any(int((figures or {}).get("calls", 0) or 0) for figures in usage.values()):
        return [], OFFLINE_USAGE
    rows = []
    for role, figures in sorted(usage.items()):
        tokens = int(figures.get("prompt_tokens", 0) or 0) + int(figures.get("completion_tokens", 0) or 0)
        rows.append([str(role), str(int(figures.get("calls", 0) or 0)), number(tokens, 9),
                     f"{float(figures.get('seconds', 0.0) or 0.0):.1f}"])
    return rows, ""


def weighed_at(verdict: dict) -> str:
    """The place a verdict weighed its answer at and how that place was found, in words ("" when it names
    neither; "none (no core)" when it found no place)."""
    place, route = verdict.get("place") or "", verdict.get("route") or ""
    if place and route:
        return f"{place} (found as: {route})"
    return place or (f"none ({route})" if route else "")


def targets_surface(validation: dict | None) -> str:
    """Which validation row scores the surface the targets came from: 'cv' (the calibrated model, out of fold) when
    the run was calibrated and kept the fit, else 'knowledge' (the knowledge-driven surface); '' when unvalidated."""
    validation = validation or {}
    if validation.get("method") and not validation.get("refused") and (validation.get("cv") or {}).get("auc") \
            is not None:
        return "cv"
    return "knowledge" if validation.get("knowledge") else ""


def targets_auc(validation: dict | None):
    """The success-rate AUC of the surface the targets came from (`targets_surface`; out of fold when calibrated),
    None when unvalidated: the one figure History, the banner and the report quote for a run."""
    key = targets_surface(validation)
    return (validation or {}).get(key, {}).get("auc") if key else None


def target_figure(row: dict) -> tuple[str, str]:
    """(name, value) of the figure a target is ranked by, as every table of targets names it: its expected
    deposits when calibrated, else the 90th percentile of its favourability ('favourability (p90)', '0.901')."""
    if row.get("exp_deps") is not None and row.get("exp_deps") == row.get("exp_deps"):
        return "expected deposits", number(row["exp_deps"], 3)
    return "favourability (p90)", number(row.get("fav_p90"), 3)

