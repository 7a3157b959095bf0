"""The plugin zip installs and loads in QGIS (through the plugin manager's Install from ZIP, and from a plugin path),
with metadata the official repository accepts; qgis_process lists the lodestar algorithms headless."""
from __future__ import annotations

import importlib.util
import json
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


def test_metadata_is_complete_for_the_official_repository(tmp_path):
    package = _package_module()
    meta = package.read_metadata()
    assert package.metadata_problems(meta, package.plugin_files()) == []
    assert meta["qgisMinimumVersion"] == "3.22" and meta["experimental"] in ("True", "False")
    assert meta["tracker"].startswith("https://") and meta["repository"].startswith("https://")
    assert meta["homepage"].startswith("https://") and meta["version"] in meta["changelog"]
    with zipfile.ZipFile(package.build(tmp_path)) as archive:
        names = set(archive.namelist())
    assert f"lodestar/{meta['icon']}" in names
    assert "lodestar/README.md" in names and "lodestar/docs/dock-after.png" in names  # the README's pictures


def test_package_refuses_metadata_the_repository_would_refuse(tmp_path):
    package = _package_module()
    text = (ROOT / "metadata.txt").read_text(encoding="utf-8")
    broken = tmp_path / "metadata.txt"
    broken.write_text("\n".join(line for line in text.splitlines() if not line.startswith("tracker="))
                      .replace("icon=resources/icons/lodestar.svg", "icon=icon.png"), encoding="utf-8")
    problems = package.metadata_problems(package.read_metadata(broken), package.plugin_files())
    assert problems == ["metadata.txt has no 'tracker'",
                        "metadata.txt names the icon 'icon.png', which the zip would not hold"]


def test_zip_installs_through_the_plugin_manager_into_a_fresh_profile(tmp_path):
    """QGIS's own Install from ZIP (pyplugin_installer.installFromZipFile): unzipped into the profile's
    python/plugins, loaded, started (classFactory, initGui) and enabled, its algorithms registered and its dock
    opening, all from the installed files."""
    zip_path = _package_module().build(tmp_path / "dist")
    profile = tmp_path / "profile"
    profile.mkdir()
    done = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), str(ROOT / "tests" / "install_from_zip_run.py"),
                           str(zip_path), str(profile)], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, QT_QPA_PLATFORM="offscreen"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(next(line for line in done.stdout.splitlines() if line.startswith("REPORT "))[7:])
    home = Path(report["home"])
    assert home == profile / "python" / "plugins" and report["installed"] == ["lodestar"]
    assert report["messages"] == [["<b>Plugin installed successfully</b>", 0]] and report["shown"] == []
    assert report["active"] == ["lodestar"] and report["enabled"] is True
    assert Path(report["module_file"]) == home / "lodestar" / "__init__.py"  # the zip's files, not the checkout
    assert set(report["algorithms"]) == _expected_ids()
    assert report["dock"] == "LodestarDock"
    with zipfile.ZipFile(zip_path) as archive:
        installed = {str(path.relative_to(home)) for path in (home / "lodestar").rglob("*")
                     if path.is_file() and "__pycache__" not in path.parts}
        assert installed == {name for name in archive.namelist() if not name.endswith("/")}
