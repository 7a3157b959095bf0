"""Each target's evidence, measured where it lies: the executor's look at every evidence layer in and around a
target, and the rules the verifier judges it by.

The look is an evidence view of the target (its bounds grown by half on every side): per layer of the surface, the
mean membership inside the target, in the ring around it within the view, and across the analysed area, with the
target's mean percentile rank of the layer (0.5: like the average cell) and the share of the target with data.
Each item of the deposit model (critical and secondary, by role) is then:
- untestable: no layer of its roles enters the surface, or none has data over half the target;
- supported: a layer of its roles stands out in the target (mean percentile rank at least SUPPORT_RANK);
- absent: otherwise.
The verdict follows the rule the verifier answers by (STA-CoT, Appendix C.4): every critical item supported and a
secondary item present is strong; every critical item supported, moderate; some item supported, weak; none,
unsupported. A
critical item that cannot be tested is not supported: as for the answer, where untestable critical evidence gives
no Yes, a target missing a critical test cannot be better than weak.
"""
from __future__ import annotations

import numpy as np

from ..decisions import CORE
from ..favourability.targets import percentile_ranks

# decision numbers: their reasons and provenance are in plugin/decisions.py
SUPPORT_RANK = CORE.support_rank
MIN_COVERAGE = CORE.min_coverage
VIEW_GROWTH = 0.5
"""The view around a target: its bounds grown by this share of their size on every side."""
VERDICTS = ("strong", "moderate", "weak", "unsupported")
STATUSES = ("supported", "absent", "untestable")


def measure_targets(ws, maps: dict, specs: list, labels: np.ndarray, target_labels: list) -> list[dict]:
    """The evidence of each target (`target_labels`: label ids of `labels`, best first): per target
    {"target": its position from 1, "bbox": the view's cell window, "layers": {layer: measurements},
    "items": [{"id", "level", "what", "roles", "layers"}]} (see the module docstring)."""
    ranks = {name: percentile_ranks(np.ma.masked_invalid(np.ma.asarray(values, dtype=float)))
             for name, values in maps.items()}
    means = {name: float(np.ma.masked_invalid(np.ma.asarray(values, dtype=float)).mean())
             for name, values in maps.items() if np.ma.count(values)}
    roles = {spec.layer: spec.role for spec in specs}
    items = [{"id": item["id"], "level": item.get("level", "secondary"), "what": item.get("what", item["id"]),
              "roles": list(item.get("roles", [])),
              "layers": [name for name in maps if roles.get(name) in item.get("roles", [])]}
             for item in ws.deposit_model.get("evidence", [])]
    boxes = _boxes(labels, target_labels)
    out = []
    for position, (label, box) in enumerate(zip(target_labels, boxes), start=1):
        inside = labels[box] == label
        ring = ~inside
        layers = {}
        for name, values in maps.items():
            window = np.ma.masked_invalid(np.ma.asarray(values, dtype=float)[box])
            known = ~np.ma.getmaskarray(window)
            coverage = float((known & inside).sum()) / max(int(inside.sum()), 1)
            rank_window = ranks[name][box]
            layers[name] = {
                "inside": _mean(window, inside & known), "around": _mean(window, ring & known),
                "district": round(means[name], 4) if name in means else None,
                "rank": _mean(np.ma.masked_invalid(rank_window), inside & known),
                "coverage": round(coverage, 3)}
        out.append({"target": position, "bbox": [box[0].start, box[1].start, box[0].stop, box[1].stop],
                    "layers": layers, "items": items})
    return out


def look_at_target(ws, maps: dict, labels: np.ndarray, label: int, measured: dict) -> str:
    """The executor's zoomed picture of one measured target (`target_views`), written to the run's evidence folder;
    its file name there. The layers that stand out most inside come first."""
    from .target_views import draw_target_view

    r0, c0, r1, c1 = measured["bbox"]
    layers = sorted(measured["layers"], key=lambda n: -(measured["layers"][n]["rank"] or 0.0))
    name = f"target{measured['target']:02d}.png"
    draw_target_view(maps, labels, label, (slice(r0, r1), slice(c0, c1)), layers, ws.evidence_dir / name)
    return name


