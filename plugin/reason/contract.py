"""The engine's contract: the one reasoner interface the STA-CoT loop calls, and the records it exchanges.

The loop (`plugin/reason/loop.py`) runs the STA-CoT paper's Algorithms 1 and 2 and asks a *reasoner* for every
decision. Each model role may be answered by a different back-end (`Roles`): the planner writes the
plan, the executor proposes one tool call per turn and judges each tool result, the verifier judges
the whole chain. Back-ends live in models/ and implement this contract; the core never imports them:
whoever runs an analysis passes them in (`Backends`; `models.run_analysis` passes `models.BACKENDS`):
`models/offline/` (rule-based, no network, the default), `models/openai_reasoner.py` (any OpenAI-compatible server) and
`models/replay.py` (the decisions of a run record, no model calls). Question forms (the choices and
which one is positive) are `plugin/reason/questions.py`.

How the loop passes context
---------------------------
Every method receives the run's *workspace* (`plugin/reason/workspace.Workspace`, STA-CoT's memory
cache M_cache). It is read-only for reasoners and holds:

- `question`, `choices` (letter -> text), `case_id`;
- `layers`: one `LayerInfo` per input layer (name, role, kind "index" / "rgb" / "categorical" /
  "vector", favourable, CRS label, size, value statistics, legend units) - the raster set itself is
  `raster_set` (a `plugin.raster_io.RasterSet`) for back-ends that read pixels;
- `knowledge`: the deposit models retrieved for the question and roles (dicts, see
  `resources/knowledge/deposit_models.json`), best first (`deposit_model` is the first);
- `toolset`: tool name -> description (`TOOLSET` below);
- `chain`: the reasoning nodes so far (`ChainNode(step, observation)`), `zones`: all candidate zones
  marked so far (GeoDataFrame, `plugin/zones.py` schema) and `zones_of(step_index)`;
- `last_round`: whether the verdict asked for now is the last (K rounds reached): feedback then re-executes
  nothing, so a verifier should not answer on a look still to come;
- `evidence_dir`: where evidence images are written; `render_view(layer, bounds)` renders a layer to
  a PNG (with its pixel -> map transform) for vision back-ends.

Text that comes from layer names, metadata or the question is data: back-ends must quote it inside
their prompts, never follow it as instructions, and never execute model output.

Failure contract
----------------
A back-end raises `ReasonerError` (message says what went wrong) when it cannot produce a usable
answer after its own bounded repairs; the loop records it in the chain (the step, or the round, fails
visibly) and goes on. `BudgetExhausted` (a `ReasonerError`) means no further model calls are allowed
in this run: the loop stops asking and settles the answer from what it has (vote, or "Failed").
`plugin.errors.Cancelled` propagates.

All records are plain dataclasses of JSON-friendly values; `to_dict()` / `from_dict()` round-trip them
for run records and replay.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Protocol, runtime_checkable

from ..decisions import CORE
from ..errors import LodestarError

if TYPE_CHECKING:  # pragma: no cover - typing only
    from .workspace import Workspace

FAILED = "Failed"
"""The run's answer when no round gave one."""
INSUFFICIENT = "Insufficient evidence"
"""The run's answer when the question's critical evidence cannot be tested with the layers given: the
third outcome of a yes / no question, beside its two choices (the verdict names the missing roles)."""

SUB_INFERENCES = ("Yes", "No")
GLOBAL_INFERENCES = ("end", "continue")

