"""Fixtures of the Processing tests."""
from __future__ import annotations

from pathlib import Path

import pytest

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