def judge(measured: dict) -> dict:
    """The rules' judgement of one target's measurements: {"items": [{"id", "level", "status", "layer",
    "evidence"}], "verdict", "why"} (see the module docstring)."""
    judged = []
    for item in measured["items"]:
        testable = {n: measured["layers"][n] for n in item["layers"]
                    if measured["layers"][n]["coverage"] >= MIN_COVERAGE and measured["layers"][n]["rank"] is not None}
        if not testable:
            reason = ("no layer of its roles enters the surface" if not item["layers"] else
                      "its layers have no data over this target")
            judged.append({"id": item["id"], "level": item["level"], "status": "untestable", "layer": "",
                           "evidence": reason})
            continue
        name = max(testable, key=lambda n: testable[n]["rank"])
        best = testable[name]
        status = "supported" if best["rank"] >= SUPPORT_RANK else "absent"
        judged.append({"id": item["id"], "level": item["level"], "status": status, "layer": name,
                       "evidence": evidence_words(name, best)})
    verdict = verdict_of(judged)
    return {"items": judged, "verdict": verdict, "why": verdict_words(verdict, judged)}


def verdict_of(items: list[dict]) -> str:
    """strong / moderate / weak / unsupported from the items' statuses (see the module docstring)."""
    critical = [i["status"] for i in items if i["level"] == "critical"]
    secondary = [i["status"] for i in items if i["level"] != "critical"]
    if critical and all(s == "supported" for s in critical):
        return "strong" if "supported" in secondary else "moderate"
    if "supported" in critical or "supported" in secondary:
        return "weak"
    return "unsupported"


def evidence_words(layer: str, measured: dict) -> str:
    """One layer's measurement as a geologist reads it."""
    text = (f"{layer}: membership {measured['inside']:.2f} inside, {_num(measured['around'])} around, "
            f"{_num(measured['district'])} across the district (top {max(1, round(100 * (1 - measured['rank'])))} %)")
    if measured["coverage"] < 1.0:
        text += f"; data over {measured['coverage']:.0%} of the target"
    return text


def verdict_words(verdict: str, items: list[dict]) -> str:
    """The verdict in one sentence: which critical items hold here and which do not."""
    def named(status, level):
        return [i["id"].replace("_", " ") for i in items if i["status"] == status and (i["level"] == "critical")
                == (level == "critical")]

    held, missing, blind = named("supported", "critical"), named("absent", "critical"), named("untestable", "critical")
    parts = [f"{verdict}:"]
    parts.append(f"critical evidence here: {', '.join(held)}" if held else "no critical evidence stands out here")
    if missing:
        parts.append(f"not here: {', '.join(missing)}")
    if blind:
        parts.append(f"cannot be tested: {', '.join(blind)}")
    secondary = named("supported", "secondary")
    if secondary:
        parts.append(f"secondary: {', '.join(secondary)}")
    return parts[0] + " " + "; ".join(parts[1:]) + "."


def checked(measured: dict, answer: dict) -> dict:
    """A model's judgement of one target held to the measurements: an item no layer can test is untestable
    whatever the model said, one that can is supported or absent; the verdict is the rule's for those statuses."""
    rules = judge(measured)
    said = {str(entry.get("id")): entry for entry in answer.get("items", []) if isinstance(entry, dict)}
    items = []
    for ruled in rules["items"]:
        entry = said.get(ruled["id"], {})
        status = str(entry.get("status", ruled["status"]))
        if ruled["status"] == "untestable" or status not in ("supported", "absent"):
            status = ruled["status"]
        items.append(dict(ruled, status=status, evidence=str(entry.get("evidence") or ruled["evidence"])))
    verdict = verdict_of(items)
    why = str(answer.get("why") or "").strip()
    return {"items": items, "verdict": verdict, "why": why if why and verdict == answer.get("verdict") else
            verdict_words(verdict, items)}


def _boxes(labels: np.ndarray, target_labels: list) -> list:
    from scipy import ndimage

    found = ndimage.find_objects(labels)
    height, width = labels.shape
    out = []
    for label in target_labels:
        rows, cols = found[label - 1]
        grow_r = int(np.ceil((rows.stop - rows.start) * VIEW_GROWTH))
        grow_c = int(np.ceil((cols.stop - cols.start) * VIEW_GROWTH))
        out.append((slice(max(rows.start - grow_r, 0), min(rows.stop + grow_r, height)),
                    slice(max(cols.start - grow_c, 0), min(cols.stop + grow_c, width))))
    return out


def _mean(values: np.ma.MaskedArray, where: np.ndarray):
    picked = np.asarray(values.filled(np.nan), dtype=float)[where]
    picked = picked[~np.isnan(picked)]
    return round(float(picked.mean()), 4) if picked.size else None


def _num(value) -> str:
    return "no data" if value is None else f"{value:.2f}"
