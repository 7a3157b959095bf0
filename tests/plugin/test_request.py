"""The one request builder (plugin/request.py): choices, back-end fallbacks, layer specs, messages that say where."""
from __future__ import annotations

from pathlib import Path

import pytest

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.raster_io import LayerSpec
from lodestar.plugin.request import BackendValues, backend_problem, backend_settings, build_request, evidence_spec

ALTERATION = ("Which hydrothermal alteration is present? Answer: A. Argillic or phyllic (clay, sericite) "
              "B. Propylitic (chlorite, epidote) C. Silicification D. None.")


def _layers(tmp_path):
    return [LayerSpec(tmp_path / "aloh.tif", "hydrothermal_alteration", "aloh", "high")]


def test_choices_come_from_the_question_unless_given(tmp_path):
    request = build_request(_layers(tmp_path), f"  {ALTERATION} ", tmp_path / "run", BackendValues())
    assert request.question == ALTERATION
    assert request.choices == {"A": "Argillic or phyllic (clay, sericite)", "B": "Propylitic (chlorite, epidote)",
                               "C": "Silicification", "D": "None"}
    assert build_request(_layers(tmp_path), "Any gold?", tmp_path, BackendValues()).choices == {"A": "Yes", "B": "No"}
    given = build_request(_layers(tmp_path), ALTERATION, tmp_path, BackendValues(), choices={"A": "Yes", "B": "No"})
    assert given.choices == {"A": "Yes", "B": "No"}


def test_request_fields(tmp_path):
    request = build_request(_layers(tmp_path), "Any gold?", str(tmp_path / "run"), BackendValues(temperature=0.3),
                            max_rounds="4", case_id="c1", deposits=str(tmp_path / "d.geojson"), refine_with_sam=True,
                            sam_checkpoint=str(tmp_path / "sam.pth"))
    assert request.output_dir == tmp_path / "run" and request.max_rounds == 4 and request.case_id == "c1"
    assert request.deposits == tmp_path / "d.geojson"
    assert request.refine_with_sam and request.sam_checkpoint == tmp_path / "sam.pth"
    assert (request.settings.backend, request.settings.temperature) == ("offline", 0.3)
    unrefined = build_request(_layers(tmp_path), "Any gold?", tmp_path, BackendValues(), sam_checkpoint="sam.pth")
    assert not unrefined.refine_with_sam and unrefined.sam_checkpoint is None


def test_model_server_settings_fall_back_to_the_planner():
    values = BackendValues("openai", " http://localhost:9/v1 ", " sk-key-0001 ", {"planner": " big ", "verifier": "v"},
                           0.2, 5000)
    settings = backend_settings(values)
    assert (settings.base_url, settings.api_key, settings.max_tokens) == ("http://localhost:9/v1", "sk-key-0001", 5000)
    assert settings.models == {"planner": "big", "executor": "big", "verifier": "v"}
    offline = backend_settings(BackendValues(base_url="http://x", models={"planner": "p"}, temperature=0.1))
    assert (offline.backend, offline.base_url, offline.models["planner"], offline.max_tokens) == ("offline", "", "",
                                                                                                  400_000)


@pytest.mark.parametrize("values,message", [
    (BackendValues("openai"), "Set the model server's endpoint base URL in BASE_URL."),
    (BackendValues("openai", "http://x", models={"executor": "e"}), "Name the planner model in PLANNER_MODEL"),
    (BackendValues("cloud"), "Unknown back-end 'cloud'; choose offline or openai."),
])
def test_backend_messages_name_where_to_fix(values, message):
    where = {"base_url": "in BASE_URL", "planner": "in PLANNER_MODEL"}
    assert backend_problem(values, where).startswith(message)
    with pytest.raises(LodestarError, match="^" + message.replace("(", r"\(").replace(".", r"\.")):
        backend_settings(values, where)


def test_missing_question_and_checkpoint_say_where(tmp_path):
    where = {"question": "in QUESTION", "sam_checkpoint": "in SAM_CHECKPOINT"}
    with pytest.raises(LodestarError, match="Ask a question in QUESTION"):
        build_request(_layers(tmp_path), "  ", tmp_path, BackendValues(), where=where)
    with pytest.raises(LodestarError, match="checkpoint file in SAM_CHECKPOINT"):
        build_request(_layers(tmp_path), "Gold?", tmp_path, BackendValues(), refine_with_sam=True, where=where)


def test_evidence_spec_reads_legend_and_distance_layers(tmp_path):
    (tmp_path / "geology_legend.csv").write_text("value,name\n1,granite\n", encoding="utf-8")
    geology = evidence_spec(tmp_path / "geology.tif", "geological_map", "geology")
    assert geology.legend == tmp_path / "geology_legend.csv" and geology.favourable == "high"
    distance = evidence_spec(tmp_path / "falha_rcl.tif", "structure", "Distance to faults")
    assert distance.favourable == "low" and distance.legend is None
    assert evidence_spec(tmp_path / "fault_dist.tif", "structure", "faults").favourable == "low"
    assert evidence_spec(tmp_path / "dist_grid.tif", "geophysics", "distance").favourable == "high"
    assert evidence_spec(Path("fault_dist.tif"), "structure", "faults", "high").favourable == "high"
    with pytest.raises(LodestarError, match="Unknown layer role 'gold'"):
        evidence_spec(tmp_path / "x.tif", "gold", "x")
