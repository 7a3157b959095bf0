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

import json
import math
import re
from dataclasses import replace
from pathlib import Path

from ..analysis import AnalysisRequest
from ..confinement import check_path_text, referenced_files
from ..errors import LodestarError
from ..files import sha256_file, write_text_atomic
from ..json_file import read_json, shown
from ..masking import mask_secrets
from ..raster_io import VECTOR_SUFFIXES, LayerSpec
from ..vector_io import split_source

FORMAT = "lodestar-run/1"
MAX_RECORD_BYTES = 64 * 2 ** 20
"""The largest run record read: a record holds every model decision and event of its run, a few hundred KB for the
sample case and a few MB for the longest runs."""
REPLAYED = (
    ("created_utc", "text", "the time the run was recorded"),
    ("case_id", "text?", "the case's id"),
    ("question", "text", "the question asked"),
    ("choices", "table", "the answer choices, letter: text"),
    ("parameters", "table", "the run's parameters"),
    ("parameters.max_rounds", "whole", "the verifier's rounds"),
    ("parameters.controller", "table null?", "the controller's limits"),
    ("parameters.localization", "table null?", "the localization overrides"),
    ("parameters.deposits", "text null?", "the known deposits file"),
    ("parameters.sam", "table null?", "the Segment Anything settings"),
    ("parameters.sam.checkpoint", "text", "the Segment Anything checkpoint"),
    ("parameters.sam.device", "text null?", "the Segment Anything device"),
    ("parameters.favourability", "table", "the favourability settings"),
    ("parameters.favourability.favourable_units", "table", "the favourable units of each layer"),
    ("parameters.favourability.calibrate", "text", "the calibration method"),
    ("parameters.favourability.cross_validation", "table?", "the cross-validation settings"),
    ("parameters.favourability.area_share", "number", "the target area share"),
    ("parameters.favourability.max_target_km2", "number null?", "the largest target in km2"),
    ("parameters.favourability.min_target_km2", "number null?", "the smallest target in km2"),
    ("parameters.favourability.max_targets", "whole null?", "the targets drawn"),
    ("parameters.favourability.evidence_plan", "table?", "the geologist's evidence plan"),
    ("backend", "table", "the back-end's settings"),
    ("prompt_hashes", "table", "the prompts' hashes"),
    ("knowledge", "list", "the deposit models followed"),
    ("trace", "list", "the model decisions"),
    ("usage", "table?", "the token usage"),
    ("outputs", "table?", "the output files' checksums"),
    ("scenes", "list?", "the scenes' index steps"),
)
"""What a replay reads of a record: (key path, its kinds: text, number, whole, table, list, null; '?' when it may be
absent, what it is)."""
ITEMS = {"knowledge": (("id", "text"), ("score", "number"), ("testable", "list"), ("names", "list?"),
                       ("model", "table?")),
         "trace": (("role", "text"), ("method", "text"), ("error", "text?")),
         "outputs": (("file", "text"), ("sha256", "text"))}
"""The fields of each item of a record's lists (and of each output), as REPLAYED gives them."""
SHOWN = 3
"""How many problems of a record a message names before it counts the rest."""
_SECRET_KEYS = re.compile(r"(api[_-]?key|authorization|password|secret|token(?!s))", re.IGNORECASE)
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def input_entries(raster_set, layer_infos) -> list[dict]:
    """One entry per input: name, path, layer (of a GeoPackage), root (the folder its files must lie in), role,
    favourable, legend, kind, CRS, size, sha256, and the checksums of the files beside it or that it reads
    (`sidecars`: a Shapefile's parts by name, a VRT's sources by resolved path)."""
    infos = {info.name: info for info in layer_infos}
    entries = []
    for spec in raster_set.layers:
        raster_set.progress.check()
        info = infos[spec.name]
        files = [spec.path]
        if spec.path.suffix.lower() == ".shp":
            files += [spec.path.with_suffix(s) for s in (".dbf", ".shx", ".prj") if spec.path.with_suffix(s).exists()]
        sources = [p for p in referenced_files(spec.path, spec.root, raster=not spec.is_vector) if p.is_file()]
        reading, reading_path = legend_reading(spec.legend)
        if reading_path is not None:
            files.append(reading_path)
        entries.append({
            "name": spec.name,
            "path": str(spec.path.resolve()),
            "layer": spec.layer,
            "root": str(Path(spec.root or spec.path.parent).resolve()),
            "role": spec.role,
            "favourable": spec.favourable,
            "legend": str(spec.legend.resolve()) if spec.legend else None,
            "legend_sha256": sha256_file(spec.legend) if spec.legend else None,
            "kind": info.kind,
            "crs": info.crs,
            "size": info.size,
            "sha256": sha256_file(spec.path),
            "sidecars": {**{p.name: sha256_file(p) for p in files[1:]}, **{str(p): sha256_file(p) for p in sources}},
            **({"sensor": spec.sensor} if spec.sensor else {}),
            **({"legend_reading": reading} if reading else {}),
        })
    return entries


