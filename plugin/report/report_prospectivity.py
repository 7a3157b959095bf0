"""The report's summary sections on prospectivity: the map, the targets, the evidence weights and the
validation against known deposits, from the record's favourability section and metrics."""
from __future__ import annotations

from ..labels import TIES_NOTE, deposit_count, plural, the, verb, whole_deposits
from ..labels import method_label as labelled
from .report_text import Html, bullets, e, humanize, image, km2, number, percent, table, words

SUMMARY_TARGETS = 10
"""Targets listed in the summary: as many as the map labels with their rank."""
SHOWN_TARGETS = 50
"""Targets listed in the report in all (the summary's, then the rest in the appendix); all are in the
prospectivity layer."""

_PLAN_COLUMNS = ("layer", "role", "transformation", "membership", "weight", "why")
_FIT_HEADERS = {"method": "method", "pattern": "pattern", "area_share": "pattern area",
                "deposits_in_pattern": "deposits in pattern", "w_plus": "W+", "s_w_plus": "s(W+)", "w_minus": "W−",
                "s_w_minus": "s(W−)", "coefficient": "coefficient", "contrast": "contrast C", "s_contrast": "s(C)",
                "studentised_contrast": "studentised C", "basis": "basis", "parameters": "chosen in the folds",
                "importance": "importance (AUC drop)", "lowers_skill": "lowers the skill"}
_PLANNERS = {"offline": "the offline rule-based planner"}
_CAPTURE_KEYS = ("0.02", "0.05", "0.1", "0.2")


def method_label(section: dict) -> str:
    """How the surface was made, in words: 'weighted overlay', 'weights of evidence (full fit)'."""
    method = str(section.get("method") or "")
    if method.startswith("calibrated (") and method.endswith(")"):
        name, _, rest = method[len("calibrated ("):-1].partition(",")
        return f"{labelled(name.strip())}{f' ({rest.strip()})' if rest.strip() else ''}"
    return labelled(method) if method else "-"


def map_title(section: dict) -> str:
    return f"Favourability ({section.get('basis') or 'surface'}): {method_label(section)}"


def file_of(record: dict, key: str) -> str:
    """The name of a run's output as the user finds it: the destination lodestar:analyze wrote it to, else its name
    in the run folder."""
    return str((record.get("output_names") or {}).get(key) or FILE_NAMES[key])


FILE_NAMES = {"favourability": "favourability.tif", "favourability_cv": "favourability_cv.tif",
              "uncertainty": "uncertainty.tif", "prospectivity": "prospectivity.gpkg", "prospects": "prospects.gpkg"}
"""The outputs the report names, by their names in the run folder (run.OUTPUT_FILES)."""


def map_section(record: dict, map_png, note: str) -> str:
    section = record.get("favourability") or {}
    parts = [image(map_png, "favourability map with the ranked targets", css="figure")]
    if map_png:
        cv = (f" The cross-validated (out-of-fold) surface is {file_of(record, 'favourability_cv')}."
              if section.get("basis") == "calibrated" else "")
        parts.append(f'<p class="muted">The map shows {e(file_of(record, "favourability"))}, the surface the targets '
                     f"are drawn from.{e(cv)} Open it in QGIS to threshold it at another share of the area.</p>")
    if note:
        parts.append(f'<p class="muted">{e(humanize(note))}</p>')
    return "".join(parts)


def _targets(record: dict) -> list:
    return sorted((record.get("favourability") or {}).get("targets") or [], key=lambda t: t.get("rank", 0))


def _target_rows(targets: list) -> list:
    return [[t.get("rank"), km2(float(t.get("area_km2") or 0.0) * 1e6), f"{t.get('tier', 0):g} %",
             _density(t), "-" if t.get("known_deps") is None else t.get("known_deps"),
             t.get("prospects") or "-", t.get("verdict") or "-", humanize(t.get("why"))] for t in targets]


def _density(row: dict) -> str:
    """What a target is ranked by: its expected deposits per km2 when calibrated, else its fav_p90."""
    if row.get("exp_deps") is not None:
        return f"{number(row.get('score'), 3)} per km² ({number(row.get('exp_deps'), 2)} expected)"
    return number(row.get("fav_p90"), 2)


_TARGET_HEADER = ["rank", "area", "tier", "ranked by", "known deposits", "prospects", "verdict", "why"]
RANKING_WORDS = {
    True: "by the deposits they are expected to hold per km² (what cells of their rank held out of fold), size only "
          "breaking ties",
    False: "by how high their best tenth rises (the 90th percentile of favourability inside: what their cells hold, "
           "not how large they are), size only breaking ties"}
