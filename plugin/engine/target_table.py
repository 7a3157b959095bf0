"""The run's targets as a geologist follows them up: delineated on the surface (`favourability/targets.py`), ranked by
the deposits they can be expected to hold, the best judged on their own evidence by the chain's verifier, and
described by fields a GIS keeps.

Ranking: with a calibrated surface, a target's expected deposits are the sum over its cells of the deposits a cell
at its rank held out of fold (`favourability/expected.py`: over the analysed area they add up to the known deposits
inside it); knowledge-driven, the favourability carries no count, and a target no larger than one
system's footprint is one candidate system: it is ranked by how high its best tenth rises (fav_p90, ties broken by
the favourability above the selection's cut-off summed over its area), so a large marginal patch does not outrank
a strong anomaly by its size. A verified core comes first
and further verified systems next (`core_target`). The best `judged` targets are judged (`target_evidence`) and
reordered among themselves by score times their verdict's factor (VERDICT_FACTOR).

Fields (Shapefile-safe names): rank, tier (% of the area whose top cells it holds: 2, 5 or 10), area_km2,
centroid_x / centroid_y (layer CRS), lon / lat (WGS 84), fav_mean, fav_p90, uncertain (mean uncertainty, when
calibrated), exp_deps (expected deposits, when calibrated), known_deps (known deposits inside), score (what it is
ranked by: exp_deps, else fav_p90), verdict (strong / moderate / weak / unsupported; empty when not judged),
layers (the three layers contributing most inside), n_zones (zones of the chain inside), why (one sentence).
"""
from __future__ import annotations

import geopandas as gpd
import numpy as np
from pyproj import CRS, Transformer
from scipy import ndimage

from ..errors import LodestarError
from ..favourability.targets import Delineation
from ..zones import labelled_polygons
from .contract import ReasonerError
from .target_evidence import checked, judge

TARGET_COLUMNS = ("rank", "tier", "area_km2", "centroid_x", "centroid_y", "lon", "lat", "fav_mean", "fav_p90",
                  "uncertain", "exp_deps", "known_deps", "score", "verdict", "layers", "n_zones", "why")
VERDICT_FACTOR = {"strong": 1.0, "moderate": 0.8, "weak": 0.6, "unsupported": 0.4, "": 1.0}
"""How a verdict weighs a judged target's score when the judged ones are reordered among themselves."""
JUDGED = 10
"""How many of the best targets the chain judges on their own evidence."""


def empty_targets(crs) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({c: [] for c in TARGET_COLUMNS}, geometry=gpd.GeoSeries([], crs=crs), crs=crs)


