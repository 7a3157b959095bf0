"""plugin/dependencies.py: the command a user runs on each platform, the pip command *Install missing packages*
builds, the platform found from the install's layout, and missing packages found without importing them."""
from __future__ import annotations

import importlib.abc
import sys
from importlib import metadata

import pytest

from lodestar.plugin import dependencies as deps

SKLEARN, OPENAI, RASTERIO = deps.BY_MODULE["sklearn"], deps.BY_MODULE["openai"], deps.BY_MODULE["rasterio"]


def test_the_command_for_each_platform():
    both = [RASTERIO, SKLEARN]
    assert deps.install_command(both, deps.WINDOWS) == "python -m pip install --user rasterio scikit-learn"
    assert deps.install_command(both, deps.CONDA) == "conda install -c conda-forge rasterio scikit-learn"
    assert deps.install_command(both, deps.DEBIAN) == "sudo apt install python3-rasterio python3-sklearn"
    # openai has no Debian package: pip, with leave to install beside the externally managed system Python
    assert deps.install_command([OPENAI], deps.DEBIAN, python="/usr/bin/python3") == (
        "/usr/bin/python3 -m pip install --user --break-system-packages openai")
    mac_python = "/Applications/QGIS-LTR.app/Contents/MacOS/bin/python3"
    assert deps.install_command([SKLEARN], deps.MACOS, python=mac_python) == (
        f"{mac_python} -m pip install --user scikit-learn")
    assert deps.install_command([], deps.WINDOWS) == ""
    assert "OSGeo4W Shell" in deps.where_to_run(deps.WINDOWS)


def test_the_platform_from_the_install_layout(tmp_path):
    (tmp_path / "conda-meta").mkdir()
    assert deps.detect_platform(str(tmp_path), "linux") == deps.CONDA
    assert deps.detect_platform(r"C:\OSGeo4W\apps\Python39", "win32") == deps.WINDOWS
    assert deps.detect_platform("/Applications/QGIS-LTR.app/Contents/MacOS", "darwin") == deps.MACOS
    assert deps.detect_platform("/opt/qgis", "linux") == deps.LINUX


def test_guidance_names_the_package_what_needs_it_and_the_command():
    text = deps.guidance([SKLEARN], deps.WINDOWS)
    assert text == ("Not installed in QGIS's Python: scikit-learn (calibration by logistic regression, random forest "
                    "and gradient boosting). To install on Windows (OSGeo4W Shell), run python -m pip install --user "
                    "scikit-learn in the OSGeo4W Shell (Start menu > QGIS > OSGeo4W Shell), then restart QGIS.")


def test_the_pip_command_installs_into_the_profile_with_numpy_held(tmp_path):
    args = deps.pip_install_args([RASTERIO, SKLEARN], tmp_path / "profile", python="/qgis/bin/python3")
    assert args == ["/qgis/bin/python3", "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
                    "--target", str(tmp_path / "profile" / "python" / "lodestar-packages"),
                    f"numpy=={metadata.version('numpy')}", "rasterio", "scikit-learn"]


def test_profile_packages_go_last_on_the_path(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert deps.add_profile_packages(tmp_path) is None  # no folder: nothing added
    folder = deps.profile_packages_dir(tmp_path)
    folder.mkdir(parents=True)
    assert deps.add_profile_packages(tmp_path) == folder and sys.path[-1] == str(folder)
    deps.add_profile_packages(tmp_path)
    assert sys.path.count(str(folder)) == 1


class _Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "sklearn":
            raise ModuleNotFoundError(f"No module named '{name}'", name=name)


def test_missing_packages_are_found_without_importing_them(monkeypatch):
    assert deps.missing() == []  # this environment has them all
    monkeypatch.setattr(sys, "meta_path", [_Hide(), *sys.meta_path])
    monkeypatch.delitem(sys.modules, "sklearn", raising=False)  # as if it had never been installed
    assert deps.missing() == [SKLEARN] and deps.missing(required=False) == [SKLEARN]
    assert deps.missing(required=True) == []
    with pytest.raises(ImportError) as caught:
        __import__("sklearn.not_a_module_anywhere")
    assert deps.package_of(caught.value) == SKLEARN
    assert deps.package_of(ModuleNotFoundError("x", name="yaml")) is None  # not ours to explain
