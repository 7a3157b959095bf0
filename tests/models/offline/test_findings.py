"""The answer follows seed 000's C.4 rule from the items' findings: every testable critical item supported and,
when any secondary item is testable, at least one of them present; an untestable item neither helps nor hurts."""
from __future__ import annotations

import pytest

from lodestar.models.offline.findings import Finding, answers_yes


def _items(*pairs) -> dict:
    return {f"i{n}": Finding(level, status) for n, (level, status) in enumerate(pairs)}


def test_a_yes_needs_every_testable_critical_item_supported_and_a_secondary_one_present():
    assert answers_yes(_items(("critical", "supported"), ("critical", "supported"), ("secondary", "supported")))
    assert answers_yes(_items(("critical", "supported"), ("secondary", "missing"), ("secondary", "supported")))
    assert answers_yes(_items(("critical", "supported"), ("critical", "untestable"), ("secondary", "untestable")))
    assert not answers_yes(_items(("critical", "supported"), ("critical", "marginal"), ("secondary", "supported")))
    assert not answers_yes(_items(("critical", "supported"), ("secondary", "missing")))
    assert not answers_yes(_items(("critical", "untestable"), ("secondary", "supported")))  # nothing critical tested
    assert not answers_yes({})


def test_a_finding_holds_one_of_four_statuses_and_its_evidence_as_a_tuple():
    found = Finding("critical", "supported", 0.0, ["s1:aloh:1"], "aloh (measured at the core)", 450.0)
    assert found.zones == ("s1:aloh:1",) and found.measured.startswith("aloh")
    with pytest.raises(ValueError, match="unknown status 'present'"):
        Finding("secondary", "present")
