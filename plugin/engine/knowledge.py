"""The domain knowledge base K_domain: deposit models, validated, retrieved by question and roles."""
from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from pathlib import Path

from ..errors import LodestarError
from ..pathfinders import ELEMENTS, off_model_reason
from ..roles import ROLES
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


def _check_model(model: dict, where: str) -> None:
    for key in ("id", "name", "keywords", "evidence", "localization", "alteration_zoning", "spectral_signatures",
                "structural_controls", "favourable_units"):
        if key not in model:
            raise LodestarError(f"{where}: deposit model {model.get('id', '?')!r} lacks {key!r}.")
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
            if key in item and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
                raise LodestarError(f"{where}: {model['id']}/{item['id']}: {key} must be a positive number, "
                                    f"not {value!r}.")
        ids.add(item["id"])
    unknown = [e for e in model.get("pathfinders", []) if str(e).lower() not in ELEMENTS]
    if unknown:
        raise LodestarError(f"{where}: {model['id']}: unknown pathfinder elements {unknown}; known: "
                            f"{', '.join(sorted(ELEMENTS))}.")
    if not any(item["level"] == "critical" for item in model["evidence"]):
        raise LodestarError(f"{where}: deposit model {model['id']!r} has no critical evidence.")
    missing = [k for k in LOCALIZATION_KEYS if k not in model["localization"]]
    if missing:
        raise LodestarError(f"{where}: {model['id']}: localization lacks {missing}.")


def load_knowledge(path: Path | None = None) -> list[dict]:
    """The deposit models of a knowledge file (default: the bundled one), validated."""
    return [dict(m) for m in _load(str(path or KNOWLEDGE_PATH))]


@lru_cache(maxsize=4)
def _load(path: str) -> tuple:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise LodestarError(f"Cannot read the knowledge base {path}: {exc}.") from exc
    if data.get("format") != FORMAT or not isinstance(data.get("models"), list) or not data["models"]:
        raise LodestarError(f"{path}: a knowledge base needs format {FORMAT!r} and a non-empty 'models' list.")
    for model in data["models"]:
        _check_model(model, path)
    return tuple(data["models"])


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


def _keyword_score(keywords, document_frequency: dict, total: int) -> float:
    return sum(math.log(1 + total / document_frequency[k.lower()]) for k in keywords)


def _coverage(model: dict, roles: set) -> tuple[float, float]:
    """Shares of the model's critical and secondary evidence items testable with the roles present."""
    shares = []
    for level in ("critical", "secondary"):
        items = [i for i in model["evidence"] if i["level"] == level]
        testable = [i for i in items if roles.intersection(i["roles"])]
        shares.append(len(testable) / len(items) if items else 1.0)
    return shares[0], shares[1]


def _model_roles(model: dict, roles: set, layers: list) -> set:
    """The roles of the layers (name, role) that may be evidence for `model`: not geochemistry of elements that are
    none of its pathfinders (pathfinders.off_model_reason); `roles` when the layers' names are not known."""
    if not layers:
        return roles
    return {role for name, role in layers if not off_model_reason(name, role, model)}


def retrieve(question: str, roles, models: list[dict] | None = None, top: int = 3, names=()) -> list[dict]:
    """Deposit models ranked by the question's keywords and the evidence the roles can test; ties broken by the
    layers' names (`names`, one per role, in the same order), then the knowledge base's order.

    Score = sum over the question's keywords of log(1 + N / models using it) * 3 + 2 * critical coverage +
    secondary coverage. A question naming only a commodity ("Is there gold here?") ties several models; what
    the geologist loaded then tells the deposit type (an As-Sb survey: Carlin-type; a greenstone map: orogenic).
    Each returned model carries `score`, `testable` (its evidence ids testable with these roles) and `names` (the
    keywords the layers' names gave it).
    """
    models = models if models is not None else load_knowledge()
    roles = list(roles)
    layers = list(zip(names, roles))
    roles = set(roles)
    frequency: dict = {}
    for model in models:
        for keyword in {k.lower() for k in model["keywords"]}:
            frequency[keyword] = frequency.get(keyword, 0) + 1
    ranked = []
    for order, model in enumerate(models):
        usable = _model_roles(model, roles, layers)
        critical, secondary = _coverage(model, usable)
        score = 3 * _keyword_score(asked_keywords(model, question), frequency, len(models)) + 2 * critical + secondary
        by_names = _name_keywords(model, layers)
        ranked.append((-round(score, 9), -round(_keyword_score(by_names, frequency, len(models)), 9), order, model,
                       by_names, usable))
    ranked.sort(key=lambda r: r[:3])
    out = []
    for neg_score, _, _, model, by_names, usable in ranked[:max(1, top)]:
        entry = dict(model)
        entry["score"] = -neg_score
        entry["testable"] = [i["id"] for i in model["evidence"] if usable.intersection(i["roles"])]
        entry["names"] = by_names
        out.append(entry)
    return out


def model_by_id(model_id: str, models: list[dict] | None = None) -> dict:
    for model in models if models is not None else load_knowledge():
        if model["id"] == model_id:
            return dict(model)
    raise LodestarError(f"No deposit model {model_id!r} in the knowledge base.")


def score_parts(question: str, roles, models: list[dict] | None = None, names=()) -> dict:
    """Why `retrieve` scores each model as it does: {model id: {"keywords": matched keywords of the question,
    "critical": share of critical evidence testable with `roles` (of the layers named `names`, as in `retrieve`),
    "secondary": the same for secondary}}."""
    models = models if models is not None else load_knowledge()
    roles = list(roles)
    layers = list(zip(names, roles))
    parts = {}
    for model in models:
        critical, secondary = _coverage(model, _model_roles(model, set(roles), layers))
        parts[model["id"]] = {"keywords": asked_keywords(model, question), "critical": critical,
                              "secondary": secondary}
    return parts
