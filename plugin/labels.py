"""Words a geologist reads instead of the engine's keys: role labels and areas in km2 (the dock, the report and the
layer legends share them)."""
from __future__ import annotations

import math

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
"""One label per role of `plugin.roles.ROLES`."""


def role_label(role: str) -> str:
    """'Hydrothermal alteration' for 'hydrothermal_alteration'; an unknown key in words ('my_role' -> 'My role')."""
    key = str(role or "").strip()
    if key in ROLE_LABELS:
        return ROLE_LABELS[key]
    words = key.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def role_of_label(label: str) -> str:
    """The role key of a label of `role_label` (the key itself when `label` is already one)."""
    for key, text in ROLE_LABELS.items():
        if label in (key, text):
            return key
    return str(label)


def format_area_km2(m2) -> str:
    """An area given in square metres as km2 with sensible digits: '2,000 km2', '312 km2', '6.2 km2', '0.48 km2',
    '0.0031 km2'; '' when unknown."""
    if m2 is None:
        return ""
    try:
        km2 = float(m2) / 1e6
    except (TypeError, ValueError):
        return ""
    if math.isnan(km2):
        return ""
    size = abs(km2)
    if size == 0:
        text = "0"
    elif size >= 100:
        text = f"{km2:,.0f}"
    elif size >= 10:
        text = f"{km2:.1f}".rstrip("0").rstrip(".")
    elif size >= 0.01:
        text = f"{km2:.2f}".rstrip("0").rstrip(".")
    else:
        text = f"{km2:.2g}"
        if "e" in text:
            text = f"{km2:.6f}".rstrip("0")
    return f"{text} km2"
