"""The HTML report as a geologist reads it: the favourability map (a 900 px PNG beside the report and embedded
in it), the weights table, validation rows labelled by basis, the ranked targets in km², the third outcome's
banner, and no raw identifiers, exponent numbers or JSON."""
from __future__ import annotations

import base64
import html
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import rasterio
from affine import Affine
from PIL import Image

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.labels import plural, zone_label
from lodestar.plugin.map.target_sizes import WORK_LIST
from lodestar.plugin.raster_io import LayerSpec
from lodestar.plugin.reason.contract import INSUFFICIENT
from lodestar.plugin.report.report import FIGURES, render_report, write_figures
from lodestar.plugin.report.report_map import LABELLED, NODATA_COLOUR, WIDTH_PX
from lodestar.plugin.report.report_prospectivity import SHOWN_TARGETS, SUMMARY_TARGETS
from lodestar.plugin.report.report_text import humanize, km2, number, percent
from lodestar.plugin.request.case import read_case

ROOT = Path(__file__).resolve().parents[3]
GREAT_BASIN = ROOT / "tests" / "data" / "great-basin-gold"
CARBONATES = {"geology (DDS-41 lithotectonic units)": ["LPZE", "UPZC", "LPZ"]}


# ---------------------------------------------------------------------------------------------------- helpers
def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()


def _rows(page: str, css: str) -> list:
    """(row class, [cell texts]) of the data rows of the first table with class `css`."""
    body = re.search(rf'<table class="{css}">(.*?)</table>', page, re.S)
    assert body, f"no table of class {css}"
    rows = re.findall(r'<tr(?: class="([^"]*)")?>(.*?)</tr>', body.group(1), re.S)
    return [(klass, [_text(c) for c in re.findall(r"<td>(.*?)</td>", cells, re.S)]) for klass, cells in rows[1:]]


def _read(result) -> tuple[str, dict]:
    page = result.outputs["report"].read_text(encoding="utf-8")
    record = json.loads(result.outputs["record"].read_text(encoding="utf-8"))
    return page, record


def _embedded(page: str, path: Path) -> bool:
    return base64.b64encode(path.read_bytes()).decode("ascii") in page


def _plain(page: str, record: dict) -> None:
    """No raw role or evidence identifiers, exponent numbers, m² areas or JSON settings in what a reader sees."""
    seen = _text(re.sub(r'src="data:[^"]+"', "", re.sub(r"<style>.*?</style>", "", page, flags=re.S)))
    evidence = {t for k in record["knowledge"] for t in k["testable"]}
    assert evidence
    for raw in ("hydrothermal_alteration", "geological_map", "false_color_composite", "area_m2", "<pre>", *evidence):
        assert raw not in seen, raw
    assert not re.search(r"\d[eE][+-]\d", seen)
    assert '"temperature"' not in page and "{" not in seen


SAMPLE = ROOT / "resources" / "sample" / "porphyry-demo" / "case.json"


# ---------------------------------------------------------------------------------------------------- text
def test_numbers_and_areas_read_as_a_person_writes_them():
    assert km2(6.245e6) == "6.25 km²" and km2(1e6) == "1 km²" and km2(3_470_562_500.0) == "3,471 km²"
    assert km2(62_500.0) == "0.0625 km²" and km2(None) == "-"
    assert number(1.87959) == "1.88" and number(-0.495235) == "-0.495" and number(0) == "0" and number(None) == "-"
    assert number(14.410394) == "14.4" and number(25.0) == "25" and percent(0.12348) == "12 %"
    assert humanize("needs a layer with role hydrothermal_alteration or false_color_composite") == \
        "needs a layer with role hydrothermal alteration or false-colour composite"
    assert humanize("over 1.23e+03 km2; as_rcl stays") == "over 1,230 km2; as_rcl stays"


