"""color_regions: index thresholds, nodata, holes, mixed CRS / extent, RGB renderings, bad input."""
from __future__ import annotations

import numpy as np
import pytest
import rasterio
from lodestar_testdata import write_geotiff
from rasterio.transform import from_origin
from rasterio.warp import transform_bounds

from lodestar.plugin.errors import Cancelled, LodestarError
from lodestar.plugin.progress import Progress
from lodestar.plugin.raster_io import LayerSpec, RasterSet
from lodestar.plugin.tools import color_regions as module
from lodestar.plugin.tools.color_regions import (
    ColorRegionParams,
    color_regions,
    hue_ramp_values,
    otsu_threshold,
    rgb_to_hsv,
    single_layer_set,
)

PIXEL = 10.0
X0, Y0 = 500_000.0, 4_000_000.0
UTM = from_origin(X0, Y0, PIXEL, PIXEL)


def write_tif(path, data, crs="EPSG:32611", transform=UTM, nodata=-9999.0):
    return write_geotiff(path, data, transform, crs, nodata)


def box_bounds(row0, row1, col0, col1):
    """Map bounds of pixel rows row0:row1, cols col0:col1 on the UTM test grid."""
    return X0 + col0 * PIXEL, Y0 - row1 * PIXEL, X0 + col1 * PIXEL, Y0 - row0 * PIXEL


def assert_bounds_close(actual, expected, tolerance=PIXEL):
    assert np.allclose(actual, expected, atol=tolerance), (actual, expected)


@pytest.fixture
def index_raster(tmp_path):
    data = np.zeros((100, 120), dtype="float32")
    data[20:40, 70:100] = 5.0           # anomaly in the top-right
    data[70:73, 10:13] = 5.0            # 9-pixel speck
    data[0:5, 0:5] = -9999.0            # nodata corner
    return write_tif(tmp_path / "aloh.tif", data)


def test_value_threshold_polygon_in_map_coordinates(index_raster):
    raster_set = single_layer_set(index_raster, role="argillic_alteration")
    params = ColorRegionParams(method="value", value=2.5, smooth_px=0, min_area_px=20)
    result = color_regions(raster_set, "aloh", params)
    assert result.count == 1
    zone = result.zones.iloc[0]
    assert_bounds_close(zone.geometry.bounds, box_bounds(20, 40, 70, 100), tolerance=1e-6)
    assert zone.geometry.area == pytest.approx(20 * 30 * PIXEL * PIXEL)
    assert (zone.zone_id, zone.layer, zone.role, zone.kind) == ("aloh:1", "aloh", "argillic_alteration", "anomaly")
    assert zone.score_mean == pytest.approx(5.0) and zone.score_max == pytest.approx(5.0)
    assert zone.position == "top-right"
    assert zone.area_m2 == pytest.approx(60_000.0)
    assert "high-value anomaly" in zone.description and "top-right" in zone.description
    assert result.stats["threshold"] == 2.5 and result.stats["blockwise"] is True
    assert result.zones.crs.to_epsg() == 32611


def test_smoothing_keeps_anomaly_within_one_pixel(index_raster):
    raster_set = single_layer_set(index_raster)
    result = color_regions(raster_set, "aloh", ColorRegionParams(method="value", value=2.5, smooth_px=1.0))
    assert result.count == 1   # the speck is smoothed away
    assert_bounds_close(result.zones.geometry.iloc[0].bounds, box_bounds(20, 40, 70, 100))


def test_min_area_drops_specks_and_keeps_them_when_allowed(index_raster):
    raster_set = single_layer_set(index_raster)
    base = dict(method="value", value=2.5, smooth_px=0)
    assert color_regions(raster_set, "aloh", ColorRegionParams(**base, min_area_px=10)).count == 1
    both = color_regions(raster_set, "aloh", ColorRegionParams(**base, min_area_px=9, min_area_fraction=0))
    assert both.count == 2
    speck = both.zones[both.zones.area_m2 < 1000].iloc[0]
    assert_bounds_close(speck.geometry.bounds, box_bounds(70, 73, 10, 13), tolerance=1e-6)
    assert speck.position == "bottom-left"
    assert color_regions(raster_set, "aloh", ColorRegionParams(**base, min_area_px=1, max_regions=1)).count == 1


