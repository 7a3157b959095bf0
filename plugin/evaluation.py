"""Evaluation: localization against known deposits, and yes/no answers against ground truth.

Localization (`evaluate_localization`):
- a deposit is *found* when it lies inside a prospectivity polygon, boundary included (for a raster:
  when its cell is selected, i.e. has a value above `threshold`);
- deposits outside the analysed area (outside the grid, on nodata cells, outside the valid polygon)
  are counted and reported as `outside`, and left out of the recall's denominator;
- recall = found / deposits inside the analysed area;
- area reduction = 1 - selected area / valid analysed area, both counted on valid cells only when a
  valid mask is known (nodata is not area);
- success-rate curve: polygons taken by rank (raster cells by decreasing value), the cumulative
  share of the valid area against the cumulative share of deposits found; it starts at (0, 0) and
  ends at (1, 1) (the unselected rest of the area, in no particular order, closes the curve); AUC
  by the trapezoid rule (0.5 = no better than chance);
- capture at area shares (2, 5, 10, 20 %): deposits found within the best-ranked x % of the area,
  read on the ranked part of the curve (a rank is entered linearly, i.e. ties broken at random and
  counted as expected values); the unselected rest earns nothing;
- no polygons at all is scored as finding nothing: recall 0, capture 0, AUC 0.0, and area reduction
  None (with a note), not 1.0.

Surfaces (`evaluate_surface`): every valid cell is ranked by its value, highest first. A deposit's
*area share* is the share of the valid area with a higher value plus half the share of its tie group
(cells of the same value), i.e. its expected position when ties are broken at random; capture at x %
counts each deposit whose tie group straddles x % by the fraction of the group above x %; AUC = 1 -
mean area share, exactly the area under the success-rate curve.

Answers (`classification_metrics`): accuracy, F1 of the positive choice, macro F1 over the choices,
Matthews correlation (positive choice against the rest) and the confusion matrix. An answer that is
not one of the choices (e.g. "Failed") counts as wrong. `answer_intervals` gives percentile bootstrap
intervals of macro F1 and MCC over the cases.
"""
from __future__ import annotations

import math
from pathlib import Path

import geopandas as gpd
import numpy as np
from pyproj import CRS, Transformer
from shapely.geometry import Point
from shapely.ops import unary_union

from .csv_table import write_csv
from .decisions import CORE
from .errors import LodestarError
from .files import PNG_OPTIONS, atomic_path
from .progress import SILENT, Progress
from .raster_io import RasterGrid, RasterReader
from .vector_io import read_table, read_vector, table_coordinates

RASTER_SUFFIXES = {".tif", ".tiff", ".vrt", ".img", ".asc", ".nc"}
MAX_CURVE_LEVELS = 200
# decision numbers: their reasons and provenance are in plugin/decisions.py
DEFAULT_SHARES = CORE.scored_shares


def evaluate_localization(prospectivity, deposits, *, valid_mask: np.ndarray | None = None,
                          grid: RasterGrid | None = None, valid_geometry=None, valid_area: float | None = None,
                          analysis_raster=None, rank_field: str = "rank", threshold: float = 0.0,
                          progress: Progress = SILENT) -> dict:
    """Recall, area reduction and success-rate curve of prospectivity polygons (a GeoDataFrame or vector
    path) or of a prospectivity raster (path; higher values = more prospective, selected above `threshold`).

    The analysed area is, by priority: `valid_mask` on `grid`; the data cells of `analysis_raster`;
    `valid_geometry` (a polygon); `valid_area` (square map units, with no way to tell deposits outside);
    for a raster, its own data cells.
    """
    log: list[str] = []
    if analysis_raster is not None and valid_mask is None:
        valid_mask, grid = raster_valid_mask(analysis_raster)
    if valid_mask is not None and grid is None:
        raise LodestarError("A valid mask needs its grid (transform, size and CRS) to be located on the map.")
    if _is_raster(prospectivity):
        result = _evaluate_raster(Path(prospectivity), deposits, valid_mask, grid, threshold, log, progress)
    else:
        result = _evaluate_polygons(prospectivity, deposits, valid_mask, grid, valid_geometry, valid_area,
                                    rank_field, log, progress)
    if result["area_reduction"] is None:
        log.append("Nothing was selected: scored as finding nothing (recall 0, capture 0, AUC 0.0); an area "
                   "reduction means nothing without a selection, so none is given.")
    result["log"] = log
    return result


