"""Segment Anything refinement with tiny randomly initialised SAMs saved as checkpoints."""
from __future__ import annotations

import sys
from functools import partial

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from affine import Affine
from shapely.geometry import LineString, box

from lodestar.models import sam as sam_module
from lodestar.models.sam import (
    PixelBox,
    anomaly_points,
    architecture_from_state_dict,
    load_sam,
    plan_windows,
    refine_zones,
    resolve_device,
    with_context,
)
from lodestar.plugin.errors import Cancelled, LodestarError
from lodestar.plugin.progress import Progress
from lodestar.plugin.raster_io import LayerSpec, RasterSet

torch = pytest.importorskip("torch")
pytest.importorskip("segment_anything")

CRS = "EPSG:32633"
ORIGIN = (500000.0, 4000000.0)
PIXEL = 10.0
TRANSFORM = Affine(PIXEL, 0, ORIGIN[0], 0, -PIXEL, ORIGIN[1])
TINY_INPUT = 128


def tiny_sam(seed: int = 0):
    """A SAM with a 2-block, 32-dim ViT on 128 px inputs, built from segment_anything's own classes."""
    from segment_anything.modeling import ImageEncoderViT, MaskDecoder, PromptEncoder, Sam, TwoWayTransformer

    torch.manual_seed(seed)
    dim, patch = 32, 16
    return Sam(
        image_encoder=ImageEncoderViT(
            img_size=TINY_INPUT, patch_size=patch, embed_dim=dim, depth=2, num_heads=2, mlp_ratio=2.0,
            norm_layer=partial(torch.nn.LayerNorm, eps=1e-6), qkv_bias=True, use_rel_pos=True,
            global_attn_indexes=(1,), window_size=4, out_chans=dim,
        ),
        prompt_encoder=PromptEncoder(embed_dim=dim, image_embedding_size=(TINY_INPUT // patch, TINY_INPUT // patch),
                                     input_image_size=(TINY_INPUT, TINY_INPUT), mask_in_chans=8),
        mask_decoder=MaskDecoder(
            num_multimask_outputs=3,
            transformer=TwoWayTransformer(depth=2, embedding_dim=dim, mlp_dim=64, num_heads=8),
            transformer_dim=dim, iou_head_depth=3, iou_head_hidden_dim=32,
        ),
    ).eval()


def constant_masks(sam, signs, ious):
    """Make every mask token predict a constant logit (sign * ~3) everywhere, with fixed predicted IoUs."""
    decoder = sam.mask_decoder
    with torch.no_grad():
        last = decoder.output_upscaling[3]
        last.weight.zero_()
        last.bias.zero_()
        last.bias[0] = 3.0
        for mlp, sign in zip(decoder.output_hypernetworks_mlps, signs):
            mlp.layers[-1].weight.zero_()
            mlp.layers[-1].bias.zero_()
            mlp.layers[-1].bias[0] = float(sign)
        head = decoder.iou_prediction_head.layers[-1]
        head.weight.zero_()
        head.bias.copy_(torch.tensor(ious, dtype=torch.float32))
    return sam


def save(sam, path):
    torch.save(sam.state_dict(), path)
    return path


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sam")
    return {
        "random": save(tiny_sam(), folder / "random.pth"),
        # multimask outputs are tokens 1-3: token 2 (full mask) has the highest predicted IoU
        "full": save(constant_masks(tiny_sam(), [-1, -1, 1, -1], [0.0, 0.3, 0.8, 0.5]), folder / "full.pth"),
        # the best predicted IoU goes to an empty mask
        "empty": save(constant_masks(tiny_sam(), [1, 1, -1, 1], [0.0, 0.3, 0.9, 0.5]), folder / "empty.pth"),
    }


def write_raster(path, data, nodata=-9999.0, dtype="float32"):
    data = np.asarray(data)
    if data.ndim == 2:
        data = data[np.newaxis]
    with rasterio.open(path, "w", driver="GTiff", width=data.shape[2], height=data.shape[1], count=data.shape[0],
                       dtype=dtype, crs=CRS, transform=TRANSFORM, nodata=nodata) as ds:
        ds.write(data.astype(dtype))
    return path


def index_data(rows=80, cols=100):
    """A smooth index with a hot spot at row 33, col 42 and a 5 x 5 nodata block at rows 8-12, cols 20-24."""
    r, c = np.mgrid[0:rows, 0:cols]
    data = np.exp(-((r - 33) ** 2 + (c - 42) ** 2) / 60.0).astype("float32")
    data[8:13, 20:25] = -9999.0
    return data


@pytest.fixture
def index_set(tmp_path):
    path = write_raster(tmp_path / "aloh.tif", index_data())
    return RasterSet([LayerSpec(path, "hydrothermal_alteration", name="aloh")])


def pixel_box(c0, r0, c1, r1):
    """Map box of pixel columns c0..c1 and rows r0..r1 (ends exclusive)."""
    return box(ORIGIN[0] + c0 * PIXEL, ORIGIN[1] - r1 * PIXEL, ORIGIN[0] + c1 * PIXEL, ORIGIN[1] - r0 * PIXEL)


def zones_on(layer, boxes, crs=CRS):
    geometries = [pixel_box(*b) for b in boxes]
    return gpd.GeoDataFrame({
        "zone_id": [f"{layer}:{i + 1}" for i in range(len(boxes))],
        "layer": [layer] * len(boxes),
        "kind": ["anomaly"] * len(boxes),
        "area_m2": [g.area for g in geometries],
        "bbox": ["{:.3f},{:.3f},{:.3f},{:.3f}".format(*g.bounds) for g in geometries],
        "description": [f"zone {i + 1}" for i in range(len(boxes))],
    }, geometry=geometries, crs=crs)


def on_lattice(geometry) -> bool:
    rings = []
    for polygon in getattr(geometry, "geoms", [geometry]):
        rings += [polygon.exterior] + list(polygon.interiors)
    coords = np.array([xy for ring in rings for xy in ring.coords])
    cols = (coords[:, 0] - ORIGIN[0]) / PIXEL
    rows = (ORIGIN[1] - coords[:, 1]) / PIXEL
    return bool(np.allclose(cols, np.round(cols)) and np.allclose(rows, np.round(rows)))


# --- loading --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, builder, dims", [
    ("vit_b", "build_sam_vit_b", (768, 12, 12, (2, 5, 8, 11))),
    ("vit_l", "build_sam_vit_l", (1024, 24, 16, (5, 11, 17, 23))),
    ("vit_h", "build_sam_vit_h", (1280, 32, 16, (7, 15, 23, 31))),
])
def test_released_architectures_are_read_from_weights(name, builder, dims):
    import segment_anything

    with torch.device("meta"):  # shapes only, no memory
        state = getattr(segment_anything, builder)().state_dict()
    arch = architecture_from_state_dict(state)
    assert arch.name == name
    assert (arch.embed_dim, arch.depth, arch.num_heads, arch.global_attn_indexes) == dims
    assert (arch.img_size, arch.patch_size, arch.window_size, arch.prompt_embed_dim) == (1024, 16, 14, 256)
    decoder = (arch.decoder_depth, arch.decoder_mlp_dim, arch.num_multimask_outputs, arch.mask_in_chans)
    assert decoder == (2, 2048, 3, 16)


