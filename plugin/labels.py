"""Words a geologist reads instead of the engine's keys, shared by the dock (ui/), the Processing outputs and layer
legends (processing/), the event text (events.py) and the HTML report:

- roles: `role_label("hydrothermal_alteration")` -> "Hydrothermal alteration" (legends, table cells) and back
  (`role_of_label`), `words(...)` -> "hydrothermal alteration" (inside a sentence);
- tools: `tool_label("spatial_relations")` -> "spatial relations";
- numbers: sensible significant digits, never exponent notation (`number`), areas given in m² as km²
  (`format_area_km2`, the one area formatter; `km2` is its report form), shares as percentages (`percent`);
- free text: `humanize` writes the role identifiers in it (and other given identifiers) as words and numbers in
  exponent notation out;
- model use: `usage_rows` gives the calls / tokens table, or says "offline: no model calls".
"""
from __future__ import annotations

import math
import re

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
"""The engine's tools (plugin/engine/contract.py TOOLSET) in words."""

OFFLINE_USAGE = "offline: no model calls"
"""What the model-use table says when no model was called (the offline rule-based reasoner)."""

_ROLE_PATTERN = re.compile(r"\b(" + "|".join(sorted(ROLES, key=len, reverse=True)) + r")\b")
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


def words(name) -> str:
    """A role or other identifier inside a sentence: 'hydrothermal_alteration' -> 'hydrothermal alteration',
    'false_color_composite' -> 'false-colour composite', 'phyllic_core' -> 'phyllic core'."""
    name = str(name or "")
    return _ROLE_WORDS.get(name, name.replace("_", " "))


def tool_label(tool) -> str:
    """An engine tool in words: 'spatial_relations' -> 'spatial relations'."""
    name = str(tool or "")
    return TOOL_LABELS.get(name, name.replace("_", " "))


def humanize(text, terms=()) -> str:
    """Text with the role identifiers in it (and the identifiers in `terms`, e.g. a deposit model's evidence
    items) written as words, and numbers in exponent notation written out."""
    text = _ROLE_PATTERN.sub(lambda m: words(m.group(1)), str(text or ""))
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
