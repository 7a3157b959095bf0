"""A fitted model (models.py) as data, and back: a structure of JSON values (each object's class, its parameters, the
layers it expects) and numeric arrays named by where they sit in it (`patterns.0.w_plus`, `members.2.model.left`).

Scikit-learn estimators are written as the arrays their predictions are made of (predictors.py), so a model read
back predicts as the fitted one did, with numpy alone. Reading builds only Lodestar's own classes, from ALLOWED,
each where the structure expects one (a class the file names is looked up in that list, never imported): models and
encoders with `cls.__new__` and their attributes set (their constructors fit), the data classes with their
constructors. Every value is checked before it is used: the structure's keys and types, every array's name, dtype
and shape, the trees' child indices (within their tree, after their parent, so that every path ends at a leaf), the
features within the encoded columns and the categorical splits' bitsets within their tree's; an array the structure
does not name is refused too. Anything else raises InvalidModel with the reason."""
from __future__ import annotations

import numpy as np

from .measured import CATEGORICAL, ORDERED, MeasuredLayer
from .models import (
    MAX_ONE_HOT,
    QUANTILES,
    BoostingModel,
    Columns,
    Encoder,
    EnsembleModel,
    ForestModel,
    LogisticModel,
    WofeModel,
)
from .predictors import NODE, BoostingScores, ForestScores, LinearScores
from .wofe import OTHER, CategoricalWeights, Generalisation, Weights

TREE_MODELS: dict[str, tuple[str, type[LinearScores] | type[ForestScores] | type[BoostingScores]]] = {
    "LogisticModel": ("quantile", LinearScores), "ForestModel": ("raw", ForestScores),
    "BoostingModel": ("native", BoostingScores)}
"""The models holding an encoder and an estimator: the encoder's mode and the estimator's class, by model class."""
MEMBERS = {"WofeModel": ("n_deposits", "prior", "patterns"), **{name: ("encoder", "model") for name in TREE_MODELS}}
"""The classes an ensemble's member may be, with the keys each holds."""
MODELS = {**MEMBERS, "EnsembleModel": ("members",)}
ALLOWED = {cls.__name__: cls for cls in (WofeModel, LogisticModel, ForestModel, BoostingModel, EnsembleModel, Encoder,
                                         Generalisation, CategoricalWeights, LinearScores, ForestScores,
                                         BoostingScores)}
"""The only classes a model file's structure may name."""
WEIGHTS = tuple(Weights.__dataclass_fields__)
FLAGS = ("defined", "usable")
"""The weights' fields that are booleans (the others float64)."""
LAYER_KEYS = ("name", "kind", "units", "favourable", "legend", "source")


class InvalidModel(ValueError):
    """A model's data that do not make a Lodestar model, with the reason."""


# ----------------------------------------------------------------------------------------------------------- writing
def model_data(model) -> tuple[dict, dict]:
    """(structure, {name: array}) of a fitted model; its layers' data are not kept, only what they are."""
    arrays: dict[str, np.ndarray] = {}
    return {"columns": [_layer_entry(layer) for layer in model.columns.layers],
            "model": _model(model, "", arrays)}, arrays


def _layer_entry(layer: MeasuredLayer) -> dict:
    return {"name": layer.name, "kind": layer.kind, "units": layer.units, "favourable": layer.favourable,
            "legend": [[int(code), str(name)] for code, name in layer.legend.items()], "source": layer.source}


def _model(model, prefix: str, arrays: dict) -> dict:
    name = type(model).__name__
    if isinstance(model, EnsembleModel):
        for i, reference in enumerate(model.references):
            arrays[f"{prefix}references.{i}"] = np.asarray(reference, dtype="<f8")
        return {"class": name, "members": [_model(member, f"{prefix}members.{i}.", arrays)
                                           for i, member in enumerate(model.members)]}
    if isinstance(model, WofeModel):
        return {"class": name, "n_deposits": float(model.n_deposits), "prior": float(model.prior),
                "patterns": [_pattern(g, f"{prefix}patterns.{j}.", arrays) for j, g in enumerate(model.patterns)]}
    estimator_class = TREE_MODELS[name][1]
    estimator = model.model if isinstance(model.model, estimator_class) else estimator_class.of(model.model)
    if isinstance(model, LogisticModel):
        arrays[f"{prefix}mean"], arrays[f"{prefix}scale"] = (np.asarray(a, dtype="<f8") for a in (model.mean,
                                                                                                   model.scale))
    return {"class": name, "encoder": _encoder(model.encoder, f"{prefix}encoder.", arrays),
            "model": _estimator(estimator, f"{prefix}model.", arrays)}