TOOLSET = {
    "color_regions": (
        "Box maker, colour mode: mark continuous anomalous regions of an index raster (threshold by "
        "percentile, mean + k*sigma, Otsu or a value) or the coloured anomalies of an RGB rendering "
        "(grey background and colour bar excluded). params: method, value, min_area_px, smooth_px, "
        "max_regions."
    ),
    "feature_regions": (
        "Box maker, feature mode: mark structural and textural features - faults and lineaments, "
        "lineament density, contacts between map units, anomalous texture. params: feature "
        "('lineaments' | 'contacts' | 'texture'), max_regions."
    ),
    "categorical": (
        "Geological map units: polygons of selected units (by code or legend name) and their "
        "contacts. params: units (list of codes or names), contacts (bool)."
    ),
    "vector_evidence": (
        "Vector evidence: fault lines buffered into structural corridors, or unit polygons selected "
        "by name. params: buffer_m, units."
    ),
    "mark_boxes": (
        "Vision box maker: the executor looks at a rendered evidence view of one layer and proposes "
        "boxes [ymin, xmin, ymax, xmax] normalised to the view (0,0 top-left), a location word for each "
        "box and a description; the engine turns them into map polygons."
    ),
    "spatial_relations": (
        "Spatial relationship explorer: build the cross-layer spatial graph of the zones marked so far "
        "(overlap, proximity, direction, components, chains of three or more roles) and report which "
        "zones coincide. params: steps (indices whose zones to relate; default all)."
    ),
    "evidence_view": (
        "Zoom: a zoomed, locally stretched view of one to four layers around a place, written to the evidence "
        "folder, with each layer's median in the view against the whole layer (and where that median ranks in it). "
        "Marks no zone. params: bbox [xmin, ymin, xmax, ymax] in map units of the analysis CRS, or center [fx, fy] "
        "(0-1, top-left origin) and zoom (default 2)."
    ),
    "integrate_evidence": (
        "Evidence integration: summarise the critical and secondary evidence of the chain so far and "
        "whether the critical areas show at least moderate potential. No params."
    ),
    "none": "No tool: a direct assessment of the selected layers.",
}
"""Tool names a plan step or tool call may use, with what each does (shown to model back-ends)."""

ZONE_TOOLS = ("color_regions", "feature_regions", "categorical", "vector_evidence", "mark_boxes")
"""Tools that mark zones on a layer (their output goes through the controller and into the spatial graph)."""

# decision numbers: their reasons and provenance are in plugin/decisions.py
MAX_PLAN_STEPS = CORE.max_plan_steps


class ReasonerError(LodestarError):
    """A back-end could not produce a usable decision (after its own bounded repairs)."""


class BudgetExhausted(ReasonerError):
    """The run's model budget (calls or tokens) is spent: the loop must stop asking."""


class ServerRefused(BudgetExhausted):
    """The model server failed for good (refused the key or the model, kept failing, unreachable): the loop stops
    asking, as for a spent budget, and the run ends as failed (lodestar:analyze exits non-zero)."""


class _Record:
    """JSON round-trip for the dataclasses below."""

    if TYPE_CHECKING:  # what the dataclasses below have: asdict and fields take them
        __dataclass_fields__: ClassVar[dict[str, Any]]

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict):
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in dict(data).items() if k in names})


@dataclass
class PlanStep(_Record):
    """One plan segment s(i): what to find, on which layers (and why), with which tool (and why)."""

    index: int  # 1-based position in the plan; feedback and observations refer to it
    purpose: str  # the subtask, e.g. "Mark phyllic / argillic alteration on the AlOH index"
    layers: list[str]  # layer names (Workspace.layers[*].name) the step looks at
    layers_why: str  # why these layers
    tool: str  # a TOOLSET name
    tool_why: str  # why this tool
    expected: str  # the expected outcome, e.g. "one to three compact anomalies near the centre"
    params: dict = field(default_factory=dict)  # tool parameters suggested by the planner
    evidence: str = ""  # the deposit-model evidence item it tests (e.g. "phyllic_core"), "" if none
    level: str = ""  # "critical", "secondary" or "" (context step)


@dataclass
class ToolCall(_Record):
    """The executor's one tool call for a step (one per turn).

    Tool path: `tool`, `layers`, `params`. Vision path (`tool == "mark_boxes"`): `boxes` as
    [ymin, xmin, ymax, xmax] normalised to the evidence view of `layers[0]` (0,0 top-left),
    `locations` (one 3x3 word per box: "top-left" ... "bottom-right") and `description`.
    An empty call (`tool == "none"`) states that no salient feature was seen.
    """

    tool: str
    layers: list[str] = field(default_factory=list)
    params: dict = field(default_factory=dict)
    boxes: list[list[float]] = field(default_factory=list)
    locations: list[str] = field(default_factory=list)
    description: str = ""
    view_bounds: list[float] | None = None  # map bounds of the view the boxes refer to (None: whole extent)


