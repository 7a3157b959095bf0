"""qgis_process deletes its Processing temporary folder when it exits: a headless lodestar:analyze run names where
it is kept (its record) and never prints a path that is gone once the command returns."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "resources" / "sample" / "porphyry-demo" / "case.json"


def _analyze(home: Path, *outputs: str) -> str:
    done = subprocess.run([str(ROOT / "scripts" / "qgis_process.sh"), "run", "lodestar:analyze", "--",
                           f"CASE={SAMPLE}", *outputs], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, LODESTAR_QGIS_HOME=str(home), QT_QPA_PLATFORM="offscreen"))
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_printed_run_record_is_there_after_qgis_process_exits(tmp_path):
    record = tmp_path / "out" / "record.json"
    log = _analyze(tmp_path / "qgis", f"OUTPUT_RECORD={record}")
    answer = next(line for line in log.splitlines() if line.startswith("Answer: "))
    assert answer.endswith(f"Run record: {record}.")
    assert "Run folder" not in log and "lodestar-analyze-" not in log  # the working folder, deleted at exit
    assert record.is_file() and '"created_utc"' in record.read_text(encoding="utf-8")


def test_a_record_left_temporary_is_said_to_be_temporary(tmp_path):
    log = _analyze(tmp_path / "qgis")
    answer = next(line for line in log.splitlines() if line.startswith("Answer: "))
    printed = re.search(r"Run record: (\S+) \(temporary: deleted when QGIS or qgis_process exits; give "
                        r"OUTPUT_RECORD to keep it\)\.$", answer)
    assert printed is not None, answer
    assert not Path(printed.group(1)).exists()  # as the line says: gone with qgis_process's temporary folder
