"""The Processing log of a real offline run, as a geologist reads it (issue 43): the Murchison case through
lodestar:analyze, its log captured line by line. No text written for a language model, one line per kind of
warning, no step that supports the answer after the controller rejected all its attempts, and words of the
orogenic gold model (no porphyry alteration core)."""
from __future__ import annotations

import html
import json
import re
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MURCHISON = ROOT / "tests" / "data" / "murchison-gold"
PROMPT_TEXT = ("final attempt", "normalised boxes", "ymin", "------>", "(0,0)", "Make sure that", "propose the regions",
               "Please fix", "TOP-LEFT", "-> feedback")
"""Phrases of the controller's feedback to a model (plugin/controller.py), which the log printed before."""
PORPHYRY_WORDS = ("alteration core", "alteration families", "hydrothermal system")


@pytest.fixture(scope="module")
def murchison(tmp_path_factory):
    """One offline run of the Murchison case, both of its map's units named favourable (so the host step covers the
    whole map and the controller rejects it; before host units were matched as the surface matches them, the
    legend's "outside the greenstone belts" did the same unasked): (log lines, record, report text, Python warnings
    that escaped)."""
    from qgis.core import QgsApplication, QgsProcessingFeedback

    import processing
    from lodestar.processing.provider import LodestarProvider

    class Captured(QgsProcessingFeedback):
        def __init__(self):
            super().__init__()
            self.lines = []

        def pushInfo(self, info):  # noqa: N802 (QGIS API name)
            self.lines.append(info)

        def pushWarning(self, warning):  # noqa: N802 (QGIS API name)
            self.lines.append(warning)

    registry = QgsApplication.processingRegistry()
    provider = None
    if registry.providerById("lodestar") is None:
        provider = LodestarProvider()
        registry.addProvider(provider)
    out = tmp_path_factory.mktemp("murchison")
    feedback = Captured()
    try:
        with warnings.catch_warnings(record=True) as escaped:
            warnings.simplefilter("always")
            result = processing.run("lodestar:analyze", {
                "CASE": str(MURCHISON / "case.json"), "FAVOURABLE_UNITS": "1, 2",
                "OUTPUT_REPORT": str(out / "report.html"),
                "OUTPUT_RECORD": str(out / "record.json")}, feedback=feedback)
    finally:
        if provider is not None:
            registry.removeProvider(provider)
    record = json.loads(Path(result["OUTPUT_RECORD"]).read_text(encoding="utf-8"))
    page = Path(result["OUTPUT_REPORT"]).read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"<style>.*?</style>|src=\"data:[^\"]+\"", "", page,
                                                      flags=re.S)))
    return feedback.lines, record, text, [w for w in escaped if w.category.__name__ == "ShapeSkipWarning"]


def test_the_log_holds_no_text_written_for_a_model(murchison):
    lines, record, _, _ = murchison
    log = "\n".join(lines)
    assert any("controller (attempt 3" in line for line in lines)  # the rejected attempts are still told...
    for phrase in PROMPT_TEXT:
        assert phrase not in log, phrase  # ...but not the prompt sent after them
    feedback = [v["feedback"] for node in record["chain"] for v in node["observation"]["controller"]
                if v.get("feedback")]
    assert any("final attempt" in text for text in feedback)  # the record keeps what the model would be told


def test_warnings_reach_the_log_once_per_kind_in_words(murchison):
    lines, _, _, escaped = murchison
    assert escaped == []  # none of rasterio's 80 ShapeSkipWarning lines reaches the console
    skipped = [line for line in lines if "skipped where the vector layers were drawn" in line]
    assert skipped == ["40 lines with no length or area (empty, or all at one point) were skipped where the vector "
                       "layers were drawn onto the analysis grid."]  # the 40 zero-length faults, drawn twice each
    assert not any("ShapeSkipWarning" in line or "will not be rasterized" in line for line in lines)


def test_the_runs_notes_reach_the_log(murchison):
    """What the dock shows beside the answer (the targets, the layers left out, the calibration's choice) is all a
    headless user reads: before, only the notes starting "Warning:" reached the log."""
    lines, record, _, _ = murchison
    notes = [line for line in lines if line.startswith("Note: ")]
    assert notes and notes == [f"Note: {note}" for note in record["result"]["notes"]
                               if not note.startswith(("Warning:", "Replay check:"))]
    assert any(re.match(r"Note: [\d,]+ targets? covering", note) for note in notes)


def test_a_step_the_controller_rejected_every_time_does_not_support_the_answer(murchison):
    lines, record, report, _ = murchison
    rejected = [node for node in record["chain"]
                if node["observation"]["controller"] and not any(v["ok"] for v in node["observation"]["controller"])]
    assert [node["step"]["index"] for node in rejected] == [2]  # the greenstone map: unit2_1 covers 90.3 %
    assert all(node["observation"]["sub_inference"] == "No" for node in rejected)
    assert any(line.startswith("Step 2, geological units: no support:") for line in lines)
    step2 = report[report.index("Step 2:"):report.index("Step 3:")]
    assert re.search(r"Supports the answer:\s+No", step2)
    assert "rejected all 3 attempts" in step2
    assert (record["result"]["answer"], record["result"]["valid"]) == ("A", True)  # the shear corridor still holds


def test_the_words_are_the_orogenic_gold_models(murchison):
    lines, _, report, _ = murchison
    for words in PORPHYRY_WORDS:
        assert words not in "\n".join(lines) and words not in report, words
    assert "Favourable host units mapped near the shear corridor, if any." in report
    assert not any("centrality" in line for line in lines)  # the graph's weights: in the report's appendix
    main = report[:report.index("Technical appendix", report.index("Reasoning chain"))]
    for internal in ("retrieval score", "sub-inference", ", gap "):
        assert internal not in main, internal


def test_the_log_reads_in_a_geologists_words(murchison):
    """No role, transformation or zone id, no snake_case identifier, '1 zones' or 'a argillic' in the log (issue 61:
    its notes named zones 's1:Mapped and interpreted faults:fault49')."""
    from geologist_words import names_of, problems

    from lodestar.plugin.request.case import read_case

    lines, _, _, _ = murchison
    names = names_of(read_case(MURCHISON).layers)
    found = [said for line in lines for said in problems(line, names)]
    assert not found, found[:5]
