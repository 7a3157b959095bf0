"""The targets' fields as a GIS keeps them: written to Shapefile and GeoPackage and read back."""
from __future__ import annotations

import csv

import fiona
import pytest

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.judge.target_table import TARGET_COLUMNS
from lodestar.plugin.request.case import read_case
from lodestar.plugin.vector_io import read_vector, shapefile_note, write_vector
from lodestar.tests.fakes.sta_cot_scripts import copy_sample


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    case = read_case(copy_sample(tmp_path_factory.mktemp("case")))
    out = tmp_path_factory.mktemp("run")
    return run_analysis(AnalysisRequest(case.layers, case.question, out, dict(case.choices), case_id=case.id,
                                        deposits=case.deposits))


@pytest.mark.parametrize("suffix", [".shp", ".gpkg"])
def test_target_fields_read_back(result, tmp_path, suffix):
    targets = result.prospectivity
    assert len(targets) >= 1 and all(len(name) <= 10 for name in TARGET_COLUMNS)  # Shapefile-safe names
    write_vector(targets, tmp_path / f"targets{suffix}")
    back = read_vector(tmp_path / f"targets{suffix}")
    with fiona.open(tmp_path / f"targets{suffix}") as layer:  # numbers stored as numbers, even when none is known
        fields = {name: kind.split(":")[0] for name, kind in layer.schema["properties"].items()}
    assert all(fields[name] == "float" for name in ("tier", "area_km2", "fav_p90", "uncertain", "exp_deps", "score"))
    assert fields["rank"] == fields["known_deps"] == "int" and fields["why"] == "str"
    assert [c for c in back.columns if c != "geometry"] == list(TARGET_COLUMNS)
    first, original = back.sort_values("rank").iloc[0], targets.sort_values("rank").iloc[0]
    assert int(first["rank"]) == 1 and first["tier"] in (2.0, 5.0, 10.0)
    assert first["area_km2"] == pytest.approx(original["area_km2"]) and first["area_km2"] > 0
    assert first["centroid_x"] == pytest.approx(original["centroid_x"])
    assert first["lon"] == pytest.approx(original["lon"]) and -180 <= first["lon"] <= 180
    assert first["fav_p90"] >= first["fav_mean"] - 1e-9 or first["fav_p90"] == pytest.approx(first["fav_mean"])
    assert int(first["known_deps"]) == int(original["known_deps"])
    assert first["verdict"] in ("strong", "moderate", "weak", "unsupported")
    assert first["layers"] and first["why"] and "s1:" not in first["why"] and "graph" not in first["why"]
    assert int(back["known_deps"].sum()) == int(targets["known_deps"].sum())


def test_a_shapefile_keeps_a_long_reason_whole_beside_it_and_says_so(result, tmp_path):
    """A Shapefile field holds 254 bytes: GDAL cut `why` where it fell, without a word; now it is cut at a word and
    every field is written whole in a CSV beside it, and the export says so."""
    targets = result.prospectivity.copy()
    whole = "held out of fold " * 30 + "the end é."  # over 254 bytes, one character of two bytes
    targets.loc[targets.index[0], "why"] = whole
    path = tmp_path / "targets.shp"
    assert "why is cut at a word there (ending in '…'), and every field is written whole in targets_fields.csv" \
        in shapefile_note(targets, path)
    write_vector(targets, path)
    back = read_vector(path).sort_values("rank")
    cut = back.iloc[0]["why"]
    assert cut.endswith("…") and whole.startswith(cut[:-1]) and len(cut.encode()) <= 254 and cut[-2] != " "
    with open(tmp_path / "targets_fields.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [row["why"] for row in rows][0] == whole and len(rows) == len(targets)
    assert float(rows[0]["area_km2"]) == pytest.approx(targets.iloc[0]["area_km2"])
    assert shapefile_note(result.prospectivity, tmp_path / "t.gpkg") == ""
