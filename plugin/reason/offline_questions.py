"""Which questions the offline reasoner can answer, told before a run: its two answer forms, and for a yes / no
question something to look for (a deposit type, a commodity, or deposits, targets and alteration in general). A
deposit type or commodity no model covers is answered with the nearest model, or the generic one (knowledge.retrieve),
never refused."""
from __future__ import annotations

from . import commodities
from .knowledge import plain_words
from .questions import ALTERATION_WORDS, answer_form

SOUGHT = ("deposit", "mineral", "mineralisation", "mineralization", "mineralised", "mineralized", "ore", "orebody",
          "prospect", "prospective", "prospectivity", "target", "explore", "exploring", "exploration",
          "occurrence", "alteration", "altered", "hydrothermal", "drill", "drilling")
"""Words (singular) by which a yes / no question asks about deposits, targets or alteration in general."""
def _singular(word: str) -> str:
    if len(word) <= 3:
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _text(text: str) -> str:
    """Lower-case words in singular, space-delimited (" are there skarn here ")."""
    return " " + " ".join(_singular(w) for w in plain_words(text).split()) + " "


def _types(models: list[dict]) -> set:
    """The deposit types the models are named by, as singular phrases: each model's keywords sharing a word with its
    name ("carlin-type" and "sediment-hosted" with "Carlin-type sediment-hosted gold")."""
    types = set()
    for model in models:
        name_words = set(_text(model["name"]).split())
        types |= {phrase for phrase in map(_text, model["keywords"]) if set(phrase.split()) & name_words}
    return types


def offline_question_problem(question: str, choices: dict, models: list[dict]) -> str:
    """Why the offline reasoner cannot answer `question` with `choices`, said as what to do; '' when it can.

    It answers two forms (`answer_form`). A yes / no question must also name something to look for: a deposit type
    of `models` (the knowledge base's deposit models), a commodity or deposit type of any kind (one no model covers
    is answered with the nearest model, saying so), or deposits, targets or alteration in general; a question about
    anything else ("How old is the granite?") would otherwise get a deposit model's answer to a question nobody
    asked.
    """
    form = answer_form(choices)
    if form is None:
        return ("The offline reasoner answers yes / no questions (A. Yes B. No) and which-alteration questions "
                "(choices naming argillic, propylitic, silicification, iron oxide or none); these choices are "
                "neither: " + ", ".join(f"{k}. {v}" for k, v in choices.items())
                + ". Rephrase the question or use a model server.")
    if form == "alteration":
        return ""
    asked = str(question or "").split("Answer:", 1)[0]
    text = _text(asked)
    if (any(phrase in text for phrase in _types(models)) or commodities.asked_commodities(asked)
            or commodities.asked_others(asked)):
        return ""
    general = set(SOUGHT) | {_singular(w) for words in ALTERATION_WORDS.values() for w in words}
    if any(f" {word} " in text for word in general):
        return ""
    return ("The offline reasoner answers whether and where mineral deposits are likely and which alteration is "
            "present; this question names no deposit, commodity, target or alteration to look for. Ask e.g. "
            "'Are porphyry copper deposits likely here?', or use a model server.")
