"""Build dist/lodestar-<version>.zip: one top folder `lodestar/`, installable with QGIS's plugin manager
(*Plugins > Manage and Install Plugins > Install from ZIP*) and ready for the official plugin repository.

Takes the files git tracks or would track (so no build outputs or virtual environments), minus
development-only folders. Refuses to build when metadata.txt lacks a field the official repository asks for,
or names an icon the zip would not hold.
"""
from __future__ import annotations

import configparser
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INCLUDE_TOP = {"metadata.txt", "__init__.py", "lodestar_plugin.py", "plugin", "processing", "ui", "models",
               "resources", "docs", "README.md", "LICENSE"}
REQUIRED_METADATA = ("name", "qgisMinimumVersion", "description", "about", "version", "author", "email",
                     "repository", "tracker", "homepage", "changelog", "tags", "icon", "category", "experimental",
                     "deprecated", "hasProcessingProvider")
"""The fields of metadata.txt the official repository requires (name to repository) or shows (the rest)."""


def plugin_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout.splitlines()
    keep = []
    for name in listed:
        path = ROOT / name
        top = name.split("/", 1)[0]
        if top in INCLUDE_TOP and path.is_file() and "__pycache__" not in name:
            keep.append(name)
    return sorted(keep)


def read_metadata(path: Path = ROOT / "metadata.txt") -> configparser.SectionProxy:
    """The [general] section of metadata.txt, keys as written (qgisMinimumVersion, not qgisminimumversion)."""
    meta = configparser.ConfigParser()
    meta.optionxform = str
    meta.read(path, encoding="utf-8")
    return meta["general"]


def metadata_problems(meta, files: list[str]) -> list[str]:
    """What the official repository would refuse in `meta`, given the plugin's `files` (empty: nothing)."""
    problems = [f"metadata.txt has no '{key}'" for key in REQUIRED_METADATA if not meta.get(key, "").strip()]
    icon = meta.get("icon", "").strip()
    if icon and icon not in files:
        problems.append(f"metadata.txt names the icon '{icon}', which the zip would not hold")
    if meta.get("experimental", "").strip() not in ("", "True", "False"):
        problems.append("metadata.txt's 'experimental' must be True or False")
    version = meta.get("version", "").strip()
    if version and version not in meta.get("changelog", ""):
        problems.append(f"metadata.txt's changelog does not mention version {version}")
    return problems


def build(out_dir: Path = ROOT / "dist") -> Path:
    meta = read_metadata()
    files = plugin_files()
    problems = metadata_problems(meta, files)
    if problems:
        raise SystemExit("Not packaged: " + "; ".join(problems) + ".")
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"lodestar-{meta['version']}.zip"
    tmp = target.with_suffix(".zip.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in files:
            archive.write(ROOT / name, f"lodestar/{name}")
    tmp.replace(target)
    return target


if __name__ == "__main__":
    path = build(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "dist")
    print(f"plugin zip: {path}")