# ------------------------------------------------------------------------------------ Great Basin, calibrated
@pytest.fixture(scope="module")
def great_basin(tmp_path_factory):
    case = read_case(GREAT_BASIN)
    result = run_analysis(AnalysisRequest(case.layers, case.question, tmp_path_factory.mktemp("gb"),
                                          dict(case.choices), case_id=case.id, deposits=case.deposits,
                                          favourable_units=CARBONATES, calibrate="wofe"))
    return result, *_read(result)


def test_the_report_holds_the_favourability_map(great_basin):
    result, page, record = great_basin
    folder = result.outputs["report"].parent
    png = folder / FIGURES["map"]
    image = Image.open(png)
    assert image.format == "PNG" and image.width == WIDTH_PX and 700 < image.height < 1100
    assert _embedded(page, png) and 'alt="favourability map with the ranked targets"' in page
    # the surface is drawn with its colour map, nodata in grey, targets outlined in red
    pixels = np.asarray(image.convert("RGB")).reshape(-1, 3)
    grey = tuple(int(NODATA_COLOUR[i:i + 2], 16) for i in (1, 3, 5))
    assert (pixels == grey).all(axis=1).sum() > 10_000
    assert ((pixels[:, 0] > 200) & (pixels[:, 1] < 60) & (pixels[:, 2] < 90)).sum() > 500
    assert "Favourability (calibrated): weights of evidence (full fit)" not in page  # the title is in the image
    assert "favourability_cv.tif" in page


def test_weights_table_has_every_evidence_layer_and_the_fit(great_basin):
    result, page, record = great_basin
    section = record["favourability"]
    plan = _rows(page, "weights")
    assert [cells[0] for _, cells in plan] == [w["layer"] for w in section["weights"]]
    geology = dict(zip(["layer", "role", "transformation", "membership", "weight", "why"], plan[0][1]))
    assert geology["role"] == "geological map" and "LPZE" in geology["transformation"]
    assert geology["weight"] == number(section["weights"][0]["weight"])
    fit = _rows(page, "fit")
    assert [cells[0] for _, cells in fit] == [w["layer"] for w in section["weights"]]
    header = re.search(r'<table class="fit"><tr>(.*?)</tr>', page).group(1)
    assert ["W+", "s(W+)", "W−", "s(W−)"] == [_text(h) for h in re.findall(r"<th>(.*?)</th>", header)][4:8]
    assert fit[0][1][4] == number(section["weights"][0]["w_plus"])
    wofe = section["calibration"]["wofe"]  # the weights-of-evidence table the dock shows beside the importances
    assert [row["layer"] for row in wofe] == [r["layer"] for r in section["weights"] if "w_plus" in r or
                                              r.get("method") == "weights of evidence"]
    assert wofe[0]["w_plus"] == section["weights"][0]["w_plus"] and "classes" not in wofe[0]
    # weights of evidence does not beat the better of the surfaces made without deposits (the knowledge-driven one
    # here) out of fold: refused
    calibration = section["calibration"]
    fitted, knowledge, plain = calibration["comparison"]
    assert plain["surface"] == "equal-weight mean of the layers' ranks"
    assert knowledge["surface"] == "knowledge-driven surface" and fitted["auc"] <= knowledge["auc"]
    assert f"does not beat the knowledge-driven surface ({knowledge['auc']:.3f})" in calibration["refused"]
    assert "Basis:</b> knowledge-driven" in page and "the offline rule-based planner" in page
    assert html.escape(calibration["refused"]) in page and "does not beat" in calibration["refused"]
    models = result.outputs["report"].parent / FIGURES["models"]  # responses and the uncertainty map, drawn
    assert Image.open(models).width == 900 and _embedded(page, models)
    assert [r["layer"] for r in section["weights"]] == list(calibration["responses"])
    compared = _rows(page, "comparison")
    assert [cells[0] for _, cells in compared] == [row["surface"] for row in calibration["comparison"]]
    assert [cells[2] for _, cells in compared] == [f"{row['auc']:.3f}" for row in calibration["comparison"]]
    left_out = section["left_out"]
    assert left_out and f"<td>{html.escape(left_out[0]['layer'])}</td>" in page


