"""Role and favourable-side guesses from a layer's name and data (plugin.roles)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import rasterio
from rasterio.transform import from_origin

from lodestar.plugin.roles import guess_favourable, guess_role

GREAT_BASIN = Path(__file__).resolve().parents[1] / "data" / "great-basin-gold"


def _raster(path: Path, values: np.ndarray) -> Path:
    with rasterio.open(path, "w", driver="GTiff", width=values.shape[1], height=values.shape[0], count=1,
                       dtype=values.dtype, crs="EPSG:32611", transform=from_origin(500000, 4000000, 30, 30)) as ds:
        ds.write(values[None])
    return path


def test_distance_classes_of_faults_are_favourable_low(tmp_path):
    # the Great Basin's Portuguese-named distance classes: 'falha' (fault), reclassified
    assert guess_role("falha_rcl") == "structure"
    assert guess_favourable(GREAT_BASIN / "falha_rcl.tif", "structure", "falha_rcl") == "low"
    graded = _raster(tmp_path / "faults_prox.tif", np.arange(400, dtype="uint8").reshape(20, 20) % 7)
    assert guess_favourable(graded, "structure", "faults_prox") == "low"
    assert guess_favourable(tmp_path / "anything.tif", "structure", "Distance to faults (m)") == "low"


def test_masks_densities_and_other_roles_stay_favourable_high(tmp_path):
    mask = _raster(tmp_path / "faults.tif", (np.arange(400).reshape(20, 20) % 5 == 0).astype("uint8"))
    assert guess_favourable(mask, "structure", "faults") == "high"
    density = _raster(tmp_path / "lineaments.tif", np.linspace(0, 1, 400, dtype="float32").reshape(20, 20))
    assert guess_favourable(density, "structure", "lineament density") == "high"
    assert guess_favourable(GREAT_BASIN / "as_rcl.tif", "geochemistry", "as_rcl") == "high"
    assert guess_favourable(GREAT_BASIN / "gbfaults3.gpkg", "structure", "gbfaults3") == "high"  # a vector


@pytest.mark.parametrize("name, role", [
    ("al_rcl", "geochemistry"), ("ca_rcl", "geochemistry"), ("k_rcl", "geochemistry"),  # a survey's element classes
    ("Cu", "geochemistry"), ("co_ppb", "geochemistry"), ("Sn", "geochemistry"),
    ("radiometric K", "geophysics"), ("eTh", "geophysics"), ("K/Th ratio", "geophysics"), ("U ppm", "geophysics"),
    ("K_pct", "geophysics"), ("Bouguer BA", "geophysics"),
    ("stream sediment gamma", "geochemistry"), ("magnetite in stream sediment", "geochemistry"),  # words first
    ("CA_geology", "geological_map"), ("Te Kuiti formation", "geological_map"), ("Ca-rich units", "geological_map"),
    ("Al-OH depth", "hydrothermal_alteration"),
    ("stdyarea250", "other"), ("k-means clusters", "other"), ("gold", "other"), ("Landsat band 7", "other"),
    ("arsenic_ppm", "geochemistry"), ("NURE_As_ppm", "geochemistry"), ("ss_as", "geochemistry"),
    ("Electrical ohm-m", "other"), ("AlOH_depth", "hydrothermal_alteration"),
])
def test_element_symbols_name_geochemistry_after_every_word_and_radiometrics_are_geophysics(name, role):
    assert guess_role(name) == role


def test_element_symbols_are_read_in_the_name_and_file_name_not_in_metadata():
    assert guess_role("Landsat 8 band 7", "", "processed by K. Smith") == "other"
    assert guess_role("scene 12", "", "Supplied by the U.S. agency") == "other"  # no uranium in an abstract
    assert guess_role("survey 12", "", "Th and U channels") == "other"


def test_words_of_the_name_win_over_words_of_the_metadata():
    assert guess_role("Radiometric K", "", "gamma-ray spectrometry of the top 30 cm of soil") == "geophysics"
    assert guess_role("TMI grid", "", "Aeromagnetic survey over a sedimentary basin") == "geophysics"
    assert guess_role("survey 12", "", "stream sediment samples") == "geochemistry"  # metadata when names say nothing
    assert guess_role("survey 12", "", named=["survey 12", "as_rcl"]) == "geochemistry"


@pytest.mark.parametrize("name, role", [
    ("LC08_L2SP_040033_20200101_20200115_02_T1_SR_B4", "other"),       # Landsat surface reflectance, band 4
    ("LC09_L2SP_040033_20220101_20220105_02_T1_ST_B10", "other"),      # Landsat surface temperature
    ("T11SKA_20200101T183751_B04_10m", "other"), ("S2A_MSIL2A_B8A", "other"),   # Sentinel-2 bands
    ("MN_DEM", "other"), ("Co SRTM DEM 30m", "other"), ("hillshade", "other"), ("elevation_m", "other"),
    ("Landsat ferric iron ratio B4/B2", "iron_oxide"), ("ASTER B4/B6 AlOH", "hydrothermal_alteration"),  # words first
    ("Mn_ppm", "geochemistry"), ("Sr ppm", "geochemistry"),
])
def test_single_satellite_bands_and_elevation_are_other_not_element_symbols(name, role):
    """A band of a Landsat or Sentinel scene and a terrain model are no evidence of their own: "SR" (surface
    reflectance) and "MN" (a map sheet) are not strontium and manganese."""
    assert guess_role(name) == role


def test_band_names_count_after_the_words_of_the_metadata_and_only_in_the_names():
    assert guess_role("as_rcl", "as_rcl.tif", "Band 1") == "geochemistry"      # any raster's band is "Band 1"
    assert guess_role("aster_b4_b6", "", "AlOH index from ASTER bands 4 and 6") == "hydrothermal_alteration"
    assert guess_role("S2_B11_B12", "", "SWIR clay ratio") == "argillic_alteration"
    assert guess_role("Cu_B1") == "geochemistry" and guess_role("Au_b2") == "geochemistry"   # batch tags, not bands
