"""feature_regions: dark lines, lineament density, contacts and texture land where they were drawn."""
from __future__ import annotations

import numpy as np
import pytest
from lodestar_testdata import write_geotiff
from pyproj import Transformer
from rasterio.transform import from_origin
from shapely.geometry import LineString, Point

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.raster_io import LayerSpec, RasterSet
from lodestar.plugin.tools.feature_regions import FeatureRegionParams, auto_mode, feature_regions
from lodestar.plugin.zones import ZONE_COLUMNS

X0, Y0, PX = 500_000.0, 4_000_000.0, 30.0


def write_tif(path, data, crs="EPSG:32611", transform=None, nodata=None, dtype=None):
    return write_geotiff(path, data, transform or from_origin(X0, Y0, PX, PX), crs, nodata, dtype)


def noisy(shape, level=0.6, sigma=0.03, seed=0):
    return (level + np.random.default_rng(seed).normal(0, sigma, shape)).astype("float32")


def one_layer(path, role="structure", **kw):
    return RasterSet([LayerSpec(path, role, **kw)])


def test_dark_line_gives_fault_zone_within_one_pixel(tmp_path):
    image = noisy((100, 120))
    image[40, 10:110] = 0.1                      # E-W line on row 40
    rows = np.arange(60, 95)
    image[rows, rows - 40] = 0.1                 # NW-SE diagonal (row and column grow together)
    rs = one_layer(write_tif(tmp_path / "map.tif", image))
    result = feature_regions(rs, "map", FeatureRegionParams(mode="faults", buffer_px=1.0))
    zones = result.zones
    assert list(zones.columns[: len(ZONE_COLUMNS)]) == list(ZONE_COLUMNS)
    assert len(zones) == 2 and set(zones["kind"]) == {"fault"}
    ew = zones.iloc[0]  # longest first
    line_y = Y0 - 40.5 * PX
    xmin, ymin, xmax, ymax = ew.geometry.bounds
    assert abs((ymin + ymax) / 2 - line_y) <= PX and ymax - ymin <= 3 * PX + 1e-6
    assert abs(xmin - (X0 + 10 * PX)) <= 1.5 * PX and abs(xmax - (X0 + 110 * PX)) <= 1.5 * PX
    assert ew.description.startswith("E-W-trending dark linear feature")
    diagonal = zones.iloc[1]
    assert diagonal.description.startswith("NW-SE-trending")
    centre = LineString([(X0 + 20.5 * PX, Y0 - 60.5 * PX), (X0 + 54.5 * PX, Y0 - 94.5 * PX)])
    assert diagonal.geometry.buffer(1e-6).contains(centre)
    assert diagonal.geometry.hausdorff_distance(centre) <= 2.5 * PX
    # Contrast in units of the 2-98 % range: the line is (0.6 - 0.1) / ~0.12 = ~4 range units darker.
    assert 3.0 < ew.score_mean < 5.5 and ew.score_max >= ew.score_mean


def test_line_in_geographic_layer_lands_in_projected_analysis_crs(tmp_path):
    """Analysis CRS from a UTM layer; the line is drawn on a second layer in EPSG:4326 of another extent."""
    base = write_tif(tmp_path / "base.tif", noisy((120, 120), seed=1))
    to_geo = Transformer.from_crs("EPSG:32611", "EPSG:4326", always_xy=True)
    lon0, lat1 = to_geo.transform(X0 - 600, Y0 + 600)
    lon1, lat0 = to_geo.transform(X0 + 120 * PX + 600, Y0 - 120 * PX - 600)
    cols, rows = 160, 140
    dx, dy = (lon1 - lon0) / cols, (lat1 - lat0) / rows
    image = noisy((rows, cols), seed=2)
    line_row = 70
    image[line_row, 20:140] = 0.05
    geo = write_tif(tmp_path / "geo.tif", image, crs="EPSG:4326", transform=from_origin(lon0, lat1, dx, dy))
    rs = RasterSet([LayerSpec(base, "other"), LayerSpec(geo, "structure")])
    assert rs.crs.to_epsg() == 32611 and any("geo" in line and "reprojected" in line for line in rs.log)
    zones = feature_regions(rs, "geo", FeatureRegionParams(mode="faults", max_zones=1)).zones
    assert len(zones) == 1
    zone = zones.geometry.iloc[0]
    to_utm = Transformer.from_crs("EPSG:4326", "EPSG:32611", always_xy=True)
    lat = lat1 - (line_row + 0.5) * dy
    apx = rs.grid.pixel_size[0]
    for lon in np.linspace(lon0 + 40 * dx, lon0 + 120 * dx, 9):
        x, y = to_utm.transform(lon, lat)
        if rs.grid.bounds[0] + apx < x < rs.grid.bounds[2] - apx:
            assert zone.distance(Point(x, y)) <= apx  # the true line is inside the zone, within one pixel
    assert zone.bounds[3] - zone.bounds[1] <= 4 * apx + 1e-6  # a thin band: 2 resampled rows + 1 pixel each side


