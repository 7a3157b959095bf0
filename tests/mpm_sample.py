"""The bundled sample case (resources/sample/porphyry-demo) as the prospectivity-mapping step tests use it."""
from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "resources" / "sample" / "porphyry-demo"
ALOH, PROPYLITIC, GEOLOGY = (str(SAMPLE / f"{name}.tif") for name in ("aloh", "propylitic", "geology"))
DEPOSITS = str(SAMPLE / "deposits.geojson")


def sample_set(*paths):
    """The RasterSet the algorithms read the sample layers into (names as QGIS gives them: the file stems)."""
    from lodestar.plugin.raster_io import LayerSpec, RasterSet
    from lodestar.plugin.request.request import legend_beside

    return RasterSet([LayerSpec(Path(p), "other", Path(p).stem, legend=legend_beside(p)) for p in paths])


def planted_deposits(tmp_path, count: int = 14) -> str:
    """The sample deposit and further points on the sample's most altered ground (cells of high AlOH, at least
    600 m apart): enough deposits to fit models on the sample layers."""
    from shapely.geometry import Point

    rasters = sample_set(ALOH)
    aloh = rasters.read("aloh")[0]
    order = np.argsort(-aloh.filled(-np.inf), axis=None)
    picked = []
    for index in order:
        row, col = divmod(int(index), aloh.shape[1])
        x, y = rasters.grid.pixel_to_map(col + 0.5, row + 0.5)
        if all(np.hypot(x - px, y - py) >= 600 for px, py in picked):
            picked.append((float(x), float(y)))
        if len(picked) == count - 1:
            break
    frame = gpd.GeoDataFrame(geometry=[Point(p) for p in picked], crs=rasters.grid.crs.to_wkt())
    frame = gpd.GeoDataFrame(geometry=list(frame.geometry) + list(gpd.read_file(DEPOSITS).to_crs(frame.crs).geometry),
                             crs=frame.crs)
    path = tmp_path / "deposits.gpkg"
    frame.to_file(path, driver="GPKG")
    return str(path)