def test_percentile_sigma_and_otsu_thresholds(tmp_path):
    rng = np.random.default_rng(7)
    data = rng.normal(0.0, 1.0, (80, 80)).astype("float32")
    data[10:30, 10:30] += 10.0
    path = write_tif(tmp_path / "index.tif", data)
    raster_set = single_layer_set(path)
    valid = data.ravel().astype("float64")
    pct = color_regions(raster_set, "index", ColorRegionParams(method="percentile", percentile=90, smooth_px=0))
    assert pct.stats["threshold"] == pytest.approx(np.percentile(valid, 90), rel=1e-6)
    sigma = color_regions(raster_set, "index", ColorRegionParams(method="sigma", k_sigma=1.5, smooth_px=0))
    assert sigma.stats["threshold"] == pytest.approx(valid.mean() + 1.5 * valid.std(), rel=1e-5)
    otsu = color_regions(raster_set, "index", ColorRegionParams(method="otsu", smooth_px=1))
    assert 2.0 < otsu.stats["threshold"] < 8.0
    assert otsu.count == 1
    assert_bounds_close(otsu.zones.geometry.iloc[0].bounds, box_bounds(10, 30, 10, 30))


def test_otsu_threshold_splits_two_modes():
    values = np.concatenate([np.full(1000, 1.0), np.full(500, 9.0)])
    assert 1.0 < otsu_threshold(values) < 9.0


def test_favourable_low_inverts_and_negates_scores(tmp_path):
    rows, cols = np.mgrid[0:60, 0:60]
    distance = np.hypot(rows - 45.0, cols - 15.0).astype("float32") * PIXEL   # near (45, 15) is favourable
    path = write_tif(tmp_path / "fault_distance.tif", distance)
    raster_set = single_layer_set(path, role="structure", favourable="low")
    result = color_regions(raster_set, "fault_distance",
                           ColorRegionParams(method="value", value=50.0, smooth_px=0))
    assert result.count == 1
    zone = result.zones.iloc[0]
    cx, cy = zone.geometry.centroid.x, zone.geometry.centroid.y
    assert abs(cx - (X0 + 15.5 * PIXEL)) < PIXEL and abs(cy - (Y0 - 45.5 * PIXEL)) < PIXEL
    assert zone.position == "bottom-left"
    assert zone.score_max <= 0 and zone.score_max >= -PIXEL   # negated distance: the nearest pixel is ~5 m
    assert "low-value anomaly" in zone.description
    assert result.stats["threshold"] == 50.0


def test_holes_are_kept(tmp_path):
    data = np.zeros((60, 60), dtype="float32")
    data[10:50, 10:50] = 1.0
    data[25:35, 25:35] = 0.0
    raster_set = single_layer_set(write_tif(tmp_path / "ring.tif", data))
    result = color_regions(raster_set, "ring", ColorRegionParams(method="value", value=0.5, smooth_px=0))
    polygon = result.zones.geometry.iloc[0]
    assert len(polygon.interiors) == 1
    assert polygon.area == pytest.approx((40 * 40 - 10 * 10) * PIXEL * PIXEL)


def test_nodata_is_not_anomaly_and_all_nodata_is_an_error(tmp_path):
    data = np.full((40, 40), -9999.0, dtype="float32")
    data[:, :20] = 1.0
    data[5:15, 10:20] = 8.0             # touches the nodata half: nodata must not dilute the smoothing
    raster_set = single_layer_set(write_tif(tmp_path / "half.tif", data))
    result = color_regions(raster_set, "half", ColorRegionParams(method="percentile", percentile=90, smooth_px=0))
    assert result.stats["valid_pixels"] == 800
    assert result.stats["threshold"] == 8.0
    assert_bounds_close(result.zones.geometry.iloc[0].bounds, box_bounds(5, 15, 10, 20), tolerance=1e-6)
    smooth = color_regions(raster_set, "half", ColorRegionParams(method="value", value=4.5, smooth_px=1))
    assert smooth.count == 1
    assert_bounds_close(smooth.zones.geometry.iloc[0].bounds, box_bounds(5, 15, 10, 20))
    assert smooth.zones.geometry.iloc[0].bounds[2] == X0 + 20 * PIXEL
    empty = single_layer_set(write_tif(tmp_path / "empty.tif", np.full((10, 10), -9999.0, dtype="float32")))
    with pytest.raises(LodestarError, match="no valid pixels"):
        color_regions(empty, "empty")


