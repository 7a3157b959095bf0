"""What one analysis run takes and gives: the contract shared by the engine, Processing and the dock."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import geopandas as gpd

from .methods import CalibrationChoice
from .raster_io import LayerSpec

ROLES_OF_MODELS = ("planner", "executor", "verifier")
MAX_LAYERS = 64
"""The most layers a run takes. Each raster is held whole on the analysis grid (up to 4 million cells, with its
background spreads and contrast maps beside it: 64 such layers hold a few GB), the plan examines at most 10 of
them step by step, and the verifier's scan for places where three layers stand out together grows with the cube
of the layers. A case of a thousand layers is refused at once rather than left running for hours."""


OFFLINE_MODEL = "offline"
"""A role whose model name is "offline" is answered by the offline reasoner, also with the openai back-end."""
Backend = Literal["offline", "openai"]
"""Which reasoner answers: "offline" (rule-based, no network) or "openai" (any OpenAI-compatible server)."""
Vision = Literal["auto", "yes", "no"]
"""Whether a role's model sees images: ask the server (else try), yes, or no (text evidence)."""
Structured = Literal["auto", "json_schema", "json_object", "off"]
"""How answers are constrained: the JSON schema where the server takes it, else JSON mode; only the schema; only
JSON mode; nothing (the repair loop alone)."""


@dataclass
class BackendSettings:
    """Which reasoner answers, and how it is reached. The API key is never written anywhere."""

    backend: Backend = "offline"
    base_url: str = ""
    api_key: str = field(default="", repr=False)
    models: dict = field(default_factory=lambda: {role: "" for role in ROLES_OF_MODELS})
    temperature: float = 0.05
    seed: int | None = 7
    timeout_s: float = 60.0
    max_retries: int = 4
    retry_backoff_s: float = 1.0  # first wait before retrying a 429 / 5xx / lost connection; doubles each time
    max_calls: int = 80
    max_tokens: int = 400_000
    cache_dir: Path | None = None
    deadline_s: float = 180.0  # the longest one model call may take, every attempt and back-off wait included
    answer_tokens: dict = field(default_factory=dict)  # role -> max_tokens of one answer; 0 or absent: from its schema
    vision: dict[str, Vision] = field(default_factory=dict)  # role -> whether its model sees images
    structured: Structured = "auto"

    def public(self) -> dict:
        """Settings as recorded in run records and reports (no API key)."""
        return {
            "backend": self.backend,
            "base_url": self.base_url,
            "models": dict(self.models),
            "temperature": self.temperature,
            "seed": self.seed,
            "timeout_s": self.timeout_s,
            "max_retries": self.max_retries,
            "retry_backoff_s": self.retry_backoff_s,
            "max_calls": self.max_calls,
            "max_tokens": self.max_tokens,
            "deadline_s": self.deadline_s,
            "answer_tokens": dict(self.answer_tokens),
            "vision": dict(self.vision),
            "structured": self.structured,
        }


@dataclass
class AnalysisRequest:
    """One question over a set of layers."""

    layers: list[LayerSpec]
    question: str
    output_dir: Path
    choices: dict = field(default_factory=lambda: {"A": "Yes", "B": "No"})
    settings: BackendSettings = field(default_factory=BackendSettings)
    max_rounds: int = 3
    case_id: str = ""
    deposits: Path | None = None
    localization: dict | None = None  # overrides of localization parameters
    controller: dict | None = None  # overrides of the controller's limits (ControllerLimits field -> value)
    refine_with_sam: bool = False
    sam_checkpoint: Path | None = None
    sam_device: str = "cpu"
    replay: Path | None = None  # a run record to replay with no model calls
    favourable_units: dict = field(default_factory=dict)  # layer name -> unit codes or names the user calls favourable
    calibrate: CalibrationChoice = ""  # "" (knowledge-driven) or a model fitted on `deposits` with spatial block CV
    cross_validation: dict = field(default_factory=dict)  # block_size_m, folds, seed of the calibration's blocks
    area_share: float = 0.10  # share of the analysed area the prospectivity targets cover
    max_target_km2: float | None = None  # the largest target; None: the deposit model's (camp) footprint
    min_target_km2: float | None = None  # the smallest target; None: from the deposit model's footprint (target_sizes)
    max_targets: int | None = None  # the targets drawn (the work list); None: target_sizes.WORK_LIST
    evidence_plan: dict | None = None  # the geologist's evidence plan (plan_file.py's dict): replaces the agent's
    deposit_model: str = ""  # the deposit model's id the geologist picked; '' chooses it from the question and layers
    user_models: list = field(default_factory=list)  # the user's own deposit models (deposit_models.py), checked
    output_names: dict = field(default_factory=dict)  # output (run.OUTPUT_FILES key) -> the name the user finds it by


@dataclass
class AnalysisResult:
    """The answer, the chain behind it, and the layers and files it produced."""

    answer: str  # a choice letter, or "Failed"
    answer_text: str
    valid: bool  # the verifier accepted a chain (False: the answer came from the vote)
    voted: bool
    rounds: int
    zones: gpd.GeoDataFrame
    nodes: gpd.GeoDataFrame
    edges: gpd.GeoDataFrame
    prospectivity: gpd.GeoDataFrame
    chain: list = field(default_factory=list)
    verdicts: list = field(default_factory=list)
    usage: dict = field(default_factory=dict)  # role -> {"calls", "prompt_tokens", "completion_tokens", "seconds"}
    outputs: dict = field(default_factory=dict)  # name -> Path (zones, nodes, edges, prospectivity, report, record)
    metrics: dict = field(default_factory=dict)  # localization metrics when known deposits were given
    notes: list = field(default_factory=list)  # what the run wants the user to know (settling, budget, skipped)
    weights: list = field(default_factory=list)  # weights table: layer, role, transformation, membership, weight, why
    unused: list = field(default_factory=list)  # [{"layer", "reason"}]: given layers that fed no step and no surface
    validation: dict = field(default_factory=dict)  # surface scores against known deposits (cross-validated first)
    stopped: str = ""  # why model calls stopped when a model server failed for good ('' otherwise): the run failed
    prospects: gpd.GeoDataFrame | None = None  # the prospects inside the targets (their `camp`: the target's rank)
