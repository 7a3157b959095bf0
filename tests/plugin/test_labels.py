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


def test_one_area_formatter_for_the_dock_and_the_report():
    from lodestar.plugin.labels import km2

    assert km2(6.245e6) == "6.25 km²" and km2(2.0e9) == "2,000 km²" and km2(62_500.0) == "0.0625 km²"
    assert km2(None) == "-" and km2(float("nan")) == "-"
    assert "e+" not in format_area_km2(6.245e6 * 1000) and format_area_km2(6.245e9) == "6,245 km2"


def test_tools_identifiers_and_free_text_in_words():
    from lodestar.plugin.labels import humanize, number, tool_label, words

    assert tool_label("spatial_relations") == "spatial relations"
    assert tool_label("color_regions") == "colour / anomaly regions"
    assert tool_label("brand_new_tool") == "brand new tool"
    assert words("false_color_composite") == "false-colour composite" and words("phyllic_core") == "phyllic core"
    assert humanize("Coincides with hydrothermal_alteration, iron_oxide; 2e+03 km2", ["phyllic_core"]) == \
        "Coincides with hydrothermal alteration, iron oxide; 2,000 km2"
    assert humanize("phyllic_core found", ["phyllic_core"]) == "phyllic core found"
    assert number(6245000.0) == "6,245,000" and number(0.000123456) == "0.000123"


def test_model_use_offline_says_so_instead_of_zeros():
    from lodestar.plugin.labels import OFFLINE_USAGE, usage_rows

    zeros = {"planner": {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "seconds": 0.0},
             "verifier": {"calls": 0}}
    assert usage_rows(zeros) == ([], OFFLINE_USAGE) and usage_rows({}) == ([], "offline: no model calls")
    rows, note = usage_rows({"planner": {"calls": 3, "prompt_tokens": 12000, "completion_tokens": 345,
                                         "seconds": 4.26}, "verifier": {"calls": 0}})
    assert note == "" and rows == [["planner", "3", "12,345", "4.3"], ["verifier", "0", "0", "0.0"]]