def raster_valid_mask(path) -> tuple[np.ndarray, RasterGrid]:
    """(mask, grid) of the cells of a raster with data in at least one band."""
    reader = RasterReader(Path(path))
    data = reader.read()
    return ~np.ma.getmaskarray(data).all(axis=0), reader.grid


def _is_raster(value) -> bool:
    return isinstance(value, (str, Path)) and Path(value).suffix.lower() in RASTER_SUFFIXES


def deposit_coordinates(deposits, crs, log: list) -> np.ndarray:
    """(x, y) of known deposits in `crs`, an (n, 2) array: from a GeoDataFrame or vector path, or a table such as a
    CSV with longitude / latitude or x / y columns; multi-points split; a polygon or line taken at a point inside it
    (its representative point: a centroid may fall outside a curved shape) and said in one warning line; points
    repeating another's coordinates counted once (the first kept, in the layer's order) and said in one warning line;
    notes go to `log`. A table of rows none of which has a location is refused. A CSV table is read and its
    coordinates transformed in one vectorised pass (a million rows in about a second)."""
    target = CRS.from_user_input(crs) if crs is not None else None
    if isinstance(deposits, gpd.GeoDataFrame):
        return _once(_coordinates(deposits, target, log), log)
    path = Path(deposits)
    frame = read_table(path) if path.suffix.lower() == ".csv" else None
    return _once(_coordinates(read_vector(path) if frame is None else frame, target, log), log)


def _once(xy: np.ndarray, log: list) -> np.ndarray:
    """The points of `xy` without those repeating an earlier point's coordinates, said in `log` when any."""
    if len(xy) < 2:
        return xy
    _, first = np.unique(xy, axis=0, return_index=True)
    if len(first) == len(xy):
        return xy
    repeated = len(xy) - len(first)
    log.append(f"Warning: {repeated} of the {len(xy)} known deposits repeat another's coordinates: each place is "
               f"counted once ({len(first)} deposits); remove the copies from the layer if this is not meant.")
    return xy[np.sort(first)]


def _coordinates(frame, target: CRS | None, log: list) -> np.ndarray:
    """The (x, y) of `deposit_coordinates` from a frame read (a table or a GeoDataFrame)."""
    if not isinstance(frame, gpd.GeoDataFrame) or (len(frame) and frame.geometry.isna().all()):
        found = table_coordinates(frame, log)
        if found is None:
            if not len(frame):
                return np.empty((0, 2))
            geometry = frame.geometry.name if isinstance(frame, gpd.GeoDataFrame) else None
            columns = ", ".join(str(c) for c in frame.columns if c != geometry)
            raise LodestarError(f"the table has no locations: no geometry, and none of its columns ({columns}) is "
                                "read as coordinates; give a point layer, or a table (CSV) with longitude and "
                                "latitude columns (or x and y in the analysis CRS).")
        xs, ys, geographic = found
        return _in_crs(xs, ys, CRS.from_epsg(4326) if geographic else None, target, log)
    frame = frame[~(frame.geometry.isna() | frame.geometry.is_empty)]
    if not len(frame):
        return np.empty((0, 2))
    source = CRS.from_user_input(frame.crs) if frame.crs is not None else None
    kinds = set(frame.geometry.geom_type)
    if kinds == {"Point"}:
        return _in_crs(frame.geometry.x.to_numpy(dtype=float), frame.geometry.y.to_numpy(dtype=float), source,
                       target, log)
    if source is not None and target is not None and source != target:
        frame = frame.to_crs(target)
    elif source is None and target is not None:
        log.append(NO_CRS_NOTE)
    xy: list[tuple[float, float]] = []
    shapes: dict[str, int] = {}
    for geometry in frame.geometry:
        if geometry.geom_type == "Point":
            xy.append((geometry.x, geometry.y))
        elif geometry.geom_type == "MultiPoint":
            xy.extend((p.x, p.y) for p in geometry.geoms)
        else:
            kind = _SHAPES.get(geometry.geom_type, "other shape")
            shapes[kind] = shapes.get(kind, 0) + 1
            point = geometry.representative_point()
            xy.append((point.x, point.y))
    if "MultiPoint" in kinds:
        log.append(f"{len(frame)} deposit features gave {len(xy)} points (multi-points split).")
    if shapes:
        named = " and ".join(f"{count} {kind if count == 1 else kind + 's'}" for kind, count in shapes.items())
        verb = "is" if sum(shapes.values()) == 1 else "are"
        log.append(f"Warning: {named} of the {len(frame)} known deposits {verb} not points: each is taken at one "
                   "point inside it (its representative point); give the deposits as a point layer to place them "
                   "yourself.")
    return np.asarray(xy, dtype=float).reshape(-1, 2)


