"""The figures the README and docs/results.md quote, made by the code that measures them, so a quoted figure cannot
drift from what a user gets (issue 61): each bench writes its figures to build/bench/<bench>.json beside its .md,
with the ones the documents quote under "quoted" ({name: value}), and `run_all.py` (`make bench`) rewrites every
marked figure of README.md and docs/results.md from the bench it has just run (`refresh_documents`), each at the
precision it is written to; tests/test_readme_figures.py also holds the README's offline-run figures to a fresh run.

A quoted figure carries its name in an HTML comment right after it, invisible on GitHub:

    its 255<!-- fig great-basin.offline.targets --> targets, each at most 100 km², hold 25<!-- fig
    great-basin.offline.held --> of the 32 deposits

`quoted(text)` reads them back ({name: the number as written}); `offline_figures(result)` gives a run's figures
under the names OFFLINE_FIGURES lists (prefixed by the case: 'murchison', 'great-basin').
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from lodestar.plugin.files import write_text_atomic

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "build" / "bench"
MARKER = re.compile(r"([+-]?[\d,]*\.?\d+)(\s*<!--\s*fig\s+([\w.-]+)\s*-->)")
"""A number, then its name in a comment: '255<!-- fig great-basin.offline.targets -->'."""
OFFLINE_FIGURES = {
    "offline.auc": "success-rate AUC of the run's surface (the one its targets came from)",
    "offline.capture.2": "deposits in the most favourable 2 % of the area (expected where tied cells straddle it)",
    "offline.capture.5": "... 5 %", "offline.capture.10": "... 10 %", "offline.capture.20": "... 20 %",
    "offline.targets": "targets drawn", "offline.targets_km2": "their area in km²",
    "offline.held": "known deposits inside the targets", "offline.deposits": "known deposits given",
    "offline.best10": "known deposits inside the best ten targets",
    "offline.best10_surface": "deposits in the surface's own best cells of the best ten's area",
}
"""The figures of an offline run a README sentence may quote, by name (after the case's prefix)."""


def quoted(text: str) -> dict:
    """{name: the number written before its marker (a string, as written)} of a text."""
    return {name: number for number, _, name in MARKER.findall(text)}


def offline_figures(result) -> dict:
    """OFFLINE_FIGURES of a run (an AnalysisResult), as numbers."""
    from lodestar.plugin.labels import targets_auc, targets_surface

    validation, metrics = result.validation or {}, result.metrics or {}
    shown = validation.get(targets_surface(validation)) or {}
    targets = result.prospectivity
    equal = metrics.get("equal_area") or {}
    figures = {"offline.auc": targets_auc(validation), "offline.targets": len(targets),
               "offline.targets_km2": float(targets["area_km2"].sum()) if len(targets) else 0.0,
               "offline.held": int(targets["known_deps"].sum()) if len(targets) else 0,
               "offline.deposits": metrics.get("deposits"), "offline.best10": equal.get("targets"),
               "offline.best10_surface": equal.get("surface")}
    for share in ("2", "5", "10", "20"):
        figures[f"offline.capture.{share}"] = (shown.get("capture") or {}).get(f"{int(share) / 100:g}")
    return figures


DOCUMENTS = (ROOT / "README.md", ROOT / "docs" / "results.md")
"""The documents whose marked figures the benches rewrite."""


def write_figures(bench: str, figures: dict, quoted: dict | None = None) -> Path:
    """Write a bench's figures to build/bench/<bench>.json (written whole or not at all), `quoted` ({name: value}:
    the figures the documents may quote) under "quoted"."""
    BENCH.mkdir(parents=True, exist_ok=True)
    return write_text_atomic(BENCH / f"{bench}.json", json.dumps(dict(figures, quoted=dict(quoted or {})), indent=1,
                                                                 sort_keys=True, default=float))


def as_written(written: str, value) -> str:
    """`value` written like `written`: its decimals, its thousands separator, its sign ('+0.082')."""
    decimals = len(written.split(".", 1)[1]) if "." in written else 0
    sign = "+" if written.startswith(("+", "-")) and not written.startswith("-") else ""
    grouped = "," if "," in written else ""
    return f"{float(value):{sign}{grouped}.{decimals}f}"


def refresh(text: str, values: dict) -> tuple[str, dict]:
    """`text` with each marked figure named in `values` rewritten to its value at the precision it is written to;
    and {name: (as it was, as it is now)} of those that changed."""
    changed = {}

    def rewrite(match):
        number, marker, name = match.groups()
        if name not in values or values[name] is None:
            return match.group(0)
        new = as_written(number, values[name])
        if new != number:
            changed[name] = (number, new)
        return new + marker

    return MARKER.sub(rewrite, text), changed


def refresh_documents(bench: str, documents: tuple = DOCUMENTS) -> dict:
    """Rewrite the marked figures of `documents` from build/bench/<bench>.json's "quoted" (none: nothing to do);
    {document name: {figure: (was, now)}} of what changed."""
    path = BENCH / f"{bench}.json"
    values = json.loads(path.read_text(encoding="utf-8")).get("quoted") if path.is_file() else None
    changes = {}
    for document in documents if values else ():
        text, changed = refresh(document.read_text(encoding="utf-8"), values)
        if changed:
            write_text_atomic(document, text)
            changes[document.name] = changed
    return changes


def matches(written: str, value) -> bool:
    """Whether a figure as written ('13,276', '0.934', '59.3') is `value` at the precision it is written to."""
    if value is None:
        return False
    text = written.replace(",", "")
    decimals = len(text.split(".", 1)[1]) if "." in text else 0
    return abs(float(text) - float(value)) <= 0.5 * 10 ** -decimals + 1e-9
