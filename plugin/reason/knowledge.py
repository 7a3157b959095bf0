"""The domain knowledge base K_domain: deposit models, validated, retrieved by question and roles."""
from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from pathlib import Path

from ..errors import LodestarError
from ..pathfinders import ELEMENTS, named_elements, off_model_reason
from ..roles import ROLES
from ..tools.lithology_words import matched_units
from . import commodities
from .questions import ALTERATION_WORDS

KNOWLEDGE_PATH = Path(__file__).resolve().parents[2] / "resources" / "knowledge" / "deposit_models.json"
FORMAT = "lodestar-knowledge/1"
EVIDENCE_KINDS = ("anomaly", "coincidence", "halo", "structure", "host_unit")
QUESTION_WORDS_NOT_KEYWORDS = ("as", "w")
"""Keywords that are common words in a question ("as good as", "W of the fault"), never read as element symbols."""
MEASURED_WORDS = {word for words in ALTERATION_WORDS.values() for word in words} | {"magnetite", "oxide"}
"""Words an alteration or geophysical layer is named for: in a layer's name they tell its role, not a deposit type."""
LOCALIZATION_KEYS = ("degree_centrality_weight", "betweenness_centrality_weight", "chain_presence_weight",
                     "area_type_weights", "important_areas_count", "hop2_expansion_height", "hop2_expansion_width")


REQUIRED = ("id", "name", "keywords", "evidence", "localization", "alteration_zoning", "spectral_signatures",
            "structural_controls", "favourable_units")
"""Keys every deposit model holds, the user's too (`favourability` is optional: without it every role weighs 1)."""
SHIPPED_REQUIRED = ("commodities", "pathfinders", "depleted", "source_rocks", "geophysics", "footprint", "footprints")
"""Keys every model of the knowledge base holds besides; a user's model may leave them out (read them with .get)."""
GEOPHYSICS = ("magnetics", "gravity", "radiometric_k", "radiometric_th", "radiometric_u", "conductivity",
              "chargeability")
"""The properties a model's geophysical signature names, each high or low over its deposits."""
GENERIC_ID = "generic"
"""The id of the generic mineral-system model (the knowledge base's 'generic'), followed when a question names what
no model shares."""


