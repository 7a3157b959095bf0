"""The report's technical appendix: the deposit models' retrieval scores, each step's inference flags,
localization parameters, inputs, analysis grid, back-end settings and model use, written as readable lists rather
than raw JSON. Internal scores and flags live here, not in the report's main text."""
from __future__ import annotations

from ..labels import kind_label
from .report_text import e, humanize, number, table, words

_SETTING_NAMES = {"backend": "back-end", "base_url": "server address", "max_calls": "model call budget",
                  "max_tokens": "token budget", "max_retries": "retries"}
_UNITS = (("_m2", "m²"), ("_km", "km"), ("_m", "m"), ("_s", "s"), ("_px", "pixels"))


def setting_name(key: str) -> str:
    """A setting's key in words, its unit suffix in brackets: 'timeout_s' -> 'timeout (s)'."""
    if key in _SETTING_NAMES:
        return _SETTING_NAMES[key]
    for suffix, unit in _UNITS:
        if key.endswith(suffix):
            return f"{words(key[:-len(suffix)])} ({unit})"
    return words(key)


def value_text(value) -> str:
    """A setting's value in words: lists and mappings inline, empty as '-'."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return number(value, 4)
    if isinstance(value, dict):
        return ", ".join(f"{words(k)} {value_text(v)}" for k, v in value.items()) or "-"
    if isinstance(value, (list, tuple)):
        return ", ".join(value_text(v) for v in value) or "-"
    return humanize(value) if str(value or "").strip() else "-"


def settings_rows(settings: dict) -> list:
    """[name, value] rows of a settings mapping; the models mapping gives one row per role ('planner model')."""
    rows = []
    for key, value in settings.items():
        if key == "models" and isinstance(value, dict):
            rows += [[f"{words(k)} model", value_text(v)] for k, v in value.items()]
        else:
            rows.append([setting_name(key), value_text(value)])
    return rows


def backend_section(backend: dict) -> str:
    """The back-end settings, then each reasoner's settings (roles with the same settings listed together)."""
    parts = []
    if backend.get("settings"):
        parts.append(table(settings_rows(backend["settings"]), ["setting", "value"]))
    groups: list = []
    for role in ("planner", "executor", "verifier"):
        if role not in backend:
            continue
        for group in groups:
            if group[1] == backend[role]:
                group[0].append(role)
                break
        else:
            groups.append(([role], backend[role]))
    for roles, settings in groups:
        names = " and ".join(roles) if len(roles) < 3 else "planner, executor and verifier"
        parts.append(f"<h4>{e(names.capitalize())}</h4>")
        parts.append(table(settings_rows(settings), ["setting", "value"]) if settings else "<p>-</p>")
    return "".join(parts)


def localization_section(record: dict) -> str:
    loc = record.get("localization") or {}
    parts = [f"<p>{e(humanize(loc['note']))}</p>"] if loc.get("note") else []
    if loc.get("params"):
        source = str(loc.get("source") or "-")
        if source.startswith("offline"):
            source = "the offline rule-based planner" + source[len("offline"):]
        for model in record.get("knowledge") or []:  # a deposit model by its name, not its identifier
            if model.get("id") and model.get("name"):
                source = source.replace(f"deposit model {model['id']}", f"the {model['name']} deposit model")
        parts.append(f"<p>The spatial graph of the chain's zones ranks and explains the targets; its parameters "
                     f"came from {e(humanize(source))}.</p>")
        parts.append(table(settings_rows(loc["params"]), ["parameter", "value"]))
    return "".join(parts) or "<p>No localization parameters were recorded.</p>"


def inputs_section(record: dict) -> str:
    rows = [[i.get("name"), words(i.get("role")), kind_label(i.get("kind")), i.get("crs"),
             " x ".join(map(str, i.get("size") or [])) or "-", (i.get("sha256") or "")[:12]]
            for i in record.get("inputs", [])]
    analysis = record.get("analysis") or {}
    grid = analysis.get("grid") or []
    size = f"{grid[0]} x {grid[1]} cells" if len(grid) == 2 else "-"
    log = " ".join(analysis.get("log") or [])
    return (table(rows, ["layer", "role", "kind", "CRS", "size (cells)", "sha256"])
            + f'<p class="muted">Analysis grid: {e(analysis.get("crs"))}, {e(size)}. {e(humanize(log))}</p>')


def usage_section(record: dict) -> str:
    usage = record.get("usage") or {}
    if not any(u.get("calls") for u in usage.values()):
        return "<p>No model was called (the offline rule-based reasoner needs none).</p>"
    rows = [[role, u.get("calls", 0), number(u.get("prompt_tokens", 0), 9), number(u.get("completion_tokens", 0), 9),
             number(u.get("seconds", 0.0), 3)] for role, u in sorted(usage.items())]
    return table(rows, ["role", "model calls", "prompt tokens", "completion tokens", "seconds"])


def retrieval_section(record: dict) -> str:
    """The deposit models' retrieval scores: how well each matched the question and the layers' roles."""
    rows = [[k.get("name"), number(k.get("score", 0), 3)] for k in record.get("knowledge", [])]
    if not rows:
        return "<p>No deposit model was retrieved.</p>"
    return ("<p>How well each deposit model matched the question and the layers' roles (keyword retrieval; higher "
            "is closer). The run follows the first.</p>" + table(rows, ["model", "retrieval score"]))


def step_flags_section(record: dict) -> str:
    """Each step's two flags as the executor set them: sub-inference (the step supports the answer) and global
    inference (the chain may end after it)."""
    rows = [[node["step"].get("index"), node["observation"].get("sub_inference", "-"),
             node["observation"].get("global_inference", "-"), node["observation"].get("attempts", "-")]
            for node in record.get("chain", [])]
    if not rows:
        return "<p>No step was executed.</p>"
    return ("<p>The executor's flags per step (STA-CoT): sub-inference Yes when the step supports the answer, global "
            "inference end when the chain can conclude after it.</p>"
            + table(rows, ["step", "sub-inference", "global inference", "attempts"], "flags"))
