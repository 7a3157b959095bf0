"""The STA-CoT engine: the offline back-end end to end on cases with known answers, and the loop's
controller retries, refinement, vote and failure paths driven by a scripted in-memory reasoner."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import rasterio
from affine import Affine

from lodestar.models import run_analysis
from lodestar.models.offline.verifier import ROUTES
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.errors import Cancelled, LodestarError
from lodestar.plugin.labels import plural, zone_label
from lodestar.plugin.map.core_target import core_outline
from lodestar.plugin.progress import Progress
from lodestar.plugin.raster_io import LayerSpec, RasterSet
from lodestar.plugin.reason.contract import (
    INSUFFICIENT,
    BudgetExhausted,
    Judgement,
    PlanStep,
    ReasonerError,
    Roles,
    ToolCall,
    Verdict,
    empty_usage,
)
from lodestar.plugin.reason.knowledge import retrieve
from lodestar.plugin.reason.loop import FAILED, Engine, validate_plan
from lodestar.plugin.reason.workspace import Workspace
from lodestar.plugin.request.case import read_case

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "resources" / "sample" / "porphyry-demo"


def _synthetic():
    sys.path.insert(0, str(ROOT / "scripts"))
    import synthetic_cases

    return synthetic_cases


# ---------------------------------------------------------------------------------------------------- fixtures
def _write_index(path: Path, centre=(40, 40), amplitude=0.3, size=80, seed=1):
    rng = np.random.default_rng(seed)
    rows, cols = np.mgrid[0:size, 0:size]
    value = 1.0 + 0.01 * rng.standard_normal((size, size))
    if amplitude:
        value += amplitude * np.exp(-((cols - centre[0]) ** 2 + (rows - centre[1]) ** 2) / (2 * 6.0 ** 2))
    profile = dict(driver="GTiff", width=size, height=size, count=1, dtype="float32", crs="EPSG:32612",
                   transform=Affine(30, 0, 500000, 0, -30, 4000000), nodata=-9999)
    with rasterio.open(path, "w", **profile) as ds:
        ds.write(value.astype("float32"), 1)
    return path


@pytest.fixture(scope="module")
def two_layers(tmp_path_factory):
    folder = tmp_path_factory.mktemp("layers")
    return [LayerSpec(_write_index(folder / "aloh.tif"), "hydrothermal_alteration", "aloh"),
            LayerSpec(_write_index(folder / "silica.tif", seed=2), "silicification", "silica")]


def _workspace(layers, tmp_path, question="Can porphyry copper deposits be detected? A. Yes B. No"):
    raster_set = RasterSet(layers)
    return Workspace(question, {"A": "Yes", "B": "No"}, raster_set, tmp_path / "evidence",
                     knowledge=retrieve(question, [s.role for s in layers]))


class Scripted:
    """A reasoner answering from scripts; records what the loop passed to it."""

    name = "scripted"

    def __init__(self, plan, calls=None, verdicts=None, judgements=None, fail=None):
        self._plan = plan
        self._calls = calls or {}  # step index -> list of ToolCall per attempt (last one repeats)
        self._verdicts = list(verdicts or [])
        self._judgements = judgements or {}
        self._fail = fail or {}  # method -> exception to raise
        self.proposals = []  # (step, feedback, attempt)
        self.verified = 0
        self.last_rounds = []  # ws.last_round at each verify call

    def plan(self, ws):
        return [PlanStep.from_dict(s.to_dict()) for s in self._plan]

    def propose(self, ws, step, feedback, attempt):
        if "propose" in self._fail:
            raise self._fail["propose"]
        self.proposals.append((step.index, feedback, attempt))
        calls = self._calls.get(step.index) or [ToolCall(step.tool, list(step.layers), dict(step.params))]
        return calls[min(attempt, len(calls)) - 1]

    def observe(self, ws, step, outcome):
        return self._judgements.get(step.index, Judgement(f"{len(outcome.zones)} zones", "Yes" if outcome.zones
                                                          else "No"))

    def verify(self, ws, chain):
        if "verify" in self._fail:
            raise self._fail["verify"]
        self.verified += 1
        self.last_rounds.append(ws.last_round)
        return self._verdicts.pop(0)

    def localization_params(self, ws):
        return {"important_areas_count": 3}

    def usage(self):
        return empty_usage()

    def public_settings(self):
        return {"backend": self.name}

    def prompt_hashes(self):
        return {}


def _steps(layers=("aloh", "silica")):
    steps = [PlanStep(i + 1, f"mark {name}", [name], "", "color_regions", "", "an anomaly",
                      {"method": "percentile", "percentile": 98.0, "max_regions": 3}) for i, name in enumerate(layers)]
    steps.append(PlanStep(len(steps) + 1, "relate", [], "", "spatial_relations", "", "coincidence", {}))
    return steps


def _engine(reasoner, ws, **kwargs):
    return Engine(Roles(reasoner, reasoner, reasoner), ws, **kwargs)


# ------------------------------------------------------------------------------------------ scripted loop logic
def test_clean_chain_is_accepted_in_one_round(two_layers, tmp_path):
    ws = _workspace(two_layers, tmp_path)
    reasoner = Scripted(_steps(), verdicts=[Verdict(True, "A")])
    outcome = _engine(reasoner, ws).run()
    assert (outcome.answer, outcome.valid, outcome.voted, outcome.rounds) == ("A", True, False, 1)
    assert [n.step.index for n in ws.chain] == [1, 2, 3]
    # each anomaly is one compact zone over the Gaussian at pixel (40, 40): map centre 501215, 3998785
    for index in (1, 2):
        zones = ws.zones_of(index)
        assert len(zones) == 1
        centre = zones.geometry.iloc[0].centroid
        assert abs(centre.x - 501215) < 45 and abs(centre.y - 3998785) < 45
    relate = ws.node(3).observation
    assert sorted(relate.zone_ids) == ["s1:aloh:1", "s2:silica:1"]
    assert relate.stats["multi_role_components"] == 1
    assert Path(ws.node(1).observation.evidence_png).exists()


def test_rejection_reexecutes_named_step_then_accepts(two_layers, tmp_path):
    ws = _workspace(two_layers, tmp_path)
    reasoner = Scripted(_steps(), verdicts=[Verdict(False, "B", {2: "Use a stricter threshold on silica."}),
                                            Verdict(True, "A")])
    events = []
    outcome = _engine(reasoner, ws, emit=events.append).run()
    assert (outcome.answer, outcome.valid, outcome.rounds) == ("A", True, 2)
    assert outcome.candidates == [(1, "B"), (2, "A")]
    # step 2 re-executed with the verifier's feedback, then its dependent relation step 3 (not step 1)
    assert outcome.verdicts[0]["reexecuted"] == [2, 3]
    assert (2, "Use a stricter threshold on silica.", 1) in reasoner.proposals
    assert [p[0] for p in reasoner.proposals] == [1, 2, 3, 2, 3]
    kinds = [e["kind"] for e in events]
    assert kinds[0] == "plan" and kinds.count("verdict") == 2 and kinds[-1] == "usage"


def test_k_failing_rounds_end_in_majority_vote(two_layers, tmp_path):
    ws = _workspace(two_layers, tmp_path)
    verdicts = [Verdict(False, "A", {1: "redo"}), Verdict(False, "B", {1: "redo"}), Verdict(False, "B", {1: "redo"})]
    reasoner = Scripted(_steps(), verdicts=verdicts)
    events = []
    outcome = _engine(reasoner, ws, max_rounds=3, emit=events.append).run()
    assert (outcome.answer, outcome.valid, outcome.voted, outcome.rounds) == ("B", False, True, 3)
    assert outcome.votes == {"A": 1, "B": 2}
    # repairs after rounds 1 and 2 only: the last round's repairs would never be verified
    assert [v["reexecuted"] for v in outcome.verdicts] == [[1, 3], [1, 3], []]
    assert reasoner.last_rounds == [False, False, True]  # the verifier is told which verdict is the last
    vote = [e for e in events if e["kind"] == "vote"][0]
    assert vote["counts"] == {"A": 1, "B": 2} and vote["answer"] == "B"


def test_vote_tie_goes_to_the_latest_round(two_layers, tmp_path):
    ws = _workspace(two_layers, tmp_path)
    reasoner = Scripted(_steps(), verdicts=[Verdict(False, "B", {1: "redo"}), Verdict(False, "A", {})])
    outcome = _engine(reasoner, ws, max_rounds=2).run()
    assert (outcome.answer, outcome.voted, outcome.votes) == ("A", True, {"A": 1, "B": 1})


def test_no_candidate_answer_is_failed(two_layers, tmp_path):
    ws = _workspace(two_layers, tmp_path)
    reasoner = Scripted(_steps(), verdicts=[Verdict(False, None), Verdict(False, "Z")])
    outcome = _engine(reasoner, ws, max_rounds=2).run()
    assert (outcome.answer, outcome.valid, outcome.voted) == (FAILED, False, False)
    assert outcome.candidates == []  # "Z" is not a choice: no candidate


def test_controller_retries_with_escalating_feedback(two_layers, tmp_path):
    ws = _workspace(two_layers, tmp_path)
    step = PlanStep(1, "mark by eye", ["aloh"], "", "mark_boxes", "", "the anomaly", {})
    too_large = ToolCall("mark_boxes", ["aloh"], boxes=[[0.1, 0.1, 0.8, 0.8]], locations=["center"])
    misplaced = ToolCall("mark_boxes", ["aloh"], boxes=[[0.55, 0.55, 0.75, 0.75]], locations=["top-left"])
    good = ToolCall("mark_boxes", ["aloh"], boxes=[[0.55, 0.55, 0.75, 0.75]], locations=["bottom-right"])
    reasoner = Scripted([step], calls={1: [too_large, misplaced, good]}, verdicts=[Verdict(True, "A")])
    _engine(reasoner, ws).run()
    obs = ws.node(1).observation
    assert obs.attempts == 3
    assert [v["ok"] for v in obs.controller] == [False, False, True]
    assert [e["code"] for e in obs.controller[0]["errors"]] == ["too_large"]
    assert [e["code"] for e in obs.controller[1]["errors"]] == ["location_mismatch"]
    feedback = [p[1] for p in reasoner.proposals]
    assert feedback[0] == "" and "too large" in feedback[1].lower()
    assert "(0, 0)" in feedback[2] or "top-left" in feedback[2].lower()
    zone = ws.zones_of(1).geometry.iloc[0]
    # [0.55, 0.55, 0.75, 0.75] of the 2400 m extent: x 501320-501800, y 3998200-3998680
    assert tuple(round(v) for v in zone.bounds) == (501320, 3998200, 501800, 3998680)


def test_final_attempt_enforces_the_limits(two_layers, tmp_path):
    ws = _workspace(two_layers, tmp_path)
    step = PlanStep(1, "mark", ["aloh"], "", "mark_boxes", "", "", {})
    boxes = [[0.1 * i, 0.05, 0.1 * i + 0.09, 0.2] for i in range(8)]
    reasoner = Scripted([step], calls={1: [ToolCall("mark_boxes", ["aloh"], boxes=boxes)]},
                        verdicts=[Verdict(True, "A")])
    _engine(reasoner, ws).run()
    obs = ws.node(1).observation
    assert obs.attempts == 3 and not obs.controller[-1]["ok"]
    assert len(ws.zones_of(1)) == 5 and obs.error == ""
    assert len(obs.controller[-1]["enforced_ids"]) == 5


def test_tool_errors_and_bad_plans_are_recorded_not_raised(two_layers, tmp_path):
    ws = _workspace(two_layers, tmp_path)
    plan, notes = validate_plan([PlanStep(1, "x", ["nope"], "", "color_regions", "", "", {}),
                                 PlanStep(2, "y", ["aloh"], "", "magic_tool", "", "", {}),
                                 {"purpose": "no index or tool"},
                                 PlanStep(7, "z", ["aloh", "ghost"], "", "color_regions", "", "", {})], ws)
    assert [s.index for s in plan] == [1] and plan[0].layers == ["aloh"]
    assert len(notes) == 5 and "Plan item 3 is malformed" in notes[3]
    bad = ToolCall("color_regions", ["aloh"], {"method": "percentile", "percentile": 250})
    reasoner = Scripted(plan, calls={1: [bad]}, verdicts=[Verdict(False, "B", {})])
    outcome = _engine(reasoner, ws, max_rounds=1).run()
    obs = ws.node(1).observation
    assert obs.attempts == 3 and "Percentile must lie between 0 and 100" in obs.error
    assert all(v["errors"][0]["code"] == "tool_error" for v in obs.controller)
    # every step failed, so the verifier's "B" is no candidate: nothing in the chain supports an answer
    assert outcome.answer == FAILED and not outcome.voted
    assert "every step of the chain failed" in outcome.verdicts[0]["verdict"]["rationale"]


def test_model_failures_and_budget(two_layers, tmp_path):
    ws = _workspace(two_layers, tmp_path)
    reasoner = Scripted(_steps(), fail={"propose": ReasonerError("unparseable reply")},
                        verdicts=[Verdict(False, "B", {})])
    outcome = _engine(reasoner, ws, max_rounds=1).run()
    # no step ran, so the verifier's "B" carries no candidate: the run fails visibly instead of answering
    assert "unparseable reply" in ws.node(1).observation.error and outcome.answer == FAILED
    ws = _workspace(two_layers, tmp_path)
    reasoner = Scripted(_steps(), fail={"verify": BudgetExhausted("calls spent")})
    outcome = _engine(reasoner, ws).run()
    assert outcome.answer == FAILED and reasoner.verified == 0
    assert any("no verdict" in note for note in outcome.notes)


def test_cancellation_between_calls(two_layers, tmp_path):
    ws = _workspace(two_layers, tmp_path)
    asked = []

    def cancelled():
        asked.append(1)
        return len(asked) > 3

    with pytest.raises(Cancelled):
        _engine(Scripted(_steps(), verdicts=[Verdict(True, "A")]), ws, progress=Progress(is_cancelled=cancelled)).run()
    assert len(ws.chain) <= 1


# --------------------------------------------------------------------------------------- offline end to end
@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    sc = _synthetic()
    folder = tmp_path_factory.mktemp("cases")
    made = {}
    for kind, seed in (("porphyry", 11), ("epithermal", 12), ("misaligned", 13), ("lithology_clay", 14),
                       ("single_layer", 15), ("barren", 16)):
        made[kind] = read_case(sc.make_case(folder / kind, seed, kind, size=110, mixed_crs=False))
    return made


@pytest.mark.parametrize("kind,expected", [("porphyry", "A"), ("epithermal", "A"), ("misaligned", "B"),
                                           ("lithology_clay", "B"), ("single_layer", "B"), ("barren", "B")])
def test_offline_answers_synthetic_cases(cases, kind, expected, tmp_path):
    case = cases[kind]
    result = run_analysis(AnalysisRequest(case.layers, case.question, tmp_path, dict(case.choices), case_id=case.id,
                                          deposits=case.deposits))
    assert result.answer == expected == case.answer
    assert result.valid and result.rounds >= 1
    record = json.loads(result.outputs["record"].read_text(encoding="utf-8"))
    assert record["result"]["answer"] == expected
    if expected == "A":
        assert len(result.prospectivity) >= 1
        assert result.metrics["recall"] == 1.0 and result.metrics["area_reduction"] > 0.5
    else:  # a negative answer proposes no deposit area, yet the surface is still written
        assert len(result.prospectivity) == 0 and "rules the deposit out" in " ".join(record["favourability"]["notes"])
        assert result.outputs["favourability"].is_file() and result.weights


def test_offline_sample_case_end_to_end(tmp_path):
    case = read_case(SAMPLE)
    events = []
    result = run_analysis(AnalysisRequest(case.layers, case.question, tmp_path / "out", dict(case.choices),
                                          case_id=case.id, deposits=case.deposits), on_event=events.append)
    assert result.answer == case.answer == "A" and result.valid and not result.voted
    assert result.metrics["recall"] == 1.0
    for name in ("zones", "nodes", "edges", "prospectivity", "record", "report", "map"):
        assert result.outputs[name].exists(), name
    html = result.outputs["report"].read_text(encoding="utf-8")
    assert "Answer: <b>A. Yes</b>" in html and html.count("data:image/png;base64,") >= 5
    kinds = [e["kind"] for e in events]
    assert kinds[0] == "plan" and "step" in kinds and kinds[-1] == "done"
    assert {"zone_id", "layer", "role", "score_mean", "area_m2"} <= set(result.zones.columns)
    assert set(result.prospectivity["rank"]) == set(range(1, len(result.prospectivity) + 1))
    core = result.verdicts[-1]["verdict"]["core"]  # the Yes names its core, and the map's first target holds it
    first = result.prospectivity[result.prospectivity["rank"] == 1].iloc[0]
    assert first["why"].startswith(f"holds the verified core ({zone_label(core['label'])})")  # the zone in words
    assert first.geometry.intersects(core_outline(core))


def test_offline_plan_follows_the_deposit_model(tmp_path):
    case = read_case(SAMPLE)
    ws = Workspace(case.question, case.choices, RasterSet(case.layers), tmp_path,
                   knowledge=retrieve(case.question, [s.role for s in case.layers]))
    from lodestar.models.offline import OfflineReasoner

    plan = OfflineReasoner().plan(ws)
    assert ws.deposit_model["id"] == "porphyry_cu_mo_au"
    assert plan[0].layers == ["ASTER AlOH (sericite) index"] and plan[0].level == "critical"
    assert plan[-2].tool == "spatial_relations" and plan[-1].tool == "integrate_evidence"
    host = [s for s in plan if s.tool == "categorical"][0]
    assert host.params["units"] == ["Tqmp Tertiary quartz monzonite porphyry"]
    # the threshold is the layer's median plus four background sigmas
    info = ws.layer("ASTER AlOH (sericite) index")
    assert plan[0].params["value"] == pytest.approx(info.stats["p50"] + 4 * info.stats["sigma_bg"], abs=1e-5)


def test_questions_the_offline_reasoner_cannot_answer_are_refused_before_the_run(tmp_path):
    case = read_case(SAMPLE)
    with pytest.raises(LodestarError, match="offline reasoner answers yes / no questions .* Porphyry, B. Skarn"):
        run_analysis(AnalysisRequest(case.layers, "Which deposit type is this?", tmp_path / "out",
                                     {"A": "Porphyry", "B": "Skarn", "C": "IOCG"}, case_id=case.id))
    assert not (tmp_path / "out").exists()  # nothing was written


@pytest.mark.parametrize("question, said", [
    ("How old is the granite?", "names no deposit, commodity, target or alteration to look for"),
    ("Is the intrusion older than the faults?", "names no deposit, commodity, target or alteration to look for"),
])
def test_a_yes_no_question_about_nothing_the_offline_reasoner_knows_is_refused_before_the_run(tmp_path, question,
                                                                                             said):
    case = read_case(SAMPLE)
    with pytest.raises(LodestarError, match=re.escape(said)):
        run_analysis(AnalysisRequest(case.layers, question, tmp_path / "out", {"A": "Yes", "B": "No"},
                                     case_id=case.id))
    assert not (tmp_path / "out").exists()


PRESETS = {  # the dock's three preset questions, with their choices
    "presence": ("Given these layers, can mineral deposits be detected in this area? Answer: A. Yes B. No.",
                 {"A": "Yes", "B": "No"}),
    "where": ("Where in this area are mineral deposits most likely, and is any part of it worth exploring? Answer: "
              "A. Yes, there are targets worth exploring B. No, nothing stands out.",
              {"A": "Yes, there are targets worth exploring", "B": "No, nothing stands out"}),
    "alteration": ("Which hydrothermal alteration is present in this area? Answer: A. Argillic or phyllic (clay, "
                   "sericite) B. Propylitic (chlorite, epidote) C. Silicification D. None.",
                   {"A": "Argillic or phyllic (clay, sericite)", "B": "Propylitic (chlorite, epidote)",
                    "C": "Silicification", "D": "None"}),
}


@pytest.mark.parametrize("preset,expected", [("presence", "A"), ("where", "A"), ("alteration", "C")])
def test_the_three_presets_are_answered_offline_in_their_own_choices(preset, expected, tmp_path):
    """The sample case holds a zoned porphyry system: silica, AlOH and propylitic anomalies are all clear, the
    quartz one clearest (2.7 times the clear-anomaly level against 2.5 for AlOH)."""
    case = read_case(SAMPLE)
    question, choices = PRESETS[preset]
    result = run_analysis(AnalysisRequest(case.layers, question, tmp_path / "out", dict(choices), case_id=case.id,
                                          deposits=case.deposits))
    # a "where" question is answered by the ranked targets; the others by their choice's words
    said = f"{plural(len(result.prospectivity), 'target')} over" if preset == "where" else choices[expected]
    assert result.answer == expected and result.answer_text.startswith(said) and result.valid
    assert len(result.prospectivity) >= 1 and result.outputs["favourability"].is_file()
    if preset == "alteration":
        record = json.loads(result.outputs["record"].read_text(encoding="utf-8"))
        verdict = record["rounds"][-1]["verdict"]
        assert "The clearest alteration is silica" in verdict["rationale"]
        assert "also clear: clay" in verdict["rationale"] and verdict["route"] == "clearest alteration family"
        assert verdict["place"] == "s2:ASTER TIR quartz index:1 (bottom-right), the strongest silica zone"


# ------------------------------------------------------------------------------- offline verifier in detail
def _box_zone(ws, zone_id, layer, role, box, score):
    from shapely.geometry import box as make_box

    from lodestar.plugin.zones import zone_record, zones_frame

    record = zone_record(make_box(*box), ws.raster_set.grid, zone_id=zone_id, layer=layer, role=role, kind="anomaly",
                         score_mean=score, score_max=score, what="anomaly")
    return zones_frame([record], ws.raster_set.crs)


def _node(index, layer, sub="Yes", params=None):
    from lodestar.plugin.reason.contract import ChainNode, Observation

    step = PlanStep(index, f"mark {layer}", [layer], "", "color_regions", "", "", {},
                    "phyllic_core" if index == 1 else "zoned_alteration", "critical")
    call = ToolCall("color_regions", [layer], dict(params or {})).to_dict()
    return ChainNode(step, Observation(index, "color_regions", [layer], "seen", [], "", sub, calls=[call]))


def test_offline_verifier_asks_for_a_zoomed_look_at_a_marginal_coincidence(two_layers, tmp_path):
    from lodestar.models.offline import OfflineReasoner

    ws = _workspace(two_layers, tmp_path)
    reasoner = OfflineReasoner()
    # the porphyry model's coincidence reach is 450 m on the ground (marginal up to twice that)
    ws.put(_node(1, "aloh"), _box_zone(ws, "s1:aloh:1", "aloh", "hydrothermal_alteration",
                                       (501000, 3998600, 501400, 3999000), 1.25))
    ws.put(_node(2, "silica"), _box_zone(ws, "s2:silica:1", "silica", "silicification",
                                         (502000, 3998600, 502300, 3999000), 1.25))  # 600 m away: marginal
    verdict = reasoner.verify(ws, ws.chain)
    assert not verdict.valid and verdict.answer == "B"
    assert list(verdict.feedback) == [2] and "marginal" in verdict.feedback[2]
    assert verdict.critical == {"phyllic_core": True, "zoned_alteration": False}
    call = reasoner.propose(ws, ws.node(2).step, verdict.feedback[2], 1)
    info = ws.layer("silica")
    spread = info.stats["sigma_bg"]
    assert call.params["value"] == pytest.approx(info.stats["p50"] + 3.0 * spread, abs=1e-5)  # 0.75 x 4 sigma
    x0, y0, x1, y1 = call.params["bounds"]
    assert x0 < 501000 and x1 > 501400 and y0 < 3998600 and y1 > 3999000
    # once the zoomed look found the silica high touching the core, the chain is valid and positive
    ws.put(_node(2, "silica", params=call.params), _box_zone(ws, "s2:silica:1", "silica", "silicification",
                                                             (501350, 3998600, 501700, 3999000), 1.25))
    verdict = reasoner.verify(ws, ws.chain)
    assert verdict.valid and verdict.answer == "A"
    assert verdict.critical == {"phyllic_core": True, "zoned_alteration": True}
    # with only these two layers the one testable secondary item is silica over the core
    assert verdict.secondary == {"silica_or_gossan": True}


def test_offline_verifier_sends_back_inconsistent_steps(two_layers, tmp_path):
    from lodestar.models.offline import OfflineReasoner

    ws = _workspace(two_layers, tmp_path)
    ws.put(_node(1, "aloh", sub="No"), _box_zone(ws, "s1:aloh:1", "aloh", "hydrothermal_alteration",
                                                 (501000, 3998600, 501400, 3999000), 1.25))
    ws.put(_node(2, "silica", sub="Yes"), _box_zone(ws, "s2:silica:1", "silica", "silicification",
                                                    (501000, 3998600, 501400, 3999000), 1.0))
    verdict = OfflineReasoner().verify(ws, ws.chain)
    assert not verdict.valid and sorted(verdict.feedback) == [1, 2]
    assert "sees no evidence" in verdict.feedback[1] and "claims clear evidence" in verdict.feedback[2]


def test_sam_refinement_runs_and_replays(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("segment_anything")
    from lodestar.tests.models.test_sam import save, tiny_sam

    checkpoint = save(tiny_sam(), tmp_path / "tiny.pth")
    case = read_case(SAMPLE)
    request = AnalysisRequest(case.layers, case.question, tmp_path / "run", dict(case.choices), case_id=case.id,
                              refine_with_sam=True, sam_checkpoint=checkpoint)
    result = run_analysis(request)
    assert "sam_refined" in result.zones.columns and len(result.zones) == len(result.nodes)
    record = json.loads(result.outputs["record"].read_text(encoding="utf-8"))
    assert record["parameters"]["sam"]["checkpoint"] == str(checkpoint)
    assert "SAM" in record["localization"]["note"]
    replay = run_analysis(AnalysisRequest([], "", tmp_path / "replay", replay=result.outputs["record"]))
    assert (tmp_path / "replay" / "zones.gpkg").read_bytes() == (tmp_path / "run" / "zones.gpkg").read_bytes()
    assert replay.answer == result.answer


def test_global_inference_end_skips_the_remaining_steps(two_layers, tmp_path):
    ws = _workspace(two_layers, tmp_path)
    reasoner = Scripted(_steps(), verdicts=[Verdict(True, "B")],
                        judgements={1: Judgement("nothing anywhere: the question is settled", "No", "end")})
    events = []
    outcome = _engine(reasoner, ws, emit=events.append).run()
    assert [n.step.index for n in ws.chain] == [1] and outcome.answer == "B"
    assert {"kind": "skipped", "steps": [2, 3]} in events


def test_run_analysis_input_errors(two_layers, tmp_path):
    from lodestar.plugin.errors import LodestarError

    with pytest.raises(LodestarError, match="question is empty"):
        run_analysis(AnalysisRequest(two_layers, "  ", tmp_path))
    with pytest.raises(LodestarError, match="at least two answer choices"):
        run_analysis(AnalysisRequest(two_layers, "Porphyry?", tmp_path, {"A": "Yes"}))
    with pytest.raises(LodestarError, match="No layers given"):
        run_analysis(AnalysisRequest([], "Porphyry? A. Yes B. No", tmp_path))


def test_untestable_critical_evidence_is_said_plainly(two_layers, tmp_path):
    silica_only = [two_layers[1]]
    result = run_analysis(AnalysisRequest(silica_only, "Can porphyry copper deposits be detected? A. Yes B. No",
                                          tmp_path))
    record = json.loads(result.outputs["record"].read_text(encoding="utf-8"))
    # the third outcome: neither Yes nor No, the missing roles named, the surface still drawn from what is there
    assert result.answer == INSUFFICIENT == result.answer_text and record["result"]["answer"] == INSUFFICIENT
    verdict = record["rounds"][0]["verdict"]
    assert "cannot be tested" in verdict["rationale"] and "hydrothermal_alteration" in verdict["missing"]
    assert any("needs a hydrothermal alteration or argillic alteration layer" in note for note in result.notes)
    assert result.outputs["favourability"].is_file() and [w["layer"] for w in result.weights] == ["silica"]
    # insufficient evidence neither rules the deposit in nor out: the surface is written, no target is drawn
    assert len(result.prospectivity) == 0
    assert ("No targets: the evidence is insufficient to answer; the favourability surface is still written (its top "
            "cells are where it is most favourable, not targets).") in result.notes


def test_offline_contrast_of_a_favourable_low_layer():
    """Zone scores are on the evidence scale (values negated for favourable-low layers): a zone whose values
    average 2 on a layer with median 10 and background sigma 1 lies 8 sigma on the favourable side; a zone at
    the median lies 0 sigma from it (it was read as 12 and 20: the median's sign was left out)."""
    from types import SimpleNamespace

    from lodestar.models.offline import OfflineSettings
    from lodestar.models.offline.findings import Zone
    from lodestar.models.offline.scene import Scene
    from lodestar.plugin.progress import SILENT

    def zone(layer: str, score_mean: float) -> Zone:
        return Zone(f"{layer}:1", layer, "geophysics", "anomaly", None, score_mean=score_mean)

    info = SimpleNamespace(kind="index", favourable="low", stats={"model": "normal", "bg_centre": 10.0,
                                                                  "bg_sigma": 1.0})
    ws = SimpleNamespace(layer=lambda name: info)
    scene = Scene(ws, OfflineSettings(), SILENT)
    assert scene.contrast(zone("mag", -2.0)) == pytest.approx(8.0)
    assert scene.contrast(zone("mag", -10.0)) == pytest.approx(0.0)
    # a lognormal background is measured in log units: e^3 on a background centred at log 1 with spread 0.5 is 4 sigma
    info.favourable = "high"
    assert scene.contrast(zone("mag", 14.0)) == pytest.approx(4.0)
    info.stats = {"model": "lognormal", "bg_centre": 1.0, "bg_sigma": 0.5}
    assert scene.contrast(zone("as", float(np.exp(3.0)))) == pytest.approx(4.0)


def test_zones_kept_after_failed_later_attempts_are_still_enforced(two_layers, tmp_path):
    """Attempt 1 marks 8 boxes (too many); attempts 2 and 3 give no usable call. The 8 zones used to stay
    in the chain unchecked; the controller's final enforcement keeps the best 5."""

    class FailsAfterFirst(Scripted):
        def propose(self, ws, step, feedback, attempt):
            if attempt > 1:
                raise ReasonerError("unparseable reply")
            return super().propose(ws, step, feedback, attempt)

    ws = _workspace(two_layers, tmp_path)
    step = PlanStep(1, "mark", ["aloh"], "", "mark_boxes", "", "", {})
    boxes = [[0.1 * i, 0.05, 0.1 * i + 0.09, 0.2] for i in range(8)]
    reasoner = FailsAfterFirst([step], calls={1: [ToolCall("mark_boxes", ["aloh"], boxes=boxes)]},
                               verdicts=[Verdict(True, "A")])
    _engine(reasoner, ws).run()
    obs = ws.node(1).observation
    assert obs.attempts == 3 and [v["ok"] for v in obs.controller] == [False, False, False]
    assert len(ws.zones_of(1)) == 5 and len(obs.controller[0]["enforced_ids"]) == 5


def test_every_given_layer_feeds_a_step_or_is_listed_with_its_reason(two_layers, tmp_path):
    """A layer the deposit model has no use for (role 'other') is in no plan step and no surface: the result,
    the record and the notes list it with the reason; the layers that fed the run are not listed."""
    extra = LayerSpec(_write_index(tmp_path / "dem.tif", seed=5), "other", "elevation")
    result = run_analysis(AnalysisRequest([*two_layers, extra], "Where are porphyry copper deposits likely?",
                                          tmp_path / "out"))
    record = json.loads(result.outputs["record"].read_text(encoding="utf-8"))
    assert [row["layer"] for row in result.unused] == ["elevation"]
    assert "does not use other evidence" in result.unused[0]["reason"]
    assert record["favourability"]["unused"] == result.unused
    assert any(note.startswith("elevation was not used:") for note in result.notes)
    assert {w["layer"] for w in result.weights} == {"aloh", "silica"}
    # a "where" question always gets a surface and targets, whatever the yes / no verdict
    assert result.outputs["favourability"].is_file() and len(result.prospectivity) >= 1


def test_a_one_word_rock_name_is_an_informative_legend_and_bare_codes_are_not():
    from types import SimpleNamespace

    from lodestar.models.offline import legend_informative

    assert legend_informative(SimpleNamespace(units={1: "Monzonite", 2: "Alluvium"}))
    assert legend_informative(SimpleNamespace(units={1: "Limestones"}))
    assert not legend_informative(SimpleNamespace(units={1: "LPZ", 2: "UPZC", 3: "Q"}))


def test_great_basin_faults_and_named_host_units_are_tested_offline(great_basin_run):
    """Fault control is measured to the nearest of all 1,674 mapped faults (not to the five a step marked), and
    the host units the case names (LPZE, UPZC, LPZ: its legend is bare codes) make the host-unit item testable."""
    result = great_basin_run
    verdict = json.loads(result.outputs["record"].read_text(encoding="utf-8"))["rounds"][-1]["verdict"]
    assert result.answer == "A" and result.valid
    assert verdict["critical"] == {"pathfinder_geochemistry": True, "fault_control": True}
    assert verdict["secondary"].get("carbonate_host") is True


def test_great_basin_fault_control_from_its_distance_raster_alone(tmp_path):
    """Without the mapped faults, fault control is measured on the distance-to-faults raster: to the nearest cell of
    its most favourable 15 % (the fault corridors), not to the five corridor pieces its step kept as zones (the
    nearest of those lies 9.6 km from the antimony core)."""
    case = read_case(ROOT / "tests" / "data" / "great-basin-gold")
    layers = [spec for spec in case.layers if spec.role != "structure" or spec.path.suffix == ".tif"]
    assert [spec.name for spec in layers if spec.role == "structure"] == ["distance to faults (classes)"]
    result = run_analysis(AnalysisRequest(layers, case.question, tmp_path, dict(case.choices), case_id=case.id,
                                          favourable_units=case.favourable_units))
    verdict = json.loads(result.outputs["record"].read_text(encoding="utf-8"))["rounds"][-1]["verdict"]
    assert result.answer == "A" and result.valid
    assert verdict["critical"] == {"pathfinder_geochemistry": True, "fault_control": True}
    assert "fault_control [critical]: supported at the core" in verdict["rationale"]


def test_vector_layers_are_planned_only_as_fault_lines_or_unit_polygons(two_layers, tmp_path):
    """Anomaly polygons given a silicification role are not a step (the surface leaves them out too: a vector layer
    is scored as faults or units only); before, they were planned as 'faults and structural corridors'."""
    import geopandas as gpd
    from shapely.geometry import box

    from lodestar.models.offline import OfflineReasoner

    with rasterio.open(two_layers[0].path) as source:
        left, bottom, right, top = source.bounds
        crs = source.crs
    polygons = tmp_path / "silica_polygons.gpkg"
    gpd.GeoDataFrame({"name": ["silica"]}, geometry=[box(left, bottom, (left + right) / 2, (bottom + top) / 2)],
                     crs=crs).to_file(polygons, driver="GPKG")
    ws = _workspace([two_layers[0], LayerSpec(polygons, "silicification", "silica polygons")], tmp_path)
    steps = OfflineReasoner().plan(ws)
    assert [step.layers for step in steps] == [["aloh"], []] and "aloh" in steps[0].purpose


def test_polygons_of_an_anomaly_role_do_not_stand_for_the_evidence_they_cannot_show(tmp_path):
    """Fault distance classes and silica polygons (a vector, role silicification), asked about Carlin-type gold: the
    polygons are no step and no surface layer, so the pathfinder item cannot be tested (before: "No clear
    evidence of ... jasperoid silicification was found", answer No)."""
    import geopandas as gpd
    from shapely.geometry import box

    great_basin = ROOT / "tests" / "data" / "great-basin-gold"
    with rasterio.open(great_basin / "falha_rcl.tif") as source:
        left, bottom, right, top = source.bounds
        crs = source.crs
    polygons = tmp_path / "silica.gpkg"
    gpd.GeoDataFrame({"name": ["jasperoid"]}, geometry=[box(left, bottom, (left + right) / 2, (bottom + top) / 2)],
                     crs=crs).to_file(polygons, driver="GPKG")
    layers = [LayerSpec(great_basin / "falha_rcl.tif", "structure", "distance to faults", "low"),
              LayerSpec(polygons, "silicification", "silica polygons")]
    result = run_analysis(AnalysisRequest(layers, "Are there Carlin-type gold deposits here?", tmp_path / "out"))
    assert result.answer == "Insufficient evidence"


def test_geochemistry_of_no_pathfinder_is_named_when_the_critical_evidence_cannot_be_tested(tmp_path):
    """Potassium and aluminium classes with the mapped faults, asked about Carlin-type gold: the pathfinder item
    cannot be tested, and the answer says the geochemistry given is no evidence for the model, and why (before,
    they were As-Sb pathfinder steps)."""
    import shutil

    great_basin = ROOT / "tests" / "data" / "great-basin-gold"
    layers = []
    for name in ("k_rcl", "al_rcl"):
        shutil.copy(great_basin / "sb_rcl.tif", tmp_path / f"{name}.tif")
        layers.append(LayerSpec(tmp_path / f"{name}.tif", "geochemistry", name))
    layers.append(LayerSpec(great_basin / "gbfaults3.gpkg", "structure", "mapped faults"))
    result = run_analysis(AnalysisRequest(layers, "Are there Carlin-type gold deposits here?", tmp_path / "out"))
    record = json.loads(result.outputs["record"].read_text(encoding="utf-8"))
    assert result.answer == "Insufficient evidence"
    assert all(step["layers"] in ([], ["mapped faults"]) for step in record["plan"])
    assert ("Insufficient evidence: the critical evidence needs a geochemistry or silicification layer; "
            "add one to answer the question. The layers given with that role are no evidence for it: k_rcl "
            "(potassium is not a pathfinder of Carlin-type sediment-hosted gold (Au, As, Sb, Hg, Tl)); al_rcl "
            "(aluminium is not a pathfinder") in " ".join(result.notes)


@pytest.mark.parametrize("deposits, message", [
    ("missing.gpkg", r"does not exist \(or is a folder\)"),
    ("folder.gpkg", r"does not exist \(or is a folder\)"),
    ("broken.geojson", "cannot be read"),
])
def test_unreadable_deposits_are_refused_before_anything_runs_or_is_written(two_layers, tmp_path, deposits, message):
    (tmp_path / "folder.gpkg").mkdir()
    (tmp_path / "broken.geojson").write_text("{not json", encoding="utf-8")
    with pytest.raises(LodestarError, match=message):
        run_analysis(AnalysisRequest(two_layers, "Where are porphyry copper deposits likely?", tmp_path / "out",
                                     deposits=tmp_path / deposits))
    assert not (tmp_path / "out").exists()


def test_an_overlong_question_is_refused_with_the_limit(two_layers, tmp_path):
    with pytest.raises(LodestarError, match="characters long; keep it under 4,000"):
        run_analysis(AnalysisRequest(two_layers, "Is there copper? " * 1000 + "Answer: A. Yes B. No",
                                     tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_a_partner_layer_without_a_zone_nearby_is_measured_over_the_core(tmp_path):
    """Coincidence missing by zones (the silica zone marked 1.2 km off): the silica layer itself is measured at
    the AlOH core against its surroundings, ranked among the scene's other places, and counts only where it
    stands out there."""
    from lodestar.models.offline import OfflineReasoner

    def verdict(silica_centre, folder):
        folder.mkdir()
        layers = [LayerSpec(_write_index(folder / "aloh.tif", size=240), "hydrothermal_alteration", "aloh"),
                  LayerSpec(_write_index(folder / "silica.tif", centre=silica_centre, size=240, seed=2),
                            "silicification", "silica")]
        ws = _workspace(layers, folder)
        ws.put(_node(1, "aloh"), _box_zone(ws, "s1:aloh:1", "aloh", "hydrothermal_alteration",
                                           (501000, 3998600, 501400, 3999000), 1.25))
        ws.put(_node(2, "silica"), _box_zone(ws, "s2:silica:1", "silica", "silicification",
                                             (502100, 3997650, 502350, 3997900), 1.25))
        return OfflineReasoner().verify(ws, ws.chain)

    over_the_core = verdict((40, 40), tmp_path / "over")
    assert over_the_core.critical == {"phyllic_core": True, "zoned_alteration": True}
    assert "silica (measured at the core: it stands above its surroundings" in over_the_core.rationale
    off_the_core = verdict((72, 72), tmp_path / "elsewhere")
    assert off_the_core.critical["zoned_alteration"] is False
    assert "measured at the core" not in off_the_core.rationale


def test_a_marginal_partner_is_measured_over_the_core_once_its_zoomed_look_has_not_settled_it(tmp_path, monkeypatch):
    """Coincidence marginal by zones (a propylitic zone marked 600 m off): the verifier first asks for a zoomed
    look; when that look still marks the zone off the core, the other partner layers are measured at the core as
    for a missing partner, so a partner near the core never counts for less than one nowhere near it. The layer
    whose own zone lies just off the core is not measured there again: what it shows at the core is that zone's
    flank."""
    from lodestar.models.offline import OfflineReasoner
    from lodestar.models.offline.cores import CoreSearch
    from lodestar.plugin.zones import zones_frame

    monkeypatch.setattr(CoreSearch, "_joint_core", lambda self: None)  # no scanned place: the zones' coincidence alone
    off_core = (502000, 3998600, 502300, 3999000)  # its centre 724 m beyond the core's edge: marginal
    zoomed = {"value": 1.03, "bounds": (500000, 3997000, 503000, 4000000)}

    def verdicts(silica_centre, folder, silica_zone=False):
        folder.mkdir()
        layers = [LayerSpec(_write_index(folder / "aloh.tif", size=240), "hydrothermal_alteration", "aloh"),
                  LayerSpec(_write_index(folder / "silica.tif", centre=silica_centre, size=240, seed=2),
                            "silicification", "silica"),
                  LayerSpec(_write_index(folder / "mgoh.tif", centre=(66, 40), size=240, seed=3),
                            "propylitic_alteration", "mgoh")]
        ws = _workspace(layers, folder)
        reasoner = OfflineReasoner()
        marginal = "silica" if silica_zone else "mgoh"
        ws.put(_node(1, "aloh"), _box_zone(ws, "s1:aloh:1", "aloh", "hydrothermal_alteration",
                                           (501000, 3998600, 501400, 3999000), 1.25))
        if not silica_zone:
            ws.put(_node(2, "silica", sub="No"), zones_frame([], ws.raster_set.crs))
        role = ws.layer(marginal).role
        ws.put(_node(3, marginal), _box_zone(ws, f"s3:{marginal}:1", marginal, role, off_core, 1.25))
        first = reasoner.verify(ws, ws.chain)
        ws.put(_node(3, marginal, params=zoomed), _box_zone(ws, f"s3:{marginal}:1", marginal, role, off_core, 1.25))
        return first, reasoner.verify(ws, ws.chain)

    first, settled = verdicts((40, 40), tmp_path / "over")
    assert "marginal" in first.feedback[3]  # with the other partner step, asked to look again too
    assert "zoned_alteration [critical]: marginal" in first.rationale and first.answer == "B"
    assert settled.valid and settled.answer == "A"
    assert settled.critical == {"phyllic_core": True, "zoned_alteration": True}
    assert "zoned_alteration [critical]: supported, by silica (measured at the core" in settled.rationale
    first, settled = verdicts((72, 72), tmp_path / "elsewhere")
    assert "marginal" in first.feedback[3]
    assert settled.answer == "B" and settled.critical["zoned_alteration"] is False
    assert "zoned_alteration [critical]: marginal" in settled.rationale
    # the silica zone itself marginal, the silica layer high at the core: not measured again, so not supported
    first, settled = verdicts((40, 40), tmp_path / "own zone", silica_zone=True)
    assert "marginal" in first.feedback[3]
    assert settled.answer == "B" and settled.critical["zoned_alteration"] is False
    assert "zoned_alteration [critical]: marginal" in settled.rationale


def test_a_phyllic_zone_just_off_a_partner_s_core_is_its_shell_and_its_layer_is_still_measured_there(tmp_path,
                                                                                                  monkeypatch):
    """Around a silica core, an AlOH zone just off it (marginal after its zoomed look) is the phyllic shell
    wrapping the centre: unlike a partner's flank, the AlOH layer is still measured at the core, at the shell
    scale."""
    from lodestar.models.offline import OfflineReasoner

    layers = [LayerSpec(_write_index(tmp_path / "aloh.tif", size=240), "hydrothermal_alteration", "aloh"),
              LayerSpec(_write_index(tmp_path / "silica.tif", size=240, seed=2), "silicification", "silica")]
    ws = _workspace(layers, tmp_path)
    from lodestar.models.offline.cores import CoreSearch

    monkeypatch.setattr(CoreSearch, "_joint_core", lambda self: None)  # no scanned place
    reasoner = OfflineReasoner()
    off_core = (502000, 3998600, 502300, 3999000)
    ws.put(_node(1, "aloh"), _box_zone(ws, "s1:aloh:1", "aloh", "hydrothermal_alteration", off_core, 1.25))
    ws.put(_node(2, "silica"), _box_zone(ws, "s2:silica:1", "silica", "silicification",
                                         (501000, 3998600, 501400, 3999000), 1.25))
    first = reasoner.verify(ws, ws.chain)
    assert "phyllic_core [critical]: marginal" in first.rationale and "marginal" in first.feedback[1]
    zoomed = {"value": 1.03, "bounds": (500000, 3997000, 503000, 4000000)}
    ws.put(_node(1, "aloh", params=zoomed), _box_zone(ws, "s1:aloh:1", "aloh", "hydrothermal_alteration",
                                                      off_core, 1.25))
    settled = reasoner.verify(ws, ws.chain)
    assert settled.answer == "A" and settled.critical == {"phyllic_core": True, "zoned_alteration": True}
    assert "Core: s2:silica:1" in settled.rationale
    assert "phyllic_core [critical]: supported, by aloh (measured at the core" in settled.rationale
    # the shell's reach is the deposit model's (its phyllic item's shell_scale, 4 radii), not the measure's
    from lodestar.models.offline import cores

    measured_at = []
    monkeypatch.setattr(cores, "significance", lambda *args: measured_at.append(args[4]))
    OfflineReasoner().verify(ws, ws.chain)
    assert ws.deposit_model["evidence"][0]["shell_scale"] == 4 and measured_at[0] == (0.5, 1.0, 2.0, 4.0)
    ws.knowledge[0] = dict(ws.deposit_model, evidence=[{k: v for k, v in item.items() if k != "shell_scale"}
                                                       for item in ws.deposit_model["evidence"]])
    measured_at.clear()
    OfflineReasoner().verify(ws, ws.chain)
    assert measured_at[0] == (0.5, 1.0, 2.0)


def test_a_copper_soil_anomaly_over_the_core_is_zoned_evidence_but_never_a_core_itself(tmp_path):
    """Porphyry model: a Cu-in-soil zone over an AlOH core is a second kind of evidence at the place; a Cu-in-soil
    zone with no AlOH core fixes no place (soil anomalies spread downslope): it is not weighed as a core."""
    from lodestar.models.offline import OfflineReasoner

    def verdict(aloh_zone, folder):
        folder.mkdir()
        layers = [LayerSpec(_write_index(folder / "aloh.tif", amplitude=0.0, size=240), "hydrothermal_alteration",
                            "aloh"),
                  LayerSpec(_write_index(folder / "cu.tif", amplitude=0.0, size=240, seed=2), "geochemistry", "cu")]
        ws = _workspace(layers, folder)
        aloh = (_box_zone(ws, "s1:aloh:1", "aloh", "hydrothermal_alteration", (501000, 3998600, 501400, 3999000),
                          1.25) if aloh_zone else _box_zone(ws, "s1:aloh:1", "aloh", "hydrothermal_alteration",
                                                            (501000, 3998600, 501030, 3998630), 0.1))
        ws.put(_node(1, "aloh", sub="Yes" if aloh_zone else "No"), aloh)
        ws.put(_node(2, "cu"), _box_zone(ws, "s2:cu:1", "cu", "geochemistry", (500950, 3998550, 501450, 3999050),
                                         1.25))
        return OfflineReasoner().verify(ws, ws.chain)

    over_the_core = verdict(True, tmp_path / "over")
    assert over_the_core.rationale.startswith("Core: s1:aloh:1")
    assert over_the_core.critical == {"phyllic_core": True, "zoned_alteration": True}
    alone = verdict(False, tmp_path / "alone")
    assert not alone.rationale.startswith("Core: s2:cu:1") and alone.answer == "B"
    assert alone.critical["phyllic_core"] is False


def test_a_composite_over_the_core_is_not_a_second_kind_of_evidence_when_it_shows_the_core_s_own_bands(tmp_path):
    """A false-colour composite (SWIR-NIR-red) is made of the bands the AlOH and ferric indices are computed from:
    its zone over an AlOH core is the core seen again, neither the zoned partner nor the gossan over the core. Over
    a silica core (thermal infrared) it is a second kind of evidence."""
    from lodestar.models.offline import OfflineReasoner, seen_again
    from lodestar.plugin.zones import zones_frame

    assert seen_again("false_color_composite", "hydrothermal_alteration")
    assert seen_again("false_color_composite", "iron_oxide")
    assert seen_again("argillic_alteration", "hydrothermal_alteration")
    assert not seen_again("false_color_composite", "silicification")
    assert not seen_again("silicification", "hydrothermal_alteration")
    layers = [LayerSpec(_write_index(tmp_path / "aloh.tif", amplitude=0.0, size=240), "hydrothermal_alteration",
                        "aloh"),
              LayerSpec(_write_blank_rendering(tmp_path / "fcc.tif"), "false_color_composite", "fcc")]
    ws = _workspace(layers, tmp_path)
    ws.put(_node(1, "aloh"), _box_zone(ws, "s1:aloh:1", "aloh", "hydrothermal_alteration",
                                       (501000, 3998600, 501400, 3999000), 1.25))
    ws.put(_node(2, "fcc"), _box_zone(ws, "s2:fcc:1", "fcc", "false_color_composite",
                                      (500950, 3998550, 501450, 3999050), 1.25))
    verdict = OfflineReasoner().verify(ws, ws.chain)
    assert verdict.rationale.startswith("Core: s1:aloh:1")
    assert verdict.critical == {"phyllic_core": True, "zoned_alteration": False} and verdict.answer == "B"
    assert verdict.secondary["silica_or_gossan"] is False and "s2:fcc:1" not in verdict.rationale
    # coloured at the core without a zone, it is not measured there either
    painted = tmp_path / "painted"
    painted.mkdir()
    layers[1] = LayerSpec(_write_blank_rendering(painted / "fcc.tif", patch=(33, 47, 33, 47)), "false_color_composite",
                          "fcc")
    ws = _workspace(layers, painted)
    ws.put(_node(1, "aloh"), _box_zone(ws, "s1:aloh:1", "aloh", "hydrothermal_alteration",
                                       (501000, 3998600, 501400, 3999000), 1.25))
    ws.put(_node(2, "fcc", sub="No"), zones_frame([], ws.raster_set.crs))
    verdict = OfflineReasoner().verify(ws, ws.chain)
    assert verdict.critical == {"phyllic_core": True, "zoned_alteration": False} and "measured" not in verdict.rationale
    # over the silica core of a high-sulphidation system the composite's staining is the iron-oxide cap
    question = "Can high-sulphidation epithermal deposits be detected? A. Yes B. No"
    layers = [LayerSpec(_write_index(painted / "silica.tif", amplitude=0.0, size=240), "silicification", "silica"),
              LayerSpec(painted / "fcc.tif", "false_color_composite", "fcc")]
    ws = _workspace(layers, tmp_path / "epithermal", question)
    ws.put(_node(1, "silica"), _box_zone(ws, "s1:silica:1", "silica", "silicification",
                                         (501000, 3998600, 501400, 3999000), 1.25))
    ws.put(_node(2, "fcc"), _box_zone(ws, "s2:fcc:1", "fcc", "false_color_composite",
                                      (500950, 3998550, 501450, 3999050), 1.25))
    verdict = OfflineReasoner().verify(ws, ws.chain)
    assert verdict.rationale.startswith("Core: s1:silica:1") and verdict.secondary["iron_oxide_cap"] is True


def _write_blank_rendering(path: Path, size=240, specks=False, patch=None):
    """A MineBench-style rendering that colours nothing (or, with `specks`, only scattered cyan pixels, low on its
    scale; with `patch`, rows and columns (r0, r1, c0, c1) in the bar's top red): a grey backdrop and a jet colour
    bar in a corner."""
    from matplotlib import colormaps

    rows, cols = np.mgrid[0:size, 0:size]
    image = np.repeat((100 + 30 * np.sin(rows / 9.0) * np.cos(cols / 13.0))[..., None], 3, axis=2)
    if specks:
        image[np.random.default_rng(5).random((size, size)) < 0.03] = (0, 255, 255)
    if patch:
        image[patch[0]:patch[1], patch[2]:patch[3]] = np.asarray(colormaps["jet"](0.9)[:3]) * 255
    image[150:230, 225:232] = (colormaps["jet"](np.linspace(1, 0, 80))[:, :3] * 255)[:, None, :]
    profile = dict(driver="GTiff", width=size, height=size, count=3, dtype="uint8", crs="EPSG:32612",
                   transform=Affine(30, 0, 500000, 0, -30, 4000000))
    with rasterio.open(path, "w", **profile) as ds:
        ds.write(np.moveaxis(image.round().astype("uint8"), -1, 0))
    return path


def test_a_phyllic_core_its_layer_shows_nowhere_near_the_core_is_absent_whatever_stands_out_there(tmp_path):
    """Silica and magnetics zones coincide; the AlOH layer shows nothing there: a rendering that colours nothing near
    the core (its maker's scale puts the place under the anomaly), one coloured only low on its scale, or a measured
    index with no anomaly. Each is the phyllic core absent, and no second core signature stands in for it: No, found
    at a zone core. Nor does a magnetic map standing out at the silica core with no zone of its own."""
    from lodestar.models.offline import OfflineReasoner
    from lodestar.plugin.zones import zones_frame

    def verdict(aloh, folder, magnetic_zone=True):
        folder.mkdir()
        aloh = {"blank": lambda: _write_blank_rendering(folder / "aloh.tif"),
                "specks": lambda: _write_blank_rendering(folder / "aloh.tif", specks=True),
                "index": lambda: _write_index(folder / "aloh.tif", amplitude=0.0, size=240)}[aloh]()
        layers = [LayerSpec(aloh, "hydrothermal_alteration", "aloh"),
                  LayerSpec(_write_index(folder / "silica.tif", size=240, seed=2), "silicification", "silica"),
                  LayerSpec(_write_index(folder / "mag.tif", size=240, seed=3), "geophysics", "mag")]
        ws = _workspace(layers, folder)
        ws.put(_node(1, "aloh", sub="No"), zones_frame([], ws.raster_set.crs))
        ws.put(_node(2, "silica"), _box_zone(ws, "s2:silica:1", "silica", "silicification",
                                             (501000, 3998600, 501400, 3999000), 1.25))
        if magnetic_zone:
            ws.put(_node(3, "mag"), _box_zone(ws, "s3:mag:1", "mag", "geophysics",
                                              (501050, 3998650, 501450, 3999050), 1.25))
        else:
            ws.put(_node(3, "mag", sub="No"), zones_frame([], ws.raster_set.crs))
        return OfflineReasoner().verify(ws, ws.chain)

    for shown in ("blank", "specks", "index"):
        absent = verdict(shown, tmp_path / shown)
        assert absent.answer == "B" and absent.critical["phyllic_core"] is False, shown
        assert absent.route == "zone core"
    measured = verdict("blank", tmp_path / "measured", magnetic_zone=False)
    assert measured.answer == "B" and measured.critical["phyllic_core"] is False
    assert measured.rationale.startswith("Core: s2:silica:1") and measured.route == "zone core"


def test_a_clear_partner_anomaly_is_weighed_as_a_core_and_the_first_item_measured_around_it(tmp_path):
    """No AlOH zone at all, a clear silica zone: the silica zone is a candidate core (the partner of the first
    critical item) and the AlOH layer, three noise spreads high there, is measured around it."""
    from lodestar.models.offline import OfflineReasoner

    layers = [LayerSpec(_write_index(tmp_path / "aloh.tif", amplitude=0.03, size=240), "hydrothermal_alteration",
                        "aloh"),
              LayerSpec(_write_index(tmp_path / "silica.tif", size=240, seed=2), "silicification", "silica")]
    ws = _workspace(layers, tmp_path)
    ws.put(_node(1, "aloh", sub="No"), _box_zone(ws, "s1:aloh:1", "aloh", "hydrothermal_alteration",
                                                 (501000, 3998600, 501030, 3998630), 0.1))  # too weak, too small
    ws.put(_node(2, "silica"), _box_zone(ws, "s2:silica:1", "silica", "silicification",
                                         (501000, 3998600, 501400, 3999000), 1.25))
    verdict = OfflineReasoner().verify(ws, ws.chain)
    assert verdict.rationale.startswith("Core: s2:silica:1")
    assert verdict.critical == {"phyllic_core": True, "zoned_alteration": True} and verdict.answer == "A"
    assert verdict.route == "zone core"
    assert verdict.place.startswith("s2:silica:1 (top-left), a clear zone of zoned alteration on silica, ")
    assert "phyllic_core [critical]: supported, by aloh (measured at the core" in verdict.rationale


def test_weak_anomalies_of_core_and_partner_at_one_place_make_a_core_where_no_zone_is(tmp_path):
    """No zone on either layer (AlOH and silica both three noise spreads high): the place where both stand out
    together is a candidate core, both critical items are supported by that joint measurement, and the two steps
    are asked for a zoomed look there (for zones to map); the same anomalies 4 km apart make no core."""
    from lodestar.models.offline import OfflineReasoner
    from lodestar.plugin.zones import zones_frame

    def verdict(silica_centre, folder):
        folder.mkdir()
        layers = [LayerSpec(_write_index(folder / "aloh.tif", centre=(200, 200), amplitude=0.03, size=400),
                            "hydrothermal_alteration", "aloh"),
                  LayerSpec(_write_index(folder / "silica.tif", centre=silica_centre, amplitude=0.03, size=400,
                                         seed=2), "silicification", "silica")]
        ws = _workspace(layers, folder)
        ws.put(_node(1, "aloh", sub="No"), zones_frame([], ws.raster_set.crs))
        ws.put(_node(2, "silica", sub="No"), zones_frame([], ws.raster_set.crs))
        return OfflineReasoner().verify(ws, ws.chain)

    together = verdict((200, 200), tmp_path / "together")
    assert together.rationale.startswith("Core: place where aloh and silica stand out together (center)")
    assert together.critical == {"phyllic_core": True, "zoned_alteration": True} and together.answer == "A"
    assert "zoned_alteration [critical]: supported, by silica (measured with aloh at the place" in together.rationale
    assert not together.valid and set(together.feedback) == {1, 2}
    assert together.core["label"] == "place where aloh and silica stand out together"
    assert core_outline(together.core).area > 0
    assert together.route == "joint place"
    assert re.fullmatch(r"the place where aloh and silica stand out together \(center\), chance count [0-9.e-]+ "
                        r"\(the layers' rank correlation away from it, -?[0-9.]+, counted where positive; "
                        r"bound 0\.05\)", together.place)
    apart = verdict((330, 330), tmp_path / "apart")
    assert apart.answer == "B" and "place where" not in apart.rationale and apart.core == {}
    assert (apart.route, apart.place) == ("no core", "")


def test_a_core_with_a_marginal_coincidence_is_weighed_as_supported_until_its_zoomed_look_settles_it(monkeypatch):
    """Among cores, a marginal critical item counts as support while steps that can take a zoomed look at it have
    not had one (so a well-supported system is not passed over for a chance one), but a core already supported
    beats one that only may be; once looked at, or when no step can look again, it is short of support."""
    from types import SimpleNamespace

    from lodestar.models.offline import OfflineSettings, looks
    from lodestar.models.offline.cores import CoreSearch
    from lodestar.models.offline.findings import Finding
    from lodestar.models.offline.scene import Scene
    from lodestar.plugin.progress import SILENT

    def assessment(coincidence: str, secondary: int) -> dict:
        out = {"core": Finding("critical", "supported"), "coincidence": Finding("critical", coincidence)}
        out.update({f"s{i}": Finding("secondary", "supported") for i in range(secondary)})
        return out

    ws = SimpleNamespace(chain=[], last_round=False)
    search = CoreSearch(Scene(ws, OfflineSettings(), SILENT))
    monkeypatch.setattr(looks, "refined", lambda chain, items, ws: False)
    monkeypatch.setattr(looks, "steps_for", lambda chain, items, ws: [2])  # a colour step that can look again
    pending_rich, certain_poor = assessment("marginal", 3), assessment("supported", 1)
    assert search._score(pending_rich) > search._score(certain_poor)
    assert search._score(assessment("supported", 3)) > search._score(pending_rich)
    monkeypatch.setattr(looks, "refined", lambda chain, items, ws: True)
    assert search._score(pending_rich) < search._score(certain_poor)
    assert search._score(pending_rich) > search._score(assessment("missing", 3))
    monkeypatch.setattr(looks, "refined", lambda chain, items, ws: False)
    monkeypatch.setattr(looks, "steps_for", lambda chain, items, ws: [])  # a fault layer: no look can settle it
    assert search._score(pending_rich) < search._score(certain_poor)
    monkeypatch.setattr(looks, "steps_for", lambda chain, items, ws: [2])
    ws.last_round = True  # the last verdict (max_rounds reached): no look can follow
    assert search._score(pending_rich) < search._score(certain_poor)


def _small_scene_verdict(folder, specs):
    """The offline verdict on a 4.8 km scene of index layers (name, role, amplitude of a bump at its centre, noise
    seed) whose steps marked no zone."""
    from lodestar.models.offline import OfflineReasoner
    from lodestar.plugin.zones import zones_frame

    folder.mkdir()
    layers = [LayerSpec(_write_index(folder / f"{name}.tif", centre=(80, 80), amplitude=amplitude, size=160,
                                     seed=seed), role, name) for name, role, amplitude, seed in specs]
    ws = _workspace(layers, folder)
    for index, spec in enumerate(specs, start=1):
        ws.put(_node(index, spec[0], sub="No"), zones_frame([], ws.raster_set.crs))
    return OfflineReasoner().verify(ws, ws.chain)


ALOH, SILICA = ("aloh", "hydrothermal_alteration", 0.03, 1), ("silica", "silicification", 0.03, 2)
MAGNETICS, GOSSAN = ("magnetics", "geophysics", 0.03, 3), ("gossan", "iron_oxide", 0.03, 4)


def test_a_third_kind_at_a_place_in_a_small_scene_makes_it_rarer_than_two_can(tmp_path):
    """A 4.8 km scene holds few windows: two layers at the top of their ranks there make a place only just under
    the level (about one such place in forty scenes by chance); a third kind at the same place (magnetics over the
    silica and AlOH) makes it a hundredfold rarer, and the one scan takes it, every layer's step asked for a zoomed
    look there. Three layers of background alone make none."""
    two = _small_scene_verdict(tmp_path / "two", [ALOH, SILICA])
    three = _small_scene_verdict(tmp_path / "three", [ALOH, SILICA, MAGNETICS])
    count = [float(re.search(r"chance count ([0-9.e-]+)", v.place).group(1)) for v in (two, three)]
    assert two.answer == "A" and two.route == "joint place" and 0.005 < count[0] <= 0.05
    assert three.rationale.startswith("Core: place where aloh, silica and magnetics stand out together (center)")
    assert three.critical == {"phyllic_core": True, "zoned_alteration": True} and three.answer == "A"
    assert ("zoned_alteration [critical]: supported, by silica (measured with aloh and magnetics at the place: "
            "aloh 1") in three.rationale
    assert "bound 0.05" in three.rationale and not three.valid and set(three.feedback) == {1, 2, 3}
    assert three.route == "three-family place" and count[1] < count[0] / 50
    flat = [(name, role, 0.0, seed) for name, role, _, seed in (ALOH, SILICA, MAGNETICS)]
    barren = _small_scene_verdict(tmp_path / "barren", flat)
    assert barren.answer == "B" and "place where" not in barren.rationale


def test_three_other_kinds_stand_in_for_an_aloh_that_shows_nothing_but_not_for_one_never_given(tmp_path):
    """Silica, gossan and magnetics standing out together where the AlOH layer is flat: the three stand in for the
    AlOH core, and the verdict says so. With no AlOH layer at all, the model's core cannot be tested: no place
    stands in for a layer that was never given."""
    flat_aloh = ("aloh", "hydrothermal_alteration", 0.0, 1)
    seen = _small_scene_verdict(tmp_path / "flat", [flat_aloh, SILICA, GOSSAN, MAGNETICS])
    assert seen.rationale.startswith("Core: place where silica, gossan and magnetics stand out together")
    assert "phyllic_core [critical]: supported, by three other kinds of evidence standing in" in seen.rationale
    assert seen.answer == "A" and set(seen.feedback) == {1, 2, 3, 4}  # the AlOH asked to look again there too
    untested = _small_scene_verdict(tmp_path / "none", [SILICA, GOSSAN, MAGNETICS])
    assert untested.answer is None and "cannot be tested" in untested.rationale
    assert (seen.route, untested.route, untested.place) == ("three-family place", "first item untestable", "")


def test_every_route_the_offline_verifier_names_is_listed_in_routes():
    """Each constant a verdict's route is set from (`route=` in a Verdict, `search.route = ...` in a core search) is
    one of verifier.ROUTES, and every listed route is set somewhere."""
    import ast
    import importlib

    import lodestar.models.offline as package

    used = set()
    for path in Path(package.__file__).parent.glob("*.py"):
        module = importlib.import_module(f"lodestar.models.offline.{path.stem}")
        for node in ast.walk(ast.parse(path.read_text())):
            values = [k.value for k in node.keywords if k.arg == "route"] if isinstance(node, ast.Call) else []
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    elements = target.elts if isinstance(target, ast.Tuple) else [target]
                    for i, element in enumerate(elements):
                        if isinstance(element, ast.Attribute) and element.attr == "route":
                            values.append(node.value.elts[i] if isinstance(target, ast.Tuple) else node.value)
            for value in values:
                used |= {getattr(module, n.id) for n in ast.walk(value) if isinstance(n, ast.Name) and n.id.isupper()}
    assert used == set(ROUTES)


def test_a_yes_says_why_it_stands_when_the_spatial_graph_joined_no_two_roles():
    """Great Basin's whole survey folder, its units not named: the graph step said No and the summing-up step
    "Critical evidence is missing: step 5", then the verdict "All critical evidence is supported" without a word on
    it; the verdict now says why the two differ. Without such a step it says nothing more."""
    from types import SimpleNamespace

    from lodestar.models.offline.verifier import _graph_note

    def node(index, tool, inference):
        return SimpleNamespace(step=SimpleNamespace(index=index, tool=tool),
                               observation=SimpleNamespace(sub_inference=inference))

    chain = [node(1, "color_regions", "Yes"), node(5, "spatial_relations", "No"), node(6, "integrate_evidence", "No")]
    note = _graph_note(chain)
    assert note.startswith(" The spatial graph (step 5) joined no zones of two roles")
    assert "reach the deposit model gives it" in note
    assert _graph_note([node(1, "color_regions", "Yes"), node(5, "spatial_relations", "Yes")]) == ""
