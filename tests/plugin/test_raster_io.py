"""raster_io: the analysis grid of several layers, nodata-aware areas, reprojection, pixel <-> map."""
from __future__ import annotations

import numpy as np
import pytest
from affine import Affine
from lodestar_testdata import write_geotiff
from rasterio.transform import from_origin

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.raster_io import LayerSpec, RasterGrid, RasterSet

X0, Y0, PX = 500_000.0, 4_000_000.0, 30.0


def write_tif(path, data, x0=X0, y0=Y0, px=PX, crs="EPSG:32611", nodata=-9999.0):
    return write_geotiff(path, data, from_origin(x0, y0, px, px), crs, nodata, dtype="float32")


def test_layer_offset_by_a_fraction_of_a_pixel_keeps_its_edge_pixels(tmp_path):
    """Layer b starts 1.5 pixels inside a: the analysis grid is b's extent, which a covers whole, so a has
    data in every analysis pixel (its last row and column used to come out as nodata)."""
    a = write_tif(tmp_path / "a.tif", np.ones((100, 100)))
    b = write_tif(tmp_path / "b.tif", np.ones((100, 100)), x0=X0 + 45, y0=Y0 - 45)
    rs = RasterSet([LayerSpec(a, "other"), LayerSpec(b, "other")])
    assert (rs.grid.width, rs.grid.height) == (98, 98)
    assert rs.grid.transform == Affine(PX, 0, X0 + 45, 0, -PX, Y0 - 45)
    for name in ("a", "b"):
        data = rs.read(name)
        assert not np.ma.getmaskarray(data).any()
        assert np.allclose(data.filled(np.nan), 1.0)


def test_layers_meet_where_each_holds_data_not_where_their_frames_do(tmp_path):
    """b is a's ground less its last 20 columns; padded with a nodata border of 30 pixels, b's frame covers all
    of a, but the analysis stays on the ground both hold data for: the grid of the unpadded pair, the same values.
    A decimated read of a large raster (over the budget) finds its data box to within two of its cells, outward,
    on its own pixel edges, and misses no line of data thinner than a decimated cell."""
    values = np.arange(100 * 100, dtype="float32").reshape(100, 100)
    a = write_tif(tmp_path / "a.tif", values)
    b = write_tif(tmp_path / "b.tif", values[:, :80])
    padded = np.full((160, 140), -9999.0, dtype="float32")
    padded[30:130, 30:110] = values[:, :80]
    b_padded = write_tif(tmp_path / "b_padded.tif", padded, x0=X0 - 30 * PX, y0=Y0 + 30 * PX)
    plain = RasterSet([LayerSpec(a, "other"), LayerSpec(b, "other")])
    wide = RasterSet([LayerSpec(a, "other"), LayerSpec(b_padded, "other", "b")])
    assert plain.grid == wide.grid == RasterGrid(Affine(PX, 0, X0, 0, -PX, Y0), 80, 100, plain.grid.crs)
    assert np.array_equal(wide.read("b").filled(0), plain.read("b").filled(0))
    assert wide.valid_mask().all()
    large = np.full((2400, 2400), -9999.0, dtype="float32")
    large[1000:1500, 700:1900] = 1.0
    reader = RasterSet([LayerSpec(write_tif(tmp_path / "large.tif", large, px=10.0), "other")]).readers["large"]
    xmin, ymin, xmax, ymax = reader.data_bounds()
    assert X0 + 6_970 <= xmin <= X0 + 7_000 and X0 + 19_000 <= xmax <= X0 + 19_030
    assert Y0 - 15_030 <= ymin <= Y0 - 15_000 and Y0 - 10_000 <= ymax <= Y0 - 9_970
    assert all((v - X0) % 10.0 == 0.0 for v in (xmin, xmax)) and all((Y0 - v) % 10.0 == 0.0 for v in (ymin, ymax))
    large[:, 2398] = 1.0  # a one-pixel flight line near the edge, thinner than a decimated cell
    reader = RasterSet([LayerSpec(write_tif(tmp_path / "line.tif", large, px=10.0), "other")]).readers["line"]
    assert reader.data_bounds()[2] >= X0 + 23_990


