"""The domain knowledge base K_domain: deposit models, validated, retrieved by question and roles."""
from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from pathlib import Path

from ..errors import LodestarError
from ..roles import ROLES

KNOWLEDGE_PATH = Path(__file__).resolve().parents[2] / "resources" / "knowledge" / "deposit_models.json"
FORMAT = "lodestar-knowledge/1"
EVIDENCE_KINDS = ("anomaly", "coincidence", "halo", "structure", "host_unit")
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
        ids.add(item["id"])
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


def _words(text: str) -> str:
    return " " + re.sub(r"[^a-z0-9]+", " ", (text or "").lower()) + " "


QUESTION_WORDS_NOT_KEYWORDS = ("as",)
"""Keywords that are common words in a question ("as good as"): matched in layer names only ("As ppm", "as_rcl")."""


def _matched(model: dict, text: str, skip=()) -> list[str]:
    return [k for k in model["keywords"] if k.lower() not in skip and _words(k) in text]


def _keyword_score(keywords, document_frequency: dict, total: int) -> float:
    return sum(math.log(1 + total / document_frequency[k.lower()]) for k in keywords)


def _named(model: dict, question_text: str, names_text: str) -> tuple[list, list]:
    """(keywords the question names, other keywords the layers' names name)."""
    asked = _matched(model, question_text, QUESTION_WORDS_NOT_KEYWORDS)
    return asked, [k for k in _matched(model, names_text) if k not in asked]


def _coverage(model: dict, roles: set) -> tuple[float, float]:
    """Shares of the model's critical and secondary evidence items testable with the roles present."""
    shares = []
    for level in ("critical", "secondary"):
        items = [i for i in model["evidence"] if i["level"] == level]
        testable = [i for i in items if roles.intersection(i["roles"])]
        shares.append(len(testable) / len(items) if items else 1.0)
    return shares[0], shares[1]


def retrieve(question: str, roles, models: list[dict] | None = None, top: int = 3, names=()) -> list[dict]:
    """Deposit models ranked by the question's keywords, the layers' names and the evidence the roles can test.

    Score = 3 x the question's keywords + the keywords the layer `names` add (an "As ppm" or "sb_rcl" survey, a
    "greenstone" map: what a geologist loads tells the deposit type when the question names only a commodity),
    each weighted by rarity, log(1 + N / models using it), + 2 x critical coverage + secondary coverage; ties keep
    the knowledge base's order. Each returned model carries `score` and `testable` (its evidence ids testable with
    these roles).
    """
    models = models if models is not None else load_knowledge()
    roles = set(roles)
    question_text, names_text = _words(question), _words(" ".join(str(n) for n in names))
    frequency: dict = {}
    for model in models:
        for keyword in {k.lower() for k in model["keywords"]}:
            frequency[keyword] = frequency.get(keyword, 0) + 1
    ranked = []
    for order, model in enumerate(models):
        critical, secondary = _coverage(model, roles)
        asked, by_names = _named(model, question_text, names_text)
        score = (3 * _keyword_score(asked, frequency, len(models)) + _keyword_score(by_names, frequency, len(models))
                 + 2 * critical + secondary)
        ranked.append((-round(score, 9), order, model))
    ranked.sort(key=lambda r: (r[0], r[1]))
    out = []
    for neg_score, _, model in ranked[:max(1, top)]:
        entry = dict(model)
        entry["score"] = -neg_score
        entry["testable"] = [i["id"] for i in model["evidence"] if roles.intersection(i["roles"])]
        out.append(entry)
    return out


def model_by_id(model_id: str, models: list[dict] | None = None) -> dict:
    for model in models if models is not None else load_knowledge():
        if model["id"] == model_id:
            return dict(model)
    raise LodestarError(f"No deposit model {model_id!r} in the knowledge base.")


def score_parts(question: str, roles, models: list[dict] | None = None, names=()) -> dict:
    """Why `retrieve` ranks each model as it does: {model id: {"keywords": matched keywords of the question,
    "names": further keywords the layers' names match, "critical": share of critical evidence testable with
    `roles`, "secondary": the same for secondary}}."""
    models = models if models is not None else load_knowledge()
    question_text, names_text = _words(question), _words(" ".join(str(n) for n in names))
    roles = set(roles)
    parts = {}
    for model in models:
        critical, secondary = _coverage(model, roles)
        asked, by_names = _named(model, question_text, names_text)
        parts[model["id"]] = {"keywords": asked, "names": by_names, "critical": critical, "secondary": secondary}
    return parts
