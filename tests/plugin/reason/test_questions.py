"""Question forms: one rule for the choices of a question and which of them is the positive one."""
from __future__ import annotations

import pytest

from lodestar.plugin.reason.questions import DEFAULT_CHOICES, parse_choices, positive_choice, yes_no_letters

DOCK_PRESET = ("Are there targets worth exploring for porphyry copper here? "
               "Answer: A. Yes, there are targets worth exploring B. No, nothing stands out")
ALTERATION = ("Which alteration dominates around the intrusion? "
              "Answer: A. Phyllic B. Argillic C. Propylitic D. None of them")


def test_the_dock_preset_is_a_yes_no_question_whose_positive_choice_is_a():
    choices = parse_choices(DOCK_PRESET)
    assert choices == {"A": "Yes, there are targets worth exploring", "B": "No, nothing stands out"}
    assert yes_no_letters(choices) == ("A", "B") and positive_choice(choices) == "A"


def test_a_four_choice_alteration_question_has_no_positive_choice():
    choices = parse_choices(ALTERATION)
    assert choices == {"A": "Phyllic", "B": "Argillic", "C": "Propylitic", "D": "None of them"}
    assert yes_no_letters(choices) == (None, None) and positive_choice(choices) is None


@pytest.mark.parametrize("question", ["Where are Carlin-type gold deposits likely?", "", None,
                                      "Is it porphyry? Answer: A. Yes"])
def test_without_two_listed_options_the_question_means_yes_no(question):
    choices = parse_choices(question)
    assert choices == DEFAULT_CHOICES and choices is not DEFAULT_CHOICES
    assert positive_choice(choices) == "A"


@pytest.mark.parametrize("choices, letters", [
    ({"A": "Yes", "B": "No"}, ("A", "B")),
    ({"1": "no", "2": "yes"}, ("2", "1")),
    ({"A": "Present.", "B": "Absent"}, ("A", "B")),
    ({"A": "true", "B": "false"}, ("A", "B")),
    ({"A": "Porphyry", "B": "Skarn"}, (None, None)),
    ({"A": "Yes", "B": "Yes, strongly"}, (None, None)),
    ({"A": "Yes", "B": "No", "C": "Cannot tell"}, (None, None)),
])
def test_yes_no_letters(choices, letters):
    assert yes_no_letters(choices) == letters


def test_the_alteration_preset_is_an_alteration_question():
    from lodestar.plugin.reason.questions import alteration_choices, answer_form

    choices = parse_choices("Which hydrothermal alteration is present in this area? Answer: A. Argillic or phyllic "
                            "(clay, sericite) B. Propylitic (chlorite, epidote) C. Silicification D. None.")
    assert alteration_choices(choices) == {"A": "clay", "B": "propylitic", "C": "silica", "D": "none"}
    assert answer_form(choices) == "alteration"
    assert answer_form({"A": "Yes", "B": "No"}) == "yes_no"
    assert answer_form({"A": "Porphyry", "B": "Skarn", "C": "Epithermal"}) is None
    assert alteration_choices({"A": "Clay and quartz", "B": "None"}) is None  # a choice naming two families

