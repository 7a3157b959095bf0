"""Evidence that cannot speak, measured (issue 60, scenarios 4, 5 and 6, and the trial's class rasters): a critical
layer too flat to rank, or holding no data where its item is tested (a hole, +inf cells), makes the item
untestable and the answer Insufficient evidence, never a verified "No"; a signed-byte raster reads as its signed
values and answers as the original does; a class raster keeps its class values on any grid, and weights of
evidence cut it at whole classes."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
import rasterio
from scipy import ndimage

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.raster_io import LayerSpec, RasterReader, RasterSet
from lodestar.plugin.reason.contract import INSUFFICIENT
from lodestar.plugin.request.case import read_case
from lodestar.tests.fakes.sta_cot_scripts import ALOH, copy_sample

GREAT_BASIN = Path(__file__).resolve().parents[1] / "data" / "great-basin-gold"
CLASSES = set(range(1, 26))
"""The classes of Great Basin's stream-sediment arsenic map (as_rcl.tif), on its own 500 m grid."""


def _run(folder: Path, out: Path):
    case = read_case(folder / "case.json")
    return run_analysis(AnalysisRequest(case.layers, case.question, out, choices=case.choices))


def _aloh(folder: Path) -> tuple[np.ndarray, dict]:
    with rasterio.open(folder / "aloh.tif") as ds:
        return ds.read(1, masked=True), dict(ds.profile)


def _write(path: Path, values: np.ndarray, profile: dict, **changes) -> None:
    profile = dict(profile, **changes)
    with rasterio.open(path, "w", **profile) as ds:
        ds.write(values.astype(profile["dtype"]), 1)


@pytest.fixture(scope="module")
def intact(tmp_path_factory):
    """The sample case as bundled, run once: it answers A (Yes), verified."""
    folder = copy_sample(tmp_path_factory.mktemp("intact"))
    result = _run(folder, folder.parent / "run")
    assert (result.answer, result.valid) == ("A", True)
    return result


# ----------------------------------------------------------------------------- scenario 4: nearly flat evidence
def test_a_nearly_flat_critical_layer_is_untestable_not_absent(tmp_path):
    """AlOH at 0.5 +/- 1e-6 (dozens of distinct float32 values; the check for one value was exact) once answered from
    its noise. Its spread is under 1e-5 of its size (workspace.FLAT_SPREAD): it cannot rank, so the core item
    cannot be tested."""
    folder = copy_sample(tmp_path)
    values, profile = _aloh(folder)
    noise = np.random.default_rng(4).uniform(-1e-6, 1e-6, values.shape)
    _write(folder / "aloh.tif", 0.5 + noise, profile)
    assert len(np.unique(RasterReader(folder / "aloh.tif").read()[0].compressed())) > 2  # not a single value
    result = _run(folder, tmp_path / "run")
    assert result.answer == INSUFFICIENT and not (result.answer == "B" and result.valid)
    said = "holds a single value to within 1e-05 of it (0.5 +/- "
    assert any(note.startswith(f"Warning: {ALOH} {said}") for note in result.notes)
    rationale = result.verdicts[-1]["verdict"]["rationale"]
    assert "cannot be tested" in rationale and f"{ALOH} {said}" in rationale
    record = json.loads((tmp_path / "run" / "record.json").read_text(encoding="utf-8"))
    assert next(layer for layer in record["layers"] if layer["name"] == ALOH)["silent"].startswith(said)


# ------------------------------------------------------------------------------- scenario 5: signed-byte rasters
def test_a_signed_byte_copy_of_the_aloh_index_reads_signed_and_answers_as_the_original(tmp_path, intact):
    """AlOH as int8 (400 x (value - 1): -39 to 63) was read as unsigned bytes (-1 as 255), its background above
    its anomaly, and the run answered 'B (No); verified'. Its values read are the signed ones, and the run
    answers as the original does."""
    folder = copy_sample(tmp_path)
    values, profile = _aloh(folder)
    codes = np.rint((values.filled(np.nan) - 1.0) * 400.0)
    assert codes.min() < 0 < codes.max() <= 127
    _write(folder / "aloh.tif", codes, profile, dtype="int8", nodata=None)
    read = RasterReader(folder / "aloh.tif").read()[0]
    assert read.dtype == np.float32 and not read.mask.any()
    assert np.array_equal(read.data, codes.astype("float32"))  # -39 read as -39, not 217
    result = _run(folder, tmp_path / "run")
    assert (result.answer, result.valid) == (intact.answer, intact.valid)


# ------------------------------------------------------------------------- scenario 6: no data where it is tested
def _over_the_core(values: np.ma.MaskedArray) -> np.ndarray:
    """The largest patch of the intact AlOH's top 3 % grown by 6 pixels (180 m): its anomaly, where the run's
    core lies."""
    filled = values.filled(np.nan)
    patches, _ = ndimage.label(ndimage.binary_dilation(filled >= np.nanpercentile(filled, 97), iterations=6))
    return patches == np.argmax(np.bincount(patches.ravel())[1:]) + 1


