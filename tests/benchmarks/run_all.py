"""Run every benchmark module `tests/benchmarks/bench_*.py` (each has a `main()`), or those named.

A name selects the modules whose file name contains it: `run_all.py suite` is the generator the offline
reasoner was developed on (scripts/synthetic_cases.py), `run_all.py worlds_b` the independent one it was
not (scripts/worlds_b.py); with no name both run, one after the other. After each module, the figures of README.md
and docs/results.md that it measures are rewritten from what it has just written (tests/readme_figures.py).
"""
from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import conftest  # noqa: E402,F401  (puts the checkout on sys.path as the `lodestar` package)
from readme_figures import refresh_documents  # noqa: E402


def main(names: list[str]) -> int:
    modules = sorted(HERE.glob("bench_*.py"))
    if names:
        modules = [m for m in modules if any(n in m.stem for n in names)]
    for path in modules:
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module  # dataclasses look their module up while the class is made
        spec.loader.exec_module(module)
        print(f"\n=== {path.stem} ===", flush=True)
        start = time.perf_counter()
        module.main()
        print(f"({path.stem}: {time.perf_counter() - start:.1f} s)", flush=True)
        for document, changed in refresh_documents(path.stem.removeprefix("bench_")).items():
            print(f"{document}: " + ", ".join(f"{name} {was} -> {now}" for name, (was, now) in changed.items()),
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
