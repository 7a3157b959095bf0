"""Shared base of Lodestar Processing algorithms: ids, groups, help, errors and feedback."""
from __future__ import annotations

import re
import time
from enum import Enum
from pathlib import Path

from qgis.core import QgsApplication, QgsProcessingAlgorithm, QgsProcessingException
from qgis.PyQt.QtCore import QCoreApplication, QThread, QUrl
from qgis.PyQt.QtGui import QIcon

from ..plugin.errors import LodestarError
from ..plugin.progress import Progress

EVENTS_EVERY_S = 0.1
"""How often, at most, a cancel check inside qgis_process lets it handle its pending events."""


def cancel_check(feedback):
    """`feedback.isCanceled`; inside qgis_process, the pending events handled first (at most every EVENTS_EVERY_S):
    there a Ctrl+C (SIGINT) reaches the feedback only through the event loop, which qgis_process itself runs only
    when the progress moves, and at most every 2 s, so a long step without progress would not stop for seconds. The
    algorithm runs on qgis_process's main thread; elsewhere (the QGIS desktop runs algorithms in a task thread, the
    dock has its own cancel) nothing else is done."""
    app = QCoreApplication.instance()
    if QgsApplication.platform() != "qgis_process" or app is None:
        return feedback.isCanceled
    last = [0.0]

    def cancelled() -> bool:
        now = time.monotonic()
        if now - last[0] >= EVENTS_EVERY_S and QThread.currentThread() == app.thread():
            last[0] = now
            QCoreApplication.processEvents()
        return feedback.isCanceled()

    return cancelled


class Group(Enum):
    """Toolbox groups; the value is the group id (stable), the label its display name."""

    TOOLS = ("tools", "Executor tools")
    GRAPH = ("graph", "Spatial graph and localization")
    REASONING = ("reasoning", "Reasoning")
    EVALUATION = ("evaluation", "Evaluation")
    REFINEMENT = ("refinement", "Refinement")
    MAPPING = ("mapping", "Prospectivity mapping steps")

    @property
    def group_id(self) -> str:
        return self.value[0]

    @property
    def label(self) -> str:
        return self.value[1]


PLUGIN_DIR = Path(__file__).resolve().parents[1]
ICONS_DIR = PLUGIN_DIR / "resources" / "icons"
README = PLUGIN_DIR / "README.md"
DEFAULT_ICON = ICONS_DIR / "lodestar.svg"

_EXECUTOR_TOOLS = "Executor tools (each a core function and a Processing algorithm)"
_GRAPH = "Spatial graph, localization, evaluation, Segment Anything, batches"
_STEPS = "Prospectivity mapping steps (each an algorithm)"
# The README section (its heading) that documents each algorithm, by algorithm id.
HELP_SECTIONS = {
    "analyze": "The reasoning engine (`lodestar:analyze`)",
    "analyze_cases": _GRAPH,
    "alteration_indices": _EXECUTOR_TOOLS,
    "color_regions": _EXECUTOR_TOOLS,
    "controller_check": _EXECUTOR_TOOLS,
    "evidence_view": _EXECUTOR_TOOLS,
    "feature_regions": _EXECUTOR_TOOLS,
    "unit_regions": _EXECUTOR_TOOLS,
    "read_map_legend": "Scanned geological maps (`lodestar:read_map_legend`)",
    "spatial_graph": _GRAPH,
    "localize": _GRAPH,
    "evaluate": _GRAPH,
    "refine_zones_sam": _GRAPH,
    "prospectivity_chain": _GRAPH,  # the shipped graphical model
    **{step: _STEPS for step in ("fuzzy_membership", "fuzzy_overlay", "weights_of_evidence", "wofe_response",
                                 "train_prospectivity_model", "predict_prospectivity", "delineate_targets",
                                 "prediction_area", "prospectivity_steps")},
}
FALLBACK_SECTION = "What it does"


def readme_anchor(heading: str) -> str:
    """The anchor a Markdown renderer (GitHub's rule) gives a heading: lower case, punctuation dropped, spaces
    as hyphens ("Spatial graph, localization, evaluation" -> "spatial-graph-localization-evaluation")."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def icon_path(algorithm_id: str) -> Path:
    """The algorithm's own icon, `resources/icons/alg_<id>.svg` (the Lodestar star where it has none)."""
    path = ICONS_DIR / f"alg_{algorithm_id}.svg"
    return path if path.is_file() else DEFAULT_ICON


def help_url(algorithm_id: str) -> str:
    """A file:// URL of the installed plugin's README.md at the section that documents the algorithm: it works
    offline and always matches the installed version (the README ships in the plugin zip)."""
    url = QUrl.fromLocalFile(str(README))
    url.setFragment(readme_anchor(HELP_SECTIONS.get(algorithm_id, FALLBACK_SECTION)))
    return url.toString()


class LodestarAlgorithm(QgsProcessingAlgorithm):
    """Subclasses set ALGORITHM_ID (fixed forever: saved models use it), DISPLAY_NAME, GROUP, HELP,
    and define `run(parameters, context, feedback, progress) -> dict` that reads parameters, calls
    the core and returns the outputs; core LodestarErrors become QgsProcessingExceptions."""

    ALGORITHM_ID = ""
    DISPLAY_NAME = ""
    GROUP: Group = Group.TOOLS
    HELP = ""

    def __init_subclass__(cls, **kwargs):
        # A subclass's `run(parameters, context, feedback, progress)` would hide QgsProcessingAlgorithm.run,
        # which processing.run() and the Toolbox dialog call; keep it as `run_lodestar` instead.
        super().__init_subclass__(**kwargs)
        if "run" in cls.__dict__:
            cls.run_lodestar = cls.__dict__["run"]
            delattr(cls, "run")

    def run(self, parameters, context, feedback, configuration=None, catchExceptions=True):  # noqa: N803 (QGIS API)
        """QgsProcessingAlgorithm.run (QGIS API), as processing.run() calls it."""
        return QgsProcessingAlgorithm.run(self, parameters, context, feedback, configuration or {}, catchExceptions)

    def name(self):
        return self.ALGORITHM_ID

    def displayName(self):  # noqa: N802 (QGIS API name)
        return self.DISPLAY_NAME

    def group(self):
        return self.GROUP.label

    def groupId(self):  # noqa: N802 (QGIS API name)
        return self.GROUP.group_id

    def shortHelpString(self):  # noqa: N802 (QGIS API name)
        return self.HELP

    def icon(self):
        return QIcon(str(icon_path(self.ALGORITHM_ID)))

    def svgIconPath(self):  # noqa: N802 (QGIS API name)
        return str(icon_path(self.ALGORITHM_ID))

    def helpUrl(self):  # noqa: N802 (QGIS API name)
        return help_url(self.ALGORITHM_ID)

    def createInstance(self):  # noqa: N802 (QGIS API name)
        return type(self)()

    @staticmethod
    def progress_for(feedback) -> Progress:
        """A core Progress that reports to Processing feedback and honours its cancel button."""
        if feedback is None:
            return Progress()
        return Progress(feedback.setProgress, feedback.pushInfo, cancel_check(feedback))

    def processAlgorithm(self, parameters, context, feedback):  # noqa: N802 (QGIS API name)
        try:
            return self.run_lodestar(parameters, context, feedback, self.progress_for(feedback))
        except LodestarError as exc:
            raise QgsProcessingException(str(exc)) from exc