"""The ranking rule in words, calibrated (True) or knowledge-driven (False): one rule, density first."""


def targets_section(record: dict) -> str:
    """The best SUMMARY_TARGETS targets (those labelled on the map) and the prospects inside them, with where the
    others are."""
    targets = _targets(record)
    if not targets:
        return "<p>No targets were drawn.</p>"
    total = sum(float(t.get("area_km2") or 0.0) for t in targets) * 1e6
    calibrated = any(t.get("exp_deps") is not None for t in targets)
    head = (f"<p>{e(plural(len(targets), 'target'))}, {e(km2(total))} in all, split at their peaks and ranked "
            f"{RANKING_WORDS[calibrated]}; the best are judged by the chain on their own evidence (verdict). Summing "
            "over a target's area instead would rank large targets first and lose what the surface's best cells "
            "hold.</p>")
    more = ""
    if len(targets) > SUMMARY_TARGETS:
        listed = min(len(targets), SHOWN_TARGETS)
        more = (f'<p class="muted">Ranks {SUMMARY_TARGETS + 1}-{listed} are listed in the '
                '<a href="#more-targets">technical appendix</a>'
                + (f"; ranks {SHOWN_TARGETS + 1}-{len(targets)} only " if len(targets) > SHOWN_TARGETS else "; all ")
                + f"in {e(file_of(record, 'prospectivity'))}.</p>")
    return (head + table(_target_rows(targets[:SUMMARY_TARGETS]), _TARGET_HEADER, css="targets") + more
            + prospects_section(record, [t.get("rank") for t in targets[:SUMMARY_TARGETS]]))


PROSPECTS_SHOWN = 5
"""Prospects listed per target in the report (all are in the prospects layer)."""


def prospects_section(record: dict, ranks: list) -> str:
    """The prospects inside the targets of `ranks`, best first in each ('' when they hold none)."""
    prospects = (record.get("favourability") or {}).get("prospects") or []
    by_camp: dict = {}
    for row in sorted(prospects, key=lambda p: (p.get("camp", 0), p.get("rank", 0))):
        by_camp.setdefault(row.get("camp"), []).append(row)
    rows = []
    for rank in ranks:
        inside = by_camp.get(rank) or []
        for row in inside[:PROSPECTS_SHOWN]:
            rows.append([f"{rank}.{row.get('rank')}", km2(float(row.get("area_km2") or 0.0) * 1e6),
                         f"{row.get('tier', 0):g} %", _density(row),
                         "-" if row.get("known_deps") is None else row.get("known_deps"), humanize(row.get("layers"))])
        if len(inside) > PROSPECTS_SHOWN:
            rows.append([f"{rank}.…", f"{len(inside) - PROSPECTS_SHOWN} more", "", "", "", ""])
    if not rows:
        return ""
    return ("<h4>Prospects inside the targets</h4><p>Each target larger than one deposit's footprint holds its "
            "prospects: its own best cells, split at their peaks, none larger than one deposit's footprint, ranked by "
            f"the same rule (target.prospect); all are in {e(file_of(record, 'prospects'))}.</p>"
            + table(rows, ["prospect", "area", "tier", "ranked by", "known deposits", "strongest evidence"],
                    css="prospects"))


def more_targets_section(record: dict) -> str:
    """The targets ranked after the summary's, up to SHOWN_TARGETS ('' when the summary lists them all)."""
    targets = _targets(record)[SUMMARY_TARGETS:SHOWN_TARGETS]
    if not targets:
        return ""
    return table(_target_rows(targets), _TARGET_HEADER, css="more-targets")


def weights_section(record: dict, models_png=None) -> str:
    section = record.get("favourability") or {}
    rows = section.get("weights") or []
    basis = section.get("basis") or "-"
    source = section.get("source") or "-"
    parts = [f"<p><b>Basis:</b> {e(basis)}{e(_basis_note(basis))} &middot; <b>Evidence plan chosen by:</b> "
             f"{e(_PLANNERS.get(source, source))} &middot; <b>Combined by:</b> {e(method_label(section))}</p>"]
    if rows:
        parts.append(table([[r.get("layer"), words(r.get("role")), humanize(r.get("transformation")),
                             humanize(r.get("membership")), number(r.get("weight"), 3), humanize(r.get("why"))]
                            for r in rows], list(_PLAN_COLUMNS), css="weights"))
    else:
        parts.append("<p>No layer could be turned into evidence, so there is no surface.</p>")
    fit_columns = [k for k in _extra_columns(rows) if any(r.get(k) is not None for r in rows)]
    if fit_columns:
        parts.append(_calibration(section, rows, fit_columns, models_png, file_of(record, "uncertainty")))
    parts.append("<h3>Layers left out of the surface</h3>")
    parts.append(_reasons(section.get("left_out"), "Every layer given is in the surface."))
    parts.append("<h3>Layers used nowhere</h3>")
    parts.append(_reasons(section.get("unused"), "Every layer given feeds the surface or a step of the chain."))
    return "".join(parts)