def test_tiny_checkpoint_loads_through_the_user_path(checkpoints, tmp_path):
    renamed = tmp_path / "sam_vit_h_4b8939.pth"  # the file name must not decide the type
    renamed.write_bytes(checkpoints["random"].read_bytes())
    model = load_sam(renamed, device="cpu")
    arch = model.architecture
    encoder = (arch.embed_dim, arch.depth, arch.num_heads, arch.global_attn_indexes, arch.window_size)
    assert encoder == (32, 2, 2, (1,), 4)
    assert (arch.img_size, arch.patch_size, arch.mlp_ratio, arch.mask_in_chans) == (128, 16, 2.0, 8)
    assert model.model_type.startswith("custom ViT (embed 32, depth 2")
    assert model.input_size == TINY_INPUT and model.device == "cpu"
    reference = tiny_sam().state_dict()
    loaded = model.sam.state_dict()
    assert all(torch.equal(reference[k], loaded[k]) for k in reference)
    assert load_sam(renamed) is model  # cached


def test_wrapped_state_dicts_load(checkpoints, tmp_path):
    state = torch.load(checkpoints["random"], weights_only=True)
    path = tmp_path / "wrapped.pth"
    torch.save({"model": {f"module.{k}": v for k, v in state.items()}}, path)
    assert load_sam(path).architecture.embed_dim == 32