def test_blockwise_reading_matches_one_block(index_raster, monkeypatch):
    raster_set = single_layer_set(index_raster)
    params = ColorRegionParams(method="value", value=2.5, smooth_px=1.5)
    whole = color_regions(raster_set, "aloh", params)
    monkeypatch.setattr(module, "BLOCK_PIXELS", 120 * 7)   # 7-row blocks with a halo of 4 rows or more
    blocks = color_regions(raster_set, "aloh", params)
    assert blocks.count == whole.count == 1
    assert blocks.zones.geometry.iloc[0].equals(whole.zones.geometry.iloc[0])


def test_bounds_limit_the_search(index_raster):
    raster_set = single_layer_set(index_raster)
    params = ColorRegionParams(method="value", value=2.5, smooth_px=0, min_area_px=1, min_area_fraction=0)
    left_half = box_bounds(0, 100, 0, 60)
    result = color_regions(raster_set, "aloh", params, bounds=left_half)
    assert result.count == 1 and result.zones.iloc[0].position == "bottom-left"


def test_layers_in_different_crs_and_extent(tmp_path):
    """The anomaly sits in an EPSG:4326 layer; the analysis grid is the UTM layer's CRS and the common extent."""
    base = write_tif(tmp_path / "geology.tif", np.ones((200, 200), dtype="float32"))   # 2 km x 2 km, UTM 11N
    lon0, lat0, lon1, lat1 = transform_bounds("EPSG:32611", "EPSG:4326", X0 + 300, Y0 - 1700, X0 + 2600, Y0 - 200)
    step = (lon1 - lon0) / 230
    height = int(round((lat1 - lat0) / step))
    geo = from_origin(lon0, lat1, step, step)
    data = np.zeros((height, 230), dtype="float32")
    data[40:80, 60:110] = 3.0
    index = write_tif(tmp_path / "aloh_wgs84.tif", data, crs="EPSG:4326", transform=geo)
    raster_set = RasterSet([LayerSpec(base, "geological_map"), LayerSpec(index, "argillic_alteration")])
    assert raster_set.crs.to_epsg() == 32611
    assert any("reprojected" in line for line in raster_set.log)
    result = color_regions(raster_set, "aloh_wgs84", ColorRegionParams(method="value", value=1.5, smooth_px=0))
    assert result.count == 1
    anomaly_lonlat = (lon0 + 60 * step, lat1 - 80 * step, lon0 + 110 * step, lat1 - 40 * step)
    expected = transform_bounds("EPSG:4326", "EPSG:32611", *anomaly_lonlat, densify_pts=21)
    pixel = raster_set.grid.pixel_size[0]
    assert_bounds_close(result.zones.geometry.iloc[0].bounds, expected, tolerance=pixel)
    assert result.zones.crs.to_epsg() == 32611
    assert result.stats["blockwise"] is False


def test_mode_and_band_mismatches(tmp_path, index_raster):
    rgb = write_tif(tmp_path / "render.tif", np.zeros((3, 20, 20), dtype="uint8"), nodata=None)
    with pytest.raises(LodestarError, match="mode 'rgb'"):
        color_regions(single_layer_set(rgb), "render", ColorRegionParams(mode="index"))
    with pytest.raises(LodestarError, match="mode 'index'"):
        color_regions(single_layer_set(index_raster), "aloh", ColorRegionParams(mode="rgb"))
    stack = np.zeros((4, 30, 30), dtype="float32")
    stack[2, 5:15, 5:15] = 9.0
    multi = write_tif(tmp_path / "stack.tif", stack)
    with pytest.raises(LodestarError, match="choose the band"):
        color_regions(single_layer_set(multi), "stack")
    with pytest.raises(LodestarError, match="band 7 does not exist"):
        color_regions(single_layer_set(multi), "stack", ColorRegionParams(band=7))
    chosen = color_regions(single_layer_set(multi), "stack",
                           ColorRegionParams(band=3, method="value", value=4, smooth_px=0))
    assert chosen.count == 1
    assert_bounds_close(chosen.zones.geometry.iloc[0].bounds, box_bounds(5, 15, 5, 15), tolerance=1e-6)
    units = write_tif(tmp_path / "geology.tif", np.ones((10, 10), dtype="int16"), nodata=0)
    with pytest.raises(LodestarError, match="categorical"):
        color_regions(single_layer_set(units, role="geological_map"), "geology")
    with pytest.raises(LodestarError, match="needs a value"):
        ColorRegionParams(method="value")
    with pytest.raises(LodestarError, match="Unknown threshold method"):
        ColorRegionParams(method="mean")