def check_model(model: dict, where: str, shipped: bool = True) -> None:
    """Hold a deposit model to the knowledge base's schema (see resources/knowledge/deposit_models.json 'about');
    raises LodestarError naming the model, the field and what to fix. A `shipped` model holds every field and a
    source for every number; a user's model (not `shipped`) holds REQUIRED, its other fields checked where given,
    and its numbers are the user's own."""
    name = f"{where}: deposit model {model.get('id', '?')!r}"
    for key in REQUIRED + (SHIPPED_REQUIRED if shipped else ()):
        if key not in model:
            raise LodestarError(f"{name} lacks {key!r}.")
    for key in ("keywords", "favourable_units", "source_rocks"):
        if key in model and not _words(model[key], empty=key != "keywords"):
            at_least = " (one at least)" if key == "keywords" else ""
            raise LodestarError(f"{name}: {key} must be a list of words{at_least}.")
    for key in ("commodities", "pathfinders", "depleted"):
        if key not in model:
            continue
        symbols = model[key]
        if not isinstance(symbols, list):
            raise LodestarError(f"{name}: {key} must be a list of element symbols.")
        unknown = [e for e in symbols if str(e).lower() not in ELEMENTS]
        if unknown:
            raise LodestarError(f"{name}: unknown {'pathfinder' if key == 'pathfinders' else key} elements {unknown}; "
                                f"known: {', '.join(sorted(ELEMENTS))}.")
    _check_geophysics(model.get("geophysics", []), name)
    footprints = model.get("footprints", {})
    if not isinstance(footprints, dict) or ("footprints" in model and set(footprints) != {"deposit", "camp"}):
        raise LodestarError(f"{name}: footprints must hold 'deposit' and 'camp', each {{km2, of, source}}.")
    for scale, entry in {**({"footprint": model["footprint"]} if "footprint" in model else {}), **footprints}.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("of"), str) or not _positive(entry.get("km2")):
            raise LodestarError(f"{name}: {scale} must be {{km2: a positive area, of: what it is, source}}.")
    ids = set()
    for item in model["evidence"]:
        if item.get("level") not in ("critical", "secondary"):
            raise LodestarError(f"{where}: {model['id']}/{item.get('id')}: level must be critical or secondary.")
        if item.get("kind") not in EVIDENCE_KINDS:
            raise LodestarError(f"{where}: {model['id']}/{item.get('id')}: kind must be one of {EVIDENCE_KINDS}.")
        unknown = [r for r in item.get("roles", []) if r not in ROLES]
        if unknown:
            raise LodestarError(f"{where}: {model['id']}/{item['id']}: unknown roles {unknown}.")
        for ref in ("with", "around", "near"):
            if ref in item and item[ref] not in ids:
                raise LodestarError(f"{where}: {model['id']}/{item['id']}: {ref} must name an earlier item.")
        for key in ("near_m", "shell_scale"):  # a reach in metres; a shell's reach in radii of the core
            value = item.get(key)
            if key in item and not _positive(value):
                raise LodestarError(f"{where}: {model['id']}/{item['id']}: {key} must be a positive number, "
                                    f"not {value!r}.")
        ids.add(item["id"])
    if not any(item["level"] == "critical" for item in model["evidence"]):
        raise LodestarError(f"{where}: deposit model {model['id']!r} has no critical evidence.")
    missing = [k for k in LOCALIZATION_KEYS if k not in model["localization"]]
    if missing:
        raise LodestarError(f"{where}: {model['id']}: localization lacks {missing}.")
    unsourced = unsourced_numbers(model) if shipped else []
    if unsourced:
        raise LodestarError(f"{name}: every number needs a source (a 'source' text in the object holding it or in "
                            f"one enclosing it); none for {', '.join(unsourced)}.")


def _words(value, empty: bool) -> bool:
    return isinstance(value, list) and (empty or bool(value)) and all(isinstance(w, str) and w.strip() for w in value)


def _positive(value) -> bool:
    return (not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
            and value > 0)


def _check_geophysics(signature, name: str) -> None:
    if not isinstance(signature, list):
        raise LodestarError(f"{name}: geophysics must be a list of {{property, sign, what, source}}.")
    for entry in signature:
        entry = entry if isinstance(entry, dict) else {}
        if entry.get("property") not in GEOPHYSICS or entry.get("sign") not in ("high", "low"):
            raise LodestarError(f"{name}: a geophysics entry needs a property of {', '.join(GEOPHYSICS)} and a sign "
                                f"high or low, not {entry.get('property')!r} {entry.get('sign')!r}.")
        if not (isinstance(entry.get("what"), str) and isinstance(entry.get("source"), str) and entry["source"]):
            raise LodestarError(f"{name}: geophysics {entry['property']} needs 'what' and 'source' texts.")


def unsourced_numbers(model: dict) -> list[str]:
    """Paths ("evidence[2].near_m") of the model's numbers that have no source: no non-empty 'source' text in the
    object holding them nor in an object enclosing them below the model itself. A number that is not finite is
    listed too."""
    out: list[str] = []

    def walk(value, path: str, sourced: bool) -> None:
        if isinstance(value, dict):
            here = sourced or (bool(path) and isinstance(value.get("source"), str) and bool(value["source"].strip()))
            for key, inner in value.items():
                walk(inner, f"{path}.{key}" if path else key, here)
        elif isinstance(value, list):
            for i, inner in enumerate(value):
                walk(inner, f"{path}[{i}]", sourced)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            if not sourced or not math.isfinite(value):
                out.append(path)

    walk(model, "", False)
    return out


