"""The report's target cards: each of the best targets with the executor's picture of its evidence layers, what the
verifier found for each item of the deposit model there, and its verdict."""
from __future__ import annotations

from pathlib import Path

from ..labels import plural, the
from .report_text import e, image, km2, number, table, words

_STATUS_CSS = {"supported": "ok", "absent": "bad", "untestable": "muted"}


def target_cards(record: dict, evidence_dir) -> str:
    """One card per judged target, best first (empty when none was judged)."""
    section = record.get("favourability") or {}
    judged = sorted(section.get("judgements") or [], key=lambda j: j.get("rank", 0))
    if not judged:
        return ""
    rows = {t.get("rank"): t for t in section.get("targets") or []}
    cards = [f"<p>{the(len(judged), 'best target').capitalize()}, each judged by the verifier on the evidence in and "
             "around it: "
             "every item of the deposit model is supported (a layer of its kind stands out here against the "
             "district), absent, or untestable (no layer can test it here). The pictures show each evidence layer "
             "around the target (outlined), stretched within the view.</p>"]
    for judgement in judged:
        target = rows.get(judgement.get("rank"), {})
        cards.append(_card(judgement, target, Path(evidence_dir)))
    return "".join(cards)


def _card(judgement: dict, target: dict, folder: Path) -> str:
    rank = judgement.get("rank")
    facts = [km2(float(target.get("area_km2") or 0.0) * 1e6), f"top {number(target.get('tier'), 3)} % of the surface"]
    if target.get("lat") is not None and target.get("lon") is not None:
        facts.append(f"centre {target['lat']:.4f}, {target['lon']:.4f} (lat, lon)")
    if target.get("known_deps") is not None:
        facts.append(f"{plural(target['known_deps'], 'known deposit')} inside")
    if target.get("exp_deps") is not None:
        facts.append(f"{number(target['exp_deps'], 2)} expected (what cells of its rank held out of fold)")
    items = judgement.get("items") or []
    table_rows = [[words(i.get("id", "")), i.get("level", ""), i.get("status", ""), i.get("evidence", "")]
                  for i in items]
    picture = image(folder / judgement["view"], f"evidence around target {rank}", css="figure") \
        if judgement.get("view") else ""
    return (f'<div class="target-card"><h4>Target {e(rank)}: {e(judgement.get("verdict", ""))}</h4>'
            f"<p>{e('; '.join(facts))}.</p>{picture}"
            + table(table_rows, ["evidence item", "level", "here", "measured"],
                    row_css=[_STATUS_CSS.get(i.get("status"), "") for i in items])
            + f'<p class="muted">{e(judgement.get("why", ""))}</p></div>')
