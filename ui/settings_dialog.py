"""Plugin settings (QgsSettings, no secrets) and the dialog that edits them."""
from __future__ import annotations

import importlib.util
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from qgis.core import QgsApplication, QgsProject, QgsSettings, QgsTask
from qgis.gui import QgsFileWidget
from qgis.PyQt import sip, uic
from qgis.PyQt.QtWidgets import QDialog

from ..plugin.analysis import ROLES_OF_MODELS, BackendSettings
from ..plugin.errors import LodestarError
from ..plugin.request import request
from ..plugin.request.request import BackendValues
from ..processing import secrets
from ..processing.backend_params import STRUCTURED_OPTIONS, VISION_OPTIONS

PREFIX = "lodestar/"
WHERE = {"base_url": "in Lodestar settings (the gear button)", "planner": "in Lodestar settings (the gear button)",
         "question": "in the question box", "sam_checkpoint": "in Lodestar settings (the gear button)",
         "favourable_units": "Favourable units", "deposits": "the known deposits (a point layer)",
         "area_share": "the share the targets cover", "block_size_m": "Calibration blocks", "folds": "Folds",
         "seed": "Seed"}
"""How the request builder's messages name the places of the dock and this dialog."""
VISION_ROLES = ("executor", "verifier")
"""The roles whose models may be sent images (the evidence goes as text to a model that sees none)."""
FORM_CLASS, _ = uic.loadUiType(str(Path(__file__).with_name("settings_dialog.ui")))


def _choice(value, options: tuple) -> str:
    """A stored choice, or the first option when the stored value is not one of them."""
    return str(value) if str(value) in options else options[0]


