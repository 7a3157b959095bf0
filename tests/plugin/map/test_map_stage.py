"""The map stage asks no model (issue 59): `map_prospectivity` takes the workspace, the evidence the reason stage
chose (`evidence_choice.chosen_evidence`) and a judge of measured targets, never the run's engine; given the same
inputs again it makes the run's surface cell for cell and its targets, judged by the callable it was handed."""
from __future__ import annotations

import numpy as np
import rasterio

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.judge.target_evidence import judge
from lodestar.plugin.reason.evidence_choice import EvidenceChoice
from lodestar.plugin.request.case import read_case
from lodestar.plugin.runs import run as engine_run
from lodestar.tests.fakes.sta_cot_scripts import copy_sample


def test_the_map_stage_remakes_the_runs_surface_from_its_inputs_alone(tmp_path, monkeypatch):
    case = read_case(copy_sample(tmp_path / "case"))
    calls = []

    def recording(ws, graph, plan, evidence, judge_measured, **settings):
        calls.append((ws, graph, plan, evidence, settings))
        return real(ws, graph, plan, evidence, judge_measured, **settings)

    real = engine_run.map_prospectivity
    monkeypatch.setattr(engine_run, "map_prospectivity", recording)
    result = run_analysis(AnalysisRequest(case.layers, case.question, tmp_path / "run", dict(case.choices),
                                          case_id=case.id, deposits=case.deposits))
    ((ws, graph, plan, evidence, settings),) = calls
    assert isinstance(evidence, EvidenceChoice) and evidence.specs and evidence.source
    judged = []

    def by_rules(measured, notes):
        judged.append(len(measured))
        return [judge(m) for m in measured]

    again = real(ws, graph, plan, evidence, by_rules, **settings)
    with rasterio.open(result.outputs["favourability"]) as ds:
        written = ds.read(1, masked=True)
    assert np.array_equal(np.ma.getmaskarray(written), np.ma.getmaskarray(again.surface.values))
    assert np.allclose(written.compressed(), again.surface.values.compressed().astype("float32"))
    assert judged and judged[0] == len(again.judgements) >= 1
    assert list(again.targets["rank"]) == list(result.prospectivity["rank"])