_SHAPES = {"Polygon": "polygon", "MultiPolygon": "polygon", "LineString": "line", "MultiLineString": "line",
           "LinearRing": "line", "GeometryCollection": "geometry collection"}


NO_CRS_NOTE = "The deposits have no CRS: taken to be in the prospectivity layer's CRS."


def _in_crs(xs: np.ndarray, ys: np.ndarray, source: CRS | None, target: CRS | None, log: list) -> np.ndarray:
    """Points (x, y) from `source` into `target` in one vectorised transformation; no source: taken as `target`."""
    if len(xs) and source is not None and target is not None and source != target:
        xs, ys = Transformer.from_crs(source, target, always_xy=True).transform(xs, ys)
    elif len(xs) and source is None and target is not None:
        log.append(NO_CRS_NOTE)
    return np.column_stack([np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)])


def deposit_points(deposits, crs, log: list) -> list:
    """The deposits of `deposit_coordinates` as shapely points (for small sets: a GIS check, a test)."""
    return [Point(x, y) for x, y in deposit_coordinates(deposits, crs, log)]


def cells_of(xy, grid: RasterGrid, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, cols, inside) of map points (x, y) on a grid; inside = on the grid and on a valid cell."""
    xy = np.asarray(xy, dtype=float).reshape(-1, 2)
    cols, rows = grid.map_to_pixel(xy[:, 0], xy[:, 1])
    cols, rows = np.floor(cols).astype(int), np.floor(rows).astype(int)
    on_grid = (rows >= 0) & (rows < grid.height) & (cols >= 0) & (cols < grid.width)
    inside = on_grid.copy()
    inside[on_grid] = mask[rows[on_grid], cols[on_grid]]
    return rows, cols, inside


def _evaluate_polygons(prospectivity, deposits, valid_mask, grid, valid_geometry, valid_area, rank_field,
                       log, progress) -> dict:
    frame = prospectivity if isinstance(prospectivity, gpd.GeoDataFrame) else read_vector(Path(prospectivity))
    frame = frame[~(frame.geometry.isna() | frame.geometry.is_empty)].copy()
    crs = grid.crs if valid_mask is not None and grid.crs is not None else frame.crs
    if crs is not None and frame.crs is not None and len(frame) and frame.crs != crs:
        frame = frame.to_crs(crs)
    frame = _ranked(frame, rank_field)
    xy = deposit_coordinates(deposits, crs, log)
    ranks = [int(r) for r in frame["_rank"]]
    levels = sorted(set(ranks))
    first_rank = _first_covering_rank(frame, xy)
    if valid_mask is not None:
        total = float(valid_mask.sum()) * grid.pixel_area
        _, _, inside = cells_of(xy, grid, valid_mask)
        burned = _burn_ranks(frame, grid)
        per_level = [float(((burned == level) & valid_mask).sum()) * grid.pixel_area for level in levels]
        cumulative = list(np.cumsum(per_level))
    elif valid_geometry is not None:
        total = float(valid_geometry.area)
        inside = _covers(valid_geometry, xy)
        cumulative = [unary_union(list(frame.geometry[frame["_rank"] <= level])).intersection(valid_geometry).area
                      for level in levels]
    elif valid_area is not None:
        total = float(valid_area)
        inside = np.ones(len(xy), dtype=bool)
        log.append("Only the analysed area's size is known: every deposit is taken to be inside it, and the selected "
                   "area is the polygons' whole area (give the analysis raster to exclude nodata).")
        cumulative = [min(total, unary_union(list(frame.geometry[frame["_rank"] <= level])).area) for level in levels]
    else:
        raise LodestarError("Give the analysed area (the analysis raster, a valid mask, an extent polygon or its "
                            "area) so that the area reduction can be computed.")
    progress.set(80)
    progress.check()
    if total <= 0:
        raise LodestarError("The analysed area is empty (every cell is nodata); check the analysis raster.")
    found_at = [rank if ok else None for rank, ok in zip(first_rank, inside.tolist())]
    return _summary(levels, cumulative, total, found_at, inside, "rank")


def _ranked(frame: gpd.GeoDataFrame, rank_field: str) -> gpd.GeoDataFrame:
    """Adds `_rank`: the rank field, else ranks by decreasing `score`, else the file order."""
    if rank_field in frame.columns:
        frame["_rank"] = frame[rank_field].astype(float).astype(int)
    elif "score" in frame.columns:
        frame["_rank"] = frame["score"].astype(float).rank(ascending=False, method="min").astype(int)
    else:
        frame["_rank"] = np.arange(1, len(frame) + 1)
    return frame.sort_values("_rank", kind="stable")


def left_out_deposits(xy, grid: RasterGrid, valid: np.ndarray, shown: int = 5) -> str:
    """A warning naming the known deposits (x, y on `grid`) a validation on the `valid` cells leaves out, and why
    (outside the analysed extent, or on a cell without data), each as 'deposit K at (x, y)' (K: its order in the
    deposits layer, multi-points split and copies counted once), at most `shown` of each kind; '' when none is left
    out."""
    xy = np.asarray(xy, dtype=float).reshape(-1, 2)
    rows, cols, inside = cells_of(xy, grid, valid)
    on_grid = (rows >= 0) & (rows < grid.height) & (cols >= 0) & (cols < grid.width)
    reasons = []
    for which, why in ((~on_grid, "outside the analysed extent " + str(tuple(round(v) for v in grid.bounds))),
                       (on_grid & ~inside, "on cells where not every evidence layer holds data")):
        picked = np.flatnonzero(which)
        if not len(picked):
            continue
        named = ", ".join(f"deposit {k + 1} at ({xy[k, 0]:.0f}, {xy[k, 1]:.0f})" for k in picked[:shown])
        more = f" and {len(picked) - shown} more" if len(picked) > shown else ""
        reasons.append(f"{len(picked)} {'lies' if len(picked) == 1 else 'lie'} {why} ({named}{more})")
    if not reasons:
        return ""
    kept = int(inside.sum())
    uses = (f"the validation uses the {kept} inside" if kept else
            "no deposit is left to validate on, so the surface is not validated")
    return (f"Warning: {len(xy) - kept} of the {len(xy)} known deposits {'is' if len(xy) - kept == 1 else 'are'} "
            "left out of the validation: "
            f"{'; '.join(reasons)}; {uses}. If any should lie inside, check the deposits' CRS.")


def _first_covering_rank(frame: gpd.GeoDataFrame, xy: np.ndarray) -> list:
    """For each point (x, y), the best (smallest) rank of the polygons covering it, or None; each polygon is tested
    against the points in its bounding box in one vectorised pass."""
    best = np.full(len(xy), np.inf)
    if len(frame) and len(xy):
        for geometry, rank in zip(frame.geometry, frame["_rank"]):
            xmin, ymin, xmax, ymax = geometry.bounds
            near = np.flatnonzero((xy[:, 0] >= xmin) & (xy[:, 0] <= xmax) & (xy[:, 1] >= ymin) & (xy[:, 1] <= ymax))
            if len(near):
                hit = near[_covers(geometry, xy[near])]
                best[hit] = np.minimum(best[hit], int(rank))
    return [int(rank) if np.isfinite(rank) else None for rank in best.tolist()]


def _covers(geometry, xy: np.ndarray) -> np.ndarray:
    """Whether `geometry` covers each point (x, y): inside or on its boundary, as shapely's `covers`."""
    from shapely import vectorized

    if not len(xy):
        return np.zeros(0, dtype=bool)
    x, y = np.ascontiguousarray(xy[:, 0]), np.ascontiguousarray(xy[:, 1])
    return np.asarray(vectorized.contains(geometry, x, y) | vectorized.touches(geometry, x, y), dtype=bool)


