"""The one request builder: plain values from the dock or a Processing algorithm in, an AnalysisRequest out.

The rules live here once: choices parsed from the question unless given, executor and verifier models
falling back to the planner's, the same token budget, a layer's legend and favourable side, the favourable
units a user names for a categorical map, the calibration and target area share of the prospectivity map,
and messages that say what to do and where (each caller names its own places: a parameter key, a settings
page).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, get_args

from ..analysis import ROLES_OF_MODELS, AnalysisRequest, Backend, BackendSettings
from ..errors import LodestarError
from ..favourability.plan_file import EvidencePlan, read_plan
from ..methods import CalibrationChoice
from ..raster_io import LayerSpec
from ..reason.deposit_models import model_ids
from ..reason.questions import parse_choices
from ..roles import check_role, guess_favourable, guess_role
from ..tools.categorical import names_units, read_legend
from ..tools.lithology_words import matched_units
from .record import read_replayed, replayed_request

BACKENDS: tuple[Backend, ...] = get_args(Backend)
_CALIBRATION_LABELS: dict[CalibrationChoice, str] = {
    "": "none (knowledge-driven)", "wofe": "weights of evidence", "logistic": "logistic regression",
    "forest": "random forest", "boosting": "gradient boosting",
    "best": "best out of fold (the four and their ensemble compared)"}
CALIBRATIONS = tuple((key, _CALIBRATION_LABELS[key]) for key in get_args(CalibrationChoice))
"""Calibration methods (the request's `calibrate` value, its label), in the order dock and Processing list them."""
AREA_SHARE_RANGE = (0.005, 0.5)  # the target area share a request may ask for (0.5 % to 50 % of the analysed area)
MAX_FOLDS = 20  # the most cross-validation folds a calibration may ask for
CROSS_VALIDATION = {"block_size_m": (float, 1.0, math.inf, "a block side of at least 1 metre, or empty for 10 km (an "
                                                          "eighth of the extent when smaller)"),
                    "folds": (int, 2, MAX_FOLDS, f"a number of folds from 2 to {MAX_FOLDS}"),
                    "seed": (int, 0, 2 ** 31 - 1, "a seed of 0 or more")}
"""The calibration's cross-validation settings a request may give: (type, lowest, highest, what to give)."""
WHERE = {"question": "in the request", "base_url": "in the settings", "planner": "in the settings",
         "sam_checkpoint": "in the settings", "favourable_units": "Favourable units", "deposits": "a deposits layer",
         "area_share": "the target area share", "max_target_km2": "the largest target",
         "min_target_km2": "the smallest target", "max_targets": "the targets drawn",
         "evidence_plan": "the evidence plan", "deposit_model": "the deposit model",
         "block_size_m": "the block size", "folds": "the folds", "seed": "the seed"}
"""Where each value is given, as the messages name it; a caller passes its own names to replace these."""


@dataclass
class BackendValues:
    """The back-end as the user gave it, before any fallback applies."""

    backend: Backend = "offline"
    base_url: str = ""
    api_key: str = field(default="", repr=False)
    models: dict = field(default_factory=dict)  # role -> model name; a role left empty takes the planner's
    temperature: float = 0.05
    max_tokens: int | None = None  # None: the engine's default budget
    calls: dict = field(default_factory=dict)  # model-call settings as BackendSettings fields (timeout_s, max_retries,
    # deadline_s, answer_tokens, vision, structured); absent: the engine's defaults


def backend_problem(values: BackendValues, where: dict | None = None) -> str:
    """What stops `values` from reaching a model server, said as what to do; '' when nothing."""
    where = {**WHERE, **(where or {})}
    if values.backend not in BACKENDS:
        return f"Unknown back-end {values.backend!r}; choose {' or '.join(BACKENDS)}."
    if values.backend == "offline":
        return ""
    if not values.base_url.strip():
        return f"Set the model server's endpoint base URL {where['base_url']}."
    if not str(values.models.get("planner") or "").strip():
        return f"Name the planner model {where['planner']} (the executor and verifier take it when left empty)."
    return ""


def backend_settings(values: BackendValues, where: dict | None = None, *, checked: bool = True) -> BackendSettings:
    """The engine's settings for `values` (checked with `backend_problem` unless `checked` is False). Offline
    keeps the temperature and budget only; for a model server the executor and verifier models default to the
    planner's."""
    problem = backend_problem(values, where) if checked else ""
    if problem:
        raise LodestarError(problem)
    budget: dict[str, Any] = {} if values.max_tokens is None else {"max_tokens": int(values.max_tokens)}
    if values.backend == "offline":
        return BackendSettings(temperature=float(values.temperature), **budget)
    planner = str(values.models.get("planner") or "").strip()
    models = {role: str(values.models.get(role) or "").strip() or planner for role in ROLES_OF_MODELS}
    return BackendSettings(backend=values.backend, base_url=values.base_url.strip(), api_key=values.api_key.strip(),
                           models=models, temperature=float(values.temperature), **budget, **dict(values.calls))


def legend_beside(path) -> Path | None:
    """A categorical map's legend CSV kept beside it as `<stem>_legend.csv` (as in a case folder), or None; a table
    of class counts kept under that name (no column of names) is not a legend of units."""
    legend = Path(path).with_name(f"{Path(path).stem}_legend.csv")
    return legend if legend.is_file() and names_units(legend) else None


def guess_file_role(path, *texts: str) -> str:
    """The role `guess_role` reads in a layer's words; a layer whose words tell nothing but whose file (`path`, or
    None) has a legend of units beside it is a geological map."""
    role = guess_role(*texts, named=[*texts[:1], *([Path(path).stem] if path is not None else [])])
    return "geological_map" if role == "other" and path is not None and legend_beside(path) is not None else role


def evidence_spec(path, role: str, name: str, favourable: str | None = None) -> LayerSpec:
    """A layer of an analysis: its legend beside it is used; `favourable` ('high' or 'low') when given, else
    guessed from its name (`guess_favourable`)."""
    path = Path(path)
    role = check_role(role)
    return LayerSpec(path, role, name, favourable or guess_favourable(path, role, name), legend_beside(path))


def distinct_names(layers: list[LayerSpec]) -> tuple[list[LayerSpec], list[str]]:
    """`layers` with distinct names, and a line per renamed layer: a name several layers share (a map's raster and
    its polygons, both 'greenstone' after their files) becomes each one's file name ('greenstone.tif',
    'greenstone.gpkg'), or the name and file name, numbered when even those are shared."""
    names = [spec.name for spec in layers]
    if len(set(names)) == len(names):
        return list(layers), []
    renamed, lines, taken = [], [], {n for n in names if names.count(n) == 1}
    for spec in layers:
        name = spec.name
        if names.count(name) > 1:
            file_name = Path(spec.path).name
            base = file_name if Path(spec.path).stem == name else f"{name} ({file_name})"
            name, number = base, 2
            while name in taken:
                name, number = f"{base} {number}", number + 1
            lines.append(f"{spec.name} ({spec.path}) is named {name}: layer names must be distinct.")
            spec = replace(spec, name=name)
        taken.add(name)
        renamed.append(spec)
    return renamed, lines


def is_categorical_map(spec: LayerSpec) -> bool:
    """Whether a layer is a map of units (a geological map, or any layer with a legend): the layers whose units a
    user may call favourable."""
    return spec.role == "geological_map" or spec.legend is not None


def parse_favourable_units(text: str, layers: list[LayerSpec], label: str = WHERE["favourable_units"]) -> dict:
    """{layer name: [units]} from text such as 'geology: LPZE, UPZC, LPZ; other map: limestone' (entries split by
    ';' or new lines, the layer's name before ':', its units comma-separated). An entry may leave out the name
    when exactly one of `layers` is a categorical map. Layer names match regardless of case. `label` names the
    field in the messages."""
    maps = [spec.name for spec in layers if is_categorical_map(spec)]
    by_name = {spec.name.casefold(): spec for spec in layers}
    listing = ", ".join(maps) if maps else "none (give a layer the geological_map role, or a legend)"
    units: dict = {}
    for entry in (e.strip() for e in re.split(r"[;\n]", text or "")):
        if not entry:
            continue
        name, colon, codes = entry.partition(":")
        if not colon:
            if len(maps) != 1:
                raise LodestarError(f"{label}: name the map before its units ('map name: unit, unit'), as "
                                    f"{'no' if not maps else len(maps)} categorical maps are given; categorical "
                                    f"maps: {listing}.")
            name, codes = maps[0], entry
        spec = by_name.get(name.strip().casefold())
        if spec is None:
            raise LodestarError(f"{label}: {name.strip()!r} is not among the input layers; name one of the "
                                f"categorical maps: {listing}.")
        if not is_categorical_map(spec):
            raise LodestarError(f"{label}: {spec.name} is not a categorical map (its role is {spec.role} and it has "
                                f"no legend); favourable units apply to: {listing}.")
        named = [code.strip() for code in codes.split(",") if code.strip()]
        if not named:
            raise LodestarError(f"{label}: give at least one unit code or name after '{spec.name}:', "
                                "comma-separated.")
        _check_named(spec, named, label)
        chosen = units.setdefault(spec.name, [])
        chosen.extend(code for code in named if code not in chosen)
    return units


def _check_named(spec: LayerSpec, named: list, label: str) -> None:
    """A unit named for a raster map with a legend must match one of its units as the surface matches them (its
    name, a wildcard, a whole word or a lithology synonym): else the run would map nothing for it. A code is not
    checked (the raster may hold codes its legend leaves out), nor a vector map (its units may be named by a field
    of its own)."""
    if spec.is_vector or spec.legend is None or not Path(spec.legend).is_file():
        return
    legend = read_legend(spec.legend)
    missing = [name for name in named if not name.lstrip("-").isdigit() and not matched_units(legend, [name])]
    if missing:
        shown = ", ".join(f"{code} {name}" if str(code) != name else name for code, name in legend.items())
        raise LodestarError(f"{label}: no unit of {spec.name} matches {', '.join(map(repr, missing))} (by code, name, "
                            f"wildcard, word or rock synonym); its units: {shown}.")


def build_request(layers: list[LayerSpec], question: str, output_dir, backend: BackendValues, *,
                  choices: dict | None = None, max_rounds: int = 3, case_id: str = "", deposits=None,
                  favourable_units: str = "", case_units: dict | None = None, calibrate: str = "",
                  area_share: float = 0.10, refine_with_sam: bool = False, sam_checkpoint=None,
                  where: dict | None = None, max_target_km2: float | None = None, evidence_plan=None,
                  deposit_model: str = "", user_models=(), cross_validation: dict | None = None,
                  min_target_km2: float | None = None, max_targets: int | None = None) -> AnalysisRequest:
    """The request for one question over `layers`; choices are parsed from the question unless given.

    `favourable_units`: the user's text (`parse_favourable_units`), which replaces `case_units` (a case's
    {layer name: units}) layer by layer; `calibrate`: a key of CALIBRATIONS, which needs `deposits`;
    `area_share`: the share of the analysed area the targets cover (AREA_SHARE_RANGE); `max_target_km2`: the largest
    target (None or 0: the deposit model's footprint), `min_target_km2` the smallest (None or 0: from the deposit
    model's footprint) and `max_targets` how many are drawn (None or 0: the work list's default, `target_sizes`);
    `evidence_plan`: the geologist's plan (a plan file's path or an
    EvidencePlan) replacing the agent's for the surface; `deposit_model`: a model id to follow ('' chooses), of the
    shipped models or `user_models` (the user's, `deposit_models.load_user_models`); `cross_validation`: the
    calibration's spatial blocks ({"block_size_m": metres or None, "folds": 2-20, "seed": >= 0}, each optional)."""
    names = {**WHERE, **(where or {})}
    question = (question or "").strip()
    if not question:
        raise LodestarError(f"Ask a question {names['question']}, e.g. 'Can porphyry copper deposits be detected? "
                            "Answer: A. Yes B. No'.")
    settings = backend_settings(backend, where)
    units = {**(case_units or {}), **parse_favourable_units(favourable_units, layers, names["favourable_units"])}
    return AnalysisRequest(layers=list(layers), question=question, output_dir=Path(output_dir),
                           choices=dict(choices) if choices else parse_choices(question), settings=settings,
                           max_rounds=int(max_rounds), case_id=case_id, deposits=Path(deposits) if deposits else None,
                           favourable_units=units, calibrate=_calibration(calibrate, deposits, names),
                           cross_validation=_cross_validation(cross_validation or {}, names),
                           area_share=_area_share(area_share, names), max_target_km2=_max_target(max_target_km2, names),
                           min_target_km2=_min_target(min_target_km2, max_target_km2, names),
                           max_targets=_max_targets(max_targets, names),
                           evidence_plan=_evidence_plan(evidence_plan, layers, names),
                           deposit_model=_deposit_model(deposit_model, user_models, names),
                           user_models=[dict(m) for m in user_models], **_sam(refine_with_sam, sam_checkpoint, names))


def replay_request(record, output_dir) -> AnalysisRequest:
    """The whole request of a run record (its layers, question and settings; `record.replayed_request`), to replay
    it into `output_dir` with no model call; the inputs' checksums are checked when it runs."""
    path = Path(record)
    blank = AnalysisRequest(layers=[], question="", output_dir=Path(output_dir), replay=path)
    return replayed_request(blank, read_replayed(path), check=False)


def _calibration(method: str, deposits, names: dict) -> CalibrationChoice:
    method = (method or "").strip()
    if method not in _CALIBRATION_LABELS:
        raise LodestarError(f"Unknown calibration {method!r}; choose one of: "
                            + ", ".join(f"{key or 'empty'} ({label})" for key, label in CALIBRATIONS) + ".")
    if method and not deposits:
        raise LodestarError(f"Calibration with {_CALIBRATION_LABELS[method]} needs known deposits: give "
                            f"{names['deposits']}, or turn calibration off.")
    return method


def _cross_validation(values: dict, names: dict) -> dict:
    """The calibration's block size, folds and seed, checked; keys absent or None keep calibrate's defaults."""
    unknown = sorted(set(values) - set(CROSS_VALIDATION))
    if unknown:
        raise LodestarError(f"Unknown cross-validation setting(s) {', '.join(unknown)}: give "
                            f"{', '.join(CROSS_VALIDATION)}.")
    out = {}
    for key, (kind, low, high, what) in CROSS_VALIDATION.items():
        if values.get(key) is None:
            continue
        try:
            value = kind(values[key])
        except (TypeError, ValueError):
            value = None
        if value is None or not low <= value <= high:
            raise LodestarError(f"Set {names[key]} to {what}, not {values[key]!r}.")
        out[key] = value
    return out


def _area_share(share: float, names: dict) -> float:
    low, high = AREA_SHARE_RANGE
    share = float(share)
    if not low <= share <= high:
        raise LodestarError(f"Set {names['area_share']} between {low:.1%} and {high:.0%} of the analysed area, "
                            f"not {share:.1%}.")
    return share


def _max_target(km2, names: dict) -> float | None:
    if km2 in (None, "", 0, 0.0):
        return None
    km2 = float(km2)
    if not km2 > 0:
        raise LodestarError(f"Set {names['max_target_km2']} above 0 km2 (0 takes the deposit model's footprint), "
                            f"not {km2:g}.")
    return km2


def _min_target(km2, largest, names: dict) -> float | None:
    if km2 in (None, "", 0, 0.0):
        return None
    try:
        km2 = float(km2)
    except (TypeError, ValueError):
        km2 = math.nan
    if not km2 > 0 or not math.isfinite(km2):
        raise LodestarError(f"Set {names['min_target_km2']} above 0 km2 (0 takes a quarter of the deposit model's "
                            f"deposit footprint), not {km2:g}.")
    if largest not in (None, "", 0, 0.0) and km2 > float(largest):
        raise LodestarError(f"Set {names['min_target_km2']} ({km2:g} km2) at most {names['max_target_km2']} "
                            f"({float(largest):g} km2).")
    return km2


def _max_targets(count, names: dict) -> int | None:
    if count in (None, "", 0):
        return None
    try:
        number = float(count)
    except (TypeError, ValueError):
        number = math.nan
    if isinstance(count, bool) or not math.isfinite(number) or number != int(number) or number < 1:
        raise LodestarError(f"Set {names['max_targets']} to a whole number of 1 or more (0 takes the default work "
                            f"list), not {count!r}.")
    return int(number)


def _evidence_plan(plan, layers: list[LayerSpec], names: dict) -> dict | None:
    """The geologist's plan as the record keeps it (marked as theirs), checked against the layers; None for none."""
    if plan in (None, ""):
        return None
    plan = plan if isinstance(plan, EvidencePlan) else read_plan(plan)
    try:
        plan.check_layers([spec.name for spec in layers])
    except LodestarError as exc:
        raise LodestarError(f"{names['evidence_plan'][0].upper()}{names['evidence_plan'][1:]}: {exc}") from exc
    return replace(plan, by="geologist").to_dict()


def _deposit_model(chosen: str, user_models, names: dict) -> str:
    chosen = (chosen or "").strip()
    if not chosen:
        return ""
    ids = model_ids(user_models)
    if chosen not in ids:
        raise LodestarError(f"Unknown deposit model {chosen!r} for {names['deposit_model']}; choose one of: "
                            f"{', '.join(ids)} (or leave it empty to choose from the question and the layers).")
    return chosen


def _sam(refine: bool, checkpoint, names: dict) -> dict:
    if refine and not checkpoint:
        raise LodestarError(f"Zone refinement with Segment Anything needs a checkpoint file {names['sam_checkpoint']}.")
    return {"refine_with_sam": bool(refine), "sam_checkpoint": Path(checkpoint) if refine else None}
