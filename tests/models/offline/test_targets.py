"""A target is weighed by the test a candidate core is: each item of the deposit model sought around its outline
(a zone within the item's reach, faults and host units over their whole layer), else its layers measured at the
target, with one significance level shared among the layers and the targets judged."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import rasterio
from affine import Affine
from shapely.geometry import box

from lodestar.models.offline import OfflineReasoner
from lodestar.plugin.raster_io import LayerSpec, RasterSet
from lodestar.plugin.reason.contract import ChainNode, Observation, PlanStep, ToolCall
from lodestar.plugin.reason.knowledge import retrieve
from lodestar.plugin.reason.workspace import Workspace
from lodestar.plugin.zones import zone_record, zones_frame

PORPHYRY = "Can porphyry copper deposits be detected? A. Yes B. No"
TRANSFORM = Affine(30, 0, 500000, 0, -30, 4000000)  # 80 x 80 cells of 30 m: x 500000-502400, y 3997600-4000000
OVER = box(501050, 3998650, 501350, 3998950)  # over the anomaly centred at cell (40, 40): x 501200, y 3998800
FAR = box(500030, 3997630, 500230, 3997830)  # 1.16 km from a zone over it, in the noise


def _write(path: Path, data: np.ndarray, dtype: str = "float32") -> Path:
    profile = dict(driver="GTiff", width=data.shape[1], height=data.shape[0], count=1, dtype=dtype, crs="EPSG:32612",
                   transform=TRANSFORM, nodata=-9999)
    with rasterio.open(path, "w", **profile) as ds:
        ds.write(data.astype(dtype), 1)
    return path


def _index(path: Path, seed: int, amplitude: float = 0.3) -> Path:
    rng = np.random.default_rng(seed)
    rows, cols = np.mgrid[0:80, 0:80]
    value = 1.0 + 0.01 * rng.standard_normal((80, 80))
    value += amplitude * np.exp(-((cols - 40) ** 2 + (rows - 40) ** 2) / (2 * 6.0 ** 2))
    return _write(path, value)


@pytest.fixture(scope="module")
def layers(tmp_path_factory):
    folder = tmp_path_factory.mktemp("targets")
    return [LayerSpec(_index(folder / "aloh.tif", 1), "hydrothermal_alteration", "aloh"),
            LayerSpec(_index(folder / "silica.tif", 2), "silicification", "silica")]


def _workspace(specs, tmp_path, question=PORPHYRY, units=None):
    return Workspace(question, {"A": "Yes", "B": "No"}, RasterSet(specs), tmp_path / "evidence",
                     knowledge=retrieve(question, [s.role for s in specs]), favourable_units=units or {})


def _mark(ws, index: int, layer: str, role: str, outlines: list) -> None:
    """A marking step of `layer` in the chain with one clear zone per outline (none: it marked nothing)."""
    step = PlanStep(index, f"mark {layer}", [layer], "", "color_regions", "", "", {}, "", "critical")
    call = ToolCall("color_regions", [layer], {}).to_dict()
    node = ChainNode(step, Observation(index, "color_regions", [layer], "seen", [], "",
                                       "Yes" if outlines else "No", calls=[call]))
    records = [zone_record(outline, ws.raster_set.grid, zone_id=f"s{index}:{layer}:{n}", layer=layer, role=role,
                           kind="anomaly", score_mean=1.25, score_max=1.25, what="anomaly")
               for n, outline in enumerate(outlines, start=1)]
    ws.put(node, zones_frame(records, ws.raster_set.crs))


def _judge(ws, *outlines):
    measured = [{"target": n, "outline": outline.wkt} for n, outline in enumerate(outlines, start=1)]
    return [{item["id"]: item for item in judged["items"]} | {"verdict": judged["verdict"]}
            for judged in OfflineReasoner().target_verdicts(ws, measured)]


def test_a_target_holds_the_items_whose_zones_lie_within_reach_and_not_the_others(layers, tmp_path):
    ws = _workspace(layers, tmp_path)
    _mark(ws, 1, "aloh", "hydrothermal_alteration", [OVER])
    _mark(ws, 2, "silica", "silicification", [OVER])
    over, far = _judge(ws, OVER, FAR)
    assert over["phyllic_core"]["status"] == "supported" and over["phyllic_core"]["layer"] == "aloh"
    assert over["phyllic_core"]["evidence"].startswith("zone 1 of step 1 on aloh: ")
    assert "at the target (reach 1,000 m)" in over["phyllic_core"]["evidence"]
    assert over["zoned_alteration"]["status"] == "supported" and over["zoned_alteration"]["layer"] == "silica"
    assert over["silica_or_gossan"]["status"] == "supported"
    assert over["verdict"] == "strong"
    # 1.16 km off: beyond the first item's 1,000 m (and the coincidence's 450 m), and no layer stands out there
    assert far["phyllic_core"]["status"] == "absent"
    assert far["phyllic_core"]["evidence"].startswith("no zone of ") and "within 1,000 m and no layer" in \
        far["phyllic_core"]["evidence"]
    assert far["zoned_alteration"]["status"] == "absent"
    assert far["verdict"] == "unsupported"
    assert over["propylitic_halo"]["status"] == "untestable" == far["propylitic_halo"]["status"]


def test_a_layer_standing_out_at_a_target_counts_at_one_level_shared_among_the_targets(layers, tmp_path):
    """No step marked a zone: the items are measured at each target, significant at 0.05 over the layers tried
    times the targets judged together."""
    ws = _workspace(layers, tmp_path)
    _mark(ws, 1, "aloh", "hydrothermal_alteration", [])
    _mark(ws, 2, "silica", "silicification", [])
    two = _judge(ws, OVER, FAR)
    assert two[0]["phyllic_core"]["status"] == "supported"
    words = two[0]["phyllic_core"]["evidence"]
    assert words.startswith("aloh (measured at the target: it stands above its surroundings")
    assert "bound 0.0250)" in words  # 0.05 / (1 layer x 2 targets)
    assert two[1]["phyllic_core"]["status"] == "absent"
    four = _judge(ws, OVER, FAR, FAR, FAR)
    assert "bound 0.0125)" in four[0]["phyllic_core"]["evidence"]


def test_host_units_are_sought_over_every_patch_of_the_map(tmp_path):
    """Six patches of a host unit: a step marks the five largest as zones, yet a place on the sixth lies in the
    host unit, and one 9 to 11 cells off every patch lies about 300 m from it."""
    codes = np.ones((80, 80), dtype="int16")
    for n, (row, col) in enumerate([(5, 5), (5, 30), (5, 55), (30, 5), (30, 55), (60, 60)]):
        side = 12 - n  # the last patch, at rows and cols 60-65, is the smallest
        codes[row:row + side, col:col + side] = 2
    path = _write(tmp_path / "geology.tif", codes, dtype="int16")
    specs = [LayerSpec(path, "geological_map", "geology"),
             LayerSpec(_index(tmp_path / "sb.tif", 3), "geochemistry", "sb")]
    ws = _workspace(specs, tmp_path, "Where are Carlin-type gold deposits likely?", {"geology": ["2"]})
    from lodestar.models.offline.scene import Scene
    from lodestar.models.offline.settings import OfflineSettings
    from lodestar.plugin.progress import SILENT

    scene = Scene(ws, OfflineSettings(), SILENT)
    on_sixth = box(500000 + 61 * 30, 4000000 - 64 * 30, 500000 + 64 * 30, 4000000 - 61 * 30)
    ((what, gap),) = scene.unit_gaps(on_sixth, ["geological_map"])
    assert what.startswith("geology (nearest cell of its host units 2)") and gap == 0.0
    off = box(500000 + 43 * 30, 4000000 - 35 * 30, 500000 + 46 * 30, 4000000 - 32 * 30)  # cols 43-45 of rows 32-34
    ((_, gap),) = scene.unit_gaps(off, ["geological_map"])  # the fifth patch starts at col 55 on those rows
    assert 9 * 30 <= gap <= 11 * 30
    assert scene.unit_gaps(on_sixth, ["structure"]) == []
    (judged,) = OfflineReasoner().target_verdicts(ws, [{"target": 1, "outline": on_sixth.wkt}])
    host = next(item for item in judged["items"] if item["id"] == "carbonate_host")
    assert host["status"] == "supported" and host["layer"] == "geology"
    assert host["evidence"] == "geology (nearest cell of its host units 2), at the target (reach 900 m)"
