"""plugin.runs.batch: every case of a folder through the real offline engine, errors recorded, figures by hand."""
from __future__ import annotations

import csv
import json

import pytest
import synthetic_cases

from lodestar.models import run_analysis
from lodestar.plugin.errors import Cancelled, LodestarError
from lodestar.plugin.progress import Progress
from lodestar.plugin.runs.batch import BATCH_COLUMNS, ERROR, CaseOutcome, find_cases, run_batch, summarize


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    """Two small synthetic cases (a porphyry with deposits, barren ground) and one broken case."""
    root = tmp_path_factory.mktemp("cases")
    synthetic_cases.make_case(root / "a-porphyry", 1, "porphyry", 120, case_id="por", mixed_crs=False)
    synthetic_cases.make_case(root / "b-barren", 2, "barren", 120, case_id="bar")
    broken = root / "c-broken"
    broken.mkdir()
    (broken / "case.json").write_text(json.dumps({
        "format": "lodestar-case/1", "id": "broken", "question": "Can deposits be detected?", "answer": "A",
        "layers": [{"path": "missing.tif", "role": "silicification"}]}))
    return root


def test_summary_figures_worked_by_hand():
    rows = [CaseOutcome("a", answer="A", truth="A"), CaseOutcome("b", answer="A", truth="A"),
            CaseOutcome("c", answer=ERROR, truth="A"), CaseOutcome("d", answer="B", truth="B"),
            CaseOutcome("e", answer="A", truth="B"), CaseOutcome("f", answer="B")]
    # yes/no: truth 1 1 1 0 0, predicted 1 1 wrong(0) 0 1 -> tp 2, fn 1, tn 1, fp 1; row f has no truth
    figures = summarize(rows)
    assert figures["cases"] == 6 and figures["scored"] == 5 and figures["errors"] == 1
    assert figures["accuracy"] == pytest.approx(3 / 5)
    assert figures["pos_f1"] == pytest.approx(4 / 6)
    assert figures["macro_f1"] == pytest.approx((4 / 6 + 2 / 4) / 2)
    assert figures["mcc"] == pytest.approx((2 * 1 - 1 * 1) / 6)
    low, high = figures["macro_f1_interval"]  # five cases: the bootstrap interval spans most of the scale
    assert 0.0 <= low < figures["macro_f1"] < high <= 1.0 and high - low > 0.5
    assert -1.0 <= figures["mcc_interval"][0] < figures["mcc"] < figures["mcc_interval"][1] <= 1.0


def test_find_cases_accepts_a_case_folder_or_a_folder_of_cases(cases, tmp_path):
    assert [p.parent.name for p in find_cases(cases)] == ["a-porphyry", "b-barren", "c-broken"]
    assert find_cases(cases / "b-barren") == [cases / "b-barren" / "case.json"]
    with pytest.raises(LodestarError, match="No case.json"):
        find_cases(tmp_path)


def test_batch_runs_every_case_and_records_the_broken_one(cases, tmp_path):
    lines = []
    result = run_batch(cases, tmp_path / "out", progress=Progress(on_log=lines.append), analyse=run_analysis)
    by_id = {row.case_id: row for row in result.outcomes}
    assert [row.case_id for row in result.outcomes] == ["por", "bar", "c-broken"]
    broken = by_id["c-broken"]
    assert broken.answer == ERROR and "missing.tif does not exist" in broken.error and broken.correct == ""
    for row in (by_id["por"], by_id["bar"]):
        assert row.answer in ("A", "B") and not row.error
        assert row.rounds >= 1 and row.seconds > 0 and row.valid in ("yes", "no")
        assert row.model_calls is not None and row.tokens == row.prompt_tokens + row.completion_tokens
        assert any((tmp_path / "out" / row.case_id).iterdir())
    deposits = json.loads((cases / "a-porphyry" / "deposits.geojson").read_text())["features"]
    assert by_id["por"].deposits == len(deposits) and 0.0 <= by_id["por"].recall <= 1.0
    assert by_id["por"].deposits_found == round(by_id["por"].recall * len(deposits))
    assert by_id["bar"].deposits is None and by_id["bar"].recall is None
    with open(result.table, newline="") as fh:
        table = list(csv.DictReader(fh))
    assert tuple(table[0]) == BATCH_COLUMNS and [r["case_id"] for r in table] == ["por", "bar", "c-broken"]
    assert result.summary["cases"] == 3 and result.summary["errors"] == 1
    assert json.loads((tmp_path / "out" / "results_summary.json").read_text()) == json.loads(
        json.dumps(result.summary))
    assert any("[2/3] bar" in line for line in lines)


def test_an_engine_crash_is_recorded_and_the_batch_goes_on(cases, tmp_path):
    from lodestar.models import run_analysis

    def crashing(request, progress):
        if request.case_id == "por":
            raise RuntimeError("boom")
        return run_analysis(request, progress)

    result = run_batch(find_cases(cases)[:2], tmp_path / "out", analyse=crashing)
    first, second = result.outcomes
    assert first.answer == ERROR and first.error == "RuntimeError: boom" and first.correct == "no"
    assert "RuntimeError: boom" in (tmp_path / "out" / "por" / "error.txt").read_text()
    assert second.answer in ("A", "B")


def test_cancel_stops_the_batch_without_a_table(cases, tmp_path):
    calls = []
    progress = Progress(is_cancelled=lambda: bool(calls))

    def analyse(request, progress):
        calls.append(request.case_id)
        raise Cancelled()

    with pytest.raises(Cancelled):
        run_batch(cases, tmp_path / "out", progress=progress, analyse=analyse)
    assert calls == ["por"] and not (tmp_path / "out" / "results.csv").exists()
