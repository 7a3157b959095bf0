"""The real Great Basin gold case folder: a valid case whose known deposits lie in the study area.

(Rebuilding it from the source data outside the repository is checked by
`python scripts/make_great_basin_case.py --check`, not here: the suite reads only the repository.)"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from lodestar.plugin.raster_io import RasterSet
from lodestar.plugin.request.case import read_case
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
    cols, rows = (np.floor(v).astype(int) for v in rs.grid.map_to_pixel(deposits.geometry.x.values,
                                                                         deposits.geometry.y.values))
    on_grid = (cols >= 0) & (cols < rs.grid.width) & (rows >= 0) & (rows < rs.grid.height)
    assert int(on_grid.sum()) == 31  # one deposit lies about 1.5 km north of the common analysis grid
    assert not np.ma.getmaskarray(geology)[rows[on_grid], cols[on_grid]].any()
    legend = (CASE / "geologia_legend.csv").read_text().splitlines()
    assert legend[0] == "value,name,cells" and "13,Q,392848" in legend
    assert case.favourable_units == {"geology (DDS-41 lithotectonic units)": ["LPZE", "UPZC", "LPZ"]}
