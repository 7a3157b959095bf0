"""How the offline verifier outlines the system a Yes rests on: the core and its partners cut to their reach,
wrapped in their hull when compact, closed over their gaps when sprawling."""
from __future__ import annotations

from shapely.geometry import Point, box

from lodestar.models.offline.outline import system_outline
from lodestar.models.offline.settings import OfflineSettings


def test_the_outline_wraps_the_core_and_its_partners_cut_to_their_reach():
    arc = Point(0, 0).buffer(1000).difference(Point(0, 0).buffer(600)).intersection(box(-1000, 0, 1000, 1000))
    silica = Point(0, -300).buffer(400)  # over the centre, south of the arc
    far = box(5000, 5000, 9000, 9000)  # a large partner mostly beyond reach
    outline = system_outline(arc, [(silica, 700.0), (far.union(box(900, 900, 1200, 1200)), 450.0)])
    assert outline.contains(Point(0, -100)) and outline.contains(Point(0, -400))  # the centre, and the silica below
    assert not outline.contains(Point(0, -690))  # silica beyond its reach of the arc is cut
    assert outline.bounds[2] < 1500 and outline.bounds[3] < 1500  # the far partner is cut to within reach


def test_a_sprawling_core_keeps_its_shape_and_a_nearby_cap_is_joined_to_it():
    sprawl = box(0, 0, 5000, 300).union(box(0, 0, 300, 5000))  # an L of two 5 km arms: its hull is 4.8 times larger
    cap = box(500, 500, 800, 800)  # 200 m beyond the corner of the L
    outline = system_outline(sprawl, [(cap, 450.0)])
    assert outline.contains(Point(400, 400)) and outline.contains(Point(600, 600))  # the gap to the cap is closed
    assert outline.area < 1.2 * (sprawl.area + cap.area + 500 * 500) < sprawl.convex_hull.area / 3
    assert system_outline(sprawl, []).equals(sprawl)


def test_a_compact_arc_and_its_cap_are_wrapped_in_their_hull():
    arc = Point(0, 0).buffer(1000).difference(Point(0, 0).buffer(600)).intersection(box(-1000, 0, 1000, 1000))
    outline = system_outline(arc, [])
    assert outline.equals(arc.convex_hull) and outline.contains(Point(0, 100))  # the hollow of the arc is in


def test_the_hull_growth_setting_decides_between_hull_and_shape():
    """The L's hull is 4.8 times its area: wrapped only once the setting allows that much growth."""
    sprawl = box(0, 0, 5000, 300).union(box(0, 0, 300, 5000))
    assert 4.5 < sprawl.convex_hull.area / sprawl.area < 5.0
    assert system_outline(sprawl, [], OfflineSettings(hull_growth=4.5)).equals(sprawl)
    assert system_outline(sprawl, [], OfflineSettings(hull_growth=5.0)).equals(sprawl.convex_hull)
