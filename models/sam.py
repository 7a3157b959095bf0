"""Segment Anything: load a user's SAM checkpoint and refine zone outlines with box and point prompts.

`load_sam` reads a checkpoint, works out its architecture from the state dict (vit_b, vit_l, vit_h or
any other ViT SAM layout) and builds the model with segment_anything's own classes. `refine_zones`
prompts SAM with each zone's box (and optional positive points at the anomaly maxima) on a rendered
window of the zone's raster and replaces the zone's geometry by the outline of the best mask.
torch and segment_anything are imported lazily: nothing here needs them until a model is loaded.
"""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
from rasterio.windows import Window

from ..plugin.errors import LodestarError
from ..plugin.labels import plural
from ..plugin.progress import SILENT, Progress
from ..plugin.raster_io import RasterGrid, RasterSet
from ..plugin.render import to_rgb
from ..plugin.zones import labelled_polygons

FEATURE = "Segment Anything refinement"
OFFICIAL_CHECKPOINTS = "sam_vit_b_01ec64.pth, sam_vit_l_0b3195.pth or sam_vit_h_4b8939.pth"

PRESETS = {
    # name: (embed dim, depth, heads, global attention blocks), as in segment_anything.build_sam
    "vit_b": (768, 12, 12, (2, 5, 8, 11)),
    "vit_l": (1024, 24, 16, (5, 11, 17, 23)),
    "vit_h": (1280, 32, 16, (7, 15, 23, 31)),
}
DECODER_HEADS = 8
"""Attention heads of SAM's two-way transformer (fixed by SAM's design; heads do not show in weights)."""

SIMPLIFY_PX = 1.5
CONTEXT_FRACTION = 0.25
"""Context around a zone's box in its window, as a fraction of the box's longer side..."""
CONTEXT_MIN_PX = 16
"""...and at least this many pixels."""
MIN_REGION_PX = 16
"""Holes and islands of a SAM mask smaller than this many pixels are removed."""
MAX_POINTS = 3
"""Positive points per zone: the anomaly maximum of each of its largest parts."""


def _torch():
    from ..plugin.errors import require_package

    return require_package("torch", "torch", FEATURE)


def _segment_anything():
    from ..plugin.errors import require_package

    _torch()
    return require_package("segment_anything", "segment-anything", FEATURE)


@dataclass(frozen=True)
class SamArchitecture:
    """The shape of a ViT SAM model, as read from its weights."""

    embed_dim: int
    depth: int
    num_heads: int
    global_attn_indexes: tuple
    window_size: int
    patch_size: int
    img_size: int
    mlp_ratio: float
    qkv_bias: bool
    use_rel_pos: bool
    prompt_embed_dim: int
    mask_in_chans: int
    decoder_depth: int
    decoder_mlp_dim: int
    decoder_downsample_rate: int
    num_multimask_outputs: int
    iou_head_depth: int
    iou_head_hidden_dim: int

    @property
    def name(self) -> str:
        """'vit_b', 'vit_l' or 'vit_h' for SAM's released layouts, else a description of the custom one."""
        for name, (dim, depth, heads, globals_) in PRESETS.items():
            if (self.embed_dim, self.depth, self.num_heads, self.global_attn_indexes) == (dim, depth, heads, globals_) \
                    and self.img_size == 1024 and self.patch_size == 16:
                return name
        return (f"custom ViT (embed {self.embed_dim}, depth {self.depth}, {self.num_heads} heads, "
                f"input {self.img_size} px)")


def _block_indexes(state: dict) -> list[int]:
    prefix = "image_encoder.blocks."
    return sorted({int(key[len(prefix):].split(".")[0]) for key in state if key.startswith(prefix)})


def _count_layers(state: dict, prefix: str) -> int:
    return len({key[len(prefix):].split(".")[0] for key in state if key.startswith(prefix)})


