"""The one reading of engine events as text: the dock's Reasoning view and the Processing log both show it.

`describe(event)` gives entries: each a line of text (with an optional detail, tooltip, tone and lines under
it) and its place in the chain (the line of a plan step, a line under a step, or a line of its own).
`log_lines` flattens them into the Processing log; the dock lays them out as a tree.
"""
from __future__ import annotations

from dataclasses import dataclass, field

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
    """The event as plain lines for a log."""
    lines = []
    for entry in describe(event):
        if entry.place == UNDER:
            text = f"Step {entry.step}, {entry.text}"
        elif entry.place == SUFFIX:
            text = f"Step {entry.step}{entry.text}"
        else:
            text = entry.text
        lines.append(f"{text}: {entry.detail}" if entry.detail else text)
        lines.extend(f"    {label}: {value}" for label, value in entry.rows)
    return lines


def _round(event: dict, form: str) -> str:
    return form.format(event["round"]) if event.get("round") else ""


def _plan(event: dict) -> list[Entry]:
    entries = []
    for step in event.get("steps") or []:
        level = f" [{step['level']}]" if step.get("level") else ""
        text = (f"Step {step.get('index')}{level}: {step.get('purpose', '')} "
                f"({step.get('tool', '')} on {', '.join(step.get('layers') or [])})")
        tip = (f"{step.get('purpose', '')}\nWhy these layers: {step.get('layers_why', '')}\n"
               f"Why this tool: {step.get('tool_why', '')}\nExpected: {step.get('expected', '')}")
        entries.append(Entry(text, tip=tip, place=STEP, step=step.get("index")))
    entries.extend(Entry(f"Plan note: {note}") for note in event.get("notes") or [])
    return entries


def _controller(event: dict) -> list[Entry]:
    verdict = event.get("verdict") or {}
    errors = [e.get("message", str(e)) if isinstance(e, dict) else str(e) for e in verdict.get("errors") or []]
    detail = "; ".join(errors) if errors else "output accepted"
    if verdict.get("feedback") and not verdict.get("ok"):
        detail += f" -> feedback: {verdict['feedback']}"
    return [Entry(f"controller ({_round(event, 'round {}, ')}attempt {event.get('attempt')})", detail, tip=detail,
                  tone=GOOD if verdict.get("ok") else BAD, place=UNDER, step=event.get("step"))]


def _step(event: dict) -> list[Entry]:
    obs = event.get("observation") or {}
    supports = obs.get("sub_inference") == "Yes"
    return [Entry(f"{obs.get('tool', '')}{_round(event, ' (round {})')}: {'supports' if supports else 'no support'}",
                  obs.get("error") or obs.get("rationale", ""), tip=obs.get("rationale", ""),
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
    rows = [(f"{group} evidence", f"{name}: {'supported' if ok else 'missing'}")
            for group in ("critical", "secondary") for name, ok in (verdict.get(group) or {}).items()]
    rows += [(f"feedback to step {step}", str(text)) for step, text in (verdict.get("feedback") or {}).items()]
    return [Entry(f"Round {round_no} verdict: {'valid' if valid else 'not valid'}; candidate answer "
                  f"{verdict.get('answer') or '-'}", tip=verdict.get("rationale", ""), tone=GOOD if valid else WARN,
                  rows=rows, unfolded=True)]


def _vote(event: dict) -> list[Entry]:
    tally = ", ".join(f"{k} x{v}" for k, v in (event.get("counts") or {}).items())
    return [Entry(f"Majority vote: {tally} -> {event.get('answer', '-')}")]


def _localization(event: dict) -> list[Entry]:
    rows = [(name, str(value)) for name, value in (event.get("params") or {}).items()]
    return [Entry(f"Localization: {event.get('polygons', 0)} prospectivity polygons "
                  f"(parameters from {event.get('source', '?')})", rows=rows)]


_RENDERERS = {"plan": _plan, "controller": _controller, "step": _step, "skipped": _skipped, "verdict": _verdict,
              "vote": _vote, "localization": _localization}