def test_a_transparent_border_of_a_rendering_is_no_data(tmp_path):
    """An RGBA rendering whose outer 10 pixels are transparent (alpha 0): those cells are no area and outside its
    data, as its colour bands' masks already said (GDAL never masks the alpha band itself, so they counted); so too
    when the file also declares nodata 0, which makes GDAL ignore the alpha band."""
    import rasterio
    from rasterio.enums import ColorInterp

    rgba = np.full((4, 60, 60), 200, dtype="uint8")
    rgba[3] = 0
    rgba[3, 10:50, 10:50] = 255
    path = tmp_path / "map.tif"
    with rasterio.open(path, "w", driver="GTiff", width=60, height=60, count=4, dtype="uint8", crs="EPSG:32611",
                       transform=from_origin(X0, Y0, PX, PX), photometric="RGB", alpha="YES") as out:
        out.write(rgba)
        out.colorinterp = [ColorInterp.red, ColorInterp.green, ColorInterp.blue, ColorInterp.alpha]
    rs = RasterSet([LayerSpec(path, "hydrothermal_alteration", "map")])
    assert rs.valid_mask().sum() == 40 * 40
    assert rs.readers["map"].data_bounds() == (X0 + 10 * PX, Y0 - 50 * PX, X0 + 50 * PX, Y0 - 10 * PX)
    assert not np.ma.getmaskarray(rs.read("map"))[:, 30, 30].any()
    with rasterio.open(path, "r+") as ds:  # a nodata value shadows the alpha band for GDAL: still transparent
        ds.nodata = 0
    reader = RasterSet([LayerSpec(path, "hydrothermal_alteration", "map")]).readers["map"]
    assert np.ma.getmaskarray(reader.read())[:, 5, 5].all() and not np.ma.getmaskarray(reader.read([3]))[0, 30, 30]
    assert reader.data_bounds() == (X0 + 10 * PX, Y0 - 50 * PX, X0 + 50 * PX, Y0 - 10 * PX)


def test_valid_area_leaves_nodata_out(tmp_path):
    values = np.ones((10, 20))
    values[:, :5] = -9999.0  # a quarter of the raster is nodata
    rs = RasterSet([LayerSpec(write_tif(tmp_path / "v.tif", values), "other")])
    assert rs.valid_mask().sum() == 150
    assert rs.valid_area() == pytest.approx(150 * PX * PX)


def test_pixel_map_round_trip_and_windows():
    grid = RasterGrid(Affine(PX, 0, X0, 0, -PX, Y0), 40, 20, None)
    x, y = grid.pixel_to_map(0.5, 0.5)
    assert (float(x), float(y)) == (X0 + 15, Y0 - 15)
    col, row = grid.map_to_pixel(X0 + 45, Y0 - 75)
    assert (float(col), float(row)) == (1.5, 2.5)
    assert tuple(float(v) for v in grid.fractions(X0 + 20 * PX, Y0 - 5 * PX)) == (0.5, 0.25)
    window = grid.bounds_window((X0 + 15, Y0 - 95, X0 + 61, Y0 - 30))   # cols 0.5-2.03, rows 1-3.17
    assert (window.col_off, window.row_off, window.width, window.height) == (0, 1, 3, 3)
    half = grid.resized(20, 10)
    assert half.transform == Affine(2 * PX, 0, X0, 0, -2 * PX, Y0) and half.bounds == grid.bounds
    with pytest.raises(LodestarError, match="does not overlap"):
        grid.bounds_window((0, 0, 10, 10))


def test_layers_without_common_area_are_an_error(tmp_path):
    a = write_tif(tmp_path / "a.tif", np.ones((10, 10)))
    b = write_tif(tmp_path / "b.tif", np.ones((10, 10)), x0=X0 + 10_000)
    with pytest.raises(LodestarError, match="^The layers do not overlap: a, b. Choose layers that cover a common"):
        RasterSet([LayerSpec(a, "other"), LayerSpec(b, "other")])
    # two layers meet and a third lies apart: the third is named (before, all three were)
    c = write_tif(tmp_path / "c.tif", np.ones((10, 10)), x0=X0 + 2 * PX)
    with pytest.raises(LodestarError, match="^The layers do not overlap: b lies apart from a, c. Untick it, or "):
        RasterSet([LayerSpec(a, "other"), LayerSpec(b, "other"), LayerSpec(c, "other")])
    # a chain (d meets e, e meets f, d and f apart): no layer lies apart from all the others, all are named
    d, e, f = (write_tif(tmp_path / f"{name}.tif", np.ones((10, 10)), x0=X0 + 5_000 + k * 7 * PX)
               for k, name in enumerate("def"))
    with pytest.raises(LodestarError, match="^The layers do not overlap: d, e, f. Choose layers"):
        RasterSet([LayerSpec(d, "other"), LayerSpec(e, "other"), LayerSpec(f, "other")])


