"""The core's numbers that decide live in one registry with their reasons and provenance (issue 59, item 5): every
numeric constant of plugin/ is either bound from `plugin/decisions.py` or named here as no decision with why; each
registered number is used, has a reason and a provenance of a known kind, and docs/decisions.md prints them."""
from __future__ import annotations

import ast
import importlib.util
import json
from dataclasses import fields, replace
from pathlib import Path

from lodestar.plugin.decisions import CORE, PROVENANCES, REASONS, CoreSettings

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "plugin"

BUDGET = "a memory or time budget"
PRECISION = "the precision of a computation (a sample size, a number of levels)"
LIMIT = "an input limit (refuses what would not fit or is not sane)"
SHOWN = "how a picture, a message or progress is drawn"
FORMAT = "a fact of a file format, a sensor or a code"
SECRET = "how secrets are masked"

NOT_DECISIONS = {
    "analysis.MAX_LAYERS": LIMIT,
    "cluster.CONNECT_TIMEOUT_S": BUDGET, "cluster.POLL_S": BUDGET, "cluster.IN_FLIGHT_PER_THREAD": BUDGET,
    "cluster.MAX_WORKERS_PER_TASK": BUDGET,
    "confinement.MAX_VRT_BYTES": LIMIT, "confinement.MAX_DEPTH": LIMIT,
    "evaluation.MAX_CURVE_LEVELS": PRECISION, "evaluation.RESAMPLED_CELLS": BUDGET,
    "favourability.blockwise.DEFAULT_BLOCK": BUDGET, "favourability.blockwise.EXACT_CELLS": PRECISION,
    "favourability.blockwise.HIST_SHIFT": PRECISION, "favourability.blockwise.MAX_WINDOW_BLOCKS": BUDGET,
    "favourability.blockwise.COARSE_CELLS": BUDGET, "favourability.blockwise.FULL_TILE": BUDGET,
    "favourability.blockwise_fitted.FITTED_BLOCK": BUDGET,
    "favourability.calibration.IMPORTANCE_CELLS": PRECISION, "favourability.calibration.RESPONSE_CELLS": PRECISION,
    "favourability.calibration.RESPONSE_UNITS": SHOWN, "favourability.calibration.OUT_OF_FOLD_SHARE": SHOWN,
    "favourability.calibration.SEARCH_SHARE": SHOWN,
    "favourability.model_file.FORMAT": FORMAT, "favourability.models.CHUNK_ROWS": BUDGET,
    "favourability.outputs.NODATA": FORMAT,
    "favourability.plan_file.MAX_PLAN_BYTES": LIMIT, "favourability.plan_file.SHOWN": SHOWN,
    "favourability.plan_preview.CURVE_SAMPLES": PRECISION, "favourability.plan_preview.CHANGE_SHARE": SHOWN,
    "favourability.plan_preview.CURVE_PAD": SHOWN,
    "favourability.wofe.OTHER": FORMAT,
    "files.PNG_OPTIONS": FORMAT,
    "graph.VECTOR_MIN": BUDGET, "graph.BRANDES_CHUNK": BUDGET,
    "json_file.MAX_DEPTH": LIMIT,
    "judge.target_evidence.VIEW_GROWTH": SHOWN,
    "judge.target_views.PANEL_PX": SHOWN, "judge.target_views.MAX_PANELS": SHOWN, "judge.target_views._OUTLINE": SHOWN,
    "judge.target_views._TITLE_PX": SHOWN,
    "labels._ZONE_LAYER_CHARS": LIMIT,
    "masking.MIN_SECRET_LENGTH": SECRET, "masking.PART_LENGTH": SECRET,
    "prediction_curves.LEVELS": PRECISION,
    "raster_io.MIN_ANALYSIS_PIXELS": LIMIT, "raster_io.DATA_BOUNDS_PIXELS": BUDGET,
    "raster_io.DEFAULT_MAX_PIXELS": BUDGET, "raster_io.BLOCK_SOURCE_PIXELS": BUDGET,
    "reason.deposit_models.MAX_MODEL_BYTES": LIMIT, "reason.sign_check.CHECK_PIXELS": PRECISION,
    "reason.toolbox.OUTLINE_COLOURS": SHOWN, "reason.toolbox.CROSS_COLOUR": SHOWN,
    "render.NODATA_RGB": SHOWN, "render._SAMPLE_LIMIT": PRECISION,
    "report.report_curves.WIDTH_PX": SHOWN, "report.report_curves.HEIGHT_PX": SHOWN, "report.report_curves.DPI": SHOWN,
    "report.report_map.WIDTH_PX": SHOWN, "report.report_map.DPI": SHOWN, "report.report_map.LABELLED": SHOWN,
    "report.report_map._MAX_PIXELS": SHOWN, "report.report_map._MAX_MAP_HEIGHT": SHOWN,
    "report.report_map._MIN_MAP_PX": SHOWN, "report.report_map._OFFSETS": SHOWN,
    "report.report_models.WIDTH_PX": SHOWN, "report.report_models.PANEL_PX": SHOWN, "report.report_models.DPI": SHOWN,
    "report.report_models.MAX_PANELS": SHOWN, "report.report_models._MAX_PIXELS": SHOWN,
    "report.report_prospectivity.SUMMARY_TARGETS": SHOWN, "report.report_prospectivity.SHOWN_TARGETS": SHOWN,
    "report.report_prospectivity.PROSPECTS_SHOWN": SHOWN,
    "request.case.MAX_CASE_BYTES": LIMIT, "request.record.MAX_RECORD_BYTES": LIMIT, "request.record.SHOWN": SHOWN,
    "request.request.AREA_SHARE_RANGE": LIMIT, "request.request.MAX_FOLDS": LIMIT,
    "runs.run.MAX_QUESTION_CHARS": LIMIT,
    "tools.alteration_indices.NODATA": FORMAT,
    "tools.color_regions.FULL_RESOLUTION_LIMIT": BUDGET, "tools.color_regions.RENDERING_LIMIT": BUDGET,
    "tools.color_regions.SAMPLE_PIXELS": PRECISION, "tools.color_regions.BLOCK_PIXELS": BUDGET,
    "tools.color_regions.SMOOTH_TRUNCATE": PRECISION, "tools.color_regions.COARSE_CELL": BUDGET,
    "tools.color_regions.DIRECT_LABEL_PIXELS": BUDGET, "tools.color_regions.MAX_COARSE_CANDIDATES": BUDGET,
    "tools.evidence_view.SHARPEN_RADIUS": SHOWN, "tools.evidence_view.SHARPEN_THRESHOLD": SHOWN,
    "tools.legend_classify.HALO_PX": PRECISION, "tools.legend_ocr.TIMEOUT_S": BUDGET,
    "tools.map_legend.DETECT_MAX_PIXELS": BUDGET, "tools.map_legend.BLOCK_ROWS": BUDGET,
    "tools.map_legend.NODATA": FORMAT, "tools.scene_indices.BLOCK_ROWS": BUDGET,
    "tools.scene_masks._QA_CLOUD_BITS": FORMAT, "tools.scene_masks._QA_WATER_BIT": FORMAT,
    "tools.scene_masks._SCL": FORMAT, "tools.scene_products.S2_QUANTIFICATION": FORMAT,
    "vector_io.SHAPEFILE_TEXT_BYTES": FORMAT,
}
"""Numeric constants of plugin/ that decide nothing about the ground, each with the kind of number it is."""


