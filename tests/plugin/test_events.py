"""The one event renderer (plugin/events.py): what the dock's Reasoning view and the Processing log both show."""
from __future__ import annotations

from lodestar.plugin.events import BAD, GOOD, NEUTRAL, STEP, SUFFIX, TOP, UNDER, WARN, describe, log_lines, status_line

PLAN = {"kind": "plan", "notes": ["geology first"], "steps": [
    {"index": 1, "level": "regional", "purpose": "Find alteration", "tool": "color_regions", "layers": ["aloh", "si"],
     "layers_why": "both index maps", "tool_why": "thresholds", "expected": "zones"},
    {"index": 2, "purpose": "Check faults", "tool": "vector_evidence", "layers": ["faults"]}]}
STEP_EVENT = {"kind": "step", "round": 2, "step": 1, "observation": {
    "tool": "color_regions", "sub_inference": "Yes", "rationale": "two strong zones", "zone_ids": ["aloh:1", 7],
    "evidence_png": "/tmp/e.png"}}
CONTROLLER = {"kind": "controller", "round": 1, "step": 2, "attempt": 2, "verdict": {
    "ok": False, "errors": [{"message": "zone too large"}, "too many zones"], "feedback": "shrink it"}}
VERDICT = {"kind": "verdict", "round": 1, "verdict": {
    "valid": False, "answer": "A", "rationale": "weak", "critical": {"alteration": True},
    "secondary": {"faults": False}, "feedback": {"2": "redo with the fault buffer"}}}


def test_plan_names_each_step_and_its_notes():
    steps = describe(PLAN)
    assert [(e.place, e.step) for e in steps] == [(STEP, 1), (STEP, 2), (TOP, None)]
    assert steps[0].text == "Step 1 [regional]: Find alteration (colour / anomaly regions on aloh, si)"
    assert "Why these layers: both index maps" in steps[0].tip
    assert steps[1].text == "Step 2: Check faults (mapped features on faults)"
    assert steps[2].text == "Plan note: geology first"
    assert status_line(PLAN) == "Planned 2 steps."


def test_step_and_controller_lines_sit_under_their_step():
    [step] = describe(STEP_EVENT)
    assert (step.place, step.step, step.text, step.detail) == (UNDER, 1, "colour / anomaly regions (round 2): supports",
                                                               "two strong zones")
    assert (step.tone, step.supports, step.zone_ids, step.image) == (GOOD, True, ["aloh:1", "7"], "/tmp/e.png")
    assert status_line(STEP_EVENT) == "Step 1 done (round 2)."
    no = describe({"kind": "step", "step": 3, "observation": {"tool": "t", "sub_inference": "No", "error": "boom"}})
    assert (no[0].text, no[0].detail, no[0].tone, no[0].supports) == ("t: no support", "boom", NEUTRAL, False)
    [check] = describe(CONTROLLER)
    assert (check.place, check.step, check.tone) == (UNDER, 2, BAD)
    assert check.text == "controller (round 1, attempt 2)"
    assert check.detail == "rejected: zone too large. too many zones."  # the feedback written for a model: not shown
    assert "shrink" not in check.tip
    accepted = describe({"kind": "controller", "step": 1, "attempt": 1, "verdict": {"ok": True}})[0]
    assert (accepted.text, accepted.detail, accepted.tone) == ("controller (attempt 1)", "output accepted", GOOD)


def test_verdicts_votes_skips_and_localization():
    [verdict] = describe(VERDICT)
    assert verdict.text == "Round 1 verdict: not valid; candidate answer A" and verdict.tone == WARN
    assert verdict.rows == [("critical evidence", "alteration: supported"), ("secondary evidence", "faults: missing"),
                            ("feedback to step 2", "redo with the fault buffer")]
    assert status_line(VERDICT) == "Round 1: the verifier finds the chain not valid."
    # a verdict that names its place and route says them first (the offline reasoner's always do)
    placed = {**VERDICT, "verdict": {**VERDICT["verdict"], "place": "s1:aloh:1 (center), a clear zone",
                                     "route": "zone core"}}
    assert describe(placed)[0].rows[0] == ("place weighed", "zone 1 of step 1 on aloh (center), a clear zone (found "
                                                            "as: zone core)")  # the zone in words, not its id
    routed = {**VERDICT, "verdict": {**VERDICT["verdict"], "route": "no core"}}
    assert describe(routed)[0].rows[0] == ("place weighed", "none (no core)")
    failed = describe({"kind": "verdict", "round": 2, "verdict": None, "error": "no JSON"})[0]
    assert (failed.text, failed.tone) == ("Round 2 verdict: no verdict (no JSON)", BAD)
    assert describe({"kind": "vote", "counts": {"A": 2, "B": 1}, "answer": "A"})[0].text == \
        "Majority vote: A x2, B x1 -> A"
    skipped = describe({"kind": "skipped", "steps": [3, 4]})
    assert [(e.place, e.step) for e in skipped] == [(SUFFIX, 3), (SUFFIX, 4)]
    [local] = describe({"kind": "localization", "polygons": 3, "source": "knowledge", "params": {"hops": 2}})
    assert local.text == "Localization: 3 prospectivity polygons (parameters from knowledge)"
    assert local.rows == [("hops", "2")]


