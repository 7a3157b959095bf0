"""Box maker, feature mode: structural and textural features of one layer as zones in map coordinates.

Modes (zone `kind` in brackets):
- `faults` ("fault"): thin dark linear features on a map or image (black top-hat, then elongated
  components), buffered by `buffer_px`; score = darkness contrast in units of the layer's
  2nd-98th percentile range;
- `lineaments` ("lineament_density"): Sobel edges whose orientation is shared by their neighbours
  along a line (directional line support in `directions` orientations), then the share of such
  lineament pixels around each pixel; score = that density (0-1);
- `contacts` ("contact"): buffered contacts between units of a categorical map (codes plus legend)
  or between colour units of a coloured geological map; score = contact density (km per km2);
- `texture` ("texture"): local standard deviation far above (or below) the layer's usual texture,
  as a robust z-score; score = z;
- `auto`: categorical maps and coloured geological maps -> contacts; vector layers -> faults /
  units from the vector (see vector_evidence); 3-band structure renderings -> faults; imagery and
  structure / geophysics rasters -> lineaments; other index rasters -> texture.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy import ndimage
from scipy.cluster.vq import kmeans2

from ..errors import LodestarError
from ..progress import SILENT, Progress
from ..raster_io import RasterGrid, RasterSet
from ..zones import labelled_polygons, strike_word, zone_record, zones_frame
from .categorical import ContactOptions, categorical_labels, contact_records, unit_names
from .result import ToolResult
from .vector_evidence import VectorEvidenceParams, vector_evidence

MODES = ("auto", "faults", "lineaments", "contacts", "texture")


@dataclass
class FeatureRegionParams:
    """Settings of `feature_regions`; pixel sizes are analysis-grid pixels."""

    mode: str = "auto"
    line_width_px: int = 3           # faults: widest dark line looked for
    line_contrast: float = 0.15      # faults: darker than the surroundings by this share of the value range
                                     # (and by 5 robust sigmas of the image's own small-scale noise)
    min_length_px: float = 8.0       # faults: shortest line kept
    min_elongation: float = 4.0      # faults: length / width of a line
    buffer_px: float = 1.0           # faults and contacts: zone half-width around the feature
    edge_percentile: float = 85.0    # lineaments: gradient magnitude percentile that counts as an edge
    directions: int = 8              # lineaments: orientations tested
    line_support_px: int = 5         # lineaments: half-length of the straight run an edge must share
    min_support: float = 0.6         # lineaments: share of that run that must be aligned edges
    density_radius_px: int = 7       # lineaments and contacts: neighbourhood half-size for densities
    density_threshold: float | None = None   # lineaments: zone threshold; None = mean + 2 sigma (>= 0.05)
    window_px: int = 7               # texture: window side
    texture_k: float = 2.5           # texture: robust z-score threshold
    texture_side: str = "high"       # texture: 'high' (rough) or 'low' (smooth) anomalies
    colour_units: int = 10           # contacts on RGB maps: colour classes
    min_area_px: int = 9
    max_zones: int | None = 10
    simplify_px: float = 1.0

    def __post_init__(self):
        if self.mode not in MODES:
            raise LodestarError(f"Unknown feature mode {self.mode!r}; choose one of {', '.join(MODES)}.")
        if self.texture_side not in ("high", "low"):
            raise LodestarError("texture_side must be 'high' or 'low'.")
        if self.line_width_px < 1 or self.window_px < 3 or self.directions < 2 or self.colour_units < 2:
            raise LodestarError("line_width_px >= 1, window_px >= 3, directions >= 2 and colour_units >= 2 needed.")


def feature_regions(raster_set: RasterSet, layer: str, params: FeatureRegionParams | None = None, bounds=None,
                    progress: Progress = SILENT) -> ToolResult:
    """Mark structural / textural features of `layer` (see the module doc) as zones in the analysis CRS.

    `bounds` (xmin, ymin, xmax, ymax in the analysis CRS) restricts the work to a window; positions
    stay words within the analysis extent (zones.ZONE_COLUMNS), as the controller checks them.
    """
    params = params or FeatureRegionParams()
    spec = raster_set.spec(layer)
    if spec.is_vector:
        vector_params = VectorEvidenceParams(buffer_px=params.buffer_px, max_zones=params.max_zones)
        return vector_evidence(raster_set, layer, vector_params, bounds=bounds, progress=progress)
    mode = params.mode if params.mode != "auto" else auto_mode(raster_set, layer)
    data, grid = raster_set.read_window(layer, bounds)
    valid = ~np.ma.getmaskarray(data).all(axis=0)
    if not valid.any():
        raise LodestarError(f"{layer} has only nodata in the chosen area; choose another area or layer.")
    progress.set(5)
    extent = raster_set.grid
    if mode == "contacts":
        records = _contacts(raster_set, layer, data, valid, grid, params, progress)
    elif mode == "faults":
        records = _faults(luminance(data, valid), valid, grid, extent, layer, spec.role, params, progress)
    elif mode == "lineaments":
        records = _lineaments(luminance(data, valid), valid, grid, extent, layer, spec.role, params, progress)
    else:
        records = _texture(luminance(data, valid), valid, grid, extent, layer, spec.role, params, progress)
    progress.set(100)
    used = dict(asdict(params), mode=mode)
    log = [f"{layer}: feature mode {mode}, {len(records)} zones."]
    return ToolResult("feature_regions", layer, zones_frame(records, grid.crs), used, {"mode": mode},
                      raster_set.log + log)


def auto_mode(raster_set: RasterSet, layer: str) -> str:
    """The feature mode that suits a layer (module doc)."""
    spec = raster_set.spec(layer)
    reader = raster_set.readers[layer]
    if reader.count == 1 and reader.is_integer and (spec.role == "geological_map" or spec.legend is not None):
        return "contacts"
    if reader.is_rgb:
        if spec.role == "geological_map":
            return "contacts"
        return "faults" if spec.role == "structure" else "lineaments"
    if reader.count > 1 or spec.role in ("structure", "geophysics", "false_color_composite", "other"):
        return "lineaments"
    return "texture"


def luminance(data: np.ma.MaskedArray, valid: np.ndarray) -> np.ndarray:
    """One grey band scaled so the 2nd-98th percentiles of valid pixels span 0-1; nodata = median."""
    bands = data.filled(np.nan).astype("float32")
    if bands.shape[0] in (3, 4):
        grey = 0.299 * bands[0] + 0.587 * bands[1] + 0.114 * bands[2]
    else:
        grey = np.nanmean(np.stack([_stretch(b, valid) for b in bands]), axis=0) if bands.shape[0] > 1 else bands[0]
    out = _stretch(grey, valid)
    out[~valid | ~np.isfinite(out)] = float(np.nanmedian(out[valid])) if valid.any() else 0.0
    return out


def _stretch(band: np.ndarray, valid: np.ndarray) -> np.ndarray:
    values = band[valid & np.isfinite(band)]
    if values.size == 0:
        return np.zeros_like(band)
    lo, hi = np.percentile(values, [2, 98])
    if hi <= lo:
        lo, hi = float(values.min()), float(values.max())
    return ((band - lo) / (hi - lo if hi > lo else 1.0)).astype("float32")


def _component_records(components: np.ndarray, keep: list[int], grid: RasterGrid, extent: RasterGrid,
                       score: np.ndarray, *, layer: str, role: str, kind: str, what, params: FeatureRegionParams,
                       score_pixels: np.ndarray | None = None) -> list[dict]:
    """Zones of the kept component labels (in order) of a label image on `grid`, positioned within the
    analysis `extent`; scores over `score_pixels` (default: the component)."""
    relabel = np.zeros(int(components.max()) + 1, dtype="int32")
    relabel[keep] = np.arange(1, len(keep) + 1)
    polygons = labelled_polygons(relabel[components], grid, params.simplify_px)
    records: list[dict] = []
    source = components if score_pixels is None else score_pixels
    for index, comp in enumerate(keep, start=1):
        geom = polygons.get(index)
        if geom is None:
            continue
        values = score[source == comp]
        records.append(zone_record(geom, extent, zone_id=f"{layer}:{kind}{len(records) + 1}", layer=layer, role=role,
                                   kind=kind, score_mean=float(values.mean()), score_max=float(values.max()),
                                   what=what(comp)))
    return records


def _ranked_components(mask: np.ndarray, score: np.ndarray, params: FeatureRegionParams):
    """(8-connected labels of `mask`, the labels of at least min_area_px pixels by decreasing mean `score`,
    at most max_zones of them)."""
    components, n = ndimage.label(mask, structure=np.ones((3, 3)))
    sizes = np.bincount(components.ravel(), minlength=n + 1)
    keep = [c for c in range(1, n + 1) if sizes[c] >= params.min_area_px]
    means = ndimage.mean(score, components, keep) if keep else []
    keep = [keep[i] for i in sorted(range(len(keep)), key=lambda i: -means[i])]
    return components, keep if params.max_zones is None else keep[: params.max_zones]


def _disc(radius_px: float) -> np.ndarray:
    r = int(math.floor(radius_px))
    yy, xx = np.mgrid[-r:r + 1, -r:r + 1]
    return (xx * xx + yy * yy) <= radius_px * radius_px + 1e-9


def _faults(grey, valid, grid, extent, layer, role, params, progress) -> list[dict]:
    size = 2 * params.line_width_px + 1
    tophat = ndimage.grey_closing(grey, size=(size, size)) - grey
    tophat[~valid] = 0
    values = tophat[valid]
    median = float(np.median(values))
    noise = 1.4826 * float(np.median(np.abs(values - median)))
    line = (tophat > max(params.line_contrast, median + 5 * noise)) & valid
    progress.set(40)
    components, n = ndimage.label(line, structure=np.ones((3, 3)))
    if n == 0:
        return []
    shape = _component_shapes(components, n)
    keep = [c for c in range(1, n + 1)
            if shape["length"][c] >= params.min_length_px and shape["elongation"][c] >= params.min_elongation]
    keep.sort(key=lambda c: -shape["length"][c])
    if params.max_zones is not None:
        keep = keep[: params.max_zones]
    if not keep:
        return []
    progress.check()
    relabel = np.zeros(n + 1, dtype="int32")
    relabel[keep] = keep
    kept = relabel[components]
    grown = ndimage.grey_dilation(kept, footprint=_disc(params.buffer_px)) if params.buffer_px >= 1 else kept
    grown = np.where(valid, grown, 0)
    pixel = max(grid.pixel_size)

    def what(c):
        length = shape["length"][c] * pixel
        text = f"{length / 1000:.3g} km" if grid.georeferenced else f"{length:.0f} px"
        return f"{strike_word(shape['azimuth'][c])}-trending dark linear feature (possible fault, {text} long)"

    return _component_records(grown, keep, grid, extent, tophat, layer=layer, role=role, kind="fault", what=what,
                              params=params, score_pixels=kept)


def _component_shapes(components: np.ndarray, n: int) -> dict:
    """Length (px, along the main axis), elongation and azimuth (deg from north) of each component."""
    rows, cols = np.nonzero(components)
    labels = components[rows, cols]
    count = np.bincount(labels, minlength=n + 1).astype(float)
    safe = np.maximum(count, 1)
    mc = np.bincount(labels, cols, n + 1) / safe
    mr = np.bincount(labels, rows, n + 1) / safe
    dc, dr = cols - mc[labels], rows - mr[labels]
    scc = np.bincount(labels, dc * dc, n + 1) / safe
    srr = np.bincount(labels, dr * dr, n + 1) / safe
    scr = np.bincount(labels, dc * dr, n + 1) / safe
    angle = 0.5 * np.arctan2(2 * scr, scc - srr)  # main axis angle from the column axis (rows down)
    ux, uy = np.cos(angle), np.sin(angle)
    along = dc * ux[labels] + dr * uy[labels]
    lo = np.full(n + 1, np.inf)
    hi = np.full(n + 1, -np.inf)
    np.minimum.at(lo, labels, along)
    np.maximum.at(hi, labels, along)
    length = np.where(count > 0, hi - lo + 1, 0)
    width = count / np.maximum(length, 1)
    azimuth = np.degrees(np.arctan2(ux, -uy)) % 180.0  # east = +col, north = -row
    return {"length": length, "elongation": length / np.maximum(width, 1e-6), "azimuth": azimuth}


def _lineaments(grey, valid, grid, extent, layer, role, params, progress) -> list[dict]:
    smooth = ndimage.gaussian_filter(grey, 1.0)
    gx = ndimage.sobel(smooth, axis=1)
    gy = ndimage.sobel(smooth, axis=0)
    magnitude = np.hypot(gx, gy)
    inner = ndimage.binary_erosion(valid, iterations=2)
    if not inner.any():
        return []
    cut = np.percentile(magnitude[inner], params.edge_percentile)
    edges = inner & (magnitude > max(cut, 1e-6))
    # Trend of the edge line (perpendicular to the gradient), degrees clockwise from north.
    trend = np.degrees(np.arctan2(-gy, -gx)) % 180.0
    step = 180.0 / params.directions
    direction = np.rint(trend / step).astype(int) % params.directions
    support = np.zeros(grey.shape, dtype="float32")
    best = np.zeros(grey.shape, dtype="int16")
    for d in range(params.directions):
        aligned = (edges & (direction == d)).astype("float32")
        run = _line_sum(aligned, d * step, params.line_support_px) / (2 * params.line_support_px + 1)
        run *= aligned
        better = run > support
        support[better] = run[better]
        best[better] = d
        progress.set(10 + 60 * (d + 1) / params.directions)
        progress.check()
    lineament = support >= params.min_support
    size = 2 * params.density_radius_px + 1
    density = ndimage.uniform_filter(lineament.astype("float32"), size=size, mode="constant")
    density[~valid] = 0
    values = density[valid]
    threshold = params.density_threshold
    if threshold is None:
        threshold = max(0.05, float(values.mean() + 2 * values.std()))
    components, keep = _ranked_components((density >= threshold) & valid, density, params)
    if not keep:
        return []
    on_line = np.where(lineament, components, 0)

    def what(c):
        dirs = np.bincount(best[on_line == c], minlength=params.directions)
        word = strike_word(float(np.argmax(dirs)) * step) if dirs.sum() else "mixed"
        return f"High lineament density, mainly {word} trending"

    return _component_records(components, keep, grid, extent, density, layer=layer, role=role, kind="lineament_density",
                              what=what, params=params)


def _line_sum(image: np.ndarray, azimuth_deg: float, half: int) -> np.ndarray:
    """Sum of `image` over a straight run of 2 * half + 1 pixels along an azimuth, centred on each pixel."""
    ux = math.sin(math.radians(azimuth_deg))   # +col per step (east)
    uy = -math.cos(math.radians(azimuth_deg))  # +row per step (north is -row)
    padded = np.pad(image, half)
    rows, cols = image.shape
    out = np.zeros_like(image)
    for t in range(-half, half + 1):
        dc, dr = int(round(t * ux)), int(round(t * uy))
        out += padded[half + dr: half + dr + rows, half + dc: half + dc + cols]
    return out


def _texture(grey, valid, grid, extent, layer, role, params, progress) -> list[dict]:
    weight = valid.astype("float32")
    size = params.window_px
    count = ndimage.uniform_filter(weight, size)
    mean = ndimage.uniform_filter(grey * weight, size) / np.maximum(count, 1e-6)
    mean_sq = ndimage.uniform_filter(grey * grey * weight, size) / np.maximum(count, 1e-6)
    std = np.sqrt(np.maximum(mean_sq - mean * mean, 0))
    log_std = np.log(std + 1e-3)
    progress.set(50)
    progress.check()
    inside = valid & (count > 0.5)
    values = log_std[inside]
    median = float(np.median(values))
    spread = 1.4826 * float(np.median(np.abs(values - median))) + 1e-6
    z = (log_std - median) / spread
    if params.texture_side == "low":
        z = -z
    anomaly = ndimage.binary_opening((z >= params.texture_k) & inside, structure=np.ones((3, 3)))
    components, keep = _ranked_components(anomaly, z, params)
    if not keep:
        return []
    word = "rough (high local variance)" if params.texture_side == "high" else "smooth (low local variance)"
    return _component_records(components, keep, grid, extent, z, layer=layer, role=role, kind="texture",
                              what=lambda c: f"Anomalously {word} texture", params=params)


def _contacts(raster_set, layer, data, valid, grid, params, progress) -> list[dict]:
    reader = raster_set.readers[layer]
    spec = raster_set.spec(layer)
    if reader.count == 1 and reader.is_integer:
        labels, valid = categorical_labels(data)
        names = unit_names(raster_set, layer, np.unique(labels[valid]))
    elif reader.count >= 3:
        labels, valid, names = colour_units(data, valid, params.colour_units)
    else:
        raise LodestarError(f"{layer} is neither a categorical map (integer unit codes) nor a coloured map "
                            "(RGB); contacts need one of them.")
    progress.set(50)
    progress.check()
    options = ContactOptions(params.buffer_px, params.density_radius_px, None, params.min_area_px,
                             params.max_zones, params.simplify_px)
    return contact_records(labels, valid, grid, names, layer=layer, role=spec.role, options=options,
                           extent=raster_set.grid)


def colour_units(data: np.ma.MaskedArray, valid: np.ndarray, k: int, dark: float = 0.15, seed: int = 0):
    """Colour classes of a coloured map: k-means on RGB, 3 x 3 majority clean-up; near-black linework
    (luminance below `dark`) is left out. Returns labels (1..k, 0 = none), the valid mask, names."""
    rgb = data[:3].filled(0).astype("float32")
    scale = 255.0 if float(rgb.max()) > 1.5 else 1.0
    rgb /= scale
    grey = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]
    usable = valid & (grey >= dark)
    pixels = rgb[:, usable].T
    if pixels.shape[0] < k:
        raise LodestarError("The coloured map has too few coloured pixels to separate units.")
    rng = np.random.default_rng(seed)
    sample = pixels[rng.choice(pixels.shape[0], size=min(pixels.shape[0], 200_000), replace=False)]
    centres, _ = kmeans2(sample.astype("float64"), k, minit="++", seed=seed)
    flat = np.zeros(grey.size, dtype="int32")
    index = np.flatnonzero(usable.ravel())
    for start in range(0, index.size, 1_000_000):
        chunk = pixels[start:start + 1_000_000]
        dist = ((chunk[:, None, :] - centres[None, :, :].astype("float32")) ** 2).sum(axis=2)
        flat[index[start:start + 1_000_000]] = np.argmin(dist, axis=1) + 1
    labels = flat.reshape(grey.shape)
    votes = np.stack([ndimage.uniform_filter((labels == c).astype("float32"), 3) for c in range(1, k + 1)])
    labels = np.where(usable, np.argmax(votes, axis=0) + 1, 0).astype("int32")
    names = {c + 1: "colour #{:02X}{:02X}{:02X}".format(*(np.clip(centres[c], 0, 1) * 255).round().astype(int))
             for c in range(k)}
    return labels, usable, names
