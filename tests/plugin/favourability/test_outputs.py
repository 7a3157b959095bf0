"""The written surface read back, the weights CSV, the top share and the pinholes inside it."""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest
import rasterio
from affine import Affine
from pyproj import CRS

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.favourability.evidence import EvidenceSpec
from lodestar.plugin.favourability.outputs import (
    NODATA,
    TABLE_COLUMNS,
    pinholes,
    top_share_mask,
    write_surface,
    write_weights_csv,
)
from lodestar.plugin.favourability.overlay import Surface
from lodestar.plugin.raster_io import RasterGrid

PX = 50.0
GRID = RasterGrid(Affine(PX, 0, 600_000.0, 0, -PX, 7_000_000.0), 30, 20, CRS.from_epsg(32750))
SPECS = [EvidenceSpec("As, ppm", "geochemistry", "index", "log_percentile", weight=1.0, why="pathfinder, \"As\""),
         EvidenceSpec("faults", "structure", "vector", "distance_m", "small", {"midpoint": 1500.0, "spread": 3.0},
                      0.8, "near faults")]


def _surface() -> Surface:
    rows, cols = np.mgrid[0:20, 0:30]
    values = (rows * 30 + cols) / 599.0  # all distinct, 0 to 1
    mask = np.zeros((20, 30), dtype=bool)
    mask[:, :5] = True  # a strip outside the analysed area
    return Surface(np.ma.masked_array(values.astype("float32"), mask=mask), GRID, specs=list(SPECS))


def test_surface_geotiff_reads_back(tmp_path):
    surface = _surface()
    path = write_surface(surface, tmp_path / "out" / "favourability.tif")
    with rasterio.open(path) as ds:
        data = ds.read(1)
        assert ds.dtypes[0] == "float32" and ds.nodata == NODATA
        assert CRS.from_wkt(ds.crs.to_wkt()).equals(GRID.crs) and ds.transform == GRID.transform
        assert ds.profile["tiled"] and ds.compression.name.lower() == "deflate"
        tags = ds.tags()
    assert (data[:, :5] == NODATA).all()
    valid = data[:, 5:]
    assert valid.min() >= 0.0 and valid.max() <= 1.0
    np.testing.assert_allclose(valid, surface.values[:, 5:])
    assert tags["LODESTAR_METHOD"] == "weighted"
    assert tags["LODESTAR_LAYERS"] == "As, ppm, faults"
    assert json.loads(tags["LODESTAR_WEIGHTS"]) == {"As, ppm": 1.0, "faults": 0.8}
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_weights_csv_has_one_row_per_layer(tmp_path):
    path = write_weights_csv(_surface().table(), tmp_path / "weights.csv")
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0]) == TABLE_COLUMNS
    assert rows[0]["layer"] == "As, ppm" and rows[0]["why"] == 'pathfinder, "As"'
    assert rows[1] == {"layer": "faults", "role": "structure", "transformation": "distance to features (m)",
                       "membership": "fuzzy small (midpoint 1500, spread 3)", "weight": "0.8", "why": "near faults"}


def test_weights_csv_adds_the_calibration_columns_after_the_table(tmp_path):
    rows = _surface().table()
    rows[0].update(w_plus=1.25, contrast=2.0)
    path = write_weights_csv(rows, tmp_path / "weights.csv")
    with open(path, newline="", encoding="utf-8") as handle:
        read = list(csv.DictReader(handle))
    assert tuple(read[0]) == TABLE_COLUMNS + ("w_plus", "contrast")
    assert read[0]["w_plus"] == "1.25" and read[1]["w_plus"] == "" and read[1]["contrast"] == ""


@pytest.mark.parametrize("share", [0.05, 0.10, 0.25])
def test_the_top_share_is_a_share_of_the_analysed_cells_and_takes_none_outside(share):
    values = _surface().values  # 500 analysed cells, all distinct, the best in the last rows; a nodata strip
    top = top_share_mask(values, share)
    assert top.sum() == round(share * 500) and not top[:, :5].any()
    assert values[top].min() > values[~top & ~values.mask].max()


def test_tied_cells_are_taken_or_left_together():
    values = np.ma.masked_array(np.array([[0.9, 0.5, 0.5, 0.5], [0.5, 0.5, 0.1, 0.1]]))
    # 2 of 8 cells asked: 1 above the tie (share 1/8) is nearer than 6 with it (6/8)
    assert top_share_mask(values, 0.25).sum() == 1
    assert top_share_mask(values, 0.6).sum() == 6
    with pytest.raises(LodestarError, match="area share"):
        top_share_mask(values, 0.0)


def test_pinholes_are_the_small_holes_inside_a_patch_not_larger_ones_nor_notches_open_to_the_edge():
    selected = np.zeros((20, 30), dtype=bool)
    selected[2:9, 2:9] = True  # a 7 x 7 patch with a one-cell pinhole and a 3 x 3 hole
    selected[3, 3] = False
    selected[5:8, 5:8] = False
    selected[12:20, 20:30] = True  # a patch on the grid's corner with a notch open to the edge
    selected[19, 25] = False
    holes = pinholes(selected, 4)
    assert holes.sum() == 1 and holes[3, 3]
    assert pinholes(selected, 10).sum() == 10  # the 3 x 3 hole too, never the notch
    assert not pinholes(np.ones((5, 5), dtype=bool), 4).any()
    diagonal = np.ones((6, 6), dtype=bool)
    diagonal[2, 2] = diagonal[3, 3] = False  # two cells touching at a corner: one hole of two cells
    assert not pinholes(diagonal, 2).any() and pinholes(diagonal, 3).sum() == 2
