"""The one reading of engine events as text: the dock's Reasoning view and the Processing log both show it.

`describe(event)` gives entries: each a line of text (with an optional detail, tooltip, tone and lines under
it) and its place in the chain (the line of a plan step, a line under a step, or a line of its own).
`log_lines` flattens them into the Processing log; the dock lays them out as a tree. Tools, roles, evidence
items and parameters are written in words (plugin/labels.py), never as identifiers.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .labels import humanize, number, role_label, tool_label, weighed_at, words

GOOD, BAD, WARN, NEUTRAL, PLAIN = "good", "bad", "warn", "neutral", ""
TOP, STEP, UNDER, SUFFIX = "top", "step", "under", "suffix"
"""Places: a line of its own; the line of plan step `step`; a line under it; words added to the end of it."""


@dataclass
class Entry:
    """One line of the reasoning shown to the user."""

    text: str
    detail: str = ""
    tip: str = ""
    tone: str = PLAIN
    place: str = TOP
    step: int | None = None
    rows: list = field(default_factory=list)  # (label, text) lines under this one
    unfolded: bool = False  # its rows are worth showing at once
    image: str = ""  # an evidence image of a step's observation
    zone_ids: list = field(default_factory=list)
    supports: bool | None = None  # a step's observation supports the answer


def describe(event: dict) -> list[Entry]:
    """The entries of one engine event (none for events that are not part of the reasoning, e.g. usage)."""
    if not isinstance(event, dict):
        return []
    render = _RENDERERS.get(str(event.get("kind", "")))
    return render(event) if render is not None else []


def status_line(event: dict) -> str:
    """A short line on where the run stands after `event` ('' when the event does not move it)."""
    kind = event.get("kind") if isinstance(event, dict) else None
    if kind == "plan":
        return f"Planned {len(event.get('steps') or [])} steps."
    if kind == "step":
        return f"Step {event.get('step', '')} done{_round(event, ' (round {})')}."
    if kind == "verdict" and event.get("verdict") is not None:
        valid = bool(event["verdict"].get("valid"))
        return f"Round {event.get('round')}: the verifier finds the chain {'valid' if valid else 'not valid'}."
    if kind == "localization":
        return "Localizing targets through the spatial graph..."
    return ""


def log_lines(event: dict) -> list[str]:
    """The event as plain lines for a log: the lines the dock shows at once (rows it keeps folded, such as the
    localization's graph parameters, are internal figures: the report's appendix lists them)."""
    lines = []
    for entry in describe(event):
        if entry.place == UNDER:
            text = f"Step {entry.step}, {entry.text}"
        elif entry.place == SUFFIX:
            text = f"Step {entry.step}{entry.text}"
        else:
            text = entry.text
        lines.append(f"{text}: {entry.detail}" if entry.detail else text)
        lines.extend(f"    {label}: {value}" for label, value in entry.rows if entry.unfolded)
    return lines


def _round(event: dict, form: str) -> str:
    return form.format(event["round"]) if event.get("round") else ""


_IDENTIFIER = re.compile(r"\b[a-z0-9]+(?:_[a-z0-9]+)+\b")


def _plain(text) -> str:
    """Free text with every snake_case identifier in it written as words."""
    return _IDENTIFIER.sub(lambda m: words(m.group(0)), humanize(text))


def _plan(event: dict) -> list[Entry]:
    entries = []
    steps = event.get("steps") or []
    terms = {step.get("evidence") for step in steps if step.get("evidence")}
    for step in steps:
        level = f" [{step['level']}]" if step.get("level") else ""
        layers = ", ".join(str(layer) for layer in step.get("layers") or [] if str(layer).strip())
        where = f" on {layers}" if layers else " across all layers"
        purpose = humanize(step.get("purpose", ""), terms)
        text = f"Step {step.get('index')}{level}: {purpose} ({tool_label(step.get('tool', ''))}{where})"
        tip = (f"{purpose}\nWhy these layers: {humanize(step.get('layers_why', ''), terms)}\n"
               f"Why this tool: {humanize(step.get('tool_why', ''), terms)}\n"
               f"Expected: {humanize(step.get('expected', ''), terms)}")
        entries.append(Entry(text, tip=tip, place=STEP, step=step.get("index")))
    entries.extend(Entry(f"Plan note: {humanize(note, terms)}") for note in event.get("notes") or [])
    return entries


def _controller(event: dict) -> list[Entry]:
    """The controller's findings on one attempt and what that attempt tried; never the feedback written for the
    model (it stays in the run record)."""
    verdict = event.get("verdict") or {}
    errors = [e.get("message", str(e)) if isinstance(e, dict) else str(e) for e in verdict.get("errors") or []]
    detail = ("rejected: " + humanize(" ".join(_sentence(x) for x in errors))) if errors else "output accepted"
    tried = _attempt_words(event.get("call") or {}) if (event.get("attempt") or 1) > 1 else ""  # the 1st: the plan's
    return [Entry(f"controller ({_round(event, 'round {}, ')}attempt {event.get('attempt')}{tried})", detail,
                  tip=detail, tone=GOOD if verdict.get("ok") else BAD, place=UNDER, step=event.get("step"))]


def _sentence(text: str) -> str:
    text = str(text).strip()
    return text if text.endswith((".", "!", "?")) else f"{text}."


_TRIED = (("max_zones", "at most {} zones"), ("max_regions", "at most {} zones"),
          ("k_sigma", "threshold {} spreads above background"), ("percentile", "above the {} percentile"),
          ("level", "colour level {}"))
"""The parameters an attempt changes to meet the controller's limits, in words."""


