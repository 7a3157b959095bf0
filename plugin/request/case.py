"""Reading and writing `lodestar-case/1` case folders (see shared case-format.md)."""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..confinement import check_path_text
from ..errors import LodestarError
from ..files import write_text_atomic
from ..json_file import read_json
from ..raster_io import LayerSpec
from ..reason.questions import DEFAULT_CHOICES, positive_choice
from ..vector_io import split_source

FORMAT = "lodestar-case/1"
MAX_CASE_BYTES = 2 ** 20
"""The largest case.json: a case names its files, a question and a few favourable units (a few KB)."""


@dataclass
class Case:
    """One exploration question over one region."""

    id: str
    question: str
    layers: list[LayerSpec]
    choices: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_CHOICES))
    answer: str | None = None
    deposits: Path | None = None
    folder: Path | None = None
    favourable_units: dict[str, list[str]] = field(default_factory=dict)  # layer name -> units named favourable

    @property
    def positive_choice(self) -> str | None:
        """The option letter that means 'yes, deposits'; None when the question is not yes / no."""
        return positive_choice(self.choices)


def read_case(path) -> Case:
    """Read a case from its folder or its case.json; paths are resolved against the case folder."""
    path = Path(path)
    if path.is_dir():
        path = path / "case.json"
    data = _case_data(path)
    folder = path.parent
    layers: list[LayerSpec] = []
    favourable_units: dict[str, list[str]] = {}
    for i, entry in enumerate(data["layers"]):
        spec, units = _case_layer(path, folder, i, entry)
        layers.append(spec)
        if units:
            favourable_units[spec.name] = list(units)
    choices = data.get("choices") or dict(DEFAULT_CHOICES)
    answer = data.get("answer")
    if answer is not None and answer not in choices:
        raise LodestarError(f"{path}: answer {answer!r} is not one of the choices {', '.join(choices)}.")
    return Case(
        id=str(data["id"]),
        question=str(data["question"]),
        layers=layers,
        choices={str(k): str(v) for k, v in choices.items()},
        answer=answer,
        deposits=_case_deposits(path, folder, data.get("deposits")),
        folder=folder,
        favourable_units=favourable_units,
    )


def _case_data(path: Path) -> dict:
    """The object case.json holds, its format, required keys and their kinds checked."""
    if not path.exists():
        raise LodestarError(f"No case.json at {path}. A case is a folder with a case.json ({FORMAT}).")
    try:
        data = read_json(path, "the case", MAX_CASE_BYTES, "a case names its files and a question",
                         object_pairs_hook=_unique_keys)
    except _DuplicateKey as exc:
        raise LodestarError(f"{path}: the key {exc.args[0]!r} appears {exc.args[1]} times in one object (JSON keeps "
                            "only the last, silently); keep one of them.") from exc
    if not isinstance(data, dict):
        raise LodestarError(f"{path}: a case is one JSON object with 'format', 'id', 'question' and 'layers'.")
    if data.get("format") != FORMAT:
        raise LodestarError(f"{path}: 'format' must be {FORMAT!r}, found {data.get('format')!r}.")
    for key in ("id", "question", "layers"):
        if not data.get(key):
            raise LodestarError(f"{path}: the required key {key!r} is missing or empty.")
    if not isinstance(data["question"], str):  # a list or an object is not silently turned into text
        kind = {list: "a list", dict: "an object", bool: "true / false"}.get(type(data["question"]), "a number")
        raise LodestarError(f"{path}: 'question' must be text (one string, its choices after 'Answer:'), not {kind} "
                            f"({json.dumps(data['question'], ensure_ascii=False)[:80]}); write it as one string.")
    if not isinstance(data["layers"], list):
        raise LodestarError(f"{path}: 'layers' must be a list of {{'path', 'role'}} objects.")
    if not isinstance(data.get("choices") or {}, dict):
        raise LodestarError(f"{path}: 'choices' must be an object of letter -> text, e.g. {{\"A\": \"Yes\"}}.")
    return data