def _pattern(g, prefix: str, arrays: dict):
    if g is None:
        return None
    for field in WEIGHTS:
        arrays[prefix + field] = np.asarray(getattr(g.table, field), dtype=bool if field in FLAGS else "<f8")
    if isinstance(g, CategoricalWeights):
        arrays[prefix + "codes"] = np.asarray(g.codes, dtype="<f8")
        return {"class": "CategoricalWeights", "merged": [float(c) for c in g.merged]}
    return {"class": "Generalisation", "threshold": float(g.threshold), "ascending": bool(g.ascending),
            "best": int(g.best)}


def _encoder(encoder: Encoder, prefix: str, arrays: dict) -> dict:
    fill: list[bool | float | None] = []
    for j, categorical in enumerate(encoder.columns.categorical):
        if categorical:
            arrays[f"{prefix}units.{j}"] = np.asarray(encoder.units[j], dtype="<f8")
            if encoder.fill[j] is not None:
                arrays[f"{prefix}fill.{j}"] = np.asarray(encoder.fill[j], dtype="<f8")
            fill.append(None if encoder.fill[j] is None else True)
        else:
            arrays[f"{prefix}quantiles.{j}"] = np.asarray(encoder.quantiles[j], dtype="<f8")
            fill.append(float(encoder.fill[j]))
    return {"class": "Encoder", "mode": encoder.mode, "indicator": [bool(i) for i in encoder.indicator],
            "fill": fill}


def _estimator(estimator, prefix: str, arrays: dict) -> dict:
    if isinstance(estimator, LinearScores):
        arrays[prefix + "coef"], arrays[prefix + "intercept"] = estimator.coef_, estimator.intercept_
        return {"class": "LinearScores"}
    names = ("starts", "left", "right", "feature", "threshold", "value") if isinstance(estimator, ForestScores) else (
        "starts", "nodes", "bitset_starts", "bitsets", "known", "column_map")
    arrays.update({prefix + name: getattr(estimator, name) for name in names})
    if isinstance(estimator, ForestScores):
        return {"class": "ForestScores"}
    return {"class": "BoostingScores", "baseline": float(estimator.baseline)}


# ----------------------------------------------------------------------------------------------------------- reading
class _Arrays:
    """The file's arrays, each taken by the name the structure gives it, with the dtype and shape it must have."""

    def __init__(self, arrays: dict):
        self.arrays = arrays
        self.taken: set[str] = set()

    def take(self, name: str, dtype, shape: tuple) -> np.ndarray:
        """The array `name`, of `dtype` and `shape` (None: any length)."""
        array = self.arrays.get(name)
        if array is None:
            raise InvalidModel(f"the array {name} is missing")
        dtype = np.dtype(dtype)
        if array.dtype != dtype or array.ndim != len(shape) or any(
                want is not None and n != want for n, want in zip(array.shape, shape)):
            raise InvalidModel(f"the array {name} is {array.dtype} of shape {array.shape}, not {dtype} of shape "
                               f"{tuple('n' if want is None else want for want in shape)}")
        self.taken.add(name)
        return array

    def check_all_taken(self) -> None:
        extra = sorted(set(self.arrays) - self.taken)
        if extra:
            raise InvalidModel(f"{len(extra)} array(s) are no part of the model, such as {extra[0]!r}")


KINDS = {"str": lambda v: isinstance(v, str), "bool": lambda v: isinstance(v, bool),
         "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
         "real": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
         "list": lambda v: isinstance(v, list)}
