"""lodestar:analyze exits non-zero with one clear line for every refused input and every model server that
refuses or fails, after writing the run record of every run that reached the engine (issue 13, items 4, 5 and
the 'Done when'); replays through qgis_process write the same bytes in every format (item 7)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from lodestar.tests.fakes.openai_server import FakeOpenAIServer, Reply
from lodestar.tests.fakes.sta_cot_scripts import PLAN, copy_sample

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-reliability-SECRET-4242"


def _outputs(folder: Path, ext: str = "gpkg") -> dict:
    return {"OUTPUT_ZONES": str(folder / f"zones.{ext}"), "OUTPUT_NODES": str(folder / f"nodes.{ext}"),
            "OUTPUT_EDGES": str(folder / f"edges.{ext}"), "OUTPUT_PROSPECTIVITY": str(folder / f"prospectivity.{ext}"),
            "OUTPUT_REPORT": str(folder / "report.html"), "OUTPUT_RECORD": str(folder / "record.json"),
            "OUTPUT_FAVOURABILITY": str(folder / "favourability.tif"), "OUTPUT_WEIGHTS": str(folder / "weights.csv")}


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    return copy_sample(tmp_path_factory.mktemp("sample")) / "case.json"


def _openai(server) -> dict:
    return {"BACKEND": 1, "BASE_URL": server.base_url, "API_KEY": KEY, "PLANNER_MODEL": "m", "EXECUTOR_MODEL": "m",
            "VERIFIER_MODEL": "m"}


@pytest.mark.parametrize("status,words", [
    (401, "invalid api key"), (403, "model not allowed"), (404, "no such model"), (500, "internal error")])
def test_a_refusing_server_is_a_non_zero_exit_with_one_line_and_a_record(run, case, tmp_path, status, words):
    from qgis.core import QgsProcessingException

    reply = Reply(status=status, error=f"fake: {words}", headers={"Retry-After": "0"})
    with FakeOpenAIServer(lambda request: reply) as server:
        with pytest.raises(QgsProcessingException) as caught:
            run("lodestar:analyze", {"CASE": str(case), **_openai(server), **_outputs(tmp_path)})
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("The model server failed, so the run could not finish: ")
    assert f"HTTP {status}" in message and words in message
    assert "budget" not in message.lower() and KEY not in message
    assert message.endswith(f"The run record is {tmp_path / 'record.json'}; the report is {tmp_path / 'report.html'}.")
    record = json.loads((tmp_path / "record.json").read_text(encoding="utf-8"))
    assert record["result"]["answer"] == "Failed" and f"HTTP {status}" in record["result"]["stopped"]
    assert record["trace"][0]["server"] is True
    assert KEY not in (tmp_path / "record.json").read_text(encoding="utf-8")
    assert not (tmp_path / "zones.gpkg").exists() and not (tmp_path / "favourability.tif").exists()


def test_a_server_that_refuses_mid_run_is_a_failure_not_a_spent_budget(run, case, tmp_path):
    from qgis.core import QgsProcessingException

    replies = [Reply(content=PLAN)]

    def script(request):
        return replies.pop(0) if replies else Reply(status=403, error="fake: key revoked")

    with FakeOpenAIServer(script) as server:
        with pytest.raises(QgsProcessingException) as caught:
            run("lodestar:analyze", {"CASE": str(case), **_openai(server), **_outputs(tmp_path)})
        sent = len(server.chat_requests)
    message = str(caught.value)
    assert "HTTP 403" in message and "key revoked" in message and "budget" not in message.lower()
    record = json.loads((tmp_path / "record.json").read_text(encoding="utf-8"))
    assert record["trace"][0]["method"] == "plan" and "value" in record["trace"][0]  # the plan it paid for is kept
    assert sent >= 2 and record["usage"]["planner"]["calls"] >= 1


def test_an_output_folder_named_like_a_file_is_refused_before_any_model_call(run, case, tmp_path):
    from qgis.core import QgsProcessingException

    (tmp_path / "prospectivity.gpkg").mkdir()
    with FakeOpenAIServer(lambda request: Reply(status=500)) as server:
        with pytest.raises(QgsProcessingException) as caught:
            run("lodestar:analyze", {"CASE": str(case), **_openai(server), **_outputs(tmp_path)})
        assert server.chat_requests == []
    assert str(caught.value) == (
        f"OUTPUT_PROSPECTIVITY (Prospectivity polygons): {tmp_path / 'prospectivity.gpkg'} is a folder, not a file; "
        f"give a file name (e.g. {tmp_path / 'prospectivity.gpkg' / 'prospectivity.gpkg'}) or remove or rename the "
        "folder.")
    assert not (tmp_path / "record.json").exists() and not (tmp_path / "zones.gpkg").exists()


def test_a_run_that_fails_in_the_engine_writes_the_record_to_its_destination(run, case, tmp_path, monkeypatch):
    from qgis.core import QgsProcessingException

    from lodestar.plugin.runs import run as engine_run

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(engine_run, "map_prospectivity", broken)
    with pytest.raises(QgsProcessingException) as caught:
        run("lodestar:analyze", {"CASE": str(case), **_outputs(tmp_path)})
    assert str(caught.value) == ("Unexpected error: OSError: [Errno 28] No space left on device The run record is "
                                 f"{tmp_path / 'record.json'}.")
    record = json.loads((tmp_path / "record.json").read_text(encoding="utf-8"))
    assert record["result"]["error"] == "Unexpected error: OSError: [Errno 28] No space left on device"
    assert len(record["trace"]) > 5


# ------------------------------------------------------------------------------------------ real qgis_process
def _qgis_process(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "scripts" / "qgis_process.sh"), "run", "lodestar:analyze", "--", *args],
                          capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})})


def _error_lines(done: subprocess.CompletedProcess) -> list[str]:
    return [line for line in (done.stdout + done.stderr).splitlines() if line.startswith("ERROR:")]


def test_qgis_process_exits_non_zero_on_a_refusing_server(case, tmp_path):
    """(A refused input takes the same way out: a QgsProcessingException, tested in-process above.)"""
    with FakeOpenAIServer(lambda request: Reply(status=401, error="fake: invalid api key")) as server:
        done = _qgis_process(f"CASE={case}", "BACKEND=1", f"BASE_URL={server.base_url}", "PLANNER_MODEL=m",
                             "EXECUTOR_MODEL=m", "VERIFIER_MODEL=m",
                             *(f"{k}={v}" for k, v in _outputs(tmp_path / "a").items()),
                             env={"LODESTAR_API_KEY": KEY})
    assert done.returncode != 0, done.stdout[-2000:]
    [line] = [text for text in _error_lines(done) if "model server" in text]
    assert "HTTP 401" in line and "invalid api key" in line and str(tmp_path / "a" / "record.json") in line
    assert json.loads((tmp_path / "a" / "record.json").read_text(encoding="utf-8"))["result"]["stopped"]
    assert KEY not in done.stdout + done.stderr



def _same_bytes(first: Path, second: Path) -> int:
    compared = 0
    for path in sorted(first.iterdir()):
        if path.name in ("record.json", "report.html"):  # their timings and 'replayed_from' say what happened
            continue
        assert path.read_bytes() == (second / path.name).read_bytes(), path.name
        compared += 1
    return compared


def test_a_replay_through_qgis_process_writes_the_same_geopackage_bytes(case, tmp_path):
    first = _qgis_process(f"CASE={case}", *(f"{k}={v}" for k, v in _outputs(tmp_path / "a").items()))
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    again = _qgis_process(f"REPLAY={tmp_path / 'a' / 'record.json'}",
                          *(f"{k}={v}" for k, v in _outputs(tmp_path / "b").items()))
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert _same_bytes(tmp_path / "a", tmp_path / "b") == 4 + 2  # four GeoPackages, the surface, the weights


def test_a_replay_writes_the_same_shapefile_bytes(run, case, tmp_path):
    run("lodestar:analyze", {"CASE": str(case), **_outputs(tmp_path / "a", "shp")})
    run("lodestar:analyze", {"REPLAY": str(tmp_path / "a" / "record.json"), **_outputs(tmp_path / "b", "shp")})
    # .shp .shx .dbf .prj .cpg of four layers, the targets' fields whole beside their Shapefile (a why over 254 bytes)
    assert _same_bytes(tmp_path / "a", tmp_path / "b") == 4 * 5 + 2 + 1
    assert (tmp_path / "b" / "prospectivity_fields.csv").is_file()
