"""Build dist/lodestar-<version>.zip: one top folder `lodestar/`, installable with QGIS's "Install from ZIP".

Takes the files git tracks or would track (so no build outputs or virtual environments), minus
development-only folders.
"""
from __future__ import annotations

import configparser
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INCLUDE_TOP = {"metadata.txt", "__init__.py", "plugin", "processing", "ui", "models", "resources", "README.md",
               "LICENSE"}


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


def build(out_dir: Path = ROOT / "dist") -> Path:
    meta = configparser.ConfigParser()
    meta.read(ROOT / "metadata.txt")
    version = meta["general"]["version"]
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"lodestar-{version}.zip"
    tmp = target.with_suffix(".zip.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in plugin_files():
            archive.write(ROOT / name, f"lodestar/{name}")
    tmp.replace(target)
    return target


if __name__ == "__main__":
    path = build(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "dist")
    print(f"plugin zip: {path}")
