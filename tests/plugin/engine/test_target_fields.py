"""The targets' fields as a GIS keeps them: written to Shapefile and GeoPackage and read back."""
from __future__ import annotations

import warnings

import pytest

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.engine.target_table import TARGET_COLUMNS
from lodestar.plugin.runs.case import read_case
from lodestar.plugin.vector_io import read_vector, write_vector
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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a Shapefile cuts text over 254 characters, and says so
        write_vector(targets, tmp_path / f"targets{suffix}")
    back = read_vector(tmp_path / f"targets{suffix}")
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
