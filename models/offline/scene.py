"""One run's view of the scene for the offline reasoner: the workspace, the settings, and every measurement of a
layer the reasoner makes (zones, contrasts, background spreads, distances to faults, raised map units), each
worked out once per run and kept. What the verifier learns about the scene on the way (zones left out as
lithology, layers not measured at a core because they raise its unit) is kept here too, so every later look
knows it; a new run, or a new plan, gets a new Scene."""
from __future__ import annotations

import math

import numpy as np
from affine import Affine
from rasterio.features import geometry_mask
from scipy import ndimage

from ...plugin.pathfinders import model_layers
from ...plugin.progress import Progress
from ...plugin.reason.background import to_measure
from ...plugin.tools.categorical import match_units
from ...plugin.tools.color_regions import colour_levels
from . import lithology
from .coincidence import contrast_map
from .corridors import corridor_distance, gap_to_corridor
from .findings import Zone
from .model_items import VECTOR_ROLES, ZONE_KINDS_STRUCTURE, host_units, legend_informative, per_metre
from .settings import OfflineSettings


class Scene:
    """The workspace `ws` of one run seen with `settings`; the run's `progress` is checked in every loop."""

    def __init__(self, ws, settings: OfflineSettings, progress: Progress):
        self.ws, self.settings, self.progress = ws, settings, progress
        self.coloured: dict = {}  # rendering name -> where it is coloured (off its bar, with data), with _spreads
        self._features: dict = {}  # vector layer name -> (its features in the analysis CRS, their bounds)
        self._corridors: dict = {}  # structure raster name -> distance to its favourable share
        self._hosts: dict = {}  # categorical map name -> distance to its host units' cells
        # (map codes, layer -> codes of the units its scene-wide anomalies fill, intrusive codes)
        self._filled: tuple[np.ma.MaskedArray, dict[str, list[int]], set[int]] | None = None
        self._lifted: dict = {}  # layer name -> codes of the map units it stands high over as a whole
        self._spreads: dict = {}  # layer name -> the layer in background spreads on the analysis grid
        self._contrasts: dict = {}  # (layer, radius in pixels, scales) -> its contrast map (coincidence.py)
        self.joint: dict = {}  # the one scan for a joint place (cores.py): its core, or the place left out as lithology

    @property
    def refinement_level(self) -> float:
        """Spreads above background of an anomaly on a zoomed look (`anomaly_sigma` x `refine_factor`)."""
        return self.settings.anomaly_sigma * self.settings.refine_factor

    @property
    def pixel(self) -> float:
        """The analysis grid's larger pixel side, in map units."""
        return max(abs(v) for v in self.ws.raster_set.grid.pixel_size)

    def min_area(self) -> float:
        """The smallest zone that counts, in square map units (at least `min_zone_px` pixels)."""
        grid = self.ws.raster_set.grid
        return max(self.settings.min_area_m2 * per_metre(self.ws) ** 2, self.settings.min_zone_px * grid.pixel_area)

    def contrast(self, zone: Zone) -> float:
        """Zone mean above the layer's background in background spreads (colour fraction for renderings)."""
        info = self.ws.layer(zone.layer)
        stats = info.stats or {}
        if info.kind == "rgb" or "bg_sigma" not in stats:
            return zone.score_mean
        # score_mean is on the evidence scale (the value, negated for favourable-low layers)
        sign = -1.0 if info.favourable == "low" else 1.0
        measure = to_measure(sign * zone.score_mean, stats)
        if measure != measure:  # not positive on a lognormal layer: no departure upwards
            return 0.0
        return sign * (measure - stats["bg_centre"]) / max(stats["bg_sigma"], 1e-12)

    def strength(self, zone: Zone) -> float:
        """1.0 or more for a clear zone of its kind (contrast relative to the clear-anomaly level)."""
        info = self.ws.layer(zone.layer)
        if zone.area_m2 < self.min_area() * self.settings.min_area_slack:
            return 0.0
        if zone.kind in ZONE_KINDS_STRUCTURE or info.role in ("structure", "geological_map"):
            return 1.0
        if info.kind == "rgb":
            return zone.score_mean / self.settings.colour_level
        if info.kind in ("vector", "categorical") or "bg_sigma" not in (info.stats or {}):
            return 1.0  # classed and vector evidence: present or not, no significance to measure
        return self.contrast(zone) / self.clear_level(info)

    def supports(self, zone: Zone, item: dict) -> bool:
        """Whether a zone is evidence of an item: a favourable unit of a host item, a fault, lineament or contact
        of a structure item, else a clear zone (`strength` at least 1) that is no unit or contact."""
        kind = item["kind"]
        if kind == "host_unit":
            return zone.kind == "unit" and zone.score_mean >= 1.0
        if kind == "structure":
            return zone.kind in ZONE_KINDS_STRUCTURE or zone.role == "structure"
        return self.strength(zone) >= 1.0 and zone.kind not in ("unit", "contact")

    def clear_level(self, info) -> float:
        """Spreads above background of a clear zone: the refinement level, or just under where a clipped
        rendering stops (it cannot show more)."""
        level = self.refinement_level
        stats = info.stats or {}
        if "ceiling" in stats:
            sign = -1.0 if info.favourable == "low" else 1.0
            reach = sign * (stats["ceiling"] - stats["bg_centre"]) / max(stats["bg_sigma"], 1e-12)
            level = min(level, reach - self.settings.ceiling_clear_margin)
        return max(level, 1e-6)

    def zones(self) -> list[Zone]:
        """Every zone the chain has marked so far, less empty outlines."""
        zones = self.ws.zones
        if not len(zones):
            return []
        rows = zones.to_dict("records")
        return [Zone.of(z) for z in rows if z["geometry"] is not None and not z["geometry"].is_empty]

    def reach(self, metres: float) -> float:
        """A ground distance in map units, never under `min_reach_px` pixels of the analysis grid."""
        return max(float(metres) * per_metre(self.ws), self.settings.min_reach_px * self.pixel)

    def near_m(self, item: dict) -> float:
        """An evidence item's reach in metres: its own `near_m`, else `default_near_m`."""
        return item.get("near_m", self.settings.default_near_m)

    def lithological(self, zone: Zone) -> bool:
        """Whether a zone lies in a map unit that its layer's anomalies fill, or in one over which the layer itself
        stands high at the median without standing clearly higher over the zone (lithology.py): the
        unit is raised as a whole, which is lithology, not a zoned system; an intrusive unit never is (the system's
        centre). Filled units are found from the first verdict's zones, the scene-wide looks, before any zoomed
        look."""
        maps = [info for info in self.ws.layers if info.kind == "categorical" and info.role == "geological_map"
                and not info.silent]
        if not maps:
            return False
        grid = self.ws.raster_set.grid
        if self._filled is None:
            codes = self.ws.raster_set.read(maps[0].name)[0]
            polygons: dict = {}
            for zone_seen in self.zones():
                if zone_seen.kind not in ("unit", "contact"):
                    polygons.setdefault(zone_seen.layer, []).append(zone_seen.geometry)
            intrusive = lithology.intrusive_units(maps[0].units)
            self._filled = (codes, {layer: lithology.filled_units(codes, shapes, grid, intrusive,
                                                                     self.settings)
                                   for layer, shapes in polygons.items()}, intrusive)
        codes, filled, intrusive = self._filled
        layer, geometry, info = zone.layer, zone.geometry, self.ws.layer(zone.layer)
        if lithology.follows_units(geometry, codes, filled.get(layer, []), grid, self.settings):
            return True
        if not self.measurable(info):
            return False
        spreads = self.in_spreads(info)
        if layer not in self._lifted:
            # a unit raised as a whole: its median cell departs from the scene's median cell; on a rendering by a
            # fifth of the colour bar, or, where the scene's median cell is backdrop, by being coloured at all
            level = (float(np.ma.median(spreads)) + self.settings.colour_level if info.kind == "rgb"
                     else self.settings.lifted_spreads)
            lifted = set(lithology.lifted_units(codes, spreads, grid, level, intrusive, self.settings))
            if info.kind == "rgb":
                coloured: np.ma.MaskedArray = np.ma.masked_array(self.coloured[layer].astype("float64"),
                                                                  np.ma.getmaskarray(spreads))
                if float(np.ma.median(coloured)) < self.settings.coloured_scene_share:
                    share = self.settings.coloured_unit_share
                    lifted |= set(lithology.lifted_units(codes, coloured, grid, share, intrusive, self.settings))
            self._lifted[layer] = sorted(lifted)
        lifted = self._lifted[layer]
        # a system on a raised unit stands clearly above the unit's own level
        return (lithology.follows_units(geometry, codes, lifted, grid, self.settings)
                and lithology.rise_above_units(geometry, codes, spreads, lifted, grid) < self.settings.rise_spreads)

    def contrast_map(self, info, radius_px: float, scales=None) -> np.ndarray:
        """A layer's contrast map at a radius over `scales` (else `contrast_scales`; coincidence.py), computed once
        per run; a set holding the usual scales reuses their map and adds only its other scales (the best over the
        union of scales is the larger of the two maps)."""
        usual = self.settings.contrast_scales
        scales = usual if scales is None else scales
        key = (info.name, radius_px, scales)
        self.progress.check()
        if key not in self._contrasts:
            extra = tuple(s for s in scales if s not in usual)
            if extra and set(usual) <= set(scales):
                self._contrasts[key] = np.fmax(self.contrast_map(info, radius_px),
                                               contrast_map(self.in_spreads(info), radius_px, extra, self.settings))
            else:
                self._contrasts[key] = contrast_map(self.in_spreads(info), radius_px, scales, self.settings)
        return self._contrasts[key]

    def evidence_layers(self) -> list:
        """The layers that may be evidence for the deposit model: all but geochemistry of elements that are not
        its pathfinders (plugin.pathfinders), vector layers other than fault lines or unit polygons, and
        layers that cannot speak (one value over the data, to within `workspace.FLAT_SPREAD`: `workspace.silence`):
        evidence that cannot vary cannot test an item, so an item only they could test is untestable, never
        missing."""
        return [info for info in model_layers(self.ws.layers, self.ws.deposit_model)
                if (info.kind != "vector" or info.role in VECTOR_ROLES) and not info.silent]

    def unseen(self, roles, geometry) -> str:
        """'' when some evidence layer of `roles` sees the place `geometry` (holds data over at least `seen_share`
        of the cells it covers; a vector layer sees everywhere), else which layers hold no data there, in words: at
        a place a layer does not see, an item can be neither supported nor found missing."""
        said = []
        for info in self.evidence_layers():
            if info.role not in roles:
                continue
            share = 1.0 if info.kind == "vector" else self._data_share(info.name, geometry)
            if share >= self.settings.seen_share:
                return ""
            said.append(f"{info.name} holds no data over {1 - share:.0%} of it (a hole or non-finite cells)")
        return "; ".join(said)

    def _data_share(self, name: str, geometry) -> float:
        """The share of the analysis-grid cells whose centres lie in `geometry` (else that it touches) where a
        raster layer holds data in every band; 0 for a geometry off the grid."""
        grid = self.ws.raster_set.grid
        xmin, ymin, xmax, ymax = geometry.bounds
        cols, rows = grid.map_to_pixel(np.array([xmin, xmax]), np.array([ymax, ymin]))
        r0, r1 = max(0, int(np.floor(rows.min()))), min(grid.height, int(np.ceil(rows.max())))
        c0, c1 = max(0, int(np.floor(cols.min()))), min(grid.width, int(np.ceil(cols.max())))
        if r0 >= r1 or c0 >= c1 or geometry.is_empty:
            return 0.0
        transform = grid.transform * Affine.translation(c0, r0)
        inside = ~geometry_mask([geometry], out_shape=(r1 - r0, c1 - c0), transform=transform)
        if not inside.any():
            inside = ~geometry_mask([geometry], out_shape=(r1 - r0, c1 - c0), transform=transform, all_touched=True)
        held = ~np.ma.getmaskarray(self.ws.raster_set.read(name)[:, r0:r1, c0:c1]).any(axis=0)
        return float(held[inside].mean()) if inside.any() else 0.0

    @staticmethod
    def measurable(info) -> bool:
        """Whether a layer can be measured at a place: a rendering, or an index with a fitted background."""
        return info.kind == "rgb" or (info.kind == "index" and "bg_sigma" in (info.stats or {}))

    def in_spreads(self, info) -> np.ma.MaskedArray:
        """A layer on the analysis grid in background spreads, favourable side up (a rendering: its colour level,
        0 on the grey backdrop), read once per run."""
        if info.name in self._spreads:
            return self._spreads[info.name]
        self.progress.check()
        if info.kind == "rgb":
            levels = colour_levels(self.ws.raster_set, info.name)
            self.coloured[info.name] = levels.coloured
            spreads = levels.level_map()
        else:
            stats = info.stats
            band = self.ws.raster_set.read(info.name)[0].astype("float64")
            measure = np.ma.log(band) if stats.get("model") == "lognormal" else band
            sign = -1.0 if info.favourable == "low" else 1.0
            spreads = sign * (measure - stats["bg_centre"]) / max(stats["bg_sigma"], 1e-12)
        self._spreads[info.name] = spreads
        return spreads

    def feature_gaps(self, geometry, roles) -> list:
        """(what was measured, distance) from `geometry` to the nearest feature of each vector layer of `roles`, and
        to the nearest corridor of each structure raster among them: whether the core lies near a fault does not
        depend on which few faults or corridor pieces a step marked as zones."""
        gaps = []
        for info in self.ws.layers:
            if info.role not in roles or info.silent:
                continue
            if info.kind == "index" and info.role == "structure":
                if info.name not in self._corridors:
                    band = self.ws.raster_set.read(info.name)[0]
                    self._corridors[info.name] = corridor_distance(band, info.favourable,
                                                                   self.ws.raster_set.grid.pixel_size,
                                                                   self.settings.corridor_percentile)
                share = 100 - self.settings.corridor_percentile
                gaps.append((f"{info.name} (nearest of its most favourable {share:.0f} %)",
                             gap_to_corridor(self._corridors[info.name], geometry, self.ws.raster_set.grid)))
                continue
            if info.kind != "vector" or self.ws.raster_set.crs is None:
                continue
            if info.name not in self._features:
                frame = self.ws.raster_set.features(info.name)
                shapes = list(frame.geometry[~(frame.geometry.isna() | frame.geometry.is_empty)])
                self._features[info.name] = (shapes, np.array([shape.bounds for shape in shapes]).reshape(-1, 4))
            shapes, bounds = self._features[info.name]
            if shapes:
                gaps.append((f"{info.name} (nearest of all its features)", nearest_distance(geometry, shapes, bounds)))
        return gaps

    def unit_gaps(self, geometry, roles) -> list:
        """(what was measured, distance) from `geometry` to the nearest cell of the host units (`host_units`) of
        each categorical map of `roles`: whether a place lies in or near a host unit does not depend on which few
        of its patches (the largest) a step marked as zones."""
        gaps = []
        for info in self.ws.layers:
            units = host_units(info, self.ws) if info.kind == "categorical" and info.role in roles else []
            if not units or info.silent:
                continue
            if info.name not in self._hosts:
                codes = self.ws.raster_set.read(info.name)[0]
                wanted = sorted(match_units(info.units, units))
                host = ~np.ma.getmaskarray(codes) & np.isin(np.ma.getdata(codes), wanted)
                width, height = self.ws.raster_set.grid.pixel_size
                self._hosts[info.name] = (ndimage.distance_transform_edt(~host, sampling=(abs(height), abs(width)))
                                          if host.any() else np.full(host.shape, np.inf))
            gaps.append((f"{info.name} (nearest cell of its host units {', '.join(units)})",
                         gap_to_corridor(self._hosts[info.name], geometry, self.ws.raster_set.grid)))
        return gaps

    def centre_gap(self, core, zone) -> float:
        """How far a partner anomaly's centre lies beyond the core (0 when it overlaps one part in
        `centre_overlap_parts`, a third, of the smaller of the two): centres hardly move when a threshold or the
        pixel size grows both outlines, while the gap between outlines closes, so two anomalies kilometres apart
        never become neighbours that way."""
        smaller = min(core.area, zone.area)
        if core.intersects(zone) and core.intersection(zone).area >= smaller / self.settings.centre_overlap_parts:
            return 0.0
        radius = math.sqrt(core.area / math.pi)
        return max(0.0, float(core.centroid.distance(zone.centroid)) - radius)

    def units_named(self) -> bool:
        """Whether some categorical map's legend names rock types (not only unit codes)."""
        return any(legend_informative(info) or self.ws.favourable_units.get(info.name)
                   for info in self.ws.layers if info.kind == "categorical" and not info.silent)


def nearest_distance(geometry, shapes: list, bounds: np.ndarray) -> float:
    """The distance from `geometry` to the nearest of `shapes` (their bounds an n x 4 array): exact, measured only to
    the shapes whose bounding box lies nearer than the nearest found so far."""
    left, bottom, right, top = geometry.bounds
    dx = np.maximum(0.0, np.maximum(bounds[:, 0] - right, left - bounds[:, 2]))
    dy = np.maximum(0.0, np.maximum(bounds[:, 1] - top, bottom - bounds[:, 3]))
    floor = np.hypot(dx, dy)
    best = math.inf
    for index in np.argsort(floor, kind="stable"):
        if floor[index] >= best:
            break
        best = min(best, geometry.distance(shapes[index]))
    return float(best)
