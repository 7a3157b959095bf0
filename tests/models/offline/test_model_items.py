"""The offline reasoner's reading of a legend (models/offline/model_items.py)."""
from __future__ import annotations

from types import SimpleNamespace

from lodestar.models.offline.model_items import favourable_units


def test_host_units_are_matched_as_the_surface_matches_them_never_a_negated_name():
    """Murchison's legend: "outside the greenstone belts" names no greenstone (before, the host step mapped it
    and every target's host item was "supported" over the 90 % of the map outside the belts); synonyms and plurals
    match as in the favourability surface."""
    murchison = SimpleNamespace(units={1: "greenstone (Archaean greenstone belt bedrock)",
                                       2: "outside the greenstone belts"})
    assert favourable_units(murchison, {"favourable_units": ["greenstone"]}) == [
        "greenstone (Archaean greenstone belt bedrock)"]
    legend = SimpleNamespace(units={1: "Metabasalt", 2: "Banded iron formations", 3: "Granite"})
    assert favourable_units(legend, {"favourable_units": ["greenstone", "banded iron formation"]}) == [
        "Banded iron formations", "Metabasalt"]
    assert favourable_units(legend, {}) == []