def target_rows(delineation: Delineation, values: np.ma.MaskedArray, grid, area_share: float, *,
                expected: np.ma.MaskedArray | None = None, uncertainty=None, deposit_xy=None,
                contributions: dict | None = None) -> list[dict]:
    """One row per delineated target (label order) with every field but rank, verdict and why; `expected`: the
    expected deposits per cell (`favourability/expected.py`), summed over each target; `contributions`: {layer:
    (weight, membership map)} whose weighted means inside name the contributing layers."""
    labels = delineation.labels
    count = int(labels.max())
    if not count:
        return []
    index = np.arange(1, count + 1)
    data = np.asarray(values.filled(0.0), dtype="float64")
    valid = ~np.ma.getmaskarray(values)
    cut = float(np.min(data[(labels > 0) & valid])) if ((labels > 0) & valid).any() else 0.0
    cells = ndimage.sum(np.ones_like(data), labels, index)
    means = ndimage.mean(data, labels, index)
    surplus = ndimage.sum(np.clip(data - cut, 0, None), labels, index)
    held_expected = (ndimage.sum(np.asarray(np.ma.filled(expected, 0.0), dtype="float64"), labels, index)
                     if expected is not None else None)
    cell_km2 = grid.pixel_area / 1e6
    centres = ndimage.center_of_mass(np.ones_like(data), labels, index)
    held = _known_inside(labels, grid, deposit_xy)
    uncertain = (ndimage.mean(np.asarray(uncertainty.filled(np.nan), dtype="float64"), labels, index)
                 if uncertainty is not None else None)
    weighted = {name: ndimage.mean(np.asarray(np.ma.filled(np.ma.asarray(m, dtype=float), 0.0)), labels, index)
                * weight for name, (weight, m) in (contributions or {}).items()}
    objects = ndimage.find_objects(labels)
    to_lonlat = _lonlat(grid.crs)
    out = []
    for k, label in enumerate(index):
        box = objects[k]
        p90 = float(np.percentile(data[box][labels[box] == label], 90))
        row, col = centres[k]
        x, y = grid.transform * (col + 0.5, row + 0.5)
        lon, lat = to_lonlat(x, y) if to_lonlat else (None, None)
        deposits = float(held_expected[k]) if held_expected is not None else None
        top = sorted(weighted, key=lambda n: -float(weighted[n][k]))[:3]
        out.append({"label": int(label), "tier": round(100 * delineation.tiers.get(int(label), area_share), 3),
                    "area_km2": round(float(cells[k]) * cell_km2, 4), "centroid_x": round(float(x), 3),
                    "centroid_y": round(float(y), 3), "lon": _round(lon, 6), "lat": _round(lat, 6),
                    "fav_mean": round(float(means[k]), 4), "fav_p90": round(p90, 4),
                    "uncertain": _round(None if uncertain is None else float(uncertain[k]), 4),
                    "exp_deps": _round(deposits, 3), "known_deps": int(held[k]) if held is not None else None,
                    "score": round(deposits if deposits is not None else p90, 6),
                    "surplus": float(surplus[k]) * cell_km2,
                    "layers": ", ".join(top), "verdict": "", "n_zones": 0, "why": ""})
    return out


def polygons_of(labels: np.ndarray, grid) -> dict:
    """{label: polygon} of the delineated targets, on the cells' own edges: neighbouring targets split from one patch
    share their boundary exactly (simplifying each on its own would open slivers between them where a deposit could
    fall in no target)."""
    return labelled_polygons(labels, grid, 0.0)


def why_words(row: dict, judgement: dict | None, zones_inside: int, probability: bool, core: str = "") -> str:
    """One sentence a geologist reads: what the target holds and how it was judged (no ids, no graph scores)."""
    size = f"{row['area_km2']:.3g} km2 in the top {row['tier']:g} % of the surface"
    if probability and row["exp_deps"] is not None:
        text = f"{size}, about {row['exp_deps']:.2g} deposits expected (what cells of its rank held out of fold)"
    else:
        text = f"{size}, mean favourability {row['fav_mean']:.2f}"
    if row["layers"]:
        text += f"; strongest evidence: {row['layers']}"
    if zones_inside:
        text += f"; the chain marked {zones_inside} zone(s) here"
    if judgement:
        text += f"; {judgement['why'].rstrip('.')}"
    if core:
        text = f"{core}; {text}"
    return text + "."


def _known_inside(labels: np.ndarray, grid, deposit_xy) -> np.ndarray | None:
    count = int(labels.max())
    if deposit_xy is None:
        return None
    held = np.zeros(count, dtype=int)
    inverse = ~grid.transform
    for x, y in deposit_xy:
        col, row = inverse * (float(x), float(y))
        r, c = int(np.floor(row)), int(np.floor(col))
        if 0 <= r < labels.shape[0] and 0 <= c < labels.shape[1] and labels[r, c]:
            held[labels[r, c] - 1] += 1
    return held


def zones_inside(polygon, nodes) -> int:
    """How many zones of the chain (graph nodes) the target touches."""
    if nodes is None or not len(nodes):
        return 0
    return len(nodes.sindex.query(polygon, predicate="intersects"))


def _lonlat(crs):
    if crs is None:
        return None
    try:
        source = CRS.from_user_input(crs)
    except Exception:  # noqa: BLE001 - a CRS pyproj cannot read gives no lon/lat, said by the empty fields
        return None
    if source.is_geographic and source.equals(CRS.from_epsg(4326)):
        return lambda x, y: (x, y)
    transformer = Transformer.from_crs(source, CRS.from_epsg(4326), always_xy=True)
    return transformer.transform


