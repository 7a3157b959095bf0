"""One case of the independent generator (scripts/worlds_b.py) made and analysed offline, as a benchmark run does."""
from __future__ import annotations

import json
from pathlib import Path

import worlds_b

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.request.case import read_case


def analyse_worlds_b_case(seed: int, index: int, kind: str, tmp_path: Path, scored: bool = False) -> tuple:
    """(result, record) of case `index` of a 60-case worlds_b suite made with `seed`, which must be of `kind`;
    `scored`: the targets scored against the case's deposits (`result.metrics`)."""
    planned, region, extent = worlds_b.plan(60, seed)[index]
    assert planned == kind
    folder, _truth = worlds_b.make_case(tmp_path / "case", seed, index, planned, region, extent)
    case = read_case(folder)
    result = run_analysis(AnalysisRequest(case.layers, case.question, tmp_path / "out", dict(case.choices),
                                          case_id=case.id, deposits=case.deposits if scored else None))
    return result, json.loads(Path(result.outputs["record"]).read_text(encoding="utf-8"))