def test_validation_rows_are_labelled_by_basis_cross_validated_first(great_basin):
    result, page, record = great_basin
    validation = record["favourability"]["validation"]
    rows = _rows(page, "validation")
    names = [cells[0] for _, cells in rows]
    assert names[0].startswith("calibrated surface, cross-validated") and names[1].startswith("knowledge-driven")
    assert names[2].startswith("equal-weight mean of the layers' ranks") and rows[2][1][1] == \
        validation["equal_weight"]["basis"]
    assert names[3].startswith("targets") and "fitted" not in validation  # the fit was refused for the targets
    assert rows[0][1][1] == validation["cv"]["basis"] and rows[0][0] == ""
    assert rows[3][1][1] == "drawn from the knowledge-driven surface: no deposit data used"
    inside = validation["cv"]["deposits"]
    cv = validation["cv"]["capture"]
    assert rows[0][1][2:6] == [f"{number(cv[k])} ({percent(cv[k] / inside)})" for k in ("0.02", "0.05", "0.1", "0.2")]
    assert rows[0][1][6] == f"{validation['cv']['auc']:.3f}"
    curves = result.outputs["report"].parent / FIGURES["curves"]
    assert Image.open(curves).width == 900 and _embedded(page, curves)


def test_targets_are_listed_by_rank_in_km2(great_basin):
    result, page, record = great_basin
    targets = sorted(record["favourability"]["targets"], key=lambda t: t["rank"])
    rows = _rows(page, "targets")  # the summary: as many as the map labels
    assert [int(cells[0]) for _, cells in rows] == list(range(1, min(LABELLED, len(targets)) + 1))
    more = _rows(page, "more-targets")  # the appendix: the next ones
    assert [int(cells[0]) for _, cells in more] == list(range(LABELLED + 1, min(SHOWN_TARGETS, len(targets)) + 1))
    rows += more
    assert [cells[1] for _, cells in rows] == [km2(t["area_km2"] * 1e6) for t in targets[:len(rows)]]
    assert all(re.fullmatch(r"[\d,]+(\.\d+)? km²", cells[1]) for _, cells in rows)
    assert len(targets) == WORK_LIST < SHOWN_TARGETS  # the work list is drawn; the rest stays in the surface
    assert (f"Ranks {LABELLED + 1}-{len(targets)} are listed in the <a href=\"#more-targets\">technical appendix</a>; "
            "all in prospectivity.gpkg.") in page
    assert "<h4>Prospects inside the targets</h4>" in page and "all are in prospects.gpkg" in page
    prospects = _rows(page, "prospects")
    assert prospects and all(re.fullmatch(r"\d+\.(\d+|…)", cells[0]) for _, cells in prospects)
    _plain(page, record)


# ------------------------------------------------------------------------------- synthetic, knowledge-driven
def test_synthetic_case_knowledge_driven_report(tmp_path):
    sys.path.insert(0, str(ROOT / "scripts"))
    import synthetic_cases

    case = read_case(synthetic_cases.make_case(tmp_path / "case", 11, "porphyry", size=90, mixed_crs=False))
    result = run_analysis(AnalysisRequest(case.layers, case.question, tmp_path / "out", dict(case.choices),
                                          case_id=case.id, deposits=case.deposits))
    page, record = _read(result)
    assert Image.open(result.outputs["report"].parent / FIGURES["map"]).width == WIDTH_PX
    assert {cells[0] for _, cells in _rows(page, "weights")} == {w["layer"] for w in record["favourability"]["weights"]}
    rows = _rows(page, "validation")
    assert [cells[1] for _, cells in rows][0] == "knowledge-driven: no deposit data used"
    assert not any(klass == "fitted" for klass, _ in rows)  # nothing was fitted on the deposits
    assert 'class="fit"' not in page
    assert "<h3>Back-end settings</h3>" in page and "<td>temperature</td><td>0.05</td>" in page
    assert "<td>timeout (s)</td><td>60</td>" in page
    assert "No model was called" in page
    _plain(page, record)


