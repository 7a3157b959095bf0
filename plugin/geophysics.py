"""Which geophysical property a layer measures, read from its name: what a deposit model's geophysical signature
(`geophysics` in the knowledge base: a property and the side, high or low, over the system) is matched against.

Resistivity is read as conductivity with the side turned (a conductor is a resistivity low), and a radiometric
ratio (K/Th) is read as potassium, its numerator.
"""
from __future__ import annotations

import re

PROPERTIES = ("magnetics", "gravity", "radiometric_k", "radiometric_th", "radiometric_u", "conductivity",
              "chargeability")
_RADIOMETRIC = "(radiometr|gamma|spectrom)"
_WORDS = (
    ("chargeability", r"chargeab|induced polari[sz]ation|\bip\b"),
    ("conductivity", r"conductiv|resistiv|\bem\b|electromag|\baem\b|\btem\b|\bvtem\b|\bmt\b|magnetotelluric"),
    ("magnetics", r"magnet|\btmi\b|\brtp\b|\bmag\b|\bnt\b"),
    ("gravity", r"gravit|bouguer|\bmgal\b|\bgrav\b|density"),
    ("radiometric_k", r"\bk\s?/\s?th\b|potassium|\bk2o\b|\bk (pct|percent)\b|" + _RADIOMETRIC + r".*\bk\b"),
    ("radiometric_th", r"thorium|\beth\b|\bth ppm\b|" + _RADIOMETRIC + r".*\bth\b"),
    ("radiometric_u", r"uranium|\beu\b|\bu ppm\b|" + _RADIOMETRIC + r".*\bu\b"),
)
"""A one-letter channel (K, U) is read only beside a radiometric word or a unit ("radiometric K", "U ppm", "eU"):
alone it is a label ("layer U")."""
_INVERSE = re.compile(r"resistiv", re.IGNORECASE)


def measured_property(name: str) -> tuple[str, bool]:
    """(the property a geophysics layer's name says it measures, '' when it names none; whether its values run
    the other way, as a resistivity does for conductivity)."""
    text = " " + re.sub(r"[^a-z0-9/]+", " ", (name or "").lower()) + " "
    for prop, pattern in _WORDS:
        if re.search(pattern, text):
            return prop, prop == "conductivity" and bool(_INVERSE.search(text))
    return "", False


def signature(model: dict, prop: str) -> dict | None:
    """The deposit model's signature for `prop` ({"property", "sign", "what", "source"}), None when it gives none."""
    return next((entry for entry in (model or {}).get("geophysics") or [] if entry.get("property") == prop), None)
