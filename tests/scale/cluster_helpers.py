"""Analysis functions for the cluster tests, importable by name on the workers (tests/scale is on their path).

`slow_analyse` leaves `<case output>.started` holding its process id before it runs the real engine, so a test
can kill the worker in the middle of a case; `doomed_analyse` kills its own worker process on the case DOOMED.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

DOOMED = "doomed"
HOLD_S = 1.5


def slow_analyse(request, progress):
    from lodestar.models import run_analysis

    Path(str(request.output_dir) + ".started").write_text(str(os.getpid()), encoding="utf-8")
    time.sleep(HOLD_S)
    return run_analysis(request, progress)


def doomed_analyse(request, progress):
    from lodestar.models import run_analysis

    if request.case_id == DOOMED:
        os._exit(3)
    return run_analysis(request, progress)