def legend_reading(legend) -> tuple:
    """(what was read, its file) for a legend CSV written by `lodestar:read_map_legend`: the JSON beside it
    (`<name>_legend.json`: the swatches, the OCR text, the corrections), so a run on a scanned map keeps how its
    legend was read; (None, None) for any other legend."""
    from ..tools.map_legend import FORMAT

    if not legend:
        return None, None
    path = Path(legend).with_suffix(".json")
    try:
        data = read_json(path, "the legend's reading", MAX_RECORD_BYTES, "") if path.is_file() else None
    except LodestarError:
        return None, None
    return (data, path) if isinstance(data, dict) and data.get("format") == FORMAT else (None, None)


def deposits_entry(deposits) -> dict:
    """The run parameters naming the known deposits: their file (with '|layername=' when one layer of several) and
    its checksum, which a replay needs before it reads them."""
    if not deposits:
        return {"deposits": None, "deposits_sha256": None}
    file, layer = split_source(deposits)
    return {"deposits": str(file.resolve()) + (f"|layername={layer}" if layer else ""),
            "deposits_sha256": sha256_file(file)}


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
    """The record of a run record file (`read_json`'s bounds: MAX_RECORD_BYTES, MAX_DEPTH)."""
    path = Path(path)
    record = read_json(path, "the run record", MAX_RECORD_BYTES, "the record of a long run is a few MB")
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise LodestarError(f"{path} is not a Lodestar run record (format {FORMAT!r}).")
    return record


def read_replayed(path) -> dict:
    """The record a replay runs from, its structure checked (`replay_problems`) before any of it is used: a record
    of another version, or an edited one, is refused in one line naming what is missing or of the wrong kind."""
    record = read_record(path)
    problems = replay_problems(record)
    if problems:
        more = f"; and {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""
        raise LodestarError(f"Replay refused: in the run record {path}, {'; '.join(problems[:SHOWN])}{more}. Replay "
                            "the record.json a run of this version wrote, unedited, or run the analysis again.")
    return record


def replayed_request(request: AnalysisRequest, record: dict, *, check: bool = True) -> AnalysisRequest:
    """The whole request a replay runs: what `record`'s run asked (its layers, question, choices, rounds, limits,
    deposits, SAM refinement and favourability settings), with `request`'s output folder, back-end settings, output
    names and replay path. `record` comes from `read_replayed`; `check` as in `layers_from_record`."""
    parameters = record["parameters"]
    mapping = parameters["favourability"]
    sam = parameters.get("sam")
    return replace(
        request, layers=layers_from_record(record, check), question=record["question"],
        choices=dict(record["choices"]), max_rounds=int(parameters["max_rounds"]), case_id=record.get("case_id", ""),
        deposits=Path(parameters["deposits"]) if parameters.get("deposits") else None,
        localization=parameters.get("localization"), controller=parameters.get("controller"),
        refine_with_sam=sam is not None, sam_checkpoint=Path(sam["checkpoint"]) if sam else None,
        sam_device=sam["device"] if sam else "cpu", favourable_units=dict(mapping["favourable_units"]),
        calibrate=mapping["calibrate"], cross_validation=dict(mapping.get("cross_validation") or {}),
        area_share=float(mapping["area_share"]), max_target_km2=mapping.get("max_target_km2"),
        min_target_km2=mapping.get("min_target_km2"), max_targets=mapping.get("max_targets"),
        evidence_plan=mapping.get("evidence_plan"))


