"""Question forms: the answer choices of a question and which of them is the positive one.

One rule for the dock, every Processing algorithm, case files and every back-end. A question ends
in "Answer: A. ... B. ..." (MineBench style) or has no listed options, and then means Yes / No.
"""
from __future__ import annotations

import re

DEFAULT_CHOICES = {"A": "Yes", "B": "No"}
_CHOICE = re.compile(r"(?:^|\s)([A-F])[.)]\s*(.+?)(?=\s+[A-F][.)]\s|$)", re.S)
_YES = ("yes", "true", "present")
_NO = ("no", "false", "absent", "none")


def parse_choices(question: str) -> dict:
    """Option letters and texts from a question ending in 'Answer: A. ... B. ...'; Yes / No when none."""
    tail = question.split("Answer:", 1)[1] if "Answer:" in (question or "") else ""
    found = {letter: text.strip().rstrip(".") for letter, text in _CHOICE.findall(tail)}
    return found if len(found) >= 2 else dict(DEFAULT_CHOICES)


def _first_word(text) -> str:
    words = re.findall(r"[a-z]+", str(text).lower())
    return words[0] if words else ""


def yes_no_letters(choices: dict) -> tuple:
    """(letter meaning yes, letter meaning no), or (None, None) when the choices are not a yes / no pair.

    A choice means yes when its first word does ("Yes, there are targets worth exploring"), no when
    its first word does ("No, nothing stands out"); a choice set with more options than that pair
    (an alteration question) is not a yes / no question.
    """
    yes = no = None
    for letter, text in choices.items():
        word = _first_word(text)
        if word in _YES and yes is None:
            yes = letter
        elif word in _NO and no is None:
            no = letter
    if yes is None or no is None or len(choices) != 2:
        return None, None
    return yes, no


def positive_choice(choices: dict) -> str | None:
    """The letter that means 'yes, deposits / targets here'; None for a question that is not yes / no."""
    return yes_no_letters(choices)[0]


_WHERE = re.compile(r"\b(where|which (part|area|areas|zone|zones)|most likely|worth exploring|explore|targets?)\b",
                    re.IGNORECASE)


def asks_where(question: str) -> bool:
    """Whether the question asks where deposits are (so it always gets a surface and targets), not only
    whether they are present: "Where are Carlin-type gold deposits likely?", "where should we explore"."""
    return bool(_WHERE.search(question.split("Answer:", 1)[0] if question else ""))


ALTERATION_WORDS = {
    "clay": ("argillic", "phyllic", "clay", "sericite", "sericitic", "kaolinite", "alunite", "illite", "aloh"),
    "propylitic": ("propylitic", "chlorite", "epidote", "mgoh"),
    "silica": ("silicification", "silicified", "silica", "quartz", "jasperoid"),
    "iron": ("iron", "gossan", "hematite", "goethite", "jarosite", "ferric", "limonite"),
}
"""Words naming each alteration family in a choice's text (the families of models/offline.FAMILY)."""
_NONE_WORDS = ("none", "no alteration", "nothing", "unaltered")


def alteration_choices(choices: dict) -> dict | None:
    """{letter: family} for a "which alteration" question ("none" for the no-alteration choice); None when
    the choices are not alteration kinds. Every choice must name one family, or none."""
    out = {}
    for letter, text in choices.items():
        low = str(text).lower()
        words = set(re.findall(r"[a-z]+", low))
        families = [family for family, names in ALTERATION_WORDS.items() if words.intersection(names)]
        if len(families) == 1:
            out[letter] = families[0]
        elif not families and any(re.search(rf"\b{w}\b", low) for w in _NONE_WORDS):
            out[letter] = "none"
        else:
            return None
    return out if len(set(out.values()) - {"none"}) >= 2 else None


def answer_form(choices: dict) -> str | None:
    """"yes_no", "alteration" or None: the question forms the offline reasoner can answer."""
    if positive_choice(choices) is not None:
        return "yes_no"
    return "alteration" if alteration_choices(choices) else None
