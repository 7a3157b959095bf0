"""The report's map reads cleanly at any shape (issue 61): title, subtitle, north arrow, scale bar, colour bar and its
title, legend, the map, its coordinates and their names each lie inside the figure and overlap no other part, as the
renderer measures their boxes. Before, the north arrow overprinted the subtitle and the colour bar's title was
clipped at the right edge on every map of the sample, Murchison and Great Basin."""
from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
import rasterio
from rasterio.transform import from_origin

from lodestar.plugin.raster_io import RasterReader
from lodestar.plugin.report.report_map import WIDTH_PX, deposit_xy, map_figure
from lodestar.plugin.report.report_prospectivity import map_title
from lodestar.plugin.vector_io import read_vector

PARTS = ("title", "subtitle", "north arrow", "scale bar", "colour bar", "colour bar title", "legend", "map",
         "map coordinates", "easting label", "northing label", "crs")


def layout_problems(figure, parts: dict) -> list[str]:
    """Each part outside the figure or over another, as the renderer measures the boxes of their artists (a part's
    own artists may touch: the colour bar and its class labels)."""
    renderer = figure.canvas.get_renderer()
    figure.draw(renderer)
    width, height = figure.bbox.width, figure.bbox.height
    boxes = {name: [a.get_window_extent(renderer) for a in artists] for name, artists in parts.items()}
    found = [f"{name} leaves the figure: {b.bounds}" for name, bs in boxes.items() for b in bs
             if b.x0 < -0.5 or b.y0 < -0.5 or b.x1 > width + 0.5 or b.y1 > height + 0.5]
    for (one, a), (other, b) in combinations(boxes.items(), 2):
        for x in a:
            for y in b:
                w = min(x.x1, y.x1) - max(x.x0, y.x0)
                h = min(x.y1, y.y1) - max(x.y0, y.y0)
                if w > 0.5 and h > 0.5:
                    found.append(f"{one} overlaps {other} by {w:.0f} x {h:.0f} px")
    return found


def test_the_maps_of_the_three_cases_read_cleanly(case_runs):
    for name, (result, _) in case_runs.items():
        record = json.loads(Path(result.outputs["record"]).read_text(encoding="utf-8"))
        reader = RasterReader(result.outputs["favourability"])
        points, _ = deposit_xy(record, reader.grid.crs)
        targets = (read_vector(result.outputs["prospectivity"]) if result.outputs.get("prospectivity") else None)
        figure, parts = map_figure(reader, targets=targets, points=points, title=map_title(record["favourability"]),
                                   area_share=0.1)
        assert set(parts) == set(PARTS), name
        assert figure.bbox.width == WIDTH_PX and not layout_problems(figure, parts), (name, layout_problems(figure,
                                                                                                           parts))
        assert "unnamed" not in parts["crs"][0].get_text()  # Great Basin's CRS is a WKT named "unnamed"


@pytest.mark.parametrize("rows, cols, crs", [(20, 400, "EPSG:32612"), (400, 20, "EPSG:32612"),
                                              (100, 100, "EPSG:32612"), (90, 300, "EPSG:4326"), (60, 90, None)])
def test_a_map_of_any_shape_reads_cleanly(tmp_path, rows, cols, crs):
    path = tmp_path / "surface.tif"
    cell = 0.001 if crs == "EPSG:4326" else 100
    with rasterio.open(path, "w", driver="GTiff", width=cols, height=rows, count=1, dtype="float32", crs=crs,
                       transform=from_origin(500_000 if cell == 100 else 117.0, 4_000_000 if cell == 100 else -26.0,
                                             cell, cell), nodata=-1) as out:
        values = np.random.default_rng(1).random((rows, cols)).astype("float32")
        values[: rows // 4, : cols // 4] = -1
        out.write(values[np.newaxis])
    title = "Favourability (knowledge-driven): weighted mean of ranks, a title long enough to need a second line here"
    figure, parts = map_figure(RasterReader(path), title=title, points=[], area_share=0.1)
    assert not layout_problems(figure, parts)
    assert ("north arrow" in parts) == (crs is not None) and ("scale bar" in parts) == (crs is not None)
    assert parts["map coordinates"], "the map names no coordinate"
