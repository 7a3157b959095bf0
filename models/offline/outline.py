"""How the offline verifier draws the system a Yes rests on: the core with its holes filled (a ring of alteration
encloses the system's centre) and the partner zones that support it, each cut to within the item's reach of the
core, wrapped in their convex hull when compact, else closed over the gaps between them. The engine then forces
that outline into the targets (plugin/map/core_target.py)."""
from __future__ import annotations

from shapely.ops import unary_union

from ...plugin.map.core_target import filled
from .settings import DEFAULT, OfflineSettings


def system_outline(core, partners: list, settings: OfflineSettings = DEFAULT):
    """A core geometry (holes filled) and its partners' geometries, each a (geometry, reach in map units) cut to
    within that reach of the core, wrapped in their convex hull when that grows them at most `hull_growth` times,
    else closed over gaps up to the largest reach (grown by it, then shrunk by it, holes filled): the ground between
    a ring of alteration and the cap beside it belongs to the system, while a sprawling zone keeps its shape."""
    body = filled(core)
    pieces, widest = [body], 0.0
    for geometry, reach in partners:
        piece = geometry.intersection(body.buffer(reach))
        if not piece.is_empty:
            pieces.append(piece)
            widest = max(widest, float(reach))
    joined = unary_union(pieces)
    hull = joined.convex_hull
    if hull.area <= settings.hull_growth * joined.area:
        return hull
    if widest > 0:
        joined = joined.buffer(widest).buffer(-widest)
    return filled(joined) if not joined.is_empty else body
