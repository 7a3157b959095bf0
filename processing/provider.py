"""The Lodestar Processing provider: lists every algorithm module `processing/alg_*.py`."""
from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

from qgis.core import Qgis, QgsApplication, QgsMessageLog, QgsProcessingModelAlgorithm, QgsProcessingProvider
from qgis.PyQt.QtGui import QIcon

from ..plugin.dependencies import guidance, package_of
from .base import Group, LodestarAlgorithm, help_url
from .unavailable import UnavailableAlgorithm

ICON_PATH = str(Path(__file__).resolve().parents[1] / "resources" / "icons" / "lodestar.svg")
MODELS_DIR = Path(__file__).resolve().parents[1] / "resources" / "models"
_SAID: set = set()
"""The missing packages already named in the log."""


def algorithm_classes() -> list[type[LodestarAlgorithm]]:
    """Every LodestarAlgorithm subclass defined in this package's `alg_*` modules, sorted by id. A module that
    cannot be imported because a Python package is missing gives, for each algorithm it defines, an
    UnavailableAlgorithm under the same id that names the package and how to install it (said once in the
    Lodestar tab of the log); the others load as usual."""
    classes, unavailable = [], {}
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if not info.name.startswith("alg_"):
            continue
        try:
            module = importlib.import_module(f".{info.name}", __package__)
        except ImportError as exc:
            package = package_of(exc)
            if package is None:
                raise
            stand_ins = _unavailable_classes(Path(__file__).with_name(f"{info.name}.py"), package)
            unavailable.setdefault(package, []).extend(cls.ALGORITHM_ID for cls in stand_ins)
            classes.extend(stand_ins)
            continue
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, LodestarAlgorithm) and value.__module__ == module.__name__:
                classes.append(value)
    for package, ids in unavailable.items():
        if package in _SAID:  # the provider loads its algorithms again once registered: said once a session
            continue
        _SAID.add(package)
        QgsMessageLog.logMessage(f"{len(ids)} Lodestar algorithms cannot run ({', '.join(sorted(ids))}). "
                                 f"{guidance([package])}", "Lodestar", Qgis.Warning)
    return sorted(classes, key=lambda cls: cls.ALGORITHM_ID)


def _unavailable_classes(path: Path, package) -> list[type[UnavailableAlgorithm]]:
    """The algorithms an `alg_*` module defines, read from its source (it cannot be imported): each class's
    ALGORITHM_ID, DISPLAY_NAME and GROUP, as an UnavailableAlgorithm missing `package`."""
    classes = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if not isinstance(node, ast.ClassDef):
            continue
        values = {}
        for statement in node.body:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and \
                    isinstance(statement.targets[0], ast.Name):
                name, value = statement.targets[0].id, statement.value
                if name in ("ALGORITHM_ID", "DISPLAY_NAME") and isinstance(value, ast.Constant):
                    values[name] = value.value
                elif name == "GROUP" and isinstance(value, ast.Attribute):
                    values[name] = Group[value.attr]
        if values.get("ALGORITHM_ID"):
            classes.append(type(node.name, (UnavailableAlgorithm,), {**values, "MISSING": package}))
    return classes


def model_files() -> list[Path]:
    """The graphical models shipped with the plugin (`resources/models/*.model3`, named after the file)."""
    return sorted(MODELS_DIR.glob("*.model3"))


MODEL_TITLES = {"prospectivity_chain": "Prospectivity chain (colour regions, graph, targets, evaluation)",
                "prospectivity_steps": "Prospectivity mapping steps (membership, overlay, targets, prediction-area)"}
"""The title each shipped model shows in the Toolbox; its id stays its file's name (saved models and scripts call
it by `lodestar:<file name>`)."""


def model_algorithms() -> list:
    """The shipped models loaded as Processing model algorithms, each with its title and the help link of its
    README section (a file that does not load is skipped, and said so in the Lodestar tab of the log)."""
    models = []
    for path in model_files():
        model = ShippedModel(path)
        if model.loaded:
            models.append(model)
        else:
            QgsMessageLog.logMessage(f"The model {path} could not be read; reinstall the plugin to restore it.",
                                     "Lodestar", Qgis.Warning)
    return models


class ShippedModel(QgsProcessingModelAlgorithm):
    """A shipped graphical model: the file's model under its title (MODEL_TITLES), its id the file's name."""

    def __init__(self, path: Path):
        super().__init__()
        self.path = Path(path)
        self.loaded = self.fromFile(str(self.path))
        if self.loaded:
            content = self.helpContent()
            content["HELP_URL"] = help_url(self.path.stem)
            self.setHelpContent(content)

    def displayName(self):  # noqa: N802 (QGIS API name)
        return MODEL_TITLES.get(self.name(), self.name().replace("_", " "))

    def createInstance(self):  # noqa: N802 (QGIS API name)
        return ShippedModel(self.path)


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
