"""Which questions the offline reasoner can answer, told before a run: its two answer forms, and for a yes / no
question something it knows to look for (a deposit type or commodity of the knowledge base, or deposits, targets
and alteration in general)."""
from __future__ import annotations

from ..pathfinders import ELEMENTS
from .knowledge import plain_words
from .questions import ALTERATION_WORDS, answer_form

SOUGHT = ("deposit", "mineral", "mineralisation", "mineralization", "mineralised", "mineralized", "ore", "orebody",
          "prospect", "prospective", "prospectivity", "target", "explore", "exploring", "exploration",
          "occurrence", "alteration", "altered", "hydrothermal", "drill", "drilling")
"""Words (singular) by which a yes / no question asks about deposits, targets or alteration in general."""
COMMODITY_NAMES = {**{symbol: (name,) for symbol, name in ELEMENTS.items()},
                   "fe": ("iron", "iron ore"), "ree": ("rare earth", "rare earth element")}
"""Names of the commodity symbols the deposit models list (the elements', and a few more ways to say them)."""
OTHER_COMMODITIES = {"lithium": "lithium", "li": "lithium", "nickel": "nickel", "ni": "nickel", "cobalt": "cobalt",
                     "platinum": "platinum", "pge": "platinum-group elements", "pgm": "platinum-group metals",
                     "palladium": "palladium", "chromite": "chromite", "chromium": "chromium", "diamond": "diamonds",
                     "kimberlite": "kimberlite", "pegmatite": "pegmatites", "tin": "tin", "sn": "tin",
                     "manganese": "manganese", "bauxite": "bauxite", "phosphate": "phosphate", "potash": "potash",
                     "vanadium": "vanadium", "graphite": "graphite", "coal": "coal", "oil": "oil", "gas": "gas"}
"""Commodities and deposit types a question may name that no bundled deposit model covers (word: what to call it)."""
OTHER_DEPOSIT_TYPES = {"ni cu": "magmatic Ni-Cu sulphide", "cu ni": "magmatic Ni-Cu sulphide",
                       "nickel copper": "magmatic Ni-Cu sulphide", "copper nickel": "magmatic Ni-Cu sulphide",
                       "magmatic sulphide": "magmatic sulphide", "magmatic sulfide": "magmatic sulphide",
                       "massive sulphide": "volcanogenic massive sulphide",
                       "massive sulfide": "volcanogenic massive sulphide", "vms": "volcanogenic massive sulphide",
                       "sedex": "SEDEX", "mvt": "Mississippi Valley-type"}
"""Deposit types no model covers that are named with covered commodities ("Ni-Cu sulphide", "VMS copper",
"MVT zinc"): a question naming one asks about a deposit type no model covers, unless it also names a covered
deposit type."""


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


def _covered(models: list[dict]) -> tuple[set, set]:
    """What the models cover, as singular phrases: (deposit types, commodities). The types are each model's
    keywords sharing a word with its name ("carlin-type" and "sediment-hosted" with "Carlin-type sediment-hosted
    gold"), but not its commodities ("cu" with "Porphyry Cu-Mo-Au"): their symbols and names."""
    types, commodities = set(), set()
    for model in models:
        for symbol in model.get("commodities", []):
            commodities |= {_text(symbol), *(_text(n) for n in COMMODITY_NAMES.get(symbol.lower(), ()))}
        name_words = set(_text(model["name"]).split())
        types |= {phrase for phrase in map(_text, model["keywords"]) if set(phrase.split()) & name_words}
    return types - commodities, commodities


def offline_question_problem(question: str, choices: dict, models: list[dict]) -> str:
    """Why the offline reasoner cannot answer `question` with `choices`, said as what to do; '' when it can.

    It answers two forms (`answer_form`). A yes / no question must also name something it looks for: a deposit type
    or commodity of `models` (the knowledge base's deposit models), else deposits, targets or alteration in general,
    and no commodity or deposit type that no model covers; a question about anything else ("How old is the
    granite?", "Where are lithium deposits likely?") would otherwise get a deposit model's answer to a question
    nobody asked.
    """
    form = answer_form(choices)
    if form is None:
        return ("The offline reasoner answers yes / no questions (A. Yes B. No) and which-alteration questions "
                "(choices naming argillic, propylitic, silicification, iron oxide or none); these choices are "
                "neither: " + ", ".join(f"{k}. {v}" for k, v in choices.items())
                + ". Rephrase the question or use a model server.")
    if form == "alteration":
        return ""
    text = _text(str(question or "").split("Answer:", 1)[0])
    types, commodities = _covered(models)
    if any(phrase in text for phrase in types):
        return ""
    other = next((name for words, name in OTHER_DEPOSIT_TYPES.items() if _text(words) in text), None)
    if other is None and any(phrase in text for phrase in commodities):
        return ""
    other = other or next((name for word, name in OTHER_COMMODITIES.items() if _text(word) in text), None)
    if other:
        known = ", ".join(model["name"] for model in models)
        return (f"No deposit model of the knowledge base covers {other}; the offline reasoner knows {known}. Ask "
                "about one of them or about mineral deposits in general, or use a model server.")
    general = set(SOUGHT) | {_singular(w) for words in ALTERATION_WORDS.values() for w in words}
    if any(f" {word} " in text for word in general):
        return ""
    return ("The offline reasoner answers whether and where mineral deposits are likely and which alteration is "
            "present; this question names no deposit, commodity, target or alteration to look for. Ask e.g. "
            "'Are porphyry copper deposits likely here?', or use a model server.")