def replay_problems(record: dict) -> list[str]:
    """What a replay needs of `record` (REPLAYED, ITEMS) and lacks, or has of the wrong kind, one text per key."""
    problems = []
    for path, kinds, what in REPLAYED:
        present, value = _at(record, path)
        if present and not _of_kinds(value, kinds):
            problems.append(f"{path} ({what}) must be {_kinds_text(kinds)}, not {shown(value)}")
        elif not present and not kinds.endswith("?") and isinstance(_at(record, path.rpartition(".")[0])[1], dict):
            problems.append(f"{path} ({what}) is missing")
    for key, fields in ITEMS.items():
        items = record.get(key)
        entries = (items.items() if isinstance(items, dict) else enumerate(items)) if isinstance(items, (dict, list)) \
            else ()
        for name, item in entries:
            where = f"{key}[{name!r}]" if isinstance(items, dict) else f"{key}[{name}]"
            if not isinstance(item, dict):
                problems.append(f"{where} must be a table, not {shown(item)}")
                continue
            for field, kinds in fields:
                if field in item and not _of_kinds(item[field], kinds):
                    problems.append(f"{where}.{field} must be {_kinds_text(kinds)}, not {shown(item[field])}")
                elif field not in item and not kinds.endswith("?"):
                    problems.append(f"{where}.{field} is missing")
            if key == "trace" and "value" not in item and "error" not in item:
                problems.append(f"{where} holds neither a value nor an error")
    for key in ("choices", "parameters.favourability.favourable_units"):
        present, table = _at(record, key)
        if not present or not isinstance(table, dict):
            continue
        kinds = "text" if key == "choices" else "list"
        wrong = [str(k) for k, v in table.items() if not _of_kinds(v, kinds)]
        if wrong:
            problems.append(f"{key}[{wrong[0]!r}] must be {_kinds_text(kinds)}, not {shown(table[wrong[0]])}")
    return problems


def _at(record: dict, path: str) -> tuple[bool, object]:
    """(whether the key path is present, its value)."""
    value = record
    for key in path.split(".") if path else ():
        if not isinstance(value, dict) or key not in value:
            return False, None
        value = value[key]
    return True, value


_KINDS = {"text": lambda v: isinstance(v, str),
          "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v),
          "whole": lambda v: isinstance(v, int) and not isinstance(v, bool),
          "table": lambda v: isinstance(v, dict), "list": lambda v: isinstance(v, list), "null": lambda v: v is None}
_KIND_WORDS = {"text": "text", "number": "a number", "whole": "a whole number", "table": "a table", "list": "a list",
               "null": "null"}


def _of_kinds(value, kinds: str) -> bool:
    return any(_KINDS[kind](value) for kind in kinds.rstrip("?").split())


