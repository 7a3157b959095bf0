"""Weights of evidence as separate steps over several layers at once: each layer weighed as the user chooses
(unique classes, categorical classes, cumulative ascending or descending, or automatically as the analysis does),
its full weights table, its generalised classes, and the response (posterior, its standard deviation, confidence).

The weighing and the response are models.WofeModel's (the analysis's own): a layer's patterns come from
wofe.categorical_generalise (unique: every class kept; categorical: classes under 2 deposits merged into 'other')
or wofe.generalise (cumulative, automatic threshold of maximum studentised contrast, or the one nearest a
threshold set in the layer's units).
"""
from __future__ import annotations

from typing import Literal, get_args

import numpy as np

from ..errors import LodestarError
from .models import Columns, WofeModel
from .wofe import (
    MIN_CLASS_DEPOSITS,
    CategoricalWeights,
    Generalisation,
    categorical_generalise,
    class_breaks,
    generalise,
    prior_logit,
)

Weighing = Literal["automatic", "unique", "categorical", "ascending", "descending"]
"""How a layer is weighed: automatic (unit maps by class, as categorical; other layers cumulative in the direction
of larger contrast), by class (every class, or classes under 2 deposits merged), or cumulative either way."""
KINDS: tuple[Weighing, ...] = get_args(Weighing)