def load_knowledge(path: Path | None = None) -> list[dict]:
    """The deposit models of a knowledge file (default: the bundled one), validated."""
    return [dict(m) for m in _load(str(path or KNOWLEDGE_PATH))[0]]


def generic_model(path: Path | None = None) -> dict:
    """The knowledge file's generic mineral-system model (its 'generic' entry), validated: followed when a question
    names a commodity or deposit type that no model shares."""
    return dict(_load(str(path or KNOWLEDGE_PATH))[1])


@lru_cache(maxsize=4)
def _load(path: str) -> tuple:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise LodestarError(f"Cannot read the knowledge base {path}: {exc}.") from exc
    if data.get("format") != FORMAT or not isinstance(data.get("models"), list) or not data["models"]:
        raise LodestarError(f"{path}: a knowledge base needs format {FORMAT!r} and a non-empty 'models' list.")
    generic = data.get("generic")
    if not isinstance(generic, dict) or generic.get("id") != GENERIC_ID:
        raise LodestarError(f"{path}: a knowledge base needs a 'generic' model with id {GENERIC_ID!r}.")
    for model in data["models"] + [generic]:
        check_model(model, path)
    return tuple(data["models"]), generic


def plain_words(text: str) -> str:
    """Lower-case letters and digits, every other run of characters one space, padded: phrases match as words."""
    return " " + re.sub(r"[^a-z0-9]+", " ", (text or "").lower()) + " "


def asked_keywords(model: dict, question: str) -> list[str]:
    """The model's keywords the question names ("as" and "w", common words in a question, are never arsenic or
    tungsten there)."""
    text = plain_words(question)
    return [k for k in model["keywords"] if k.lower() not in QUESTION_WORDS_NOT_KEYWORDS and plain_words(k) in text]


def _name_keywords(model: dict, layers) -> list[str]:
    """The model's keywords the layers' names name, each name on its own: a survey's element ("As ppm", "sb_rcl":
    symbols only on geochemistry layers) or a rock or deposit word ("greenstone"); never the words an alteration
    layer is named for ("sericite index", "ferric iron"), which tell its role, already counted as coverage."""
    found = []
    for name, role in layers:
        text = plain_words(name)
        for keyword in model["keywords"]:
            phrase = plain_words(keyword)
            if (keyword not in found and phrase in text and not set(phrase.split()) & MEASURED_WORDS
                    and (len(keyword) > 2 or role == "geochemistry")):
                found.append(keyword)
    return found


def _token(keyword: str) -> str:
    """A keyword as retrieval counts it: a commodity's name or symbol as the commodity ("copper", "cu": "=cu"), so
    a question naming a commodity finds every model of it alike; any other keyword as itself."""
    plain = plain_words(keyword).strip()
    symbol = commodities.NAMES.get(plain) or (plain if plain in ELEMENTS else None)
    return f"={symbol}" if symbol else plain


def _model_tokens(model: dict) -> set:
    """What a question may name of the model: its keywords and its commodities, as `_token`s."""
    return {_token(k) for k in model["keywords"]} | {f"={c.lower()}" for c in model.get("commodities", [])}


def _question_tokens(question: str, models: list[dict]) -> set:
    """The `_token`s the question names: the models' keywords it names and the commodities it names."""
    named = {_token(k) for model in models for k in asked_keywords(model, question)}
    return named | {f"={c}" for c in commodities.asked_commodities(question)}


def _keyword_score(tokens, document_frequency: dict, total: int) -> float:
    return sum(math.log(1 + total / document_frequency[t]) for t in tokens)


def _testable(model: dict, roles: set, units=()) -> list[dict]:
    """The model's evidence items a layer of `roles` can show: an item of one of its roles, and a host-rock item
    (host_unit on a geological map) only where the legends' unit names `units` name one of the model's host rocks
    (a map of other rocks cannot show it); `units` empty: the legends are not known, a map may show it."""
    hosts = bool(matched_units(dict(enumerate(units)), model.get("favourable_units", []))) if units else True
    return [item for item in model["evidence"] if roles.intersection(item["roles"])
            and (hosts or item["kind"] != "host_unit" or set(item["roles"]) != {"geological_map"})]


