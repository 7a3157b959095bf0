"""Past runs: the run folders under a runs folder, each read from its record.json (question, answer, date, layers),
and a past run's result rebuilt from its record and output files, as the run returned it, to show it again."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..analysis import AnalysisResult
from ..errors import LodestarError
from ..json_file import read_json
from ..judge.target_table import PROSPECT_COLUMNS, empty_targets
from ..load.scenes import index_layers
from ..raster_io import LayerSpec
from ..reason.contract import FAILED, INSUFFICIENT
from ..request.record import MAX_RECORD_BYTES
from ..vector_io import read_vector

RECORD = "record.json"
REPORT = "report.html"
VECTOR_OUTPUTS = ("zones", "nodes", "edges", "prospectivity", "prospects")
TARGET_OUTPUTS = ("prospectivity", "prospects")
"""Written only when the run drew targets: a run that drew none lists no such file in its record."""
IMAGE_KEYS = ("evidence_png", "image", "png")  # keys of event values that are image files of the run folder


@dataclass
class PastRun:
    """One run folder as its record tells it."""

    folder: Path
    question: str
    answer: str
    answer_text: str
    created_utc: str  # '2026-11-23T20:36:03Z'
    layers: list = field(default_factory=list)  # input layer names
    case_id: str = ""

    @property
    def record(self) -> Path:
        return self.folder / RECORD

    @property
    def report(self) -> Path | None:
        report = self.folder / REPORT
        return report if report.is_file() else None

    @property
    def date(self) -> str:
        """'2026-11-23 20:36 UTC'."""
        text = self.created_utc.replace("T", " ").rstrip("Z")
        return f"{text[:16]} UTC" if text else ""

    @property
    def answer_line(self) -> str:
        """'A. Yes', 'Failed', 'Insufficient evidence'."""
        if self.answer in (FAILED, INSUFFICIENT) or not self.answer_text:
            return self.answer
        return f"{self.answer}. {self.answer_text}"


def read_record(folder) -> dict:
    path = Path(folder) / RECORD
    record = read_json(path, "the run record", MAX_RECORD_BYTES, "the record of a long run is a few MB")
    if not isinstance(record, dict) or "result" not in record:
        raise LodestarError(f"{path} is not a Lodestar run record (it has no result).")
    return record


def past_run(folder) -> PastRun:
    """The run in `folder` (raises LodestarError when its record is missing or unreadable)."""
    record = read_record(folder)
    answer = str(record["result"].get("answer", ""))
    choices = record.get("choices") or {}
    return PastRun(folder=Path(folder), question=str(record.get("question", "")), answer=answer,
                   answer_text=str(choices.get(answer, "")), created_utc=str(record.get("created_utc", "")),
                   layers=[str(entry.get("name", "")) for entry in record.get("inputs") or []],
                   case_id=str(record.get("case_id", "")))


def list_runs(runs_folder) -> tuple[list, list]:
    """(runs newest first, [(folder, why)] of sub-folders with an unreadable record) under `runs_folder`; folders
    without a record (a run in progress, a cancelled one) are not runs."""
    runs: list[PastRun] = []
    unreadable: list[tuple[Path, str]] = []
    root = Path(runs_folder)
    if not root.is_dir():
        return runs, unreadable
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        if not (folder / RECORD).is_file():
            continue
        try:
            runs.append(past_run(folder))
        except LodestarError as exc:
            unreadable.append((folder, str(exc)))
    runs.sort(key=lambda run: (run.created_utc, run.folder.name), reverse=True)
    return runs, unreadable


def outputs_of(folder, record: dict | None = None) -> dict:
    """{output key: path} of the output files the run wrote that are still in its folder (report and record
    included)."""
    folder = Path(folder)
    record = record if record is not None else read_record(folder)
    outputs = {}
    for key, entry in (record.get("outputs") or {}).items():
        name = entry.get("file") if isinstance(entry, dict) else entry
        if name and (folder / name).is_file():
            outputs[key] = folder / name
    for key, name in (("report", REPORT), ("record", RECORD)):
        if (folder / name).is_file():
            outputs[key] = folder / name
    return outputs


def result_of(folder) -> AnalysisResult:
    """A past run's result as the run returned it: answer, chain, verdicts, usage, notes, weights, unused layers,
    validation, and its zones, graph, targets and prospects read back from its files (none when it drew none)."""
    folder = Path(folder)
    record = read_record(folder)
    outputs = outputs_of(folder, record)
    written = record.get("outputs") or {}
    missing = [key for key in VECTOR_OUTPUTS if key not in outputs and (key in written or key not in TARGET_OUTPUTS)]
    if missing:
        raise LodestarError(f"The run folder {folder} lacks {', '.join(missing)}: it was moved or cleaned; the run "
                            "cannot be shown again (replay its record.json with lodestar:analyze to rebuild it).")
    frames = {key: read_vector(outputs[key]) for key in VECTOR_OUTPUTS if key in outputs}
    crs = frames["zones"].crs
    frames.setdefault("prospectivity", empty_targets(crs))
    frames.setdefault("prospects", empty_targets(crs, PROSPECT_COLUMNS))
    result = record["result"]
    answer = str(result.get("answer", ""))
    choices = record.get("choices") or {}
    mapping = record.get("favourability") or {}
    return AnalysisResult(
        answer=answer, answer_text=result.get("where") or choices.get(answer, answer if answer in (FAILED, INSUFFICIENT)
                                                                       else ""),
        valid=bool(result.get("valid")), voted=bool(result.get("voted")), rounds=int(result.get("rounds", 0)),
        zones=frames["zones"], nodes=frames["nodes"], edges=frames["edges"], prospectivity=frames["prospectivity"],
        prospects=frames["prospects"],
        chain=list(record.get("chain") or []), verdicts=[{k: v for k, v in r.items() if k != "chain"}
                                                         for r in record.get("rounds") or []],
        usage=dict(record.get("usage") or {}), outputs=outputs, metrics=dict(record.get("metrics") or {}),
        notes=list(result.get("notes") or []), weights=list(mapping.get("weights") or []),
        unused=list(mapping.get("unused") or []), validation=dict(mapping.get("validation") or {}))


def events_of(folder, record: dict | None = None) -> list:
    """The run's engine events as they were emitted, their images (written relative to the run folder) made whole
    paths again so the dock's reasoning view shows them."""
    folder = Path(folder)
    record = record if record is not None else read_record(folder)

    def whole(value, key=""):
        if isinstance(value, dict):
            return {k: whole(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [whole(v, key) for v in value]
        if isinstance(value, str) and key in IMAGE_KEYS and value and not Path(value).is_absolute():
            return str(folder / value)
        return value

    return [whole(event) for event in record.get("events") or [] if isinstance(event, dict)]


def run_inputs(folder) -> list:
    """A past run's input layers (LayerSpec: path, role, name, favourable side, legend) from its record, a scene's
    index rasters in the run folder in its place; each file must still be where the run read it."""
    specs = []
    record = read_record(folder)
    derived = index_layers(record, folder)  # a scene stands for the index rasters the run computed from it
    for entry in record.get("inputs") or []:
        if entry.get("name") in derived:
            specs += derived[entry["name"]]
            continue
        path = Path(entry.get("path", ""))
        if not path.is_file():
            raise LodestarError(f"The run's input {entry.get('name', path.name)} is no longer at {path}; put it back "
                                "there (or run the analysis again) to make its full-resolution surface.")
        specs.append(LayerSpec(path, entry["role"], entry.get("name", ""), entry.get("favourable", "high"),
                               entry.get("legend") or None, layer=entry.get("layer") or None,
                               root=entry.get("root") or None))
    if not specs:
        raise LodestarError(f"The run record in {folder} lists no input layers.")
    return specs