def _burn_ranks(frame: gpd.GeoDataFrame, grid: RasterGrid) -> np.ndarray:
    """Each cell's best rank among the polygons covering its centre (0: none)."""
    from rasterio.features import rasterize

    if not len(frame):
        return np.zeros((grid.height, grid.width), dtype=np.int32)
    shapes = [(geom, int(rank)) for geom, rank in zip(frame.geometry[::-1], frame["_rank"][::-1])]
    return rasterize(shapes, out_shape=(grid.height, grid.width), transform=grid.transform, fill=0,
                     dtype="int32")


def _evaluate_raster(path: Path, deposits, valid_mask, grid, threshold, log, progress) -> dict:
    reader = RasterReader(path)
    values = reader.read(bands=[1])[0]
    own = reader.grid
    data = ~np.ma.getmaskarray(values)
    if valid_mask is not None:
        data &= _sample_mask(valid_mask, grid, own)
    rows, cols, inside = cells_of(deposit_coordinates(deposits, own.crs, log), own, data)
    total = float(data.sum()) * own.pixel_area
    if total <= 0:
        raise LodestarError(f"{path.name} has no valid cells in the analysed area.")
    filled = np.ma.filled(values, -np.inf).astype(float)
    selected_values = filled[data & (filled > threshold)]
    levels = np.unique(selected_values)[::-1]
    if len(levels) > MAX_CURVE_LEVELS:
        levels = np.unique(np.quantile(selected_values, np.linspace(1, 0, MAX_CURVE_LEVELS)))[::-1]
        log.append(f"Success-rate curve of {path.name} drawn at {len(levels)} value levels (quantiles).")
    progress.set(60)
    progress.check()
    sorted_values = np.sort(selected_values)
    counts = len(sorted_values) - np.searchsorted(sorted_values, levels, side="left")
    cumulative = list(counts.astype(float) * own.pixel_area)
    deposit_values = [filled[r, c] if ok else -np.inf for r, c, ok in zip(rows, cols, inside)]
    found_at: list[int | None] = []
    for value, ok in zip(deposit_values, inside):
        if not ok or not value > threshold:
            found_at.append(None)
            continue
        reached = np.nonzero(levels <= value)[0]
        found_at.append(int(reached[0]) + 1 if len(reached) else None)
    return _summary(list(range(1, len(levels) + 1)), cumulative, total, found_at, inside, "level",
                    [float(v) for v in levels])