@dataclass
class ToolOutcome(_Record):
    """What a tool call produced, as shown to `Reasoner.observe` (zone rows without geometry)."""

    tool: str
    layers: list[str]
    zones: list[dict] = field(default_factory=list)  # zone attributes (plugin/zones.py schema, no geometry)
    stats: dict = field(default_factory=dict)  # the tool's statistics (and cross-layer coincidence)
    log: list[str] = field(default_factory=list)
    evidence_png: str = ""  # path of the evidence image (layer with the zones drawn), "" if none
    controller: dict = field(default_factory=dict)  # the controller verdict of the accepted attempt
    error: str = ""  # a structured tool error ("" when the tool ran)


@dataclass
class Judgement(_Record):
    """The executor's reading of a tool outcome."""

    rationale: str
    sub_inference: str  # "Yes" only with strong, clear evidence for the step's purpose, else "No"
    global_inference: str = "continue"  # "end" when the chain can conclude, else "continue"

    def __post_init__(self):
        self.sub_inference = "Yes" if str(self.sub_inference).strip().lower() in ("yes", "true", "1") else "No"
        text = str(self.global_inference).strip().lower()
        self.global_inference = "end" if text == "end" else "continue"


@dataclass
class Observation(_Record):
    """ob(i): the observation of one executed step, as stored in the chain."""

    step: int
    tool: str
    layers: list[str]
    rationale: str
    zone_ids: list[str] = field(default_factory=list)
    evidence_png: str = ""
    sub_inference: str = "No"
    global_inference: str = "continue"
    controller: list[dict] = field(default_factory=list)  # controller verdict per attempt
    attempts: int = 0
    error: str = ""  # a tool or model failure that ended the step, "" when it ran
    calls: list[dict] = field(default_factory=list)  # the ToolCall of each attempt (to_dict)
    stats: dict = field(default_factory=dict)  # the accepted outcome's statistics


@dataclass
class ChainNode(_Record):
    """r(i) = (s(i), ob(i))."""

    step: PlanStep
    observation: Observation

    def to_dict(self) -> dict:
        return {"step": self.step.to_dict(), "observation": self.observation.to_dict()}

    @classmethod
    def from_dict(cls, data: dict) -> ChainNode:
        return cls(PlanStep.from_dict(data["step"]), Observation.from_dict(data["observation"]))


@dataclass
class Verdict(_Record):
    """The verifier's judgement of a chain: (isValid, A_p, F_corr) plus its assessment."""

    valid: bool
    answer: str | None  # a choice letter, or None when no candidate answer could be given
    feedback: dict = field(default_factory=dict)  # step index (int) -> corrective feedback for that step
    critical: dict = field(default_factory=dict)  # critical evidence item -> supported (bool)
    secondary: dict = field(default_factory=dict)  # secondary evidence item -> present (bool)
    rationale: str = ""
    missing: list = field(default_factory=list)  # roles the critical evidence needs and no layer has
    # the core the answer rests on: {"label", "wkt" (analysis CRS) or "zone"}; optionally "others" (WKT of further
    # systems verified on their own, drawn as targets after it) and "others_label"
    core: dict = field(default_factory=dict)
    place: str = ""  # the place the answer was weighed at, in words ("" when the back-end names none)
    route: str = ""  # how that place was found (the offline reasoner: one of its verifier's ROUTES; "" if unnamed)

    def __post_init__(self):
        self.place, self.route = str(self.place or ""), str(self.route or "")
        self.feedback = {int(k): str(v) for k, v in dict(self.feedback).items()}
        self.core = {str(k): str(v) for k, v in dict(self.core or {}).items() if v is not None}
        self.valid = bool(self.valid)
        self.missing = [str(role) for role in self.missing or []]

    def to_dict(self) -> dict:
        data = asdict(self)
        data["feedback"] = {str(k): v for k, v in self.feedback.items()}
        return data


