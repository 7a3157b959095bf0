"""The geologist's evidence plan on Great Basin (offline, defaults): the agent's plan of a run given no favourable
units (the geology map is left out: its legend holds bare codes), against the same run re-made once with the
geologist's plan (Re-run with this plan: the units LPZE, UPZC, LPZ named, the mapped faults weighed by their distance
in metres with the midpoint set, the fault-distance classes left out as the same evidence), for three midpoints; and
the agent's plan of a run given the units in the Ask tab. Success-rate AUC of the knowledge-driven surface on the
known deposits (no deposit data used to make any surface) and the deposits in its top 10 %.

Run: `.venv/bin/python tests/benchmarks/run_all.py evidence_plan` (about a minute); writes build/bench/evidence_plan.md.
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

from lodestar.models import run_analysis
from lodestar.plugin.favourability.evidence import EvidenceSpec
from lodestar.plugin.favourability.plan_file import EvidencePlan, recorded_plan
from lodestar.plugin.files import write_text_atomic
from lodestar.plugin.request.case import read_case
from lodestar.plugin.request.record import read_record
from lodestar.plugin.request.request import BackendValues, build_request
from lodestar.plugin.runs.replan import replan

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "build" / "bench" / "evidence_plan.md"
CASE = ROOT / "tests" / "data" / "great-basin-gold" / "case.json"
GEOLOGY = "geology (DDS-41 lithotectonic units)"
MIDPOINTS = (1000.0, 2000.0, 3000.0)


def geologists_plan(agent: EvidencePlan, midpoint: float) -> EvidencePlan:
    specs = [s for s in agent.specs if s.layer != "distance to faults (classes)"]
    specs.append(EvidenceSpec(GEOLOGY, "geological_map", "categorical", "units", "identity",
                              {"units": ["LPZE", "UPZC", "LPZ"], "outside": 0.1}, 1.25, "Named by the geologist."))
    specs.append(EvidenceSpec("mapped faults", "structure", "vector", "distance_m", "small",
                              {"midpoint": midpoint, "spread": 3.0}, 0.8, "Fault distance set by the geologist."))
    return EvidencePlan(specs, by="geologist")


def _row(label: str, figures: dict, seconds: float) -> str:
    top = figures.get("capture", {}).get("0.1")
    return f"| {label} | {figures['auc']:.3f} | {top:.1f} of {figures['deposits']} | {seconds:.1f} |"


def main() -> None:
    case = read_case(CASE)
    rows = ["| Surface | AUC | Deposits in the top 10 % | Seconds |", "|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        run = run_analysis(build_request(case.layers, case.question, Path(out) / "agent", BackendValues(),
                                         choices=case.choices, case_id=case.id, deposits=case.deposits))
        agent_s = time.perf_counter() - started
        record = read_record(run.outputs["record"])
        rows.append(_row("agent's plan, no units named (geology left out)", record["favourability"]["validation"]
                         ["knowledge"], agent_s))
        for midpoint in MIDPOINTS:
            started = time.perf_counter()
            done = replan(run.outputs["record"], geologists_plan(recorded_plan(record), midpoint),
                          Path(out) / f"plan-{int(midpoint)}")
            rows.append(_row(f"geologist's plan, one re-run: units named, fault midpoint {midpoint:g} m",
                             done.validation["knowledge"], time.perf_counter() - started))
        started = time.perf_counter()
        named = run_analysis(build_request(case.layers, case.question, Path(out) / "named", BackendValues(),
                                           choices=case.choices, case_id=case.id, deposits=case.deposits,
                                           case_units=case.favourable_units))
        rows.append(_row("agent's plan, units named in the Ask tab (a full run)", named.validation["knowledge"],
                         time.perf_counter() - started))
    text = "\n".join(["## The geologist's evidence plan on Great Basin (offline)", "", *rows, ""])
    print(text)
    write_text_atomic(OUT, text)
