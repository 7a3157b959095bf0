"""alteration_indices: band ratios by preset, band names or wavelengths; nodata; tagged outputs."""
from __future__ import annotations

import numpy as np
import pytest
import rasterio
from rasterio.transform import from_origin

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.raster_io import RasterReader
from lodestar.plugin.tools.alteration_indices import NODATA, alteration_indices, resolve_bands

ASTER_UM = (0.556, 0.661, 0.807, 1.656, 2.167, 2.209, 2.262, 2.336, 2.400)


def write_stack(path, data, nodata=None, descriptions=None, band_tags=None, crs="EPSG:32611"):
    with rasterio.open(path, "w", driver="GTiff", width=data.shape[2], height=data.shape[1], count=data.shape[0],
                       dtype="float32", crs=crs, transform=from_origin(600_000, 4_400_000, 15, 15),
                       nodata=nodata) as ds:
        ds.write(data.astype("float32"))
        for i in range(data.shape[0]):
            if descriptions:
                ds.set_band_description(i + 1, descriptions[i])
            if band_tags:
                ds.update_tags(i + 1, **band_tags[i])
    return path


def aster_stack(seed=0):
    """9-band reflectance with a clay (AlOH) anomaly: band 6 (2.21 um) absorbed in rows 20-24, cols 30-35."""
    rng = np.random.default_rng(seed)
    data = rng.uniform(0.25, 0.30, (9, 40, 50)).astype("float32")
    data[5, 20:25, 30:36] *= 0.7
    return data


def read(path):
    with rasterio.open(path) as ds:
        return ds.read(1, masked=True), ds.tags(), ds.nodata, ds.crs, ds.descriptions


def test_aster_preset_clay_anomaly_is_the_aloh_maximum(tmp_path):
    data = aster_stack()
    data[0, 0, 0] = 0.0  # b1 = 0: ferric b2/b1 divides by zero there
    data[4, 1, 1] = -1   # nodata in b5
    source = write_stack(tmp_path / "aster.tif", data, nodata=-1)
    before = source.read_bytes()
    outputs = alteration_indices(source, tmp_path / "out", sensor="aster")
    assert source.read_bytes() == before
    assert [o.name for o in outputs] == ["aloh", "argillic", "mgoh", "ferric_iron", "ferrous_iron"]
    by_name = {o.name: o for o in outputs}
    aloh, tags, nodata, crs, descriptions = read(by_name["aloh"].path)
    assert by_name["aloh"].path.name == "aster_aloh.tif" and by_name["aloh"].bands == {"b5": 5, "b6": 6, "b7": 7}
    assert tags["LODESTAR_ROLE"] == "hydrothermal_alteration" and tags["LODESTAR_FORMULA"] == "(b5 + b7) / b6"
    assert tags["LODESTAR_SOURCE"] == "aster.tif" and tags["LODESTAR_SENSOR"] == "aster"
    assert nodata == NODATA and crs.to_epsg() == 32611 and descriptions[0].startswith("aloh")
    row, col = np.unravel_index(np.ma.argmax(aloh), aloh.shape)
    assert 20 <= row < 25 and 30 <= col < 36
    expected = (data[4, 22, 32] + data[6, 22, 32]) / data[5, 22, 32]
    assert aloh[22, 32] == pytest.approx(expected, rel=1e-5)
    assert aloh.mask[1, 1] and aloh.mask.sum() == 1          # nodata in b5 only
    ferric = read(by_name["ferric_iron"].path)[0]
    assert ferric.mask[0, 0] and ferric[5, 5] == pytest.approx(data[1, 5, 5] / data[0, 5, 5], rel=1e-5)
    ferrous = read(by_name["ferrous_iron"].path)[0]
    assert ferrous.mask[1, 1] and ferrous[0, 0] == pytest.approx(data[4, 0, 0] / data[2, 0, 0], rel=1e-5)  # b1/b2 = 0
    assert ferrous[3, 4] == pytest.approx(data[4, 3, 4] / data[2, 3, 4] + data[0, 3, 4] / data[1, 3, 4], rel=1e-5)
    roles = {o.name: o.role for o in outputs}
    assert roles == {"aloh": "hydrothermal_alteration", "argillic": "argillic_alteration",
                     "mgoh": "propylitic_alteration", "ferric_iron": "iron_oxide", "ferrous_iron": "iron_oxide"}
    argillic = read(by_name["argillic"].path)[0]
    assert argillic[7, 8] == pytest.approx((data[3, 7, 8] + data[5, 7, 8]) / data[4, 7, 8], rel=1e-5)


def test_aster_with_tir_adds_silica_and_blocks_match_whole(tmp_path):
    data = np.concatenate([aster_stack(), np.random.default_rng(1).uniform(0.9, 0.95, (5, 40, 50))]).astype("float32")
    source = write_stack(tmp_path / "aster14.tif", data)
    outputs = alteration_indices(source, tmp_path, sensor="aster", indices="quartz, silica", block_rows=7)
    quartz = read(outputs[0].path)[0]
    assert outputs[0].role == "silicification"
    np.testing.assert_allclose(quartz, data[10] ** 2 / (data[9] * data[11]), rtol=1e-5)
    silica = read(outputs[1].path)[0]
    np.testing.assert_allclose(silica, data[12] / data[9], rtol=1e-5)


