"""Evidence that cannot speak, outputs of two runs at once, cancel and the layer limit on a large case (issue 46,
items 1, 8 and 9): a layer holding one value over the data, or a critical role no step looked at, makes its
items untestable, never "absent", and no "No" is verified on it; the plan examines every role before it repeats
one; two runs writing the same output paths leave one run's complete set; a SIGINT on a case at the layer limit
stops within a second, and a case over the limit is refused at once with one line."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import rasterio
from rasterio.transform import from_origin

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.raster_io import LayerSpec, RasterSet
from lodestar.plugin.reason.contract import INSUFFICIENT, Judgement, PlanStep, Roles, ToolCall, Verdict, empty_usage
from lodestar.plugin.reason.knowledge import retrieve
from lodestar.plugin.reason.loop import Engine
from lodestar.plugin.reason.workspace import Workspace
from lodestar.plugin.request.case import read_case
from lodestar.plugin.runs import run as run_module
from lodestar.tests.fakes.sta_cot_scripts import ALOH, copy_sample

ROOT = Path(__file__).resolve().parents[2]
MAX_LAYERS = getattr(run_module, "MAX_LAYERS", 64)
ROLES = ("hydrothermal_alteration", "silicification", "propylitic_alteration", "iron_oxide")


def _sample(folder: Path) -> Path:
    return copy_sample(folder)


def _run_case(case_json: Path, out: Path):
    case = read_case(case_json)
    return run_analysis(AnalysisRequest(case.layers, case.question, out, choices=case.choices))


def _rewrite(path: Path, values: np.ndarray, **changes) -> None:
    with rasterio.open(path) as ds:
        profile = dict(ds.profile, **changes)
    with rasterio.open(path, "w", **profile) as ds:
        ds.write(values.astype(profile["dtype"]), 1)


# ------------------------------------------------------------------------------- item 1: evidence that cannot speak
@pytest.mark.parametrize("how", ["flat", "one value where it holds data"])
def test_a_critical_layer_that_cannot_vary_makes_its_item_untestable_not_absent(tmp_path, how):
    """The sample case answers A; with its AlOH index (the critical phyllic core's only layer) flat, the run once
    answered 'B (No); verified after 1 round'. Now the core item cannot be tested, and the answer says why."""
    folder = _sample(tmp_path)
    with rasterio.open(folder / "aloh.tif") as ds:
        shape = (ds.height, ds.width)
    if how == "flat":
        _rewrite(folder / "aloh.tif", np.full(shape, 0.5))
        said = "holds a single value (0.5) over the data"
    else:  # an integer layer with a hole of no data: one value wherever it holds data
        values = np.full(shape, 7)
        values[: shape[0] // 3, : shape[1] // 3] = -1
        _rewrite(folder / "aloh.tif", values, dtype="int16", nodata=-1)
        said = "holds a single value (7) over the data"
    result = _run_case(folder / "case.json", tmp_path / "run")
    assert result.answer == INSUFFICIENT  # never "B" (No) on an item nothing could test
    assert not (result.answer == "B" and result.valid)
    notes = " ".join(result.notes)
    assert f"Warning: {ALOH} {said}" in notes  # said up front (lodestar:analyze prints "Warning:" notes)
    assert said in notes and "hydrothermal alteration" in notes
    rationale = result.verdicts[-1]["verdict"]["rationale"]
    assert "cannot be tested" in rationale and f"{ALOH} {said}" in rationale
    record = json.loads((tmp_path / "run" / "record.json").read_text(encoding="utf-8"))
    assert ALOH not in {name for step in record["plan"] for name in step["layers"]}  # no step spent on it
    assert next(layer for layer in record["layers"] if layer["name"] == ALOH)["silent"].startswith("holds a single")


def test_twelve_layers_of_one_role_leave_room_for_every_other_role(tmp_path):
    """Twelve AlOH layers once filled the 12-step plan: the partner roles were never examined and the answer was
    'B (No); verified' ('zoned alteration: missing'). The plan now examines every role before it repeats one,
    keeps its relation and integration steps, and groups the AlOH layers it has no step for."""
    folder = _sample(tmp_path)
    case = json.loads((folder / "case.json").read_text(encoding="utf-8"))
    aloh = next(layer for layer in case["layers"] if layer["path"] == "aloh.tif")
    copies = [f"AlOH scene {i}" for i in range(11)]
    for i, name in enumerate(copies):
        shutil.copy(folder / "aloh.tif", folder / f"aloh_{i}.tif")
        case["layers"].insert(0, dict(aloh, path=f"aloh_{i}.tif", name=name))  # listed first, as a user may
    (folder / "case.json").write_text(json.dumps(case), encoding="utf-8")
    result = _run_case(folder / "case.json", tmp_path / "run")
    record = json.loads((tmp_path / "run" / "record.json").read_text(encoding="utf-8"))
    plan = record["plan"]
    assert len(plan) <= 12 and [s["tool"] for s in plan[-2:]] == ["spatial_relations", "integrate_evidence"]
    roles = {layer["name"]: layer["role"] for layer in case["layers"]}
    examined = {roles[name] for step in plan for name in step["layers"]}
    assert examined == set(roles.values())  # every role given was looked at
    grouped = " ".join(step["layers_why"] for step in plan)
    left = [name for name in [*copies, ALOH] if name not in {n for s in plan for n in s["layers"]}]
    assert left and all(name in grouped for name in left)  # the AlOH layers without a step are named, grouped
    assert (result.answer, result.valid) == ("A", True)  # as the sample case itself answers


class _Scripted:
    """A planner examining only the layers it is given, and a verifier saying 'No' verified, the partner item
    (zoned alteration) unsupported: the verdict a model may give without looking at the partner's layers."""

    name = "scripted"

    def __init__(self, examined):
        self.examined = examined

    def plan(self, ws):
        steps = [PlanStep(i + 1, f"mark {name}", [name], "", "color_regions", "", "an anomaly",
                          {"method": "percentile", "percentile": 98.0, "max_regions": 3})
                 for i, name in enumerate(self.examined)]
        return steps + [PlanStep(len(steps) + 1, "relate", [], "", "spatial_relations", "", "coincidence", {})]

    def propose(self, ws, step, feedback, attempt):
        return ToolCall(step.tool, list(step.layers), dict(step.params))

    def observe(self, ws, step, outcome):
        return Judgement(f"{len(outcome.zones)} zones", "Yes" if outcome.zones else "No")

    def verify(self, ws, chain):
        return Verdict(True, "B", {}, {"phyllic_core": True, "zoned_alteration": False}, {},
                       "No partner alteration coincides with the core.")

    def localization_params(self, ws):
        return {}

    def usage(self):
        return empty_usage()

    def public_settings(self):
        return {"backend": self.name}

    def prompt_hashes(self):
        return {}


@pytest.mark.parametrize("examined,verified", [(("aloh",), False), (("aloh", "silica"), True)])
def test_a_no_resting_on_a_critical_role_no_step_looked_at_is_not_verified(tmp_path, examined, verified):
    """Whatever the back-end, a 'No' whose unsupported critical items no step could test is no answer: the run
    says which layers were never looked at. Once the partner's layer was examined, the same 'No' stands."""
    folder = tmp_path / "layers"
    folder.mkdir()
    rng = np.random.default_rng(3)
    rows, cols = np.mgrid[0:64, 0:64]
    layers = []
    for name, role, (x, y) in (("aloh", "hydrothermal_alteration", (20, 20)), ("silica", "silicification", (45, 45))):
        path = folder / f"{name}.tif"  # an anomaly on each, far apart: the partner does not coincide with the core
        values = 1.0 + 0.01 * rng.standard_normal((64, 64)) + 0.3 * np.exp(-((cols - x) ** 2 + (rows - y) ** 2) / 72)
        with rasterio.open(path, "w", driver="GTiff", width=64, height=64, count=1, dtype="float32",
                           crs="EPSG:32612", transform=from_origin(500_000, 4_000_000, 30, 30)) as ds:
            ds.write(values.astype("float32"), 1)
        layers.append(LayerSpec(path, role, name))
    question = "Can porphyry copper deposits be detected? A. Yes B. No"
    ws = Workspace(question, {"A": "Yes", "B": "No"}, RasterSet(layers), tmp_path / "evidence",
                   knowledge=retrieve(question, [s.role for s in layers]))
    reasoner = _Scripted(examined)
    outcome = Engine(Roles(reasoner, reasoner, reasoner), ws, max_rounds=2).run()
    if verified:
        assert (outcome.answer, outcome.valid) == ("B", True)
    else:
        assert outcome.answer == INSUFFICIENT and outcome.answer != "B"
        assert any("no step looked at: silica" in note for note in outcome.notes)


# -------------------------------------------------------------------------------- item 8: two runs, one output set
def _outputs(folder: Path) -> dict:
    return {"OUTPUT_ZONES": str(folder / "zones.gpkg"), "OUTPUT_NODES": str(folder / "nodes.gpkg"),
            "OUTPUT_EDGES": str(folder / "edges.gpkg"), "OUTPUT_PROSPECTIVITY": str(folder / "prospectivity.gpkg"),
            "OUTPUT_REPORT": str(folder / "report.html"), "OUTPUT_RECORD": str(folder / "record.json"),
            "OUTPUT_FAVOURABILITY": str(folder / "favourability.tif"), "OUTPUT_WEIGHTS": str(folder / "weights.csv")}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_two_runs_writing_the_same_outputs_leave_one_runs_complete_set(run, tmp_path, monkeypatch):
    """Run B starts and finishes while run A is writing its outputs to the same paths (the interleaving that once
    left zones.gpkg from one run and the record, report, surface and weights from the other): every output in the
    folder is from one run, the one whose record is there."""
    from lodestar.processing import alg_analyze

    first, second = _sample(tmp_path / "a"), _sample(tmp_path / "b")
    with rasterio.open(second / "aloh.tif") as ds:  # a different scene: other zones, surface and record
        flipped = ds.read(1)[:, ::-1]
    _rewrite(second / "aloh.tif", flipped)
    case = json.loads((second / "case.json").read_text(encoding="utf-8"))
    (second / "case.json").write_text(json.dumps(dict(case, id="porphyry-demo-flipped")), encoding="utf-8")
    target = tmp_path / "shared"
    outputs = _outputs(target)
    styled = alg_analyze.style_output
    interleaved = []

    def style_then_let_the_other_run_finish(context, path, style):
        styled(context, path, style)
        if not interleaved:  # run A has written its first output: run B runs whole, on the same paths
            interleaved.append(path)
            run("lodestar:analyze", {"CASE": str(second / "case.json"), **outputs})

    monkeypatch.setattr(alg_analyze, "style_output", style_then_let_the_other_run_finish)
    run("lodestar:analyze", {"CASE": str(first / "case.json"), **outputs})
    assert interleaved  # run B did run in the middle of run A's writing
    record = json.loads((target / "record.json").read_text(encoding="utf-8"))
    kept = {"zones": "zones.gpkg", "nodes": "nodes.gpkg", "edges": "edges.gpkg",
            "prospectivity": "prospectivity.gpkg", "favourability": "favourability.tif", "weights": "weights.csv"}
    mixed = [name for name, file in kept.items() if _sha(target / file) != record["outputs"][name]["sha256"]]
    assert not mixed, f"{mixed} come from the other run than record.json"
    report = (target / "report.html").read_text(encoding="utf-8")
    # the report lists the inputs' checksums: the AlOH scenes of the two runs differ
    shas = {_sha(folder / "aloh.tif")[:12] for folder in (first, second)}
    mine = next(i["sha256"][:12] for i in record["inputs"] if i["sha256"][:12] in shas)
    assert mine in report and not (shas - {mine}) & set(re.findall(r"[0-9a-f]{12}", report))
    assert not [p for p in target.iterdir() if p.name.startswith(".")]  # no staging folder left behind


# ---------------------------------------------------------------------------------- item 9: cancel and the limit
def _many_layers(folder: Path, count: int, size: int) -> Path:
    """A case of `count` noise layers of four alteration roles, `size` x `size` pixels each."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    layers = []
    for i in range(count):
        with rasterio.open(folder / f"l{i}.tif", "w", driver="GTiff", width=size, height=size, count=1,
                           dtype="float32", crs="EPSG:32612", transform=from_origin(500_000, 4_000_000, 30, 30)) as ds:
            ds.write(rng.normal(0.0, 1.0, (size, size)).astype("float32"), 1)
        layers.append({"path": f"l{i}.tif", "role": ROLES[i % len(ROLES)], "name": f"layer {i}"})
    case = {"format": "lodestar-case/1", "id": "many", "question": "Can porphyry copper deposits be detected here? "
            "Answer: A. Yes B. No.", "choices": {"A": "Yes", "B": "No"}, "layers": layers}
    (folder / "case.json").write_text(json.dumps(case), encoding="utf-8")
    return folder / "case.json"


@pytest.mark.timing
def test_sigint_to_qgis_process_on_a_case_at_the_layer_limit_stops_within_a_second(tmp_path):
    """Ctrl+C (SIGINT) to `qgis_process run lodestar:analyze` while the offline verifier weighs as many layers as a
    run takes: its scan of places where three layers stand out together once ran for seconds to minutes without a
    cancel check, and qgis_process hands a SIGINT to the run only when the progress moves (1,006 layers stopped
    after 200 s). The run stops within a second, exits non-zero, and writes no output."""
    case = _many_layers(tmp_path / "case", MAX_LAYERS, 128)
    out = tmp_path / "out"
    env = dict(os.environ, LODESTAR_QGIS_HOME=str(tmp_path / "qgis"), QT_QPA_PLATFORM="offscreen")
    line_buffered = ["stdbuf", "-oL", "-eL"] if shutil.which("stdbuf") else []
    child = subprocess.Popen([*line_buffered, str(ROOT / "scripts" / "qgis_process.sh"), "run", "lodestar:analyze",
                              "--", f"CASE={case}", *(f"{k}={v}" for k, v in _outputs(out).items())],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    lines: list = []
    verifying = threading.Event()

    def read():
        for line in child.stdout:
            lines.append((time.monotonic(), line.rstrip()))
            if ", evidence integration:" in line:  # the chain is built: the verifier's round starts now
                verifying.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert verifying.wait(120), "\n".join(text for _, text in lines[-20:])
        time.sleep(0.3)  # inside the verifier's round
        asked = time.monotonic()
        child.send_signal(signal.SIGINT)
        child.wait(60)
        exited = time.monotonic()
    finally:
        if child.poll() is None:
            child.kill()
    reader.join(5)
    stopped = [when for when, text in lines if when >= asked and "Cancelled by the user." in text]
    assert stopped, "\n".join(text for _, text in lines[-20:])
    assert stopped[0] - asked < 1.0, f"stopped {stopped[0] - asked:.1f} s after the SIGINT"
    assert child.returncode != 0 and exited - asked < 5.0
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.timing
def test_a_case_over_the_layer_limit_is_refused_at_once_with_one_line(run, tmp_path):
    """A case of more layers than a run takes (10,006 once ran for over 400 s): lodestar:analyze exits non-zero
    with one line naming the count and the limit, before any layer is read or any output written."""
    from qgis.core import QgsProcessingException

    case = _many_layers(tmp_path / "case", MAX_LAYERS + 1, 8)
    started = time.monotonic()
    with pytest.raises(QgsProcessingException) as caught:
        run("lodestar:analyze", {"CASE": str(case), **_outputs(tmp_path / "out")})
    message = str(caught.value)
    assert "\n" not in message.strip()
    assert f"{MAX_LAYERS + 1} layers" in message and f"at most {MAX_LAYERS}" in message
    assert time.monotonic() - started < 10
    assert not (tmp_path / "out").exists()
