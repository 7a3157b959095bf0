"""Run records: everything one analysis did, as JSON: writing, reading, and the inputs of a replay.

A record holds the inputs (paths, sha256 checksums, CRS, roles), the parameters, the back-ends' public
settings (never an API key), prompt hashes, the plan, every model decision in call order (`trace`),
every event (controller verdicts, observations, verdicts per round, votes), usage and timings, and
the checksums of the output files.

Replay feeds the recorded decisions back through the same loop (the replay back-end,
`models/replay.py`): tools, controller, graph and localization run again, deterministic, so the output
files come out byte for byte the same.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from ..errors import LodestarError
from ..files import write_text_atomic
from ..masking import mask_secrets
from ..raster_io import LayerSpec

FORMAT = "lodestar-run/1"
_SECRET_KEYS = re.compile(r"(api[_-]?key|authorization|password|secret|token(?!s))", re.IGNORECASE)


def sha256_file(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def input_entries(raster_set, layer_infos) -> list[dict]:
    """One entry per input: name, path, role, favourable, legend, kind, CRS, size, sha256."""
    infos = {info.name: info for info in layer_infos}
    entries = []
    for spec in raster_set.layers:
        info = infos[spec.name]
        files = [spec.path]
        if spec.path.suffix.lower() == ".shp":
            files += [spec.path.with_suffix(s) for s in (".dbf", ".shx", ".prj") if spec.path.with_suffix(s).exists()]
        entries.append({
            "name": spec.name,
            "path": str(spec.path.resolve()),
            "role": spec.role,
            "favourable": spec.favourable,
            "legend": str(spec.legend.resolve()) if spec.legend else None,
            "legend_sha256": sha256_file(spec.legend) if spec.legend else None,
            "kind": info.kind,
            "crs": info.crs,
            "size": info.size,
            "sha256": sha256_file(spec.path),
            "sidecars": {p.name: sha256_file(p) for p in files[1:]},
        })
    return entries


def scrub(value, secrets: tuple = ()):
    """A copy of a JSON value with secret-looking keys removed and any known secret string masked."""
    if isinstance(value, dict):
        return {k: scrub(v, secrets) for k, v in value.items() if not _SECRET_KEYS.search(str(k))}
    if isinstance(value, list):
        return [scrub(v, secrets) for v in value]
    if isinstance(value, str):
        return mask_secrets(value, secrets)
    return value


def write_record(record: dict, path, secrets: tuple = ()) -> Path:
    """Write a record as indented JSON (atomically), secrets scrubbed."""
    text = json.dumps(scrub(record, secrets), indent=1, ensure_ascii=False, sort_keys=False, default=str)
    return write_text_atomic(path, text + "\n")


def read_record(path) -> dict:
    path = Path(path)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise LodestarError(f"Cannot read the run record {path}: {exc}.") from exc
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise LodestarError(f"{path} is not a Lodestar run record (format {FORMAT!r}).")
    return record


def _check_beside(entry: dict, path: Path, legend: Path | None) -> None:
    """A layer's legend and sidecar files must be as recorded too (a changed legend renames units)."""
    recorded = dict(entry.get("sidecars") or {})
    if legend is not None and entry.get("legend_sha256"):
        recorded[str(legend)] = entry["legend_sha256"]
    for name, digest in recorded.items():
        file = Path(name) if Path(name).is_absolute() else path.with_name(name)
        if not file.exists() or sha256_file(file) != digest:
            raise LodestarError(f"{file.name}, beside input {entry['name']}, is missing or changed since the run was "
                                "recorded; replay needs the same files.")


def compare_outputs(recorded: dict, written: dict) -> dict:
    """Which outputs of a replay have the recorded sha256 ('same') and which not ('different'); outputs only one
    side has are listed apart (e.g. a map the recorded run could not draw)."""
    both = [name for name in recorded if name in written]
    return {"same": [n for n in both if recorded[n]["sha256"] == written[n]["sha256"]],
            "different": [n for n in both if recorded[n]["sha256"] != written[n]["sha256"]],
            "only_recorded": [n for n in recorded if n not in written],
            "only_replayed": [n for n in written if n not in recorded]}


def replay_note(check: dict) -> str:
    return ("Replay check: " + ", ".join(check["different"]) + " differ from the recorded run's files (sha256); "
            "the replay did not reproduce them byte for byte.")


def layers_from_record(record: dict, check: bool = True) -> list[LayerSpec]:
    """The record's inputs as LayerSpecs; with `check`, each file must still have its recorded checksum."""
    layers = []
    for entry in record["inputs"]:
        path = Path(entry["path"])
        if not path.exists():
            raise LodestarError(f"Replay needs the input {entry['name']} at {path}, which no longer exists.")
        if check and sha256_file(path) != entry["sha256"]:
            raise LodestarError(f"Input {entry['name']} ({path}) changed since the run was recorded; "
                                "replay needs the same files.")
        legend = Path(entry["legend"]) if entry.get("legend") else None
        if check:
            _check_beside(entry, path, legend)
        layers.append(LayerSpec(path, entry["role"], entry["name"], entry.get("favourable", "high"), legend))
    return layers