def _calibration(section: dict, rows: list, columns: list, models_png=None, uncertainty: str = "uncertainty.tif"
                 ) -> str:
    """The fitted weights: columns whose value is the same on every row are said once above the table."""
    calibration = section.get("calibration") or {}
    common = [k for k in columns if len(rows) > 1 and len({str(r.get(k)) for r in rows}) == 1]
    shown = [k for k in columns if k not in common]
    common = [k for k in common if k != "method"]  # the heading names it
    said = "; ".join(f"{_FIT_HEADERS.get(k, words(k))}: {_fit_value(k, rows[0].get(k))}" for k in common)
    basis = str(calibration.get("basis") or "")
    return (f"<h3>Calibration: {e(labelled(calibration.get('method')))}</h3>"
            + (f"<p>{e(basis[:1].upper() + basis[1:])}.</p>" if basis else "")
            + (f"<p><b>{e(calibration['refused'])}</b></p>" if calibration.get("refused") else "")
            + _comparison(calibration)
            + (f"<p>{e(said[:1].upper() + said[1:])}.</p>" if said else "")
            + table([[r.get("layer")] + [_fit_value(k, r.get(k)) for k in shown] for r in rows],
                    ["layer"] + [_FIT_HEADERS.get(k, words(k)) for k in shown], css="fit")
            + _responses(calibration)
            + image(models_png, "the fitted model's response per layer and its uncertainty map", css="figure")
            + (f"<p>Uncertainty ({e(uncertainty)}): {e(calibration['uncertainty'])}.</p>"
               if calibration.get("uncertainty") else "")
            + bullets(calibration.get("log") or []))


def _comparison(calibration: dict) -> str:
    """Every surface scored on the same cells: the models out of fold beside those that used no deposit data."""
    rows = calibration.get("comparison") or []
    if not rows:
        return ""
    out = []
    for r in rows:
        pa = r.get("pa_crossing") or {}
        crossing = (f"{percent(pa['deposit_share'], 3)} of deposits in {percent(pa['area_share'], 3)} of the area"
                    if pa else "-")
        auc = f"{r['auc']:.3f}" if r.get("auc") is not None else "-"
        out.append([r.get("surface"), r.get("basis"), auc]
                   + [deposit_count((r.get("capture") or {}).get(k)) for k in _CAPTURE_KEYS] + [crossing])
    return ("<p>Compared on the same cells (deposits captured in the top 2 / 5 / 10 / 20 % of the area; the "
            "prediction-area crossing):</p>"
            + table(out, ["surface", "deposit data", "AUC", "2 %", "5 %", "10 %", "20 %", "prediction-area crossing"],
                    css="comparison")
            + (f"<p>{e(calibration['why'])}</p>" if calibration.get("why") else ""))


def _responses(calibration: dict) -> str:
    """Each layer's response: the fitted favourability (0-1) at levels of its value, or per unit."""
    responses = calibration.get("responses") or {}
    rows = []
    for layer, curve in responses.items():
        if not curve:
            continue
        levels = [f"{c['unit'] if 'unit' in c else number(c.get('value'), 3)}: {number(c.get('favourability'), 2)}"
                  for c in curve]
        rows.append([layer, "; ".join(levels)])
    if not rows:
        return ""
    return ("<p>Response of the full fit: its mean favourability with the layer set to each level (quantiles of its "
            "values, or its largest units), the other layers as they are.</p>"
            + table(rows, ["layer", "favourability by level"], css="responses"))


def _basis_note(basis: str) -> str:
    return {"knowledge-driven": " (weights from the deposit model; no deposit data used)",
            "calibrated": " (fitted on the known deposits with spatial block cross-validation)"}.get(basis, "")


def _extra_columns(rows: list) -> list:
    columns: list = []
    for row in rows:
        columns += [k for k in row if k not in _PLAN_COLUMNS and k not in columns]
    return columns


def _fit_value(key: str, value) -> str:
    if value is None:
        return "-"
    if key == "area_share":
        return percent(value, 3)
    return number(value, 3) if isinstance(value, (int, float)) else humanize(value)


