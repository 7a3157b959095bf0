"""The plan editor's response curve is drawn across the range where the membership changes (issue 61): a 1 km fuzzy
small over distances to faults running to 100 km was a spike at the left edge of an axis to 99 km."""
from __future__ import annotations

import json

import numpy as np
from affine import Affine
from lodestar_testdata import write_geotiff

from lodestar.plugin.favourability.evidence import EvidenceSpec
from lodestar.plugin.favourability.plan_preview import PlanPreview
from lodestar.plugin.raster_io import LayerSpec, RasterSet


def test_the_curve_spans_where_the_membership_changes(tmp_path):
    values = np.linspace(0.0, 1.0, 1000 * 50, dtype="float32").reshape(50, 1000)
    write_geotiff(tmp_path / "index.tif", values, Affine(100, 0, 500_000, 0, -100, 7_000_000), crs="EPSG:32750")
    faults = {"type": "FeatureCollection", "crs": {"type": "name", "properties": {"name": "EPSG:32750"}},
              "features": [{"type": "Feature", "properties": {}, "geometry": {
                  "type": "LineString", "coordinates": [[500_050, 6_995_100], [500_050, 6_999_900]]}}]}
    (tmp_path / "faults.geojson").write_text(json.dumps(faults))
    preview = PlanPreview(RasterSet([LayerSpec(tmp_path / "index.tif", "hydrothermal_alteration", "index"),
                                     LayerSpec(tmp_path / "faults.geojson", "structure", "faults")]))
    near = EvidenceSpec("faults", "structure", "vector", "distance_m", "small", {"midpoint": 1000.0, "spread": 3.0})
    x, y = preview.curve(near)
    assert preview.values(near).max() > 90_000  # the distances run to nearly 100 km
    assert 0.0 <= x[0] <= 300.0 and 4_000.0 < x[-1] < 8_000.0, (x[0], x[-1])
    assert y[0] > 0.97 and y[-1] < 0.03 and np.all(np.diff(y) <= 0)
    ranked = EvidenceSpec("index", "hydrothermal_alteration", "index", "percentile_rank")
    x, y = preview.curve(ranked)  # a membership that changes all along keeps the whole range
    assert x[-1] - x[0] > 0.9 and np.allclose(y, x, atol=1e-6)
