"""A prospectivity model file never runs code when loaded (issue 60): files forged to run code (a pickle of the old
format with its right checksum, an object array inside the .npz, a class of Python's own named in the structure) are
refused in one line and the marker file their code would create does not appear, through the core and through
'Predict prospectivity'; damaged or tampered files are refused in one line; every model read back predicts exactly
what the fitted one does."""
from __future__ import annotations

import hashlib
import io
import json
import pickle

import numpy as np
import pytest
from calibration_cases import SKLEARN
from mpm_sample import ALOH

from lodestar.plugin.errors import LodestarError
from lodestar.plugin.favourability import models
from lodestar.plugin.favourability.measured import MeasuredLayer
from lodestar.plugin.favourability.model_file import MAGIC, load_model, save_model

sklearn = pytest.mark.skipif(not SKLEARN, reason="scikit-learn (optional) is not installed")
RETRAIN = "Train the model again with 'Train prospectivity model'."


class Marker:
    """Unpickled, opens (creates) the file at `path`: what a hostile model file's code would do."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return open, (self.path, "w")


def _data(n: int = 3000, seed: int = 5):
    """(columns, x, deposits): an ordered layer with missing values, a unit map with missing cells, and an ordered
    layer derived from the first."""
    rng = np.random.default_rng(seed)
    grade = rng.normal(size=n)
    units = rng.integers(1, 8, n).astype(float)
    distance = rng.random(n) * 100.0
    deposits = (((grade > 1.0) & (rng.random(n) < 0.3)) | ((units == 3) & (rng.random(n) < 0.1))).astype(float)
    grade[rng.random(n) < 0.1] = np.nan
    units[rng.random(n) < 0.1] = np.nan
    layers = [MeasuredLayer("grade", "ordered", np.ma.zeros(1), "ppm", "high", {}),
              MeasuredLayer("geology", "categorical", np.ma.zeros(1), "unit", "", {3: "Skarn", 5: "Granite"}),
              MeasuredLayer("grade: distance", "ordered", np.ma.zeros(1), "m", "low", {}, "grade")]
    return models.Columns(layers), np.column_stack([grade, units, distance]), deposits


def _rows(x: np.ndarray) -> np.ndarray:
    """The fitted rows, then rows the fit never saw: an unseen unit, a row with no data, values beyond the range."""
    return np.vstack([x, [[0.5, 99.0, 50.0], [np.nan, np.nan, 0.0], [1e9, 3.0, -1e9], [-1e9, 5.0, 1e9]]])


def _wofe_file(tmp_path):
    columns, x, deposits = _data()
    model = models.fit_model("wofe", columns, x, deposits, np.ones(len(x)), {}, 1.0)
    path = tmp_path / "wofe.pkl"
    save_model(path, model, {"out_of_fold_auc": 0.8})
    return path


def _parts(path):
    """(header, structure, {name: array}) of a model file written by save_model."""
    data = path.read_bytes()[len(MAGIC):]
    header_line, _, payload = data.partition(b"\n")
    structure_line, _, stored = payload.partition(b"\n")
    with np.load(io.BytesIO(stored), allow_pickle=False) as npz:
        return json.loads(header_line), json.loads(structure_line), {name: npz[name] for name in npz.files}


def _forge(path, header: dict, payload: bytes) -> None:
    """A file with Lodestar's header and the right checksum of `payload`."""
    header = dict(header, sha256=hashlib.sha256(payload).hexdigest())
    path.write_bytes(MAGIC + json.dumps(header).encode() + b"\n" + payload)


def _forge_format_3(path, header: dict, structure: dict, arrays: dict) -> None:
    stored = io.BytesIO()
    np.savez(stored, **arrays)  # an object array is pickled into its .npy
    _forge(path, header, json.dumps(structure).encode() + b"\n" + stored.getvalue())


