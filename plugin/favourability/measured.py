"""Evidence as measured, for the models fitted on known deposits: each layer in its own units on the analysis grid.

A categorical map (raster unit codes, or unit polygons) stays a map of unit codes named by its legend; a line or
point layer becomes the distance to its features in metres; any other raster keeps its values; derived.py adds
fault density and the distance to unit contacts. Colour renderings cannot be measured and are left out, with
the reason. No membership, rank or threshold is applied
here: the models decide how each measured value bears on the deposits, inside the training folds.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import LodestarError
from ..raster_io import RasterSet
from ..tools.categorical import categorical_labels, read_legend
from . import transforms as tf
from .derived import derived_evidence
from .evidence_layers import unit_codes, vector_features

CATEGORICAL = "categorical"
ORDERED = "ordered"


@dataclass(frozen=True)
class MeasuredLayer:
    """One layer's measured evidence: float64 values masked where it has no data (unit codes when
    categorical), the units they are in, the side that is favourable when known ("high", "low" or "" for
    categorical maps), the legend of a categorical map (code -> name) and, for a derived layer (derived.py), the
    layer it is derived from."""

    name: str
    kind: str
    values: np.ma.MaskedArray
    units: str
    favourable: str
    legend: dict
    source: str = ""

    @property
    def categorical(self) -> bool:
        return self.kind == CATEGORICAL

    def class_name(self, code) -> str:
        """A unit's name from the legend, else 'unit <code>'."""
        return str(self.legend.get(int(code), f"unit {int(code)}"))


def measured_evidence(raster_set: RasterSet, infos, derived: bool = True) -> tuple[list[MeasuredLayer], list[dict]]:
    """(measured layers, layers left out with the reason) for the layers described by `infos` (LayerInfo:
    name, role, kind, favourable), in their order, masked outside the analysed area; then, with `derived`, the
    layers derived from them (derived.py)."""
    valid = raster_set.valid_mask()
    layers, left_out = [], []
    for info in infos:
        if info.kind == "rgb":
            left_out.append({"layer": info.name, "reason": "A colour rendering has no measured values to fit."})
            continue
        try:
            layer = _measure(raster_set, info)
        except LodestarError as exc:
            left_out.append({"layer": info.name, "reason": str(exc)})
            continue
        values: np.ma.MaskedArray = np.ma.masked_array(layer.values.filled(np.nan),
                                                       mask=np.ma.getmaskarray(layer.values) | ~valid)
        values = np.ma.masked_invalid(values)
        if values.count() == 0:
            left_out.append({"layer": info.name, "reason": "No data inside the analysed area."})
            continue
        if np.ma.min(values) == np.ma.max(values):
            left_out.append({"layer": info.name, "reason": "One value over the whole analysed area: it cannot "
                                                           "tell one place from another."})
            continue
        layers.append(MeasuredLayer(layer.name, layer.kind, values, layer.units, layer.favourable, layer.legend))
    if derived:
        layers += derived_evidence(raster_set, layers, _derived_layer)
    return layers, left_out


def _derived_layer(name: str, values: np.ma.MaskedArray, units: str, favourable: str, source: str) -> MeasuredLayer:
    return MeasuredLayer(name, ORDERED, values, units, favourable, {}, source)


def _measure(raster_set: RasterSet, info) -> MeasuredLayer:
    spec = raster_set.spec(info.name)
    if spec.is_vector:
        frame = vector_features(raster_set, info.name)
        frame = frame[frame.geometry.notna() & ~frame.geometry.is_empty]
        if frame.empty:
            raise LodestarError("The layer has no features.")
        polygons = frame.geometry.geom_type.str.contains("Polygon").all()
        if polygons and info.role == "geological_map":
            units, legend = unit_codes(raster_set, info.name, None)
            return MeasuredLayer(info.name, CATEGORICAL, np.ma.asarray(units, dtype=float), "unit", "", legend)
        distance = tf.distance_to_features_m(frame.geometry, raster_set.grid)
        return MeasuredLayer(info.name, ORDERED, np.ma.masked_array(distance), "m", "low", {})
    data = raster_set.read(info.name)
    if info.kind == "categorical":
        codes, valid = categorical_labels(data)
        legend = read_legend(spec.legend) if spec.legend is not None else {}
        return MeasuredLayer(info.name, CATEGORICAL, np.ma.masked_array(np.asarray(codes, dtype=float), mask=~valid),
                             "unit", "", legend)
    return MeasuredLayer(info.name, ORDERED, np.ma.masked_invalid(np.ma.asarray(data[0], dtype=float)), "value",
                         info.favourable or "high", {})
