"""Before the run: which of the ticked layers the surface will leave out, and why, from the layers' headers and legends.

The deposit model is the one the run would follow (`ranked_models`: picked, else the best for the question and
layers), and the reasons are the planner's own (`knowledge_specs`: a unit map with no favourable unit recognised, a
role the model does not weigh, geochemistry of an element that is not a pathfinder, ...), so the warning says before
the run what the run would say after it. Only the files' headers and the legends are read: no pixels. Colour
renderings are not listed: the chain reads them, and the zones it marks on them enter the surface.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import LodestarError
from ..favourability.knowledge import knowledge_specs
from ..raster_io import LayerSpec, RasterReader
from ..reason.deposit_models import legend_units, ranked_models
from ..tools.categorical import read_legend


@dataclass
class _Header:
    """What the planner reads of a layer (workspace.LayerInfo's fields), from its header and legend only."""

    name: str
    role: str
    kind: str
    favourable: str = "high"
    stats: dict = field(default_factory=dict)
    units: dict = field(default_factory=dict)


def layer_header(spec: LayerSpec) -> _Header:
    """The layer's kind (index, rgb, categorical, vector) and its legend's units, as the run would see them."""
    legend = read_legend(spec.legend) if spec.legend is not None else {}
    if spec.is_vector:
        return _Header(spec.name, spec.role, "vector", spec.favourable)
    reader = RasterReader(spec.path, spec.root)
    if reader.is_rgb:
        kind = "rgb"
    elif reader.is_integer and reader.count == 1 and (spec.role == "geological_map" or spec.legend is not None):
        kind = "categorical"
    else:
        kind = "index"
    return _Header(spec.name, spec.role, kind, spec.favourable, units=legend if kind == "categorical" else {})


def unused_layers(layers: list, question: str, favourable_units: dict | None = None, deposit_model: str = "",
                  user_models=()) -> list[dict]:
    """[{"layer", "reason", "units": the unit names of its legend (for naming favourable ones), "model": the deposit
    model's name}] of the layers the surface will leave out; a layer whose file cannot be read is left to the run's
    own check."""
    if not layers:
        return []
    model = ranked_models(question, [s.role for s in layers], [s.name for s in layers], deposit_model,
                          user_models, units=legend_units(layers))[0]
    headers = []
    for spec in layers:
        try:
            headers.append(layer_header(spec))
        except (LodestarError, OSError):
            continue
    _, left_out = knowledge_specs(headers, model, favourable_units or {})
    by_name = {h.name: h for h in headers}
    return [dict(row, units=list(dict.fromkeys(by_name[row["layer"]].units.values())), model=model["name"])
            for row in left_out if by_name[row["layer"]].kind != "rgb"]