def architecture_from_state_dict(state: dict) -> SamArchitecture:
    """Read a SAM architecture off a state dict (only tensor shapes are used); LodestarError if it is none."""
    required = ("image_encoder.patch_embed.proj.weight", "image_encoder.pos_embed", "image_encoder.neck.0.weight",
                "prompt_encoder.mask_downscaling.3.weight", "mask_decoder.mask_tokens.weight",
                "mask_decoder.transformer.layers.0.mlp.lin1.weight", "mask_decoder.iou_prediction_head.layers.0.weight")
    missing = [key for key in required if key not in state]
    if missing:
        raise LodestarError(
            f"The checkpoint is not a Segment Anything (ViT) model: it has no '{missing[0]}' weights. Use one of "
            f"the original SAM checkpoints ({OFFICIAL_CHECKPOINTS})."
        )
    embed_dim, _, patch_size, _ = state["image_encoder.patch_embed.proj.weight"].shape
    grid_size = int(state["image_encoder.pos_embed"].shape[1])
    blocks = _block_indexes(state)
    if not blocks or blocks != list(range(len(blocks))):
        raise LodestarError("The checkpoint's image encoder has no (or non-consecutive) transformer blocks; "
                            f"use one of the original SAM checkpoints ({OFFICIAL_CHECKPOINTS}).")
    use_rel_pos = "image_encoder.blocks.0.attn.rel_pos_h" in state
    global_attn, window_size = [], 0
    if use_rel_pos:
        head_dim = int(state["image_encoder.blocks.0.attn.rel_pos_h"].shape[1])
        num_heads = int(embed_dim) // head_dim
        for i in blocks:
            span = (int(state[f"image_encoder.blocks.{i}.attn.rel_pos_h"].shape[0]) + 1) // 2
            if span == grid_size:
                global_attn.append(i)
            else:
                window_size = span
    else:
        preset = [p for p in PRESETS.values() if p[0] == embed_dim and p[1] == len(blocks)]
        if not preset:
            raise LodestarError("The checkpoint's image encoder has no relative position weights, so its number "
                                f"of attention heads is unknown; use one of the original SAM checkpoints "
                                f"({OFFICIAL_CHECKPOINTS}).")
        num_heads, global_attn = preset[0][2], list(preset[0][3])
    mlp_hidden = int(state["image_encoder.blocks.0.mlp.lin1.weight"].shape[0])
    prompt_dim = int(state["image_encoder.neck.0.weight"].shape[0])
    decoder_q = int(state["mask_decoder.transformer.layers.0.cross_attn_token_to_image.q_proj.weight"].shape[0])
    return SamArchitecture(
        embed_dim=int(embed_dim), depth=len(blocks), num_heads=num_heads, global_attn_indexes=tuple(global_attn),
        window_size=window_size, patch_size=int(patch_size), img_size=grid_size * int(patch_size),
        mlp_ratio=mlp_hidden / int(embed_dim), qkv_bias="image_encoder.blocks.0.attn.qkv.bias" in state,
        use_rel_pos=use_rel_pos, prompt_embed_dim=prompt_dim,
        mask_in_chans=int(state["prompt_encoder.mask_downscaling.3.weight"].shape[0]),
        decoder_depth=_count_layers(state, "mask_decoder.transformer.layers."),
        decoder_mlp_dim=int(state["mask_decoder.transformer.layers.0.mlp.lin1.weight"].shape[0]),
        decoder_downsample_rate=max(1, prompt_dim // decoder_q),
        num_multimask_outputs=int(state["mask_decoder.mask_tokens.weight"].shape[0]) - 1,
        iou_head_depth=_count_layers(state, "mask_decoder.iou_prediction_head.layers."),
        iou_head_hidden_dim=int(state["mask_decoder.iou_prediction_head.layers.0.weight"].shape[0]),
    )


def build_sam_model(arch: SamArchitecture):
    """An untrained segment_anything `Sam` of the given architecture (eval mode, on the CPU)."""
    torch = _torch()
    sa = _segment_anything()
    embedding = arch.img_size // arch.patch_size
    sam = sa.modeling.Sam(
        image_encoder=sa.modeling.ImageEncoderViT(
            depth=arch.depth, embed_dim=arch.embed_dim, img_size=arch.img_size, mlp_ratio=arch.mlp_ratio,
            norm_layer=partial(torch.nn.LayerNorm, eps=1e-6), num_heads=arch.num_heads, patch_size=arch.patch_size,
            qkv_bias=arch.qkv_bias, use_rel_pos=arch.use_rel_pos, global_attn_indexes=arch.global_attn_indexes,
            window_size=arch.window_size, out_chans=arch.prompt_embed_dim,
        ),
        prompt_encoder=sa.modeling.PromptEncoder(
            embed_dim=arch.prompt_embed_dim, image_embedding_size=(embedding, embedding),
            input_image_size=(arch.img_size, arch.img_size), mask_in_chans=arch.mask_in_chans,
        ),
        mask_decoder=sa.modeling.MaskDecoder(
            num_multimask_outputs=arch.num_multimask_outputs,
            transformer=sa.modeling.TwoWayTransformer(
                depth=arch.decoder_depth, embedding_dim=arch.prompt_embed_dim, mlp_dim=arch.decoder_mlp_dim,
                num_heads=DECODER_HEADS, attention_downsample_rate=arch.decoder_downsample_rate,
            ),
            transformer_dim=arch.prompt_embed_dim, iou_head_depth=arch.iou_head_depth,
            iou_head_hidden_dim=arch.iou_head_hidden_dim,
        ),
    )
    return sam.eval()


@dataclass
class SamModel:
    """A loaded SAM: the torch module, its architecture, the device it runs on and where it came from."""

    sam: Any  # segment_anything's Sam (torch, imported lazily)
    architecture: SamArchitecture
    device: str
    checkpoint: Path

    @property
    def model_type(self) -> str:
        return self.architecture.name

    @property
    def input_size(self) -> int:
        """Side of the square image the encoder takes (1024 for SAM's released models)."""
        return self.architecture.img_size


def resolve_device(device: str = "cpu") -> str:
    """'cpu', 'cuda' or 'cuda:N' checked against what torch sees; 'auto' picks CUDA when available."""
    torch = _torch()
    name = (device or "cpu").strip().lower()
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cpu":
        return "cpu"
    if name == "cuda" or name.startswith("cuda:"):
        if not torch.cuda.is_available():
            raise LodestarError(
                "CUDA was asked for but torch sees no CUDA GPU (a CPU-only torch build, or no NVIDIA driver). "
                "Choose the CPU device, or install a CUDA build of torch."
            )
        index = int(name.split(":")[1]) if ":" in name else 0
        if index >= torch.cuda.device_count():
            raise LodestarError(f"There is no CUDA device {index}; torch sees {torch.cuda.device_count()}.")
        return name
    raise LodestarError(f"Unknown device {device!r}; choose 'cpu', 'cuda' or 'auto'.")


def _read_state_dict(path: Path) -> dict:
    torch = _torch()
    try:
        with open(path, "rb") as handle:
            state = torch.load(handle, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises several types for files that are not checkpoints
        raise LodestarError(
            f"{path.name} cannot be read as a PyTorch checkpoint ({type(exc).__name__}: {str(exc)[:200]}). "
            f"Give a Segment Anything checkpoint such as {OFFICIAL_CHECKPOINTS}."
        ) from exc
    for wrapper in ("model", "state_dict"):
        if isinstance(state, dict) and isinstance(state.get(wrapper), dict):
            state = state[wrapper]
    if not isinstance(state, dict) or not all(hasattr(v, "shape") for v in state.values()):
        raise LodestarError(f"{path.name} holds no model weights (state dict); give a Segment Anything checkpoint "
                            f"such as {OFFICIAL_CHECKPOINTS}.")
    if all(key.startswith("module.") for key in state):
        state = {key[len("module."):]: value for key, value in state.items()}
    return state


_CACHE: dict = {}
_CACHE_LOCK = threading.Lock()


def load_sam(checkpoint, device: str = "cpu") -> SamModel:
    """Load a SAM checkpoint (a state dict saved with torch.save) onto a device.

    The architecture comes from the weights, not the file name. The last model loaded is kept in
    memory, so repeated runs with the same file and device do not read it again.
    """
    torch = _torch()
    _segment_anything()
    path = Path(checkpoint).expanduser()
    if not path.is_file():
        raise LodestarError(f"SAM checkpoint not found: {path}. Download one of {OFFICIAL_CHECKPOINTS} from the "
                            "segment-anything project and give its path.")
    device = resolve_device(device)
    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size, device)
    with _CACHE_LOCK:
        if key in _CACHE:
            return _CACHE[key]
    state = _read_state_dict(path)
    arch = architecture_from_state_dict(state)
    sam = build_sam_model(arch)
    try:
        sam.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        first = str(exc).splitlines()[1].strip() if len(str(exc).splitlines()) > 1 else str(exc)
        raise LodestarError(
            f"{path.name} does not fit the {arch.name} Segment Anything architecture its weights suggest "
            f"({first[:300]}). Variants such as HQ-SAM, MobileSAM or SAM 2 are not supported; use one of "
            f"{OFFICIAL_CHECKPOINTS}."
        ) from exc
    sam.to(torch.device(device))
    model = SamModel(sam, arch, device, path)
    with _CACHE_LOCK:
        _CACHE.clear()
        _CACHE[key] = model
    return model


# --- windows -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PixelBox:
    """A box on the analysis grid in pixels: columns c0..c1, rows r0..r1 (integers, ends exclusive)."""

    c0: int
    r0: int
    c1: int
    r1: int

    def inside(self, window: Window) -> bool:
        return (self.c0 >= window.col_off and self.r0 >= window.row_off
                and self.c1 <= window.col_off + window.width and self.r1 <= window.row_off + window.height)


def zone_pixel_box(bounds, grid: RasterGrid) -> PixelBox:
    """The pixels of the analysis grid a zone's map bounds cover (at least one), clipped to the grid."""
    xmin, ymin, xmax, ymax = bounds
    cols, rows = grid.map_to_pixel([xmin, xmax], [ymax, ymin])
    c0 = min(grid.width - 1, max(0, int(math.floor(float(cols.min()) + 1e-6))))
    r0 = min(grid.height - 1, max(0, int(math.floor(float(rows.min()) + 1e-6))))
    c1 = max(c0 + 1, min(grid.width, int(math.ceil(float(cols.max()) - 1e-6))))
    r1 = max(r0 + 1, min(grid.height, int(math.ceil(float(rows.max()) - 1e-6))))
    return PixelBox(c0, r0, c1, r1)


def with_context(box: PixelBox, width: int, height: int) -> PixelBox:
    """The box grown by its context margin on every side, clipped to a width x height grid."""
    margin = max(CONTEXT_MIN_PX, int(math.ceil(CONTEXT_FRACTION * max(box.c1 - box.c0, box.r1 - box.r0))))
    return PixelBox(max(0, box.c0 - margin), max(0, box.r0 - margin),
                    min(width, box.c1 + margin), min(height, box.r1 + margin))


def _grown(low: int, high: int, least: int, size: int) -> tuple[int, int]:
    """The span low..high grown evenly to at least `least` pixels, kept inside 0..size."""
    missing = least - (high - low)
    if missing <= 0:
        return low, high
    low = max(0, low - missing // 2)
    high = min(size, low + least)
    return max(0, high - least), high


def _starts(low: int, high: int, tile: int) -> list[int]:
    """Tile origins along one axis covering low..high with half-tile steps, the last one flush with high."""
    if high - low <= tile:
        return [low]
    step = max(1, tile // 2)
    starts = list(range(low, high - tile, step))
    return starts + [high - tile]


def plan_windows(boxes: list[PixelBox], width: int, height: int, tile: int) -> list[tuple[Window, list[int]]]:
    """Group zone boxes into image windows: one embedding each, as few as possible.

    When all boxes with their context fit in one tile x tile window, that window (at least tile / 4
    pixels a side where the grid allows) serves all of them.
    Otherwise the area is tiled with tiles of `tile` pixels overlapping by half, and tiles are picked
    greedily (the one holding most remaining boxes with their context, else the bare boxes). A box
    that fits in no tile gets its own window (its context box, which SAM then sees at a reduced scale).
    """
    if not boxes:
        return []
    context = [with_context(b, width, height) for b in boxes]
    c0, r0 = min(b.c0 for b in context), min(b.r0 for b in context)
    c1, r1 = max(b.c1 for b in context), max(b.r1 for b in context)
    if c1 - c0 <= tile and r1 - r0 <= tile:
        # at least a quarter of the model input on each side, so SAM sees some surroundings
        (c0, c1), (r0, r1) = _grown(c0, c1, tile // 4, width), _grown(r0, r1, tile // 4, height)
        return [(Window(c0, r0, c1 - c0, r1 - r0), list(range(len(boxes))))]
    tiles = [Window(c, r, min(tile, c1 - c), min(tile, r1 - r))
             for r in _starts(r0, r1, tile) for c in _starts(c0, c1, tile)]
    plan: list[tuple[Window, list[int]]] = []
    remaining = set(range(len(boxes)))
    for candidates in (context, boxes):
        while remaining:
            fits = [[i for i in sorted(remaining) if candidates[i].inside(t)] for t in tiles]
            best = max(range(len(tiles)), key=lambda k: len(fits[k]))
            if not fits[best]:
                break
            plan.append((tiles[best], fits[best]))
            remaining -= set(fits[best])
    for i in sorted(remaining):
        b = context[i]
        plan.append((Window(b.c0, b.r0, b.c1 - b.c0, b.r1 - b.r0), [i]))
    return plan


# --- prompts, masks, polygons --------------------------------------------------------------------------------

def _rgb_window(raster_set: RasterSet, layer: str, window: Window) -> tuple[np.ndarray, np.ndarray]:
    """(H, W, 3) uint8 rendering of a layer window and its (H, W) valid-pixel mask."""
    rows, cols = window.toslices()
    data = raster_set.read(layer)[:, rows, cols]
    valid = ~np.ma.getmaskarray(data).all(axis=0)
    reader = raster_set.readers[layer]
    if reader.is_rgb:
        rgb = to_rgb(data, stretch=None)
    else:
        rgb = to_rgb(data, stretch=(2, 98), colormap="magma")
    return rgb, valid


def anomaly_points(geometry, values: np.ma.MaskedArray, grid: RasterGrid, favourable: str) -> np.ndarray:
    """Window pixel coordinates (x, y) of the most favourable value in each of the zone's largest parts."""
    from rasterio.features import rasterize

    parts = list(getattr(geometry, "geoms", [geometry]))
    parts = sorted(parts, key=lambda g: g.area, reverse=True)[:MAX_POINTS]
    points = []
    sign = 1.0 if favourable == "high" else -1.0
    for part in parts:
        inside = rasterize([(part, 1)], out_shape=(grid.height, grid.width), transform=grid.transform,
                           all_touched=True, fill=0, dtype="uint8").astype(bool)
        inside &= ~np.ma.getmaskarray(values)
        if not inside.any():
            continue
        scores = np.where(inside, sign * values.filled(0.0), -np.inf)
        row, col = np.unravel_index(int(np.argmax(scores)), scores.shape)
        points.append((col + 0.5, row + 0.5))
    return np.array(points, dtype=float).reshape(-1, 2)


def _stability(logits: np.ndarray, threshold: float, offset: float = 1.0) -> float:
    """SAM's stability score: IoU of the mask thresholded at threshold +offset and -offset."""
    union = int((logits > threshold - offset).sum())
    return float((logits > threshold + offset).sum()) / union if union else 0.0


def clean_mask(mask: np.ndarray, min_px: int) -> np.ndarray:
    """The mask with holes smaller than min_px pixels filled and islands smaller than that dropped.

    As SAM's own post-processing; islands are kept when all of them are small (a small zone's mask).
    """
    from scipy import ndimage

    def small_regions(region: np.ndarray) -> tuple[np.ndarray, int]:
        labels, count = ndimage.label(region)
        sizes = np.bincount(labels.ravel(), minlength=count + 1)
        small = np.flatnonzero(sizes < min_px)
        return np.isin(labels, small[small > 0]), count - int((small > 0).sum())

    holes, _ = small_regions(~mask)
    cleaned = mask | holes
    islands, large = small_regions(cleaned)
    if large:
        cleaned &= ~islands
    return cleaned


def mask_geometry(mask: np.ndarray, grid: RasterGrid, zone_geometry):
    """Polygons (map coordinates, holes kept, ~1.5 px simplification) of the mask's regions touching the zone."""
    from rasterio.features import rasterize
    from scipy import ndimage

    labels, count = ndimage.label(mask)
    if not count:
        return None
    footprint = rasterize([(zone_geometry, 1)], out_shape=mask.shape, transform=grid.transform, all_touched=True,
                          fill=0, dtype="uint8").astype(bool)
    keep = np.unique(labels[footprint & (labels > 0)])
    if not keep.size:
        return None
    selected = np.isin(labels, keep)
    rows, cols = np.flatnonzero(selected.any(axis=1)), np.flatnonzero(selected.any(axis=0))
    window = Window(int(cols[0]), int(rows[0]), int(cols[-1] - cols[0] + 1), int(rows[-1] - rows[0] + 1))
    polygons = labelled_polygons(selected[window.toslices()].astype("int32"), grid.window_grid(window),
                                 simplify_px=SIMPLIFY_PX)
    geometry = polygons.get(1)
    if geometry is not None and not geometry.is_valid:
        geometry = geometry.buffer(0)
    return None if geometry is None or geometry.is_empty else geometry


@dataclass
class _Refined:
    geometry: object
    score: float
    iou: float
    refined: bool


def _refine_window(model: SamModel, predictor, raster_set: RasterSet, layer: str, window: Window,
                   zones: list, use_points: bool, progress: Progress) -> list[_Refined]:
    """Refine the zones (geometries in the analysis CRS) of one window of one layer with one embedding."""
    grid = raster_set.grid.window_grid(window)
    rgb, valid = _rgb_window(raster_set, layer, window)
    if not valid.any():
        return [_Refined(g, 0.0, 0.0, False) for g in zones]
    predictor.set_image(rgb, image_format="RGB")
    values = None
    if use_points:
        data = raster_set.read(layer)
        if data.shape[0] == 1:
            rows, cols = window.toslices()
            values = data[0, rows, cols]
    favourable = raster_set.spec(layer).favourable
    threshold = float(model.sam.mask_threshold)
    out = []
    for geometry in zones:
        progress.check()
        xmin, ymin, xmax, ymax = geometry.bounds
        cols, rows = grid.map_to_pixel([xmin, xmax], [ymax, ymin])
        box = np.array([cols[0], rows[0], cols[1], rows[1]], dtype=float)
        points = anomaly_points(geometry, values, grid, favourable) if values is not None else np.zeros((0, 2))
        logits, ious, _ = predictor.predict(
            point_coords=points if len(points) else None,
            point_labels=np.ones(len(points), dtype=int) if len(points) else None,
            box=box, multimask_output=True, return_logits=True,
        )
        best = int(np.argmax(ious))
        mask = clean_mask(logits[best] > threshold, MIN_REGION_PX) & valid
        refined = mask_geometry(mask, grid, geometry)
        score, iou = _stability(logits[best], threshold), float(ious[best])
        if refined is None:
            out.append(_Refined(geometry, score, iou, False))
        else:
            out.append(_Refined(refined, score, iou, True))
    return out


def _work_frame(zones: gpd.GeoDataFrame, raster_set: RasterSet) -> gpd.GeoSeries:
    geometries = zones.geometry
    if zones.crs is not None and raster_set.crs is not None and not zones.crs.equals(raster_set.crs):
        geometries = geometries.to_crs(raster_set.crs)
    return geometries


def _zone_layer(zone_layer, raster_set: RasterSet) -> str | None:
    """The raster a zone is refined on: its `layer` when that is a raster of the set, the only raster otherwise."""
    if isinstance(zone_layer, str) and zone_layer in raster_set.readers:
        return zone_layer
    if len(raster_set.readers) == 1:
        return next(iter(raster_set.readers))
    return None


def refine_zones(zones: gpd.GeoDataFrame, raster_set: RasterSet, checkpoint, device: str = "cpu",
                 use_points: bool = True, progress: Progress = SILENT) -> gpd.GeoDataFrame:
    """Zones with their outlines refined by Segment Anything; a new frame, in the zones' CRS.

    checkpoint: path of a SAM checkpoint (or a SamModel from load_sam). Each zone is refined on the
    raster its `layer` column names (or on the set's only raster). The output keeps every input column
    and adds sam_score (mask stability), sam_iou (SAM's predicted IoU of the kept mask) and
    sam_refined; area_m2 and bbox are recomputed. Zones that are not polygons, whose raster is not in
    the set, or whose mask comes out empty keep their geometry with sam_refined False.
    """
    out = zones.copy()
    count = len(zones)
    scores, ious, refined_flags = [0.0] * count, [0.0] * count, [False] * count
    if count == 0:
        out["sam_score"], out["sam_iou"], out["sam_refined"] = [], [], []
        return out
    model = checkpoint if isinstance(checkpoint, SamModel) else load_sam(checkpoint, device)
    sa = _segment_anything()
    work = list(_work_frame(zones, raster_set))
    by_layer = _zones_by_layer(zones, work, raster_set, progress)
    plans = _window_plans(by_layer, work, raster_set.grid, model.input_size)
    progress.log(f"SAM {model.model_type} on {model.device}: {plural(sum(len(p[2]) for p in plans), 'zone')} in "
                 f"{plural(len(plans), 'image window')}.")
    predictor = sa.SamPredictor(model.sam)
    torch = _torch()
    done = 0
    for layer, window, members in plans:
        progress.check()
        try:
            results = _refine_window(model, predictor, raster_set, layer, window, [work[i] for i in members],
                                     use_points, progress)
        except torch.cuda.OutOfMemoryError as exc:
            raise LodestarError(f"The GPU ran out of memory running SAM {model.model_type}; choose the CPU device "
                                "or a smaller checkpoint (vit_b).") from exc
        for i, result in zip(members, results):
            work[i] = result.geometry
            scores[i], ious[i], refined_flags[i] = round(result.score, 4), round(result.iou, 4), result.refined
        done += len(members)
        progress.set(100.0 * done / count)
    _put_refined(out, zones, raster_set, work, refined_flags)
    out["sam_score"], out["sam_iou"], out["sam_refined"] = scores, ious, refined_flags
    _recount_refined(out, zones, work, refined_flags)
    progress.set(100.0)
    return out


def _zones_by_layer(zones: gpd.GeoDataFrame, work: list, raster_set: RasterSet,
                    progress: Progress) -> dict[str, list[int]]:
    """Raster name -> indices of the zones refined on it (`_zone_layer`); a zone that is no polygon, or whose
    raster is not in the set, is logged and kept as it is."""
    count = len(zones)
    layers = list(zones["layer"]) if "layer" in zones.columns else [None] * count
    by_layer: dict[str, list[int]] = {}
    names = list(zones["zone_id"]) if "zone_id" in zones.columns else [str(i + 1) for i in range(count)]
    for i, (geometry, layer) in enumerate(zip(work, layers)):
        target = _zone_layer(layer, raster_set)
        if geometry is None or geometry.is_empty or geometry.geom_type not in ("Polygon", "MultiPolygon"):
            progress.log(f"Zone {names[i]}: not a polygon, kept as it is.")
        elif target is None:
            progress.log(f"Zone {names[i]}: its layer {layer!r} is not among the rasters given; kept as it is.")
        else:
            by_layer.setdefault(target, []).append(i)
    return by_layer


def _window_plans(by_layer: dict[str, list[int]], work: list, grid: RasterGrid,
                  input_size: int) -> list[tuple[str, Window, list[int]]]:
    """(raster name, image window, indices of the zones in it) of every window SAM embeds (`plan_windows`)."""
    plans = []
    for layer, indices in by_layer.items():
        boxes = [zone_pixel_box(work[i].bounds, grid) for i in indices]
        for window, members in plan_windows(boxes, grid.width, grid.height, input_size):
            plans.append((layer, window, [indices[m] for m in members]))
    return plans


def _put_refined(out: gpd.GeoDataFrame, zones: gpd.GeoDataFrame, raster_set: RasterSet, work: list,
                 refined_flags: list[bool]) -> None:
    """Set `out`'s geometry to the refined outlines (`work`, in the rasters' CRS) brought back to the zones' CRS,
    where a zone was refined; the zone's own geometry elsewhere."""
    refined = gpd.GeoSeries(work, crs=raster_set.crs if zones.crs is not None else None)
    if zones.crs is not None and raster_set.crs is not None and not zones.crs.equals(raster_set.crs):
        refined = refined.to_crs(zones.crs)
    new_geometry = [r if flag else original for r, flag, original in zip(refined, refined_flags, zones.geometry)]
    out[zones.geometry.name] = gpd.GeoSeries(new_geometry, index=zones.index, crs=zones.crs)


def _recount_refined(out: gpd.GeoDataFrame, zones: gpd.GeoDataFrame, work: list, refined_flags: list[bool]) -> None:
    """Recompute `out`'s area_m2 (from the outlines in the rasters' CRS) and bbox of the refined zones, where the
    frame has those columns."""
    if "area_m2" in out.columns:
        out["area_m2"] = [round(float(g.area), 3) if flag else a
                          for g, flag, a in zip(work, refined_flags, zones["area_m2"])]
    if "bbox" in out.columns:
        out["bbox"] = [("{:.3f},{:.3f},{:.3f},{:.3f}".format(*g.bounds)) if flag else b
                       for g, flag, b in zip(out.geometry, refined_flags, zones["bbox"])]
