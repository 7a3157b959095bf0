"""A core search is one search of the chain's zones: what it leaves out as lithology is its own finding, the same
whichever searches of the scene ran before it."""
from __future__ import annotations

import numpy as np
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