"""The JSON types a value is checked to have ('real': an int or a float; a bool is neither)."""


def _value(node, key: str | int, kind: str, where: str):
    """node[key] (`node` an object, or a list and `key` an index), checked to be of `kind` (KINDS; 'real': an int
    or a float, as a float)."""
    value = node[key]
    if not KINDS[kind](value):
        raise InvalidModel(f"{where}{key} is not a {kind}")
    return float(value) if kind == "real" else value


def _class(node, where: str, classes: dict) -> str:
    """The class an object of the structure names, one of `classes` ({name: the keys it holds besides "class"}), once
    its keys are those."""
    where = where.rstrip(".") or "the model"
    if not isinstance(node, dict):
        raise InvalidModel(f"{where} is not an object")
    name = node.get("class")
    if not isinstance(name, str) or name not in classes:
        raise InvalidModel(f"{where} names the class {name!r}, not one of {', '.join(classes)}")
    keys = classes[name]
    if set(node) != {"class", *keys}:
        raise InvalidModel(f"{where} ({name}) holds {', '.join(map(repr, sorted(node)))}, not "
                           f"{', '.join(map(repr, sorted({'class', *keys})))}")
    return name


def _new(cls, **attributes):
    """An instance of an allowed class with these (checked) attributes; its constructor (which fits) is not run."""
    obj = cls.__new__(cls)
    obj.__dict__.update(attributes)
    return obj


def read_model(structure, arrays: dict):
    """The model `model_data` wrote as (structure, arrays); InvalidModel when they are not one."""
    if not isinstance(structure, dict) or set(structure) != {"columns", "model"}:
        raise InvalidModel("its structure does not hold exactly the layers and the model")
    columns = _columns(_value(structure, "columns", "list", ""))
    taken = _Arrays(arrays)
    model = _model_of(structure["model"], "", columns, taken, MODELS)
    taken.check_all_taken()
    return model


def _columns(entries: list) -> Columns:
    if not entries:
        raise InvalidModel("it lists no layers")
    layers = []
    for i, entry in enumerate(entries):
        where = f"layer {i + 1}: "
        if not isinstance(entry, dict) or set(entry) != set(LAYER_KEYS):
            raise InvalidModel(f"{where}not an object of {', '.join(LAYER_KEYS)}")
        name, kind, units, favourable, legend, source = (
            _value(entry, key, "list" if key == "legend" else "str", where) for key in LAYER_KEYS)
        if kind not in (CATEGORICAL, ORDERED):
            raise InvalidModel(f"{where}kind {kind!r} is neither {CATEGORICAL} nor {ORDERED}")
        if not all(isinstance(pair, list) and len(pair) == 2 and KINDS["int"](pair[0]) and isinstance(pair[1], str)
                   for pair in legend):
            raise InvalidModel(f"{where}the legend is not a list of [code, name]")
        layers.append(MeasuredLayer(name, kind, np.ma.masked_array(np.zeros(0)), units, favourable, dict(legend),
                                    source))
    return Columns(layers)


def _model_of(node, prefix: str, columns: Columns, arrays: _Arrays, classes: dict):
    name = _class(node, prefix, classes)
    if name == "EnsembleModel":
        members = _value(node, "members", "list", prefix)
        if not members:
            raise InvalidModel("the ensemble has no members")
        members = [_model_of(member, f"{prefix}members.{i}.", columns, arrays, MEMBERS)
                   for i, member in enumerate(members)]
        references = [arrays.take(f"{prefix}references.{i}", "<f8", (None,)) for i in range(len(members))]
        if not all(len(reference) for reference in references):
            raise InvalidModel("an ensemble member has no reference scores")
        return _new(EnsembleModel, columns=columns, members=members, references=references)
    if name == "WofeModel":
        patterns = _value(node, "patterns", "list", prefix)
        if len(patterns) != len(columns):
            raise InvalidModel(f"{prefix}patterns: {len(patterns)} for {len(columns)} layers")
        return _new(WofeModel, columns=columns, n_deposits=_value(node, "n_deposits", "real", prefix),
                    prior=_value(node, "prior", "real", prefix),
                    patterns=[_pattern_of(g, f"{prefix}patterns.{j}.", bool(columns.categorical[j]), arrays)
                              for j, g in enumerate(patterns)])
    mode, estimator_class = TREE_MODELS[name]
    encoder = _encoder_of(node["encoder"], f"{prefix}encoder.", columns, mode, arrays)
    width = _encoded_width(encoder)
    attributes = {"columns": columns, "encoder": encoder,
                  "model": _estimator_of(node["model"], f"{prefix}model.", estimator_class, encoder, width, arrays)}
    if name == "LogisticModel":
        attributes.update(mean=arrays.take(f"{prefix}mean", "<f8", (width,)),
                          scale=arrays.take(f"{prefix}scale", "<f8", (width,)))
    return _new(ALLOWED[name], **attributes)


