"""Knowledge-driven surfaces beside the independent equal-weight mean of the layers' ranks, on the same cells: what
the planner's domain knowledge adds for a geologist with no deposits (issue 57).

Rows, each district or world scored against its known deposits (success-rate AUC, ties counted half; deposits in
the best 10 % of the area):
- Lodestar knowledge-driven: the surface a run makes offline (the deposit model the run would follow for the case's
  question and layers, `knowledge_specs`, combined by the weighted mean of ranks); no deposit data;
- Baseline: the independent equal-weight mean of the layers' ranks (`baseline.independent_rank_mean`: every layer,
  sides from the layer settings and the model, host units from the model's rock words or the case's named units;
  never the plan's memberships); no deposit data;
- Short script, out of fold: the plain scikit-learn logistic regression of `short_scripts.py` on the layers'
  measured values, fitted on four fifths of the spatial blocks and scored on the fifth (calibrate's blocks, 5
  folds, seed 0): what the deposits themselves give, for scale.

Districts: Great Basin (tests/data; Carlin-type gold; the knowledge-driven mode's weights were once tuned on it, and
its principles were checked on it), Murchison (tests/data; orogenic gold) and Cloncurry (../shared/realdata when
present; IOCG): the principles were not fitted to these two, but they are named in the issue's checks, so they are
no longer unseen. Worlds: scripts/deposit_worlds.py, one per deposit model of the knowledge base and seed
(WORLD_SEEDS); their deposits follow the type's textbook signature, which the knowledge base also states, so they
show that each model's knowledge is read the right way up, not skill on unseen ground. Writes
build/bench/knowledge.md. Run: `.venv/bin/python tests/benchmarks/run_all.py knowledge`.
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from lodestar.plugin.evaluation import cells_of, deposit_coordinates, evaluate_surface
from lodestar.plugin.favourability.baseline import independent_rank_mean
from lodestar.plugin.favourability.blocks import spatial_folds
from lodestar.plugin.favourability.knowledge import knowledge_specs
from lodestar.plugin.favourability.measured import measured_evidence
from lodestar.plugin.favourability.overlay import favourability_surface
from lodestar.plugin.files import write_text_atomic
from lodestar.plugin.map.prospectivity import KNOWLEDGE_METHOD
from lodestar.plugin.raster_io import RasterSet
from lodestar.plugin.reason.deposit_models import ranked_models
from lodestar.plugin.reason.knowledge import load_knowledge
from lodestar.plugin.reason.workspace import describe_layers
from lodestar.plugin.request.case import read_case

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
import short_scripts  # noqa: E402  (the short scripts every surface is scored beside)
from readme_figures import write_figures  # noqa: E402  (tests/: on the path through run_all)

ROOT = HERE.parents[1]
OUT = ROOT / "build" / "bench" / "knowledge.md"
DISTRICTS = (("Great Basin, Nevada: Carlin-type gold", ROOT / "tests" / "data" / "great-basin-gold"),
             ("Murchison, Western Australia: orogenic gold", ROOT / "tests" / "data" / "murchison-gold"),
             ("Cloncurry, Queensland: IOCG", ROOT.parent / "shared" / "realdata" / "cloncurry-iocg"))
WORLD_SEEDS = (57, 58, 59)


def score_case(folder: Path) -> dict:
    """The three rows of one case folder, the deposit model followed and the layers each surface used."""
    case = read_case(folder)
    start = time.perf_counter()
    raster_set = RasterSet(case.layers)
    infos = describe_layers(raster_set)
    model = ranked_models(case.question, [i.role for i in infos], [i.name for i in infos],
                          units=[name for i in infos for name in (i.units or {}).values()])[0]
    specs, left_out = knowledge_specs(infos, model, dict(case.favourable_units))
    surface = favourability_surface(raster_set, specs, method=KNOWLEDGE_METHOD)
    baseline = independent_rank_mean(raster_set, infos, model, dict(case.favourable_units))
    xy = [tuple(p) for p in deposit_coordinates(case.deposits, raster_set.crs, [])]
    knowledge = evaluate_surface(surface.values, raster_set.grid, xy)
    plain = evaluate_surface(baseline.values, raster_set.grid, xy)
    layers, _ = measured_evidence(raster_set, infos)
    valid = np.logical_or.reduce([~np.ma.getmaskarray(layer.values) for layer in layers])
    rows, cols, inside = cells_of(xy, raster_set.grid, valid)
    counts = np.zeros(valid.shape)
    np.add.at(counts, (rows[inside], cols[inside]), 1)
    folds = spatial_folds(raster_set.grid, valid, counts)
    script = evaluate_surface(short_scripts.out_of_fold("logistic", layers, valid, counts, folds.fold),
                              raster_set.grid, xy)
    return {"model": model["id"], "asked": case.question, "knowledge": knowledge, "baseline": plain,
            "script": script, "specs": [s.layer for s in specs], "left_out": [row["layer"] for row in left_out],
            "baseline_layers": [row["layer"] for row in baseline.used], "seconds": time.perf_counter() - start}


def worlds(folder: Path) -> list[tuple[str, Path, str]]:
    """(label, case folder, the model it was made for) of every world of the knowledge base's models."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import deposit_worlds

    made = []
    for model in load_knowledge():
        for seed in WORLD_SEEDS:
            path = deposit_worlds.make_world(folder / f"{model['id']}-{seed}", model, seed=seed)
            made.append((f"{model['name']} (seed {seed})", Path(path), model["id"]))
    return made


