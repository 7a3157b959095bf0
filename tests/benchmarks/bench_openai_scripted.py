"""Model calls, tokens and time per case of the scripted OpenAI-compatible path.

Each scripted scenario of tests/fakes/sta_cot_scripts.py runs `run_analysis` with the "openai" back-end
on the bundled porphyry sample case against the loopback server (real `openai` client, real HTTP).
Tokens are the fake server's counts: about four characters a token for text and 765 tokens an image
(what OpenAI bills a 768-pixel image), so prompt sizes are realistic; answers are scripted. Run:
`.venv/bin/python tests/benchmarks/run_all.py openai_scripted`.
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest, BackendSettings
from lodestar.plugin.request.case import read_case
from lodestar.tests.fakes.openai_server import FakeOpenAIServer
from lodestar.tests.fakes.sta_cot_scripts import SCENARIOS, copy_sample, porphyry_script

MODELS = {"planner": "planner-model", "executor": "executor-model", "verifier": "verifier-model"}


def run_case(case, out: Path, name: str) -> dict:
    kwargs, overrides, rounds = SCENARIOS[name]
    settings = BackendSettings(backend="openai", api_key="sk-bench-000000000", models=dict(MODELS),
                               retry_backoff_s=0.01, max_retries=2, **overrides)
    with FakeOpenAIServer(porphyry_script(**kwargs)) as server:
        settings.base_url = server.base_url
        request = AnalysisRequest(layers=case.layers, question=case.question, output_dir=out, choices=case.choices,
                                  settings=settings, max_rounds=rounds, case_id=case.id)
        started = time.perf_counter()
        result = run_analysis(request)
        seconds = time.perf_counter() - started
        http = len(server.chat_requests)
    usage = result.usage
    return {
        "answer": result.answer, "valid": result.valid, "voted": result.voted, "rounds": result.rounds,
        "calls": sum(row["calls"] for row in usage.values()), "http": http,
        "prompt": sum(row["prompt_tokens"] for row in usage.values()),
        "completion": sum(row["completion_tokens"] for row in usage.values()),
        "per_role": {role: (row["calls"], row["prompt_tokens"] + row["completion_tokens"])
                     for role, row in usage.items()},
        "seconds": seconds,
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        case = read_case(copy_sample(Path(tmp)))
        header = f"{'scenario':36} {'answer':>6} {'valid':>5} {'vote':>4} {'rnds':>4} {'calls':>5} {'http':>4} " \
                 f"{'prompt tok':>10} {'compl tok':>9} {'total tok':>9} {'s':>5}"
        print(header)
        print("-" * len(header))
        rows = {}
        for i, name in enumerate(SCENARIOS):
            row = rows[name] = run_case(case, Path(tmp) / f"run{i}", name)
            print(f"{name:36} {row['answer']:>6} {row['valid']!s:>5} {row['voted']!s:>4} {row['rounds']:>4} "
                  f"{row['calls']:>5} {row['http']:>4} {row['prompt']:>10} {row['completion']:>9} "
                  f"{row['prompt'] + row['completion']:>9} {row['seconds']:>5.1f}")
        print("\nper role (calls, tokens):")
        for name, row in rows.items():
            print(f"  {name:36} " + ", ".join(f"{role} {c}/{t}" for role, (c, t) in row["per_role"].items()))

