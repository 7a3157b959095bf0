"""The choices a run made, said in words from its record: the deposit model picked, the runner-up and why; the
thresholds each step used; the thresholds a user may adjust for a new run (controller limits, localization
parameters), with their ranges; and the layers left out with the reason."""
from __future__ import annotations

from dataclasses import dataclass

from ..controller import ControllerLimits
from ..labels import format_area_km2
from ..labels import words as in_words
from ..localization import RANGES
from ..reason.knowledge import load_knowledge, score_parts

PARAM_WORDS = {"method": "threshold method", "value": "threshold", "min_area_px": "smallest zone (pixels)",
               "min_area_fraction": "smallest zone (share)", "smooth_px": "smoothing (pixels)",
               "max_regions": "zones at most", "max_zones": "zones at most", "buffer_m": "corridor half-width (m)",
               "units": "units",
               "feature": "feature", "contacts": "contacts", "steps": "steps related", "mode": "mode"}
"""Plan step parameters in words (others are shown as their key in words)."""


@dataclass(frozen=True)
class Threshold:
    """A threshold a user may set for the next run: where it goes in the request ('controller' or
    'localization'), its key there, its label, its range, and whether it is a whole number."""

    section: str
    key: str
    label: str
    low: float
    high: float
    whole: bool = False
    scale: float = 1.0  # shown value = stored value * scale (km2 for a ground area stored in m2)
    tip: str = ""


THRESHOLDS = (
    Threshold("controller", "max_regions", "Zones per step, at most", 1, 20, True,
              tip="The controller keeps at most this many zones from one step."),
    Threshold("controller", "min_area_m2", "Smallest zone (km2)", 0.0, 100.0, scale=1e-6,
              tip="A zone smaller than this on the ground is a speck and is dropped."),
    Threshold("controller", "max_area_fraction", "Largest zone (share of the area)", 0.01, 1.0,
              tip="A zone covering more than this share of the analysed area is not specific."),
    Threshold("controller", "max_overlap", "Overlap allowed between zones", 0.05, 1.0,
              tip="Two zones overlapping more than this share of the smaller one are redundant."),
    Threshold("controller", "max_total_fraction", "Zones of a step cover at most", 0.05, 1.0,
              tip="The zones of one step together cover at most this share of the analysed area."),
    Threshold("localization", "important_areas_count", "Central areas kept", *RANGES["important_areas_count"],
              whole=True, tip="How many of the spatial graph's most central zones seed the targets."),
    Threshold("localization", "hop2_expansion_width", "Neighbourhood widening (x)", *RANGES["hop2_expansion_width"],
              tip="How far the central areas are widened towards their 2-hop neighbours, east-west."),
    Threshold("localization", "hop2_expansion_height", "Neighbourhood widening (y)",
              *RANGES["hop2_expansion_height"], tip="The same, north-south."),
    Threshold("localization", "chain_presence_weight", "Weight of zones in chains", *RANGES["chain_presence_weight"],
              tip="How much a zone in a chain of three or more evidence roles counts when ranking."),
)
"""The thresholds the dock's Advanced section shows and lets the user change for a re-run."""


def used_thresholds(record: dict) -> dict:
    """{(section, key): value} of THRESHOLDS as the run used them."""
    parameters = record.get("parameters") or {}
    controller = parameters.get("controller") or {}
    localization = (record.get("localization") or {}).get("params") or {}
    defaults = ControllerLimits()
    values = {}
    for item in THRESHOLDS:
        if item.section == "controller":
            value = controller.get(item.key, getattr(defaults, item.key))
        else:
            value = localization.get(item.key)
        values[(item.section, item.key)] = value
    return values


def overrides(values: dict) -> dict:
    """The request's overrides of {(section, key): value}: {"controller": {...}, "localization": {...}}."""
    out: dict = {"controller": {}, "localization": {}}
    for (section, key), value in values.items():
        if value is not None:
            out[section][key] = value
    return out