def _cells(metrics: dict) -> str:
    return f"{metrics['auc']:.3f} | {metrics['capture'][0.1]:.1f}"


def report(real: list, generated: list) -> str:
    lines = ["# Knowledge-driven surfaces beside the independent equal-weight mean of ranks", "",
             "Success-rate AUC and deposits in the best 10 % of the area, every surface on the same cells. "
             "Knowledge-driven and baseline use no deposit data; the short script is a logistic regression fitted "
             "on the deposits of four fifths of the spatial blocks and scored on the fifth (what the deposits "
             "themselves give, for scale). Written by tests/benchmarks/bench_knowledge.py.", "",
             "## Real districts", "",
             "| district (deposits) | model followed | knowledge-driven AUC | at 10 % | baseline AUC | at 10 % | "
             "short script AUC | at 10 % |", "|---|---|---|---|---|---|---|---|"]
    for title, row in real:
        lines.append(f"| {title} ({row['knowledge']['inside']}) | {row['model']} | {_cells(row['knowledge'])} | "
                     f"{_cells(row['baseline'])} | {_cells(row['script'])} |")
    lines += [""] + [f"- {title}: knowledge-driven layers {', '.join(row['specs'])}; left out "
                     f"{', '.join(row['left_out']) or 'none'}; baseline layers {', '.join(row['baseline_layers'])}"
                     for title, row in real]
    if generated:
        ahead = sum(row["knowledge"]["auc"] >= row["baseline"]["auc"] for _, row, _ in generated)
        right = sum(row["model"] == wanted for _, row, wanted in generated)
        lines += ["", "## Generated worlds (scripts/deposit_worlds.py: the type's own signature, see above)", "",
                  f"Knowledge-driven at least the baseline on {ahead} of {len(generated)} worlds; answered with the "
                  f"model they were made for on {right}; mean AUC knowledge-driven "
                  f"{np.mean([r['knowledge']['auc'] for _, r, _ in generated]):.3f}, baseline "
                  f"{np.mean([r['baseline']['auc'] for _, r, _ in generated]):.3f}, short script "
                  f"{np.mean([r['script']['auc'] for _, r, _ in generated]):.3f}.", "",
                  "| world | model followed | knowledge-driven AUC | at 10 % | baseline AUC | at 10 % | short script "
                  "AUC | at 10 % |", "|---|---|---|---|---|---|---|---|"]
        lines += [f"| {title} | {row['model']}{'' if row['model'] == wanted else ' (made for ' + wanted + ')'} | "
                  f"{_cells(row['knowledge'])} | {_cells(row['baseline'])} | {_cells(row['script'])} |"
                  for title, row, wanted in generated]
    return "\n".join(lines) + "\n"


def _figures(row: dict) -> dict:
    """A case's row as figures (the surfaces' AUC and capture, not their curves)."""
    return {key: ({k: v for k, v in value.items() if k not in ("curve", "deposit_ranks")}
                  if isinstance(value, dict) else value) for key, value in row.items()}


def quoted(real: list, generated: list) -> dict:
    """The figures the README quotes: each district's AUCs ('knowledge.murchison.baseline'; the district by its
    folder's first word), and the worlds' means and counts."""
    figures = {}
    for folder, (_, row) in zip((folder for _, folder in DISTRICTS if (folder / "case.json").is_file()), real):
        name = folder.name.rsplit("-", 1)[0]
        figures.update({f"knowledge.{name}.{key}": row[surface]["auc"]
                        for key, surface in (("kd", "knowledge"), ("baseline", "baseline"), ("script", "script"))})
    if generated:
        rows = [row for _, row, _ in generated]
        figures.update({f"knowledge.worlds.{key}": float(np.mean([r[surface]["auc"] for r in rows]))
                        for key, surface in (("kd", "knowledge"), ("baseline", "baseline"), ("script", "script"))})
        figures["knowledge.worlds.count"] = len(rows)
        figures["knowledge.worlds.at_least"] = sum(r["knowledge"]["auc"] >= r["baseline"]["auc"] for r in rows)
    return figures


def main() -> None:
    real = []
    for title, folder in DISTRICTS:
        if not (folder / "case.json").is_file():
            print(f"{title}: {folder} not found, left out", flush=True)
            continue
        row = score_case(folder)
        real.append((title, row))
        print(f"{title}: knowledge-driven {row['knowledge']['auc']:.3f}, baseline {row['baseline']['auc']:.3f}, "
              f"script {row['script']['auc']:.3f} ({row['seconds']:.1f} s)", flush=True)
    generated = []
    with tempfile.TemporaryDirectory() as tmp:
        for title, folder, wanted in worlds(Path(tmp)):
            row = score_case(folder)
            generated.append((title, row, wanted))
            print(f"{title}: {row['model']}, knowledge-driven {row['knowledge']['auc']:.3f}, baseline "
                  f"{row['baseline']['auc']:.3f}", flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(OUT, report(real, generated))
    written = write_figures("knowledge", {"districts": {title: _figures(row) for title, row in real},
                                          "worlds": {title: dict(_figures(row), made_for=wanted)
                                                     for title, row, wanted in generated}},
                            quoted(real, generated))
    print(f"Wrote {OUT} and {written}")


if __name__ == "__main__":
    main()
