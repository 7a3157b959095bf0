"""The real Murchison gold case folder: a valid lodestar-case/1, its data as the source describes them, and
the acknowledgement its licence asks for."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from lodestar.plugin.raster_io import RasterSet
from lodestar.plugin.request.case import read_case
from lodestar.plugin.vector_io import read_vector

CASE = Path(__file__).resolve().parents[1] / "data" / "murchison-gold"


def test_murchison_case_reads_with_its_deposits_faults_and_greenstone():
    case = read_case(CASE)
    assert case.id == "murchison-gold" and case.answer == "A" and case.positive_choice == "A"
    assert case.question == "Where are orogenic gold deposits likely in the Murchison greenstone belts?"
    geology, faults = case.layers
    assert (geology.role, geology.legend.name, faults.role, faults.is_vector) == (
        "geological_map", "greenstone_legend.csv", "structure", True)
    rs = RasterSet([geology])
    assert rs.crs.to_epsg() == 28350 and (rs.grid.width, rs.grid.height) == (661, 804)
    units = rs.read(geology.name)[0]
    assert sorted(np.unique(units.compressed())) == [1.0, 2.0]
    greenstone_share = float((units == 1).sum()) / units.count()
    assert 0.07 < greenstone_share < 0.11  # "about 9 % of the study rectangle"
    deposits = read_vector(case.deposits, crs=rs.crs)
    assert len(deposits) == 255
    cols, rows = rs.grid.map_to_pixel(deposits.geometry.x.values, deposits.geometry.y.values)
    assert int((units[rows.astype(int), cols.astype(int)] == 1).sum()) == 220
    lines = read_vector(faults.path)
    assert len(lines) == 3252 and set(lines.geom_type) == {"LineString"} and lines.crs.to_epsg() == 28350


def test_murchison_readme_carries_the_acknowledgement_and_licence():
    text = " ".join((CASE / "README.md").read_text(encoding="utf-8").split())
    assert "Watkins and Hickman (1990) and the Geological Survey of Western Australia" in text
    assert "GPL (>= 2)" in text