def slug(text: str) -> str:
    """`text` as a short lower-case file-name part ('run' when nothing is left)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "run"


@dataclass
class PluginSettings:
    """What the user set once and keeps between sessions. The API key is NOT here (see processing.secrets)."""

    backend: str = "offline"
    base_url: str = ""
    models: dict = field(default_factory=lambda: {role: "" for role in ROLES_OF_MODELS})
    temperature: float = 0.05
    max_rounds: int = 3
    max_tokens: int = 400_000
    sam_checkpoint: str = ""
    output_dir: str = ""
    dask_scheduler: str = ""  # a Dask scheduler address (tcp://host:8786); empty: local threads
    timeout_s: float = 60.0  # model calls: the wait for one attempt
    attempts: int = 5  # tries of one model call (after timeouts, 429 / 5xx, lost connections)
    deadline_s: float = 180.0  # the longest one model call may take, retries included
    answer_tokens: int = 0  # max_tokens of every answer; 0: sized per role from its schema
    vision: dict = field(default_factory=lambda: {"executor": "auto", "verifier": "auto"})  # "auto", "yes", "no"
    structured: str = "auto"  # "auto", "json_schema", "json_object", "off"

    @classmethod
    def load(cls) -> PluginSettings:
        s = QgsSettings()
        d = cls()
        return cls(
            backend=str(s.value(PREFIX + "backend", d.backend)),
            base_url=str(s.value(PREFIX + "base_url", d.base_url)),
            models={role: str(s.value(f"{PREFIX}model_{role}", "")) for role in ROLES_OF_MODELS},
            temperature=float(s.value(PREFIX + "temperature", d.temperature)),
            max_rounds=int(s.value(PREFIX + "max_rounds", d.max_rounds)),
            max_tokens=int(s.value(PREFIX + "max_tokens", d.max_tokens)),
            sam_checkpoint=str(s.value(PREFIX + "sam_checkpoint", d.sam_checkpoint)),
            output_dir=str(s.value(PREFIX + "output_dir", d.output_dir)),
            dask_scheduler=str(s.value(PREFIX + "dask_scheduler", d.dask_scheduler)),
            timeout_s=float(s.value(PREFIX + "timeout_s", d.timeout_s)),
            attempts=int(s.value(PREFIX + "attempts", d.attempts)),
            deadline_s=float(s.value(PREFIX + "deadline_s", d.deadline_s)),
            answer_tokens=int(s.value(PREFIX + "answer_tokens", d.answer_tokens)),
            vision={role: _choice(s.value(f"{PREFIX}vision_{role}", "auto"), VISION_OPTIONS) for role in VISION_ROLES},
            structured=_choice(s.value(PREFIX + "structured", d.structured), STRUCTURED_OPTIONS),
        )

    def save(self) -> None:
        s = QgsSettings()
        s.setValue(PREFIX + "backend", self.backend)
        s.setValue(PREFIX + "base_url", self.base_url)
        for role in ROLES_OF_MODELS:
            s.setValue(f"{PREFIX}model_{role}", self.models.get(role, ""))
        s.setValue(PREFIX + "temperature", float(self.temperature))
        s.setValue(PREFIX + "max_rounds", int(self.max_rounds))
        s.setValue(PREFIX + "max_tokens", int(self.max_tokens))
        s.setValue(PREFIX + "sam_checkpoint", self.sam_checkpoint)
        s.setValue(PREFIX + "output_dir", self.output_dir)
        s.setValue(PREFIX + "dask_scheduler", self.dask_scheduler)
        s.setValue(PREFIX + "timeout_s", float(self.timeout_s))
        s.setValue(PREFIX + "attempts", int(self.attempts))
        s.setValue(PREFIX + "deadline_s", float(self.deadline_s))
        s.setValue(PREFIX + "answer_tokens", int(self.answer_tokens))
        for role in VISION_ROLES:
            s.setValue(f"{PREFIX}vision_{role}", self.vision.get(role, "auto"))
        s.setValue(PREFIX + "structured", self.structured)

    def calls(self) -> dict:
        """The model-call settings as BackendSettings fields."""
        roles = (*ROLES_OF_MODELS, "localization", "evidence")
        return {"timeout_s": float(self.timeout_s), "max_retries": max(0, int(self.attempts) - 1),
                "deadline_s": float(self.deadline_s),
                "answer_tokens": {role: int(self.answer_tokens) for role in roles} if self.answer_tokens > 0 else {},
                "vision": dict(self.vision), "structured": self.structured}

    @property
    def sam_available(self) -> bool:
        return bool(self.sam_checkpoint) and Path(self.sam_checkpoint).is_file()

    def runs_folder(self) -> Path:
        """Where run sub-folders go: the chosen folder, else beside the saved project, else in the profile."""
        if self.output_dir:
            return Path(self.output_dir)
        home = QgsProject.instance().homePath()
        if home:
            return Path(home) / "lodestar-runs"
        return Path(QgsApplication.qgisSettingsDirPath()) / "lodestar" / "runs"

    def new_run_folder(self, label: str) -> Path:
        """A folder for a new run, named after the time and `label`, that does not exist yet."""
        stem = f"{time.strftime('%Y%m%d-%H%M%S')}-{slug(label)}"
        folder, n = self.runs_folder() / stem, 1
        while folder.exists():
            n += 1
            folder = self.runs_folder() / f"{stem}-{n}"
        return folder

    def backend_values(self, backend: str | None = None, api_key: str | None = None) -> BackendValues:
        """The back-end as set here; for `openai` the key is found by the one rule (`secrets.api_key`) unless
        given."""
        backend = backend or self.backend
        if backend == "openai" and api_key is None:
            api_key = secrets.api_key()
        return BackendValues(backend=backend, base_url=self.base_url, api_key=api_key or "", models=dict(self.models),
                             temperature=float(self.temperature), max_tokens=int(self.max_tokens), calls=self.calls())

    def openai_problem(self) -> str:
        """What is missing before the openai back-end can run ('' when nothing)."""
        problem = request.backend_problem(self.backend_values("openai", api_key=""), WHERE)
        if problem:
            return problem
        if not secrets.key_available():
            return "Enter the model server's API key in Lodestar settings (it is stored encrypted by QGIS)."
        return ""

    def run_problem(self, backend: str, sam: bool) -> str:
        """What stops a run with `backend` (and SAM refinement when `sam`): a missing package or setting, said as
        what to do; '' when nothing."""
        if backend == "openai":
            if importlib.util.find_spec("openai") is None:
                return ("The model-server reasoner needs the Python package 'openai': run "
                        "python -m pip install openai with QGIS's Python, or choose the offline reasoner.")
            problem = self.openai_problem()
            if problem:
                return problem
        missing = [p for p in ("torch", "segment_anything") if importlib.util.find_spec(p) is None] if sam else []
        if missing:
            return (f"Segment Anything refinement needs {' and '.join(missing)}: install with QGIS's "
                    "Python (python -m pip install torch segment-anything), or untick the refinement.")
        return ""


class SettingsDialog(QDialog, FORM_CLASS):
    """Endpoint, models per role, temperature, rounds, budget, SAM checkpoint, API key, connection test."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setupUi(self)
        self.samCheckpointWidget.setStorageMode(QgsFileWidget.GetFile)
        self.samCheckpointWidget.setFilter("PyTorch checkpoints (*.pth *.pt);;All files (*)")
        self.outputDirWidget.setStorageMode(QgsFileWidget.GetDirectory)
        for combo in (self.executorVisionCombo, self.verifierVisionCombo):
            combo.addItems(list(VISION_OPTIONS))
        self.structuredCombo.addItems(list(STRUCTURED_OPTIONS))
        self._test_task: QgsTask | None = None
        self.show_settings(PluginSettings.load())
        self.buttonBox.accepted.connect(self.accept)
        self.buttonBox.rejected.connect(self.reject)
        self.testButton.clicked.connect(self.test_connection)
        self.clearKeyButton.clicked.connect(self._forget_key)

    def show_settings(self, settings: PluginSettings) -> None:
        self._backend = settings.backend
        self.baseUrlEdit.setText(settings.base_url)
        self.plannerModelEdit.setText(settings.models.get("planner", ""))
        self.executorModelEdit.setText(settings.models.get("executor", ""))
        self.verifierModelEdit.setText(settings.models.get("verifier", ""))
        self.temperatureSpin.setValue(settings.temperature)
        self.maxRoundsSpin.setValue(settings.max_rounds)
        self.tokenBudgetSpin.setValue(settings.max_tokens)
        self.samCheckpointWidget.setFilePath(settings.sam_checkpoint)
        self.outputDirWidget.setFilePath(settings.output_dir)
        self.daskSchedulerEdit.setText(settings.dask_scheduler)
        self.timeoutSpin.setValue(settings.timeout_s)
        self.attemptsSpin.setValue(settings.attempts)
        self.deadlineSpin.setValue(settings.deadline_s)
        self.answerTokensSpin.setValue(settings.answer_tokens)
        self.executorVisionCombo.setCurrentText(settings.vision.get("executor", "auto"))
        self.verifierVisionCombo.setCurrentText(settings.vision.get("verifier", "auto"))
        self.structuredCombo.setCurrentText(settings.structured)
        self.apiKeyEdit.clear()
        self._show_key_state()

    def _show_key_state(self) -> None:
        stored = secrets.has_api_key()
        self.apiKeyEdit.setPlaceholderText("a key is stored (type to replace it)" if stored else "no key stored")
        self.clearKeyButton.setEnabled(stored)

    def settings(self) -> PluginSettings:
        """The settings as edited (not yet saved)."""
        return PluginSettings(
            backend=self._backend,
            base_url=self.baseUrlEdit.text().strip(),
            models={
                "planner": self.plannerModelEdit.text().strip(),
                "executor": self.executorModelEdit.text().strip(),
                "verifier": self.verifierModelEdit.text().strip(),
            },
            temperature=self.temperatureSpin.value(),
            max_rounds=self.maxRoundsSpin.value(),
            max_tokens=self.tokenBudgetSpin.value(),
            sam_checkpoint=self.samCheckpointWidget.filePath().strip(),
            output_dir=self.outputDirWidget.filePath().strip(),
            dask_scheduler=self.daskSchedulerEdit.text().strip(),
            timeout_s=self.timeoutSpin.value(),
            attempts=self.attemptsSpin.value(),
            deadline_s=self.deadlineSpin.value(),
            answer_tokens=self.answerTokensSpin.value(),
            vision={"executor": self.executorVisionCombo.currentText(),
                    "verifier": self.verifierVisionCombo.currentText()},
            structured=self.structuredCombo.currentText(),
        )

    def accept(self) -> None:
        try:
            self.save()
        except LodestarError as exc:
            self.testResultLabel.setText(str(exc))
            return
        super().accept()

    def save(self) -> None:
        """Save the settings; a typed key goes to the auth database and the field is cleared."""
        key = self.apiKeyEdit.text().strip()
        if key:
            secrets.store_api_key(key)
            self.apiKeyEdit.clear()
        self.settings().save()
        self._show_key_state()

    def _forget_key(self) -> None:
        secrets.clear_api_key()
        self._show_key_state()

    def test_connection(self) -> None:
        """Ask the server for a tiny answer in a background task; the result shows beside the button."""
        key = self.apiKeyEdit.text().strip()
        try:
            values = self.settings().backend_values("openai", api_key=key or None)
        except LodestarError as exc:
            self.testResultLabel.setText(str(exc))
            return
        if not values.base_url.strip():
            self.testResultLabel.setText("Enter the endpoint base URL first.")
            return
        backend = request.backend_settings(values, checked=False)  # listing the models needs no model named
        backend.timeout_s = 15.0
        backend.max_retries = 0
        self.testButton.setEnabled(False)
        self.testResultLabel.setText("Connecting...")
        self._test_task = QgsTask.fromFunction("Lodestar: test connection", _check_connection, backend,
                                               on_finished=self._connection_tested)
        QgsApplication.taskManager().addTask(self._test_task)

    def _connection_tested(self, exception, outcome=None) -> None:
        if sip.isdeleted(self):  # the dialog was closed while the test ran
            return
        self._test_task = None
        self.testButton.setEnabled(True)
        if exception is not None:
            self.testResultLabel.setText(f"Connection failed: {exception}")
        else:
            self.testResultLabel.setText(outcome)


def _check_connection(task, backend: BackendSettings) -> str:
    """Runs in a worker thread: the client's connection test, as one line for the dialog."""
    from ..models.llm_client import test_connection

    outcome = test_connection(backend)
    if isinstance(outcome, str) and outcome:
        return outcome
    return f"Connected to {backend.base_url}."