def test_bands_found_from_wavelength_metadata_in_any_order(tmp_path):
    data = aster_stack()
    order = [8, 2, 5, 0, 7, 4, 1, 6, 3]  # file band i holds ASTER band order[i] + 1
    shuffled = data[order]
    tags = [{"wavelength": str(ASTER_UM[j] * 1000), "wavelength_units": "nm"} for j in order]
    source = write_stack(tmp_path / "shuffled.tif", shuffled, band_tags=tags)
    preset, bands, how = resolve_bands(RasterReader(source))
    assert preset.name == "aster" and how == "band wavelengths"
    assert bands["b6"] == order.index(5) + 1 and bands["b1"] == order.index(0) + 1
    aloh = read(alteration_indices(source, tmp_path / "o", indices=["aloh"])[0].path)[0]
    row, col = np.unravel_index(np.ma.argmax(aloh), aloh.shape)
    assert 20 <= row < 25 and 30 <= col < 36


def test_landsat_and_sentinel_presets(tmp_path):
    rng = np.random.default_rng(2)
    oli = rng.uniform(0.1, 0.2, (7, 30, 30)).astype("float32")
    oli[6, 5:10, 5:10] *= 0.5                               # b7 absorption: clay high
    source = write_stack(tmp_path / "oli.tif", oli)
    outputs = {o.name: o for o in alteration_indices(source, tmp_path / "oli", sensor="landsat_oli")}
    assert set(outputs) == {"clay", "iron_oxide", "ferrous_iron"}
    clay = read(outputs["clay"].path)[0]
    assert np.unravel_index(np.ma.argmax(clay), clay.shape)[0] in range(5, 10)
    np.testing.assert_allclose(read(outputs["iron_oxide"].path)[0], oli[3] / oli[1], rtol=1e-5)
    np.testing.assert_allclose(read(outputs["ferrous_iron"].path)[0], oli[5] / oli[4], rtol=1e-5)
    # Sentinel-2 by band names in the descriptions (a 4-band subset in an arbitrary order).
    s2 = rng.uniform(0.1, 0.2, (4, 30, 30)).astype("float32")
    named = write_stack(tmp_path / "s2.tif", s2, descriptions=["B12", "B11", "B8A", "B04"], crs="EPSG:4326")
    outputs = {o.name: o for o in alteration_indices(named, tmp_path / "s2", sensor="sentinel2")}
    assert set(outputs) == {"clay", "ferrous_iron"}  # iron_oxide needs B2, absent
    np.testing.assert_allclose(read(outputs["clay"].path)[0], s2[1] / s2[0], rtol=1e-5)
    np.testing.assert_allclose(read(outputs["ferrous_iron"].path)[0], s2[1] / s2[2], rtol=1e-5)
    assert outputs["clay"].bands == {"b11": 2, "b12": 1}
    with rasterio.open(named) as src, rasterio.open(outputs["clay"].path) as out:
        assert out.crs.to_epsg() == 4326 and out.transform == src.transform and out.shape == src.shape


def test_band_map_overrides(tmp_path):
    data = np.random.default_rng(3).uniform(0.2, 0.3, (3, 10, 10)).astype("float32")
    source = write_stack(tmp_path / "swir.tif", data)
    out = alteration_indices(source, tmp_path, sensor="aster", band_map={"b5": 3, "b6": 1, "b7": 2})
    assert [o.name for o in out] == ["aloh"]
    np.testing.assert_allclose(read(out[0].path)[0], (data[2] + data[1]) / data[0], rtol=1e-5)
    assert read(out[0].path)[1]["LODESTAR_BANDS"] == "b5=3,b6=1,b7=2"


def test_errors_name_presets_and_bands(tmp_path):
    source = write_stack(tmp_path / "three.tif", np.ones((3, 5, 5), dtype="float32"))
    with pytest.raises(LodestarError, match="aster, landsat_oli, sentinel2"):
        alteration_indices(source, tmp_path, sensor="modis")
    with pytest.raises(LodestarError, match="Choose a sensor preset: aster, landsat_oli, sentinel2"):
        alteration_indices(source, tmp_path)
    with pytest.raises(LodestarError, match="has 3 bands, not a standard ASTER"):
        alteration_indices(source, tmp_path, sensor="aster")
    nine = write_stack(tmp_path / "nine.tif", aster_stack())
    with pytest.raises(LodestarError, match="needs .* bands b10, b11, b12.*bands found: b1, b2"):
        alteration_indices(nine, tmp_path, sensor="aster", indices="quartz")
    with pytest.raises(LodestarError, match="available: aloh, argillic, mgoh"):
        alteration_indices(nine, tmp_path, sensor="aster", indices="ndvi")
    with pytest.raises(LodestarError, match="has no band 'b99'"):
        alteration_indices(nine, tmp_path, sensor="aster", band_map={"b99": 1})
    assert not list(tmp_path.glob("*_*.tif"))  # nothing half-written
