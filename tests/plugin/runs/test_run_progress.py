"""A run's progress never steps back: each stage reports its own span, and the run reports them through one monotone
reporter (Progress.monotone). Before, a calibrated run went from 97 % (the calibration done) back to 94 % (the
targets' validation reporting its own 80 %)."""
from __future__ import annotations

from mpm_sample import SAMPLE, planted_deposits

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.progress import Progress
from lodestar.plugin.request.case import read_case


def test_a_calibrated_run_reports_progress_that_never_steps_back(tmp_path):
    case = read_case(SAMPLE / "case.json")
    seen: list = []
    run_analysis(AnalysisRequest(case.layers, case.question, tmp_path / "out", dict(case.choices), case_id=case.id,
                                 deposits=planted_deposits(tmp_path), calibrate="wofe"), Progress(seen.append))
    assert seen == sorted(seen) and seen[-1] == 100.0
    assert len([value for value in seen if 92 <= value <= 97]) > 5  # the calibration's folds move the bar


def test_a_monotone_reporter_passes_on_only_what_moves_forward():
    seen: list = []
    forward = Progress(seen.append).monotone()
    for value in (5, 40, 30, 40, 97, 94, 120, -3):
        forward.set(value)
    assert seen == [5.0, 40.0, 97.0, 100.0]
    forward.scaled(0, 50).set(100)  # a later stage's child reporting less than the bar shows
    assert seen == [5.0, 40.0, 97.0, 100.0]
