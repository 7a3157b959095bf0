"""The plugin zip installs and loads in QGIS; qgis_process lists the lodestar algorithms headless."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _package_module():
    spec = importlib.util.spec_from_file_location("package_script", ROOT / "scripts" / "package.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _expected_ids() -> set[str]:
    from lodestar.processing.provider import algorithm_classes, model_files

    models = {f"lodestar:{path.stem}" for path in model_files()}
    return {f"lodestar:{cls.ALGORITHM_ID}" for cls in algorithm_classes()} | models


def _qgis_process(args, home: Path, plugin_path: Path | None = None) -> str:
    env = dict(os.environ, LODESTAR_QGIS_HOME=str(home), QT_QPA_PLATFORM="offscreen")
    if plugin_path is None:
        cmd = [str(ROOT / "scripts" / "qgis_process.sh"), *args]
    else:
        site = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-c",
                               "import site; print(site.getsitepackages()[0])"],
                              capture_output=True, text=True, check=True).stdout.strip()
        (home / "profile").mkdir(parents=True, exist_ok=True)
        (home / "runtime").mkdir(parents=True, exist_ok=True, mode=0o700)
        env.update(QGIS_CUSTOM_CONFIG_PATH=str(home / "profile"), QGIS_PLUGINPATH=str(plugin_path),
                   PYTHONPATH=site, XDG_RUNTIME_DIR=str(home / "runtime"))
        subprocess.run(["qgis_process.bin", "plugins", "enable", "lodestar"], env=env, capture_output=True,
                       timeout=120)
        cmd = ["qgis_process.bin", *args]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_qgis_process_lists_lodestar_algorithms(tmp_path):
    listing = _qgis_process(["list"], tmp_path / "qgis")
    listed = {line.strip().split()[0] for line in listing.splitlines() if line.strip().startswith("lodestar:")}
    assert listed == _expected_ids()
    assert len(listed) >= 5


def test_zip_has_one_top_folder_and_no_dev_files(tmp_path):
    zip_path = _package_module().build(tmp_path)
    with zipfile.ZipFile(zip_path) as archive:
        names = archive.namelist()
    assert {name.split("/", 1)[0] for name in names} == {"lodestar"}
    assert "lodestar/metadata.txt" in names and "lodestar/__init__.py" in names
    forbidden = ("lodestar/tests/", "lodestar/.venv/", "lodestar/build/", "lodestar/.ci/", "lodestar/dist/")
    assert not [n for n in names if n.startswith(forbidden) or "__pycache__" in n]


def test_zip_installs_into_a_plugin_path_and_loads(tmp_path):
    zip_path = _package_module().build(tmp_path / "dist")
    plugins = tmp_path / "plugins"
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(plugins)
    listing = _qgis_process(["list"], tmp_path / "qgis", plugin_path=plugins)
    listed = {line.strip().split()[0] for line in listing.splitlines() if line.strip().startswith("lodestar:")}
    assert listed == _expected_ids()
