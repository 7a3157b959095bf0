"""The Python packages Lodestar uses, what needs each, whether they are installed, and how to install them on the
user's platform (QGIS-free: the entry class, the Processing provider and the dock all ask here).

A package counts as missing when importing it would fail to find it: `importlib.util.find_spec` returns None or
raises ImportError. Nothing is imported, so the check costs milliseconds even for torch.
"""
from __future__ import annotations

import importlib.util
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

WINDOWS, MACOS, CONDA, DEBIAN, LINUX = "windows", "macos", "conda", "debian", "linux"
PLATFORM_NAMES = {WINDOWS: "Windows (OSGeo4W Shell)", MACOS: "macOS (the QGIS app's Python)",
                  CONDA: "conda", DEBIAN: "Debian / Ubuntu", LINUX: "Linux (pip)"}
PROFILE_PACKAGES = "lodestar-packages"
"""The folder, inside the QGIS profile's `python/` folder, that *Install missing packages* installs into; the
plugin puts it on sys.path (last, so QGIS's own packages always win)."""


@dataclass(frozen=True)
class Package:
    """One Python package: its import name, its pip (and conda) name, its Debian package, what needs it."""

    module: str
    pip: str
    apt: str
    needed_for: str
    required: bool = True


PACKAGES = (
    Package("rasterio", "rasterio", "python3-rasterio", "reading and writing every raster: all analyses and tools"),
    Package("geopandas", "geopandas", "python3-geopandas", "zones, targets and every vector output"),
    Package("shapely", "shapely", "python3-shapely", "zone and target geometry"),
    Package("pyproj", "pyproj", "python3-pyproj", "coordinate systems"),
    Package("fiona", "fiona", "python3-fiona", "writing GeoPackages and Shapefiles"),
    Package("networkx", "networkx", "python3-networkx", "the spatial graph of candidate zones"),
    Package("scipy", "scipy", "python3-scipy", "anomaly thresholds, distances and connected regions"),
    Package("pandas", "pandas", "python3-pandas", "tables of zones, deposits and weights"),
    Package("matplotlib", "matplotlib", "python3-matplotlib", "the report's map and success-rate curves"),
    Package("PIL", "pillow", "python3-pil", "evidence images and thumbnails"),
    Package("sklearn", "scikit-learn", "python3-sklearn",
            "calibration by logistic regression, random forest and gradient boosting", required=False),
    Package("openai", "openai", "", "the model-server reasoner (OpenAI-compatible endpoints)", required=False),
    Package("torch", "torch", "python3-torch", "Segment Anything refinement", required=False),
    Package("torchvision", "torchvision", "python3-torchvision", "Segment Anything refinement", required=False),
    Package("segment_anything", "segment-anything", "", "Segment Anything refinement", required=False),
    Package("distributed", "distributed", "python3-distributed",
            "batches and full-resolution surfaces on a Dask cluster", required=False),
)
BY_MODULE = {package.module: package for package in PACKAGES}