class StepWofe(WofeModel):
    """A WofeModel whose layers are weighed as `kinds` says ({layer name: one of KINDS}); `thresholds`:
    {layer name: cut-off in its units} for cumulative layers."""

    def __init__(self, kinds: dict[str, Weighing], cell_units: float = 1.0, thresholds: dict | None = None):
        super().__init__(cell_units, thresholds)
        self.kinds = dict(kinds)

    def fit(self, columns: Columns, x, deposits, weight=None) -> StepWofe:
        """Weigh each layer as its kind says on the rows `x` holding `deposits` (counts per row; `weight` unused, as
        weights of evidence counts cells)."""
        thresholds, cell_units = self.thresholds or {}, self.cell_units
        kinds = {name: self.kinds.get(name, "automatic") for name in columns.names}
        for name, kind in kinds.items():
            if kind not in KINDS:
                raise LodestarError(f"{name}: the weighing must be one of {', '.join(KINDS)}, not {kind!r}.")
        unknown = sorted(set(thresholds) - set(columns.names))
        if unknown:
            raise LodestarError(f"Thresholds name layers not given: {', '.join(unknown)}; layers: "
                                f"{', '.join(columns.names)}.")
        categorical = [kinds[n] in ("unique", "categorical") or (kinds[n] == "automatic" and c)
                       for n, c in zip(columns.names, columns.categorical)]
        for name in thresholds:
            if categorical[columns.names.index(name)]:
                raise LodestarError(f"{name} is weighed by class: a threshold applies to cumulative weighing only.")
        self.columns = Columns(columns.layers)
        self.columns.categorical = np.array(categorical, dtype=bool)
        self.kinds = kinds
        self.n_deposits = float(deposits.sum())
        if self.n_deposits < 1:
            raise LodestarError("No known deposit lies on cells with evidence: weights of evidence needs at least "
                                "one; check the deposits' extent and CRS.")
        self.prior = prior_logit(len(deposits) * cell_units, self.n_deposits)
        self.patterns = []
        self.breaks: list[np.ndarray | None] = []
        for j, name in enumerate(columns.names):
            column = x[:, j]
            known = ~np.isnan(column)
            kind = kinds[name]
            self.breaks.append(None if categorical[j] or not known.any() else class_breaks(column[known]))
            if categorical[j]:
                minimum = 0 if kind == "unique" else MIN_CLASS_DEPOSITS
                self.patterns.append(categorical_generalise(np.rint(column[known]), deposits[known], cell_units,
                                                            minimum))
                continue
            sides = {"ascending": (True,), "descending": (False,)}.get(kind, (False, True))
            if kind == "automatic" and name in thresholds:
                sides = (columns.layers[j].favourable == "low",)
            found = [generalise(column[known], deposits[known], cell_units, ascending=a,
                                threshold=thresholds.get(name), breaks=self.breaks[j]) for a in sides]
            usable = [g for g in found if g is not None]
            self.patterns.append(max(usable, key=lambda g: g.table.studentised[g.best]) if usable else None)
        return self

    def class_codes(self, x: np.ndarray) -> np.ndarray:
        """The generalised class of each row per layer (int16 columns): 2 in a cumulative pattern and 1 outside;
        a categorical class's position in the table plus 1; 0 where the layer has no data or no pattern."""
        out = np.zeros(x.shape, dtype="int16")
        for j, g in enumerate(self.patterns):
            if g is None:
                continue
            state, _ = self.layer_state(j, x[:, j])
            shown = state + 1 if self.columns.categorical[j] else 2 - state
            out[:, j] = np.where(state >= 0, shown, 0)
        return out

    def table_rows(self) -> list[dict]:
        """The full weights table: per categorical layer one row per class; per cumulative layer one row per
        cumulative pattern; `generalised` marks the rows the response uses (every class; the chosen pattern)."""
        rows = []
        for j, (layer, g) in enumerate(zip(self.columns.layers, self.patterns)):
            if g is None:
                rows.append({"layer": layer.name, "weighing": self.kinds[layer.name],
                             "class": "no pattern with deposits inside and barren ground on both sides"})
                continue
            t = g.table
            if self.columns.categorical[j]:
                assert isinstance(g, CategoricalWeights)
                labels = ["other units" if c == -1 else layer.class_name(c) for c in g.codes]
                codes: list[str | int | float] = ["" if c == -1 else int(c) for c in g.codes]
                chosen = np.ones(len(codes), dtype=bool)
                kind = "unique" if self.kinds[layer.name] == "unique" else "categorical"
                generalised: list[int | str] = list(range(1, len(codes) + 1))
            else:
                breaks = self.breaks[j]
                assert isinstance(g, Generalisation) and breaks is not None  # a pattern: the layer has values
                side = "<" if g.ascending else ">="
                edges = _edges(breaks, g.ascending)
                labels = [f"{side} {e:.6g}" for e in edges]
                codes = [float(e) for e in edges]
                chosen = np.equal(np.arange(len(edges)), g.best)
                kind = "cumulative " + ("ascending" if g.ascending else "descending")
                generalised = [2 if c else "" for c in chosen]
            for i in range(len(codes)):
                if t.area[i] <= 0:  # the 'other' class when no unit was merged into it
                    continue
                rows.append({"layer": layer.name, "weighing": kind, "class": labels[i], "value": codes[i],
                             "area_units": round(float(t.area[i]), 6), "deposits": float(t.deposits[i]),
                             "w_plus": float(t.w_plus[i]), "s_w_plus": float(t.s_w_plus[i]),
                             "w_minus": float(t.w_minus[i]), "s_w_minus": float(t.s_w_minus[i]),
                             "contrast": float(t.contrast[i]), "s_contrast": float(t.s_contrast[i]),
                             "studentised_contrast": float(t.studentised[i]), "defined": bool(t.defined[i]),
                             "generalised": bool(chosen[i]), "class_code": generalised[i]})
        return rows

    def describe(self, j: int) -> str:
        """One layer's generalisation in words (its pattern in its units, or its classes)."""
        g, layer = self.patterns[j], self.columns.layers[j]
        if g is None:
            return f"{layer.name}: no usable pattern (left out)"
        if self.columns.categorical[j]:
            assert isinstance(g, CategoricalWeights)
            return f"{layer.name}: {len(g.codes) - 1} class(es) weighed, {len(g.merged)} merged into 'other'"
        assert isinstance(g, Generalisation)
        side = "<" if g.ascending else ">="
        return (f"{layer.name}: pattern {side} {g.threshold:.6g} {layer.units}, W+ {g.table.w_plus[g.best]:.3f}, "
                f"W- {g.table.w_minus[g.best]:.3f}, studentised contrast {g.table.studentised[g.best]:.2f}").strip()


def _edges(breaks: np.ndarray, ascending: bool) -> np.ndarray:
    """The threshold of each cumulative pattern in the layer's units (as wofe.generalise sets it)."""
    return np.append(breaks, np.inf)[1:] if ascending else breaks
