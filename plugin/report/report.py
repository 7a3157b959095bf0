"""The HTML report of a run: a summary first (answer, prospectivity map with ranked targets, evidence
weights, validation against known deposits), then the reasoning chain, then a technical appendix.

One self-contained file (images embedded as PNG data URLs), built only from the run record and the files
it names in the report's folder; the map and the success-rate plot are also written there as PNGs
(FIGURES), so a replayed run writes the same bytes. Every text that came from inputs or models is
HTML-escaped.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import LodestarError
from ..files import write_text_atomic
from ..labels import plural, question_title, roles_words, tool_label, weighed_at, zone_label
from ..reason.contract import FAILED, INSUFFICIENT
from .report_appendix import (
    backend_section,
    inputs_section,
    localization_section,
    retrieval_section,
    step_flags_section,
    usage_section,
)
from .report_curves import draw_curves
from .report_map import draw_record_map
from .report_models import draw_model_figure
from .report_prospectivity import (
    auc_text,
    fitted,
    map_section,
    map_title,
    more_targets_section,
    targets_section,
    validation_rows,
    validation_section,
    weights_section,
)
from .report_targets import target_cards
from .report_text import bullets, e, humanize, image, table, words

FIGURES = {"map": "favourability.png", "curves": "success_rate.png", "models": "model_response.png"}
"""The report's figures, written beside it."""

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1100px;color:#222;
padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.25em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.8em}
h3{font-size:1.05em;margin:1.2em 0 .3em}h4{font-size:.95em;margin:.8em 0 .2em}
table{border-collapse:collapse;margin:.5em 0;font-size:.92em}
td,th{border:1px solid #ccc;padding:.25em .5em;vertical-align:top;text-align:left}th{background:#f3f3f3}
.answer{font-size:1.3em;padding:.6em 1em;border-radius:6px;border-left:6px solid;display:inline-block}
.valid{background:#e3f4e3;border-color:#2e8b3a}.voted{background:#fff4d6;border-color:#d9a400}
.failed{background:#f8dede;border-color:#b22222}.insufficient{background:#e8e4f6;border-color:#5b45a8}
.step{border:1px solid #ddd;border-radius:6px;padding:.6em 1em;margin:.8em 0}
.yes{color:#17702a;font-weight:bold}.no{color:#9a1c1c;font-weight:bold}
img{max-width:100%;border:1px solid #ccc}img.figure{display:block;margin:.6em 0}
.muted{color:#666;font-size:.9em}
nav.contents{margin:1em 0;padding:.4em .8em;background:#f6f6f6;border-radius:4px}
section{margin-bottom:2.5em}
section>h2.part{font-size:1.4em;color:#1f3b57;border-bottom:3px solid #1f3b57}
tr.fitted td{background:#f4f4f4;color:#555;font-style:italic}tr.fitted b{color:#9a1c1c}
table.weights td:last-child,table.targets td:last-child{min-width:24em}
.target-card{border:1px solid #ddd;border-radius:6px;padding:.4em 1em;margin:.8em 0}
tr.ok td:nth-child(3){color:#17702a;font-weight:bold}tr.bad td:nth-child(3){color:#9a1c1c}tr.muted td{color:#777}
table.targets td:nth-child(-n+4),table.validation td:nth-child(n+3),table.fit td:nth-child(n+2){white-space:nowrap}
"""


def _inference(word: str) -> str:
    css = "yes" if word == "Yes" else "no"
    return f'<span class="{css}">{e(word)}</span>'


def _last_verdict(record: dict) -> dict:
    rounds = record.get("rounds") or []
    return (rounds[-1].get("verdict") or {}) if rounds else {}


def _answer_block(record: dict) -> str:
    result = record.get("result", {})
    answer = result.get("answer", FAILED)
    if answer == INSUFFICIENT:
        missing = _last_verdict(record).get("missing") or []
        needs = f": no layer of {roles_words(missing)}" if missing else ""
        return (f'<div class="answer insufficient">Answer: <b>{e(INSUFFICIENT)}</b>{e(needs)}</div>'
                "<p class=\"muted\">The deposit model's critical evidence cannot be tested with these layers, so the "
                "deposit can be neither confirmed nor ruled out; the favourability surface below is drawn from what is "
                "there, and no targets are drawn (the answer stands behind none). Add such a layer to answer the "
                "question.</p>")
    text = record.get("choices", {}).get(answer, "")
    css = "failed" if answer == FAILED else ("valid" if result.get("valid") else "voted")
    how = ("accepted by the verifier" if result.get("valid") else
           "from the majority vote over the rounds" if result.get("voted") else "no candidate answer")
    shown = f"{answer}. {text}" if text else answer
    return (f'<div class="answer {css}">Answer: <b>{e(shown)}</b></div>'
            f'<p class="muted">{e(how)}; {e(plural(result.get("rounds", 0), "verification round"))}.</p>')


def evidence_terms(record: dict) -> set:
    """The identifiers of the deposit models' evidence items named in the record (to write as words)."""
    terms = {t for k in record.get("knowledge", []) for t in k.get("testable", [])}
    terms |= {s.get("evidence") for s in record.get("plan", []) if s.get("evidence")}
    for entry in record.get("rounds", []):
        verdict = entry.get("verdict") or {}
        terms |= set(verdict.get("critical", {})) | set(verdict.get("secondary", {}))
    return terms


def _verdicts(record: dict) -> str:
    terms = evidence_terms(record)
    parts = []
    for entry in record.get("rounds", []):
        verdict = entry.get("verdict")
        if verdict is None:
            parts.append(f"<h3>Round {e(entry['round'])}: no verdict</h3><p>{e(entry.get('error'))}</p>")
            continue
        flag = "valid" if verdict["valid"] else "invalid"
        answer = verdict.get("answer") or ("none: " + INSUFFICIENT.lower() if verdict.get("missing") else "none")
        parts.append(f"<h3>Round {e(entry['round'])}: {flag}, candidate answer {e(answer)}</h3>")
        weighed = weighed_at(verdict)
        if weighed:
            parts.append(f"<p><b>Place weighed:</b> {e(humanize(weighed, terms))}.</p>")
        parts.append(f"<p>{e(humanize(verdict.get('rationale'), terms))}</p>")
        rows = [[words(k), "critical", "supported" if v else "not supported"]
                for k, v in verdict.get("critical", {}).items()]
        rows += [[words(k), "secondary", "present" if v else "absent"] for k, v in verdict.get("secondary", {}).items()]
        if rows:
            parts.append(table(rows, ["evidence", "level", "assessment"]))
        if verdict.get("missing"):
            parts.append(f"<p>Missing: a layer of {e(roles_words(verdict['missing']))}.</p>")
        if verdict.get("feedback"):
            parts.append(table([[k, humanize(v, terms)] for k, v in verdict["feedback"].items()],
                               ["step", "corrective feedback"]))
        if entry.get("reexecuted"):
            parts.append(f"<p class=\"muted\">Re-executed steps: {e(', '.join(map(str, entry['reexecuted'])))}</p>")
    votes = record.get("result", {}).get("votes") or {}
    if votes:
        parts.append("<h3>Votes</h3>" + table([[k, v] for k, v in votes.items()], ["answer", "rounds"]))
    return "".join(parts) or "<p>No verification round ran.</p>"


def _chain(record: dict, folder: Path) -> str:
    terms = evidence_terms(record)
    parts = []
    for node in record.get("chain", []):
        step, obs = node["step"], node["observation"]
        parts.append('<div class="step">')
        parts.append(f"<h3>Step {e(step['index'])}: {e(humanize(step['purpose'], terms))}</h3>")
        layers = ", ".join(step.get("layers") or []) or "all layers (the zones of every step so far)"
        rows = [["layers", layers, humanize(step.get("layers_why", ""), terms)],
                ["tool", tool_label(step.get("tool", "")), humanize(step.get("tool_why", ""), terms)],
                ["expected", humanize(step.get("expected", ""), terms), ""]]
        if step.get("evidence"):
            rows.append(["evidence item", words(step["evidence"]), step.get("level", "")])
        parts.append(table(rows, ["", "choice", "why"]))
        chain = "the chain can conclude here" if obs.get("global_inference") == "end" else "the chain goes on"
        parts.append(f"<p>Supports the answer: {_inference(obs.get('sub_inference'))} &middot; {e(chain)}</p>"
                     f"<p>{e(humanize(obs.get('rationale'), terms))}</p>")
        if obs.get("error"):
            parts.append(f"<p class=\"no\">Error: {e(humanize(obs['error'], terms))}</p>")
        controller = obs.get("controller", [])
        if controller:
            rows = []
            for verdict in controller:
                messages = "; ".join(x.get("message", "") for x in verdict.get("errors", [])) or "all checks passed"
                rows.append([verdict.get("attempt"), "pass" if verdict.get("ok") else "fail",
                             humanize(messages, terms)])
            parts.append(table(rows, ["attempt", "controller", "findings"]))
        if obs.get("zone_ids"):
            parts.append(f"<p class=\"muted\">Zones: {e(', '.join(map(zone_label, obs['zone_ids'])))}</p>")
        evidence = obs.get("evidence_png")
        if evidence:
            parts.append(image(folder / Path(evidence).name, f"evidence of step {step['index']}"))
        parts.append("</div>")
    return "".join(parts) or "<p>No step was executed.</p>"


def _deposit_models(record: dict) -> str:
    """The deposit models followed, best match first (their retrieval scores are in the appendix)."""
    rows = [[k.get("name"), ", ".join(words(t) for t in k.get("testable", [])) or "none with these layers"]
            for k in record.get("knowledge", [])]
    return table(rows, ["model", "evidence these layers can test"]) if rows else "<p>No deposit model.</p>"


def render_report(record: dict, evidence_dir, map_png=None, figures: dict | None = None) -> str:
    """The report HTML of a record; evidence images are read from `evidence_dir`. `figures`: the map and
    curves PNGs (FIGURES keys) and a "note" on the map; without a surface map the evidence map `map_png`
    is shown."""
    figures = figures or {}
    folder = Path(evidence_dir)
    title = question_title(record.get("question"), f"Lodestar analysis {record.get('case_id') or ''}".strip())
    notes = record.get("result", {}).get("notes") or []
    shown_map = figures.get("map") or map_png
    validation = validation_rows(record)
    contents = ('<nav class="contents">Contents: <a href="#summary">Summary</a> (answer, map, targets, evidence'
                + (", validation" if validation else "") + ') &middot; <a href="#reasoning">Reasoning</a> (deposit '
                'model, verification, the chain step by step) &middot; <a href="#appendix">Technical appendix</a> '
                "(more targets, model retrieval, step flags, localization, inputs, settings, model use)</nav>")
    sections = [
        f"<h1>{e(title)}</h1>",
        f"<p><b>Question:</b> {e(record.get('question'))}</p>",
        "<p><b>Choices:</b> " + e("; ".join(f"{k}. {v}" for k, v in record.get("choices", {}).items())) + "</p>",
        contents,
        '<section id="summary">', '<h2 class="part">Summary</h2>',
        _answer_block(record),
        bullets(notes, evidence_terms(record)),
        "<h2>Prospectivity map</h2>", map_section(record, shown_map, figures.get("note", "")),
        "<h3>Targets</h3>", targets_section(record),
        *(["<h3>The best targets on their own evidence</h3>", cards] if (cards := target_cards(record, folder))
          else []),
        "<h2>Evidence weights</h2>", weights_section(record, figures.get("models")),
    ]
    if validation:
        sections += ["<h2>Validation against known deposits</h2>",
                     validation_section(validation, record, figures.get("curves"))]
    more = more_targets_section(record)
    sections += [
        "</section>",
        '<section id="reasoning">', '<h2 class="part">Reasoning</h2>',
        "<h2>Deposit model</h2>", _deposit_models(record),
        "<h2>Verification</h2>", _verdicts(record),
        "<h2>Reasoning chain</h2>", _chain(record, folder),
        "</section>",
        '<section id="appendix">', '<h2 class="part">Technical appendix</h2>',
        *(['<h3 id="more-targets">More targets</h3>', more] if more else []),
        "<h3>Deposit model retrieval</h3>", retrieval_section(record),
        "<h3>Step flags</h3>", step_flags_section(record),
        "<h3>Localization</h3>", localization_section(record),
        "<h3>Inputs</h3>", inputs_section(record),
        "<h3>Back-end settings</h3>", backend_section(record.get("backend") or {}),
        "<h3>Model use</h3>", usage_section(record),
        "</section>",
    ]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{e(title)}</title><style>{_STYLE}</style></head><body>\n"
            + "\n".join(s for s in sections if s) + "\n</body></html>\n")


def write_figures(record: dict, folder) -> dict:
    """Write the report's map, success-rate plot and fitted model's responses into `folder` (FIGURES names):
    {"map", "curves", "models", "note"}."""
    folder = Path(folder)
    figures: dict = {}
    try:
        drawn, figures["note"] = draw_record_map(record, folder, folder / FIGURES["map"],
                                                 map_title(record.get("favourability") or {}))
    except LodestarError as exc:
        drawn, figures["note"] = None, f"The prospectivity map could not be drawn: {exc}"
    if drawn is not None:
        figures["map"] = drawn
    drawn = draw_model_figure(record, folder, folder / FIGURES["models"])
    if drawn is not None:
        figures["models"] = drawn
    rows = validation_rows(record)
    if rows:
        series = [(row["key"], _curve_label(row), row["points"]) for row in rows if row["points"]]
        figures["curves"] = draw_curves(series, folder / FIGURES["curves"])
    return figures


_CURVE_NAMES = {"cv": "cross-validated", "knowledge": "knowledge-driven", "equal_weight": "equal-weight ranks",
                "fitted": "full fit", "targets": "targets"}


def _curve_label(row: dict) -> str:
    auc = f" (AUC {auc_text(row['auc'], 2)})" if row.get("auc") is not None else ""
    return f"{_CURVE_NAMES[row['key']]}{auc}" + (": fitted, not a skill figure" if fitted(row) else "")


def write_report(record: dict, path, evidence_dir, map_png=None) -> Path:
    """Write the report's figures beside `path`, then the report itself."""
    figures = write_figures(record, Path(path).parent)
    return write_text_atomic(path, render_report(record, evidence_dir, map_png, figures))
