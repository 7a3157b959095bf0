"""evidence_view: GeoScout zoom clamped by shifting, crops in map coordinates, sharpen / contrast, files."""
from __future__ import annotations

import io

import numpy as np
import pytest
import rasterio
from affine import Affine
from PIL import Image
from pyproj import CRS
from rasterio.transform import from_origin

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.raster_io import LayerSpec, RasterGrid, RasterReader, RasterSet
from lodestar.plugin.tools.evidence_view import evidence_view, view_window, world_file_text

PIXEL = 10.0
X0, Y0 = 500_000.0, 4_000_000.0


@pytest.fixture
def raster(tmp_path):
    rows, cols = np.mgrid[0:200, 0:400]
    data = (np.sin(rows / 7.0) + np.cos(cols / 11.0)).astype("float32")
    data[100:120, 300:340] = 5.0                        # a bright target
    path = tmp_path / "index.tif"
    with rasterio.open(path, "w", driver="GTiff", width=400, height=200, count=1, dtype="float32",
                       crs="EPSG:32611", transform=from_origin(X0, Y0, PIXEL, PIXEL), nodata=-9999.0) as dst:
        dst.write(data, 1)
    return path


def decode(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)


def test_centre_and_zoom_window():
    grid = RasterGrid(Affine(PIXEL, 0, X0, 0, -PIXEL, Y0), 400, 200, CRS.from_epsg(32611))
    assert view_window(grid, center=(0.5, 0.5), zoom=2) == ((100, 50, 200, 100), [])
    (window, notes) = view_window(grid, center=(0.95, 0.05), zoom=4)
    assert window == (300, 0, 100, 50) and "shifted" in notes[0]         # same size, moved inside
    assert view_window(grid, center=(0.0, 1.0), zoom=4)[0] == (0, 150, 100, 50)
    assert view_window(grid, center=(0.3, 0.3), zoom=1)[0] == (0, 0, 400, 200)
    window, notes = view_window(grid, bbox=(X0 - 500, Y0 - 600, X0 + 500, Y0 - 100))
    assert window == (0, 10, 100, 50) and "shifted" in notes[0]
    window, notes = view_window(grid, bbox=(X0 - 1000, Y0 - 3000, X0 + 5000, Y0 + 1000))
    assert window == (0, 0, 400, 200) and "larger than the layer" in notes[0]
    with pytest.raises(LodestarError, match="zero area"):
        view_window(grid, bbox=(X0, Y0 - 100, X0, Y0))
    with pytest.raises(LodestarError, match="outside the layer"):
        view_window(grid, bbox=(0, 0, 100, 100))
    with pytest.raises(LodestarError, match="below 1"):
        view_window(grid, center=(0.5, 0.5), zoom=0.5)
    with pytest.raises(LodestarError, match="not both"):
        view_window(grid, bbox=(X0, Y0 - 100, X0 + 100, Y0), center=(0.5, 0.5))


def test_view_of_a_bbox_maps_back_to_the_map(raster, tmp_path):
    target = (X0 + 3000, Y0 - 1200, X0 + 3400, Y0 - 1000)        # the bright block
    out = tmp_path / "views" / "target.png"
    view = evidence_view(RasterReader(raster), bbox=target, out_size=200, out_path=out)
    assert view.bounds == target and view.size == (200, 100)
    assert view.grid.bounds == pytest.approx(target)
    assert out.exists() and view.world_file == out.with_suffix(".pgw")
    lines = view.world_file.read_text().split()
    assert [float(v) for v in lines] == pytest.approx([2.0, 0.0, 0.0, -2.0, X0 + 3001, Y0 - 1001])
    assert 'AUTHORITY["EPSG","32611"]' in out.with_name("target.png.aux.xml").read_text()
    with rasterio.Env(GDAL_PAM_ENABLED="YES"):                 # QGIS / GDAL read it in place, with its CRS
        back = RasterReader(out)
    assert back.grid.crs.to_epsg() == 32611
    assert back.grid.bounds == pytest.approx(target)
    assert view.png_bytes == out.read_bytes()
    pixels = decode(view.png_bytes)
    assert (pixels == pixels[50, 100]).all()                  # the whole view is the uniform target


def test_zoomed_view_is_shifted_not_shrunk(raster):
    view = evidence_view(RasterReader(raster), center=(0.99, 0.99), zoom=4, out_size=100)
    assert view.size == (100, 50)
    assert view.bounds == (X0 + 3000, Y0 - 2000, X0 + 4000, Y0 - 1500)
    assert view.notes and "shifted" in view.notes[0]


def test_sharpen_and_contrast_change_the_image(raster):
    reader = RasterReader(raster)
    plain = decode(evidence_view(reader, center=(0.25, 0.5), zoom=2, out_size=128).png_bytes)
    sharp = decode(evidence_view(reader, center=(0.25, 0.5), zoom=2, out_size=128, sharpen=2.0).png_bytes)
    strong = decode(evidence_view(reader, center=(0.25, 0.5), zoom=2, out_size=128, contrast=2.0).png_bytes)
    assert (sharp != plain).any()
    # unsharp masking adds local contrast: the image's gradients grow
    assert np.abs(np.diff(sharp, axis=1)).mean() > np.abs(np.diff(plain, axis=1)).mean()
    assert strong.std() > plain.std()


def test_geotiff_output_and_raster_set_source(raster, tmp_path):
    other = tmp_path / "other.tif"
    with rasterio.open(other, "w", driver="GTiff", width=50, height=50, count=1, dtype="float32",
                       crs="EPSG:32611", transform=from_origin(X0 + 1000, Y0 - 500, 20, 20)) as dst:
        dst.write(np.ones((1, 50, 50), dtype="float32"))
    raster_set = RasterSet([LayerSpec(raster, "argillic_alteration"), LayerSpec(other, "other")])
    out = tmp_path / "view.tif"
    view = evidence_view(raster_set, "index", center=(0.5, 0.5), zoom=1, out_path=out, out_size=64)
    assert view.world_file is None
    with rasterio.open(out) as ds:
        assert ds.count == 3 and ds.crs.to_epsg() == 32611
        assert ds.bounds == pytest.approx(raster_set.grid.bounds)
    assert raster_set.grid.bounds == (X0 + 1000, Y0 - 1500, X0 + 2000, Y0 - 500)    # the common extent


def test_errors(raster, tmp_path):
    reader = RasterReader(raster)
    with pytest.raises(LodestarError, match=r"\.png or \.tif"):
        evidence_view(reader, out_path=tmp_path / "view.jpg")
    with pytest.raises(LodestarError, match="Sharpen"):
        evidence_view(reader, sharpen=-1)
    with pytest.raises(LodestarError, match="Name the layer"):
        evidence_view(RasterSet([LayerSpec(raster, "other")]))
    assert not (tmp_path / "view.jpg").exists()


def test_world_file_text_uses_pixel_centres():
    assert world_file_text(Affine(2, 0, 100, 0, -2, 50)).split() == ["2.0", "0.0", "0.0", "-2.0", "101.0", "49.0"]