# ------------------------------------------------------------------------------------- insufficient evidence
def test_insufficient_evidence_banner_names_the_missing_role(tmp_path):
    rows, cols = np.mgrid[0:60, 0:60]
    value = 1.0 + 0.3 * np.exp(-((cols - 30) ** 2 + (rows - 30) ** 2) / 72.0)
    profile = dict(driver="GTiff", width=60, height=60, count=1, dtype="float32", crs="EPSG:32612",
                   transform=Affine(30, 0, 500000, 0, -30, 4000000), nodata=-9999)
    with rasterio.open(tmp_path / "silica.tif", "w", **profile) as ds:
        ds.write(value.astype("float32"), 1)
    result = run_analysis(AnalysisRequest([LayerSpec(tmp_path / "silica.tif", "silicification", "silica")],
                                          "Can porphyry copper deposits be detected? A. Yes B. No", tmp_path / "out"))
    page, record = _read(result)
    assert result.answer == INSUFFICIENT
    banner = re.search(r'<div class="answer insufficient">(.*?)</div>', page).group(1)
    assert _text(banner) == ("Answer: Insufficient evidence: no layer of hydrothermal alteration or argillic "
                             "alteration")
    assert 'class="answer valid"' not in page and "needs a hydrothermal alteration or argillic alteration layer" in page
    assert Image.open(result.outputs["report"].parent / FIGURES["map"]).width == WIDTH_PX
    assert "Validation against known deposits" not in page  # no deposits were given
    _plain(page, record)


def test_a_record_without_a_surface_says_so_and_shows_the_evidence_map(tmp_path):
    evidence_map = tmp_path / "map.png"
    Image.new("RGB", (40, 30), (10, 20, 30)).save(evidence_map)
    record = {"question": "Where?", "choices": {"A": "Yes", "B": "No"}, "result": {"answer": "A", "valid": True},
              "favourability": {"basis": "knowledge-driven", "weights": [], "targets": []}}
    figures = write_figures(record, tmp_path)
    assert "map" not in figures and "No favourability surface was written" in figures["note"]
    page = render_report(record, tmp_path, evidence_map, figures)
    assert _embedded(page, evidence_map) and "No favourability surface was written" in page
    assert "No layer could be turned into evidence" in page and "No targets were drawn" in page


# ------------------------------------------------------------------- the sample case, as sent to a colleague
@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    case = read_case(SAMPLE)
    out = tmp_path_factory.mktemp("sample") / "out"
    result = run_analysis(AnalysisRequest(case.layers, case.question, out, dict(case.choices), case_id=case.id,
                                          deposits=case.deposits))
    page, record = _read(result)
    return result, page, record


def _part(page: str, name: str) -> str:
    found = re.search(rf'<section id="{name}">(.*?)</section>', page, re.S)
    assert found, name
    return found.group(1)