def _kinds_text(kinds: str) -> str:
    return " or ".join(_KIND_WORDS[kind] for kind in kinds.rstrip("?").split())


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
    """The record's inputs as LayerSpecs. Before any file is read, every input must carry its checksums (sha256, a
    legend's legend_sha256, one per sidecar, the deposits' deposits_sha256) and every file it names must lie inside
    its recorded root: a record edited to read another file is refused in one line, and nothing of that file is
    read or shown. With `check`, each file must then still have its recorded checksum, and a VRT may read only
    files whose checksums the record holds."""
    entries = record.get("inputs")
    if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) for e in entries):
        raise LodestarError("Replay refused: the run record lists no inputs; replay the record.json a run wrote, "
                            "unedited.")
    planned = [_replay_files(entry, i) for i, entry in enumerate(entries)]
    parameters = record.get("parameters")
    if not isinstance(parameters, dict):
        parameters = {}
    deposits = parameters.get("deposits")
    if deposits:
        _need_checksum(parameters.get("deposits_sha256"), "deposits_sha256 of the known deposits")
        check_path_text(deposits, "Replay refused: the known deposits")
    layers = []
    for entry, (path, legend, root, sidecars) in zip(entries, planned):
        name = _label(entry)
        if not path.is_file():
            raise LodestarError(f"Replay needs the input {name} at {path}, which no longer exists.")
        if check:
            for file, digest in ((path, entry["sha256"]), *sidecars):
                if not file.is_file() or sha256_file(file) != digest:
                    what = f"Input {name} ({path})" if file == path else f"{file.name}, beside input {name},"
                    raise LodestarError(f"{what} is missing or changed since the run was recorded; replay needs "
                                        "the same files.")
            recorded = {file for file, _ in sidecars}
            for source in referenced_files(path, root, raster=path.suffix.lower() not in VECTOR_SUFFIXES):
                if source not in recorded:
                    raise LodestarError(f"Replay refused: input {name} reads {source}, whose checksum the record "
                                        "does not hold; run the analysis again to record it.")
        layers.append(LayerSpec(path, entry["role"], entry["name"], entry.get("favourable", "high"), legend,
                                layer=entry.get("layer") or None, root=root, sensor=str(entry.get("sensor") or "")))
    if deposits and check:
        file = split_source(deposits)[0]
        if not file.is_file() or sha256_file(file) != parameters["deposits_sha256"]:
            raise LodestarError(f"The known deposits {file} are missing or changed since the run was recorded; "
                                "replay needs the same files.")
    return layers


def _label(entry: dict) -> str:
    return repr(str(entry.get("name", "?"))[:80])


def _need_checksum(value, what: str) -> None:
    if not isinstance(value, str) or not _SHA256.match(value):
        raise LodestarError(f"Replay refused: the run record has no {what}; replay reads only files whose "
                            "checksums the record holds: replay the record.json the run wrote, unedited, or run the "
                            "analysis again.")


def _replay_files(entry: dict, index: int) -> tuple:
    """(path, legend, root, [(sidecar, sha256)]) of one recorded input, checked without reading any file: its
    checksums present, no network path, every file inside its root."""
    name = _label(entry)
    for key in ("name", "path", "role"):
        if not isinstance(entry.get(key), str) or not entry[key].strip():
            raise LodestarError(f"Replay refused: input {index + 1} of the run record has no {key!r}; replay the "
                                "record.json the run wrote, unedited.")
    _need_checksum(entry.get("sha256"), f"sha256 for input {name}")
    legend = entry.get("legend") or None
    if legend is not None:
        _need_checksum(entry.get("legend_sha256"), f"legend_sha256 for the legend of input {name}")
    sidecars = entry.get("sidecars") or {}
    if not isinstance(sidecars, dict):
        raise LodestarError(f"Replay refused: the sidecars of input {name} are not a table of checksums; replay the "
                            "record.json the run wrote, unedited.")
    for digest in sidecars.values():
        _need_checksum(digest, f"checksum for a file beside input {name}")
    texts = [entry["path"], *([legend] if legend is not None else []), *sidecars,
             *([entry["root"]] if entry.get("root") else [])]
    for text in texts:
        if not isinstance(text, str):
            raise LodestarError(f"Replay refused: input {name} names a file that is not a path ({text!r}).")
        check_path_text(text, f"Replay refused: input {name} names")
    path = Path(entry["path"])
    root = Path(entry.get("root") or path.parent).resolve()
    legend = Path(legend) if legend is not None else None
    files = [(path.parent / n, d) for n, d in sidecars.items()]  # a file beside it by name, or one it reads by path
    if legend is not None:
        files.append((legend, entry["legend_sha256"]))
    for file in [path] + [f for f, _ in files]:
        if not file.resolve().is_relative_to(root):
            raise LodestarError(f"Replay refused: input {name} names {file}, which lies outside {root}, the folder "
                                "its files were read from; replay the record.json the run wrote, unedited.")
    return path, legend, root, [(f.resolve(), d) for f, d in files]
