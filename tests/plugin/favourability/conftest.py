"""A small synthetic case on one 100 m grid: geochemistry, a fault-distance raster, a coded geology map
with a legend, fault lines and unit polygons (EPSG:32611); `quick`: the models made fast for small grids."""
from __future__ import annotations

import geopandas as gpd
import numpy as np
import pytest
from calibration_cases import SKLEARN
from lodestar_testdata import write_geotiff
from rasterio.transform import from_origin
from shapely.geometry import LineString, box

from lodestar.plugin.favourability import models

X0, Y0, PX = 400_000.0, 4_500_000.0, 100.0
CRS = "EPSG:32611"


@pytest.fixture
def case_files(tmp_path):
    """Paths of the synthetic layers: a 6 x 8 grid whose last column is nodata in every raster but in its top row
    (layers meet where each holds data: a column of nodata in all of them would lie outside the analysis)."""
    transform = from_origin(X0, Y0, PX, PX)
    arsenic = np.arange(48, dtype="float32").reshape(6, 8) + 1.0
    arsenic[1:, 7] = -1
    distance = np.tile(np.arange(8, dtype="float32") * 100.0, (6, 1))
    distance[1:, 7] = -1
    geology = np.ones((6, 8), dtype="uint8")
    geology[:, 4:7] = 2
    geology[1:, 7] = 0
    legend = tmp_path / "geology_legend.csv"
    legend.write_text("value,name\n1,Granite\n2,Silty limestone\n", encoding="utf-8")
    faults = tmp_path / "faults.gpkg"
    gpd.GeoDataFrame({"name": ["f1"]}, geometry=[LineString([(X0 + 50, Y0), (X0 + 50, Y0 - 600)])],
                     crs=CRS).to_file(faults, driver="GPKG")
    units = tmp_path / "units.gpkg"
    gpd.GeoDataFrame({"name": ["Granite", "Limestone"]},
                     geometry=[box(X0, Y0 - 600, X0 + 400, Y0), box(X0 + 400, Y0 - 600, X0 + 700, Y0)],
                     crs=CRS).to_file(units, driver="GPKG")
    return {
        "arsenic": write_geotiff(tmp_path / "arsenic.tif", arsenic, transform, CRS, nodata=-1),
        "distance": write_geotiff(tmp_path / "distance.tif", distance, transform, CRS, nodata=-1),
        "geology": write_geotiff(tmp_path / "geology.tif", geology, transform, CRS, nodata=0),
        "legend": legend,
        "faults": faults,
        "units": units,
    }


@pytest.fixture
def raster_set(case_files):
    from lodestar.plugin.raster_io import LayerSpec, RasterSet

    return RasterSet([
        LayerSpec(case_files["arsenic"], "geochemistry", "As"),
        LayerSpec(case_files["distance"], "structure", "fault distance", favourable="low"),
        LayerSpec(case_files["geology"], "geological_map", "geology", legend=case_files["legend"]),
        LayerSpec(case_files["faults"], "structure", "faults"),
        LayerSpec(case_files["units"], "geological_map", "unit polygons"),
    ])


@pytest.fixture
def quick(monkeypatch):
    """Small ensembles and one tree size, so that every model runs in a moment on these grids; gradient boosting on
    one OpenMP thread (on a few hundred rows, threads waiting on a busy machine cost a hundred times the work)."""
    monkeypatch.setattr(models, "FOREST_TREES", 10)
    monkeypatch.setattr(models, "BOOSTING_ROUNDS", 30)
    monkeypatch.setitem(models.GRIDS, "forest", ({"min_samples_leaf": 5},))
    monkeypatch.setitem(models.GRIDS, "boosting", ({"max_leaf_nodes": 7, "min_samples_leaf": 5},))
    if not SKLEARN:
        yield
        return
    import sklearn.ensemble  # noqa: F401  (loads the OpenMP runtime, so that the limit reaches it)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="openmp"):
        yield
