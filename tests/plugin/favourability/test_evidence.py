"""One layer's membership map on the analysis grid, from rasters, a coded map, fault lines and unit polygons."""
from __future__ import annotations

import numpy as np
import pytest
from shapely.geometry import LineString

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.favourability.evidence import EvidenceSpec, membership_map

X0, Y0 = 400_000.0, 4_500_000.0


def test_spec_round_trip_and_words():
    spec = EvidenceSpec("faults", "structure", "vector", "distance_m", "small", {"midpoint": 1500.0, "spread": 3.0},
                        0.8, "near faults")
    again = EvidenceSpec.from_dict(spec.to_dict())
    assert again == spec
    assert spec.transformation_text == "distance to features (m)"
    assert spec.membership_text == "fuzzy small (midpoint 1500, spread 3)"
    units = EvidenceSpec("geology", "geological_map", "categorical", "units", params={"units": ["LPZE", "LPZ"],
                                                                                       "outside": 0.1})
    assert units.transformation_text == "favourable units: LPZE, LPZ"
    assert units.membership_text == "as transformed (outside 0.1)"
    with pytest.raises(LodestarError, match="transform must be one of"):
        EvidenceSpec("x", "other", "index", "sqrt")
    with pytest.raises(LodestarError, match="favourable units"):
        EvidenceSpec("x", "geological_map", "categorical", "units")
    with pytest.raises(LodestarError, match="weight"):
        EvidenceSpec("x", "other", "index", "none", weight=-1)


def test_percentile_rank_of_a_raster_is_masked_outside_the_analysed_area(raster_set):
    out = membership_map(raster_set, EvidenceSpec("As", "geochemistry", "index", "percentile_rank"))
    assert out.dtype == np.float32 and out.shape == (6, 8)
    assert out.mask[1:, 7].all() and not out.mask[:, :7].any() and not out.mask[0, 7]
    # 43 distinct valid values; the value 9 (row 1, col 0) has 8 below it
    assert out[0, 0] == 0.0 and out[5, 6] == 1.0
    assert out[1, 0] == pytest.approx(8 / 42)


def test_favourable_low_raster_is_inverted(raster_set):
    out = membership_map(raster_set, EvidenceSpec("fault distance", "structure", "index", "percentile_rank",
                                                  "invert"))
    # column c holds 6 ties at ranks 6c + 1 ... 6c + 6 of 43: mean rank 6c + 3.5, scaled (6c + 2.5) / 42
    expected = 1 - (6 * np.arange(7) + 2.5) / 42
    np.testing.assert_allclose(out[2, :7], expected, atol=1e-6)


def test_coded_map_scored_by_unit_words_through_its_legend(raster_set):
    spec = EvidenceSpec("geology", "geological_map", "categorical", "units", params={"units": ["carbonate"],
                                                                                     "outside": 0.1})
    out = membership_map(raster_set, spec)
    np.testing.assert_allclose(out[3, :7], [0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0], atol=1e-6)
    assert out.mask[3, 7]


def test_fault_lines_become_a_fuzzy_small_distance(raster_set):
    spec = EvidenceSpec("faults", "structure", "vector", "distance_m", "small", {"midpoint": 200.0, "spread": 2.0})
    out = membership_map(raster_set, spec)
    # the fault runs through column 0: distance 100 c metres, 1 / (1 + (c / 2) ** 2)
    expected = 1 / (1 + (np.arange(7) / 2.0) ** 2)
    np.testing.assert_allclose(out[0, :7], expected, atol=1e-6)
    assert out.mask[1:, 7].all()


def test_unit_polygons_are_rasterized_and_matched_by_name(raster_set):
    spec = EvidenceSpec("unit polygons", "geological_map", "vector", "units", params={"units": ["dolomite"]})
    out = membership_map(raster_set, spec)
    np.testing.assert_allclose(out[1, :7], [0, 0, 0, 0, 1, 1, 1])


def test_extra_data_stands_in_for_a_file(raster_set):
    given = np.tile(np.linspace(0, 70, 8), (6, 1))
    spec = EvidenceSpec("derived", "other", "index", "none", "linear", {"low": 0.0, "high": 40.0})
    out = membership_map(raster_set, spec, extra={"derived": given})
    np.testing.assert_allclose(out[0, :7], [0, 0.25, 0.5, 0.75, 1, 1, 1])
    assert out.mask[1:, 7].all()
    line = LineString([(X0 + 350, Y0), (X0 + 350, Y0 - 600)])  # through column 3
    spec = EvidenceSpec("sketched faults", "structure", "vector", "distance_m", "small", {"midpoint": 100.0})
    out = membership_map(raster_set, spec, extra={"sketched faults": [line]})
    assert out[0, 3] == 1.0 and out[0, 4] == pytest.approx(0.5)
    with pytest.raises(LodestarError, match="not on the analysis grid"):
        membership_map(raster_set, EvidenceSpec("derived", "other", "index", "none"), extra={"derived": given[:3]})


def test_a_membership_without_its_parameters_says_which(raster_set):
    with pytest.raises(LodestarError, match="needs params\\['midpoint'\\]"):
        membership_map(raster_set, EvidenceSpec("As", "geochemistry", "index", "none", "large"))


def test_ground_no_unit_polygon_holds_is_in_none_of_the_maps_units_within_its_extent(case_files, tmp_path):
    """A map of greenstone-belt polygons says where the belts are: within its extent a cell no polygon holds scores as
    the other units do (before, it had no data there, and the other layers alone scored it); beyond its extent the
    map has no data. Block by block the same."""
    import geopandas as gpd
    import rasterio
    from shapely.geometry import box

    from lodestar.plugin.favourability import blockwise
    from lodestar.plugin.favourability.overlay import favourability_surface
    from lodestar.plugin.raster_io import LayerSpec, RasterSet

    belts = tmp_path / "belts.gpkg"
    gpd.GeoDataFrame({"unit": ["greenstone", "greenstone"]},
                     geometry=[box(X0, Y0 - 300, X0 + 300, Y0), box(X0 + 400, Y0 - 600, X0 + 600, Y0 - 300)],
                     crs="EPSG:32611").to_file(belts, driver="GPKG")
    layers = [LayerSpec(case_files["arsenic"], "geochemistry", "As"), LayerSpec(belts, "geological_map", "belts")]
    raster_set = RasterSet(layers)
    belts_spec = EvidenceSpec("belts", "geological_map", "vector", "units",
                              params={"units": ["greenstone"], "outside": 0.1})
    out = membership_map(raster_set, belts_spec)
    np.testing.assert_allclose(out[0, :6], [1, 1, 1, 0.1, 0.1, 0.1])
    np.testing.assert_allclose(out[4, :6], [0.1, 0.1, 0.1, 0.1, 1, 1])
    assert out.mask[:, 6:].all() and not out.mask[:, :6].any()     # column 6 lies beyond the belts' extent
    every_unit = EvidenceSpec("belts", "geological_map", "vector", "units", params={"units": ["*"], "outside": 0.1})
    np.testing.assert_allclose(membership_map(raster_set, every_unit)[0, :6], [1, 1, 1, 0.1, 0.1, 0.1])  # no unit
    for spec in (belts_spec, every_unit):
        specs = [EvidenceSpec("As", "geochemistry", "index", "percentile_rank"), spec]
        expected = favourability_surface(raster_set, specs).values
        path = blockwise.write_full_resolution(layers, specs, tmp_path / "full.tif", block=16)
        with rasterio.open(path) as source:
            got = source.read(1, masked=True)
        np.testing.assert_allclose(got.filled(-1), expected.filled(-1), atol=1e-6)
