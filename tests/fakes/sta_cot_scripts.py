"""Scripted model answers for whole STA-CoT runs on the bundled porphyry sample case.

`porphyry_script(...)` returns a FakeOpenAIServer script that answers every role the way a careful
model would (a three-step plan: AlOH core with color_regions, quartz boxes by eye, spatial relations),
with knobs for the failure modes the tests exercise: replies put before the plan or before the first
tool call (429, malformed text, a slow answer), a first box that is too large, and the verifier's
verdicts round by round. `SCENARIOS` names the scripted runs used by the tests and the benchmark.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from .openai_server import Reply, by_role

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_CASE = ROOT / "resources" / "sample" / "porphyry-demo"
ALOH = "ASTER AlOH (sericite) index"
QUARTZ = "ASTER TIR quartz index"
GOOD_BOX = [0.35, 0.35, 0.65, 0.65]
TOO_LARGE_BOX = [0.02, 0.02, 0.97, 0.97]

PLAN = {"steps": [
    {"purpose": "Mark the phyllic-argillic core on the AlOH index", "layers": [ALOH],
     "layers_why": "sericite and clays absorb near 2200 nm", "tool": "color_regions",
     "tool_why": "threshold the strongest AlOH values", "expected": "one compact anomaly",
     "params": {"percentile": 97, "max_regions": 1}, "evidence": "phyllic_core", "level": "critical"},
    {"purpose": "Box the quartz (silicification) highs by eye", "layers": [QUARTZ],
     "layers_why": "silica caps often sit over porphyry cores", "tool": "mark_boxes",
     "tool_why": "look at the rendered quartz index", "expected": "one box near the AlOH core",
     "evidence": "silica_or_gossan", "level": "secondary"},
    {"purpose": "Relate the AlOH and quartz zones", "layers": [], "layers_why": "uses earlier zones",
     "tool": "spatial_relations", "tool_why": "overlap and proximity across layers",
     "expected": "the quartz box overlaps the AlOH core", "evidence": "zoned_alteration", "level": "critical"},
]}

ACCEPT_A = {"valid": True, "answer": "A", "critical": {"phyllic_core": True, "zoned_alteration": True},
            "secondary": {"silica_or_gossan": True}, "feedback": [],
            "rationale": "A compact AlOH core with a coinciding quartz high: a zoned system."}


def reject(answer: str, step: int = 2) -> dict:
    """An invalid verdict whose candidate answer is `answer`, naming one faulty step."""
    return {"valid": False, "answer": answer, "critical": {"phyllic_core": True, "zoned_alteration": False},
            "secondary": {"silica_or_gossan": False},
            "feedback": [{"step": step, "feedback": "Box the quartz high again, tight around the AlOH core."}],
            "rationale": "The quartz evidence does not clearly coincide with the core."}


LOCALIZATION = {"degree_centrality_weight": 1.5, "betweenness_centrality_weight": 1.2, "chain_presence_weight": 2.0,
                "area_type_weights": {"hydrothermal_alteration": 1.8, "silicification": 1.5},
                "important_areas_count": 4, "hop2_expansion_height": 1.2, "hop2_expansion_width": 1.2,
                "rationale": "The AlOH core matters most; a modest halo."}

EVIDENCE = {"evidence": [
    {"layer": ALOH, "transform": "percentile_rank", "membership": "identity", "weight": 2.0,
     "why": "the phyllic-argillic shell marks the system's core"},
    {"layer": QUARTZ, "transform": "percentile_rank", "membership": "identity", "weight": 1.0,
     "why": "silica caps sit over porphyry cores"},
], "rationale": "Alteration indices carry the deposit model's critical evidence."}


def judge_targets(request) -> dict:
    """A model's judgement of the targets it is shown: an item is supported where one of its layers ranks in the
    district's top 40 % inside the target (a looser reading than the rules'), else absent; the verdict is left for
    the engine to hold to the statuses."""
    data = request.data
    rank = data["columns"].index("rank")
    out = []
    for target in data["targets"]:
        items = []
        for item in data["items"]:
            ranks = [target["layers"][name][rank] for name in item["layers"]
                     if target["layers"][name][rank] is not None]
            status = "supported" if ranks and max(ranks) >= 0.6 else "absent" if ranks else "untestable"
            items.append({"id": item["id"], "status": status, "evidence": f"best rank {max(ranks, default=0):.2f}"})
        out.append({"target": target["target"], "items": items, "verdict": "moderate",
                    "why": "The scripted verifier read the measurements."})
    return {"targets": out}


def porphyry_script(verdicts: list, *, planner_prefix: tuple = (), act_prefix: tuple = (),
                    bad_first_box: bool = False):
    """A by_role script for the sample case; `verdicts` are the verifier's replies in round order."""
    acts = list(act_prefix)

    def act(request):
        if acts:
            return acts.pop(0)
        data = request.data
        step = data["step"]
        if step["tool"] == "mark_boxes":
            box = TOO_LARGE_BOX if bad_first_box and data["attempt"] == 1 and not data["feedback"] else GOOD_BOX
            return {"tool": "mark_boxes", "layers": [QUARTZ], "boxes": [box], "locations": ["center"],
                    "description": "bright quartz high in the centre of the view"}
        return {"tool": step["tool"], "layers": step["layers"], "params": step.get("params", {})}

    def observe(request):
        outcome = request.data["outcome"]
        if outcome["error"]:
            return {"rationale": f"The tool failed: {outcome['error']}", "sub_inference": "No",
                    "global_inference": "continue"}
        return {"rationale": f"{outcome['tool']} gave clear evidence for the step.", "sub_inference": "Yes",
                "global_inference": "continue"}

    return by_role({
        "planner": [*planner_prefix, PLAN],
        "executor/act": act,
        "executor/observe": observe,
        "verifier": list(verdicts),
        "localization": lambda request: LOCALIZATION,
        "evidence": lambda request: EVIDENCE,
        "verifier/targets": judge_targets,
    })


def copy_sample(folder: Path) -> Path:
    """A private copy of the sample case (runs read it; nothing may touch the bundled one)."""
    target = Path(folder) / "porphyry-demo"
    if not target.exists():
        shutil.copytree(SAMPLE_CASE, target, ignore=shutil.ignore_patterns("*.aux.xml"))
    return target


SLOW = Reply(content={"tool": "none", "layers": []}, delay_s=3.0)
"""An executor answer that arrives long after a short timeout."""

SCENARIOS = {
    # name: (script keyword arguments, settings overrides, max_rounds)
    "clean chain": ({"verdicts": [ACCEPT_A]}, {}, 3),
    "controller retries a bad box": ({"verdicts": [ACCEPT_A], "bad_first_box": True}, {}, 3),
    "rejection, refinement, acceptance": ({"verdicts": [reject("B"), ACCEPT_A]}, {}, 3),
    "K failing rounds, majority vote": ({"verdicts": [reject("A"), reject("B"), reject("A")]}, {}, 3),
    "malformed JSON repaired": ({"verdicts": [ACCEPT_A], "planner_prefix": (
        Reply("Sure! First I would look at the AlOH map, then..."),)}, {}, 3),
    "429 then success": ({"verdicts": [ACCEPT_A], "planner_prefix": (
        Reply(status=429, headers={"Retry-After": "0"}),)}, {}, 3),
    "timeout then success": ({"verdicts": [ACCEPT_A], "act_prefix": (SLOW,)}, {"timeout_s": 0.5}, 3),
    "budget cap (5 calls)": ({"verdicts": [ACCEPT_A]}, {"max_calls": 5}, 3),
}
