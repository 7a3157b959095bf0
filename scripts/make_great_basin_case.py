"""Build the real Great Basin gold case folder tests/data/great-basin-gold/ from the shared data.

Source: Raines, Sawatzky & Connors (1996), Great Basin geoscience data base, USGS Digital Data
Series DDS-41 (US public domain), as kept in the ArcSDM demonstration data. The case asks where
Carlin-type gold deposits are likely; it has no yes/no answer, only the 32 known deposits for
localization figures. Run: `python scripts/make_great_basin_case.py [SOURCE_FOLDER [OUT_FOLDER]]`.
"""
from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT.parent / "shared" / "realdata" / "great-basin-gold"
OUT = ROOT / "tests" / "data" / "great-basin-gold"
QUESTION = "Where are Carlin-type gold deposits likely?"

# (file, role, name, favourable) of the evidence layers, in the order the case lists them.
LAYERS = (
    ("geologia.tif", "geological_map", "geology (DDS-41 lithotectonic units)", "high"),
    ("as_rcl.tif", "geochemistry", "stream-sediment arsenic (classes)", "high"),
    ("sb_rcl.tif", "geochemistry", "stream-sediment antimony (classes)", "high"),
    ("falha_rcl.tif", "structure", "distance to faults (classes)", "low"),
    ("gbfaults3.gpkg", "structure", "mapped faults", "high"),
)
DEPOSITS = "TrainGP.gpkg"
HOST_UNITS = ["LPZE", "UPZC", "LPZ"]
"""The carbonate host units, named as a user would: the legend holds bare DDS-41 codes, which no rock word matches."""
NOTE = """# Great Basin gold: a real Lodestar case

North-central Nevada (Carlin trend area), about 118.96-115.94 W, 38.50-41.04 N: where are Carlin-type
(sediment-hosted) gold deposits likely? There is no yes/no answer; the 32 known deposits in
`TrainGP.gpkg` are the ground truth for localization (deposits inside the prospectivity polygons
against the share of the study area those polygons cover, and the success-rate AUC).

| file | role | what |
|---|---|---|
| `geologia.tif` + `geologia_legend.csv` | geological_map | categorical geology, 250 m; names: DDS-41 unit codes |
| `as_rcl.tif` | geochemistry | stream-sediment As, reclassified into ordered classes (higher = more), 500 m grid |
| `sb_rcl.tif` | geochemistry | stream-sediment Sb classes, 250 m grid |
| `falha_rcl.tif` | structure | distance-to-fault classes (lower = closer: favourable low) |
| `gbfaults3.gpkg` | structure | 1,674 mapped faults (lines) |
| `TrainGP.gpkg` | deposits | 32 Carlin-type gold deposits (USGS MRDS records with their attributes) |

All layers are in a Lambert conformal conic projection on the Clarke 1866 ellipsoid with no EPSG
code. The study-area mask (`stdyarea250.tif` in the source) is the same set of cells as the
geology's valid cells, so the geology defines the study area here.

Source: G.L. Raines, D.L. Sawatzky and K.A. Connors (1996), *Great Basin geoscience data base*,
U.S. Geological Survey Digital Data Series DDS-41 (public domain), as distributed with the ArcSDM
demonstration data (github.com/gtkfi/ArcSDM, commit 620b48117044fe4d23b1b79ac7ca02e0e3a28f4e,
folder `Demodata/`; ArcInfo grids converted losslessly to GeoTIFF, shapefiles to GeoPackage).
The legend holds only DDS-41 codes, so the case names the favourable host units the way a user
would (`favourable_units` on the geology layer): the carbonate units LPZE, UPZC and LPZ. Figures
reported on this case depend on that choice, and Lodestar's knowledge-driven weights were tuned on it.

Rebuild with `python scripts/make_great_basin_case.py` (`--check` compares a rebuild with these files).
"""


def read_legend(path: Path) -> list[tuple[int, str, int]]:
    """(value, unit code, cell count) rows of the source legend (columns VALUE, COUNT, CODE)."""
    with open(path, newline="", encoding="utf-8") as fh:
        return [(int(r["VALUE"]), r["CODE"].strip(), int(r["COUNT"])) for r in csv.DictReader(fh)]


def build(source=SOURCE, out=OUT) -> Path:
    """Copy the evidence layers and deposits into `out`, write the legend, case.json and README."""
    source, out = Path(source), Path(out)
    needed = [name for name, *_ in LAYERS] + [DEPOSITS, "geologia_legend.csv"]
    missing = [name for name in needed if not (source / name).exists()]
    if missing:
        raise SystemExit(f"{source} lacks {', '.join(missing)}: point the script at the great-basin-gold folder.")
    out.mkdir(parents=True, exist_ok=True)
    for name in [name for name, *_ in LAYERS] + [DEPOSITS]:
        shutil.copyfile(source / name, out / name)
    with open(out / "geologia_legend.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["value", "name", "cells"])
        writer.writerows(read_legend(source / "geologia_legend.csv"))
    layers = []
    for name, role, label, favourable in LAYERS:
        entry = {"path": name, "role": role, "name": label}
        if favourable != "high":
            entry["favourable"] = favourable
        if name == "geologia.tif":
            entry["legend"] = "geologia_legend.csv"
            entry["favourable_units"] = list(HOST_UNITS)
        layers.append(entry)
    case = {"format": "lodestar-case/1", "id": "great-basin-gold", "question": QUESTION, "answer": None,
            "layers": layers, "deposits": DEPOSITS}
    (out / "case.json").write_text(json.dumps(case, indent=2) + "\n", encoding="utf-8")
    (out / "README.md").write_text(NOTE, encoding="utf-8")
    return out / "case.json"


def check(source=SOURCE) -> list[str]:
    """Names of the shipped case files that a rebuild from `source` does not reproduce byte for byte."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        build(source, Path(folder))
        return [p.name for p in sorted(Path(folder).iterdir()) if p.read_bytes() != (OUT / p.name).read_bytes()]


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--check"]:
        differ = check(*(Path(a) for a in args[1:2]))
        print("tests/data/great-basin-gold is rebuilt identically" if not differ else f"differ: {', '.join(differ)}")
        sys.exit(1 if differ else 0)
    print(build(*(Path(a) for a in args[:2])))