def test_cancel_stops_the_tool(index_raster):
    progress = Progress(is_cancelled=lambda: True)
    with pytest.raises(Cancelled):
        color_regions(single_layer_set(index_raster), "aloh", progress=progress)


# ------------------------------------------------------------------------------------------- RGB renderings

def jet(n):
    from matplotlib import colormaps

    return (colormaps["jet"](np.linspace(0, 1, n))[:, :3] * 255).round().astype(np.uint8)


def rendering(with_bar=True):
    """A 200 x 300 grey image, a high (red-orange) and a low (blue) colour patch, a vertical colour bar on the right."""
    rows, cols = np.mgrid[0:200, 0:300]
    grey = (90 + 40 * np.sin(rows / 9.0) * np.cos(cols / 13.0)).astype(np.uint8)
    image = np.repeat(grey[..., None], 3, axis=2)
    ramp = jet(150)
    if with_bar:
        image[25:175, 280:292] = ramp[::-1][:, None, :]     # high at the top
    image[50:90, 40:100] = ramp[135]                       # 90 % of the scale
    image[120:160, 150:200] = ramp[20]                      # 13 %
    return image


def write_png(path, image):
    import warnings

    from rasterio.errors import NotGeoreferencedWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotGeoreferencedWarning)
        with rasterio.open(path, "w", driver="PNG", width=image.shape[1], height=image.shape[0], count=3,
                           dtype="uint8") as dst:
            dst.write(np.moveaxis(image, -1, 0))
    return path


def test_rgb_rendering_reads_the_colour_bar(tmp_path):
    path = write_png(tmp_path / "minebench.png", rendering())
    raster_set = single_layer_set(path, role="hydrothermal_alteration")
    result = color_regions(raster_set, "minebench")
    assert result.stats["mode"] == "rgb"
    assert result.stats["colorbar"] == [25, 280, 175, 292]
    assert result.count == 1                                # the blue patch is below the level, the bar is left out
    zone = result.zones.iloc[0]
    assert zone.kind == "colour_anomaly"
    assert zone.geometry.bounds == pytest.approx((40.0, 50.0, 100.0, 90.0))    # pixel space, y down
    assert zone.score_mean == pytest.approx(135 / 149, abs=0.02)
    assert zone.position == "center-left"
    both = color_regions(raster_set, "minebench", ColorRegionParams(level=0.1))
    assert both.count == 2
    low = both.zones.sort_values("score_mean").iloc[0]
    assert low.score_mean == pytest.approx(20 / 149, abs=0.02)
    assert low.geometry.bounds == pytest.approx((150.0, 120.0, 200.0, 160.0))


def test_a_rendering_with_nodata_zero_keeps_its_pure_colours(tmp_path):
    """The same rendering as a GeoTIFF declaring nodata 0 (as many exports do): jet's top colours have a blue of 0,
    and per-band masks blanked the high patch and the bar's top; a pixel is no data only where all three are 0."""
    image = rendering()
    image[:, :10] = 0  # a black nodata border
    path = tmp_path / "exported.tif"
    write_geotiff(path, np.moveaxis(image, -1, 0), UTM, "EPSG:32611", nodata=0, dtype="uint8")
    raster_set = single_layer_set(path, role="hydrothermal_alteration")
    data = raster_set.read("exported")
    assert not np.ma.getmaskarray(data)[:, 70, 70].any() and np.ma.getmaskarray(data)[:, 70, 5].all()
    assert not np.ma.getmaskarray(raster_set.readers["exported"].read([3]))[0, 70, 70]  # whichever bands are read
    result = color_regions(raster_set, "exported")
    assert result.stats["colorbar"] == [25, 280, 175, 292]
    assert result.count == 1
    zone = result.zones.iloc[0]
    assert zone.score_mean == pytest.approx(135 / 149, abs=0.02)
    assert_bounds_close(zone.geometry.bounds, box_bounds(50, 90, 40, 100))


