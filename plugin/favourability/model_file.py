"""A fitted prospectivity model as a file: a Lodestar header (format, version, provenance, the layers it expects)
then the pickled model. A file without the header, of another format, or whose payload does not match the header's
checksum is refused before anything is unpickled (unpickling runs code: only files written here are loaded)."""
from __future__ import annotations

import copy
import hashlib
import json
import pickle
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from ..errors import LodestarError
from ..files import atomic_path
from .models import Columns

MAGIC = b"LODESTAR-PROSPECTIVITY-MODEL\n"
FORMAT = 2
"""2: the layers derived from the given ones (fault density, distance to unit contacts) are columns too."""
METADATA = Path(__file__).resolve().parents[2] / "metadata.txt"


def plugin_version() -> str:
    """The plugin's version (metadata.txt), '' when unreadable."""
    try:
        lines = METADATA.read_text(encoding="utf-8").splitlines()
    except OSError:
        return ""
    return next((line.split("=", 1)[1].strip() for line in lines if line.startswith("version=")), "")


def save_model(path, model, provenance: dict) -> dict:
    """Write `model` (models.py, fitted) with a header holding `provenance` (method, deposits, scores...) and the
    layers it expects, in order; returns the header. The layers' data are not stored, only what they are."""
    layers = [replace(layer, values=np.ma.masked_array(np.zeros(0))) for layer in model.columns.layers]
    columns = Columns(layers)
    columns.categorical = np.asarray(model.columns.categorical, dtype=bool).copy()
    stored = _without_data(model, columns)
    payload = pickle.dumps(stored, protocol=pickle.HIGHEST_PROTOCOL)
    header = {"format": FORMAT, "lodestar": plugin_version(), "written": datetime.now(timezone.utc).isoformat(
        timespec="seconds"), "method": model.method,
        "layers": [{"name": layer.name, "kind": layer.kind, "units": layer.units, "favourable": layer.favourable,
                    "categorical": bool(c), "source": layer.source} for layer, c in zip(layers, columns.categorical)],
        **provenance, "sha256": hashlib.sha256(payload).hexdigest()}
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        fh.write(MAGIC)
        fh.write(json.dumps(header, default=str).encode("utf-8") + b"\n")
        fh.write(payload)
    return header


def _without_data(model, columns: Columns):
    """A shallow copy of `model` (and of its encoder and ensemble members) that refers to `columns`."""
    stored = copy.copy(model)
    stored.columns = columns
    if hasattr(stored, "encoder"):
        stored.encoder = copy.copy(stored.encoder)
        stored.encoder.columns = columns
    if hasattr(stored, "members"):
        stored.members = [_without_data(member, columns) for member in stored.members]
    return stored


def load_model(path) -> tuple[dict, object]:
    """(header, model) of a file written by save_model; anything else is refused with the reason."""
    path = Path(path)
    not_ours = (f"{path.name} is not a Lodestar prospectivity model (written by 'Train prospectivity model'); it is "
                "not loaded, since loading a model file runs the code it holds.")
    try:
        with open(path, "rb") as fh:
            if fh.read(len(MAGIC)) != MAGIC:
                raise LodestarError(not_ours)
            header = json.loads(fh.readline().decode("utf-8"))
            payload = fh.read()
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LodestarError(f"{not_ours} ({exc})") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise LodestarError(f"{path.name} is a Lodestar model of format {header.get('format')!r}; this version "
                            f"reads format {FORMAT}: train the model again.")
    if hashlib.sha256(payload).hexdigest() != header.get("sha256"):
        raise LodestarError(f"{path.name} does not match its header's checksum (damaged or altered); it is not "
                            "loaded. Train the model again.")
    return header, pickle.loads(payload)  # noqa: S301 (our own file, checked above)
