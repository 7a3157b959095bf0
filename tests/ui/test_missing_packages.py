"""With rasterio (and separately scikit-learn, openai, torch) hidden by an import hook, the plugin loads as QGIS loads
it, the algorithms that do not need the package are listed and run, those that do are listed disabled with the
package and its install command, the dock opens naming the package with this platform's command, and no traceback
reaches the user. Each case runs in its own process (the test process has every package imported already)."""
from __future__ import annotations

import importlib.abc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lodestar.plugin.dependencies import BY_MODULE, guidance, install_command
from lodestar.processing.provider import algorithm_classes, model_files

HELPER = Path(__file__).with_name("hidden_package_run.py")
SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "sample" / "porphyry-demo"
RASTER_FREE = {"lodestar:spatial_graph", "lodestar:localize"}
"""The algorithms that read no raster (zones in, graph or polygons out): they load and run without rasterio."""


def _load_with(hidden: str, profile: Path) -> dict:
    profile.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([sys.executable, str(HELPER), hidden, str(profile)], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr + done.stdout, (done.stderr + done.stdout)[-3000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith("REPORT ")]
    assert len(lines) == 1, done.stdout[-2000:]
    return json.loads(lines[0][len("REPORT "):])


def _all_ids() -> set[str]:
    return {f"lodestar:{cls.ALGORITHM_ID}" for cls in algorithm_classes()} | \
        {f"lodestar:{path.stem}" for path in model_files()}


def _no_traceback(report: dict) -> None:
    assert report["shown"] == []
    assert not [message for _tag, message in report["log"] if "Traceback" in message]


def test_without_rasterio_the_plugin_loads_and_says_what_to_install(tmp_path):
    report = _load_with("rasterio", tmp_path / "profile")
    command = install_command([BY_MODULE["rasterio"]])
    assert report["loaded"] is True
    _no_traceback(report)
    algorithms = report["algorithms"]
    assert set(algorithms) == _all_ids()  # every id stays listed: saved models and scripts find them
    runnable = {name for name, alg in algorithms.items() if alg["runs"]}
    models = {f"lodestar:{path.stem}" for path in model_files()}
    assert RASTER_FREE | models <= runnable
    assert {"lodestar:analyze", "lodestar:color_regions", "lodestar:evaluate"} <= set(algorithms) - runnable
    for name in set(algorithms) - runnable:
        assert "rasterio" in algorithms[name]["message"] and command in algorithms[name]["message"], name
        assert algorithms[name]["name"].endswith("(needs rasterio)")
    # the dock opens in its place, naming the package and the command (Copy command copies that line)
    assert report["dock"] == "MissingPackagesDock" and report["visible"] is True
    assert report["command"] == command
    assert any("rasterio" in text and "reading and writing every raster" in text for text in report["texts"])
    # said once at start-up in the message bar, with a Copy command button, and once in the log for all the
    # algorithms it stops
    assert len(report["bar"]) == 1 and command in report["bar"][0] and report["copied"] == command
    stopped = [message for tag, message in report["log"] if tag == "Lodestar" and "cannot run" in message]
    assert len(stopped) == 1 and stopped[0].startswith(f"{len(algorithms) - len(runnable)} Lodestar algorithms")


def test_without_rasterio_qgis_process_lists_the_algorithms_as_needing_it_with_no_traceback(tmp_path):
    """Headless, as QGIS loads the provider in qgis_process: with rasterio hidden (a sitecustomize on PYTHONPATH
    installs the import hook), the listing names lodestar:alteration_indices '(needs rasterio)' and running it says
    what to install, and neither prints a traceback."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import importlib.abc, sys\n\n\n"
        "class Hide(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'rasterio' or name.startswith('rasterio.'):\n"
        "            raise ModuleNotFoundError(f\"No module named '{name}'\", name=name)\n\n\n"
        "sys.meta_path.insert(0, Hide())\n", encoding="utf-8")
    env = dict(os.environ, LODESTAR_QGIS_HOME=str(tmp_path / "qgis"), QT_QPA_PLATFORM="offscreen",
               PYTHONPATH=str(hook))
    script = Path(__file__).resolve().parents[2] / "scripts" / "qgis_process.sh"
    listed = subprocess.run([str(script), "list"], capture_output=True, text=True, timeout=300, env=env)
    said = subprocess.run([str(script), "run", "lodestar:alteration_indices", "--", f"INPUT={tmp_path / 'x.tif'}"],
                          capture_output=True, text=True, timeout=300, env=env)
    for done in (listed, said):
        assert "Traceback" not in done.stdout + done.stderr, (done.stdout + done.stderr)[-3000:]
    assert listed.returncode == 0
    assert "lodestar:alteration_indices\tAlteration indices (ASTER, Landsat OLI, Sentinel-2) (needs rasterio)" in \
        listed.stdout
    assert said.returncode != 0 and "Not installed in QGIS's Python: rasterio" in said.stdout + said.stderr


@pytest.mark.parametrize("hidden", ["sklearn", "openai", "torch"])
def test_without_an_optional_package_everything_loads_and_the_dock_names_it(tmp_path, hidden):
    report = _load_with(hidden, tmp_path / "profile")
    package = BY_MODULE[hidden]
    assert report["loaded"] is True
    _no_traceback(report)
    assert set(report["algorithms"]) == _all_ids()
    # the engine, the tools and the graph load it lazily (each says what to install when asked for it); an
    # algorithm built on it is listed, disabled, naming it with the command
    runnable = {name for name, alg in report["algorithms"].items() if alg["runs"]}
    assert {"lodestar:analyze", "lodestar:analyze_cases", "lodestar:color_regions", "lodestar:spatial_graph",
            "lodestar:refine_zones_sam", "lodestar:evaluate"} <= runnable
    for name in set(report["algorithms"]) - runnable:
        assert install_command([package]) in report["algorithms"][name]["message"], name
    assert report["dock"] == "LodestarDock" and report["visible"] is True
    assert report["optional_box"] == f"Optional packages not installed: {package.pip}"
    assert report["command"] == install_command([package])
    assert any(package.needed_for in text for text in report["texts"])
    assert report["bar"] == [] and report["copied"] == ""  # nothing at start-up for an optional package


class _HideSklearn(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "sklearn":
            raise ModuleNotFoundError(f"No module named '{name}'", name=name)


def test_without_scikit_learn_the_dock_says_what_calibration_needs_it(dock, monkeypatch):
    from qgis.core import QgsProject, QgsVectorLayer

    deposits = QgsVectorLayer(str(SAMPLE / "deposits.geojson"), "known deposits", "ogr")
    QgsProject.instance().addMapLayer(deposits)
    dock.map_options.set_deposits(deposits)
    monkeypatch.setattr(sys, "meta_path", [_HideSklearn(), *sys.meta_path])
    monkeypatch.delitem(sys.modules, "sklearn", raising=False)  # as if it had never been installed
    dock.map_options.set_calibration("logistic")
    assert dock.map_options.problem([]) == (
        "Calibration by logistic regression needs scikit-learn (weights of evidence does not). "
        + guidance([BY_MODULE["sklearn"]]))
    assert install_command([BY_MODULE["sklearn"]]) in dock.input_problem()
    dock.map_options.set_calibration("wofe")
    assert dock.map_options.problem([]) == ""