def test_missing_checkpoint_says_what_to_download(tmp_path):
    with pytest.raises(LodestarError, match=r"SAM checkpoint not found: .*nowhere\.pth.*sam_vit_b_01ec64\.pth"):
        load_sam(tmp_path / "nowhere.pth")


def test_file_that_is_not_a_checkpoint(tmp_path):
    path = tmp_path / "notes.pth"
    path.write_text("not weights")
    with pytest.raises(LodestarError, match="notes.pth cannot be read as a PyTorch checkpoint"):
        load_sam(path)


def test_state_dict_of_another_model(tmp_path):
    path = tmp_path / "resnet.pth"
    torch.save(torch.nn.Linear(3, 2).state_dict(), path)
    with pytest.raises(LodestarError, match="not a Segment Anything .* no 'image_encoder.patch_embed.proj.weight'"):
        load_sam(path)


def test_sam_variant_with_extra_weights_does_not_fit(checkpoints, tmp_path):
    state = torch.load(checkpoints["random"], weights_only=True)
    state["mask_decoder.hf_token.weight"] = torch.zeros(1, 32)  # as HQ-SAM adds
    path = tmp_path / "hq.pth"
    torch.save(state, path)
    with pytest.raises(LodestarError, match=r"hq.pth does not fit the custom ViT .*hf_token.*HQ-SAM"):
        load_sam(path)


