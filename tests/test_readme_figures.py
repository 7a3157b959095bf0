"""The README's figures are what a user gets (issue 61: it said Great Basin's offline run gives 325 targets holding
20 of 32 deposits, the best ten 14 against 9.0; the same command gave 255 targets holding 25, the best ten 13 against
14). Each quoted figure carries its name in a comment (tests/readme_figures.py:
'255<!-- fig great-basin.offline.targets -->'): every measured figure of the Results section has one, the bench that
measures it rewrites it (`refresh`), and a fresh offline run of the case, as
`qgis_process run lodestar:analyze -- CASE=<case.json>` makes it (the case's own favourable units, no calibration),
must give the offline ones at the precision they are written to."""
from __future__ import annotations

import json
import re

import pytest
import readme_figures
from readme_figures import (
    DOCUMENTS,
    OFFLINE_FIGURES,
    ROOT,
    as_written,
    matches,
    offline_figures,
    quoted,
    refresh,
    refresh_documents,
)

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.request.case import read_case

CASES = {"murchison": ROOT / "tests" / "data" / "murchison-gold",
         "great-basin": ROOT / "tests" / "data" / "great-basin-gold"}
QUOTED = ("offline.targets", "offline.held", "offline.best10", "offline.best10_surface")
"""The offline-run figures the README's Results section quotes for each case (its other figures are the benches')."""
WRITTEN_BY = {"murchison": "realdata", "great-basin": "realdata", "knowledge": "knowledge",
              "calibration": "calibration", "skill": "skill", "suite": "suite", "worlds_b_heldout": "worlds_b_heldout",
              "targets": "targets", "scanned_maps": "scanned_maps"}
"""The bench that writes each figure, by the first part of its name."""


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> dict:
    """{case: its offline figures} of a fresh run of each case as its README command makes it."""
    figures = {}
    for name, folder in CASES.items():
        case = read_case(folder)
        result = run_analysis(AnalysisRequest(case.layers, case.question, tmp_path_factory.mktemp(name),
                                              dict(case.choices), case_id=case.id, deposits=case.deposits,
                                              favourable_units=dict(case.favourable_units or {})))
        figures.update({f"{name}.{key}": value for key, value in offline_figures(result).items()})
    return figures


def test_the_readme_names_the_offline_figures_it_quotes():
    marked = quoted(DOCUMENTS[0].read_text(encoding="utf-8"))
    wanted = [f"{case}.{key}" for case in CASES for key in QUOTED]
    assert not [key for key in wanted if key not in marked], (
        "the README's Results section quotes these offline-run figures without their marker (tests/readme_figures.py "
        "says how to mark one): " + ", ".join(key for key in wanted if key not in marked))


def test_every_marked_offline_figure_is_what_a_fresh_run_gives(fresh):
    for document in DOCUMENTS:
        marked = {key: text for key, text in quoted(document.read_text(encoding="utf-8")).items()
                  if key.split(".", 1)[0] in CASES and key.split(".", 1)[1] in OFFLINE_FIGURES}
        wrong = {key: (text, fresh[key]) for key, text in marked.items() if not matches(text, fresh[key])}
        assert not wrong, f"{document.name}: figures as written / as a fresh run gives them: {wrong}"


def test_a_figure_is_read_at_the_precision_it_is_written_to():
    text = "its 255<!-- fig great-basin.offline.targets --> targets hold 25<!--fig great-basin.offline.held-->, " \
           "13,276<!-- fig murchison.offline.targets_km2 --> km², 59.3 <!-- fig\n murchison.offline.best10_surface -->"
    assert quoted(text) == {"great-basin.offline.targets": "255", "great-basin.offline.held": "25",
                            "murchison.offline.targets_km2": "13,276", "murchison.offline.best10_surface": "59.3"}
    assert matches("13,276", 13_275.6) and not matches("13,276", 13_274.4)
    assert matches("59.3", 59.34) and not matches("59.3", 59.36) and matches("0.934", 0.9336)
    assert not matches("255", None)


