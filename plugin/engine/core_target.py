"""The verified core on the map: the place a Yes rests on becomes a target, ranked first.

A verifier that answers Yes around a core may name it in its verdict (`Verdict.core`: a label and the
outline as WKT in the analysis CRS). The map then agrees with the answer: the core's cells join the top
share of the favourability surface, and the target holding them is ranked first. Without this, a system
whose outer shell scores higher than its centre (a phyllic ring around a potassic core, where porphyry
ore sits) gets targets on the ring and none on the centre the verifier pointed at.

`system_outline` is how the offline verifier draws a core: the core with its holes filled (a ring of
alteration encloses the system's centre) and the partner zones that support it, each cut to within the
item's reach of the core, wrapped in their convex hull.
"""
from __future__ import annotations

import numpy as np
from shapely import wkt
from shapely.errors import ShapelyError
from shapely.geometry import MultiPolygon, Polygon
from shapely.ops import unary_union


def filled(geometry):
    """A polygon (or multipolygon) with its holes filled."""
    parts = list(geometry.geoms) if isinstance(geometry, MultiPolygon) else [geometry]
    return unary_union([Polygon(p.exterior) for p in parts if isinstance(p, Polygon) and not p.is_empty])


def system_outline(core, partners: list) -> Polygon:
    """The convex hull of a core geometry (holes filled) and its partners' geometries, each a
    (geometry, reach in map units) cut to within that reach of the core."""
    body = filled(core)
    pieces = [body]
    for geometry, reach in partners:
        piece = geometry.intersection(body.buffer(reach))
        if not piece.is_empty:
            pieces.append(piece)
    return unary_union(pieces).convex_hull


def core_outline(core: dict | None):
    """The outline of a verdict's core (None when it names none), or a ValueError that says why it cannot be
    read."""
    if not core or not core.get("wkt"):
        return None
    try:
        geometry = wkt.loads(str(core["wkt"]))
    except (ShapelyError, ValueError, TypeError) as exc:
        raise ValueError(f"its outline is not readable WKT ({exc})") from exc
    if geometry.is_empty or geometry.area <= 0:
        raise ValueError("its outline is empty or has no area")
    return geometry


def core_cells(outline, grid, valid: np.ndarray) -> np.ndarray:
    """The analysed cells an outline touches, on `grid`."""
    from rasterio.features import rasterize

    cells = rasterize([(outline, 1)], out_shape=(grid.height, grid.width), transform=grid.transform, fill=0,
                      all_touched=True, dtype="uint8").astype(bool)
    return cells & valid
