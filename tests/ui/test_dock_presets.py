"""The dock's three preset questions are answered offline on the sample case, in their own choices, and the dock and
lodestar:analyze give the same answer."""
from __future__ import annotations

import pytest

from lodestar.plugin.reason.questions import parse_choices
from lodestar.tests.ui.dock_steps import run_to_end, set_case_roles
from lodestar.ui.dock import PRESETS

ASKED = [index for index, (_label, question) in enumerate(PRESETS) if question]


def test_three_presets_are_offered():
    assert len(ASKED) == 3


@pytest.mark.parametrize("index", ASKED)
def test_each_preset_is_answered_in_its_own_choices(dock, sample, run, tmp_path, index):
    case, layers = sample
    set_case_roles(dock, case, layers)
    dock.ui.presetCombo.setCurrentIndex(index)
    question = dock.ui.questionEdit.toPlainText()
    choices = parse_choices(question)
    run_to_end(dock)
    result = dock.result
    assert result is not None and result.answer in choices, (result and result.answer)
    from_toolbox = run("lodestar:analyze", {
        "CASE": str(case.folder / "case.json"), "QUESTION": question,
        "OUTPUT_ZONES": str(tmp_path / "zones.gpkg"), "OUTPUT_PROSPECTIVITY": str(tmp_path / "targets.gpkg"),
        "OUTPUT_NODES": str(tmp_path / "nodes.gpkg"), "OUTPUT_EDGES": str(tmp_path / "edges.gpkg"),
        "OUTPUT_RECORD": str(tmp_path / "record.json")})
    assert from_toolbox["ANSWER"] == result.answer
    if "alteration" in question:  # answered with an alteration the sample shows, not "Yes" nor "None"
        assert choices[result.answer] not in ("Yes", "None")
    else:  # the sample is a porphyry system: targets worth exploring
        assert choices[result.answer].startswith("Yes") and len(result.prospectivity) >= 1
