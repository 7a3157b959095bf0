"""History quotes one AUC per run: the one of the surface its targets came from (issue 61: a calibrated run was
listed at 0.934, its knowledge-driven surface's figure, where its targets came from the 0.940 model)."""
from __future__ import annotations

import json

from lodestar.plugin.labels import targets_auc
from lodestar.plugin.runs.project_runs import run_entry

KNOWLEDGE = {"auc": 0.934, "capture": {}, "basis": "knowledge-driven: no deposit data used"}
CV = {"auc": 0.940, "capture": {}, "basis": "cross-validated"}


def _record(folder, validation: dict):
    folder.mkdir()
    record = {"result": {"answer": "A"}, "choices": {"A": "Yes"}, "question": "Where?", "created_utc": "2026-12-01",
              "knowledge": [{"name": "Orogenic gold"}], "favourability": {"validation": validation, "targets": []}}
    (folder / "record.json").write_text(json.dumps(record))
    return folder


def test_a_calibrated_run_is_listed_by_the_model_its_targets_came_from(tmp_path):
    kept = _record(tmp_path / "kept", {"knowledge": KNOWLEDGE, "cv": CV, "method": "ensemble", "refused": False})
    refused = _record(tmp_path / "refused", {"knowledge": KNOWLEDGE, "cv": CV, "method": "wofe", "refused": True})
    plain = _record(tmp_path / "plain", {"knowledge": KNOWLEDGE})
    assert (run_entry(kept)["auc"], run_entry(kept)["auc_of"]) == (0.940, "cv")
    assert (run_entry(refused)["auc"], run_entry(refused)["auc_of"]) == (0.934, "knowledge")
    assert (run_entry(plain)["auc"], run_entry(plain)["auc_of"]) == (0.934, "knowledge")
    assert targets_auc({}) is None and targets_auc(None) is None