def test_decimated_magnitudes_are_averaged_not_picked(tmp_path):
    """Columns alternate 0 / 1 on a 400 x 400 raster analysed on a 50 x 50 grid: every analysis pixel
    averages to 0.5 (picking every 4th column, as nearest-neighbour decimation does, gives all 0 or all 1)."""
    values = np.tile(np.array([0.0, 1.0], dtype="float32"), (400, 200))
    rs = RasterSet([LayerSpec(write_tif(tmp_path / "stripes.tif", values, px=10.0), "other")], max_pixels=2500)
    assert (rs.grid.width, rs.grid.height) == (50, 50)
    data = rs.read("stripes")[0]
    assert float(data.mean()) == pytest.approx(0.5, abs=0.01) and float(data.std()) < 0.05


def test_a_tiny_layer_cannot_silently_shrink_the_analysis(tmp_path):
    """A 1 x 1 raster among 100 x 100 ones would make the analysis one pixel: refused, naming the layers; a
    layer covering a quarter of the others is analysed with a warning that says what is left out."""
    big = write_geotiff(tmp_path / "big.tif", np.ones((100, 100), "float32"), from_origin(500_000, 4_000_000, 30, 30))
    tiny = write_geotiff(tmp_path / "tiny.tif", np.ones((1, 1), "float32"), from_origin(501_000, 3_999_000, 30, 30))
    with pytest.raises(LodestarError, match=r"only 1 pixel\(s\).*tiny covers 0.0009 km2 against 9 km2 for big"):
        RasterSet([LayerSpec(big, "hydrothermal_alteration", "big"), LayerSpec(tiny, "silicification", "tiny")])
    quarter = write_geotiff(tmp_path / "quarter.tif", np.ones((40, 40), "float32"),
                            from_origin(500_000, 4_000_000, 30, 30))
    rs = RasterSet([LayerSpec(big, "hydrothermal_alteration", "big"), LayerSpec(quarter, "silicification", "q")])
    assert (rs.grid.width, rs.grid.height) == (40, 40)
    assert rs.warnings == ["Warning: the analysis covers only where all layers overlap: 1.44 km2, 16.0% of big; the "
                           "rest of it is not analysed (the smallest layer, q, covers 1.44 km2)."]
    assert rs.warnings[0] in rs.log


def test_points_given_as_evidence_are_refused_with_what_to_do_and_left_alone_as_other():
    """Murchison's deposit points given a geochemistry role: vector evidence is fault lines or unit polygons, so the
    run says where deposits and point samples go (before, a step failed three times on 'mixes geometry types')."""
    from pathlib import Path

    murchison = Path(__file__).resolve().parents[1] / "data" / "murchison-gold"
    belts = LayerSpec(murchison / "greenstone.tif", "geological_map", "greenstone")
    with pytest.raises(LodestarError, match=r"gold holds points; vector evidence is read as fault lines \(structure\) "
                                            r"or unit polygons .* Give known deposits as the deposits layer"):
        RasterSet([belts, LayerSpec(murchison / "gold.gpkg", "geochemistry", "gold")])
    assert RasterSet([belts, LayerSpec(murchison / "gold.gpkg", "other", "gold")]).spec("gold").is_vector
    assert RasterSet([belts, LayerSpec(murchison / "faults.gpkg", "structure", "faults")]).spec("faults").is_vector


def test_points_in_a_layer_declared_of_no_particular_geometry_are_found_from_its_features(tmp_path):
    import fiona
    from fiona.crs import from_epsg

    from lodestar.plugin.vector_io import holds_points

    def write(path, driver, geometries):
        schema = {"geometry": "Unknown", "properties": {"id": "int"}}
        with fiona.open(path, "w", driver=driver, schema=schema, crs=from_epsg(32750)) as sink:
            for i, geometry in enumerate(geometries):
                sink.write({"geometry": geometry, "properties": {"id": i}})
        return path

    point, points = {"type": "Point", "coordinates": (1.0, 2.0)}, {"type": "MultiPoint", "coordinates": [(3.0, 4.0)]}
    line = {"type": "LineString", "coordinates": [(0.0, 0.0), (1.0, 1.0)]}
    assert holds_points(write(tmp_path / "deposits.gpkg", "GPKG", [point, points]))
    assert holds_points(write(tmp_path / "deposits.geojson", "GeoJSON", [point, points]))
    assert not holds_points(write(tmp_path / "mixed.gpkg", "GPKG", [point, line]))
    assert not holds_points(tmp_path / "missing.gpkg")


