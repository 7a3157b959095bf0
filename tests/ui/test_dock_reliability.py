"""The dock says, before the run, when a layer's data disagree with the role chosen for it (issue 13, item 9), and
keeps the record of a run that failed after reaching the engine (item 5)."""
from __future__ import annotations

import json

import numpy as np
import rasterio
from qgis.core import QgsProject, QgsRasterLayer

from lodestar.plugin.errors import LodestarError
from lodestar.tests.ui.dock_steps import set_case_roles


def test_a_composite_given_an_index_role_is_flagged_before_the_run(dock, sample, tmp_path):
    case, layers = sample
    set_case_roles(dock, case, layers)
    dock.ui.questionEdit.setPlainText(case.question)
    dock.validate()
    assert "Warning" not in dock.ui.statusLabel.text()  # the sample's roles fit its data

    with rasterio.open(case.layers[1].path) as ref:
        profile = dict(ref.profile, count=3, dtype="uint8", nodata=None)
    colours = np.random.default_rng(3).integers(0, 256, (3, profile["height"], profile["width"]), dtype="uint8")
    with rasterio.open(tmp_path / "landsat_742.tif", "w", **profile) as ds:
        ds.write(colours)
    composite = QgsRasterLayer(str(tmp_path / "landsat_742.tif"), "landsat 742")
    assert composite.isValid()
    QgsProject.instance().addMapLayer(composite)
    dock.layers.refresh()
    dock.layers.set_checked(composite.id(), True)
    dock.layers.set_role(composite.id(), "argillic_alteration")
    dock.validate()
    text = dock.ui.statusLabel.text()
    assert text.startswith("Warning: landsat 742 has 3 bands, a false-colour composite (")
    assert "its role is argillic_alteration, which means one band of index values" in text
    assert dock.ui.runButton.isEnabled()  # said, not refused: the user may know better

    dock.layers.set_role(composite.id(), "false_color_composite")
    dock.layers.set_role(layers[case.layers[1].name].id(), "false_color_composite")  # a single-band index as RGB
    dock.validate()
    assert dock.ui.statusLabel.text().startswith(
        f"Warning: {case.layers[1].name} has 1 band(s) of float32 values, but its role is false_color_composite")


def test_a_run_that_fails_in_the_engine_keeps_its_record_in_the_dock(dock, sample, monkeypatch):
    """Nothing spent is lost: the message names the record, and the run folder keeps it."""
    from lodestar.plugin.runs import run as engine_run
    from lodestar.tests.ui.dock_steps import bar_texts, run_to_end

    def broken(*args, **kwargs):
        raise LodestarError("The surface could not be drawn: disk full.")

    monkeypatch.setattr(engine_run, "map_prospectivity", broken)
    case, layers = sample
    set_case_roles(dock, case, layers)
    dock.ui.questionEdit.setPlainText(case.question)
    task = run_to_end(dock)
    record = task.request.output_dir / "record.json"
    assert record.is_file()
    assert json.loads(record.read_text(encoding="utf-8"))["result"]["error"] == (
        "The surface could not be drawn: disk full.")
    assert f"The surface could not be drawn: disk full. The run record is {record}." in bar_texts(dock)
