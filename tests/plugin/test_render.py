"""render.to_rgb and render.render_png on small synthetic rasters."""
from __future__ import annotations

import io

import numpy as np
import pytest
from lodestar_testdata import write_geotiff
from PIL import Image
from rasterio.transform import from_origin

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.raster_io import LayerSpec, RasterReader, RasterSet
from lodestar.plugin.render import NODATA_RGB, colormap_lut, nice_step, render_png, to_rgb

ORIGIN = from_origin(500_000, 4_000_000, 10, 10)


def write_tif(path, data, crs="EPSG:32611", transform=ORIGIN, nodata=-9999.0):
    return write_geotiff(path, data, transform, crs, nodata)


def decode(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def test_to_rgb_single_band_stretch_and_nodata():
    data = np.ma.masked_array(np.arange(100, dtype="float32").reshape(10, 10))
    data[0, 0] = np.ma.masked
    grey = to_rgb(data, stretch=None, colormap=None)
    assert grey.shape == (10, 10, 3) and grey.dtype == np.uint8
    assert tuple(grey[0, 0]) == NODATA_RGB
    assert tuple(grey[0, 1]) == (0, 0, 0)          # minimum valid value (1)
    assert tuple(grey[9, 9]) == (255, 255, 255)    # maximum (99)
    assert grey[5, 0, 0] == round((50 - 1) / 98 * 255)
    coloured = to_rgb(data, stretch=None, colormap="magma")
    lut = colormap_lut("magma")
    assert tuple(coloured[0, 1]) == tuple(lut[0]) and tuple(coloured[9, 9]) == tuple(lut[255])


def test_to_rgb_percentile_clips_outliers():
    values = np.ones((10, 10), dtype="float32")
    values[:5] = 0.0
    values[0, 0] = 1000.0   # one outlier does not flatten the image
    rgb = to_rgb(np.ma.masked_array(values), stretch=(2, 98), colormap=None)
    assert rgb[9, 9, 0] == 255 and rgb[1, 1, 0] == 0 and rgb[0, 0, 0] == 255


def test_to_rgb_rgb_bands_stretched_per_band_or_kept():
    bands = np.zeros((3, 4, 4), dtype="float32")
    bands[0] = np.linspace(10, 20, 16).reshape(4, 4)
    bands[1] = 100
    bands[2] = np.linspace(0, 200, 16).reshape(4, 4)
    kept = to_rgb(np.ma.masked_array(bands), stretch=None)
    assert tuple(kept[0, 0]) == (10, 100, 0) and tuple(kept[3, 3]) == (20, 100, 200)
    stretched = to_rgb(np.ma.masked_array(bands), stretch=(0, 100))
    assert stretched[0, 0, 0] == 0 and stretched[3, 3, 0] == 255 and stretched[3, 3, 2] == 255
    masked = np.ma.masked_array(bands, mask=np.zeros_like(bands, dtype=bool))
    masked.mask[:, 1, 1] = True
    assert tuple(to_rgb(masked)[1, 1]) == NODATA_RGB


def test_to_rgb_errors():
    with pytest.raises(LodestarError, match="shape"):
        to_rgb(np.ma.masked_array(np.zeros((2, 2, 2, 2))))
    with pytest.raises(LodestarError, match="colour map"):
        to_rgb(np.ma.masked_array(np.zeros((2, 2))), colormap="no-such-map")


def test_nice_step():
    assert nice_step(9000) == 2000
    assert nice_step(1.0) == 0.2
    assert nice_step(37) == 10


def test_render_png_maps_pixels_back_to_map(tmp_path):
    data = np.random.default_rng(1).random((200, 300)).astype("float32")
    path = write_tif(tmp_path / "index.tif", data)
    out = tmp_path / "out" / "index.png"
    image = render_png(RasterReader(path), path=out, max_size=150, grid=False, north_arrow=False)
    assert image.size == (150, 100)
    assert out.read_bytes() == image.png_bytes
    assert decode(image.png_bytes).shape == (100, 150, 3)
    x, y = image.grid.pixel_to_map(0, 0)
    assert (float(x), float(y)) == (500_000.0, 4_000_000.0)
    x, y = image.grid.pixel_to_map(150, 100)
    assert (float(x), float(y)) == (503_000.0, 3_998_000.0)


def test_render_png_window_grid_and_arrow(tmp_path):
    data = np.full((100, 100), 1.0, dtype="float32")
    data[:, 50:] = 2.0
    path = write_tif(tmp_path / "index.tif", data)
    reader = RasterReader(path)
    plain = render_png(reader, bounds=(500_200, 3_999_300, 500_600, 3_999_700), grid=False, north_arrow=False,
                       min_size=0)
    assert plain.size == (40, 40)
    assert plain.grid.bounds == (500_200.0, 3_999_300.0, 500_600.0, 3_999_700.0)
    pixels = decode(plain.png_bytes)
    assert (pixels[:, :30] == pixels[0, 0]).all() and (pixels[:, 30:] == pixels[0, 39]).all()
    enlarged = render_png(reader, bounds=(500_200, 3_999_300, 500_600, 3_999_700), grid=False, north_arrow=False,
                          min_size=256)
    assert enlarged.size == (240, 240)           # whole factor 6
    assert enlarged.grid.bounds == plain.grid.bounds
    drawn = decode(render_png(reader, grid=True, north_arrow=True, min_size=0).png_bytes)
    bare = decode(render_png(reader, grid=False, north_arrow=False, min_size=0).png_bytes)
    assert (drawn != bare).any(axis=2).sum() > 50


def test_render_png_raster_set_and_errors(tmp_path):
    data = np.arange(60 * 80, dtype="float32").reshape(60, 80)
    data[:10] = -9999.0
    path = write_tif(tmp_path / "a.tif", data)
    raster_set = RasterSet([LayerSpec(path, "hydrothermal_alteration")])
    image = render_png(raster_set, "a", grid="fraction", min_size=0)
    assert image.size == (80, 60) and image.grid.crs == raster_set.crs
    assert tuple(decode(render_png(raster_set, "a", grid=False, north_arrow=False, min_size=0).png_bytes)[0, 0]) \
        == NODATA_RGB
    with pytest.raises(LodestarError, match="zero area"):
        render_png(raster_set, "a", bounds=(500_100, 3_999_500, 500_100, 3_999_600))
    with pytest.raises(LodestarError, match="does not cover"):
        render_png(raster_set, "a", bounds=(0, 0, 10, 10))
    with pytest.raises(LodestarError, match="no valid pixels"):
        render_png(raster_set, "a", bounds=(500_000, 3_999_900, 500_800, 4_000_000))
    with pytest.raises(LodestarError, match="Name the layer"):
        render_png(raster_set)


def test_auto_stretch_keeps_rgb_renderings_as_they_are(tmp_path):
    from lodestar.plugin.tools.evidence_view import evidence_view

    pixels = np.zeros((3, 20, 30), dtype="uint8")
    pixels[0], pixels[1], pixels[2] = 200, 120, 40
    pixels[:, 5:10, 5:10] = 90
    path = write_tif(tmp_path / "render.tif", pixels, nodata=None)
    reader = RasterReader(path)
    shown = decode(render_png(reader, grid=False, north_arrow=False, min_size=0).png_bytes)
    assert tuple(shown[0, 0]) == (200, 120, 40) and tuple(shown[6, 6]) == (90, 90, 90)
    stretched = decode(render_png(reader, grid=False, north_arrow=False, min_size=0, stretch=(0, 100)).png_bytes)
    assert tuple(stretched[0, 0]) == (255, 255, 0)
    view = decode(evidence_view(reader, zoom=1, out_size=30).png_bytes)
    assert tuple(view[0, 0]) == (200, 120, 40)