def _attempt_words(call: dict) -> str:
    """', at most 4 zones, threshold 4.75 spreads above background': what a tool call tried ('' for none)."""
    params = call.get("params") or {}
    parts = [form.format(number(params[key], 4)) for key, form in _TRIED if isinstance(params.get(key), (int, float))
             and not isinstance(params.get(key), bool)]
    if params.get("bounds"):
        parts.append("looking around the core")
    if call.get("tool") == "mark_boxes":
        parts.append(f"{len(call.get('boxes') or [])} boxes")
    return "".join(f", {part}" for part in parts)


def _step(event: dict) -> list[Entry]:
    obs = event.get("observation") or {}
    supports = obs.get("sub_inference") == "Yes"
    rationale = humanize(obs.get("rationale", ""))
    return [Entry(f"{tool_label(obs.get('tool', ''))}{_round(event, ' (round {})')}: "
                  f"{'supports' if supports else 'no support'}",
                  humanize(obs.get("error")) or rationale, tip=rationale,
                  tone=GOOD if supports else NEUTRAL, place=UNDER, step=event.get("step", obs.get("step")),
                  image=str(obs.get("evidence_png") or ""), zone_ids=[str(z) for z in obs.get("zone_ids") or []],
                  supports=supports)]


def _skipped(event: dict) -> list[Entry]:
    return [Entry(" - skipped: an earlier step concluded the chain", place=SUFFIX, step=index)
            for index in event.get("steps") or []]


def _verdict(event: dict) -> list[Entry]:
    verdict, round_no = event.get("verdict"), event.get("round")
    if verdict is None:
        return [Entry(f"Round {round_no} verdict: no verdict ({event.get('error', '')})", tone=BAD)]
    valid = bool(verdict.get("valid"))
    terms = set(verdict.get("critical") or {}) | set(verdict.get("secondary") or {})
    rows = [(f"{group} evidence", f"{words(name)}: {'supported' if ok else 'missing'}")
            for group in ("critical", "secondary") for name, ok in (verdict.get(group) or {}).items()]
    rows += [(f"feedback to step {step}", humanize(text, terms))
             for step, text in (verdict.get("feedback") or {}).items()]
    weighed = weighed_at(verdict)
    if weighed:
        rows.insert(0, ("place weighed", humanize(weighed, terms)))
    return [Entry(f"Round {round_no} verdict: {'valid' if valid else 'not valid'}; candidate answer "
                  f"{verdict.get('answer') or '-'}", tip=humanize(verdict.get("rationale", ""), terms),
                  tone=GOOD if valid else WARN,
                  rows=rows, unfolded=True)]


def _vote(event: dict) -> list[Entry]:
    tally = ", ".join(f"{k} x{v}" for k, v in (event.get("counts") or {}).items())
    return [Entry(f"Majority vote: {tally} -> {event.get('answer', '-')}")]


def _value(value) -> str:
    """A parameter value in words: numbers with sensible digits, role weights as 'Hydrothermal alteration 1.8'."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return number(value, 4)
    if isinstance(value, dict):
        return ", ".join(f"{role_label(k)} {_value(v)}" for k, v in value.items()) or "-"
    if isinstance(value, (list, tuple)):
        return ", ".join(_value(v) for v in value) or "-"
    return _plain(value)


def _localization(event: dict) -> list[Entry]:
    rows = [(words(name), _value(value)) for name, value in (event.get("params") or {}).items()]
    return [Entry(f"Localization: {event.get('polygons', 0)} prospectivity polygons "
                  f"(parameters from {_plain(event.get('source', '?'))})", rows=rows)]


_RENDERERS = {"plan": _plan, "controller": _controller, "step": _step, "skipped": _skipped, "verdict": _verdict,
              "vote": _vote, "localization": _localization}
