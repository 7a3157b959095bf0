"""Layers scanned for a place where they stand out together: weak anomalies of two layers at one place are found
there and rare by chance; the same anomalies kilometres apart, or two layers of pure background, are not; a place
where either layer stays under the floor of spreads is no candidate; in a scene a few windows across, a third
layer at the place makes it rarer than two layers can be, while three layers of pure background are not."""
from __future__ import annotations

import numpy as np
from affine import Affine
from rasterio.crs import CRS
from scipy import ndimage
from worlds_b_run import analyse_worlds_b_case

from lodestar.models.offline.coincidence import contrast_map
from lodestar.models.offline.joint_places import _correlation, best_joint_place, chance, shares
from lodestar.plugin.raster_io import RasterGrid

GRID = RasterGrid(Affine(30.0, 0, 500_000.0, 0, -30.0, 7_000_000.0), 300, 300, CRS.from_epsg(32612))
RADII = (4.0, 8.0)


def _background(seed: int) -> np.ndarray:
    """Smooth background (a 3-pixel correlation length) in spreads."""
    rng = np.random.default_rng(seed)
    z = ndimage.gaussian_filter(rng.standard_normal((GRID.height, GRID.width)), 3.0)
    return z / z.std()


def _disc(row: float, col: float, radius: float) -> np.ndarray:
    rows, cols = np.mgrid[0:GRID.height, 0:GRID.width]
    return (np.hypot(rows + 0.5 - row, cols + 0.5 - col) < radius).astype("float64")


def _maps(core: np.ndarray, partner: np.ndarray) -> dict:
    maps = {}
    for radius in RADII:
        maps[("core", radius)] = contrast_map(np.ma.masked_array(core), radius)
        maps[("partner", radius)] = contrast_map(np.ma.masked_array(partner), radius)
    return maps


def _best(core: np.ndarray, partner: np.ndarray):
    return best_joint_place(_maps(core, partner), [("core", "partner", r) for r in RADII], GRID)


def test_shares_rank_each_pixel_among_the_scene():
    scores = np.array([[1.0, 2.0], [3.0, np.nan]])
    got = shares(scores)
    assert got[0, 0] == 1.0 and abs(got[0, 1] - 2 / 3) < 1e-9 and abs(got[1, 0] - 1 / 3) < 1e-9
    assert np.isnan(got[1, 1])


def test_weak_anomalies_of_both_layers_at_one_place_are_found_and_rare():
    # 3 spreads each: neither makes a clear (4-spread) zone of its own
    place = _best(_background(1) + 3.0 * _disc(100, 200, 7), _background(2) + 3.0 * _disc(102, 198, 7))
    col, row = ~GRID.transform * (place.x, place.y)
    assert abs(row - 100) <= 8 and abs(col - 200) <= 8
    assert place.expected < 0.003  # the rarest possible: the top of about 900 places on each layer, two tests
    assert place.layers == ("core", "partner") and min(place.scores) > 2.0


def test_the_same_anomalies_apart_or_pure_background_are_not_rare():
    apart = _best(_background(3) + 2.5 * _disc(100, 200, 7), _background(4) + 2.5 * _disc(220, 60, 7))
    assert apart.expected > 0.02
    chance = [_best(_background(10 + 2 * i), _background(11 + 2 * i)).expected for i in range(20)]
    assert sum(e <= 0.05 for e in chance) <= 1  # the verifier's level: about one scene in twenty by chance
    assert float(np.median(chance)) > 0.1


def test_a_place_under_the_floor_is_no_candidate_and_the_floor_leaves_the_chance_count_alone():
    pairs = [("core", "partner", r) for r in RADII]
    flat = {key: 0.4 * scores for key, scores in _maps(_background(30), _background(31)).items()}
    rarest = best_joint_place(flat, pairs, GRID)  # shares are ranks: the same place at any scale of the scores
    assert rarest is not None and max(rarest.scores) < 2.0
    assert best_joint_place(flat, pairs, GRID, floor=3.0) is None
    system = _maps(_background(1) + 5.0 * _disc(100, 200, 7), _background(2) + 5.0 * _disc(102, 198, 7))
    plain, floored = best_joint_place(system, pairs, GRID), best_joint_place(system, pairs, GRID, floor=3.0)
    assert min(floored.scores) >= 3.0
    assert (floored.x, floored.y, floored.share, floored.expected) == (plain.x, plain.y, plain.share, plain.expected)


def test_a_small_scene_whose_rarest_place_stands_out_by_ordinary_variation_is_no_system(tmp_path):
    """worlds_b seed 4444 case 55 (a 6 x 4.6 km scene, AlOH high over one map unit): the scan's rarest place held
    the greyscale AlOH and the gossan index only 1.2 and 2.8 spreads above their surroundings, yet ranked rarer
    than a share 0.007 of the few windows the scene holds, and the answer was a verified Yes."""
    result, record = analyse_worlds_b_case(4444, 55, "lithology_clay", tmp_path)
    assert result.answer == "B"
    assert "stand out together" not in record["rounds"][-1]["verdict"]["rationale"]