def _coverage(model: dict, roles: set, units=()) -> tuple[float, float]:
    """Shares of the model's critical and secondary evidence items testable with the roles present (`_testable`)."""
    testable = {item["id"] for item in _testable(model, roles, units)}
    shares = []
    for level in ("critical", "secondary"):
        items = [i for i in model["evidence"] if i["level"] == level]
        shares.append(len([i for i in items if i["id"] in testable]) / len(items) if items else 1.0)
    return shares[0], shares[1]


def _model_roles(model: dict, roles: set, layers: list) -> set:
    """The roles of the layers (name, role) that may be evidence for `model`: not geochemistry of elements that are
    none of its pathfinders (pathfinders.off_model_reason); `roles` when the layers' names are not known."""
    if not layers:
        return roles
    return {role for name, role in layers if not off_model_reason(name, role, model)}


def layer_elements(layers) -> set:
    """The element symbols the geochemistry layers' names (name, role) name."""
    return {e for name, role in layers if role == "geochemistry" for e in named_elements(name)}


def element_fit(model: dict, elements: set) -> float:
    """How much of what the geochemistry layers measure is the model's: over the layers' elements, a commodity of
    the model counts 1, a pathfinder or depleted element 0.5, any other 0 (0 when no element is named). A Cu, Pb,
    Zn, Ag, Ba survey is a base-metal survey: it fits a VMS model's commodities, not Carlin-type gold's."""
    if not elements:
        return 0.0
    mined = {c.lower() for c in model.get("commodities", [])}
    signs = {e.lower() for e in model.get("pathfinders", []) + model.get("depleted", [])}
    return sum(1.0 if e in mined else 0.5 if e in signs else 0.0 for e in elements) / len(elements)


def _score(tokens, frequency, total, coverage, elements) -> float:
    return 3 * _keyword_score(tokens, frequency, total) + 2 * coverage[0] + coverage[1] + 2 * elements


def retrieve(question: str, roles, models: list[dict] | None = None, top: int = 3, names=(), units=()) -> list[dict]:
    """Deposit models ranked by what the question names, the evidence the roles can test and what the layers
    measure; ties broken by the layers' names (`names`, one per role, in the same order), then the knowledge base's
    order.

    Score = sum over the question's keywords and commodities (a commodity's name or symbol counts as the commodity)
    of log(1 + N / models naming it) * 3 + 2 * critical coverage + secondary coverage (a host-rock item counts as
    testable only where the legends' unit names `units` name a host rock of the model, `_testable`) + 2 * element
    fit (of the geochemistry layers' elements, `element_fit`). A
    question naming only a commodity ("Is there gold here?") ties several models, and one naming no type ("Where
    should we explore?") all of them: what the geologist loaded then tells the deposit type (an As-Sb survey:
    Carlin-type; a Cu-Pb-Zn-Ag-Ba survey over rhyolite: VMS; a greenstone map: orogenic).
    Each returned model carries `score`, `testable` (its evidence ids testable with these roles) and `names` (the
    keywords the layers' names gave it). When the question names a commodity or deposit type the first model is
    not for (`nearest.stand_in`), it carries `stands_in`, saying which and why; when no model shares anything the
    question names, the generic mineral-system model comes first instead.
    """
    models = models if models is not None else load_knowledge()
    roles = list(roles)
    layers = list(zip(names, roles))
    roles = set(roles)
    frequency: dict = {}
    for model in models:
        for token in _model_tokens(model):
            frequency[token] = frequency.get(token, 0) + 1
    asked = _question_tokens(question, models)
    elements = layer_elements(layers)
    ranked = []
    for order, model in enumerate(models):
        usable = _model_roles(model, roles, layers)
        score = _score(asked & _model_tokens(model), frequency, len(models), _coverage(model, usable, units),
                       element_fit(model, elements))
        by_names = _name_keywords(model, layers)
        ranked.append((-round(score, 9), -round(_keyword_score({_token(k) for k in by_names}, frequency,
                                                                len(models)), 9), order, model, by_names, usable))
    ranked.sort(key=lambda r: r[:3])
    out = []
    for neg_score, _, _, model, by_names, usable in ranked[:max(1, top)]:
        entry = dict(model)
        entry["score"] = -neg_score
        entry["testable"] = [i["id"] for i in _testable(model, usable, units)]
        entry["names"] = by_names
        out.append(entry)
    return _stand_in(question, out, usable_roles=roles, layers=layers)


