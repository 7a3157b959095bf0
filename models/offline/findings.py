"""What the offline verifier weighs and finds: the chain's zones (`Zone`), candidate cores (`Core`) and, around
each, a `Finding` for every evidence item of the deposit model."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .joint_places import JointPlace


@dataclass(frozen=True)
class Zone:
    """One zone a step marked (plugin/zones.py schema), or the outline of a place weighed as a core."""

    zone_id: str  # "<layer>:<n>", or the words naming a scanned place or a target
    layer: str  # the layer it was marked on ("" for a target)
    role: str  # that layer's role
    kind: str  # what was marked: anomaly, colour_anomaly, fault, unit, contact, ..., place, target
    geometry: Any  # its outline in the analysis CRS, a shapely geometry (None in a tool outcome's zones)
    area_m2: float = 0.0  # area in square map units
    position: str = ""  # 3 x 3 grid word within the analysis extent
    score_mean: float = 0.0  # mean evidence value inside it (layer units; higher = more favourable)
    score_max: float = 0.0  # its largest evidence value
    description: str = ""  # one line for people

    @classmethod
    def of(cls, record: dict) -> Zone:
        """A zone from a zone record, a row of a zones frame or a tool outcome's zone (which has no geometry: None);
        other columns are left out."""
        return cls(str(record["zone_id"]), str(record["layer"]), str(record["role"]), str(record["kind"]),
                   record.get("geometry"), float(record["area_m2"]), str(record["position"]),
                   float(record["score_mean"]), float(record["score_max"]), str(record["description"]))


@dataclass(frozen=True)
class Core:
    """A candidate core: a clear zone of the item it stands for (`seed`), or a place found by a scan of the scene
    (`joint`: where layers of the seed and its partner item, or of three families, stand out together)."""

    zone: Zone  # its zone (a scanned place's is a disc of the place's radius, a target's its outline)
    seed: str  # the evidence item it stands for
    partner: str = ""  # a scanned place: the seed's partner item
    bound: float | None = None  # a scanned place: the chance count it had to be under
    joint: JointPlace | None = None  # a scanned place: what the scan found

    @property
    def zone_id(self) -> str:
        """The core's label: its zone's id, or the words naming a scanned place."""
        return self.zone.zone_id

    @property
    def geometry(self):
        """Its outline in the analysis CRS."""
        return self.zone.geometry

    @property
    def role(self) -> str:
        """The role of the layer it was marked on (a scanned place: its first layer's)."""
        return self.zone.role

    @property
    def layer(self) -> str:
        """The layer it was marked on (a scanned place: its first layer)."""
        return self.zone.layer

    @property
    def position(self) -> str:
        """Where it lies in the analysis extent, as a 3 x 3 grid word ('center', 'top-left', ...)."""
        return self.zone.position

STATUSES = ("supported", "marginal", "missing", "unseen", "untestable")
"""supported: evidence within the item's reach (or measured at the core); marginal: within `marginal_factor` reaches,
awaiting a zoomed look; missing: none; unseen: none, and no layer of the item's roles holds data at the place
(`Scene.unseen`: it can be neither supported nor missing there); untestable: no layer of the item's roles can
speak."""


@dataclass(frozen=True)
class Finding:
    """One evidence item around one core."""

    level: str  # critical or secondary, as the deposit model says
    status: str  # one of STATUSES
    gap: float | None = None  # map units from the core to the nearest evidence (0 at the core; None without any)
    zones: tuple = ()  # what the evidence is: zone ids, a layer measured at the core, or a feature layer
    measured: str | None = None  # the measurement in words, when the item was measured rather than seen as a zone
    # (unseen: which layers hold no data at the place)
    reach: float | None = None  # the item's reach in map units, as it was judged

    def __post_init__(self):
        """A status of STATUSES only; the evidence as a tuple."""
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}")
        object.__setattr__(self, "zones", tuple(self.zones))


def answers_yes(assessment: dict) -> bool:
    """Whether an assessment (item id -> Finding) gives a Yes: every testable critical item supported (one unseen
    at the place is not), a secondary one present where one can be seen (STA-CoT, Appendix C.4)."""
    critical = [a for a in assessment.values() if a.level == "critical" and a.status != "untestable"]
    secondary = [a for a in assessment.values() if a.level == "secondary" and a.status not in ("untestable", "unseen")]
    return (bool(critical) and all(a.status == "supported" for a in critical)
            and (not secondary or any(a.status == "supported" for a in secondary)))
