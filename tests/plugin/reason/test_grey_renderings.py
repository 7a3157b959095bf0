"""A greyscale rendering (a display stretch clipped at 1 and 255) cannot show a departure beyond 255: its anomalies
are cut just under where it stops, and the step says so (worlds_b's greyscale AlOH layers were never read)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import rasterio
from affine import Affine
from scipy import ndimage

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.raster_io import LayerSpec

SIZE = 200
PROFILE = dict(driver="GTiff", width=SIZE, height=SIZE, count=1, dtype="float32", crs="EPSG:32612",
               transform=Affine(30, 0, 500000, 0, -30, 4000000), nodata=-9999)


def _field(seed: int) -> np.ndarray:
    """Smooth background (unit spread) with a bump of 5 spreads, 8 pixels wide, at the centre."""
    noise = ndimage.gaussian_filter(np.random.default_rng(seed).standard_normal((SIZE, SIZE)), 3)
    rows, cols = np.mgrid[0:SIZE, 0:SIZE]
    bump = np.exp(-((cols - 100) ** 2 + (rows - 100) ** 2) / (2 * 8.0 ** 2))
    return noise / noise.std() + 5.0 * bump


def _write(path: Path, values: np.ndarray) -> Path:
    with rasterio.open(path, "w", **PROFILE) as ds:
        ds.write(values.astype("float32"), 1)
    return path


def test_a_clipped_greyscale_rendering_still_marks_its_anomaly(tmp_path):
    physical = _field(3)
    lo, hi = np.quantile(physical, [0.005, 0.995])
    grey = np.clip(1 + 254 * (physical - lo) / (hi - lo), 1, 255)
    layers = [LayerSpec(_write(tmp_path / "aloh_grey.tif", grey), "hydrothermal_alteration", "AlOH (greyscale)"),
              LayerSpec(_write(tmp_path / "silica.tif", 1.0 + 0.05 * _field(4)), "silicification", "silica index")]
    question = "Can porphyry copper deposits be detected? A. Yes B. No"
    result = run_analysis(AnalysisRequest(layers, question, tmp_path / "out", {"A": "Yes", "B": "No"}))
    record = json.loads(Path(result.outputs["record"]).read_text(encoding="utf-8"))
    step = next(node for node in record["chain"] if node["step"]["layers"] == ["AlOH (greyscale)"])
    assert step["observation"]["zone_ids"], step["observation"]["rationale"]
    assert "its values stop at" in step["observation"]["rationale"]
    assert float(step["observation"]["calls"][-1]["params"]["value"]) < 255.0
    assert result.answer == "A"  # a clay core with silica over it
