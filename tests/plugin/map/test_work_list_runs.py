"""Targets that agree with the answer, end to end on the bundled sample: an answer of Insufficient evidence draws no
target and writes no targets layer (it once reported 777 prospectivity polygons); a Yes draws the work list, its
note saying the sizes and the ranking rule, and a "where" answer says how many targets and what they hold."""
from __future__ import annotations

import json
import re

import numpy as np
import rasterio

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.labels import plural
from lodestar.plugin.reason.contract import INSUFFICIENT
from lodestar.plugin.request.case import read_case
from lodestar.plugin.runs.run_history import result_of
from lodestar.tests.fakes.sta_cot_scripts import copy_sample


def _run(case_json, out, question=None):
    case = read_case(case_json)
    return run_analysis(AnalysisRequest(case.layers, question or case.question, out, choices=case.choices,
                                        deposits=case.deposits))


def test_an_insufficient_evidence_run_writes_no_targets_layer(tmp_path):
    folder = copy_sample(tmp_path / "case")
    with rasterio.open(folder / "aloh.tif") as ds:  # the critical phyllic core's only layer made flat
        profile, shape = ds.profile, (ds.height, ds.width)
    with rasterio.open(folder / "aloh.tif", "w", **profile) as ds:
        ds.write(np.full(shape, 0.5, dtype=profile["dtype"]), 1)
    result = _run(folder / "case.json", tmp_path / "run")
    assert result.answer == INSUFFICIENT
    assert len(result.prospectivity) == 0 and len(result.prospects) == 0
    assert not (tmp_path / "run" / "prospectivity.gpkg").exists() and "prospectivity" not in result.outputs
    assert (tmp_path / "run" / "favourability.tif").is_file()  # the surface is still written
    assert ("No targets: the evidence is insufficient to answer; the favourability surface is still written (its top "
            "cells are where it is most favourable, not targets).") in result.notes
    record = json.loads((tmp_path / "run" / "record.json").read_text(encoding="utf-8"))
    assert "prospectivity" not in record["outputs"] and record["favourability"]["targets"] == []
    assert "No targets were drawn." in (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    again = result_of(tmp_path / "run")  # the run shows again without a targets file
    assert again.answer == INSUFFICIENT and len(again.prospectivity) == 0


def test_a_where_answer_says_how_many_targets_and_what_they_hold(tmp_path):
    folder = copy_sample(tmp_path / "case")
    result = _run(folder / "case.json", tmp_path / "run", "Where are porphyry copper deposits likely here? Answer: "
                                                          "A. Yes B. No")
    assert result.answer == "A"
    targets = result.prospectivity
    assert 1 <= len(targets) <= 25 and targets["area_km2"].min() >= 0.05  # none a speck of the 30 m grid
    held = int(targets["known_deps"].sum())
    assert result.answer_text.startswith(f"{plural(len(targets), 'target')} over {targets['area_km2'].sum():,.1f} "
                                         f"km2 holding {plural(held, 'known deposit')}, best first: 1. ")
    note = next(n for n in result.notes if re.match(r"[\d,]+ targets? covering", n))
    assert "none smaller than" in note and "size only breaking ties" in note