def _results_section() -> str:
    text = DOCUMENTS[0].read_text(encoding="utf-8")
    return text[text.index("## Results\n"):text.index("\n## ", text.index("## Results\n") + 1)]


def test_every_measured_figure_of_the_readme_results_is_marked_by_a_bench():
    """A decimal figure in the Results section without its marker would drift from the bench: none is left, and
    every marker names a figure of a bench that writes it."""
    section = _results_section()
    unmarked = [m.group(0) for m in re.finditer(r"(?<![\w.])\d[\d,]*\.\d+(?![\d.])", section)
                if not re.match(r"\s*<!--\s*fig", section[m.end():])]
    assert not unmarked, f"figures of the README's Results section without a marker: {unmarked}"
    names = quoted(section)
    assert len(names) >= 35
    assert not [n for n in names if n.split(".", 1)[0] not in WRITTEN_BY]


def test_docs_results_marks_the_figures_of_the_benches_that_rewrite_them():
    """docs/results.md is a results page: its marked figures are the benches' (each named after a bench that writes
    it), and it stays short enough to read (issue 59: at most 300 lines; the history is results-history.md)."""
    text = DOCUMENTS[1].read_text(encoding="utf-8")
    names = quoted(text)
    assert len(names) >= 50 and len(text.splitlines()) <= 300
    assert not [n for n in names if n.split(".", 1)[0] not in WRITTEN_BY]


def test_a_bench_rewrites_its_figures_at_the_precision_they_are_written_to():
    text = ("ahead on 12<!-- fig skill.best.ahead --> (AUC +0.082<!-- fig skill.best.mean -->), 1,680<!-- fig "
            "w.cases --> cases, 15.3<!-- fig c.s --> s, 0.937<!-- fig other.auc -->")
    new, changed = refresh(text, {"skill.best.ahead": 11, "skill.best.mean": -0.0104, "w.cases": 2400,
                                  "c.s": 15.34, "missing": 3})
    assert new == ("ahead on 11<!-- fig skill.best.ahead --> (AUC -0.010<!-- fig skill.best.mean -->), 2,400<!-- fig "
                   "w.cases --> cases, 15.3<!-- fig c.s --> s, 0.937<!-- fig other.auc -->")
    assert changed == {"skill.best.ahead": ("12", "11"), "skill.best.mean": ("+0.082", "-0.010"),
                       "w.cases": ("1,680", "2,400")}
    assert as_written("+0.033", 0.0412) == "+0.041" and as_written("0.9404", 0.94) == "0.9400"
    assert as_written("57.86", 57.864) == "57.86" and as_written("2.34", 2.345001) == "2.35"


def test_refresh_documents_rewrites_only_what_the_bench_quotes(tmp_path, monkeypatch):
    monkeypatch.setattr(readme_figures, "BENCH", tmp_path)
    document = tmp_path / "README.md"
    document.write_text("the ensemble 0.9404<!-- fig calibration.murchison.auc --> and 0.937<!-- fig "
                        "knowledge.murchison.kd -->\n", encoding="utf-8")
    assert refresh_documents("calibration", (document,)) == {}  # no bench output yet: nothing changes
    readme_figures.write_figures("calibration", {"rows": []}, {"calibration.murchison.auc": 0.93851})
    assert json.loads((tmp_path / "calibration.json").read_text())["quoted"] == {"calibration.murchison.auc": 0.93851}
    assert refresh_documents("calibration", (document,)) == {"README.md": {"calibration.murchison.auc":
                                                                            ("0.9404", "0.9385")}}
    assert document.read_text(encoding="utf-8") == ("the ensemble 0.9385<!-- fig calibration.murchison.auc --> and "
                                                    "0.937<!-- fig knowledge.murchison.kd -->\n")
