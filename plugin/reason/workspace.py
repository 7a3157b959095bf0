"""The memory cache M_cache: the shared, growing context of one STA-CoT run.

Initialised with the question and the raster set (Algorithm 1, line 2) and enriched with every
reasoning node (lines 6-8) and re-executed node (Algorithm 2, lines 11-12). Reasoners read it; only
the loop writes it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import geopandas as gpd
import numpy as np

from ..decisions import CORE
from ..raster_io import RasterSet, crs_label
from ..tools.categorical import read_legend
from ..zones import zones_frame
from .background import background_model
from .contract import TOOLSET, ChainNode

# decision numbers: their reasons and provenance are in plugin/decisions.py
NOMINAL_PIXEL_M = CORE.nominal_pixel_m
FLAT_SPREAD = CORE.flat_spread


@dataclass
class LayerInfo:
    """What a reasoner may know about one input layer without reading its pixels."""

    name: str
    role: str
    kind: str  # "index", "rgb", "categorical" or "vector"
    favourable: str = "high"
    crs: str = ""
    size: list = field(default_factory=list)  # [width, height] of the source, [] for vectors
    stats: dict = field(default_factory=dict)  # index layers: min, p2, p10, p50, p90, p98, max, mean, std,
    # sigma (1.4826 MAD), sigma_bg (the same from the unfavourable half only: the background's spread) and the
    # background model (background.py: model, distinct, bg_centre, bg_sigma)
    units: dict = field(default_factory=dict)  # categorical layers: code -> legend name
    silent: str = ""  # why the layer cannot speak ("holds a single value (0.5) over the data"), '' when it can

    def to_dict(self) -> dict:
        out = dict(self.__dict__)
        if not out["silent"]:  # said only where it matters (records and prompts of other layers unchanged)
            del out["silent"]
        return out


def silence(data: np.ma.MaskedArray, units: dict | None = None) -> str:
    """Why a raster on the analysis grid cannot speak, '' when it can: evidence that cannot vary cannot test an
    item. A layer holding no data, a single unit or colour wherever it holds data, or values that are one value
    to within FLAT_SPREAD of it, shows no anomaly, no unit apart from another and no contact; it is neither
    evidence for an item nor against it."""
    bands = np.ma.getdata(data).reshape(data.shape[0], -1)
    held = ~np.ma.getmaskarray(data).reshape(data.shape[0], -1).any(axis=0)
    if not held.any():
        return "holds no data over the analysed area"
    values = bands[:, held]
    low, high = values.min(axis=1).astype("float64"), values.max(axis=1).astype("float64")
    if units is not None or data.shape[0] > 1:  # codes and colours are equal or not
        if np.any(low != high):
            return ""
        if units is not None:
            code = int(values[0, 0])
            return f"holds a single unit ({units.get(code, f'unit {code}')}) over the data"
        return "shows a single colour over the data"
    spread, size = (high[0] - low[0]) / 2, max(abs(low[0]), abs(high[0]))
    if spread == 0:
        return f"holds a single value ({float(values[0, 0]):.6g}) over the data"
    if spread >= FLAT_SPREAD * size:
        return ""
    return (f"holds a single value to within {FLAT_SPREAD:g} of it ({(low[0] + high[0]) / 2:.6g} +/- {spread:.2g}) "
            "over the data")


def describe_layers(raster_set: RasterSet) -> list[LayerInfo]:
    """LayerInfo for every layer of a raster set, in input order (statistics on the analysis grid)."""
    infos = []
    for spec in raster_set.layers:
        raster_set.progress.check()
        if spec.is_vector:
            infos.append(LayerInfo(spec.name, spec.role, "vector", spec.favourable, crs_label(raster_set.crs)))
            continue
        reader = raster_set.readers[spec.name]
        info = LayerInfo(spec.name, spec.role, "index", spec.favourable, crs_label(reader.grid.crs),
                         [reader.grid.width, reader.grid.height])
        categorical = reader.is_integer and reader.count == 1 and (
            spec.role == "geological_map" or spec.legend is not None)
        if reader.is_rgb:
            info.kind = "rgb"
            info.silent = silence(raster_set.read(spec.name)[:3])
        elif categorical:
            info.kind = "categorical"
            data = raster_set.read(spec.name)[0]
            codes = np.unique(data.compressed().astype(int))
            legend = read_legend(spec.legend) if spec.legend is not None else {}
            info.units = {int(c): legend.get(int(c), f"unit {int(c)}") for c in codes}
            info.silent = silence(data[np.newaxis], info.units)
        else:
            values = raster_set.read(spec.name)[0].compressed()
            info.silent = silence(raster_set.read(spec.name)[:1])
            if values.size:
                p = np.percentile(values, [2, 10, 50, 90, 98])
                mad = float(np.median(np.abs(values - p[2])))
                side = values[values <= p[2]] if spec.favourable == "high" else values[values >= p[2]]
                background = float(np.median(np.abs(side - p[2]))) if side.size else mad
                info.stats = {"min": float(values.min()), "p2": float(p[0]), "p10": float(p[1]), "p50": float(p[2]),
                              "p90": float(p[3]), "p98": float(p[4]), "max": float(values.max()),
                              "mean": float(values.mean()), "std": float(values.std()),
                              "sigma": 1.4826 * mad, "sigma_bg": 1.4826 * background}
                info.stats = {k: round(v, 6) for k, v in info.stats.items()}
                info.stats.update(background_model(raster_set.read(spec.name)[0], spec.favourable))
        infos.append(info)
    return infos


@dataclass
class Workspace:
    """The run's memory cache; see contract.py for how reasoners use it."""

    question: str
    choices: dict
    raster_set: RasterSet
    evidence_dir: Path
    case_id: str = ""
    knowledge: list = field(default_factory=list)  # retrieved deposit models (dicts), best first
    favourable_units: dict = field(default_factory=dict)  # layer name -> unit codes / names the user calls favourable
    toolset: dict = field(default_factory=lambda: dict(TOOLSET))
    layers: list = field(default_factory=list)  # LayerInfo per input layer
    chain: list = field(default_factory=list)  # ChainNode in plan order
    step_zones: dict = field(default_factory=dict)  # step index -> GeoDataFrame of its zones
    last_round: bool = False  # the verdict asked for now is the last one: no step will be looked at again

    def __post_init__(self):
        self.evidence_dir = Path(self.evidence_dir)
        if not self.layers:
            self.layers = describe_layers(self.raster_set)
        self._valid_area = None

    @property
    def valid_area(self) -> float:
        """Area with data (square map units); what controller area fractions refer to."""
        if self._valid_area is None:
            self._valid_area = self.raster_set.valid_area()
        return self._valid_area

    def view_grid(self, bounds=None):
        """The analysis grid, or its window over map bounds (xmin, ymin, xmax, ymax): the frame of a view."""
        grid = self.raster_set.grid
        if not bounds:
            return grid
        return grid.window_grid(grid.bounds_window(tuple(float(v) for v in bounds)))

    def render_view(self, layer: str, bounds=None, max_size: int = 768):
        """A PNG of a layer (or a map window of it) with a normalised 0-1 grid, for vision back-ends.

        Returns plugin.render.RenderedImage; boxes a model draws on it are normalised to `bounds`
        (the whole analysis extent when None), which a ToolCall passes back as `view_bounds`.
        """
        from ..render import render_png

        kind = self.layer(layer).kind
        plain = kind in ("rgb", "categorical")
        return render_png(self.raster_set, layer, bounds=bounds, max_size=max_size, grid="fraction",
                          colormap=None if plain else "magma", stretch=None if plain else (2, 98))

    # -- reading -------------------------------------------------------------------------------
    def layer(self, name: str) -> LayerInfo:
        for info in self.layers:
            if info.name == name:
                return info
        raise KeyError(name)

    def layer_names(self) -> list[str]:
        return [info.name for info in self.layers]

    def layers_with_role(self, *roles: str) -> list[LayerInfo]:
        return [info for info in self.layers if info.role in roles]

    @property
    def deposit_model(self) -> dict:
        """The best-matching deposit model ({} when the knowledge base gave none)."""
        return self.knowledge[0] if self.knowledge else {}

    def zones_of(self, step_index: int) -> gpd.GeoDataFrame:
        """The zones the current observation of a step marked (empty frame if none)."""
        frame = self.step_zones.get(int(step_index))
        return frame if frame is not None else zones_frame([], self.raster_set.crs)

    @property
    def zones(self) -> gpd.GeoDataFrame:
        """All zones of the current chain, in step order."""
        from ..zones import concat_zones

        frames = [self.step_zones[i] for i in sorted(self.step_zones)]
        return concat_zones(frames, self.raster_set.crs)

    def node(self, step_index: int) -> ChainNode | None:
        for node in self.chain:
            if node.step.index == int(step_index):
                return node
        return None

    # -- writing (the loop only) ----------------------------------------------------------------
    def put(self, node: ChainNode, zones: gpd.GeoDataFrame) -> None:
        """Append a node, or replace the node of the same step (refinement, Eq. 7)."""
        index = node.step.index
        for i, existing in enumerate(self.chain):
            if existing.step.index == index:
                self.chain[i] = node
                break
        else:
            self.chain.append(node)
            self.chain.sort(key=lambda n: n.step.index)
        self.step_zones[index] = zones


def silent_note(layers, roles) -> str:
    """A sentence naming the layers of `roles` that cannot speak (`silence`), with why; '' when none."""
    quiet = [f"{info.name} {info.silent}" for info in layers if info.role in roles and getattr(info, "silent", None)]
    return (f" The layers given with that role cannot test it: {'; '.join(quiet)} (a layer that does not vary shows no "
            "anomaly, neither for the item nor against it)." if quiet else "")
