"""Before the run: the plan's layers whose favourable side ranks the known deposits below the average cell
(sign_check.sides_against_deposits), read on a coarse grid of real GeoTIFFs."""
from __future__ import annotations

import geopandas as gpd
import numpy as np
from affine import Affine
from lodestar_testdata import write_geotiff
from shapely.geometry import Point

from lodestar.plugin.raster_io import LayerSpec
from lodestar.plugin.reason.knowledge import model_by_id
from lodestar.plugin.reason.sign_check import sides_against_deposits

TRANSFORM = Affine(100.0, 0.0, 500_000.0, 0.0, -100.0, 4_000_000.0)


def test_a_layer_whose_favourable_side_holds_no_deposit_is_named_with_its_auc(tmp_path):
    x = np.tile(np.arange(200, dtype="float32"), (200, 1))
    write_geotiff(tmp_path / "as.tif", x, TRANSFORM)  # arsenic rises east, where the deposits lie
    write_geotiff(tmp_path / "sb.tif", x[:, ::-1].copy(), TRANSFORM)  # antimony falls east
    cells = np.random.default_rng(0).choice(180 * 40, 30, replace=False)  # 30 cells, one deposit each
    points = [Point(500_050 + 100 * (160 + c), 3_999_950 - 100 * (10 + r)) for r, c in zip(*np.divmod(cells, 40))]
    gpd.GeoDataFrame(geometry=points, crs="EPSG:32611").to_file(tmp_path / "deposits.gpkg")
    layers = [LayerSpec(tmp_path / "as.tif", "geochemistry", "As ppm"),
              LayerSpec(tmp_path / "sb.tif", "geochemistry", "Sb ppm")]
    rows = sides_against_deposits(layers, tmp_path / "deposits.gpkg", model_by_id("carlin_type_gold"))
    assert [row["layer"] for row in rows] == ["Sb ppm"]
    assert rows[0]["side"] == "high" and rows[0]["deposits"] == 30 and rows[0]["auc"] < 0.15
    assert rows[0]["why"].startswith("Sb ppm ranks the 30 known deposits below the average cell (AUC 0.")
    turned = [layers[0], LayerSpec(tmp_path / "sb.tif", "geochemistry", "Sb ppm", favourable="low")]
    assert sides_against_deposits(turned, tmp_path / "deposits.gpkg", model_by_id("carlin_type_gold")) == []
