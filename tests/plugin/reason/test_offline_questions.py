"""Which questions the offline reasoner answers, told before a run."""
from __future__ import annotations

import pytest

from lodestar.plugin.reason.knowledge import load_knowledge
from lodestar.plugin.reason.offline_questions import offline_question_problem
from lodestar.plugin.reason.questions import parse_choices


def _problem(question):
    return offline_question_problem(question, parse_choices(question), load_knowledge())


@pytest.mark.parametrize("question", [
    "Where are Carlin-type gold deposits likely?",
    "Where are orogenic gold deposits likely in the Murchison greenstone belts?",
    "Given these layers, can mineral deposits be detected in this area? Answer: A. Yes B. No.",
    "Is there Cu here?",  # a commodity symbol of the models
    "Are there skarns here?", "Are there porphyries?", "Are there IOCGs here?",  # plurals
    "Are there uranium deposits?", "Is there lead here?", "Are there REE deposits here?",  # IOCG's U, REE; skarn's Pb
    "Is there silicification here?", "Is there a propylitic halo?", "Is the rock silicified?", "Is there a gossan?",
    "Does any part of it deserve exploration?",
    "Which alteration dominates around the intrusion? Answer: A. Phyllic B. Argillic C. Propylitic D. None of them",
])
def test_questions_about_a_covered_deposit_commodity_target_or_alteration_are_answerable_offline(question):
    assert _problem(question) == ""


@pytest.mark.parametrize("question, said", [
    ("How old is the granite?", "names no deposit, commodity, target or alteration to look for"),
    ("Is it as old as the sandstone?", "names no deposit"),  # "as" (arsenic among Carlin's keywords) is a word
    ("Is the intrusion older than the faults?", "names no deposit"),  # a model's keyword, not a deposit type
    ("Does the shear zone dip north?", "names no deposit"),
    ("Which deposit type is this? Answer: A. Porphyry B. Skarn", "these choices are neither: A. Porphyry, B. Skarn"),
])
def test_other_questions_are_told_what_the_offline_reasoner_answers(question, said):
    assert said in _problem(question)


def test_a_covered_commodity_beside_an_uncovered_one_is_answerable():
    assert _problem("Are there gold or lithium deposits here?") == ""
    assert _problem("Is there a porphyry Cu-Ni system here?") == ""  # a covered deposit type is named


@pytest.mark.parametrize("question", [
    "Where are lithium pegmatite deposits likely?", "Is there lithium in the pegmatite veins?",
    "Are nickel sulphide deposits likely in this greenstone belt?", "Is there Sn here? Answer: A. Yes B. No",
    "Are there Ni-Cu sulphide deposits here?", "Is this a massive sulfide district?",
    "Are there VMS copper deposits here?", "Are there MVT zinc deposits here?", "Is there SEDEX zinc-lead here?",
    # types and commodities no model covers: the nearest model answers, or the generic one (knowledge.retrieve)
    "Where are epithermal manganese deposits likely?", "Is there graphite here?", "Where are placer gold deposits?",
    "Are kimberlites likely here?",
])
def test_a_question_about_any_deposit_type_or_commodity_is_never_refused(question):
    """Issue 57: before, a type or commodity no bundled model covered (lithium, nickel, tin, VMS, MVT, SEDEX) was
    refused before any layer was read; the knowledge base now holds those types, and one it lacks is answered with
    the nearest model."""
    assert _problem(question) == ""
