"""The offline reasoner's decision numbers live in one settings object (issue 44, item 4): none is left as a
literal in the models/offline/ package, each has a reason and a provenance, the old keyword arguments still set
them, and changing one changes a decision while the defaults keep today's answers."""
from __future__ import annotations

import ast
import json
from dataclasses import fields
from pathlib import Path

import pytest

from lodestar.models.offline import OfflineReasoner
from lodestar.models.offline.settings import REASONS, OfflineSettings
from lodestar.plugin.decisions import PROVENANCES
from lodestar.plugin.raster_io import LayerSpec
from lodestar.tests.models.offline.test_reasoner import _box_zone, _node, _workspace, _write_index

OFFLINE = Path(__file__).resolve().parents[3] / "models" / "offline"
PLAIN_FLOATS = {0.0, 0.5, 1.0}
"""Floats that are arithmetic, not decisions: zero, a half, one."""

DEVELOPED_WITH = {
    "anomaly_sigma": 4.0, "colour_level": 0.2, "geochem_percentile": 90.0, "ceiling_margin": 0.05, "smooth_px": 1.5,
    "min_area_m2": 70_000.0, "min_zone_px": 4, "max_regions": 5, "fault_buffer_m": 50.0, "retry_sigma_step": 0.75,
    "retry_level_step": 0.15, "retry_level_cap": 0.9, "retry_region_step": 1, "refine_factor": 0.75,
    "min_area_slack": 0.999, "ceiling_clear_margin": 0.1, "default_near_m": 1000.0, "min_reach_px": 2,
    "marginal_factor": 2.0, "centre_overlap_parts": 3, "max_cores": 8, "hull_growth": 2.0, "alpha": 0.05,
    "joint_radii_m": [250.0, 500.0, 1000.0],
    "contrast_scales": [0.5, 1.0, 2.0], "ring_outer": 2.0, "partner_slack": 0.5, "min_radius_px": 1.5,
    "max_radius_parts": 6.0, "min_cover": 0.5, "seen_share": 0.5, "corridor_percentile": 85.0, "filled_share": 0.5,
    "filled_unit_min_m2": 1_000_000.0, "inside_share": 0.5, "lifted_spreads": 2.0, "lifted_unit_min_m2": 10_000_000.0,
    "rise_spreads": 2.0, "coloured_scene_share": 0.5, "coloured_unit_share": 0.5,
}
"""The values the reasoner's answers were developed with (before the settings object: inline, in its signature or
as constants of its helper modules)."""


def _decision_floats(tree: ast.AST) -> list[tuple[int, float]]:
    """(line, value) of float literals, other than PLAIN_FLOATS, in a comparison, as an operand of arithmetic, or
    as a default argument value."""
    places: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            places += list(ast.walk(node))
        elif isinstance(node, ast.BinOp):
            places += [node.left, node.right]
        elif isinstance(node, ast.arguments):
            places += [d for d in node.defaults + node.kw_defaults if d is not None]
    return sorted({(n.lineno, n.value) for n in places if isinstance(n, ast.Constant)
                   and isinstance(n.value, float) and n.value not in PLAIN_FLOATS})


def test_no_decision_number_is_left_inline_in_the_offline_reasoner():
    files = sorted(OFFLINE.glob("*.py"))
    assert len(files) >= 10
    found = {path.name: _decision_floats(ast.parse(path.read_text(encoding="utf-8"))) for path in files}
    assert {name: floats for name, floats in found.items() if floats} == {}


def test_the_literal_check_finds_inline_thresholds():
    code = "def f(a, b=4.0):\n    if a * 0.999 < b:\n        return a + 0.75 * b\n    return a < 0.5 or b > 1.0"
    assert _decision_floats(ast.parse(code)) == [(1, 4.0), (2, 0.999), (3, 0.75)]


def test_every_setting_has_a_reason_and_a_provenance():
    names = [field.name for field in fields(OfflineSettings)]
    assert sorted(REASONS) == sorted(names)
    for name, (reason, provenance) in REASONS.items():
        assert reason.strip() and "\n" not in reason, name
        assert any(provenance.startswith(kind) for kind in PROVENANCES), name
    described = OfflineSettings().described()
    assert [d["name"] for d in described] == names
    assert all(set(d) == {"name", "value", "reason", "provenance"} for d in described)
    assert json.loads(json.dumps(described)) == described