def test_the_report_reads_summary_then_reasoning_then_appendix(sample):
    result, page, record = sample
    assert SUMMARY_TARGETS == LABELLED  # the summary lists the targets the map labels
    assert [m.group(1) for m in re.finditer(r'<section id="(\w+)">', page)] == ["summary", "reasoning", "appendix"]
    assert re.search(r'<nav class="contents">.*href="#summary".*href="#reasoning".*href="#appendix"', page)
    summary, reasoning, appendix = (_part(page, n) for n in ("summary", "reasoning", "appendix"))
    # the summary: the answer, the map (the 900 px figure with ranked targets), the targets, weights, validation
    heads = [_text(h) for h in re.findall(r"<h2[^>]*>(.*?)</h2>", summary)]
    assert heads == ["Summary", "Prospectivity map", "Evidence weights", "Validation against known deposits"]
    assert summary.index('class="answer valid"') < summary.index('alt="favourability map with the ranked targets"')
    assert _text(re.search(r'<div class="answer valid">(.*?)</div>', summary).group(1)) == "Answer: A. Yes"
    assert _embedded(summary, result.outputs["report"].parent / FIGURES["map"])
    assert Image.open(result.outputs["report"].parent / FIGURES["map"]).width == WIDTH_PX == 900
    targets = sorted(record["favourability"]["targets"], key=lambda t: t["rank"])
    assert [cells[0] for _, cells in _rows(summary, "targets")] == [str(t["rank"]) for t in targets[:LABELLED]]
    assert [cells[1] for _, cells in _rows(summary, "targets")] == [km2(t["area_km2"] * 1e6)
                                                                    for t in targets[:LABELLED]]
    # a card for each judged target: its verdict, the picture of its evidence layers, a status per item
    judged = record["favourability"]["judgements"]
    cards = re.findall(r'<div class="target-card">(.*?)</div>', summary, flags=re.S)
    assert len(cards) == len(judged) == min(10, len(targets)) >= 1
    assert [re.search(r"<h4>Target (\d+): (\w+)</h4>", c).groups() for c in cards] == [
        (str(j["rank"]), j["verdict"]) for j in sorted(judged, key=lambda j: j["rank"])]
    assert all('src="data:image/png;base64,' in c for c in cards)
    first = sorted(judged, key=lambda j: j["rank"])[0]
    assert cards[0].count("<tr") == len(first["items"]) + 1
    weights = record["favourability"]["weights"]
    assert [cells[0] for _, cells in _rows(summary, "weights")] == [w["layer"] for w in weights]
    validation = _rows(summary, "validation")
    knowledge = record["favourability"]["validation"]["knowledge"]
    assert validation[0][1][0] == "knowledge-driven surface (favourability.tif)"
    assert validation[0][1][6] == f"{knowledge['auc']:.3f}" and validation[2][1][0].startswith("targets (")
    plain = record["favourability"]["validation"]["equal_weight"]  # the baseline, beside every surface
    assert validation[1][1][0].startswith("equal-weight mean") and validation[1][1][6] == f"{plain['auc']:.3f}"
    # the reasoning: deposit model, verification, the chain with its steps in words
    heads = [_text(h) for h in re.findall(r"<h2[^>]*>(.*?)</h2>", reasoning)]
    assert heads == ["Reasoning", "Deposit model", "Verification", "Reasoning chain"]
    assert reasoning.count('<div class="step">') == len(record["chain"])
    tools = [html.unescape(t) for t in re.findall(r"<tr><td>tool</td><td>(.*?)</td>", reasoning)]
    assert tools[0] == "colour / anomaly regions" and "spatial relations" in tools and "color_regions" not in tools
    assert len(tools) == len(record["chain"]) and "<td>all layers (the zones of every step so far)</td>" in reasoning
    assert "Porphyry Cu-Mo-Au" in reasoning
    # every verdict names the place it weighed and how it was found, and the verification says them in words
    verdicts = [r["verdict"] for r in record["rounds"] if r.get("verdict")]
    assert verdicts and all(v["route"] == "zone core" and v["place"] for v in verdicts)
    said = [_text(p) for p in re.findall(r"<p><b>Place weighed:</b>(.*?)</p>", reasoning)]
    assert len(said) == len(verdicts) and all("(found as: zone core)" in p for p in said)
    zone = re.match(r"s\d+:.*?:\d+", verdicts[-1]["place"]).group(0)
    assert said[-1].startswith(zone_label(zone)) and zone_label(zone).startswith("zone ")  # in words, not its id
    assert not re.search(r"\bs\d+:", said[-1])
    assert reasoning.count("Supports the answer: ") == len(record["chain"])
    assert reasoning.count("the chain can conclude here") == sum(
        n["observation"]["global_inference"] == "end" for n in record["chain"]) >= 1
    # the appendix: key / value tables, the deposit model named, no JSON
    assert "<h3>Localization</h3>" in appendix and "<h3>Inputs</h3>" in appendix and "<h3>Model use</h3>" in appendix
    assert "came from the offline rule-based planner (over the Porphyry Cu-Mo-Au deposit model)." in appendix
    assert "<td>degree centrality weight</td><td>1.5</td>" in appendix
    assert "<td>temperature</td><td>0.05</td>" in appendix
    if len(targets) > LABELLED:  # the sample: its specks no longer targets, it may draw fewer than the map labels
        assert [cells[0] for _, cells in _rows(appendix, "more-targets")] == [
            str(t["rank"]) for t in targets[LABELLED:SHOWN_TARGETS]]
    else:
        assert 'class="more-targets"' not in appendix and len(targets) >= 1
    assert "No model was called" in appendix
    # internal scores and flags: in the appendix only, never in the main text
    for internal in ("retrieval score", "sub-inference", "global inference", ", gap "):
        assert internal not in _text(summary + reasoning), internal
    assert "<th>retrieval score</th>" in appendix and f"<td>{record['knowledge'][0]['name']}</td>" in appendix
    flags = _rows(appendix, "flags")
    assert [cells[:3] for _, cells in flags] == [
        [str(n["step"]["index"]), n["observation"]["sub_inference"], n["observation"]["global_inference"]]
        for n in record["chain"]]
    _plain(page, record)