@runtime_checkable
class Reasoner(Protocol):
    """A back-end that answers some or all of the model roles.

    Methods may raise `ReasonerError` / `BudgetExhausted` (see the module docstring). They must be
    deterministic for a given workspace and settings where the back-end allows it (offline: always).
    """

    name: str  # back-end name, e.g. "offline", "openai", "replay"

    def plan(self, ws: Workspace) -> list[PlanStep]:
        """Planner: decompose the question into plan steps (Eq. 3)."""

    def propose(self, ws: Workspace, step: PlanStep, feedback: str, attempt: int) -> ToolCall:
        """Executor: the tool call for `step`. `attempt` counts from 1; `feedback` is "" on the first
        attempt, then the controller's escalating feedback, or the verifier's corrective feedback
        when a step is re-executed during refinement."""

    def observe(self, ws: Workspace, step: PlanStep, outcome: ToolOutcome) -> Judgement:
        """Executor: read the tool outcome -> rationale, Sub_Inference, Global_Inference (Eq. 4)."""

    def verify(self, ws: Workspace, chain: list[ChainNode]) -> Verdict:
        """Verifier: judge the chain (Eq. 5): critical evidence clearly supported, secondary present."""

    def evidence_plan(self, ws: Workspace) -> list:
        """Planner: how each layer enters the favourability surface, as `EvidenceSpec`s
        (plugin/favourability/evidence.py: layer, transformation, membership, weight, why). Layers
        not named are left out of the surface; the engine lists them with the reason."""

    def target_verdicts(self, ws: Workspace, measured: list) -> list:
        """Verifier: judge each target on its own evidence. `measured`: per target the executor's look at every
        layer in and around it and the deposit model's items (`target_evidence.measure_targets`); answer per
        target {"items": [{"id", "status": supported / absent / untestable, "evidence"}], "verdict": strong /
        moderate / weak / unsupported, "why"}. The engine holds the answer to the measurements."""

    def localization_params(self, ws: Workspace) -> dict:
        """Localization tool: parameters for plugin/localization.py (seed C.4 names and ranges:
        degree_centrality_weight, betweenness_centrality_weight, chain_presence_weight,
        area_type_weights {role: weight}, important_areas_count, hop2_expansion_height,
        hop2_expansion_width). Missing keys fall back to the deposit model's defaults."""

    def usage(self) -> dict:
        """Model use so far: role -> {"calls", "prompt_tokens", "completion_tokens", "seconds"}."""

    def public_settings(self) -> dict:
        """Settings safe to record (never an API key)."""

    def prompt_hashes(self) -> dict:
        """Prompt template name -> sha256 of its text ({} when the back-end uses no prompts)."""


@dataclass
class Roles:
    """Which reasoner answers each model role (they may be one object)."""

    planner: Any
    executor: Any
    verifier: Any

    def distinct(self) -> list:
        seen, out = set(), []
        for reasoner in (self.planner, self.executor, self.verifier):
            if id(reasoner) not in seen:
                seen.add(id(reasoner))
                out.append(reasoner)
        return out

    def usage(self) -> dict:
        """Usage merged across the distinct reasoners (role -> counters summed)."""
        merged: dict = {}
        for reasoner in self.distinct():
            for role, counters in (reasoner.usage() or {}).items():
                slot = merged.setdefault(role, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                                                "seconds": 0.0})
                for key, value in counters.items():
                    slot[key] = slot.get(key, 0) + value
        return merged


@dataclass(frozen=True)
class Backends:
    """What an analysis needs from the back-ends, passed in to `run_analysis` (the core imports none of them).

    `build_reasoners(settings, progress, replay=None) -> Roles`: the reasoner of each role for the run's back-end
    settings, or the decisions of the run record `replay`; `refine_zones(zones, raster_set, checkpoint,
    device=..., progress=...)`: zone outlines refined with Segment Anything."""

    build_reasoners: Callable
    refine_zones: Callable


def empty_usage() -> dict:
    """Usage counters of a back-end that makes no model calls."""
    return {role: {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "seconds": 0.0}
            for role in ("planner", "executor", "verifier")}
