"""Every prospectivity-mapping step run headless through qgis_process on the sample case (enums given by index, as
QGIS 3.22 takes them), each output the same as the algorithm's in-process run. One launch per algorithm."""
from __future__ import annotations

import csv
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import rasterio
from mpm_sample import ALOH, DEPOSITS, GEOLOGY, PROPYLITIC, planted_deposits

ROOT = Path(__file__).resolve().parents[2]


def qgis_process(tmp_path, algorithm: str, **parameters) -> dict:
    """Run one algorithm through scripts/qgis_process.sh; its results ({name: text})."""
    args = []
    for key, value in parameters.items():
        args += [f"{key}={v}" for v in (value if isinstance(value, list) else [value])]
    env = dict(os.environ, LODESTAR_QGIS_HOME=str(tmp_path / "qgis"))
    done = subprocess.run(["bash", str(ROOT / "scripts" / "qgis_process.sh"), "run", f"lodestar:{algorithm}", "--",
                           *args], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = done.stdout.split("Results", 1)[1].splitlines()
    return dict(line.split(":\t", 1) for line in results if ":\t" in line)


def same_raster(a, b) -> None:
    with rasterio.open(a) as one, rasterio.open(b) as two:
        assert one.count == two.count and np.array_equal(one.read(), two.read())


def same_table(a, b, skip=()) -> None:
    with open(a, newline="", encoding="utf-8") as one, open(b, newline="", encoding="utf-8") as two:
        rows_a, rows_b = list(csv.DictReader(one)), list(csv.DictReader(two))
    assert len(rows_a) == len(rows_b) > 0
    for x, y in zip(rows_a, rows_b):
        assert {k: v for k, v in x.items() if k not in skip} == {k: v for k, v in y.items() if k not in skip}


def test_every_step_runs_from_qgis_process_as_it_runs_in_process(run, tmp_path):
    cli, here = tmp_path / "cli", tmp_path / "here"
    cli.mkdir(), here.mkdir()

    def both(algorithm, outputs: dict, **parameters):
        """The algorithm's results through qgis_process and in process, outputs named per run."""
        remote = qgis_process(tmp_path, algorithm, **parameters, **{k: str(cli / v) for k, v in outputs.items()})
        local = run(f"lodestar:{algorithm}", {**parameters, **{k: str(here / v) for k, v in outputs.items()}})
        return remote, local

    remote, local = both("fuzzy_membership", {"OUTPUT": "alteration.tif"}, INPUT=ALOH, MEMBERSHIP=0, MIDPOINT=1.0,
                         SPREAD=12.0)
    same_raster(remote["OUTPUT"], local["OUTPUT"])
    remote, local = both("fuzzy_membership", {"OUTPUT": "units.tif"}, INPUT=GEOLOGY, MEMBERSHIP=4, UNITS="porphyry",
                         OUTSIDE=0.1)
    same_raster(remote["OUTPUT"], local["OUTPUT"])
    remote, local = both("fuzzy_overlay", {"OUTPUT": "fav.tif"}, METHOD=1, GAMMA=0.7, WEIGHTS="2,1",
                         INPUT=[str(cli / "alteration.tif"), str(cli / "units.tif")])
    same_raster(remote["OUTPUT"], local["OUTPUT"])
    favourability = str(cli / "fav.tif")
    remote, local = both("delineate_targets", {"OUTPUT": "targets.gpkg"}, INPUT=favourability, AREA_SHARE=0.05,
                         MAX_TARGET_KM2=1.0, DEPOSITS=DEPOSITS)
    assert int(remote["TARGETS"]) == local["TARGETS"] > 0
    remote, local = both("prediction_area", {"OUTPUT_TABLE": "pa.csv", "OUTPUT_PLOT": "pa.png"},
                         INPUT=favourability, DEPOSITS=DEPOSITS)
    assert float(remote["AUC"]) == pytest.approx(local["AUC"]) and float(remote["ROC_AUC"]) == pytest.approx(
        local["ROC_AUC"])
    same_table(remote["OUTPUT_TABLE"], local["OUTPUT_TABLE"])
    wofe = {"INPUT": [ALOH, GEOLOGY], "DEPOSITS": DEPOSITS, "WEIGHING": 4, "LAYER_WEIGHING": "geology=categorical",
            "THRESHOLDS": "aloh=1.0", "UNIT_AREA_KM2": 0.5}
    remote, local = both("weights_of_evidence", {"OUTPUT_TABLE": "w.csv", "OUTPUT_CLASSES": "classes.tif"}, **wofe)
    same_table(remote["OUTPUT_TABLE"], local["OUTPUT_TABLE"])
    same_raster(remote["OUTPUT_CLASSES"], local["OUTPUT_CLASSES"])
    remote, local = both("wofe_response", {"OUTPUT_POSTERIOR": "p.tif", "OUTPUT_STD": "sd.tif",
                                           "OUTPUT_CONFIDENCE": "c.tif"}, **wofe)
    for key in ("OUTPUT_POSTERIOR", "OUTPUT_STD", "OUTPUT_CONFIDENCE"):
        same_raster(remote[key], local[key])
    deposits = planted_deposits(tmp_path)
    remote, local = both("train_prospectivity_model", {"OUTPUT_MODEL": "model.pkl", "OUTPUT_TABLE": "cmp.csv",
                                                       "OUTPUT": "trained.tif"},
                         INPUT=[ALOH, PROPYLITIC], DEPOSITS=deposits, METHOD=1, FOLDS=3, SEED=2)
    assert remote["CHOSEN"] == local["CHOSEN"] == "logistic"
    same_table(remote["OUTPUT_TABLE"], local["OUTPUT_TABLE"], skip=("seconds",))
    same_raster(remote["OUTPUT"], local["OUTPUT"])
    remote, local = both("predict_prospectivity", {"OUTPUT": "predicted.tif"}, INPUT=[ALOH, PROPYLITIC],
                         MODEL=str(cli / "model.pkl"))
    same_raster(remote["OUTPUT"], local["OUTPUT"])