def _round(value, digits):
    return None if value is None or (isinstance(value, float) and np.isnan(value)) else round(float(value), digits)


def target_cap(deposit_model: dict, asked_km2: float | None) -> tuple:
    """(the largest target in km2, where that figure comes from): the user's, else the deposit model's footprint."""
    if asked_km2:
        if asked_km2 <= 0:
            raise LodestarError(f"The largest target must be above 0 km2, not {asked_km2:g}.")
        return float(asked_km2), "set for this run"
    footprint = deposit_model.get("footprint") or {}
    if footprint.get("km2"):
        return float(footprint["km2"]), f"the footprint of {footprint.get('of', 'one system')} ({footprint['source']})"
    return None, "no footprint known for this deposit model"


def judge_targets(engine, measured: list, notes: list) -> list:
    """The verifier's judgement of each measured target: the model's answer held to the measurements (`checked`),
    or the rules' own when the back-end answers by rules or its answer cannot be had (said in `notes`); each with
    the file name of the executor's picture of it (`view`)."""
    if not measured:
        return []
    try:
        answers = engine.ask_target_verdicts(measured)
    except ReasonerError as exc:  # a spent budget or a refusing server too
        notes.append(f"The verifier's judgement of the targets could not be had ({exc}); they are judged by the rules.")
        answers = None
    if answers is not None and len(answers) != len(measured):
        notes.append("The verifier judged a different number of targets than it was shown; they are judged by the "
                     "rules.")
        answers = None
    judged = [judge(m) for m in measured] if answers is None else [checked(m, a) for m, a in zip(measured, answers)]
    return [dict(j, view=m.get("view", "")) for j, m in zip(judged, measured)]


def targets_note(targets, delineation, analysed_m2: float, area_share: float, cap, cap_source: str,
                 probability: bool) -> str:
    """What the targets are, in one paragraph."""
    covered = float(targets["area_km2"].sum()) * 1e6 / max(analysed_m2, 1e-12) if len(targets) else 0.0
    ranked = ("by the deposits expected in each (what cells of their rank held out of fold)" if probability else
              "by how high their best tenth rises (90th percentile of favourability)")
    capped = (f" none larger than {cap:g} km2 ({cap_source}; {delineation.cut_to_cap} cut where the surface is flat)"
              if cap else f" with no size limit ({cap_source})")
    return (f"{len(targets)} target(s) covering {covered:.1%} of the analysed area: the top {area_share:.0%} of the "
            f"{'calibrated' if probability else 'knowledge-driven'} surface split at its peaks "
            f"({delineation.split_at_peaks} split off by a saddle),{capped}; ranked {ranked}, the best "
            f"{min(JUDGED, len(targets))} judged on their own evidence and reordered by their verdict.")


def where_answer(targets, shown: int = 10) -> str:
    """A "where" question's answer: the count and area of the targets, then the best `shown` with where they lie."""
    if not len(targets):
        return "No target: nothing on the surface stands out enough to be drawn."
    total = float(targets["area_km2"].sum())
    lines = [f"{len(targets)} target(s) over {total:,.1f} km2, best first:"]
    for row in targets.head(shown).itertuples():
        place = (f"{abs(row.lat):.3f}°{'N' if row.lat >= 0 else 'S'} {abs(row.lon):.3f}°{'E' if row.lon >= 0 else 'W'}"
                 if row.lat is not None and row.lon is not None and not np.isnan(row.lat)
                 else f"x {row.centroid_x:,.0f}, y {row.centroid_y:,.0f}")
        verdict = f", {row.verdict}" if row.verdict else ""
        lines.append(f"{row.rank}. {row.area_km2:.3g} km2 at {place}{verdict}")
    return " ".join(lines[:1]) + " " + "; ".join(lines[1:]) + "."
