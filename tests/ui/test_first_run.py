"""The README's first run, step by step, in the plugin as QGIS starts it: Plugins > Lodestar > Load the sample case
adds the sample's layers and opens the dock, the dock guesses a role for every layer from its name, the known
deposits are picked, "Where should we explore?" is asked, Run gives the answer, the targets and the report (the
guessed roles are kept: the first run changes none)."""
from __future__ import annotations

import importlib
from pathlib import Path

from qgis.core import QgsProject
from qgis.PyQt.QtCore import QCoreApplication, QEvent

from lodestar.plugin.request.case import read_case
from lodestar.plugin.roles import ROLES
from lodestar.tests.ui.dock_steps import run_to_end
from lodestar.ui.dock import PRESETS
from lodestar.ui.sample_case import DEPOSITS, GROUP, SAMPLE


def test_the_readme_first_run_works_as_written(qgis_iface, qgis_new_project, runs_dir):
    plugin = importlib.import_module("lodestar").classFactory(qgis_iface)
    plugin.initGui()
    try:
        # step 2: Plugins > Lodestar > Load the sample case (porphyry demo)
        layers = plugin.load_sample()
        case = read_case(SAMPLE)
        assert set(layers) == {spec.name for spec in case.layers} | {DEPOSITS}
        group = QgsProject.instance().layerTreeRoot().findGroup(GROUP)
        assert [node.name() for node in group.findLayers()][:2] == [DEPOSITS, "mapped faults"]
        dock = plugin.dock
        assert dock is not None and not dock.isHidden() and plugin.action.isChecked()
        # step 3: every layer ticked, with a role guessed from its name that can stay as it is
        guessed = {spec.name: dock.layers.role(layers[spec.name].id()) for spec in case.layers}
        assert set(guessed.values()) <= set(ROLES) and len(set(guessed.values())) == len(case.layers), guessed
        assert guessed["geological map"] == "geological_map" and guessed["mapped faults"] == "structure"
        assert len(dock.layers.checked_rows()) == len(case.layers)
        dock.map_options.set_deposits(layers[DEPOSITS])
        # step 4: the preset question, then Run
        labels = [label for label, _ in PRESETS]
        dock.ui.presetCombo.setCurrentIndex(labels.index("Where should we explore?"))
        assert dock.input_problem() == ""
        run_to_end(dock)
        # step 5: the answer, the targets in the project, the report
        result = dock.result
        assert result.answer == "A" and result.valid
        assert 1 <= len(result.prospectivity) <= 25 and result.prospectivity["area_km2"].min() >= 0.05  # no speck
        assert Path(result.outputs["report"]).is_file()
        assert dock.run_layers.get("prospectivity") is not None
    finally:
        plugin.unload()
        QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)