def test_signed_bytes_read_as_their_signed_values(tmp_path):
    """int8 (GDAL before 3.7: bytes marked PIXELTYPE=SIGNEDBYTE) with nodata -128: every read gives the signed
    values (-1 was read as 255), its nodata masked (GDAL compared it unsigned and masked nothing), decimated reads as
    a float32 copy's, and on another grid only its own values (a code raster, by nearest neighbour)."""
    from rasterio.enums import Resampling
    from rasterio.windows import Window

    from lodestar.plugin.raster_io import RasterReader

    values = np.random.default_rng(0).integers(-128, 128, (120, 90)).astype("int8")
    signed = write_geotiff(tmp_path / "signed.tif", values, from_origin(X0, Y0, PX, PX), nodata=-128, dtype="int8")
    floats = write_tif(tmp_path / "floats.tif", np.where(values == -128, -9999, values))
    reader, copy = RasterReader(signed), RasterReader(floats)
    assert (reader.dtype, reader.signed_bytes, reader.is_integer) == ("int8", True, True)
    read = reader.read()[0]
    assert np.array_equal(read.mask, values == -128) and read.min() == -127
    assert np.array_equal(read.compressed(), values[values != -128].astype("float32"))
    for window in (None, Window(3, 7, 60, 90)):
        for resampling in (Resampling.nearest, Resampling.average):
            mine = reader.read(window=window, out_shape=(37, 29), resampling=resampling)
            theirs = copy.read(window=window, out_shape=(37, 29), resampling=resampling)
            assert np.array_equal(mine.mask, theirs.mask) and np.allclose(mine.compressed(), theirs.compressed())
    finer = write_tif(tmp_path / "finer.tif", np.ones((250, 190)), px=PX * 0.47)
    on_grid = RasterSet([LayerSpec(finer, "other"), LayerSpec(signed, "geophysics", "signed")]).read("signed")
    assert set(np.unique(on_grid.compressed())) <= set(np.unique(values[values != -128]).astype(float))
    assert on_grid.min() < -100 and on_grid.max() > 100


def test_a_class_raster_keeps_its_classes_on_any_grid_and_magnitudes_are_interpolated(tmp_path):
    """Integer classes (no legend, an index role) on a 60 m grid, read onto a 30 m grid and a grid in another CRS:
    only its classes there (bilinear resampling made 6.9s of them), on the analysis grid and in a block of the
    full-resolution surface; a float layer of the same values is interpolated; a float layer given a legend holds
    classes too."""
    from rasterio.windows import Window

    from lodestar.plugin.favourability.blockwise import full_resolution_grid, read_block

    classes = np.random.default_rng(3).integers(1, 26, (60, 60))
    coarse = write_geotiff(tmp_path / "classes.tif", classes, from_origin(X0, Y0, 60, 60), dtype="uint8", nodata=0)
    floats = write_tif(tmp_path / "floats.tif", classes, px=60.0)
    legend = tmp_path / "legend.csv"
    legend.write_text("value,name\n" + "".join(f"{c},unit {c}\n" for c in range(1, 26)), encoding="utf-8")
    fine = write_tif(tmp_path / "fine.tif", np.ones((120, 120)))
    utm12 = write_geotiff(tmp_path / "utm12.tif", np.ones((120, 120), dtype="float32"),
                          from_origin(-40_300.0, 4_016_900.0, 30, 30), crs="EPSG:32612")  # over X0, Y0
    for first in (fine, utm12):
        layers = [LayerSpec(first, "other", "first"), LayerSpec(coarse, "geochemistry", "classes"),
                  LayerSpec(floats, "geochemistry", "floats"),
                  LayerSpec(floats, "geochemistry", "coded", legend=legend)]
        rasters = RasterSet(layers)
        assert rasters.grid.pixel_size[0] < 45
        for name, whole in (("classes", True), ("coded", True), ("floats", False)):
            held = np.unique(rasters.read(name).compressed())
            assert held.size > 10 and (set(held) <= set(range(1, 26))) == whole, name
        full, grid = full_resolution_grid(layers)
        block = read_block(full, "classes", Window(10, 10, 64, 64))
        assert block.count() > 1000 and set(np.unique(block.compressed())) <= set(range(1, 26))