def test_cuda_without_gpu(checkpoints, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(LodestarError, match="CUDA was asked for but torch sees no CUDA GPU.*Choose the CPU"):
        load_sam(checkpoints["random"], device="cuda")
    assert resolve_device("auto") == "cpu"
    with pytest.raises(LodestarError, match="Unknown device 'tpu'"):
        resolve_device("tpu")


@pytest.mark.parametrize("module, package", [("torch", "torch"), ("segment_anything", "segment-anything")])
def test_missing_packages_are_named(checkpoints, monkeypatch, module, package):
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    with pytest.raises(LodestarError, match=f"Segment Anything refinement needs the Python package '{package}'.*"
                                            f"pip install {package}"):
        load_sam(checkpoints["random"])


# --- windows and prompts --------------------------------------------------------------------------------------

def test_boxes_close_together_share_one_window():
    boxes = [PixelBox(30, 20, 50, 40), PixelBox(60, 10, 70, 30)]
    plan = plan_windows(boxes, 100, 80, tile=128)
    assert len(plan) == 1
    window, members = plan[0]
    # context: 16 px around each box, clipped to the 100 x 80 grid
    assert (window.col_off, window.row_off, window.width, window.height) == (14, 0, 86 - 14, 56)
    assert members == [0, 1]


def test_small_windows_grow_to_a_quarter_of_the_model_input():
    # SAM's 1024 px input: at least 256 px a side, centred on the box, shifted inside the grid at its edge
    (window, members), = plan_windows([PixelBox(500, 10, 520, 30)], 2000, 1000, tile=1024)
    assert (window.col_off, window.row_off, window.width, window.height) == (382, 0, 256, 256)
    (window, _), = plan_windows([PixelBox(30, 20, 50, 40)], 100, 80, tile=1024)
    assert (window.col_off, window.row_off, window.width, window.height) == (0, 0, 100, 80)


def test_large_areas_are_tiled_and_big_zones_get_their_own_window():
    boxes = [PixelBox(20, 20, 40, 40), PixelBox(60, 50, 80, 70), PixelBox(360, 250, 380, 270),
             PixelBox(100, 100, 300, 250)]
    plan = plan_windows(boxes, 400, 300, tile=128)
    assigned = sorted(i for _, members in plan for i in members)
    assert assigned == [0, 1, 2, 3]
    own = [w for w, members in plan if members == [3]]
    assert len(own) == 1  # 200 x 150 px does not fit a 128 px tile: its context box is its window
    big = with_context(boxes[3], 400, 300)
    assert big == PixelBox(50, 50, 350, 300)  # 50 px context (a quarter of 200), clipped to the grid
    assert (own[0].col_off, own[0].row_off, own[0].width, own[0].height) == (50, 50, 300, 250)
    for window, members in plan:
        if members != [3]:
            assert window.width <= 128 and window.height <= 128
            assert all(with_context(boxes[i], 400, 300).inside(window) for i in members)
    assert len(plan) == 3  # boxes 0 and 1 share a tile


def test_anomaly_points_sit_on_the_maximum(index_set):
    grid = index_set.grid.window_grid(rasterio.windows.Window(14, 4, 52, 52))
    values = index_set.read("aloh")[0, 4:56, 14:66]
    zone = pixel_box(30, 20, 50, 40)
    high = anomaly_points(zone, values, grid, "high")
    assert high.tolist() == [[42 - 14 + 0.5, 33 - 4 + 0.5]]
    low = anomaly_points(zone, values, grid, "low")
    # the lowest value inside the zone is at the corner farthest from the hot spot: col 30, row 20
    assert low.tolist() == [[30 - 14 + 0.5, 20 - 4 + 0.5]]


def test_clean_mask_fills_small_holes_and_drops_small_islands():
    mask = np.zeros((40, 40), dtype=bool)
    mask[5:25, 5:25] = True
    mask[8:10, 8:10] = False    # 4 px hole: filled
    mask[12:17, 12:17] = False  # 25 px hole: kept
    mask[30:33, 30:33] = True   # 9 px island: dropped
    cleaned = sam_module.clean_mask(mask, 16)
    expected = np.zeros((40, 40), dtype=bool)
    expected[5:25, 5:25] = True
    expected[12:17, 12:17] = False
    assert np.array_equal(cleaned, expected)
    lone = np.zeros((40, 40), dtype=bool)
    lone[30:33, 30:33] = True   # the only region, however small, stays
    assert np.array_equal(sam_module.clean_mask(lone, 16), lone)


def test_mask_geometry_keeps_the_regions_touching_the_zone(index_set):
    grid = index_set.grid
    mask = np.zeros((grid.height, grid.width), dtype=bool)
    mask[10:30, 10:40] = True  # touches the zone
    mask[50:70, 60:90] = True  # elsewhere in the window
    geometry = sam_module.mask_geometry(mask, grid, pixel_box(35, 25, 45, 35))
    assert geometry.equals(pixel_box(10, 10, 40, 30))
    assert sam_module.mask_geometry(mask, grid, pixel_box(45, 40, 50, 45)) is None


# --- refinement -----------------------------------------------------------------------------------------------

def test_full_mask_becomes_the_window_outline_with_nodata_hole(index_set, checkpoints):
    zones = zones_on("aloh", [(30, 20, 50, 40)])
    before = zones.copy()
    out = refine_zones(zones, index_set, checkpoints["full"])
    assert zones.equals(before)  # input untouched
    row = out.iloc[0]
    assert bool(row.sam_refined) and row.sam_iou == pytest.approx(0.8) and row.sam_score == 1.0
    geometry = row.geometry
    # the window is the zone box with 16 px of context: cols 14-66, rows 4-56
    assert geometry.bounds == pixel_box(14, 4, 66, 56).bounds
    assert geometry.geom_type == "Polygon" and len(geometry.interiors) == 1
    assert geometry.interiors[0].bounds == pixel_box(20, 8, 25, 13).bounds  # the nodata block is a hole
    assert geometry.is_valid and on_lattice(geometry)
    assert row.area_m2 == pytest.approx((52 * 52 - 25) * PIXEL * PIXEL)
    assert row.bbox == "{:.3f},{:.3f},{:.3f},{:.3f}".format(*pixel_box(14, 4, 66, 56).bounds)
    assert (row.zone_id, row.layer, row.kind, row.description) == ("aloh:1", "aloh", "anomaly", "zone 1")
    assert list(out.columns) == list(zones.columns[:-1]) + ["geometry", "sam_score", "sam_iou", "sam_refined"]


def test_empty_best_mask_keeps_the_zone_flagged(index_set, checkpoints):
    zones = zones_on("aloh", [(30, 20, 50, 40)])
    out = refine_zones(zones, index_set, checkpoints["empty"])
    row = out.iloc[0]
    assert not row.sam_refined and row.sam_iou == pytest.approx(0.9) and row.sam_score == 0.0
    assert row.geometry.equals(zones.geometry.iloc[0])
    assert (row.area_m2, row.bbox) == (zones.area_m2.iloc[0], zones.bbox.iloc[0])


def test_random_sam_masks_are_valid_polygons_on_the_pixel_lattice(tmp_path, checkpoints):
    rng = np.random.default_rng(1)
    data = rng.normal(size=(300, 400)).astype("float32")
    data[40:90, 50:110] += 4.0
    data[200:260, 250:330] += 4.0
    path = write_raster(tmp_path / "iron.tif", data)
    raster_set = RasterSet([LayerSpec(path, "iron_oxide", name="iron")])
    boxes = [(50, 40, 110, 90), (250, 200, 330, 260), (120, 60, 140, 80)]
    zones = zones_on("iron", boxes)
    model = load_sam(checkpoints["random"])
    plan = plan_windows([PixelBox(*b) for b in boxes], 400, 300, TINY_INPUT)
    windows = {i: w for w, members in plan for i in members}
    out = refine_zones(zones, raster_set, model)
    assert out.sam_refined.any()
    for i, row in out.iterrows():
        if not row.sam_refined:  # random weights: a mask may miss its zone
            assert row.geometry.equals(zones.geometry.iloc[i])
            continue
        assert row.geometry.is_valid and not row.geometry.is_empty and on_lattice(row.geometry)
        w = windows[i]
        xmin, ymin, xmax, ymax = pixel_box(w.col_off, w.row_off, w.col_off + w.width, w.row_off + w.height).bounds
        gx0, gy0, gx1, gy1 = row.geometry.bounds
        assert xmin <= gx0 and ymin <= gy0 and gx1 <= xmax and gy1 <= ymax
        assert row.geometry.intersects(zones.geometry.iloc[i])
        assert 0.0 <= row.sam_score <= 1.0
        assert row.area_m2 == pytest.approx(row.geometry.area, abs=1e-3)


def test_one_embedding_per_window(tmp_path, checkpoints):
    data = np.random.default_rng(2).normal(size=(300, 400)).astype("float32")
    path = write_raster(tmp_path / "clay.tif", data)
    raster_set = RasterSet([LayerSpec(path, "argillic_alteration", name="clay")])
    boxes = [(20, 20, 40, 40), (60, 50, 80, 70), (45, 30, 55, 45), (360, 250, 380, 270)]
    model = load_sam(checkpoints["random"])
    calls = []
    hook = model.sam.image_encoder.register_forward_hook(lambda *args: calls.append(1))
    try:
        refine_zones(zones_on("clay", boxes), raster_set, model)
    finally:
        hook.remove()
    assert len(calls) == len(plan_windows([PixelBox(*b) for b in boxes], 400, 300, TINY_INPUT)) == 2


def test_points_prompt_the_anomaly_maximum(index_set, checkpoints, monkeypatch):
    import segment_anything

    seen = []
    original = segment_anything.SamPredictor.predict

    def spy(self, point_coords=None, point_labels=None, box=None, **kwargs):
        seen.append((point_coords, point_labels, box))
        return original(self, point_coords=point_coords, point_labels=point_labels, box=box, **kwargs)

    monkeypatch.setattr(segment_anything.SamPredictor, "predict", spy)
    zones = zones_on("aloh", [(30, 20, 50, 40)])
    refine_zones(zones, index_set, checkpoints["full"], use_points=True)
    refine_zones(zones, index_set, checkpoints["full"], use_points=False)
    (points, labels, prompt_box), (no_points, no_labels, same_box) = seen
    assert points.tolist() == [[28.5, 29.5]] and labels.tolist() == [1]
    assert prompt_box.tolist() == [16.0, 16.0, 36.0, 36.0]  # zone box in window pixels
    assert no_points is None and no_labels is None and same_box.tolist() == prompt_box.tolist()


@pytest.mark.parametrize("bands, dtype", [(3, "uint8"), (5, "float32")])
def test_multiband_rasters_are_rendered_to_rgb(tmp_path, checkpoints, bands, dtype):
    data = np.random.default_rng(3).integers(0, 255, size=(bands, 80, 100)).astype(dtype)
    path = write_raster(tmp_path / "fcc.tif", data, nodata=None, dtype=dtype)
    raster_set = RasterSet([LayerSpec(path, "false_color_composite", name="fcc")])
    out = refine_zones(zones_on("fcc", [(30, 20, 50, 40)]), raster_set, checkpoints["full"])
    assert out.sam_refined.iloc[0] and out.geometry.iloc[0].bounds == pixel_box(14, 4, 66, 56).bounds


def test_zones_in_another_crs_come_back_in_it(index_set, checkpoints):
    zones = zones_on("aloh", [(30, 20, 50, 40)]).to_crs("EPSG:4326")
    out = refine_zones(zones, index_set, checkpoints["full"])
    assert out.crs == zones.crs and out.sam_refined.iloc[0]
    back = out.to_crs(CRS).geometry.iloc[0]
    assert back.bounds == pytest.approx(pixel_box(14, 4, 66, 56).bounds, abs=0.01)
    assert out.area_m2.iloc[0] == pytest.approx((52 * 52 - 25) * PIXEL * PIXEL)


def test_zones_without_a_raster_or_polygon_are_kept(tmp_path, index_set, checkpoints):
    other = write_raster(tmp_path / "si.tif", index_data())
    raster_set = RasterSet([LayerSpec(index_set.spec("aloh").path, "hydrothermal_alteration", name="aloh"),
                            LayerSpec(other, "silicification", name="si")])
    zones = zones_on("aloh", [(30, 20, 50, 40), (60, 10, 70, 30)])
    zones.loc[1, "layer"] = "magnetics"
    line = zones_on("si", [(30, 20, 50, 40)])
    line.loc[0, "geometry"] = LineString([(500300, 3999700), (500400, 3999700)])
    logged = []
    out = refine_zones(gpd.GeoDataFrame(pd_concat(zones, line), crs=CRS), raster_set, checkpoints["full"],
                       progress=Progress(on_log=logged.append))
    assert out.sam_refined.tolist() == [True, False, False]
    assert out.geometry.iloc[1].equals(zones.geometry.iloc[1]) and out.geometry.iloc[2].geom_type == "LineString"
    assert any("'magnetics' is not among the rasters" in line for line in logged)


def pd_concat(*frames):
    import pandas as pd

    return pd.concat(frames, ignore_index=True)


def test_no_zones_needs_no_model(index_set, tmp_path):
    out = refine_zones(zones_on("aloh", []), index_set, tmp_path / "absent.pth")
    assert len(out) == 0 and {"sam_score", "sam_iou", "sam_refined"} <= set(out.columns)


def test_cancel_stops_between_windows(index_set, checkpoints):
    with pytest.raises(Cancelled):
        refine_zones(zones_on("aloh", [(30, 20, 50, 40)]), index_set, checkpoints["full"],
                     progress=Progress(is_cancelled=lambda: True))


def test_module_imports_without_torch():
    import subprocess
    from pathlib import Path

    package_parent = Path(sam_module.__file__).resolve().parents[1].parent
    code = ("import sys; sys.modules['torch'] = None; sys.modules['segment_anything'] = None; "
            "import lodestar.models.sam, lodestar.processing")
    env_path = str(Path(sys.modules["lodestar"].__path__[0]).parent)
    result = subprocess.run([sys.executable, "-c", code], cwd=env_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert package_parent.exists()


# --- Processing algorithm -------------------------------------------------------------------------------------

def test_processing_algorithm_refines_a_zone_layer(tmp_path, checkpoints, lodestar_registry):
    import processing
    from lodestar.plugin.vector_io import read_vector, write_vector

    raster = write_raster(tmp_path / "aloh.tif", index_data())
    zones_path = write_vector(zones_on("aloh", [(30, 20, 50, 40)]), tmp_path / "zones.gpkg")
    result = processing.run("lodestar:refine_zones_sam", {
        "INPUT": str(zones_path), "RASTERS": [str(raster)], "CHECKPOINT": str(checkpoints["full"]),
        "DEVICE": 0, "USE_POINTS": True, "OUTPUT": str(tmp_path / "refined.gpkg"),
    })
    out = read_vector(result["OUTPUT"])
    assert len(out) == 1 and out.crs.to_epsg() == 32633
    row = out.iloc[0]
    assert (row.zone_id, row.layer, row.description) == ("aloh:1", "aloh", "zone 1")
    assert bool(row.sam_refined) and row.sam_iou == pytest.approx(0.8)
    assert row.geometry.bounds == pixel_box(14, 4, 66, 56).bounds
    assert row.area_m2 == pytest.approx((52 * 52 - 25) * PIXEL * PIXEL)


def test_processing_algorithm_errors_say_what_to_do(tmp_path, checkpoints, lodestar_registry):
    from qgis.core import QgsProcessingException

    import processing
    from lodestar.plugin.vector_io import write_vector

    first = write_raster(tmp_path / "aloh.tif", index_data())
    second = write_raster(tmp_path / "si.tif", index_data())
    zones_path = write_vector(zones_on("aloh", [(30, 20, 50, 40)]), tmp_path / "zones.gpkg")
    params = {"INPUT": str(zones_path), "RASTERS": [str(first)], "CHECKPOINT": str(tmp_path / "missing.pth"),
              "DEVICE": 0, "USE_POINTS": True, "OUTPUT": str(tmp_path / "refined.gpkg")}
    with pytest.raises(QgsProcessingException, match="SAM checkpoint not found"):
        processing.run("lodestar:refine_zones_sam", params)
    wrong = tmp_path / "wrong.pth"
    torch.save(torch.nn.Linear(3, 2).state_dict(), wrong)
    with pytest.raises(QgsProcessingException, match="not a Segment Anything"):
        processing.run("lodestar:refine_zones_sam", dict(params, CHECKPOINT=str(wrong)))
    renamed = dict(params, CHECKPOINT=str(checkpoints["full"]), RASTERS=[str(second), str(tmp_path / "si2.tif")])
    write_raster(tmp_path / "si2.tif", index_data())
    with pytest.raises(QgsProcessingException, match=r"None of the zones' 'layer' values \(aloh\) names one of"):
        processing.run("lodestar:refine_zones_sam", renamed)
    assert not (tmp_path / "refined.gpkg").exists()


def test_processing_algorithm_names_missing_torch(tmp_path, checkpoints, lodestar_registry, monkeypatch):
    from qgis.core import QgsProcessingException

    import processing
    from lodestar.plugin.vector_io import write_vector

    raster = write_raster(tmp_path / "aloh.tif", index_data())
    zones_path = write_vector(zones_on("aloh", [(30, 20, 50, 40)]), tmp_path / "zones.gpkg")
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(QgsProcessingException, match="needs the Python package 'torch'.*pip install torch"):
        processing.run("lodestar:refine_zones_sam", {
            "INPUT": str(zones_path), "RASTERS": [str(raster)], "CHECKPOINT": str(checkpoints["full"]),
            "DEVICE": 0, "USE_POINTS": True, "OUTPUT": str(tmp_path / "refined.gpkg"),
        })
