"""Test set-up: the checkout imported as the `lodestar` package, QGIS's processing on sys.path."""
from __future__ import annotations

import fcntl
import os
import sys
import traceback
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIR = ROOT / "build" / "testpkg"
QGIS_PLUGINS = "/usr/share/qgis/python/plugins"

TIMING_LOCK = ROOT / "build" / "tests-timing.lock"

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# QGIS writes GDAL statistics sidecars (.aux.xml) beside rasters it loads; inputs stay untouched in tests.
os.environ["GDAL_PAM_ENABLED"] = "NO"
# Each pytest-xdist worker runs scripts/qgis_process.sh with a profile of its own (pytest-qgis does the same for
# the QGIS it starts in the worker).
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("LODESTAR_QGIS_HOME", str(ROOT / "build" / f"qgis-{os.environ['PYTEST_XDIST_WORKER']}"))
PACKAGE_DIR.mkdir(parents=True, exist_ok=True)
_link = PACKAGE_DIR / "lodestar"
try:
    _link.symlink_to(ROOT, target_is_directory=True)
except FileExistsError:  # made before, or by another worker at the same moment
    pass
# QGIS's `processing` must win over the checkout's own processing/ folder (`python -m pytest` puts the
# working directory on sys.path), so these go first even when already present further down.
for entry in (str(ROOT / "tests"), str(ROOT / "scripts"), str(PACKAGE_DIR), QGIS_PLUGINS):
    while entry in sys.path:
        sys.path.remove(entry)
    sys.path.insert(0, entry)


@pytest.fixture(autouse=True)
def slot_exceptions_fail_the_test(monkeypatch):
    """An exception raised in a Qt slot fails the test that raised it, with its traceback (with Python's own
    excepthook in place, PyQt aborts the whole process instead)."""
    caught = []
    monkeypatch.setattr(sys, "excepthook", lambda *exc_info: caught.append(exc_info))
    yield
    if caught:
        pytest.fail(f"{len(caught)} exception(s) in Qt slots:\n" + "\n".join(
            "".join(traceback.format_exception(*exc_info)) for exc_info in caught))


@pytest.fixture(autouse=True)
def timed_tests_run_alone(request):
    """A test marked `timing` (it asserts how soon something happens) holds the suite's lock alone; every other test
    shares it. Under pytest-xdist the other worker waits while a timed test runs, so its bound measures the code, not
    the neighbour's load; run serially, the lock is never contended."""
    TIMING_LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(TIMING_LOCK, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX if request.node.get_closest_marker("timing") else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture
def lodestar_registry(qgis_processing):
    """The Processing registry with the Lodestar provider registered (removed again afterwards)."""
    from qgis.core import QgsApplication

    from lodestar.processing.provider import LodestarProvider

    registry = QgsApplication.processingRegistry()
    provider = None
    if registry.providerById("lodestar") is None:
        provider = LodestarProvider()
        registry.addProvider(provider)
    yield registry
    if provider is not None:
        registry.removeProvider(provider)


@pytest.fixture
def run(lodestar_registry):
    """`processing.run` with the Lodestar provider available."""
    import processing

    return processing.run


MASTER_PASSWORD = "lodestar-test-master"


@pytest.fixture
def auth_ready(qgis_app):
    """The test profile's auth database unlocked with a known master password (never a real profile), with no
    stored Lodestar key before or after."""
    from qgis.core import QgsApplication

    from lodestar.processing import secrets

    profile = Path(QgsApplication.qgisSettingsDirPath()).resolve()
    assert ".qgis-settings" in profile.parts, f"not pytest-qgis's test profile: {profile}"
    manager = QgsApplication.authManager()
    assert not manager.isDisabled()
    if not manager.setMasterPassword(MASTER_PASSWORD, True):
        manager.eraseAuthenticationDatabase(False)
        assert manager.setMasterPassword(MASTER_PASSWORD, True)
    secrets.clear_api_key()
    yield manager
    secrets.clear_api_key()


@pytest.fixture(scope="session")
def great_basin_run(tmp_path_factory):
    """The Great Basin case (`tests/data`) run offline as a user runs it: its question, choices, deposits and named
    host units; made once for the tests that read its answer and outputs (a run takes about 13 s)."""
    from lodestar.models import run_analysis
    from lodestar.plugin.analysis import AnalysisRequest
    from lodestar.plugin.request.case import read_case

    case = read_case(ROOT / "tests" / "data" / "great-basin-gold")
    return run_analysis(AnalysisRequest(case.layers, case.question, tmp_path_factory.mktemp("great-basin"),
                                        dict(case.choices), case_id=case.id, deposits=case.deposits,
                                        favourable_units=dict(case.favourable_units)))
