"""The dock and lodestar:analyze, given the same inputs, build the same request (the core's one builder)."""
from __future__ import annotations

import dataclasses

import pytest
from qgis.core import QgsProject, QgsVectorLayer

from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.errors import LodestarError
from lodestar.ui.settings_dialog import PluginSettings

QUESTION = ("Which hydrothermal alteration is present in this area? Answer: A. Argillic or phyllic (clay, sericite) "
            "B. Propylitic (chlorite, epidote) C. Silicification D. None.")
LOW = "ASTER TIR quartz index"
UNITS = "geological map: monzonite porphyry, 2"
DIFFERENT_BY_DESIGN = {"output_dir", "case_id", "output_names"}  # each caller's own run folder, run name and file names


class Captured(LodestarError):
    """Stops lodestar:analyze once the request reached the engine."""


def _analyze_request(run, monkeypatch, parameters) -> AnalysisRequest:
    from qgis.core import QgsProcessingException

    seen = []

    def capture(request, progress, on_event=None):
        seen.append(request)
        raise Captured("request captured")

    monkeypatch.setattr("lodestar.models.run_analysis", capture)
    with pytest.raises(QgsProcessingException, match="request captured"):
        run("lodestar:analyze", parameters)
    return seen[0]


def test_dock_and_analyze_build_the_same_request(dock, sample, run, monkeypatch):
    case, layers = sample
    monkeypatch.setenv("LODESTAR_API_KEY", "sk-same-request-0001")
    settings = PluginSettings.load()
    settings.base_url, settings.models = "http://127.0.0.1:9/v1", {"planner": "big-model", "executor": "",
                                                                   "verifier": ""}
    settings.temperature, settings.max_tokens, settings.max_rounds = 0.2, 50_000, 2
    settings.save()
    for spec in case.layers:
        dock.layers.set_role(layers[spec.name].id(), spec.role)
    dock.layers.set_favourable_low(layers[LOW].id(), True)
    dock.ui.questionEdit.setPlainText(QUESTION)
    dock.ui.backendCombo.setCurrentIndex(dock.ui.backendCombo.findData("openai"))
    deposits = QgsVectorLayer(str(case.deposits), "known deposits", "ogr")
    QgsProject.instance().addMapLayer(deposits)
    dock.map_options.set_deposits(deposits)
    dock.map_options.set_calibration("wofe")
    dock.ui.areaShareSpin.setValue(7.5)
    dock.ui.unitsEdit.setText(UNITS)
    from_dock = dock.build_request()

    rows = dock.layers.checked_rows()
    from_analyze = _analyze_request(run, monkeypatch, {
        "RASTERS": [row["id"] for row in rows], "ROLES": ",".join(row["combo"].currentData() for row in rows),
        "FAVOURABLE_LOW": LOW, "QUESTION": QUESTION, "BACKEND": 1, "BASE_URL": "http://127.0.0.1:9/v1",
        "PLANNER_MODEL": "big-model", "TEMPERATURE": 0.2, "MAX_TOKENS": 50_000, "MAX_ROUNDS": 2,
        "DEPOSITS": deposits.id(), "CALIBRATE": 1, "AREA_SHARE": 7.5, "FAVOURABLE_UNITS": UNITS})

    for field in dataclasses.fields(AnalysisRequest):
        if field.name not in DIFFERENT_BY_DESIGN:
            assert getattr(from_dock, field.name) == getattr(from_analyze, field.name), field.name
    # what the two paths used to disagree on
    assert from_analyze.choices == {"A": "Argillic or phyllic (clay, sericite)", "B": "Propylitic (chlorite, epidote)",
                                    "C": "Silicification", "D": "None"}
    assert from_analyze.settings.models == {"planner": "big-model", "executor": "big-model", "verifier": "big-model"}
    assert from_analyze.settings.max_tokens == 50_000 and from_analyze.settings.api_key == "sk-same-request-0001"
    assert {s.name: s.favourable for s in from_analyze.layers}[LOW] == "low"
    assert len(from_dock.layers) == len(case.layers)
    assert (from_analyze.deposits, from_analyze.calibrate, from_analyze.area_share) == (case.deposits, "wofe", 0.075)
    assert from_analyze.favourable_units == {"geological map": ["monzonite porphyry", "2"]}