@pytest.mark.parametrize("how", ["+inf cells", "a nodata hole"])
def test_a_critical_layer_with_no_data_over_the_core_cannot_test_its_item_there(tmp_path, how):
    """With AlOH's anomaly blanked out (+inf, or its nodata value), the core the other layers find lies where
    AlOH holds no data: its item was 'missing' and the answer 'B (No); verified'. It is untestable there, and the
    answer is Insufficient evidence, saying which layer holds no data at the core."""
    folder = copy_sample(tmp_path)
    values, profile = _aloh(folder)
    blanked = values.filled(profile["nodata"]).astype("float32")
    blanked[_over_the_core(values)] = np.inf if how == "+inf cells" else profile["nodata"]
    _write(folder / "aloh.tif", blanked, profile)
    result = _run(folder, tmp_path / "run")
    assert result.answer == INSUFFICIENT and not (result.answer == "B" and result.valid)
    rationale = result.verdicts[-1]["verdict"]["rationale"]
    assert "phyllic_core [critical] cannot be tested at the core" in rationale
    assert f"{ALOH} holds no data over" in rationale
    assert any("Insufficient evidence" in note and ALOH in note for note in result.notes)


def test_no_data_away_from_the_core_leaves_the_answer_as_it_was(tmp_path, intact):
    """The same hole in a corner, far from the core: the item is tested at the core as before (the answer of the
    intact case), since only where an item is tested does a layer's lack of data matter."""
    folder = copy_sample(tmp_path)
    values, profile = _aloh(folder)
    blanked = values.filled(profile["nodata"]).astype("float32")
    hole = np.zeros(values.shape, dtype=bool)
    hole[:64, :64] = True  # as large as the patch over the core
    assert not (hole & _over_the_core(values)).any() and hole.sum() >= _over_the_core(values).sum()
    blanked[hole] = np.inf
    _write(folder / "aloh.tif", blanked, profile)
    result = _run(folder, tmp_path / "run")
    assert (result.answer, result.valid) == (intact.answer, intact.valid)


# --------------------------------------------------------------------------------- trial: class rasters as classes
def test_weights_of_evidence_cuts_great_basins_arsenic_classes_at_whole_classes(run, tmp_path):
    """as_rcl (classes 1-25 on a 500 m grid) beside sb_rcl (250 m): the arsenic classes were interpolated onto
    the finer grid and cut at '>= 6.88683'. Every pattern's edge is now a whole class."""
    result = run("lodestar:weights_of_evidence", {
        "INPUT": [str(GREAT_BASIN / "as_rcl.tif"), str(GREAT_BASIN / "sb_rcl.tif")],
        "DEPOSITS": str(GREAT_BASIN / "TrainGP.gpkg"), "WEIGHING": 0,
        "OUTPUT_TABLE": str(tmp_path / "w.csv"), "OUTPUT_CLASSES": str(tmp_path / "classes.tif")})
    with open(result["OUTPUT_TABLE"], newline="", encoding="utf-8") as fh:
        rows = [row for row in csv.DictReader(fh) if row["layer"] == "as_rcl"]
    assert rows and all(row["weighing"].startswith("cumulative") for row in rows)
    edges = [float(row["value"]) for row in rows]
    assert all(edge.is_integer() and 1 <= edge <= 26 for edge in edges), edges
    chosen = [row for row in rows if row["generalised"] == "True"]
    assert len(chosen) == 1 and float(chosen[0]["value"]).is_integer()


def test_a_class_raster_keeps_only_its_classes_on_another_grid(tmp_path):
    """as_rcl on sb_rcl's finer grid, and on a grid in another CRS (a layer in UTM first): only its own class
    values, on the analysis grid and in the full-resolution surface's blocks."""
    from rasterio.warp import calculate_default_transform, reproject
    from rasterio.windows import Window

    from lodestar.plugin.favourability.blockwise import full_resolution_grid, read_block

    arsenic, antimony = LayerSpec(GREAT_BASIN / "as_rcl.tif", "geochemistry"), LayerSpec(
        GREAT_BASIN / "sb_rcl.tif", "geochemistry")
    with rasterio.open(antimony.path) as ds:  # sb_rcl warped to UTM 11N: the analysis grid's CRS
        transform, width, height = calculate_default_transform(ds.crs, "EPSG:32611", ds.width, ds.height, *ds.bounds)
        utm = np.full((height, width), 255, dtype="uint8")
        reproject(ds.read(1), utm, src_transform=ds.transform, src_crs=ds.crs, dst_transform=transform,
                  dst_crs="EPSG:32611", src_nodata=255, dst_nodata=255)
        profile = dict(ds.profile, crs="EPSG:32611", transform=transform, width=width, height=height)
    with rasterio.open(tmp_path / "sb_utm.tif", "w", **profile) as ds:
        ds.write(utm, 1)
    for first in (antimony, LayerSpec(tmp_path / "sb_utm.tif", "geochemistry")):
        rasters = RasterSet([first, arsenic])
        assert rasters.grid.pixel_size[0] < 500  # finer than as_rcl's own grid
        values = rasters.read("as_rcl")[0].compressed()
        assert values.size > 100_000 and set(np.unique(values)) <= CLASSES
        full, grid = full_resolution_grid([first, arsenic])
        block = read_block(full, "as_rcl", Window(grid.width // 2 - 256, grid.height // 2 - 256, 512, 512))
        assert set(np.unique(block.compressed())) <= CLASSES and block.count() > 10_000
