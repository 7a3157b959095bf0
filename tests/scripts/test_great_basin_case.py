"""The real Great Basin gold case folder: valid case, 32 deposits inside the study area, and
rebuildable from the shared source data."""
from __future__ import annotations

from pathlib import Path

import make_great_basin_case
import numpy as np
import pytest

from lodestar.plugin.case import read_case
from lodestar.plugin.raster_io import RasterSet
from lodestar.plugin.vector_io import read_vector

CASE = Path(__file__).resolve().parents[1] / "data" / "great-basin-gold"


def test_great_basin_case_reads_and_its_deposits_lie_in_the_study_area():
    case = read_case(CASE)
    assert case.id == "great-basin-gold" and case.answer is None
    assert case.question == "Where are Carlin-type gold deposits likely?"
    assert [s.role for s in case.layers] == ["geological_map", "geochemistry", "geochemistry", "structure",
                                             "structure"]
    assert case.layers[3].favourable == "low" and case.layers[4].is_vector
    rs = RasterSet([s for s in case.layers if not s.is_vector])
    geology = rs.read(case.layers[0].name)[0]
    deposits = read_vector(case.deposits, crs=rs.crs)
    assert len(deposits) == 32
    cols, rows = rs.grid.map_to_pixel(deposits.geometry.x.values, deposits.geometry.y.values)
    assert not np.ma.getmaskarray(geology)[rows.astype(int), cols.astype(int)].any()
    legend = (CASE / "geologia_legend.csv").read_text().splitlines()
    assert legend[0] == "value,name,cells" and "13,Q,392848" in legend


@pytest.mark.skipif(not make_great_basin_case.SOURCE.exists(), reason="shared source data not present")
def test_great_basin_case_is_rebuilt_identically(tmp_path):
    make_great_basin_case.build(make_great_basin_case.SOURCE, tmp_path)
    built = sorted(tmp_path.iterdir())
    assert len(built) == 9
    for path in built:
        assert path.read_bytes() == (CASE / path.name).read_bytes(), path.name
