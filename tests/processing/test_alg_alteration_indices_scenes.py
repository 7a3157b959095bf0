"""lodestar:alteration_indices on standard products as they come: band names and the scaling of counts read from the
product's own metadata (Landsat Collection 2 counts carry no GDAL scale; the offset changes every ratio)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import rasterio
import scene_testdata as st


def test_a_landsat_collection_2_stack_gives_reflectance_ratios(tmp_path, run):
    scene = st.write_scene("landsat_oli", tmp_path / "scene")
    result = run("lodestar:alteration_indices", {"INPUT": str(scene), "SENSOR": 0, "INDICES": "clay, iron_oxide",
                                                 "OUTPUT_FOLDER": str(tmp_path / "indices")})
    roles = {Path(p).name: r for p, r in json.loads(result["ROLES"]).items()}
    assert roles == {"LC09_L2SP_scene_clay.tif": "argillic_alteration",
                     "LC09_L2SP_scene_iron_oxide.tif": "iron_oxide"}
    reflectance = st.read_back("landsat_oli")
    with rasterio.open(tmp_path / "indices" / "LC09_L2SP_scene_clay.tif") as ds:
        clay = ds.read(1)
        assert ds.tags()["LODESTAR_BANDS_FROM"] == "product band names"
    np.testing.assert_allclose(clay, reflectance["b6"] / reflectance["b7"], rtol=1e-5)  # not a ratio of counts