def _sample_mask(mask: np.ndarray, grid: RasterGrid, target: RasterGrid) -> np.ndarray:
    """A valid mask sampled at another grid's cell centres (reprojected when the CRSs differ)."""
    if grid == target:
        return mask
    cols, rows = np.meshgrid(np.arange(target.width) + 0.5, np.arange(target.height) + 0.5)
    x, y = target.pixel_to_map(cols, rows)
    if grid.crs is not None and target.crs is not None and not grid.crs.equals(target.crs):
        from pyproj import Transformer

        x, y = Transformer.from_crs(target.crs, grid.crs, always_xy=True).transform(x, y)
    c, r = grid.map_to_pixel(x, y)
    c, r = np.floor(c).astype(int), np.floor(r).astype(int)
    ok = (r >= 0) & (r < grid.height) & (c >= 0) & (c < grid.width)
    out = np.zeros(target.height * target.width, dtype=bool).reshape(target.height, target.width)
    out[ok] = mask[r[ok], c[ok]]
    return out


def _summary(levels: list, cumulative: list, total: float, found_at: list, inside: np.ndarray, key: str,
             values: list | None = None) -> dict:
    n_inside = int(np.sum(inside))
    curve = [{key: 0, "area": 0.0, "area_share": 0.0, "found": 0, "deposit_share": 0.0}]
    reached = np.sort(np.array([f for f in found_at if f is not None], dtype=float))
    for k, level in enumerate(levels):
        found = int(np.searchsorted(reached, level, side="right"))
        point = {key: level, "area": float(cumulative[k]), "area_share": float(cumulative[k]) / total,
                 "found": found, "deposit_share": found / n_inside if n_inside else 0.0}
        if values is not None:
            point["value"] = values[k]
        curve.append(point)
    selected = float(cumulative[-1]) if cumulative else 0.0
    found = len(reached)
    closing = [(c["area_share"], c["deposit_share"]) for c in curve] + [(1.0, 1.0)]
    auc = sum((x1 - x0) * (y0 + y1) / 2.0 for (x0, y0), (x1, y1) in zip(closing, closing[1:]))
    shares = [c["area_share"] for c in curve]
    counts = [c["found"] for c in curve]
    result = {
        "deposits": len(found_at),
        "inside": n_inside,
        "outside": len(found_at) - n_inside,
        "found": found,
        "recall": found / n_inside if n_inside else None,
        "selected_area": selected,
        "valid_area": total,
        "area_reduction": 1.0 - selected / total,
        "auc": auc if n_inside else None,
        "capture": {share: float(np.interp(share, shares, counts)) for share in DEFAULT_SHARES},
        "curve": curve,
        "deposit_ranks": found_at,
    }
    if not levels:
        result.update(area_reduction=None, auc=0.0 if n_inside else None)
    return result


