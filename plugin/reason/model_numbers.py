"""The numbers of a user's deposit model, checked when it is loaded or saved: each finite, and each the model's schema
knows in its physical range (NUMBER_RANGES; the localization settings in the paper's ranges, `LocalizationParams`).

A number out of range is refused in one line naming the field (`evidence[2].near_m`), what it must be and what it
is, before any run follows the model: NaN, infinity or 1e308 never reach the map algebra or the geometry library.
"""
from __future__ import annotations

import math
import re

from ..analysis import MAX_LAYERS
from ..errors import LodestarError
from ..json_file import shown
from ..localization import LocalizationParams

NUMBER_RANGES = (
    (r"evidence\[\]\.near_m", 0.0, 100_000.0, False, "a reach in metres above 0 and at most 100 km (a mineral "
                                                     "system's reach)"),
    (r"evidence\[\]\.shell_scale", 0.0, 100.0, False, "a shell's reach in radii of its core, above 0 and at most 100"),
    (r"evidence\[\]\.min_layers", 1, MAX_LAYERS, True, f"a whole number of layers from 1 to {MAX_LAYERS}"),
    (r"favourability\.weights\.[^.]+", 0.0, 10.0, True, "a role's weight from 0 to 10"),
    (r"favourability\.fault_distance_m\.midpoint", 0.0, 100_000.0, False, "a distance in metres above 0 and at most "
                                                                          "100 km"),
    (r"favourability\.fault_distance_m\.spread", 0.0, 20.0, False, "a spread above 0 and at most 20"),
    (r"footprints?(\.[^.]+)?\.km2", 0.0, 100_000.0, False, "an area in km2 above 0 and at most 100,000 (the camps of "
                                                           "the largest belts are about 1,300)"),
)
"""(key path pattern, lowest, highest, whether the lowest itself is allowed, what the number must be)."""
_RANGES = [(re.compile(pattern), low, high, closed, what) for pattern, low, high, closed, what in NUMBER_RANGES]


def check_numbers(model: dict, where: str) -> None:
    """Refuse `model` (a dict checked by the knowledge base's schema) when a number is not finite or out of its range;
    `where` names the file or form in the message."""
    stack = [("", model)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            stack.extend((f"{path}.{key}" if path else str(key), inner) for key, inner in value.items())
            continue
        if isinstance(value, list):
            stack.extend((f"{path}[{i}]", inner) for i, inner in enumerate(value))
            continue
        known = next((r for r in _RANGES if r[0].fullmatch(re.sub(r"\[\d+\]", "[]", path))), None)
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if known is not None:
            _, low, high, closed, what = known
            whole = isinstance(low, int)
            if not number or not math.isfinite(value) or (whole and not isinstance(value, int)) or not (
                    (low <= value if closed else low < value) and value <= high):
                raise LodestarError(f"{where}: {path} must be {what}, not {shown(value)}.")
        elif number and not math.isfinite(value):
            raise LodestarError(f"{where}: {path} must be a finite number, not {shown(value)}.")
    try:
        LocalizationParams.from_dict(model.get("localization") if isinstance(model.get("localization"), dict) else {})
    except (LodestarError, TypeError, ValueError) as exc:
        raise LodestarError(f"{where}: localization: {exc}") from None
