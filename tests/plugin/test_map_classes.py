"""The favourability classes, defined once in the surface's style and read by the report's map: values on a bound
fall in the lower class as QGIS draws them, and the map shows the five colours with coordinates and the CRS."""
from __future__ import annotations

import numpy as np
import pytest
import rasterio
from PIL import Image
from pyproj import CRS

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.map_classes import class_index, favourability_classes
from lodestar.plugin.raster_io import RasterReader
from lodestar.plugin.report.report_map import NODATA_COLOUR, axis_names, crs_name, draw_map


def test_classes_come_from_the_style_and_bounds_take_the_lower_class():
    classes = favourability_classes()
    assert [(c.lower, c.upper, c.label) for c in classes] == [
        (0.0, 0.2, "0.0 - 0.2 very low"), (0.2, 0.4, "0.2 - 0.4 low"), (0.4, 0.6, "0.4 - 0.6 moderate"),
        (0.6, 0.8, "0.6 - 0.8 high"), (0.8, 1.0, "0.8 - 1.0 very high")]
    values = np.ma.masked_invalid(np.array([0.0, 0.2, 0.2001, 0.4, 0.59, 0.8, 0.81, 1.0, np.nan, -0.5, 1.5]))
    index = class_index(values, classes)
    assert index.filled(-1).tolist() == [0, 0, 1, 1, 2, 3, 4, 4, -1, 0, 4]


def test_a_style_without_discrete_classes_is_refused_with_what_to_do(tmp_path):
    style = tmp_path / "broken.qml"
    style.write_text("<qgis><colorrampshader colorRampType='INTERPOLATED'/></qgis>", encoding="utf-8")
    with pytest.raises(LodestarError, match="no discrete colour classes; reinstall the plugin"):
        favourability_classes(style)


def test_the_report_map_draws_the_five_class_colours(tmp_path):
    """Stripes at 0.1, 0.3, 0.5, 0.7 and 0.95, one per class, and a stripe of nodata: each class colour covers one
    stripe (before, a continuous ramp drew colours no legend class has)."""
    values = np.repeat(np.array([[0.1, 0.3, 0.5, 0.7, 0.95, -1]], dtype="float32"), 50, axis=0).repeat(20, axis=1)
    path = tmp_path / "favourability.tif"
    with rasterio.open(path, "w", driver="GTiff", width=120, height=50, count=1, dtype="float32", crs="EPSG:28350",
                       transform=rasterio.transform.from_origin(500_000, 7_000_000, 100, 100), nodata=-1) as out:
        out.write(values[np.newaxis])
    png = draw_map(RasterReader(path), tmp_path / "map.png", title="Favourability")
    pixels = np.asarray(Image.open(png).convert("RGB")).reshape(-1, 3)

    def count(colour: str) -> int:
        rgb = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
        return int((pixels == rgb).all(axis=1).sum())

    counts = [count(c.colour) for c in favourability_classes()]
    assert min(counts) > 20_000 and max(counts) < 1.2 * min(counts), counts
    assert count(NODATA_COLOUR) > 0.8 * min(counts)


def test_the_map_names_its_coordinates_and_crs():
    utm = CRS.from_epsg(28350)
    assert crs_name(utm) == "EPSG:28350 (GDA94 / MGA zone 50)"
    assert axis_names(utm) == ("easting (m)", "northing (m)")
    assert axis_names(CRS.from_epsg(4326)) == ("longitude (°)", "latitude (°)")
    assert crs_name(None) == "pixel space (not georeferenced)" and axis_names(None)[0] == "column (pixels)"
