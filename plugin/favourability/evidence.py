"""One evidence layer as a 0-1 membership map on the analysis grid, as an `EvidenceSpec` says.

A spec names the layer, its transformation (how values become comparable) and its membership
(how the transformed values become favourability), with the parameters, the weight and why. Raster
layers are read through the raster set; fault lines become distances in metres; unit maps (raster
codes with a legend, or unit polygons) become favourable-unit scores.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass, field
from typing import Literal, get_args

import numpy as np

from ..errors import LodestarError
from ..json_file import shown
from ..labels import membership_label, transform_label
from ..raster_io import RasterSet
from . import transforms as tf
from .evidence_layers import unit_codes, vector_features

Transform = Literal["none", "percentile_rank", "log_percentile", "distance_m", "units"]
"""How a layer's values are made comparable: as they are, a percentile rank, a log stretch, the distance to its
features (m), or favourable-unit scores."""
Membership = Literal["identity", "invert", "large", "small", "linear", "gaussian"]
"""How transformed values become favourability: as they are, inverted, or a fuzzy membership (ArcGIS's)."""
TRANSFORMS: tuple[Transform, ...] = get_args(Transform)
MEMBERSHIPS: tuple[Membership, ...] = get_args(Membership)
PARAMS = {"midpoint": "a number in the layer's units (after its transformation)",
          "spread": "a positive number (the membership's steepness, unitless)",
          "low": "a number in the layer's units (membership 0)", "high": "a number in the layer's units (membership 1)",
          "units": "a list of favourable unit names or codes", "outside": "a score from 0 to 1 for the other units"}
"""A spec's params, and what each must be."""


@dataclass
class EvidenceSpec:
    """How one layer enters the surface.

    transform: one of TRANSFORMS; membership: one of MEMBERSHIPS; params: the membership's
    (midpoint, spread / low, high) and the units transform's (units: favourable words, names or
    codes; outside: the score of other units, default 0); weight >= 0; why: one sentence for people.
    """

    layer: str
    role: str
    kind: str
    transform: Transform
    membership: Membership = "identity"
    params: dict = field(default_factory=dict)
    weight: float = 1.0
    why: str = ""

    def __post_init__(self):
        """Every field checked against the schema: a problem is one line naming the layer and the field."""
        if not isinstance(self.layer, str) or not self.layer.strip():
            raise LodestarError(f"An evidence spec's 'layer' must be the name of one of the run's layers, not "
                                f"{shown(self.layer)}.")
        for key in ("role", "kind", "why"):
            if not isinstance(getattr(self, key), str):
                raise LodestarError(f"{self.layer}: {key!r} must be text, not {shown(getattr(self, key))}.")
        if self.transform not in TRANSFORMS:
            raise LodestarError(f"{self.layer}: transform must be one of {', '.join(TRANSFORMS)}, "
                                f"not {shown(self.transform)}.")
        if self.membership not in MEMBERSHIPS:
            raise LodestarError(f"{self.layer}: membership must be one of {', '.join(MEMBERSHIPS)}, "
                                f"not {shown(self.membership)}.")
        if not _number(self.weight) or not self.weight >= 0:
            raise LodestarError(f"{self.layer}: the weight must be a finite number, zero or more, not "
                                f"{shown(self.weight)}.")
        self.weight = float(self.weight)
        if not isinstance(self.params, dict):
            raise LodestarError(f"{self.layer}: params must be a table (midpoint, spread, low, high, units, "
                                f"outside), not {shown(self.params)}.")
        for key, value in self.params.items():
            if key not in PARAMS:
                raise LodestarError(f"{self.layer}: params has no field {shown(key)}; its fields are "
                                    f"{', '.join(PARAMS)}.")
            if key != "units" and not _number(value):
                raise LodestarError(f"{self.layer}: params[{key!r}] must be {PARAMS[key]}, not {shown(value)}.")
        units = self.params.get("units")
        if units is not None and (not isinstance(units, list) or not all(
                isinstance(u, (str, int)) and not isinstance(u, bool) and str(u).strip() for u in units)):
            raise LodestarError(f"{self.layer}: params['units'] must be {PARAMS['units']}, not {shown(units)}.")
        if self.transform == "units" and not units:
            raise LodestarError(f"{self.layer}: a units transform needs params['units'], the favourable units.")
        if not 0.0 <= self.params.get("outside", 0.0) <= 1.0:
            raise LodestarError(f"{self.layer}: params['outside'] must be {PARAMS['outside']}, not "
                                f"{self.params['outside']:g}.")
        if self.transform != "units":
            self._check_membership()

    def _check_membership(self) -> None:
        """The parameters the membership needs, present and in its domain (ArcGIS's fuzzy memberships)."""
        p, name = self.params, f"{self.layer}: the {self.membership} membership"
        needed = {"large": ("midpoint",), "small": ("midpoint",), "gaussian": ("midpoint",),
                  "linear": ("low", "high")}.get(self.membership, ())
        missing = [key for key in needed if key not in p]
        if missing:
            raise LodestarError(f"{name} needs params[{missing[0]!r}] ({PARAMS[missing[0]]}).")
        if self.membership in ("large", "small") and not p["midpoint"] > 0:
            raise LodestarError(f"{name} needs a positive midpoint (x / midpoint is raised to the spread), not "
                                f"{p['midpoint']:g}.")
        if self.membership in ("large", "small", "gaussian") and not p.get("spread", 1.0) > 0:
            raise LodestarError(f"{name} needs a positive spread, not {p['spread']:g}.")
        if self.membership == "linear" and p["low"] == p["high"]:
            raise LodestarError(f"{name} needs two different bounds, not low = high = {p['low']:g}.")

    @property
    def transformation_text(self) -> str:
        """The transformation in words, e.g. 'favourable units: LPZE, UPZC'."""
        text = transform_label(self.transform)
        if self.transform == "units":
            text += ": " + ", ".join(map(str, self.params["units"]))
        return text

    @property
    def membership_text(self) -> str:
        """The membership in words with its parameters, e.g. 'fuzzy small (midpoint 1500, spread 3)'."""
        keys = ("midpoint", "spread", "low", "high") if self.transform != "units" else ("outside",)
        shown = [f"{k} {self.params[k]:g}" for k in keys if k in self.params]
        return membership_label(self.membership) + (f" ({', '.join(shown)})" if shown else "")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> EvidenceSpec:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)


