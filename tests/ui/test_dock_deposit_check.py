"""The validation page's check against a deposits layer: its figures equal lodestar:evaluate's on the same run, and
the deposits outside the targets are listed and selected on the map."""
from __future__ import annotations

import csv

import geopandas as gpd
import pytest
from qgis.core import QgsProject, QgsVectorLayer
from shapely.geometry import Point

from lodestar.plugin.evaluation import DEFAULT_SHARES
from lodestar.plugin.labels import TIES_NOTE, deposit_count, plural, the, verb
from lodestar.tests.ui.dock_steps import run_to_end, set_case_roles
from lodestar.ui.deposit_check import FID_ROLE


@pytest.fixture
def checked_run(dock, sample, tmp_path):
    """An offline run of the sample case, and a deposits layer: 3 points in the best targets, 3 on the surface
    away from them, 1 far outside the analysed area."""
    case, layers = sample
    set_case_roles(dock, case, layers)
    dock.ui.questionEdit.setPlainText(case.question)
    run_to_end(dock)
    targets = dock.result.prospectivity.sort_values("rank")
    inside = [geom.representative_point() for geom in targets.geometry[:3]]
    minx, miny, maxx, maxy = gpd.read_file(dock.result.outputs["zones"]).total_bounds
    union = targets.unary_union
    away = []
    for fx in (0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95):
        for fy in (0.1, 0.3, 0.5, 0.7, 0.9):
            point = Point(minx + fx * (maxx - minx), miny + fy * (maxy - miny))
            if not union.buffer(200).contains(point) and len(away) < 3:
                away.append(point)
    far = Point(maxx + 50_000, maxy + 50_000)
    names = ["in 1", "in 2", "in 3", "away 1", "away 2", "away 3", "far"]
    path = tmp_path / "known_deposits.geojson"
    gpd.GeoDataFrame({"name": names}, geometry=inside + away + [far], crs=targets.crs).to_file(path, driver="GeoJSON")
    layer = QgsVectorLayer(str(path), "known deposits", "ogr")
    assert layer.isValid() and layer.featureCount() == 7
    QgsProject.instance().addMapLayer(layer)
    return dock, layer


def test_deposit_check_equals_lodestar_evaluate(checked_run, run, tmp_path):
    dock, layer = checked_run
    view = dock.results.deposit_check
    view.combo.setLayer(layer)
    check = view.run_check()
    assert check is not None, view.note.text()
    surface = dock.result.outputs["favourability"]
    by_surface = run("lodestar:evaluate", {"PROSPECTIVITY": str(surface), "DEPOSITS": layer,
                                           "OUTPUT_TABLE": str(tmp_path / "surface.csv")})
    by_targets = run("lodestar:evaluate", {"PROSPECTIVITY": str(dock.result.outputs["prospectivity"]),
                                           "DEPOSITS": layer, "ANALYSIS_RASTER": str(surface),
                                           "OUTPUT_TABLE": str(tmp_path / "targets.csv")})
    assert check.surface["auc"] == by_surface["AUC"]
    for share in DEFAULT_SHARES:
        key = f"CAPTURE_{100 * share:g}"
        assert check.surface["capture"][share] == by_surface[key]
        assert check.targets["capture"][share] == by_targets[key]
    assert check.surface["outside"] == by_surface["OUTSIDE"] == 1
    assert check.targets["found"] == by_targets["FOUND"] >= 3
    assert check.targets["recall"] == by_targets["RECALL"]
    beside = run("lodestar:evaluate", {"PROSPECTIVITY": str(dock.result.outputs["prospectivity"]),
                                       "DEPOSITS": layer, "ANALYSIS_RASTER": str(surface), "SURFACE": str(surface),
                                       "OUTPUT_TABLE": str(tmp_path / "beside.csv")})
    rows = list(csv.DictReader(open(beside["OUTPUT_TABLE"], encoding="utf-8")))
    equal = check.targets["equal_area"]  # the best targets beside the surface's own best cells of the same area
    point = next(r for r in rows if r["rank"] and int(r["rank"]) == equal["rank"])
    assert float(point["surface_found"]) == pytest.approx(equal["surface"], abs=1e-3)
    assert int(point["found"]) == equal["targets"]

    table = view.table
    assert table.item(0, 1).text() == f"{by_surface['AUC']:.3f}"
    assert [table.item(0, 2 + i).text() for i in range(4)] == \
        [deposit_count(by_surface[f'CAPTURE_{100 * s:g}']) for s in DEFAULT_SHARES]  # whole deposits
    assert table.item(1, 6).text() == f"{int(by_targets['FOUND'])} of 6"
    assert "7 deposits, 6 in the analysed area, 1 outside it" in view.note.text()
    assert view.note.text().count(TIES_NOTE) == 1  # how ties count, said once
    assert (f"{the(equal['rank'], 'best target').capitalize()} {verb(equal['rank'], 'hold')} "
            f"{plural(equal['targets'], 'deposit')} in ") in view.note.text()
    assert not view.plot.pixmap().isNull() and view.plot.pixmap().width() > 200

    # the deposits outside the targets: listed by name, selected on the map
    missed = [view.missed.item(i) for i in range(view.missed.count())]
    missed_names = sorted(item.text().split(":")[0] for item in missed)
    assert missed_names == sorted(check.names[k] for k in check.outside_targets)
    assert len(missed) == 6 - int(by_targets["FOUND"]) and all(n.startswith("away") for n in missed_names)
    selected = view.select_missed()
    expected = sorted(f.id() for f in layer.getFeatures() if f["name"] in missed_names)
    assert selected == expected == sorted(layer.selectedFeatureIds())
    view.missed.item(0).setSelected(True)
    assert view.select_missed() == [missed[0].data(FID_ROLE)] == layer.selectedFeatureIds()


def test_deposit_check_says_what_is_missing(dock, sample):
    view = dock.results.deposit_check
    assert not view.check_button.isEnabled()
    assert view.note.text().startswith("Run an analysis first")
    assert view.run_check() is None and view.note.text() == "Pick the deposits (a point layer of the project) first."