def is_installed(module: str) -> bool:
    """Whether `module` can be found, without importing it (an import hook that refuses it counts as missing)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing(required: bool | None = None) -> list[Package]:
    """The packages not installed, in PACKAGES order: all of them, or only the required (True) or optional
    (False) ones."""
    return [p for p in PACKAGES if (required is None or p.required == required) and not is_installed(p.module)]


def package_of(error: ImportError) -> Package | None:
    """The package whose absence an ImportError reports (`No module named 'rasterio.features'` -> rasterio)."""
    name = (getattr(error, "name", None) or "").split(".", 1)[0]
    return BY_MODULE.get(name)


def detect_platform(prefix: str | None = None, system: str | None = None) -> str:
    """How this QGIS is installed: WINDOWS (OSGeo4W or the standalone installer, both OSGeo4W inside), MACOS (the
    QGIS app bundle), CONDA (a conda environment), DEBIAN (the distribution's python3 in /usr) or LINUX."""
    prefix = prefix if prefix is not None else sys.prefix
    system = system or sys.platform
    if (Path(prefix) / "conda-meta").is_dir() or (prefix == sys.prefix and os.environ.get("CONDA_PREFIX") == prefix):
        return CONDA
    if system.startswith("win"):
        return WINDOWS
    if system == "darwin":
        return MACOS
    if prefix in ("/usr", "/usr/local") and Path("/etc/debian_version").is_file():
        return DEBIAN
    return LINUX


def qgis_python(platform: str | None = None, prefix: str | None = None) -> str:
    """The Python interpreter of the QGIS that runs the plugin (inside QGIS sys.executable is QGIS itself)."""
    platform = platform or detect_platform()
    root = Path(prefix if prefix is not None else sys.exec_prefix)
    candidates = [root / "python.exe", root / "python3.exe"] if platform == WINDOWS else \
        [root / "bin" / "python3", root / "bin" / "python"]
    if Path(sys.executable).name.lower().startswith("python"):
        candidates.insert(0, Path(sys.executable))
    for candidate in candidates:
        if candidate.is_file():
            return str(candidate)
    return "python3" if platform != WINDOWS else "python"


def install_command(packages: list[Package], platform: str | None = None, python: str | None = None) -> str:
    """The one command line a user runs to install `packages` into QGIS's Python on `platform` (apt where Debian
    has them all, else pip run by QGIS's own Python)."""
    platform = platform or detect_platform()
    if not packages:
        return ""
    pip_names = " ".join(p.pip for p in packages)
    if platform == WINDOWS:
        return f"python -m pip install --user {pip_names}"
    if platform == CONDA:
        return f"conda install -c conda-forge {pip_names}"
    if platform == DEBIAN and all(p.apt for p in packages):
        return "sudo apt install " + " ".join(p.apt for p in packages)
    python = python or qgis_python(platform)
    if platform == DEBIAN:  # Debian 12's Python is externally managed: pip needs leave for a --user install
        return f"{shlex.quote(python)} -m pip install --user --break-system-packages {pip_names}"
    return f"{shlex.quote(python)} -m pip install --user {pip_names}"


def where_to_run(platform: str | None = None) -> str:
    """Where the command of `install_command` is typed, in words."""
    platform = platform or detect_platform()
    return {WINDOWS: "in the OSGeo4W Shell (Start menu > QGIS > OSGeo4W Shell), then restart QGIS",
            MACOS: "in Terminal, then restart QGIS",
            CONDA: "in a terminal with QGIS's conda environment activated, then restart QGIS",
            DEBIAN: "in a terminal, then restart QGIS",
            LINUX: "in a terminal, then restart QGIS"}[platform]


def profile_packages_dir(profile_dir: str | Path) -> Path:
    """The folder *Install missing packages* installs into, in the QGIS profile folder `profile_dir`."""
    return Path(profile_dir) / "python" / PROFILE_PACKAGES


def add_profile_packages(profile_dir: str | Path) -> Path | None:
    """Put the profile's installed packages on sys.path (last), when that folder exists; returns it."""
    folder = profile_packages_dir(profile_dir)
    if folder.is_dir() and str(folder) not in sys.path:
        sys.path.append(str(folder))
        importlib.invalidate_caches()
    return folder if folder.is_dir() else None


def pip_install_args(packages: list[Package], profile_dir: str | Path, python: str | None = None) -> list[str]:
    """The pip command *Install missing packages* runs: QGIS's own Python installs the packages into the QGIS
    profile (no administrator rights, nothing outside the profile), with numpy held at the version QGIS runs so
    no package is built against another."""
    args = [python or qgis_python(), "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
            "--target", str(profile_packages_dir(profile_dir))]
    numpy = _installed_version("numpy")
    if numpy:
        args.append(f"numpy=={numpy}")
    return args + [p.pip for p in packages]


def _installed_version(distribution: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return ""


def guidance(packages: list[Package], platform: str | None = None) -> str:
    """One paragraph: which packages are missing, what needs each, and the command to run where."""
    if not packages:
        return ""
    platform = platform or detect_platform()
    needs = "; ".join(f"{p.pip} ({p.needed_for})" for p in packages)
    return (f"Not installed in QGIS's Python: {needs}. To install on {PLATFORM_NAMES[platform]}, run "
            f"{install_command(packages, platform)} {where_to_run(platform)}.")
