"""Write the bundled sample case resources/sample/porphyry-demo/ (fixed seed; `make sample`).

A positive porphyry copper case: categorical geological map with legend, AlOH, quartz and
propylitic index maps (one of them in EPSG:4326), a MineBench-style colour rendering of the
ferric iron index, mapped faults and the known deposits. Run: `python scripts/make_sample_case.py
[FOLDER]`; the same files come out on every run.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synthetic_cases  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DIR = ROOT / "resources" / "sample" / "porphyry-demo"
SEED = 20240
QUESTION = "Given the following remote-sensing images, can porphyry copper deposits be detected? Answer: A. Yes B. No."


def make_sample(folder=SAMPLE_DIR) -> Path:
    """(Re)write the sample case into `folder` (emptied first) and return its case.json."""
    folder = Path(folder)
    if folder.exists():
        shutil.rmtree(folder)
    return synthetic_cases.make_case(
        folder, SEED, "porphyry", 260, layers=["aloh", "silica", "propylitic", "ferric"], colour={"ferric"},
        mixed_crs=True, structure="vector", geology_style="categorical", magnetics=False, subtle=False,
        case_id="porphyry-demo-01", question=QUESTION, record=False,
    )


if __name__ == "__main__":
    path = make_sample(Path(sys.argv[1]) if len(sys.argv) > 1 else SAMPLE_DIR)
    total = sum(p.stat().st_size for p in path.parent.iterdir())
    print(f"Sample case written: {path} ({total / 1e6:.2f} MB)")