def _case_layer(path: Path, folder: Path, i: int, entry) -> tuple[LayerSpec, list[str] | None]:
    """The layer `entry` (the case's `i`-th, from 0) names, and the units it names favourable (None when none)."""
    if not isinstance(entry, dict) or "path" not in entry or "role" not in entry:
        raise LodestarError(f"{path}: layer {i + 1} needs a 'path' and a 'role'.")
    file, layer_name = _source(path, entry["path"], f"layer {i + 1}'s 'path'")
    layer_path = _inside(path, folder, file, f"layer {i + 1}'s 'path'")
    if not layer_path.exists():
        raise LodestarError(f"{path}: layer file {file} does not exist in {folder}.")
    if layer_path.is_dir():
        raise LodestarError(f"{path}: layer {i + 1}'s 'path' {entry['path']!r} is a folder, not a file; name the "
                            "raster or vector file itself (e.g. one of the files inside it).")
    for key in ("role", "name", "favourable", "sensor"):
        if entry.get(key) is not None and not isinstance(entry[key], str):
            raise LodestarError(f"{path}: layer {i + 1}'s {key!r} must be text, not {entry[key]!r}.")
    legend = entry.get("legend")
    legend_path = _inside(path, folder, legend, f"layer {i + 1}'s 'legend'") if legend else None
    if legend_path is not None and legend_path.is_dir():
        raise LodestarError(f"{path}: layer {i + 1}'s 'legend' {legend!r} is a folder, not a file; name the "
                            "legend CSV itself (columns value,name).")
    units = entry.get("favourable_units")
    if units is not None and (not isinstance(units, list) or not all(isinstance(u, str) and u for u in units)):
        raise LodestarError(f"{path}: layer {i + 1}'s 'favourable_units' must be a list of unit codes or names, "
                            "e.g. [\"LPZE\", \"limestone\"].")
    spec = LayerSpec(
        path=layer_path,
        role=entry["role"],
        name=entry.get("name") or "",
        favourable=entry.get("favourable") or "high",
        legend=legend_path,
        layer=layer_name,
        root=folder,
        sensor=entry.get("sensor") or "",
    )
    return spec, units


def _case_deposits(path: Path, folder: Path, deposits) -> Path | None:
    """The case's 'deposits' resolved in its folder: a point layer, or one layer of a GeoPackage
    ('sites.gpkg|layername=deposits'); None when it names none."""
    if not deposits:
        return None
    file, layer_name = _source(path, deposits, "'deposits'")
    inside = _inside(path, folder, file, "'deposits'")
    return Path(f"{inside}|layername={layer_name}") if layer_name else inside


class _DuplicateKey(Exception):
    pass


def _unique_keys(pairs: list) -> dict:
    """A JSON object whose keys are all distinct (json.loads' object_pairs_hook); a repeated key is refused."""
    data = dict(pairs)
    if len(data) < len(pairs):
        key, count = Counter(key for key, _ in pairs).most_common(1)[0]
        raise _DuplicateKey(key, count)
    return data


def _source(case_json: Path, text, what: str) -> tuple[str, str | None]:
    """(file, layer name) of a layer's 'path' ('two.gpkg|layername=faults' names one layer of a GeoPackage)."""
    if not isinstance(text, str) or not text.strip():
        raise LodestarError(f"{case_json}: {what} must be a file name relative to the case folder, not {text!r}.")
    try:
        layer = split_source(text)[1]
    except LodestarError as exc:
        raise LodestarError(f"{case_json}: {what}: {exc}") from exc
    return text.split("|", 1)[0], layer


def _inside(case_json: Path, folder: Path, relative, what: str) -> Path:
    """`relative` resolved in the case folder; a case may only name files inside its own folder (a shared case
    must not make Lodestar read, or send to a model, files elsewhere on the machine), and never a network path."""
    if not isinstance(relative, str) or not relative.strip():
        raise LodestarError(f"{case_json}: {what} must be a file name relative to the case folder, not {relative!r}.")
    try:
        check_path_text(relative, what)
    except LodestarError as exc:
        raise LodestarError(f"{case_json}: {exc}") from exc
    target = (folder / relative).resolve()
    if Path(relative).is_absolute() or not target.is_relative_to(folder.resolve()):
        raise LodestarError(f"{case_json}: {what} {relative!r} lies outside the case folder {folder}; a case may only "
                            "name files inside its folder: copy the file there and name it relative to case.json.")
    return folder / relative


def write_case(case: Case, folder) -> Path:
    """Write case.json (canonical form) into `folder`; layer files must already lie inside it."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)

    def rel(p: Path) -> str:
        try:
            return Path(p).resolve().relative_to(folder.resolve()).as_posix()
        except ValueError as exc:
            raise LodestarError(f"{p} is not inside the case folder {folder}; copy it there first.") from exc

    layers = []
    for spec in case.layers:
        entry: dict[str, str | list[str]] = {
            "path": rel(spec.path) + (f"|layername={spec.layer}" if spec.layer else ""), "role": spec.role}
        if spec.name and spec.name != (spec.layer or Path(spec.path).stem):
            entry["name"] = spec.name
        if spec.favourable != "high":
            entry["favourable"] = spec.favourable
        if spec.legend is not None:
            entry["legend"] = rel(spec.legend)
        if spec.sensor:
            entry["sensor"] = spec.sensor
        if case.favourable_units.get(spec.name):
            entry["favourable_units"] = list(case.favourable_units[spec.name])
        layers.append(entry)
    data = {"format": FORMAT, "id": case.id, "question": case.question, "choices": case.choices,
            "answer": case.answer, "layers": layers}
    if case.deposits is not None:
        file, layer_name = split_source(case.deposits)
        data["deposits"] = rel(file) + (f"|layername={layer_name}" if layer_name else "")
    return write_text_atomic(folder / "case.json", json.dumps(data, indent=2) + "\n")
