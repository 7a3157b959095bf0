"""Role labels and areas in km2 as the dock and the report show them."""
from __future__ import annotations

from lodestar.plugin.labels import ROLE_LABELS, format_area_km2, role_label, role_of_label
from lodestar.plugin.roles import ROLES


def test_every_role_has_a_label_and_back():
    assert set(ROLE_LABELS) == set(ROLES)
    for role in ROLES:
        assert "_" not in role_label(role)
        assert role_of_label(role_label(role)) == role
    assert role_label("hydrothermal_alteration") == "Hydrothermal alteration"
    assert role_label("my_new_role") == "My new role"


def test_areas_in_km2_with_sensible_digits():
    assert format_area_km2(2.0e9) == "2,000 km2"
    assert format_area_km2(6.245e6) == "6.25 km2"
    assert format_area_km2(31.2e6) == "31.2 km2"
    assert format_area_km2(480_000) == "0.48 km2"
    assert format_area_km2(3_100) == "0.0031 km2"
    assert format_area_km2(0) == "0 km2"
    assert format_area_km2(None) == ""