def _pattern_of(node, prefix: str, categorical: bool, arrays: _Arrays):
    if node is None:
        return None
    name = _class(node, prefix, {"CategoricalWeights": ("merged",)} if categorical else {
        "Generalisation": ("threshold", "ascending", "best")})
    codes = arrays.take(prefix + "codes", "<f8", (None,)) if categorical else None
    count = len(codes) if codes is not None else len(arrays.take(prefix + "area", "<f8", (None,)))
    table = Weights(**{field: arrays.take(prefix + field, bool if field in FLAGS else "<f8", (count,))
                       for field in WEIGHTS})
    if not count:
        raise InvalidModel(f"{prefix.rstrip('.')} weighs no class")
    if name == "CategoricalWeights":
        merged = _value(node, "merged", "list", prefix)
        assert codes is not None  # categorical
        if codes[-1] != OTHER or not all(KINDS["real"](code) for code in merged):
            raise InvalidModel(f"{prefix.rstrip('.')}: its last class is not 'other', or a merged code is no number")
        return CategoricalWeights(codes, table, tuple(float(code) for code in merged))
    best = _value(node, "best", "int", prefix)
    if not 0 <= best < count:
        raise InvalidModel(f"{prefix}best ({best}) is not one of its {count} patterns")
    return Generalisation(_value(node, "threshold", "real", prefix), _value(node, "ascending", "bool", prefix), table,
                          best)


def _encoder_of(node, prefix: str, columns: Columns, mode: str, arrays: _Arrays) -> Encoder:
    _class(node, prefix, {"Encoder": ("mode", "indicator", "fill")})
    indicator, fill = (_value(node, key, "list", prefix) for key in ("indicator", "fill"))
    if node["mode"] != mode or len(indicator) != len(columns) or len(fill) != len(columns) or not all(
            KINDS["bool"](i) for i in indicator):
        raise InvalidModel(f"{prefix.rstrip('.')} is not a {mode} encoding of {len(columns)} layers")
    units: list[np.ndarray | None] = []
    quantiles: list[np.ndarray | None] = []
    fills: list[np.ndarray | float | None] = []
    for j, categorical in enumerate(columns.categorical):
        if categorical:
            kept = arrays.take(f"{prefix}units.{j}", "<f8", (None,))
            if len(kept) > MAX_ONE_HOT or not (fill[j] is None or fill[j] is True):
                raise InvalidModel(f"{prefix}units.{j}: more than {MAX_ONE_HOT} units, or a fill that is no array")
            units.append(kept)
            quantiles.append(None)
            fills.append(None if fill[j] is None else arrays.take(f"{prefix}fill.{j}", "<f8", (len(kept) + 1,)))
        else:
            units.append(None)
            quantiles.append(arrays.take(f"{prefix}quantiles.{j}", "<f8", (QUANTILES,)))
            fills.append(_value(fill, j, "real", f"{prefix}fill."))
    return _new(Encoder, columns=columns, mode=mode, quantiles=quantiles, units=units, fill=fills,
                indicator=indicator)