def test_rgb_without_colour_bar_uses_the_hue_ramp(tmp_path):
    path = write_png(tmp_path / "nobar.png", rendering(with_bar=False))
    result = color_regions(single_layer_set(path), "nobar")
    assert result.stats["colorbar"] is None
    assert result.count == 1
    assert result.zones.geometry.iloc[0].bounds == pytest.approx((40.0, 50.0, 100.0, 90.0))
    assert any("no colour bar" in line for line in result.log)


def test_hsv_and_hue_ramp():
    hue, saturation, value = rgb_to_hsv(np.array([[[255, 0, 0], [0, 0, 255], [128, 128, 128]]], dtype=np.uint8))
    assert hue[0, 0] == 0 and hue[0, 1] == pytest.approx(240)
    assert saturation[0, 2] == 0 and value[0, 2] == pytest.approx(128 / 255)
    assert hue_ramp_values(np.array([240.0, 120.0, 0.0, 330.0])) == pytest.approx([0.0, 0.5, 1.0, 1.0])


def test_single_layer_set_budgets(tmp_path, index_raster, monkeypatch):
    assert single_layer_set(index_raster).grid.width == 120                       # full resolution
    assert single_layer_set(index_raster, max_pixels=3000).grid.width == 60        # explicit budget
    monkeypatch.setattr(module, "RENDERING_LIMIT", 1500)
    path = write_png(tmp_path / "render.png", rendering())
    assert single_layer_set(path).grid.width * single_layer_set(path).grid.height <= 1500


def test_coarse_to_fine_components_match_direct_labelling(monkeypatch):
    from scipy import ndimage

    rng = np.random.default_rng(3)
    mask = ndimage.binary_opening(rng.random((203, 157)) > 0.45)     # odd sizes: partial edge cells
    mask[100:180, 20:150] = True
    direct = module.connected_components(mask, 12)
    monkeypatch.setattr(module, "DIRECT_LABEL_PIXELS", 0)
    coarse = module.connected_components(mask, 12)
    key = sorted((s[0].start, s[1].start, s[0].stop, s[1].stop, int(c.sum())) for s, c in direct)
    assert key == sorted((s[0].start, s[1].start, s[0].stop, s[1].stop, int(c.sum())) for s, c in coarse)
    assert len(key) > 3
    for slices, component in coarse:
        assert mask[slices][component].all()
    monkeypatch.setattr(module, "MAX_COARSE_CANDIDATES", 0)              # falls back to direct labelling
    assert len(module.connected_components(mask, 12)) == len(key)


def test_sparse_and_flat_layers(tmp_path):
    sparse = np.zeros((50, 50), dtype="float32")          # 96 % zeros: the 90th percentile is 0
    sparse[10:20, 30:40] = 2.0
    result = color_regions(single_layer_set(write_tif(tmp_path / "sparse.tif", sparse)), "sparse",
                           ColorRegionParams(percentile=90, smooth_px=0))
    assert result.stats["threshold"] == 0.0 and result.stats["strict"] is True
    assert result.count == 1
    assert_bounds_close(result.zones.geometry.iloc[0].bounds, box_bounds(10, 20, 30, 40), tolerance=1e-6)
    flat = single_layer_set(write_tif(tmp_path / "flat.tif", np.full((20, 20), 3.0, dtype="float32")))
    assert color_regions(flat, "flat", ColorRegionParams(method="otsu")).count == 0


def test_horizontal_colour_bar_at_the_bottom(tmp_path):
    from matplotlib import colormaps

    ramp = (colormaps["turbo"](np.linspace(0, 1, 200))[:, :3] * 255).round().astype(np.uint8)
    image = np.full((240, 260, 3), 110, dtype=np.uint8)
    image[222:232, 30:230] = ramp[None, :, :]               # low end on the left
    image[30:70, 150:210] = ramp[180]                       # 90 %
    image[100:140, 20:80] = ramp[60]                        # 30 %
    result = color_regions(single_layer_set(write_png(tmp_path / "turbo.png", image)), "turbo",
                           ColorRegionParams(level=0.6))
    assert result.stats["colorbar"] == [222, 30, 232, 230]
    assert result.count == 1
    zone = result.zones.iloc[0]
    assert zone.geometry.bounds == pytest.approx((150.0, 30.0, 210.0, 70.0))
    assert zone.score_mean == pytest.approx(180 / 199, abs=0.02) and zone.position == "top-right"


