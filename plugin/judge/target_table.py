"""The run's targets as a geologist follows them up: delineated on the surface (`favourability/targets.py`), ranked by
what they hold per unit area, the best judged on their own evidence by the chain's verifier, and described by fields
a GIS keeps.

Ranking (one rule, calibrated or not): by what a target's cells hold per km2 (`score`). With a calibrated surface,
the expected deposits per km2: the sum over its cells of the deposits a cell at its rank held out of fold
(`favourability/expected.py`: over the analysed area they add up to the known deposits inside it), over its area;
knowledge-driven, the favourability carries no count, and the density it has is how high the target's cells rise:
the 90th percentile of favourability inside (fav_p90). Size only breaks ties: of two targets alike dense, the larger
holds more. Summing over the area instead rewards size (calibrated Murchison: the best 10 held 35 deposits where the
surface's own best cells of the same area held 65). A verified core comes first and further verified systems next
(`core_target`). The best `judged` targets are judged (`target_evidence`) and reordered among themselves by score
times their verdict's factor (VERDICT_FACTOR); an item of the deposit model that no layer can test at any of them
is said once for the district and left out of their verdicts, which rest on the items that can be tested.

Fields (Shapefile-safe names, numbers stored as numbers): rank, tier (% of the area whose top cells it holds: 2, 5
or 10), area_km2, centroid_x / centroid_y (layer CRS), lon / lat (WGS 84), fav_mean, fav_p90, uncertain (mean
uncertainty, when calibrated), exp_deps (expected deposits, when calibrated), known_deps (known deposits inside),
score (what it is ranked by: expected deposits per km2, else fav_p90), verdict (strong / moderate / weak /
unsupported; empty when not judged), layers (the three layers contributing most inside), n_zones (zones of the chain
inside), prospects (prospects inside), why (one sentence). A prospect has its target's rank (camp), its own rank in
its target and the same fields but verdict, n_zones and prospects.
"""
from __future__ import annotations

import geopandas as gpd
import numpy as np
from pyproj import CRS, Transformer
from scipy import ndimage

from ..decisions import CORE
from ..favourability.targets import Delineation
from ..labels import listed, plural, the
from ..reason.contract import ReasonerError
from ..zones import labelled_polygons
from .target_evidence import checked, judge, verdict_of, verdict_words

TARGET_COLUMNS = ("rank", "tier", "area_km2", "centroid_x", "centroid_y", "lon", "lat", "fav_mean", "fav_p90",
                  "uncertain", "exp_deps", "known_deps", "score", "verdict", "layers", "n_zones", "prospects", "why")
PROSPECT_COLUMNS = ("camp", "rank", "tier", "area_km2", "centroid_x", "centroid_y", "lon", "lat", "fav_mean",
                    "fav_p90", "uncertain", "exp_deps", "known_deps", "score", "layers", "why")
COUNTS = ("rank", "known_deps", "n_zones", "prospects", "camp")
"""Fields that count: whole numbers (known_deps, unknown without deposits, is then a real number left empty)."""
TEXTS = ("verdict", "layers", "why")
# decision numbers: their reasons and provenance are in plugin/decisions.py
VERDICT_FACTOR = CORE.verdict_factor
JUDGED = CORE.judged


def empty_targets(crs, columns: tuple = TARGET_COLUMNS) -> gpd.GeoDataFrame:
    return typed(gpd.GeoDataFrame({c: [] for c in columns}, geometry=gpd.GeoSeries([], crs=crs), crs=crs))