def _stand_in(question: str, ranked: list[dict], usable_roles: set, layers: list) -> list[dict]:
    """`ranked`, its first model marked `stands_in` when the question names a commodity or deposit type it is not
    for (none of its keywords or commodities): a sentence naming what is lacking and what it shares with the
    question; when it shares nothing, the generic mineral-system model comes first instead, saying why."""
    mined = commodities.asked_commodities(question)
    others = commodities.asked_others(question)
    if not ranked or not (mined or others):
        return ranked
    top = ranked[0]
    tokens = _model_tokens(top)
    lacking = [commodities.name_of(c) for c in mined if f"={c}" not in tokens]
    lacking += [o for o in others if not any(plain_words(o) in plain_words(k) for k in top["keywords"])]
    if not lacking:
        return ranked
    said = " and ".join(lacking)
    shared = [commodities.name_of(c) for c in mined if f"={c}" in tokens]
    shared += [k for k in asked_keywords(top, question) if _token(k) not in {f"={c}" for c in mined}]
    if shared:
        top["stands_in"] = (f"No model of the knowledge base is for {said}; the nearest is {top['name']} (shares "
                            f"{', '.join(dict.fromkeys(shared))} with the question), so its evidence items are used.")
        return ranked
    generic = generic_model()
    usable = _model_roles(generic, usable_roles, layers)
    generic.update(score=0.0, names=[], testable=[i["id"] for i in _testable(generic, usable)],
                   stands_in=(f"No model of the knowledge base is for {said}, and none shares a commodity or deposit "
                              f"type the question names; the generic mineral-system model is used: every layer is "
                              f"evidence with its sign from its role and name, and its critical items are any "
                              f"alteration, geochemical or geophysical anomaly and a structure near it."))
    return ([generic] + ranked)[:len(ranked)]


def model_by_id(model_id: str, models: list[dict] | None = None) -> dict:
    for model in models if models is not None else load_knowledge():
        if model["id"] == model_id:
            return dict(model)
    if model_id == GENERIC_ID and models is None:
        return generic_model()
    raise LodestarError(f"No deposit model {model_id!r} in the knowledge base.")


def score_parts(question: str, roles, models: list[dict] | None = None, names=(), units=()) -> dict:
    """Why `retrieve` scores each model as it does: {model id: {"keywords": the keywords and commodities of the
    question it is named by, "critical": share of critical evidence testable with `roles` (of the layers named
    `names`, the legends' unit names `units`, as in `retrieve`), "secondary": the same for secondary, "elements":
    its element fit}}."""
    models = models if models is not None else load_knowledge()
    roles = list(roles)
    layers = list(zip(names, roles))
    asked = commodities.asked_commodities(question)
    elements = layer_elements(layers)
    parts = {}
    for model in models:
        critical, secondary = _coverage(model, _model_roles(model, set(roles), layers), units)
        mined = [c for c in asked if c in {m.lower() for m in model.get("commodities", [])}]
        words = asked_keywords(model, question)
        named = words + [commodities.name_of(c) for c in mined
                         if f"={c}" not in {_token(w) for w in words}]
        parts[model["id"]] = {"keywords": named, "critical": critical, "secondary": secondary,
                              "elements": element_fit(model, elements)}
    return parts
