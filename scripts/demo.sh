#!/usr/bin/env bash
# `make demo`: run lodestar:analyze headless on the bundled sample case with the offline back-end and
# leave every output (prospectivity shapefile, zones and graph layers, favourability surface, weights
# table, HTML report, run record) in build/demo/, or in the folder named by DEMO_OUT.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
case_json="$(ls resources/sample/*/case.json | head -n 1)"
out="${DEMO_OUT:-build/demo}"
mkdir -p "$out"
scripts/qgis_process.sh run lodestar:analyze -- \
  CASE="$case_json" BACKEND=0 MAX_ROUNDS=3 \
  OUTPUT_ZONES="$out/zones.gpkg" OUTPUT_NODES="$out/nodes.gpkg" OUTPUT_EDGES="$out/edges.gpkg" \
  OUTPUT_PROSPECTIVITY="$out/prospectivity.shp" OUTPUT_FAVOURABILITY="$out/favourability.tif" \
  OUTPUT_WEIGHTS="$out/weights.csv" OUTPUT_REPORT="$out/report.html" OUTPUT_RECORD="$out/record.json"
for f in prospectivity.shp favourability.tif weights.csv report.html record.json; do
  [ -s "$out/$f" ] || { echo "demo: $out/$f was not written" >&2; exit 1; }
done
echo
echo "Lodestar demo on $case_json:"
echo "  prospectivity polygons: $out/prospectivity.shp"
echo "  favourability surface:  $out/favourability.tif (evidence weights: $out/weights.csv)"
echo "  candidate zones:        $out/zones.gpkg (graph: $out/nodes.gpkg, $out/edges.gpkg)"
echo "  report:                 $out/report.html"
echo "  run record:             $out/record.json (replay: REPLAY=$out/record.json)"
