"""The one exception type the core raises for problems a user can fix."""
from __future__ import annotations


class LodestarError(Exception):
    """A problem with the input or environment, with a message that says what to do.

    Processing algorithms turn it into a QgsProcessingException, the dock into a message bar entry.
    """


class Cancelled(LodestarError):
    """The user cancelled the run."""

    def __init__(self, message: str = "Cancelled by the user."):
        super().__init__(message)


def require_package(module: str, package: str, feature: str):
    """Import an optional dependency, or raise a LodestarError naming what to install."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise LodestarError(
            f"{feature} needs the Python package '{package}', which is not installed in QGIS's Python. "
            f"Install it with: python -m pip install {package} (using the Python that QGIS runs)."
        ) from exc