def test_capture_counts_are_whole_deposits_with_ties_explained_once():
    """Murchison's 2 % capture was '74.5 (29 %)': a deposit on tied cells straddling the cut-off counts by the share
    of those cells above it. The report shows whole deposits and says why once, above the table."""
    from lodestar.plugin.labels import TIES_NOTE
    from lodestar.plugin.report.report_prospectivity import validation_rows, validation_section

    scores = {"basis": "knowledge-driven: no deposit data used", "auc": 0.934, "deposits": 255, "curve": [],
              "capture": {"0.02": 74.5, "0.05": 135.0, "0.1": 206.2, "0.2": 240.5}}
    record = {"favourability": {"basis": "knowledge-driven", "validation": {"knowledge": scores,
                                                                             "equal_weight": dict(scores, auc=0.937)}},
              "metrics": {"inside": 255}}
    page = validation_section(validation_rows(record), record, None)
    assert [cells[2:6] for _, cells in _rows(page, "validation")] == [
        ["75 (29 %)", "135 (53 %)", "206 (81 %)", "241 (95 %)"]] * 2
    assert page.count(TIES_NOTE) == 1 and "expected values" not in page


def test_a_where_question_gets_the_ranked_targets_for_its_answer(great_basin):
    result, page, record = great_basin
    targets = result.prospectivity.sort_values("rank")
    assert result.answer_text == record["result"]["where"]
    assert result.answer_text.startswith(f"{plural(len(targets), 'target')} over {targets['area_km2'].sum():,.1f} km2")
    assert "1. " in result.answer_text and "10. " in result.answer_text and "11. " not in result.answer_text
    assert targets["area_km2"].max() <= 100.0  # the Carlin-type footprint caps every target


def test_an_ensembles_weights_of_evidence_member_gives_the_table():
    from types import SimpleNamespace

    from lodestar.plugin.map.prospectivity import wofe_rows

    row = {"layer": "arsenic", "pattern": ">= 4", "w_plus": 1.2, "w_minus": -0.4, "contrast": 1.6,
           "studentised_contrast": 4.1, "classes": [{"unit": "a"}]}
    member = SimpleNamespace(method="wofe", rows=lambda: [row])
    ensemble = SimpleNamespace(method="ensemble", members=[SimpleNamespace(method="logistic"), member])
    assert wofe_rows(ensemble) == [{k: v for k, v in row.items() if k != "classes"}]
    assert wofe_rows(SimpleNamespace(method="logistic")) == []