def _numeric(node: ast.expr) -> bool:
    """A literal number, or a tuple, list or mapping of them (the shape a decision number takes)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp):
        return _numeric(node.operand)
    if isinstance(node, ast.BinOp):
        return _numeric(node.left) and _numeric(node.right)
    if isinstance(node, (ast.Tuple, ast.List)):
        return bool(node.elts) and all(_numeric(item) for item in node.elts)
    if isinstance(node, ast.Dict):
        return bool(node.values) and all(_numeric(item) for item in node.values)
    return False


def _module_constants() -> tuple[dict[str, ast.expr], dict[str, str]]:
    """(module.NAME -> value of every upper-case module constant written as numbers, module.NAME -> the CORE field
    it is bound to) over plugin/, module names relative to plugin."""
    literal, bound = {}, {}
    for path in sorted(PLUGIN.rglob("*.py")):
        module = ".".join(path.relative_to(PLUGIN).with_suffix("").parts)
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                target, value = node.target, node.value
            else:
                continue
            if not (isinstance(target, ast.Name) and target.id.lstrip("_").isupper()):
                continue
            name = f"{module}.{target.id}"
            if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "CORE":
                bound[name] = value.attr
            elif _numeric(value):
                literal[name] = value
    return literal, bound


def test_every_numeric_constant_is_registered_or_said_to_be_no_decision():
    literal, _ = _module_constants()
    unregistered = sorted(set(literal) - set(NOT_DECISIONS))
    assert not unregistered, (f"decision numbers outside plugin/decisions.py: {unregistered}; register each with its "
                              "reason and provenance, or name it in NOT_DECISIONS with the kind of number it is")
    stale = sorted(set(NOT_DECISIONS) - set(literal))
    assert not stale, f"NOT_DECISIONS names constants that are gone or registered: {stale}"


def test_every_registered_number_is_bound_by_a_module_and_has_a_reason_and_a_provenance():
    _, bound = _module_constants()
    names = [item.name for item in fields(CoreSettings)]
    assert sorted(REASONS) == sorted(names)
    assert sorted(set(bound.values())) == sorted(names), "a registered number no module binds, or a binding of none"
    for name, (reason, provenance) in REASONS.items():
        assert len(reason) > 40, name
        assert provenance.startswith(PROVENANCES), (name, provenance)


def test_one_rule_stated_twice_is_one_number():
    """The two places that tell a classed layer from a measured one, and the report's captures with the scores', now
    read one number each."""
    _, bound = _module_constants()
    assert bound["reason.background.CLASSED_MAX"] == bound["favourability.knowledge._MAX_CLASSES"] == "classed_max"
    assert bound["evaluation.DEFAULT_SHARES"] == bound["report.report_curves.SHARES"] == "scored_shares"


def test_the_numbers_are_the_values_the_code_was_developed_with():
    """Binding the numbers changed no decision: each is the literal it replaced (git show 5d1ddc2)."""
    from lodestar.plugin.favourability import calibration, targets
    from lodestar.plugin.judge import target_table
    from lodestar.plugin.reason import background

    assert (targets.SADDLE_DEPTH, targets.TIERS) == (0.02, (0.02, 0.05, 0.10))
    assert target_table.VERDICT_FACTOR == {"strong": 1.0, "moderate": 0.8, "weak": 0.6, "unsupported": 0.4, "": 1.0}
    assert (background.CLASSED_MAX, background.SATURATED_SHARE, background.LOG_RANGE) == (32, 0.001, 10.0)
    assert (calibration.BACKGROUND_CELLS, calibration.SIGN_LEVEL, calibration.SEED) == (10_000, 0.05, 0)


def test_described_lists_every_number_as_json_holds_it():
    rows = CORE.described()
    assert [row["name"] for row in rows] == [item.name for item in fields(CoreSettings)]
    by_name = {row["name"]: row for row in rows}
    assert by_name["tiers"]["value"] == [0.02, 0.05, 0.10]
    assert by_name["localization_ranges"]["value"]["important_areas_count"] == [3, 7]
    assert json.loads(json.dumps(rows)) == rows
    changed = replace(CORE, saddle_depth=0.05).described()
    assert next(row["value"] for row in changed if row["name"] == "saddle_depth") == 0.05


def test_the_offline_reasoner_shares_the_kinds_of_provenance():
    from lodestar.models.offline.settings import REASONS as OFFLINE

    assert all(provenance.startswith(PROVENANCES) for _, provenance in OFFLINE.values())


def test_docs_decisions_page_is_current():
    spec = importlib.util.spec_from_file_location("write_decisions", ROOT / "scripts" / "write_decisions.py")
    assert spec is not None and spec.loader is not None
    page = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(page)
    assert (ROOT / "docs" / "decisions.md").read_text(encoding="utf-8") == page.render(), (
        "docs/decisions.md is out of date: run .venv/bin/python scripts/write_decisions.py")