def typed(frame: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    """The targets' fields as a GIS stores them: counts as integers (a real number where any is unknown), every other
    number as a real number even when none is known (a field of only empty values would be written as text), text as
    text."""
    frame = frame.copy()
    for column in frame.columns:
        if column == frame.geometry.name:
            continue
        if column in TEXTS:
            frame[column] = frame[column].map(lambda v: "" if v is None else str(v)).astype(object)
            continue
        numbers = frame[column].map(lambda v: np.nan if v is None else v).astype("float64")
        whole = column in COUNTS and not numbers.isna().any()
        frame[column] = numbers.astype("int64") if whole else numbers
    return frame


def rank_key(row: dict) -> tuple:
    """The ranking rule (module docstring): what a target holds per km2, then its size."""
    return -row["score"], -row["area_km2"]


def target_rows(delineation: Delineation, values: np.ma.MaskedArray, grid, area_share: float, *,
                expected: np.ma.MaskedArray | None = None, uncertainty=None, deposit_xy=None,
                contributions: dict | None = None) -> list[dict]:
    """One row per delineated target (label order) with every field but rank, verdict and why; `expected`: the
    expected deposits per cell (`favourability/expected.py`), summed over each target (its score: that sum per km2,
    else its fav_p90); `contributions`: {layer:
    (weight, membership map)} whose weighted means inside name the contributing layers."""
    labels = delineation.labels
    count = int(labels.max())
    if not count:
        return []
    index = np.arange(1, count + 1)
    data = np.asarray(values.filled(0.0), dtype="float64")
    cells = ndimage.sum(np.ones_like(data), labels, index)
    means = ndimage.mean(data, labels, index)
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
        area = float(cells[k]) * cell_km2
        top = sorted(weighted, key=lambda n: -float(weighted[n][k]))[:3]
        out.append({"label": int(label), "tier": round(100 * delineation.tiers.get(int(label), area_share), 3),
                    "area_km2": round(area, 4), "centroid_x": round(float(x), 3),
                    "centroid_y": round(float(y), 3), "lon": _round(lon, 6), "lat": _round(lat, 6),
                    "fav_mean": round(float(means[k]), 4), "fav_p90": round(p90, 4),
                    "uncertain": _round(None if uncertain is None else float(uncertain[k]), 4),
                    "exp_deps": _round(deposits, 3), "known_deps": int(held[k]) if held is not None else None,
                    "score": round(deposits / area if deposits is not None else p90, 6),
                    "layers": ", ".join(top), "verdict": "", "n_zones": 0, "prospects": 0, "why": ""})
    return out


def polygons_of(labels: np.ndarray, grid) -> dict:
    """{label: polygon} of the delineated targets, on the cells' own edges: neighbouring targets split from one patch
    share their boundary exactly (simplifying each on its own would open slivers between them where a deposit could
    fall in no target)."""
    return labelled_polygons(labels, grid, 0.0)


def why_words(row: dict, judgement: dict | None, zones_inside: int, probability: bool, core: str = "") -> str:
    """One sentence a geologist reads: what the target holds and how it was judged (no ids, no graph scores)."""
    text = _holds(row, probability)
    if row["layers"]:
        text += f"; strongest evidence: {row['layers']}"
    if zones_inside:
        text += f"; the chain marked {plural(zones_inside, 'zone')} here"
    if row.get("prospects"):
        text += f"; {plural(row['prospects'], 'prospect')} inside"
    if judgement:
        text += f"; {judgement['why'].rstrip('.')}"
    if core:
        text = f"{core}; {text}"
    return text + "."


def prospect_words(row: dict, probability: bool) -> str:
    """A prospect's sentence: which target it lies in and what it holds."""
    text = f"prospect {row['rank']} of target {row['camp']}: {_holds(row, probability)}"
    return text + (f"; strongest evidence: {row['layers']}" if row["layers"] else "") + "."


def _holds(row: dict, probability: bool) -> str:
    size = f"{row['area_km2']:.3g} km2 in the top {row['tier']:g} % of the surface"
    if probability and row["exp_deps"] is not None:
        return (f"{size}, about {row['exp_deps']:.2g} deposits expected, {row['score']:.2g} per km2 (what cells of "
                "its rank held out of fold)")
    return f"{size}, its best tenth at favourability {row['fav_p90']:.2f} (mean {row['fav_mean']:.2f})"


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
    return [dict(j, view=m.get("view", "")) for j, m in zip(district_wide(judged, notes), measured)]


def district_wide(judged: list, notes: list) -> list:
    """The judgements with the items no layer can test at any of the judged targets said once, for the district, in
    `notes`, and left out of each target's items and verdict, which then rest on the items tested there (an item
    untestable at one target and tested at others still counts against it). Unchanged when every item or none is
    untestable everywhere."""
    if not judged:
        return judged
    ids = [item["id"] for item in judged[0]["items"]]
    blind = [key for key in ids if all(any(i["id"] == key and i["status"] == "untestable" for i in j["items"])
                                       for j in judged)]
    if not blind or len(blind) == len(ids):
        return judged
    levels = {item["id"]: item["level"] for item in judged[0]["items"]}
    named = " and ".join(f"the {levels[key]} {key.replace('_', ' ')}" for key in blind)
    notes.append(f"No layer can test {named} at any of the {len(judged)} targets judged: said here once for the "
                 "district, and left out of the targets' verdicts, which rest on the items the layers can test there.")
    out = []
    for judgement in judged:
        kept = [item for item in judgement["items"] if item["id"] not in blind]
        verdict = verdict_of(kept)
        why = judgement["why"] if verdict == judgement["verdict"] else verdict_words(verdict, kept)
        out.append(dict(judgement, items=kept, verdict=verdict, why=why))
    return out


def targets_note(work, analysed_m2: float, area_share: float, probability: bool) -> str:
    """What the targets are, in one paragraph (`work`: the run's `work_list.WorkList`)."""
    targets, delineation, sizes, left = work.targets, work.delineation, work.sizes, work.left
    covered = float(targets["area_km2"].sum()) * 1e6 / max(analysed_m2, 1e-12) if len(targets) else 0.0
    ranked = ("by the deposits expected per km2 (what cells of their rank held out of fold)" if probability else
              "by how high their best tenth rises (the 90th percentile of favourability inside)")
    capped = (f"none larger than {sizes.max_km2:g} km2 ({sizes.max_source}; {delineation.cut_to_cap} cut where the "
              "surface is flat)" if sizes.max_km2 else f"with no size limit ({sizes.max_source})")
    specks = (f"{plural(delineation.specks, 'speck')} under it dropped, {delineation.merged} joined to the target "
              "they touch" if delineation.specks or delineation.merged else "no speck under it")
    judged = min(JUDGED, len(targets))
    shares = work.shares
    surface = f"{'calibrated' if probability else 'knowledge-driven'} surface"
    holding = (plural(sizes.count, "target") if len(shares) == 1 else
               f"the best {work.first}, as many as the chain judges")
    tier = (f"the top {shares[0]:.0%} of the {surface} (the smallest tier of the top {area_share:.0%} holding "
            f"{holding}: drawn from a wider share, a target reaches into cells the surface ranks below cells left out)"
            if shares[0] < area_share else f"the top {area_share:.0%} of the {surface}")
    wider, order = "", ""
    if len(shares) > 1:
        full = ("to fill the list" if len(targets) >= sizes.count else
                f"the list holding {len(targets)} of {sizes.count}")
        order = "tier by tier, tightest first, then "
        wider = (f"; the top {listed([f'{s:.0%}' for s in shares[1:]])}, delineated alike, then added "
                 f"{plural(sum(work.added[1:]), 'target')} sharing no cell with those ({full})")
    text = (f"{plural(len(targets), 'target')} covering {covered:.1%} of the analysed area: {tier} split at its peaks "
            f"({delineation.split_at_peaks} split off by a saddle), {capped}, and none smaller than "
            f"{sizes.min_km2:.3g} km2 ({sizes.min_source}; {specks}){wider}; ranked {order}{ranked}, size only "
            f"breaking ties; {the(judged, 'best target')} judged on {'its' if judged == 1 else 'their'} own evidence "
            "and reordered by the verdicts.")
    if sizes.prospect_km2 and len(targets):
        camps = targets[targets["rank"].isin(work.prospects["camp"])] if len(work.prospects) else targets.iloc[:0]
        spread = (f" with the cells tied at the cut: "
                  f"{float(work.prospects['area_km2'].sum()) / float(camps['area_km2'].sum()):.0%} of those targets' "
                  "area in all" if len(camps) else "")
        text += (f" Each target larger than one deposit's footprint ({sizes.prospect_km2:g} km2) holds its "
                 f"prospects, {len(work.prospects)} in all: its own best cells (the top {area_share:.0%} of it"
                 f"{spread}), split at their peaks, none larger than that footprint, ranked by the same rule.")
    if left["count"] or left["km2"] > 0:
        held = f", holding {plural(left['known'], 'known deposit')}" if left.get("known") is not None else ""
        others = [f"{the(left['count'], 'other target')} of the top {shares[-1]:.0%}"] if left["count"] else []
        rest = ("the rest of that share" if others and shares[-1] == area_share else
                f"the rest of the top {area_share:.0%}")
        parts = others + ([rest] if shares[-1] < area_share or len(shares) > 1 else [])
        one = len(parts) == 1 and (left["count"] == 1 or not left["count"])
        text += (f" The work list is the best {sizes.count}: {' and '.join(parts)} ({left['km2']:,.1f} km2{held}) "
                 f"{'is' if one else 'are'} not drawn, and {'stays' if one else 'stay'} in the favourability surface.")
    return text


def where_answer(targets, shown: int = 10) -> str:
    """A "where" question's answer: how many targets, their area and what they hold, then the best `shown` with
    where they lie."""
    if not len(targets):
        return "No target: nothing on the surface stands out enough to be drawn."
    total = float(targets["area_km2"].sum())
    holds = []
    known = targets["known_deps"].dropna() if "known_deps" in targets else None
    if known is not None and len(known):
        holds.append(plural(int(known.sum()), "known deposit"))
    expected = targets["exp_deps"].dropna() if "exp_deps" in targets else None
    if expected is not None and len(expected):
        holds.append(f"about {float(expected.sum()):.3g} expected")
    held = f" holding {' and '.join(holds)}" if holds else ""
    lines = [f"{plural(len(targets), 'target')} over {total:,.1f} km2{held}, best first:"]
    for row in targets.head(shown).itertuples():
        place = (f"{abs(row.lat):.3f}°{'N' if row.lat >= 0 else 'S'} {abs(row.lon):.3f}°{'E' if row.lon >= 0 else 'W'}"
                 if row.lat is not None and row.lon is not None and not np.isnan(row.lat)
                 else f"x {row.centroid_x:,.0f}, y {row.centroid_y:,.0f}")
        verdict = f", {row.verdict}" if row.verdict else ""
        lines.append(f"{row.rank}. {row.area_km2:.3g} km2 at {place}{verdict}")
    return " ".join(lines[:1]) + " " + "; ".join(lines[1:]) + "."
