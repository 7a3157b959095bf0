"""Run records: everything one analysis did, as JSON, and replay from a record with no model calls.

A record holds the inputs (paths, sha256 checksums, CRS, roles), the parameters, the back-ends' public
settings (never an API key), prompt hashes, the plan, every model decision in call order (`trace`),
every event (controller verdicts, observations, verdicts per round, votes), usage and timings, and
the checksums of the output files.

Replay feeds the recorded decisions back through the same loop (`ReplayReasoner`): tools, controller,
graph and localization run again, deterministic, so the output files come out byte for byte the same.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from ..errors import LodestarError
from ..raster_io import LayerSpec
from .contract import (
    BudgetExhausted,
    ChainNode,
    Judgement,
    PlanStep,
    ReasonerError,
    ToolCall,
    Verdict,
)

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
        for secret in secrets:
            if secret and len(secret) >= 4 and secret in value:
                value = value.replace(secret, "***")
        return value
    return value


def write_record(record: dict, path, secrets: tuple = ()) -> Path:
    """Write a record as indented JSON (atomically), secrets scrubbed."""
    from ..render import write_bytes_atomic

    text = json.dumps(scrub(record, secrets), indent=1, ensure_ascii=False, sort_keys=False, default=str)
    return write_bytes_atomic(Path(path), (text + "\n").encode("utf-8"))


def read_record(path) -> dict:
    path = Path(path)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise LodestarError(f"Cannot read the run record {path}: {exc}.") from exc
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise LodestarError(f"{path} is not a Lodestar run record (format {FORMAT!r}).")
    return record


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
        layers.append(LayerSpec(path, entry["role"], entry["name"], entry.get("favourable", "high"), legend))
    return layers


_DECODE = {
    "plan": lambda v: [PlanStep.from_dict(s) for s in v],
    "propose": ToolCall.from_dict,
    "observe": Judgement.from_dict,
    "verify": Verdict.from_dict,
    "localization_params": dict,
}


class ReplayReasoner:
    """Answers every role with the decisions of a record, in call order; makes no model call.

    Its `name` is the recorded planner back-end's, so everything derived from it comes out the same.
    """

    def __init__(self, record: dict):
        self.record = record
        self.name = str(record.get("backend", {}).get("planner", {}).get("backend", "replay"))
        self._queue = {}
        for entry in record.get("trace", []):
            self._queue.setdefault((entry["role"], entry["method"]), []).append(entry)
        self._used = {key: 0 for key in self._queue}

    def _next(self, role: str, method: str):
        key = (role, method)
        entries = self._queue.get(key, [])
        position = self._used.get(key, 0)
        if position >= len(entries):
            raise ReasonerError(f"The record holds no further {role} {method} decision; the replay diverged.")
        self._used[key] = position + 1
        entry = entries[position]
        if "error" in entry:
            if entry.get("budget"):
                raise BudgetExhausted(entry["error"])
            raise ReasonerError(entry["error"])
        return _DECODE[method](entry["value"])

    def plan(self, ws):
        return self._next("planner", "plan")

    def propose(self, ws, step, feedback, attempt):
        return self._next("executor", "propose")

    def observe(self, ws, step, outcome):
        return self._next("executor", "observe")

    def verify(self, ws, chain: list[ChainNode]):
        return self._next("verifier", "verify")

    def localization_params(self, ws):
        return self._next("planner", "localization_params")

    def usage(self) -> dict:
        return json.loads(json.dumps(self.record.get("usage", {})))

    def public_settings(self) -> dict:
        return {"backend": "replay", "of": self.name}

    def prompt_hashes(self) -> dict:
        return dict(self.record.get("prompt_hashes", {}))