def test_a_third_layer_makes_a_place_in_a_small_scene_rarer_than_two_can_and_pure_background_is_not():
    small = RasterGrid(Affine(30.0, 0, 500_000.0, 0, -30.0, 7_000_000.0), 60, 60, CRS.from_epsg(32612))

    def maps(layers: dict) -> dict:
        return {(name, 4.0): contrast_map(np.ma.masked_array(values), 4.0) for name, values in layers.items()}

    def layer(seed: int, amplitude: float = 0.0) -> np.ndarray:
        z = ndimage.gaussian_filter(np.random.default_rng(seed).standard_normal((60, 60)), 3.0)
        rows, cols = np.mgrid[0:60, 0:60]
        return z / z.std() + amplitude * (np.hypot(rows + 0.5 - 30, cols + 0.5 - 30) < 6)

    system = maps({name: layer(seed, 3.0) for name, seed in (("clay", 1), ("silica", 2), ("iron", 3))})
    pair = best_joint_place(system, [("clay", "silica", 4.0)], small)
    trio = best_joint_place(system, [("clay", "silica", "iron", 4.0)], small)
    assert pair.share == trio.share and pair.expected > 0.01  # the top of the ranks on both layers
    assert trio.layers == ("clay", "silica", "iron") and len(trio.scores) == 3 and len(trio.correlation) == 3
    assert trio.expected < pair.expected / 50 and trio.expected < 0.001
    col, row = ~small.transform * (trio.x, trio.y)
    assert abs(row - 30) <= 6 and abs(col - 30) <= 6
    chance = [best_joint_place(maps({name: layer(100 + 3 * i + k) for k, name in enumerate(("a", "b", "c"))}),
                               [("a", "b", "c", 4.0)], small).expected for i in range(20)]
    # pure background reaches the verifier's level (0.05) in 3 of these 20 small scenes, above the nominal one:
    # a three-way coincidence covers less than the window the count of places assumes (docs/worlds_b_log.md)
    assert sum(e <= 0.05 for e in chance) <= 3 and min(chance) > 0.005 and float(np.median(chance)) > 0.1


def test_the_chance_of_a_joint_place_counts_the_layers_dependence():
    assert chance(0.01, [0.0], 2) == 0.01 ** 2 and chance(0.1, [0.0, 0.0, 0.0], 3) == 0.1 ** 3
    # both above their medians with correlation 0.5: 1/4 + arcsin(0.5) / (2 pi) = 1/3
    assert abs(chance(0.5, [0.5], 2) - 1 / 3) < 1e-6
    rising = [chance(0.001, [r], 2) for r in (0.0, 0.2, 0.5, 0.8)]
    assert rising == sorted(rising) and rising[-1] > 100 * rising[0]
    assert chance(0.001, [-0.5], 2) == 0.001 ** 2  # a negative dependence is not counted in the place's favour
    assert chance(0.001, [0.3, 0.3, 0.3], 3) > 0.001 ** 3
    # three layers: the same figure every time, and a layer seen twice (correlation 1) is one layer
    assert len({chance(0.001, [0.3, 0.2, 0.25], 3) for _ in range(5)}) == 1
    assert abs(chance(0.001, [1.0, 0.0, 0.0], 3) / chance(0.001, [0.0], 2) - 1) < 1e-4
    assert abs(chance(0.001, [1.0], 2) - 0.001) < 1e-9


def test_a_shared_background_is_measured_away_from_the_place():
    rng = np.random.default_rng(5)
    common = rng.standard_normal((300, 300))
    first, second = common + rng.standard_normal((300, 300)), common + rng.standard_normal((300, 300))
    everywhere = np.ones((300, 300), dtype=bool)
    (measured,) = _correlation([shares(first), shares(second)], everywhere)
    assert abs(measured - 0.5) < 0.02  # the two share half their variance
    (none,) = _correlation([shares(first), shares(rng.standard_normal((300, 300)))], everywhere)
    assert abs(none) < 0.02


def test_two_layers_sharing_their_background_meet_by_chance_no_more_often_than_the_level_says():
    """Pure background, half of it shared: under independence their rarest common place would look like a system
    in many scenes; with their dependence counted, about one scene in twenty reaches a chance count of 0.05."""
    counted, independent = [], []
    for i in range(20):
        common = _background(200 + 3 * i)
        place = _best(common + _background(201 + 3 * i), common + _background(202 + 3 * i))
        counted.append(place.expected)
        independent.append(place.share ** 2 * place.expected / chance(place.share, place.correlation, 2))
        assert place.correlation[0] > 0.25  # half the background shared: about a third in the contrasts
    assert sum(e <= 0.05 for e in counted) <= 2
    assert sum(e <= 0.05 for e in independent) >= 5  # nine of these twenty


def test_a_scene_with_no_place_beside_the_candidate_measures_the_dependence_over_the_whole_scene():
    """A 36 x 36 scene: every scored pixel lies within the measure's reach of the rarest place at a radius of 4, so
    the layers' shared background is measured over the whole scene rather than taken as none."""
    tiny = RasterGrid(Affine(30.0, 0, 500_000.0, 0, -30.0, 7_000_000.0), 36, 36, CRS.from_epsg(32612))
    common = ndimage.gaussian_filter(np.random.default_rng(7).standard_normal((36, 36)), 3.0)
    layers = {name: common + 0.3 * ndimage.gaussian_filter(np.random.default_rng(seed).standard_normal((36, 36)), 3.0)
              for name, seed in (("core", 8), ("partner", 9))}
    maps = {(name, 4.0): contrast_map(np.ma.masked_array(values), 4.0) for name, values in layers.items()}
    place = best_joint_place(maps, [("core", "partner", 4.0)], tiny)
    assert place.correlation[0] > 0.5  # without the whole scene: no pixel to measure on, taken as 0
