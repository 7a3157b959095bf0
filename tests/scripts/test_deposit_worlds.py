"""Generated worlds, one per deposit model (scripts/deposit_worlds.py): real case folders whose truth follows the
type's signature and not the knowledge base's weights, each answered through the engine with its own model."""
from __future__ import annotations

import copy
import csv
import hashlib
import json
from pathlib import Path

import deposit_worlds
import geopandas as gpd
import numpy as np
import pytest
import rasterio

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.pathfinders import named_elements
from lodestar.plugin.reason.knowledge import load_knowledge, model_by_id
from lodestar.plugin.request.case import read_case
from lodestar.plugin.tools.lithology_words import matched_units

SIZE = 160  # cells a side in tests (300 by default): a run takes a second or two


def _run(folder: Path, out: Path):
    case = read_case(folder)
    result = run_analysis(AnalysisRequest(case.layers, case.question, out, dict(case.choices), case_id=case.id))
    return result, json.loads(Path(result.outputs["record"]).read_text(encoding="utf-8"))


def test_a_world_is_a_real_case_with_the_models_rocks_elements_and_signature(tmp_path):
    model = model_by_id("vms_bimodal_felsic")
    folder = deposit_worlds.make_world(tmp_path / "vms", model, size=SIZE)
    case = read_case(folder)
    with rasterio.open(folder / "geology.tif") as src:
        assert src.crs.is_projected and src.width == src.height == SIZE and src.res == (100.0, 100.0)
        codes = set(np.unique(src.read(1)).tolist())
    with open(folder / "geology_legend.csv", encoding="utf-8") as handle:
        legend = {int(row["value"]): row["name"] for row in csv.DictReader(handle)}
    assert codes <= set(legend)
    hosts = matched_units(legend, model["favourable_units"])
    assert hosts and len(hosts) < len(legend)  # host rocks and others
    assert matched_units(legend, model["source_rocks"])
    names = {spec.name: spec.role for spec in case.layers}
    chemistry = [n for n, role in names.items() if role == "geochemistry"]
    elements = {e for n in chemistry for e in named_elements(n)}
    assert {"cu", "zn", "pb", "ag", "na"} <= elements  # pathfinders and the depleted element
    assert elements - {e.lower() for e in model["pathfinders"] + model["depleted"] + model["commodities"]}
    geophysics = [n for n, role in names.items() if role == "geophysics"]
    assert {"EM conductivity (mS/m)", "Bouguer gravity (mGal)", "IP chargeability (mV/V)"} < set(geophysics)
    assert len(geophysics) == len(model["geophysics"]) + 1  # one property outside the signature
    faults = gpd.read_file(folder / "faults.gpkg", layer="faults")
    deposits = gpd.read_file(folder / "deposits.gpkg", layer="deposits")
    assert len(faults) >= 3 and faults.crs == deposits.crs
    assert len(deposits) == deposit_worlds.DEPOSITS and deposits["blind"].sum() == deposit_worlds.BLIND
    # the truth: deposits on host rock more than the host rock's share of the map, and Cu high at seen deposits
    with rasterio.open(folder / "geology.tif") as src:
        rows, cols = zip(*[src.index(p.x, p.y) for p in deposits.geometry])
        geology = src.read(1)
    on_host = np.isin(geology[rows, cols], list(hosts)).mean()
    assert on_host > 2 * np.isin(geology, list(hosts)).mean()
    with rasterio.open(folder / "Cu_ppm.tif") as src:
        copper = src.read(1)
    seen = ~deposits["blind"].astype(bool).to_numpy()
    at = copper[np.array(rows)[seen], np.array(cols)[seen]]
    assert np.median(at) > 3 * np.median(copper)
    with rasterio.open(folder / "geophysics_conductivity.tif") as src:
        conductivity = src.read(1)
    blind = ~seen  # geophysics sees the blind deposits too
    assert np.median(conductivity[np.array(rows)[blind], np.array(cols)[blind]]) > np.percentile(conductivity, 90)


def test_the_truth_does_not_read_the_models_favourability(tmp_path):
    """The lead's benchmark scores knowledge-driven surfaces on these worlds: a world must not follow the weights or
    reaches a surface is built from."""
    model = model_by_id("porphyry_cu_mo_au")
    other = copy.deepcopy(model)
    other["favourability"] = {"weights": {"geochemistry": 2.0}, "fault_distance_m": {"midpoint": 10, "spread": 9}}
    first = deposit_worlds.make_world(tmp_path / "a", model, size=SIZE)
    second = deposit_worlds.make_world(tmp_path / "b", other, size=SIZE)
    digest = {folder: {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}
              for folder in (first, second)}
    assert digest[first] == digest[second]


@pytest.mark.parametrize("model", load_knowledge(), ids=lambda m: m["id"])
def test_each_models_world_is_answered_with_that_model(model, tmp_path):
    folder = deposit_worlds.make_world(tmp_path / "case", model, size=SIZE)
    result, record = _run(folder, tmp_path / "out")
    assert record["knowledge"][0]["id"] == model["id"]
    assert result.answer in ("A", "B")
