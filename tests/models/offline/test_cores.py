"""A core search is one search of the chain's zones: what it leaves out as lithology is its own finding, the same
whichever searches of the scene ran before it."""
from __future__ import annotations

import numpy as np
import pytest
from shapely.geometry import box

from lodestar.models.offline.cores import CoreSearch
from lodestar.models.offline.scene import Scene
from lodestar.models.offline.settings import OfflineSettings
from lodestar.plugin.progress import SILENT
from lodestar.plugin.raster_io import LayerSpec

from .test_targets import _mark, _workspace, _write

RIGHT_STRATUM = box(500000 + 60 * 30, 3997600, 502400, 4000000)  # columns 60-79 of the 80 x 80 grid


def test_a_search_leaves_out_a_zone_filling_a_raised_unit_whatever_searches_ran_before(tmp_path):
    """AlOH raised over the whole right-hand stratum and a step's one zone filling it: every new search of the scene
    leaves that zone out as lithology and says so, the first made as much as one made after a full search (the
    scene used to remember it from earlier searches, so a search made first said nothing); the scanned place along
    the stratum's edge is named only by the search that weighed it."""
    codes = np.ones((80, 80), dtype="int16")
    codes[:, 60:] = 2
    rng = np.random.default_rng(4)
    specs = [LayerSpec(_write(tmp_path / "geology.tif", codes, dtype="int16"), "geological_map", "geology"),
             LayerSpec(_write(tmp_path / "aloh.tif", 1.0 + 0.01 * rng.standard_normal((80, 80)) + 0.3 * (codes == 2)),
                       "hydrothermal_alteration", "aloh"),
             LayerSpec(_write(tmp_path / "silica.tif", 1.0 + 0.01 * rng.standard_normal((80, 80))),
                       "silicification", "silica")]
    ws = _workspace(specs, tmp_path)
    _mark(ws, 1, "aloh", "hydrothermal_alteration", [RIGHT_STRATUM])
    _mark(ws, 2, "silica", "silicification", [])
    first = CoreSearch(Scene(ws, OfflineSettings(), SILENT)).lithology_note()
    scene = Scene(ws, OfflineSettings(), SILENT)
    search = CoreSearch(scene)
    assert search.best() is None  # the one clear zone is lithology, and so is the best scanned place
    assert first == CoreSearch(scene).lithology_note() == (
        " Not taken as a core: s1:aloh:1, anomalies of a map unit raised as a whole (lithology, not a zoned system).")
    assert search.lithology_note() == (" Not taken as a core: place where aloh and silica stand out together, "
                                       "s1:aloh:1, anomalies of a map unit raised as a whole (lithology, not a "
                                       "zoned system).")


@pytest.mark.parametrize("hole, status", [((501000, 3998600, 501400, 3999000), "unseen"),
                                          ((501050, 3998650, 501140, 3998950), "missing"), (None, "missing")])
def test_an_item_whose_layers_hold_no_data_at_the_core_is_unseen_not_missing(tmp_path, hole, status):
    """A silica core over which AlOH holds no data (its nodata value): the phyllic core item there is unseen, and
    the verdict no answer but insufficient evidence naming the hole; AlOH holding data over 70 % of the core (at
    least `seen_share`), or over all of it, finds the item missing there, and the answer is No."""
    from lodestar.models.offline.verifier import verify
    from lodestar.tests.models.offline.test_targets import OVER, TRANSFORM, _index

    rng = np.random.default_rng(5)
    aloh = 1.0 + 0.01 * rng.standard_normal((80, 80))
    if hole is not None:
        cols, rows = ~TRANSFORM * (np.array(hole[::2]), np.array(hole[1::2]))
        aloh[int(rows[1]):int(rows[0]), int(cols[0]):int(cols[1])] = -9999
    specs = [LayerSpec(_write(tmp_path / "aloh.tif", aloh), "hydrothermal_alteration", "aloh"),
             LayerSpec(_index(tmp_path / "silica.tif", 2), "silicification", "silica")]
    ws = _workspace(specs, tmp_path)
    _mark(ws, 1, "aloh", "hydrothermal_alteration", [])
    _mark(ws, 2, "silica", "silicification", [OVER])
    scene = Scene(ws, OfflineSettings(), SILENT)
    core, assessment = CoreSearch(scene).best()
    assert core.zone_id == "s2:silica:1"
    found = assessment["phyllic_core"]
    assert found.status == status
    verdict, _ = verify(Scene(ws, OfflineSettings(), SILENT), ws.chain)
    if status == "unseen":
        assert found.measured == "aloh holds no data over 100% of it (a hole or non-finite cells)"
        assert verdict.answer is None and "hydrothermal_alteration" in verdict.missing
        assert "phyllic_core [critical] cannot be tested at the core: aloh holds no data" in verdict.rationale
    else:
        assert verdict.answer == "B" and not verdict.missing