def test_the_defaults_are_the_values_the_reasoner_was_developed_with():
    assert {d["name"]: d["value"] for d in OfflineSettings().described()} == DEVELOPED_WITH
    assert OfflineReasoner().settings == OfflineSettings()


def test_the_old_keyword_arguments_set_the_settings():
    old = {"anomaly_sigma": 3, "colour_level": 0.3, "min_area_m2": 100_000, "max_regions": 4, "marginal_factor": 1.5,
           "refine_factor": 0.5, "geochem_percentile": 95, "fault_buffer_m": 80, "alpha": 0.01}
    settings = OfflineReasoner(**old).settings
    for name, value in old.items():
        assert getattr(settings, name) == value and type(getattr(settings, name)) is type(DEVELOPED_WITH[name])
    both = OfflineReasoner(OfflineSettings(max_cores=2), alpha=0.01).settings
    assert (both.max_cores, both.alpha) == (2, 0.01)
    with pytest.raises(TypeError):
        OfflineReasoner(anomaly_sigmas=3.0)


def test_the_run_record_names_the_main_settings():
    public = OfflineReasoner(alpha=0.01).public_settings()
    assert public == {"backend": "offline", **{name: DEVELOPED_WITH[name] for name in (
        "anomaly_sigma", "colour_level", "min_area_m2", "max_regions", "marginal_factor", "refine_factor",
        "geochem_percentile", "fault_buffer_m")}, "alpha": 0.01}


def _verdict(tmp_path, reasoner):
    """The verifier on two flat index layers, each with a zone 5 background spreads high over the same place."""
    layers = [LayerSpec(_write_index(tmp_path / "aloh.tif", amplitude=0), "hydrothermal_alteration", "aloh"),
              LayerSpec(_write_index(tmp_path / "silica.tif", amplitude=0, seed=2), "silicification", "silica")]
    ws = _workspace(layers, tmp_path)
    ws.put(_node(1, "aloh"), _box_zone(ws, "s1:aloh:1", "aloh", "hydrothermal_alteration",
                                       (501000, 3998600, 501400, 3999000), 1.05))
    ws.put(_node(2, "silica"), _box_zone(ws, "s2:silica:1", "silica", "silicification",
                                         (501100, 3998600, 501500, 3999000), 1.05))
    return reasoner.verify(ws, ws.chain)


def test_one_setting_changes_a_decision_and_the_defaults_keep_todays(tmp_path):
    today = _verdict(tmp_path, OfflineReasoner())
    assert (today.answer, today.valid) == ("A", True)
    assert today.critical == {"phyllic_core": True, "zoned_alteration": True}
    assert today.secondary == {"silica_or_gossan": True}
    assert today.rationale.startswith(
        "Core: s1:aloh:1 (center). phyllic_core [critical]: supported at the core; zoned_alteration [critical]: "
        "supported at the core; silica_or_gossan [secondary]: supported at the core. All critical evidence is "
        "supported and secondary evidence is present.")
    assert _verdict(tmp_path, OfflineReasoner(OfflineSettings())).to_dict() == today.to_dict()
    # at 8 spreads a zone is clear from 6 (x 0.75): 5 spreads no longer make a core, nor the steps' Yes right
    stricter = _verdict(tmp_path, OfflineReasoner(OfflineSettings(anomaly_sigma=8.0)))
    assert (stricter.answer, stricter.valid) == ("B", False)
    assert stricter.critical == {"phyllic_core": False, "zoned_alteration": False}
    assert stricter.rationale.startswith("No clear evidence of a compact, clearly bounded AlOH")


def test_the_run_record_lists_every_threshold_with_its_reason_and_provenance(tmp_path):
    from lodestar.plugin.analysis import BackendSettings
    from lodestar.plugin.reason.contract import Roles
    from lodestar.plugin.runs.run import _backend_section

    reasoner = OfflineReasoner(anomaly_sigma=5.0)
    section = _backend_section(BackendSettings(), Roles(reasoner, reasoner, reasoner))
    rows = {row["name"]: row for row in section["decision_settings"]}
    assert len(section["decision_settings"]) == len(fields(OfflineSettings))  # once, though it plays three roles
    assert rows["anomaly_sigma"]["value"] == 5.0 and rows["anomaly_sigma"]["reason"]
    assert all(row["provenance"].startswith(PROVENANCES) for row in rows.values())