def test_lineament_density_marks_striped_area_with_trend(tmp_path):
    image = noisy((120, 120), level=0.5, sigma=0.05, seed=3)
    rows, cols = np.mgrid[0:120, 0:120]
    stripes = ((cols + rows) // 4) % 2 == 0       # bands of constant col + row: NE-SW trend
    image[(rows < 50) & (cols < 50) & stripes] += 0.4
    rs = one_layer(write_tif(tmp_path / "img.tif", image), role="false_color_composite")
    assert auto_mode(rs, "img") == "lineaments"
    zones = feature_regions(rs, "img").zones
    assert len(zones) == 1 and zones.kind.iloc[0] == "lineament_density"
    xmin, ymin, xmax, ymax = zones.geometry.iloc[0].bounds
    assert xmin >= X0 and xmax <= X0 + 52 * PX and ymin >= Y0 - 52 * PX and ymax <= Y0
    assert zones.geometry.iloc[0].area >= 0.5 * (50 * PX) ** 2  # the 15-pixel density window erodes the rim
    assert "NE-SW" in zones.description.iloc[0] and zones.position.iloc[0] == "top-left"
    assert 0.3 < zones.score_mean.iloc[0] <= zones.score_max.iloc[0] <= 1.0


def test_texture_anomaly_found_where_noise_is(tmp_path):
    image = noisy((120, 120), level=0.5, sigma=0.02, seed=4)
    image[70:100, 20:50] += np.random.default_rng(5).normal(0, 0.3, (30, 30)).astype("float32")
    image[0:5, 0:5] = -9999
    rs = one_layer(write_tif(tmp_path / "idx.tif", image, nodata=-9999), role="hydrothermal_alteration")
    assert auto_mode(rs, "idx") == "texture"
    result = feature_regions(rs, "idx")
    zones = result.zones
    assert len(zones) == 1 and zones.kind.iloc[0] == "texture"
    xmin, ymin, xmax, ymax = zones.geometry.iloc[0].bounds
    half = 3 * PX  # half the 7-pixel window
    assert X0 + 20 * PX - half - PX <= xmin <= X0 + 20 * PX + PX
    assert X0 + 50 * PX - PX <= xmax <= X0 + 50 * PX + half + PX
    assert Y0 - 100 * PX - half - PX <= ymin and ymax <= Y0 - 70 * PX + half + PX
    assert zones.score_mean.iloc[0] > 2.5 and "rough" in zones.description.iloc[0]
    assert result.stats["mode"] == "texture"



def test_texture_mode_stops_when_cancelled_mid_way(tmp_path):
    from lodestar.plugin.errors import Cancelled
    from lodestar.plugin.progress import Progress

    image = noisy((60, 60), level=0.5, sigma=0.02, seed=4)
    rs = one_layer(write_tif(tmp_path / "idx.tif", image, nodata=-9999), role="hydrothermal_alteration")
    reached = []
    # Cancelled once the variance maps are done (progress 50): the tool stops before vectorising.
    progress = Progress(on_progress=reached.append, is_cancelled=lambda: bool(reached) and reached[-1] >= 50)
    with pytest.raises(Cancelled):
        feature_regions(rs, "idx", FeatureRegionParams(mode="texture"), progress=progress)
    assert reached[-1] == 50

def test_contacts_of_categorical_map_sit_on_unit_boundary(tmp_path):
    codes = np.full((60, 80), 1, dtype="uint8")
    codes[:, 50:] = 2
    codes[50:, :] = 255
    legend = tmp_path / "legend.csv"
    legend.write_text("value,name\n1,Limestone\n2,Granite\n")
    path = write_tif(tmp_path / "geo.tif", codes, nodata=255)
    rs = one_layer(path, role="geological_map", legend=legend)
    assert auto_mode(rs, "geo") == "contacts"
    zones = feature_regions(rs, "geo", FeatureRegionParams(buffer_px=1.0)).zones
    assert len(zones) == 1 and zones.kind.iloc[0] == "contact"
    xmin, ymin, xmax, ymax = zones.geometry.iloc[0].bounds
    assert (xmin, xmax) == (X0 + 49 * PX, X0 + 51 * PX)            # one pixel each side of the boundary
    assert ymin == Y0 - 50 * PX and ymax == Y0                     # stops at the nodata rows
    assert "Limestone/Granite" in zones.description.iloc[0]
    # 50 contact edges of 30 m over 50 x 2 pixels -> 1.5 km in 0.09 km2 at most: density ~16.7 km/km2 at peak
    assert 0 < zones.score_mean.iloc[0] <= zones.score_max.iloc[0] <= 1500 / (2 * 50 * 900) * 1000 + 1e-6


def test_contacts_between_colour_units_of_rgb_map(tmp_path):
    rgb = np.zeros((3, 60, 90), dtype="uint8")
    rgb[:, :, :30] = np.array([230, 200, 60])[:, None, None]      # yellow unit
    rgb[:, :, 30:60] = np.array([60, 160, 70])[:, None, None]     # green unit
    rgb[:, :, 60:] = np.array([170, 90, 200])[:, None, None]      # purple unit
    rgb[:, 20, :] = 10                                            # black linework is not a unit
    rs = one_layer(write_tif(tmp_path / "colmap.tif", rgb), role="geological_map")
    assert auto_mode(rs, "colmap") == "contacts"
    zones = feature_regions(rs, "colmap", FeatureRegionParams(colour_units=3)).zones
    # Two contacts, each cut in two by the linework row: four zones, none crossing row 20.
    assert len(zones) == 4 and set(zones.kind) == {"contact"}
    centres = sorted((g.bounds[0] + g.bounds[2]) / 2 for g in zones.geometry)
    assert centres == [X0 + 30 * PX] * 2 + [X0 + 60 * PX] * 2
    line = LineString([(X0, Y0 - 20.5 * PX), (X0 + 90 * PX, Y0 - 20.5 * PX)])
    assert not any(g.intersects(line) for g in zones.geometry)
    assert all("colour #" in d for d in zones.description)


def test_bounds_limit_the_search(tmp_path):
    image = noisy((100, 120))
    image[40, 10:110] = 0.1
    image[80, 10:110] = 0.1
    rs = one_layer(write_tif(tmp_path / "map.tif", image))
    bounds = (X0, Y0 - 60 * PX, X0 + 120 * PX, Y0 - 20 * PX)   # rows 20-59: only the line on row 40
    zones = feature_regions(rs, "map", FeatureRegionParams(mode="faults"), bounds=bounds).zones
    assert len(zones) == 1 and zones.geometry.iloc[0].bounds[1] > Y0 - 60 * PX
    assert zones.position.iloc[0] == "center"


def test_positions_with_bounds_are_words_within_the_analysis_extent(tmp_path):
    """A line at the top of the chosen window but in the middle of the raster lies in the "center": the
    position is the zone contract's (analysis extent), the one the controller checks descriptions against."""
    from lodestar.plugin.controller import validate

    image = noisy((90, 90))
    image[35, 32:52] = 0.1
    rs = one_layer(write_tif(tmp_path / "map.tif", image))
    bounds = (X0 + 30 * PX, Y0 - 60 * PX, X0 + 60 * PX, Y0 - 30 * PX)   # rows and columns 30-59
    zones = feature_regions(rs, "map", FeatureRegionParams(mode="faults"), bounds=bounds).zones
    assert len(zones) == 1
    assert zones.position.iloc[0] == "center" and "in the center of the area" in zones.description.iloc[0]
    assert "location_mismatch" not in validate(zones, rs.grid).codes


def test_bad_input_is_a_clear_error(tmp_path):
    with pytest.raises(LodestarError, match="Unknown feature mode"):
        FeatureRegionParams(mode="magic")
    empty = write_tif(tmp_path / "empty.tif", np.full((20, 20), -9999, dtype="float32"), nodata=-9999)
    with pytest.raises(LodestarError, match="only nodata"):
        feature_regions(one_layer(empty), "empty")
    image = write_tif(tmp_path / "ok.tif", noisy((20, 20)))
    with pytest.raises(LodestarError, match="does not overlap"):
        feature_regions(one_layer(image), "ok", bounds=(0, 0, 10, 10))
    with pytest.raises(LodestarError, match="contacts need"):
        feature_regions(one_layer(image), "ok", FeatureRegionParams(mode="contacts"))


def test_unreferenced_png_map_in_pixel_space(tmp_path):
    """MineBench-style PNG without georeferencing: zones in pixel coordinates (y grows downwards)."""
    from PIL import Image

    rgb = np.zeros((80, 100, 3), dtype="uint8")
    rgb[:, :50] = (220, 180, 60)
    rgb[:, 50:] = (80, 160, 90)
    rgb[30, 5:95] = 0
    Image.fromarray(rgb).save(tmp_path / "map.png")
    rs = RasterSet([LayerSpec(tmp_path / "map.png", "structure")])
    assert rs.crs is None and auto_mode(rs, "map") == "faults"
    zones = feature_regions(rs, "map").zones
    assert len(zones) == 1 and zones.bbox.iloc[0] == "5.000,29.000,96.000,32.000"
    assert zones.description.iloc[0] == ("E-W-trending dark linear feature (possible fault, 90 px long) in the center "
                                         "of the area (226 px2, map)")
    contacts = feature_regions(RasterSet([LayerSpec(tmp_path / "map.png", "geological_map")]), "map",
                               FeatureRegionParams(colour_units=2)).zones
    assert sorted(contacts.bbox) == ["49.000,0.000,51.000,30.000", "49.000,31.000,51.000,80.000"]