def _model_line(entry: dict, parts: dict) -> str:
    keywords = parts.get("keywords") or []
    said = f"the question names {', '.join(keywords)}" if keywords else "no keyword of it is in the question"
    return (f"{entry.get('name', entry.get('id'))} (score {float(entry.get('score', 0)):.2f}: {said}; "
            f"{parts.get('critical', 0):.0%} of its critical and {parts.get('secondary', 0):.0%} of its secondary "
            f"evidence testable with these layers)")


def model_choice(record: dict, models: list | None = None) -> dict:
    """{"picked", "runner_up" (None when one model only), "text"}: the deposit model the run followed, the next
    one, and why, in words ({} when the run had no deposit model)."""
    knowledge = record.get("knowledge") or []
    if not knowledge:
        return {}
    inputs = record.get("inputs") or []
    parts = score_parts(record.get("question", ""), [entry.get("role", "") for entry in inputs],
                        models if models is not None else load_knowledge(),
                        names=[entry.get("name", "") for entry in inputs])
    picked = knowledge[0]
    runner = knowledge[1] if len(knowledge) > 1 else None
    text = "Deposit model: " + _model_line(picked, parts.get(picked["id"], {})) + "."
    if picked.get("stands_in"):  # the question named a type or commodity no model is for
        text = f"{picked['stands_in']} {text}"
    if picked.get("chosen"):  # the geologist's pick: the automatic choice follows as the runner-up
        text = text[:-1] + ", chosen by you."
        if runner is not None:
            text += " The automatic choice would have been: " + _model_line(runner, parts.get(runner["id"], {})) + "."
        return {"picked": picked, "runner_up": runner, "text": text}
    if runner is not None:
        text += " Runner-up: " + _model_line(runner, parts.get(runner["id"], {})) + "."
        if round(float(picked.get("score", 0)), 4) == round(float(runner.get("score", 0)), 4):
            named = picked.get("names") or []
            reason = (f"the layers' names name {', '.join(named)}" if named
                      else f"{picked.get('name')} comes first in the knowledge base")
            text += (f" The two tie; {reason}, so it was followed. Name the deposit type in the question to "
                     "choose.")
        else:
            text += (f" {picked.get('name')} scores {float(picked['score']) - float(runner['score']):.2f} higher "
                     "(score = 3 x the question's keywords and commodities, weighted by rarity, + 2 x critical + "
                     "secondary evidence coverage, a host-rock item only where the legend names its host rocks, + 2 x "
                     "the share of the geochemistry layers' elements that are its commodities or pathfinders).")
    return {"picked": picked, "runner_up": runner, "text": text}


def step_thresholds(record: dict) -> list:
    """[(step index, tool, layers, thresholds in words)] of the run's plan steps."""
    rows = []
    for step in record.get("plan") or []:
        params = step.get("params") or {}
        words = [f"{PARAM_WORDS.get(key, in_words(key))} {_value(value)}" for key, value in params.items()]
        rows.append((step.get("index"), step.get("tool", ""), ", ".join(step.get("layers") or []),
                     "; ".join(words) or "none"))
    return rows


def _value(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or "-"
    return str(value)


def left_out(unused: list) -> list:
    """[(layer, reason)] of the layers a run did not use."""
    return [(str(row.get("layer", "")), str(row.get("reason", ""))) for row in unused or []]


def controller_line(record: dict) -> str:
    """The controller's limits as the run used them, in words."""
    values = used_thresholds(record)
    speck = values[("controller", "min_area_m2")]
    speck_text = format_area_km2(speck) if speck is not None else "none"
    return (f"Controller: at most {values[('controller', 'max_regions')]} zones a step, none under {speck_text}, none "
            f"over {values[('controller', 'max_area_fraction')]:.0%} of the area, overlap up to "
            f"{values[('controller', 'max_overlap')]:.0%}, together at most "
            f"{values[('controller', 'max_total_fraction')]:.0%} of the area.")