def evaluate_surface(values: np.ma.MaskedArray, grid: RasterGrid, deposit_xy, shares=DEFAULT_SHARES,
                     curve: bool = True) -> dict:
    """Success-rate curve, AUC and capture at area `shares` of a surface on `grid` (higher = more prospective;
    masked or NaN cells are not analysed area) against deposits at map points (x, y) in the grid's CRS; without
    `curve`, the scores only (no curve, no per-deposit area shares)."""
    values = np.ma.masked_invalid(np.ma.asarray(values, dtype=float))
    valid = ~np.ma.getmaskarray(values)
    if not valid.any():
        raise LodestarError("The surface has no valid cells: nothing to evaluate.")
    rows, cols, inside = cells_of(deposit_xy, grid, valid)
    deposit_values = np.asarray(values.data, dtype=float)[rows[inside], cols[inside]]
    above, tied = rank_positions(values.compressed(), deposit_values)
    n_inside = int(inside.sum())
    scores = {
        "deposits": len(inside),
        "inside": n_inside,
        "outside": len(inside) - n_inside,
        "valid_area": float(valid.sum()) * grid.pixel_area,
        **score_positions(above, tied, shares),
    }
    if not curve:
        return scores
    positions = iter((above + tied / 2).tolist())
    return {**scores, "curve": _surface_curve(above, tied, n_inside),
            "deposit_area_shares": [next(positions) if ok else None for ok in inside.tolist()]}


def beside_surface(metrics: dict, values: np.ma.MaskedArray, grid: RasterGrid, deposit_xy, best: int = 10) -> dict:
    """The targets' curve by rank (`metrics` of `evaluate_localization`) beside the surface they were drawn from at
    equal area: each curve point gains `surface_found`, the deposits the surface's own best cells of the same area
    hold (ties at the cut shared out as expected values); `equal_area` says it for the best `best` targets:
    {"rank", "area_share", "targets", "surface"} (None without deposits inside or targets)."""
    curve = metrics.get("curve") or []
    if not curve or not metrics.get("inside"):
        return dict(metrics, equal_area=None)
    shares = [min(1.0, max(float(c["area_share"]), 1e-12)) for c in curve]
    capture = evaluate_surface(values, grid, deposit_xy, shares=shares, curve=False)["capture"]
    points = [dict(c, surface_found=0.0 if c["area_share"] == 0 else round(capture[share], 3))
              for c, share in zip(curve, shares)]
    ranked = [c for c in points if c.get("rank") and c["rank"] <= best]
    last = ranked[-1] if ranked else None
    equal = None if last is None else {"rank": int(last["rank"]), "area_share": last["area_share"],
                                       "targets": int(last["found"]), "surface": last["surface_found"]}
    return dict(metrics, curve=points, equal_area=equal)


