"""The names of the fitted models and of a request's calibration, as `Literal` types every stage shares (the request
asks for one, calibration fits it, the map stage and the record name it)."""
from __future__ import annotations

from typing import Literal

ModelMethod = Literal["wofe", "logistic", "forest", "boosting"]
"""The models a calibration fits (each alone, or all four for its ensemble)."""
FittedMethod = Literal[ModelMethod, "ensemble"]
"""A fitted model's method: one of the four, or their ensemble."""
CalibrationMethod = Literal[ModelMethod, "best"]
"""What a calibration fits: one model, or "best" (all four and their ensemble, the best out of fold kept)."""
CalibrationChoice = Literal["", CalibrationMethod]
"""A request's calibration: "" (knowledge-driven, none) or a calibration method."""