def test_log_lines_flatten_the_same_entries():
    assert log_lines(PLAN) == ["Step 1 [regional]: Find alteration (colour / anomaly regions on aloh, si)",
                               "Step 2: Check faults (mapped features on faults)", "Plan note: geology first"]
    assert log_lines(STEP_EVENT) == ["Step 1, colour / anomaly regions (round 2): supports: two strong zones"]
    assert log_lines({"kind": "skipped", "steps": [3]}) == ["Step 3 - skipped: an earlier step concluded the chain"]
    assert log_lines(VERDICT) == ["Round 1 verdict: not valid; candidate answer A",
                                  "    critical evidence: alteration: supported",
                                  "    secondary evidence: faults: missing",
                                  "    feedback to step 2: redo with the fault buffer"]


def test_events_outside_the_reasoning_give_nothing():
    for event in ({"kind": "usage", "usage": {}}, {"kind": "done"}, {}, "not an event", None):
        assert describe(event) == [] and log_lines(event) == [] and status_line(event) == ""


def test_no_identifier_or_empty_layer_list_is_shown():
    """Step 7 of the sample run read "(spatial_relations on )"; evidence items, roles and parameters were raw."""
    plan = {"kind": "plan", "steps": [
        {"index": 7, "level": "critical", "purpose": "Relate the zones of all layers", "tool": "spatial_relations",
         "layers": [], "evidence": "zoned_alteration"},
        {"index": 1, "purpose": "Mark hydrothermal_alteration anomalies (phyllic_core: a core)",
         "tool": "color_regions", "layers": ["aloh"], "evidence": "phyllic_core"}]}
    lines = log_lines(plan)
    assert lines == ["Step 7 [critical]: Relate the zones of all layers (spatial relations across all layers)",
                     "Step 1: Mark hydrothermal alteration anomalies (phyllic core: a core) (colour / anomaly regions "
                     "on aloh)"]
    step = describe({"kind": "step", "step": 4, "observation": {
        "tool": "integrate_evidence", "sub_inference": "Yes", "rationale": "Coincides with iron_oxide, 2e+03 km2."}})[0]
    assert (step.text, step.detail) == ("evidence integration: supports", "Coincides with iron oxide, 2,000 km2.")
    [verdict] = describe({"kind": "verdict", "round": 1, "verdict": {
        "valid": True, "answer": "A", "critical": {"phyllic_core": True}, "secondary": {"structural_control": False},
        "feedback": {"5": "buffer the structural_control faults"}}})
    assert verdict.rows == [("critical evidence", "phyllic core: supported"),
                            ("secondary evidence", "structural control: missing"),
                            ("feedback to step 5", "buffer the structural control faults")]
    [local] = describe({"kind": "localization", "polygons": 2, "source": "offline (over deposit model porphyry_cu)",
                        "params": {"degree_centrality_weight": 1.5, "clip_ratio": 1.0,
                                   "area_type_weights": {"hydrothermal_alteration": 1.8, "structure": 1.2}}})
    assert local.text == ("Localization: 2 prospectivity polygons (parameters from offline (over deposit model "
                          "porphyry cu))")
    assert local.rows == [("degree centrality weight", "1.5"), ("clip ratio", "1"),
                          ("area type weights", "Hydrothermal alteration 1.8, Structure (faults, lineaments) 1.2")]
    assert log_lines({"kind": "localization", "polygons": 2, "source": "defaults", "params": {"hop2_width": 1}}) == [
        "Localization: 2 prospectivity polygons (parameters from defaults)"]  # the graph's weights: in the appendix


def test_a_controller_line_says_what_a_retry_tried_never_the_prompt():
    """The controller's feedback is text written for a model (the last attempt's repeats the box conventions); the
    log says what the attempt tried and what the controller found (before, the whole prompt reached the log)."""
    feedback = ("This is your final attempt. Coordinates are normalised boxes [ymin, xmin, ymax, xmax] between 0 and 1;"
                "\n  (0,0) ------> x (0,1)")
    event = {"kind": "controller", "step": 2, "attempt": 3, "call": {
        "tool": "color_regions", "params": {"max_regions": 3, "k_sigma": 5.5, "bounds": [0, 0, 1, 1], "smooth": True}},
        "verdict": {"ok": False, "errors": [{"message": "Region r1 covers 90.3% of the image (limit 40%)."}],
                    "feedback": feedback}}
    [line] = log_lines(event)
    assert line == ("Step 2, controller (attempt 3, at most 3 zones, threshold 5.5 spreads above background, looking "
                    "around the core): rejected: Region r1 covers 90.3% of the image (limit 40%).")
    first = dict(event, attempt=1)  # the first attempt runs the plan's parameters, named in the plan's line
    assert log_lines(first)[0].startswith("Step 2, controller (attempt 1): rejected")
    boxes = dict(event, call={"tool": "mark_boxes", "boxes": [[0, 0, 0.5, 0.5], [0.5, 0.5, 1, 1]]})
    assert "(attempt 3, 2 boxes)" in log_lines(boxes)[0]
