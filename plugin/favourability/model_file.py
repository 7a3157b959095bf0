"""A fitted prospectivity model as a file of data (format 3): the line MAGIC, a JSON header (format, plugin version,
provenance, the layers the model expects, in order, and the payload's sha256), then the payload: the model's
structure as one line of JSON and its arrays as an uncompressed .npz (model_data.py).

Loading a model file runs none of its content: the arrays are read as numeric arrays only (no pickle: an object array
is refused), and the model is rebuilt from Lodestar's own classes, every value checked (model_data.py). The sha256
only tells a damaged copy: anyone can work it out for a file they forge, so security comes from the format, not from
the checksum. Files of format 2 and before held a pickle, which runs code when loaded: they are refused without being
unpickled, saying to train the model again. Anything else is refused with one line saying why."""
from __future__ import annotations

import hashlib
import io
import json
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from ..errors import LodestarError
from ..files import atomic_path
from .model_data import KINDS, InvalidModel, model_data, read_model

MAGIC = b"LODESTAR-PROSPECTIVITY-MODEL\n"
FORMAT = 3
"""2: the layers derived from the given ones (fault density, distance to unit contacts) are columns too (a pickle);
3: data only (JSON and numeric arrays), predicted with numpy (predictors.py)."""
METADATA = Path(__file__).resolve().parents[2] / "metadata.txt"
RETRAIN = "Train the model again with 'Train prospectivity model'."
HEADER_TYPES = {"lodestar": "str", "written": "str", "out_of_fold_auc": "real"}
"""The header's fields that readers use, and their types (the other provenance is shown as it is)."""


def plugin_version() -> str:
    """The plugin's version (metadata.txt), '' when unreadable."""
    try:
        lines = METADATA.read_text(encoding="utf-8").splitlines()
    except OSError:
        return ""
    return next((line.split("=", 1)[1].strip() for line in lines if line.startswith("version=")), "")


def save_model(path, model, provenance: dict, written: str | None = None) -> dict:
    """Write `model` (models.py, fitted) with a header holding `provenance` (method, deposits, scores...) and the
    layers it expects, in order; returns the header. The layers' data are not stored, only what they are. `written`:
    the time it says it was written (a run's own, so that a replay writes the same bytes); None: now."""
    structure, arrays = model_data(model)
    payload = json.dumps(structure).encode("utf-8") + b"\n" + _npz(arrays)
    written = written or datetime.now(timezone.utc).isoformat(timespec="seconds")
    header = {"format": FORMAT, "lodestar": plugin_version(), "written": written, "method": model.method,
              "layers": _layers(model.columns), **provenance, "sha256": hashlib.sha256(payload).hexdigest()}
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        fh.write(MAGIC)
        fh.write(json.dumps(header, default=str).encode("utf-8") + b"\n")
        fh.write(payload)
    return header


def _npz(arrays: dict) -> bytes:
    """The arrays as an uncompressed .npz (what np.savez writes) dated 1980-01-01: the same model, the same bytes."""
    stored = io.BytesIO()
    with zipfile.ZipFile(stored, "w", zipfile.ZIP_STORED) as archive:
        for name, array in arrays.items():
            entry = io.BytesIO()
            np.lib.format.write_array(entry, np.asanyarray(array), allow_pickle=False)
            archive.writestr(zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0)), entry.getvalue())
    return stored.getvalue()


def _layers(columns) -> list[dict]:
    return [{"name": layer.name, "kind": layer.kind, "units": layer.units, "favourable": layer.favourable,
             "categorical": bool(c), "source": layer.source} for layer, c in zip(columns.layers, columns.categorical)]


def load_model(path) -> tuple[dict, object]:
    """(header, model) of a file written by save_model; anything else is refused (LodestarError) with the reason."""
    path = Path(path)

    def refused(reason: str) -> LodestarError:
        return LodestarError(f"{path.name} is not a valid Lodestar prospectivity model ({reason}): it is not loaded. "
                             f"{RETRAIN}")

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LodestarError(f"{path.name} cannot be read ({exc.strerror or exc}): give a model file written by "
                            "'Train prospectivity model'.") from exc
    if not data.startswith(MAGIC):
        raise refused("it does not start with Lodestar's header")
    header_line, _, payload = data[len(MAGIC):].partition(b"\n")
    header = _json(header_line, refused, "its header")
    if not isinstance(header, dict):
        raise refused("its header is not a JSON object")
    found = header.get("format")
    if isinstance(found, int) and not isinstance(found, bool) and found < FORMAT:  # KINDS["int"], seen by mypy
        raise LodestarError(f"{path.name} is a Lodestar model of format {found}, written as Python objects that run "
                            f"code when loaded (format {FORMAT} holds data only): it is not loaded. {RETRAIN}")
    if found != FORMAT:
        raise refused(f"format {found!r}, where this version reads format {FORMAT}")
    if hashlib.sha256(payload).hexdigest() != header.get("sha256"):
        raise refused("it does not match its header's checksum: damaged or altered")
    structure_line, _, stored = payload.partition(b"\n")
    structure = _json(structure_line, refused, "its structure")
    try:
        model = read_model(structure, _arrays(stored))
    except InvalidModel as exc:
        raise refused(str(exc)) from None
    wrong = [key for key, kind in HEADER_TYPES.items() if key in header and not KINDS[kind](header[key])]
    if header.get("method") != model.method or header.get("layers") != _layers(model.columns) or wrong:
        raise refused("its header does not describe its model: " + (", ".join(wrong) or "method or layers"))
    return header, model


def _json(line: bytes, refused, what: str):
    try:
        return json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise refused(f"{what} is not JSON") from None


def _arrays(stored: bytes) -> dict:
    """{name: array} of an uncompressed .npz, numeric arrays only (numpy's reader, pickles refused)."""
    arrays = {}
    try:
        with zipfile.ZipFile(io.BytesIO(stored)) as archive:
            for info in archive.infolist():
                name = info.filename[:-len(".npy")]
                if info.compress_type != zipfile.ZIP_STORED or not info.filename.endswith(".npy") or name in arrays:
                    raise InvalidModel("its arrays are not an uncompressed .npz of distinct names")
                with archive.open(info) as fh:
                    arrays[name] = np.lib.format.read_array(fh, allow_pickle=False)
    except InvalidModel:
        raise
    except Exception as exc:  # noqa: BLE001 (whatever a damaged or forged archive raises, it is refused as such)
        message = "it holds an array of Python objects" if "allow_pickle" in str(exc) else (
            f"its arrays cannot be read as numeric arrays: {type(exc).__name__}")
        raise InvalidModel(message) from None
    return arrays
