"""Shared base of Lodestar Processing algorithms: ids, groups, help, errors and feedback."""
from __future__ import annotations

from enum import Enum

from qgis.core import QgsProcessingAlgorithm, QgsProcessingException

from ..plugin.errors import LodestarError
from ..plugin.progress import Progress


class Group(Enum):
    """Toolbox groups; the value is the group id (stable), the label its display name."""

    TOOLS = ("tools", "Executor tools")
    GRAPH = ("graph", "Spatial graph and localization")
    REASONING = ("reasoning", "Reasoning")
    EVALUATION = ("evaluation", "Evaluation")
    REFINEMENT = ("refinement", "Refinement")

    @property
    def group_id(self) -> str:
        return self.value[0]

    @property
    def label(self) -> str:
        return self.value[1]


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

    def createInstance(self):  # noqa: N802 (QGIS API name)
        return type(self)()

    @staticmethod
    def progress_for(feedback) -> Progress:
        """A core Progress that reports to Processing feedback and honours its cancel button."""
        if feedback is None:
            return Progress()
        return Progress(feedback.setProgress, feedback.pushInfo, feedback.isCanceled)

    def processAlgorithm(self, parameters, context, feedback):  # noqa: N802 (QGIS API name)
        try:
            return self.run_lodestar(parameters, context, feedback, self.progress_for(feedback))
        except LodestarError as exc:
            raise QgsProcessingException(str(exc)) from exc
