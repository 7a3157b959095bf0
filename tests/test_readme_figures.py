"""The README's figures of an offline run are what a user gets with its command (issue 61: it said Great Basin's
offline run gives 325 targets holding 20 of 32 deposits, the best ten 14 against 9.0; the same command gave 255
targets holding 25, the best ten 13 against 14). Each quoted figure carries its name in a comment
(tests/readme_figures.py: '255<!-- fig great-basin.offline.targets -->'); a fresh offline run of the case, as
`qgis_process run lodestar:analyze -- CASE=<case.json>` makes it (the case's own favourable units, no calibration),
must give it at the precision it is written to."""
from __future__ import annotations

import pytest
from readme_figures import OFFLINE_FIGURES, ROOT, matches, offline_figures, quoted

from lodestar.models import run_analysis
from lodestar.plugin.analysis import AnalysisRequest
from lodestar.plugin.runs.case import read_case

CASES = {"murchison": ROOT / "tests" / "data" / "murchison-gold",
         "great-basin": ROOT / "tests" / "data" / "great-basin-gold"}
QUOTED = ("offline.targets", "offline.held", "offline.best10", "offline.best10_surface")
"""The offline-run figures the README's Results section quotes for each case (its other figures are the benches')."""
DOCUMENTS = (ROOT / "README.md", ROOT / "docs" / "results.md")


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
