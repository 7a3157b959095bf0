"""The HTML report of a run: answer, reasoning chain with evidence images, verdicts, votes, maps.

One self-contained file (images embedded as PNG data URLs), built only from the run record and the
image files it names, so a replayed run writes the same bytes. Every text that came from inputs or
models is HTML-escaped.
"""
from __future__ import annotations

import base64
import html
import json
from pathlib import Path

from ..files import write_text_atomic

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1100px;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
h3{font-size:1.05em;margin-bottom:.3em}table{border-collapse:collapse;margin:.5em 0;font-size:.92em}
td,th{border:1px solid #ccc;padding:.25em .5em;vertical-align:top;text-align:left}th{background:#f3f3f3}
.answer{font-size:1.3em;padding:.6em 1em;border-radius:6px;display:inline-block}
.valid{background:#e3f4e3}.voted{background:#fff4d6}.failed{background:#f8dede}
.step{border:1px solid #ddd;border-radius:6px;padding:.6em 1em;margin:.8em 0}
.yes{color:#17702a;font-weight:bold}.no{color:#9a1c1c;font-weight:bold}
img{max-width:100%;border:1px solid #ccc}.muted{color:#666;font-size:.9em}pre{white-space:pre-wrap}
"""


def _e(value) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _image(path, alt: str) -> str:
    if not path or not Path(path).exists():
        return ""
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    return f'<img alt="{_e(alt)}" src="data:image/png;base64,{data}">'


def _table(rows: list[list], header: list[str]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _inference(word: str) -> str:
    css = "yes" if word == "Yes" else "no"
    return f'<span class="{css}">{_e(word)}</span>'


def _answer_block(record: dict) -> str:
    result = record.get("result", {})
    answer = result.get("answer", "Failed")
    text = record.get("choices", {}).get(answer, "")
    css = "failed" if answer == "Failed" else ("valid" if result.get("valid") else "voted")
    how = ("accepted by the verifier" if result.get("valid") else
           "from the majority vote over the rounds" if result.get("voted") else "no candidate answer")
    shown = f"{answer}. {text}" if text else answer
    return (f'<div class="answer {css}">Answer: <b>{_e(shown)}</b></div>'
            f'<p class="muted">{_e(how)}; {_e(result.get("rounds", 0))} verification round(s).</p>')


def _verdicts(record: dict) -> str:
    parts = []
    for entry in record.get("rounds", []):
        verdict = entry.get("verdict")
        if verdict is None:
            parts.append(f"<h3>Round {_e(entry['round'])}: no verdict</h3><p>{_e(entry.get('error'))}</p>")
            continue
        flag = "valid" if verdict["valid"] else "invalid"
        parts.append(f"<h3>Round {_e(entry['round'])}: {flag}, candidate answer {_e(verdict.get('answer'))}</h3>")
        parts.append(f"<p>{_e(verdict.get('rationale'))}</p>")
        rows = [[k, "critical", "supported" if v else "not supported"] for k, v in verdict.get("critical", {}).items()]
        rows += [[k, "secondary", "present" if v else "absent"] for k, v in verdict.get("secondary", {}).items()]
        if rows:
            parts.append(_table(rows, ["evidence", "level", "assessment"]))
        if verdict.get("feedback"):
            parts.append(_table([[k, v] for k, v in verdict["feedback"].items()], ["step", "corrective feedback"]))
        if entry.get("reexecuted"):
            parts.append(f"<p class=\"muted\">Re-executed steps: {_e(', '.join(map(str, entry['reexecuted'])))}</p>")
    votes = record.get("result", {}).get("votes") or {}
    if votes:
        parts.append("<h3>Votes</h3>" + _table([[k, v] for k, v in votes.items()], ["answer", "rounds"]))
    return "".join(parts) or "<p>No verification round ran.</p>"


def _chain(record: dict, folder: Path) -> str:
    parts = []
    for node in record.get("chain", []):
        step, obs = node["step"], node["observation"]
        parts.append('<div class="step">')
        parts.append(f"<h3>Step {_e(step['index'])}: {_e(step['purpose'])}</h3>")
        rows = [["layers", ", ".join(step.get("layers", [])) or "-", step.get("layers_why", "")],
                ["tool", step.get("tool", ""), step.get("tool_why", "")],
                ["expected", step.get("expected", ""), ""]]
        if step.get("evidence"):
            rows.append(["evidence item", step["evidence"], step.get("level", "")])
        parts.append(_table(rows, ["", "choice", "why"]))
        parts.append(f"<p>Sub_Inference: {_inference(obs.get('sub_inference'))} &middot; Global_Inference: "
                     f"{_e(obs.get('global_inference'))}</p><p>{_e(obs.get('rationale'))}</p>")
        if obs.get("error"):
            parts.append(f"<p class=\"no\">Error: {_e(obs['error'])}</p>")
        controller = obs.get("controller", [])
        if controller:
            rows = []
            for verdict in controller:
                messages = "; ".join(e.get("message", "") for e in verdict.get("errors", [])) or "all checks passed"
                rows.append([verdict.get("attempt"), "pass" if verdict.get("ok") else "fail", messages])
            parts.append(_table(rows, ["attempt", "controller", "findings"]))
        if obs.get("zone_ids"):
            parts.append(f"<p class=\"muted\">Zones: {_e(', '.join(obs['zone_ids']))}</p>")
        evidence = obs.get("evidence_png")
        if evidence:
            parts.append(_image(folder / Path(evidence).name, f"evidence of step {step['index']}"))
        parts.append("</div>")
    return "".join(parts) or "<p>No step was executed.</p>"


def _inputs(record: dict) -> str:
    rows = [[i["name"], i["role"], i["kind"], i["crs"], "x".join(map(str, i.get("size") or [])) or "-",
             i["sha256"][:12]] for i in record.get("inputs", [])]
    return _table(rows, ["layer", "role", "kind", "CRS", "size", "sha256"])


def _usage(record: dict) -> str:
    rows = [[role, u.get("calls", 0), u.get("prompt_tokens", 0), u.get("completion_tokens", 0),
             f"{float(u.get('seconds', 0.0)):.2f}"] for role, u in sorted(record.get("usage", {}).items())]
    return _table(rows, ["role", "model calls", "prompt tokens", "completion tokens", "seconds"])


def _localization(record: dict, map_png) -> str:
    loc = record.get("localization", {})
    parts = [f"<p>{_e(loc.get('note', ''))}</p>"]
    if loc.get("params"):
        parts.append(f"<p class=\"muted\">Parameters ({_e(loc.get('source'))}):</p>"
                     f"<pre>{_e(json.dumps(loc['params'], indent=1, sort_keys=True))}</pre>")
    polygons = loc.get("polygons", [])
    if polygons:
        parts.append(_table([[p["rank"], f"{p['score']:.3f}", p["roles"], p["n_zones"], f"{p['area_m2']:.4g}"]
                             for p in polygons], ["rank", "score", "roles", "zones", "area"]))
    metrics = record.get("metrics") or {}
    if metrics:
        parts.append(_table([[k, v] for k, v in sorted(metrics.items()) if not isinstance(v, (list, dict))],
                            ["metric", "value"]))
    parts.append(_image(map_png, "prospectivity map"))
    return "".join(parts)


def render_report(record: dict, evidence_dir, map_png=None) -> str:
    """The report HTML of a record; evidence images are read from `evidence_dir`."""
    folder = Path(evidence_dir)
    title = f"Lodestar analysis {record.get('case_id') or ''}".strip()
    settings = record.get("backend", {})
    sections = [
        f"<h1>{_e(title)}</h1>",
        f"<p><b>Question:</b> {_e(record.get('question'))}</p>",
        "<p><b>Choices:</b> " + _e("; ".join(f"{k}. {v}" for k, v in record.get("choices", {}).items())) + "</p>",
        _answer_block(record),
        "<h2>Deposit model</h2>",
        _table([[k.get("name"), f"{k.get('score', 0):.2f}", ", ".join(k.get("testable", []))]
                for k in record.get("knowledge", [])], ["model", "retrieval score", "testable evidence"]),
        "<h2>Verification</h2>", _verdicts(record),
        "<h2>Reasoning chain</h2>", _chain(record, folder),
        "<h2>Localization</h2>", _localization(record, map_png),
        "<h2>Inputs</h2>", _inputs(record),
        f"<p class=\"muted\">Analysis CRS: {_e(record.get('analysis', {}).get('crs'))}. "
        + _e(" ".join(record.get("analysis", {}).get("log", []))) + "</p>",
        "<h2>Back-end and model use</h2>",
        f"<pre>{_e(json.dumps(settings, indent=1, sort_keys=True))}</pre>", _usage(record),
    ]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>\n"
            + "\n".join(sections) + "\n</body></html>\n")


def write_report(record: dict, path, evidence_dir, map_png=None) -> Path:
    return write_text_atomic(path, render_report(record, evidence_dir, map_png))