def rank_positions(values: np.ndarray, deposit_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each deposit value: (share of `values` above it, share equal to it), `values` being every valid cell."""
    ordered = np.sort(np.asarray(values, dtype=float))
    deposit_values = np.asarray(deposit_values, dtype=float)
    n = len(ordered)
    below_or_equal = np.searchsorted(ordered, deposit_values, side="right")
    below = np.searchsorted(ordered, deposit_values, side="left")
    return (n - below_or_equal) / n, (below_or_equal - below) / n


def score_positions(above, tied, shares=DEFAULT_SHARES) -> dict:
    """AUC (1 - mean area share; None without deposits) and capture at `shares` (expected deposits within the
    top share of the area, each deposit's tie group entered linearly) from deposits' rank positions."""
    above, tied = np.asarray(above, dtype=float), np.asarray(tied, dtype=float)
    spread = np.maximum(tied, 1e-300)
    return {"auc": float(1.0 - np.mean(above + tied / 2)) if len(above) else None,
            "capture": {share: float(np.clip((share - above) / spread, 0.0, 1.0).sum()) for share in shares}}


def _surface_curve(above: np.ndarray, tied: np.ndarray, n_inside: int) -> list:
    """The exact success-rate curve: the start and end of each tie group holding deposits, from (0, 0) to
    (1, 1); between them no deposit is met and the curve is flat, so these points draw it whole."""
    points = [(0.0, 0)]
    if len(above):  # tie groups in order of (start, width), with the deposits found before and after each
        above, tied = np.asarray(above, dtype=float), np.asarray(tied, dtype=float)
        order = np.lexsort((tied, above))
        above, tied = above[order], tied[order]
        last = np.flatnonzero(np.append((above[1:] != above[:-1]) | (tied[1:] != tied[:-1]), True))
        after = last + 1
        before = np.append(0, after[:-1])
        for start, width, found_before, found_after in zip(above[last].tolist(), tied[last].tolist(),
                                                           before.tolist(), after.tolist()):
            points.append((start, found_before))
            points.append((start + width, found_after))
    points.append((1.0, n_inside))
    curve: list[dict] = []
    for share, count in points:
        if curve and curve[-1]["area_share"] == share and curve[-1]["found"] == count:
            continue
        curve.append({"area_share": share, "found": count, "deposit_share": count / n_inside if n_inside else 0.0})
    return curve


def write_curve_csv(metrics: dict, path) -> Path:
    """The success-rate curve as a CSV table: one row per point (rank, raster level or surface step), from (0, 0)."""
    curve = metrics["curve"]
    fields = list(curve[0].keys())
    return write_csv(path, fields, [{k: _fmt(row.get(k)) for k in fields} for row in curve], lineterminator="\r\n")


def _fmt(value):
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return value


def plot_success_curve(metrics: dict, path, title: str = "Success-rate curve") -> Path:
    """A PNG of the success-rate curve with the chance line, recall, area reduction and AUC."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    path = Path(path)
    curve = metrics["curve"]
    xs = [c["area_share"] for c in curve] + [1.0]
    ys = [c["deposit_share"] for c in curve] + [1.0]
    figure = Figure(figsize=(5, 5), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 1, 1)
    axes.plot([0, 1], [0, 1], linestyle="--", color="grey", label="chance")
    ranked_all = xs[-2] >= 0.999  # a surface ranks every cell; polygons leave an unranked remainder
    axes.plot(xs[:-1], ys[:-1], marker="o" if len(xs) < 60 else None, color="firebrick",
              label="cells by surface value" if ranked_all else "selected areas by rank")
    if not ranked_all:
        axes.plot(xs[-2:], ys[-2:], linestyle=":", color="firebrick", label="unselected remainder")
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1.02)
    axes.set_xlabel("share of the analysed area")
    axes.set_ylabel("share of known deposits")
    axes.set_title(f"{title}\n{_plot_text(metrics)}", fontsize=9)
    axes.legend(loc="lower right", fontsize=8)
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", pil_kwargs=PNG_OPTIONS)
    return path


def _plot_text(metrics: dict) -> str:
    parts = []
    if "recall" in metrics:
        parts.append(f"recall {metrics['recall']:.2f}" if metrics["recall"] is not None else "recall n/a")
    if metrics.get("area_reduction") is not None:
        parts.append(f"area reduction {metrics['area_reduction']:.2f}")
    if metrics.get("auc") is not None:
        parts.append(f"AUC {metrics['auc']:.2f}")
    if 0.1 in metrics.get("capture", {}) and metrics.get("inside"):
        parts.append(f"{metrics['capture'][0.1]:.1f} of {metrics['inside']} deposits in the top 10 %")
    return ", ".join(parts)


def classification_metrics(truths, predictions, positive: str = "A", labels=None) -> dict:
    """Accuracy, positive-class F1, macro F1 and MCC of answers (see the module doc)."""
    truths = [str(t) for t in truths]
    predictions = [str(p) for p in predictions]
    labels = _choices(truths, predictions, positive, labels)
    confusion: dict[str, dict[str, int]] = {t: {} for t in labels}
    for t, p in zip(truths, predictions):
        confusion.setdefault(t, {})
        confusion[t][p] = confusion[t].get(p, 0) + 1
    scored = _scored(truths, predictions, labels)
    invalid = sum(1 for p in predictions if p not in labels)
    accuracy = sum(1 for t, p in zip(truths, predictions) if t == p) / len(truths)
    f1 = {label: _f1(scored, label) for label in labels}
    tp = sum(1 for t, p in scored if t == positive and p == positive)
    tn = sum(1 for t, p in scored if t != positive and p != positive)
    fp = sum(1 for t, p in scored if t != positive and p == positive)
    fn = sum(1 for t, p in scored if t == positive and p != positive)
    denominator = math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    mcc = (tp * tn - fp * fn) / denominator if denominator > 0 else 0.0
    return {
        "n": len(truths),
        "accuracy": accuracy,
        "pos_f1": f1[positive],
        "macro_f1": sum(f1.values()) / len(f1),
        "mcc": mcc,
        "f1": f1,
        "invalid": invalid,
        "labels": labels,
        "confusion": confusion,
        "tp": tp, "tn": tn, "fp": fp, "fn": fn,
    }


def _choices(truths: list, predictions: list, positive: str, labels) -> list:
    """The choices answers are scored over (the positive one among them: by default every truth's); raises when
    the answers cannot be scored."""
    if len(truths) != len(predictions):
        raise LodestarError(f"{len(truths)} ground-truth answers but {len(predictions)} predictions.")
    if not truths:
        raise LodestarError("No answers to evaluate.")
    labels = [str(x) for x in (labels or sorted(set(map(str, truths)) | {positive}))]
    return labels if positive in labels else [positive] + labels


def _scored(truths: list, predictions: list, labels: list) -> list:
    """(truth, prediction) pairs as scored: with two choices, an answer outside them is the wrong one."""
    scored = []
    for t, p in zip(truths, predictions):
        if p not in labels and len(labels) == 2:
            p = next(x for x in labels if x != t) if t in labels else p  # a failed answer is the wrong choice
        scored.append((t, p))
    return scored


RESAMPLED_CELLS = 2_000_000
"""Cases x resamples scored at once by `answer_intervals` (bounds its memory on large batches)."""


def answer_intervals(truths, predictions, positive: str = "A", labels=None, draws: int = 2000,
                     level: float = 0.95, seed: int = 0) -> dict:
    """Percentile bootstrap intervals of macro F1 and MCC: the cases resampled with replacement `draws` times
    (a fixed seed, so a table is reproducible), each resample scored by `resampled_scores` with the choices of
    the whole sample. {"macro_f1": (low, high), "mcc": (low, high)}: how far the figures could move on another
    draw of as many cases of the same kinds."""
    labels = _choices(truths, predictions, positive, labels)
    rng, n = np.random.default_rng(seed), len(truths)
    chunk = max(1, RESAMPLED_CELLS // n)
    parts = [resampled_scores(truths, predictions, rng.integers(0, n, size=(min(chunk, draws - done), n)),
                              positive, labels) for done in range(0, draws, chunk)]
    tail = (1.0 - level) / 2.0 * 100.0
    return {key: tuple(float(v) for v in np.percentile(np.concatenate([part[key] for part in parts]),
                                                        [tail, 100.0 - tail]))
            for key in ("macro_f1", "mcc")}


def resampled_scores(truths, predictions, picks: np.ndarray, positive: str, labels: list) -> dict:
    """Macro F1 and MCC of each resample (a row of case indices in `picks`), as `classification_metrics` scores
    it with these choices (`positive` among them): {"macro_f1": array, "mcc": array}, one value per row."""
    pairs = _scored([str(t) for t in truths], [str(p) for p in predictions], [str(label) for label in labels])
    labels = list(dict.fromkeys(str(label) for label in labels))
    code = {label: i for i, label in enumerate(labels)}  # an answer outside the choices gets a code of its own
    t = np.array([code.get(truth, len(labels)) for truth, _ in pairs])[picks]
    p = np.array([code.get(answer, len(labels)) for _, answer in pairs])[picks]
    rows = picks.shape[0]

    def counts(label: int):
        hit_t, hit_p = t == label, p == label
        return tuple(hits.sum(1).astype("float64") for hits in (hit_t & hit_p, ~hit_t & hit_p, hit_t & ~hit_p))

    f1s = []
    for label in range(len(labels)):
        tp, fp, fn = counts(label)
        f1s.append(np.divide(2 * tp, 2 * tp + fp + fn, out=np.zeros(rows), where=2 * tp + fp + fn > 0))
    tp, fp, fn = counts(code[positive])
    tn = picks.shape[1] - tp - fp - fn
    denominator = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    mcc = np.divide(tp * tn - fp * fn, denominator, out=np.zeros(rows), where=denominator > 0)
    return {"macro_f1": np.mean(f1s, axis=0), "mcc": mcc}


def _f1(pairs: list, label: str) -> float:
    tp = sum(1 for t, p in pairs if t == label and p == label)
    fp = sum(1 for t, p in pairs if t != label and p == label)
    fn = sum(1 for t, p in pairs if t == label and p != label)
    return 2 * tp / (2 * tp + fp + fn) if (2 * tp + fp + fn) else 0.0