def _encoded_width(encoder: Encoder) -> int:
    """The number of columns `encoder.transform` makes."""
    width = 0
    for j, categorical in enumerate(encoder.columns.categorical):
        width += len(encoder.units[j]) + 1 if categorical and encoder.mode != "native" else 1
        width += int(encoder.indicator[j] and encoder.mode != "native")
    return width


def _estimator_of(node, prefix: str, cls, encoder: Encoder, width: int, arrays: _Arrays):
    if cls is LinearScores:
        _class(node, prefix, {"LinearScores": ()})
        return LinearScores(arrays.take(prefix + "coef", "<f8", (1, width)), arrays.take(prefix + "intercept", "<f8",
                                                                                         (1,)))
    if cls is ForestScores:
        _class(node, prefix, {"ForestScores": ()})
        starts = arrays.take(prefix + "starts", "<i8", (None,))
        count = _check_starts(starts, prefix + "starts", None)
        left, right, feature = (arrays.take(prefix + name, "<i8", (count,)) for name in ("left", "right", "feature"))
        _check_trees(prefix, starts, left < 0, left, right, feature, width)
        return ForestScores(starts, left, right, feature, arrays.take(prefix + "threshold", "<f8", (count,)),
                            arrays.take(prefix + "value", "<f8", (count, 2)))
    _class(node, prefix, {"BoostingScores": ("baseline",)})
    starts = arrays.take(prefix + "starts", "<i8", (None,))
    nodes = arrays.take(prefix + "nodes", NODE, (_check_starts(starts, prefix + "starts", None),))
    bitset_starts = arrays.take(prefix + "bitset_starts", "<i8", (len(starts),))
    bitsets = arrays.take(prefix + "bitsets", "<u4", (None, 8))
    known = arrays.take(prefix + "known", "<u4", (None, 8))
    column_map = arrays.take(prefix + "column_map", "<u4", (width,))
    _check_starts(bitset_starts, prefix + "bitset_starts", len(bitsets))
    leaf = nodes["is_leaf"] != 0
    _check_trees(prefix, starts, leaf, nodes["left"].astype(np.int64), nodes["right"].astype(np.int64),
                 nodes["feature"].astype(np.int64), width)
    split = ~leaf & (nodes["is_categorical"] != 0)
    tree = np.repeat(np.arange(len(starts) - 1), np.diff(starts))[split]
    feature = nodes["feature"][split].astype(np.int64)
    if not (np.asarray(encoder.columns.categorical)[feature].all()
            and (nodes["bitset"][split] < np.diff(bitset_starts)[tree]).all()
            and (column_map[feature] < len(known)).all()):
        raise InvalidModel(f"{prefix.rstrip('.')}: a categorical split lies on an ordered column or outside its "
                           "bitsets")
    return BoostingScores(_value(node, "baseline", "real", prefix), starts, nodes, bitset_starts, bitsets, known,
                          column_map)


def _check_starts(starts: np.ndarray, name: str, total: int | None) -> int:
    """The count `starts` ends at, once it starts at 0, never goes down and ends at `total` (when given); a tree's
    nodes (`total` None) are at least one."""
    steps = np.diff(starts)
    if len(starts) < 2 or starts[0] != 0 or (steps < (1 if total is None else 0)).any() or (
            total is not None and starts[-1] != total):
        raise InvalidModel(f"{name} does not divide the nodes into trees")
    return int(starts[-1])


def _check_trees(prefix: str, starts, leaf, left, right, feature, width: int) -> None:
    """Each split's children within its tree and after it (so that every path ends at a leaf), its feature within the
    `width` encoded columns."""
    sizes = np.diff(starts)
    first, size = np.repeat(starts[:-1], sizes), np.repeat(sizes, sizes)
    at = np.flatnonzero(~leaf)
    local = at - first[at]
    if not ((left[at] > local) & (left[at] < size[at]) & (right[at] > local) & (right[at] < size[at])
            & (feature[at] >= 0) & (feature[at] < width)).all():
        raise InvalidModel(f"{prefix.rstrip('.')}: a split's child lies outside its tree or before it, or its feature "
                           f"outside the {width} columns")
