"""The Lodestar Processing provider: lists every algorithm module `processing/alg_*.py`."""
from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from qgis.core import QgsApplication, QgsProcessingProvider
from qgis.PyQt.QtGui import QIcon

from .base import LodestarAlgorithm, help_url

ICON_PATH = str(Path(__file__).resolve().parents[1] / "resources" / "icons" / "lodestar.svg")
MODELS_DIR = Path(__file__).resolve().parents[1] / "resources" / "models"


def algorithm_classes() -> list[type[LodestarAlgorithm]]:
    """Every LodestarAlgorithm subclass defined in this package's `alg_*` modules, sorted by id."""
    classes = []
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if not info.name.startswith("alg_"):
            continue
        module = importlib.import_module(f".{info.name}", __package__)
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, LodestarAlgorithm) and value.__module__ == module.__name__:
                classes.append(value)
    return sorted(classes, key=lambda cls: cls.ALGORITHM_ID)


def model_files() -> list[Path]:
    """The graphical models shipped with the plugin (`resources/models/*.model3`, named after the file)."""
    return sorted(MODELS_DIR.glob("*.model3"))


def model_algorithms() -> list:
    """The shipped models loaded as Processing model algorithms, each with the help link of its README section
    (a file that does not load is skipped, and said so in the Lodestar tab of the log)."""
    from qgis.core import Qgis, QgsMessageLog, QgsProcessingModelAlgorithm

    models = []
    for path in model_files():
        model = QgsProcessingModelAlgorithm()
        if model.fromFile(str(path)):
            content = model.helpContent()
            content["HELP_URL"] = help_url(path.stem)
            model.setHelpContent(content)
            models.append(model)
        else:
            QgsMessageLog.logMessage(f"The model {path} could not be read; reinstall the plugin to restore it.",
                                     "Lodestar", Qgis.Warning)
    return models


class LodestarProvider(QgsProcessingProvider):
    def id(self):
        return "lodestar"

    def name(self):
        return "Lodestar"

    def longName(self):  # noqa: N802 (QGIS API name)
        return "Lodestar mineral prospectivity (STA-CoT)"

    def icon(self):
        return QIcon(ICON_PATH)

    def svgIconPath(self):  # noqa: N802 (QGIS API name)
        return ICON_PATH

    def helpId(self):  # noqa: N802 (QGIS API name)
        return "lodestar"

    def loadAlgorithms(self):  # noqa: N802 (QGIS API name)
        for cls in algorithm_classes():
            self.addAlgorithm(cls())
        registry = QgsApplication.processingRegistry()
        if registry.providerById(self.id()) is None:
            # A model resolves its steps (and so its outputs) through the registry, which lists this provider
            # only once it has loaded: load the models then.
            registry.providerAdded.connect(self._registered)
            return
        for model in model_algorithms():
            self.addAlgorithm(model)

    def _registered(self, provider_id: str) -> None:
        if provider_id == self.id():
            QgsApplication.processingRegistry().providerAdded.disconnect(self._registered)
            self.refreshAlgorithms()