def _reasons(rows, empty: str) -> str:
    if not rows:
        return f"<p>{e(empty)}</p>"
    return table([[r.get("layer"), humanize(r.get("reason"))] for r in rows], ["layer", "reason"])


def validation_rows(record: dict) -> list:
    """The surfaces and the targets scored against known deposits, cross-validated first: dicts with key,
    name, basis, auc, capture ({"0.02": n, ...}), inside and points [(area share, deposit share), ...]."""
    section = record.get("favourability") or {}
    validation = section.get("validation") or {}
    calibrated = section.get("basis") == "calibrated"  # the targets come from the full fit (not refused)
    names = {"cv": f"calibrated surface, cross-validated ({file_of(record, 'favourability_cv')})",
             "knowledge": "knowledge-driven surface" + ("" if calibrated else f" ({file_of(record, 'favourability')})"),
             "equal_weight": "equal-weight mean of the layers' ranks (the baseline to beat)",
             "fitted": f"calibrated surface, full fit ({file_of(record, 'favourability')})"}
    rows = []
    for key in ("cv", "knowledge", "equal_weight", "fitted"):
        if key in validation:
            v = validation[key]
            rows.append({"key": key, "name": names[key], "basis": v.get("basis", ""), "auc": v.get("auc"),
                         "capture": v.get("capture") or {}, "inside": v.get("deposits"),
                         "points": [(c["area_share"], c["deposit_share"]) for c in v.get("curve") or []]})
    metrics = record.get("metrics") or {}
    if metrics.get("curve") and section.get("targets"):
        basis = ("drawn from the full fit: fitted on these deposits, not a skill figure" if calibrated
                 else "drawn from the knowledge-driven surface: no deposit data used")
        rows.append({"key": "targets", "name": f"targets ({len(section['targets'])} polygons, by rank)",
                     "basis": basis, "auc": metrics.get("auc"), "capture": metrics.get("capture") or {},
                     "inside": metrics.get("inside"),
                     "points": [(c["area_share"], c["deposit_share"]) for c in metrics["curve"]]})
    return rows


def fitted(row: dict) -> bool:
    """Whether a validation row scores something fitted on the deposits it is scored against."""
    return "not a skill figure" in str(row.get("basis", ""))


def validation_section(rows: list, record: dict, curves_png) -> str:
    metrics = record.get("metrics") or {}
    inside, outside = metrics.get("inside", rows[0].get("inside")), metrics.get("outside")
    where = f" ({outside} outside it, not counted)" if outside else ""
    caution = ("Quote the cross-validated figures as skill; a row fitted on these deposits is not."
               if any(fitted(row) for row in rows) else "No figure here was fitted on these deposits.")
    lie = "lies" if inside == 1 else "lie"
    parts = [f"<p>{e(plural(inside, 'known deposit'))} {lie} in the analysed area{e(where)}. Capture: the deposits "
             f"within the most favourable 2, 5, 10 and 20 % of the area; AUC 0.5 is chance. {caution} {TIES_NOTE}</p>"]
    body, css = [], []
    for row in rows:
        basis = Html(f"<b>{e(row['basis'])}</b>") if fitted(row) else row["basis"]
        body.append([row["name"], basis] + [_capture(row["capture"].get(k), row["inside"]) for k in _CAPTURE_KEYS]
                    + [auc_text(row["auc"], 3)])
        css.append("fitted" if fitted(row) else "")
    parts.append(table(body, ["surface", "basis", "2 %", "5 %", "10 %", "20 %", "AUC"], css="validation",
                       row_css=css))
    equal = metrics.get("equal_area")
    if equal:
        parts.append(f"<p>{the(equal['rank'], 'best target').capitalize()} {verb(equal['rank'], 'cover')} "
                     f"{percent(equal['area_share'], 3)} of the area and {verb(equal['rank'], 'hold')} "
                     f"{plural(equal['targets'], 'known deposit')}; the surface's own best cells of the same area "
                     f"hold {deposit_count(equal['surface'])}: splitting and ranking the targets "
                     f"{'lose nothing' if equal['targets'] >= equal['surface'] else 'lose deposits'} against the "
                     "surface.</p>")
    parts.append(image(curves_png, "success-rate curves", css="figure"))
    return "".join(parts)


def auc_text(auc, decimals: int) -> str:
    return "-" if auc is None else f"{float(auc):.{decimals}f}"


def _capture(value, inside) -> str:
    if value is None:
        return "-"
    share = f" ({percent(whole_deposits(value) / inside, 2)})" if inside else ""
    return f"{deposit_count(value)}{share}"
