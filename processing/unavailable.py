"""An algorithm whose module needs a Python package that is not installed: listed in the Toolbox under its own id
(saved models keep working once the package is there), disabled with the package named and how to install it."""
from __future__ import annotations

from ..plugin.dependencies import Package, guidance
from ..plugin.errors import LodestarError
from .base import LodestarAlgorithm


class UnavailableAlgorithm(LodestarAlgorithm):
    """Subclasses set ALGORITHM_ID, DISPLAY_NAME, GROUP (read from the module that could not load) and MISSING."""

    MISSING: Package | None = None

    @classmethod
    def guidance(cls) -> str:
        return guidance([cls.MISSING])

    def displayName(self):  # noqa: N802 (QGIS API name)
        return f"{self.DISPLAY_NAME} (needs {self.MISSING.pip})"

    def shortHelpString(self):  # noqa: N802 (QGIS API name)
        return f"This algorithm cannot run in this QGIS: {self.guidance()}"

    def initAlgorithm(self, config=None):  # noqa: N802 (QGIS API name)
        """No parameters: the real ones come with the module once its package is installed."""

    def canExecute(self):  # noqa: N802 (QGIS API name)
        return False, self.guidance()

    def run(self, parameters, context, feedback, progress) -> dict:
        raise LodestarError(self.guidance())