def test_colour_bar_outside_the_common_extent_is_still_read(tmp_path):
    """The rendering's colour bar lies outside the analysis area (cut off by a smaller layer): it is read
    on the layer's own pixels. A reversed ramp (red low, blue high) shows the bar, not a default ramp, was used."""
    ramp = jet(150)[::-1]                                      # red at the low end
    image = np.full((200, 300, 3), 100, dtype=np.uint8)
    image[25:175, 280:292] = ramp[::-1][:, None, :]             # high (blue) at the top
    image[50:90, 40:100] = ramp[135]                            # blue: 90 % on this bar
    image[120:160, 150:200] = ramp[20]                           # red: 13 %
    render = write_tif(tmp_path / "render.tif", np.moveaxis(image, -1, 0), nodata=None)
    other = write_tif(tmp_path / "index.tif", np.ones((200, 250), dtype="float32"))   # columns 0-250 only
    raster_set = RasterSet([LayerSpec(other, "other"), LayerSpec(render, "iron_oxide")])
    assert raster_set.grid.width == 250
    result = color_regions(raster_set, "render")
    assert result.stats["colorbar"] == [25, 280, 175, 292] and result.stats["colorbar_excluded"] is None
    assert result.count == 1
    zone = result.zones.iloc[0]
    assert_bounds_close(zone.geometry.bounds, box_bounds(50, 90, 40, 100), tolerance=1e-6)
    assert zone.score_mean == pytest.approx(135 / 149, abs=0.02)


def test_colour_bar_of_a_map_in_a_wide_nodata_border_is_read(tmp_path):
    """A rendering padded with a nodata border twice its size a side: its bar, in a corner of the data, lies far from
    the image's edges and is short against the image, yet it is the bar (read as before, and no zone)."""
    image = np.maximum(rendering(), 1)                      # 0 is nodata
    padded = np.zeros((1000, 1500, 3), dtype=np.uint8)
    padded[400:600, 600:900] = image
    path = write_tif(tmp_path / "padded.tif", np.moveaxis(padded, -1, 0), nodata=0)
    result = color_regions(single_layer_set(path), "padded")
    assert result.stats["colorbar"] == [425, 880, 575, 892]
    assert result.count == 1
    zone = result.zones.iloc[0]
    assert_bounds_close(zone.geometry.bounds, box_bounds(450, 490, 640, 700), tolerance=1e-6)
    assert zone.score_mean == pytest.approx(135 / 149, abs=0.02)


def test_a_coloured_stratum_along_an_edge_is_not_the_colour_bar(tmp_path):
    """A clay stratum coloured along the bottom edge is longer than the bar and spans as many hues, but its hues
    wander along it: the short bar on the right is read, and the stratum is a zone."""
    image = rendering()
    ramp = jet(150)
    levels = (75 + 60 * np.sin(np.arange(300) / 7.0)).astype(int)      # 15 % to 90 % of the scale, back and forth
    image[185:197, :] = ramp[levels][None, :, :]
    result = color_regions(single_layer_set(write_png(tmp_path / "stratum.png", image)), "stratum",
                           ColorRegionParams(level=0.1))
    assert result.stats["colorbar"] == [25, 280, 175, 292]
    assert any(zone.bounds[3] == pytest.approx(197.0) for zone in result.zones.geometry)


@pytest.mark.parametrize("name", ["jet", "viridis", "turbo"])
def test_a_long_colour_bar_with_pixel_noise_is_read(tmp_path, name):
    """A 600-pixel bar with the colour noise of a scanned or resampled map (3 levels of 255): its median profile
    wanders pixel to pixel, but over stretches its hue moves one way, so it is the bar."""
    from matplotlib import colormaps

    rng = np.random.default_rng(5)
    ramp = (colormaps[name](np.linspace(0, 1, 600))[:, :3] * 255).round()
    image = np.full((700, 300, 3), 110.0)
    image[50:650, 270:285] = ramp[::-1][:, None, :]
    image += rng.normal(0, 3, image.shape)
    path = write_png(tmp_path / "noisy.png", np.clip(image, 0, 255).round().astype(np.uint8))
    assert color_regions(single_layer_set(path), "noisy").stats["colorbar"] == [50, 270, 650, 285]
