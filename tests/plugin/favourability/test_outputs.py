"""The written surface read back, the weights CSV, and top-share polygons."""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest
import rasterio
from affine import Affine
from pyproj import CRS
from shapely.ops import unary_union

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.favourability.evidence import EvidenceSpec
from lodestar.plugin.favourability.outputs import (
    NODATA,
    TABLE_COLUMNS,
    surface_polygons,
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


def _surface(values=None, mask=None) -> Surface:
    if values is None:
        rows, cols = np.mgrid[0:20, 0:30]
        values = (rows * 30 + cols) / 599.0  # all distinct, 0 to 1
    if mask is None:
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
def test_polygons_cover_the_asked_share_within_a_pixel(share):
    surface = _surface()
    frame = surface_polygons(surface, share)
    valid_area = 500 * PX * PX
    assert abs(frame["area_m2"].sum() - share * valid_area) <= PX * PX
    union = unary_union(list(frame.geometry))
    assert abs(union.area - share * valid_area) <= 0.05 * share * valid_area  # simplified by 1.5 px
    assert frame.crs.equals(GRID.crs)
    # the top cells are the last rows: the polygons lie at the bottom of the grid, east of the strip
    xmin, ymin, _, _ = union.bounds
    assert ymin == pytest.approx(GRID.bounds[1]) and xmin >= GRID.bounds[0] + 5 * PX - 1.5 * PX


def test_polygons_are_ranked_with_their_mean_and_max():
    values = np.zeros((20, 30))
    values[2:4, 10:14] = 0.9  # 8 cells
    values[10:14, 20:24] = 0.6  # 16 cells
    values[10, 20] = 0.7
    surface = _surface(values, np.zeros((20, 30), dtype=bool))
    frame = surface_polygons(surface, 24 / 600)
    assert list(frame["rank"]) == [1, 2]
    assert frame["fav_mean"].tolist() == pytest.approx([0.9, (15 * 0.6 + 0.7) / 16])
    assert frame["fav_max"].tolist() == pytest.approx([0.9, 0.7])
    assert frame["area_m2"].tolist() == [8 * PX * PX, 16 * PX * PX]


def test_tied_cells_are_taken_or_left_together():
    values = np.ma.masked_array(np.array([[0.9, 0.5, 0.5, 0.5], [0.5, 0.5, 0.1, 0.1]]))
    # 2 of 8 cells asked: 1 above the tie (share 1/8) is nearer than 6 with it (6/8)
    assert top_share_mask(values, 0.25).sum() == 1
    assert top_share_mask(values, 0.6).sum() == 6
    with pytest.raises(LodestarError, match="area share"):
        top_share_mask(values, 0.0)


def test_pinholes_inside_a_patch_are_part_of_it_and_larger_holes_and_the_edge_are_not():
    values = np.zeros((20, 30))
    values[2:9, 2:9] = 0.9  # a 7 x 7 patch with a one-cell pinhole and a 3 x 3 hole
    values[3, 3] = 0.1
    values[5:8, 5:8] = 0.1
    values[12:20, 20:30] = 0.8  # a patch on the grid's corner with a notch open to the edge
    values[19, 25] = 0.1
    surface = _surface(values, np.zeros((20, 30), dtype=bool))
    share = (49 - 10 + 80 - 1) / 600
    kept = surface_polygons(surface, share)
    filled = surface_polygons(surface, share, pinhole_cells=4)
    assert kept["area_m2"].tolist() == [39 * PX * PX, 79 * PX * PX]
    assert filled["area_m2"].tolist() == [40 * PX * PX, 79 * PX * PX]  # the 9-cell hole and the notch stay out
    assert filled["fav_mean"].tolist() == pytest.approx([(39 * 0.9 + 0.1) / 40, 0.8])
    assert [len(g.interiors) for g in filled.geometry] == [1, 0]
    assert [len(g.interiors) for g in kept.geometry] == [2, 0]


def test_a_pinhole_beside_nodata_is_filled_only_where_the_ground_is_analysed():
    values = np.zeros((20, 30))
    values[2:9, 2:9] = 0.9
    values[3, 3] = 0.1  # a two-cell hole: one analysed cell under the share, one nodata cell
    mask = np.zeros((20, 30), dtype=bool)
    mask[3, 4] = True
    surface = _surface(values, mask)
    filled = surface_polygons(surface, 47 / 599, pinhole_cells=4)
    assert filled["area_m2"].tolist() == [48 * PX * PX]
    assert filled["fav_mean"].tolist() == pytest.approx([(47 * 0.9 + 0.1) / 48])
    assert len(filled.geometry.iloc[0].interiors) == 1  # the nodata cell stays out of the target
