"""What the offline verifier finds of each evidence item of the deposit model around a candidate core."""
from __future__ import annotations

from dataclasses import dataclass

STATUSES = ("supported", "marginal", "missing", "untestable")
"""supported: evidence within the item's reach (or measured at the core); marginal: within `marginal_factor` reaches,
awaiting a zoomed look; missing: none; untestable: no layer of the item's roles can speak."""


@dataclass(frozen=True)
class Finding:
    """One evidence item around one core."""

    level: str  # critical or secondary, as the deposit model says
    status: str  # one of STATUSES
    gap: float | None = None  # map units from the core to the nearest evidence (0 at the core; None without any)
    zones: tuple = ()  # what the evidence is: zone ids, a layer measured at the core, or a feature layer
    measured: str | None = None  # the measurement in words, when the item was measured rather than seen as a zone
    reach: float | None = None  # the item's reach in map units, as it was judged

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}")
        object.__setattr__(self, "zones", tuple(self.zones))


def answers_yes(assessment: dict) -> bool:
    """Whether an assessment (item id -> Finding) gives a Yes: every testable critical item supported, a secondary
    one present (seed 000, C.4)."""
    critical = [a for a in assessment.values() if a.level == "critical" and a.status != "untestable"]
    secondary = [a for a in assessment.values() if a.level == "secondary" and a.status != "untestable"]
    return (bool(critical) and all(a.status == "supported" for a in critical)
            and (not secondary or any(a.status == "supported" for a in secondary)))