def _old_format(path, marker) -> None:
    """A format-2 file as the old save_model wrote it, whose pickle creates `marker` when unpickled."""
    probe = path.parent / "probe"
    pickle.loads(pickle.dumps(Marker(probe)))  # the forgery works: unpickled, it runs code
    assert probe.exists()
    payload = pickle.dumps(Marker(marker))
    _forge(path, {"format": 2, "lodestar": "0.9", "written": "2024-01-01T00:00:00+00:00", "method": "wofe",
                  "layers": []}, payload)


def _refusal(path) -> str:
    with pytest.raises(LodestarError) as caught:
        load_model(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(path.name)
    return message


# ------------------------------------------------------------------------------------- (a) the old format's pickle
def test_a_forged_old_format_file_is_refused_without_being_unpickled(tmp_path):
    marker = tmp_path / "marker"
    _old_format(tmp_path / "forged.pkl", marker)
    message = _refusal(tmp_path / "forged.pkl")
    assert message == ("forged.pkl is a Lodestar model of format 2, written as Python objects that run code when "
                       f"loaded (format 3 holds data only): it is not loaded. {RETRAIN}")
    assert not marker.exists()


# ------------------------------------------------------------------------------------ (b) a pickle inside the .npz
@pytest.mark.parametrize("inside", ["patterns.0.w_plus", "an.extra.array"])
def test_a_format_3_file_holding_an_object_array_is_refused_without_unpickling_it(tmp_path, inside):
    header, structure, arrays = _parts(_wofe_file(tmp_path))
    marker = tmp_path / "marker"
    arrays[inside] = np.array([Marker(marker)], dtype=object)
    _forge_format_3(tmp_path / "forged.pkl", header, structure, arrays)
    message = _refusal(tmp_path / "forged.pkl")
    assert message == ("forged.pkl is not a valid Lodestar prospectivity model (it holds an array of Python objects): "
                       f"it is not loaded. {RETRAIN}")
    assert not marker.exists()


# ------------------------------------------------------------------------------- (c) a class outside the allow-list
@pytest.mark.parametrize("name,args", [("os.system", "touch {marker}"), ("builtins.eval", "open({marker!r}, 'w')"),
                                       ("subprocess.Popen", ["touch", "{marker}"]), ("builtins.open", "{marker}")])
@pytest.mark.parametrize("where", ["model", "pattern"])
def test_a_format_3_file_naming_a_class_outside_the_allow_list_is_refused(tmp_path, name, args, where):
    header, structure, arrays = _parts(_wofe_file(tmp_path))
    marker = str(tmp_path / "marker")
    node = {"class": name, "args": [a.format(marker=marker) for a in args] if isinstance(args, list) else
            args.format(marker=marker)}
    if where == "model":
        structure["model"] = node
    else:
        structure["model"]["patterns"][0] = node
    _forge_format_3(tmp_path / "forged.pkl", header, structure, arrays)
    message = _refusal(tmp_path / "forged.pkl")
    named = "the model" if where == "model" else "patterns.0"
    assert message.startswith(f"forged.pkl is not a valid Lodestar prospectivity model ({named} names the class "
                              f"'{name}', not one of ")
    assert message.endswith(RETRAIN)
    assert not (tmp_path / "marker").exists()


# ------------------------------------------------------------------------------------ (d) damaged or tampered files
def _cut(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _header_only(path):
    path.write_bytes(path.read_bytes()[: len(MAGIC) + 20])


def _foreign(path):
    path.write_bytes(pickle.dumps({"model": "anything"}))


@pytest.mark.parametrize("damage,reason", [
    (_cut, "it does not match its header's checksum: damaged or altered"),
    (_header_only, "its header is not JSON"),
    (_foreign, "it does not start with Lodestar's header"),
])
def test_a_damaged_file_is_refused_in_one_line(tmp_path, damage, reason):
    path = _wofe_file(tmp_path)
    damage(path)
    assert _refusal(path) == (f"wofe.pkl is not a valid Lodestar prospectivity model ({reason}): it is not loaded. "
                              f"{RETRAIN}")


def _loop_back(structure, arrays):
    """A forest's first split sends its rows back to the root (a loop, were it followed)."""
    first = int(np.flatnonzero(arrays["model.left"] >= 0)[0])
    arrays["model.left"][first] = 0


def _child_beyond(structure, arrays):
    arrays["model.right"][0] = 10 ** 9


def _feature_beyond(structure, arrays):
    arrays["model.feature"][0] = 17


def _float32_thresholds(structure, arrays):
    arrays["model.threshold"] = arrays["model.threshold"].astype("float32")


def _no_values(structure, arrays):
    del arrays["model.value"]


def _other_mode(structure, arrays):
    structure["model"]["encoder"]["mode"] = "native"


def _extra_key(structure, arrays):
    structure["model"]["encoder"]["__reduce__"] = ["os.system", "true"]


def _fewer_layers(structure, arrays):
    structure["columns"] = structure["columns"][:1]


@pytest.mark.parametrize("tamper,reason", [
    (_loop_back, "model: a split's child lies outside its tree or before it, or its feature outside the 12 columns"),
    (_child_beyond, "model: a split's child lies outside its tree or before it, or its feature outside the 12 columns"),
    (_feature_beyond, "model: a split's child lies outside its tree or before it, or its feature outside the 12 "
                      "columns"),
    (_float32_thresholds, "the array model.threshold is float32 of shape"),
    (_no_values, "the array model.value is missing"),
    (_other_mode, "encoder is not a raw encoding of 3 layers"),
    (_extra_key, "encoder (Encoder) holds '__reduce__', 'class', 'fill', 'indicator', 'mode', not 'class', 'fill', "
                 "'indicator', 'mode'"),
    (_fewer_layers, "encoder is not a raw encoding of 1 layers"),
])
@sklearn
def test_a_tampered_file_with_its_checksum_worked_out_again_is_refused_in_one_line(tmp_path, tamper, reason):
    columns, x, deposits = _data()
    model = models.fit_model("forest", columns, x, deposits, np.ones(len(x)), {"min_samples_leaf": 20}, 1.0)
    save_model(tmp_path / "forest.pkl", model, {})
    header, structure, arrays = _parts(tmp_path / "forest.pkl")
    tamper(structure, arrays)
    _forge_format_3(tmp_path / "tampered.pkl", header, structure, arrays)
    message = _refusal(tmp_path / "tampered.pkl")
    assert message.startswith(f"tampered.pkl is not a valid Lodestar prospectivity model ({reason}")
    assert message.endswith(RETRAIN)


def test_a_header_that_does_not_describe_its_model_is_refused(tmp_path):
    header, structure, arrays = _parts(_wofe_file(tmp_path))
    for change in ({"method": "forest"}, {"layers": header["layers"][:1]}, {"out_of_fold_auc": "0.9; rm -rf"}):
        _forge_format_3(tmp_path / "forged.pkl", dict(header, **change), structure, arrays)
        assert "its header does not describe its model" in _refusal(tmp_path / "forged.pkl")


def test_any_byte_of_the_structure_or_bit_of_an_array_changed_is_refused_in_one_line_or_read_as_a_model(tmp_path):
    """One byte of the structure or one bit of an array changed, the file written again whole (its checksum and the
    .npz's CRCs right): every file loads as a model that predicts, or is refused with one LodestarError line (never
    another exception, never a hang)."""
    columns, x, deposits = _data(n=400)
    methods = models.METHODS if SKLEARN else ("wofe",)
    params = {"forest": {"min_samples_leaf": 20}, "boosting": {"max_leaf_nodes": 7, "min_samples_leaf": 20}}
    members = [models.fit_model(m, columns, x, deposits, np.ones(len(x)), params.get(m, {}), 1.0) for m in methods]
    save_model(tmp_path / "model.pkl", models.EnsembleModel(members).fit(columns, x), {})
    header, structure, arrays = _parts(tmp_path / "model.pkl")
    text, names = json.dumps(structure).encode(), sorted(arrays)
    rng = np.random.default_rng(0)
    outcomes = {"loaded": 0, "refused": 0}
    for turn in range(300):
        changed_structure, changed_arrays = structure, arrays
        if turn % 2:
            changed = bytearray(text)
            at = rng.integers(len(text))
            changed[at] = (changed[at] + int(rng.integers(1, 256))) % 256
            try:
                changed_structure = json.loads(bytes(changed).decode("utf-8", "replace"))
            except json.JSONDecodeError:
                continue
        else:
            name = names[rng.integers(len(names))]
            changed_arrays = dict(arrays, **{name: arrays[name].copy()})
            bits = changed_arrays[name].view(np.uint8).reshape(-1)
            bits[rng.integers(len(bits))] ^= np.uint8(1 << int(rng.integers(8)))
        _forge_format_3(tmp_path / "changed.pkl", header, changed_structure, changed_arrays)
        try:
            _, model = load_model(tmp_path / "changed.pkl")
        except LodestarError as exc:
            assert "\n" not in str(exc) and str(exc).endswith(RETRAIN)
            outcomes["refused"] += 1
            continue
        assert model.predict(_rows(x)).shape == (len(x) + 4,)
        outcomes["loaded"] += 1
    assert outcomes["refused"] > 40 and outcomes["loaded"] > 40


# --------------------------------------------------------------------------- (e) a model read back predicts the same
@sklearn
@pytest.mark.parametrize("method", [*models.METHODS, models.ENSEMBLE])
def test_every_model_read_back_predicts_exactly_what_the_fitted_one_does(tmp_path, method):
    columns, x, deposits = _data()
    weight = np.random.default_rng(1).random(len(x)) + 0.5
    params = {"logistic": {"c": 0.1}, "forest": {"min_samples_leaf": 5},
              "boosting": {"max_leaf_nodes": 15, "min_samples_leaf": 20, "monotone": True}}
    if method == models.ENSEMBLE:
        model = models.EnsembleModel([models.fit_model(m, columns, x, deposits, weight, params.get(m, {}), 1.0)
                                      for m in models.METHODS]).fit(columns, x)
    else:
        model = models.fit_model(method, columns, x, deposits, weight, params.get(method, {}), 1.0)
    header = save_model(tmp_path / "model.pkl", model, {"out_of_fold_auc": 0.75})
    read_header, loaded = load_model(tmp_path / "model.pkl")
    assert read_header == header and loaded.method == method
    assert [layer.name for layer in loaded.columns.layers] == ["grade", "geology", "grade: distance"]
    assert loaded.columns.layers[1].legend == {3: "Skarn", 5: "Granite"}
    rows = _rows(x)
    expected = model.predict(rows)
    assert np.isfinite(expected).all() and len(np.unique(expected)) > 10
    assert np.array_equal(loaded.predict(rows), expected)
    save_model(tmp_path / "again.pkl", loaded, {"out_of_fold_auc": 0.75})  # a model read back is saved the same
    assert np.array_equal(load_model(tmp_path / "again.pkl")[1].predict(rows), expected)
    if method == "wofe":
        assert np.array_equal(loaded.posterior_sd(rows), model.posterior_sd(rows))


# -------------------------------------------------------------------------------- (f) through 'Predict prospectivity'
@pytest.mark.parametrize("forgery", ["old format", "object array"])
def test_predict_prospectivity_refuses_a_forged_file_in_one_line_and_runs_none_of_it(run, tmp_path, forgery):
    from qgis.core import QgsProcessingException

    marker = tmp_path / "marker"
    forged = tmp_path / "forged.pkl"
    if forgery == "old format":
        _old_format(forged, marker)
        reason = "is a Lodestar model of format 2, written as Python objects that run code when loaded"
    else:
        header, structure, arrays = _parts(_wofe_file(tmp_path))
        arrays["patterns.0.area"] = np.array([Marker(marker)], dtype=object)
        _forge_format_3(forged, header, structure, arrays)
        reason = "is not a valid Lodestar prospectivity model (it holds an array of Python objects)"
    with pytest.raises(QgsProcessingException) as caught:
        run("lodestar:predict_prospectivity", {"INPUT": [ALOH], "MODEL": str(forged),
                                               "OUTPUT": str(tmp_path / "p.tif")})
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"forged.pkl {reason}") and message.endswith(RETRAIN)
    assert not marker.exists() and not (tmp_path / "p.tif").exists()