def _number(value) -> bool:
    """A finite number (JSON's true and false are not numbers)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def membership_map(raster_set: RasterSet, spec: EvidenceSpec, extra: dict | None = None) -> np.ma.MaskedArray:
    """The spec's membership on the analysis grid: float32 0-1, masked outside the analysed area.

    `extra` ({layer: data}) gives a layer's data in place of its file: a 2-D array on the analysis
    grid (values, or unit codes named by the layer's legend when it has one) or, for a distance,
    geometries in the analysis CRS. Cells where the layer has no data are masked as well.
    """
    return membership_of(evidence_values(raster_set, spec, extra), spec, raster_set.valid_mask())


def evidence_values(raster_set: RasterSet, spec: EvidenceSpec, extra: dict | None = None) -> np.ma.MaskedArray:
    """The spec's transformed values on the analysis grid, before its membership: the layer's own values
    ('none'), ranks, stretched logs, distances in metres, or the favourable-unit scores; see membership_map."""
    given = (extra or {}).get(spec.layer)
    if spec.transform == "distance_m":
        geometries = given if given is not None else vector_features(raster_set, spec.layer).geometry
        values: np.ma.MaskedArray = np.ma.masked_array(tf.distance_to_features_m(geometries, raster_set.grid))
    elif spec.transform == "units":
        codes, legend = unit_codes(raster_set, spec.layer, given)
        polygons = given is None and raster_set.spec(spec.layer).is_vector
        values = tf.unit_membership(codes, legend, spec.params["units"], spec.params.get("outside", 0.0),
                                    blank=0 if polygons else None)
    else:
        band = np.ma.asarray(given) if given is not None else raster_set.read(spec.layer)[0]
        values = _TRANSFORMS[spec.transform](band)
    shape = (raster_set.grid.height, raster_set.grid.width)
    if values.shape != shape:
        raise LodestarError(f"{spec.layer}: data of shape {values.shape} is not on the analysis grid {shape}.")
    return values


def membership_of(values: np.ma.MaskedArray, spec: EvidenceSpec, valid: np.ndarray) -> np.ma.MaskedArray:
    """The spec's membership of its transformed `values` (evidence_values): float32 0-1, masked where the values
    have no data or `valid` (the analysed area) is False."""
    out = _membership(values, spec)
    mask = np.ma.getmaskarray(out) | ~valid
    return np.ma.masked_array(np.clip(out.filled(0.0), 0.0, 1.0).astype("float32"), mask=mask)


_TRANSFORMS = {"none": lambda band: np.ma.masked_invalid(np.ma.array(band, dtype="float64")),
               "percentile_rank": tf.percentile_rank, "log_percentile": tf.log_percentile}


def _membership(values, spec: EvidenceSpec) -> np.ma.MaskedArray:
    p = spec.params
    try:
        if spec.membership == "identity":
            return np.ma.asarray(values, dtype="float32")
        if spec.membership == "invert":
            return tf.invert(values)
        if spec.membership == "large":
            return tf.fuzzy_large(values, p["midpoint"], p.get("spread", 5.0))
        if spec.membership == "small":
            return tf.fuzzy_small(values, p["midpoint"], p.get("spread", 5.0))
        if spec.membership == "linear":
            return tf.fuzzy_linear(values, p["low"], p["high"])
        return tf.fuzzy_gaussian(values, p["midpoint"], p.get("spread", 0.1))
    except KeyError as exc:
        raise LodestarError(f"{spec.layer}: the {spec.membership} membership needs params[{exc.args[0]!r}].") from exc
