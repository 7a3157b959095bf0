"""Fixtures the core's tests share: one offline run of each real case a geologist tries (issue 61), made once."""
from __future__ import annotations

import pytest
from geologist_words import CASES, names_of


@pytest.fixture(scope="session")
def case_runs(tmp_path_factory):
    """{case: (AnalysisResult, its layer and file names)} of an offline run of each of CASES."""
    from lodestar.models import run_analysis
    from lodestar.plugin.analysis import AnalysisRequest
    from lodestar.plugin.request.case import read_case

    runs = {}
    for name, (folder, model) in CASES.items():
        case = read_case(folder)
        request = AnalysisRequest(case.layers, case.question, tmp_path_factory.mktemp(name.replace(" ", "-")),
                                  dict(case.choices), case_id=case.id, deposits=case.deposits,
                                  favourable_units=dict(case.favourable_units or {}), deposit_model=model)
        runs[name] = (run_analysis(request), names_of(case.layers))
    return runs
