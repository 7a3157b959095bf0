"""The executor's zoom as a tool of the chain: `evidence_view` writes views and measures the layers in them."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from lodestar.plugin.raster_io import RasterSet
from lodestar.plugin.reason.contract import TOOLSET, ToolCall
from lodestar.plugin.reason.knowledge import retrieve
from lodestar.plugin.reason.toolbox import run_tool
from lodestar.plugin.reason.workspace import Workspace
from lodestar.plugin.request.case import read_case

SAMPLE = Path(__file__).resolve().parents[3] / "resources" / "sample" / "porphyry-demo"
ALOH = "ASTER AlOH (sericite) index"


@pytest.fixture
def ws(tmp_path):
    case = read_case(SAMPLE)
    (tmp_path / "evidence").mkdir()
    return Workspace(case.question, case.choices, RasterSet(case.layers), tmp_path / "evidence",
                     knowledge=retrieve(case.question, [s.role for s in case.layers]))


def test_a_zoom_writes_a_view_and_measures_the_layer_against_itself(ws):
    assert "evidence_view" in TOOLSET
    values = ws.raster_set.read(ALOH)[0]
    row, col = np.unravel_index(int(np.argmax(values.filled(-np.inf))), values.shape)
    x, y = ws.raster_set.grid.pixel_to_map(col + 0.5, row + 0.5)
    half = 10 * abs(ws.raster_set.grid.pixel_size[0])
    run = run_tool(ws, 3, ToolCall("evidence_view", [ALOH], params={"bbox": [x - half, y - half, x + half, y + half]}))
    assert run.error == "" and len(run.zones) == 0
    assert run.stats["views"] == ["step03_view1.png"] and (ws.evidence_dir / "step03_view1.png").read_bytes()[:4] == \
        b"\x89PNG"
    measured = run.stats["layers"][ALOH]
    assert measured["view_median"] > measured["layer_median"] and measured["percentile"] > 90  # the anomaly's peak
    broad = run_tool(ws, 4, ToolCall("evidence_view", [ALOH], params={"center": [0.5, 0.5], "zoom": 1.0}))
    assert broad.stats["layers"][ALOH]["percentile"] < measured["percentile"]


def test_a_zoom_without_a_layer_is_an_error_the_executor_reads(ws):
    run = run_tool(ws, 3, ToolCall("evidence_view", [], params={}))
    assert run.error.startswith("evidence_view failed: evidence_view needs one to four layers")
