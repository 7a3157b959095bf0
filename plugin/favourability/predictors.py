"""The fitted scikit-learn estimators of models.py as plain arrays, and numpy predictors that give their predictions
bit for bit (scikit-learn 1.2): what a model file holds and what a loaded model predicts with, so that loading a model
needs neither scikit-learn nor any object from the file.

- `LinearScores`: logistic regression's decision function, `x @ coef.T + intercept` as scikit-learn sums it.
- `ForestScores`: a random forest's probability of the second class: each tree's leaf reached by comparing the row's
  values cast to float32 (as scikit-learn casts them) with the node's float64 threshold (`<=` goes left), the leaf's
  class weights normalised, the trees summed in their order from zero, then divided by the number of trees.
- `BoostingScores`: histogram gradient boosting's raw score: the baseline plus each tree's leaf in order. A missing
  value follows the node's missing side; at a categorical split a category in the node's bitset goes left, another
  category seen in training goes right and an unseen one (or a value outside 0-255) follows the missing side; a
  numeric value goes left when `<=` the threshold.

Trees are stored end to end: `starts[t]` is the first node of tree t, child indices count from the tree's first node,
and a child always comes after its parent (as scikit-learn builds them), which the loader checks."""
from __future__ import annotations

import numpy as np

NODE = np.dtype([("value", "<f8"), ("feature", "<u4"), ("threshold", "<f8"), ("missing_left", "u1"), ("left", "<u4"),
                 ("right", "<u4"), ("is_leaf", "u1"), ("is_categorical", "u1"), ("bitset", "<u4")])
"""A gradient-boosting node: the fields of scikit-learn's predictor record that prediction reads."""


def _leaves(root: int, leaf, left, right, rows: int, goes_left) -> np.ndarray:
    """The node (counted over all trees) where each of `rows` rows ends in the tree whose root is `root`: from the root,
    each node's rows split by `goes_left(node, rows)` between its children (`leaf`: whether each node is a leaf)."""
    out = np.empty(rows, dtype=np.int64)
    stack = [(root, np.arange(rows))]
    while stack:
        node, at = stack.pop()
        if leaf[node]:
            out[at] = node
        elif len(at):
            left_rows = goes_left(node, at)
            stack += [(left[node], at[left_rows]), (right[node], at[~left_rows])]
    return out


class LinearScores:
    """A linear decision function (logistic regression): coef_ (1, columns), intercept_ (1,)."""

    def __init__(self, coef: np.ndarray, intercept: np.ndarray):
        self.coef_, self.intercept_ = coef, intercept

    @classmethod
    def of(cls, estimator) -> LinearScores:
        return cls(np.array(estimator.coef_, dtype="<f8"), np.array(estimator.intercept_, dtype="<f8"))

    def decision_function(self, x: np.ndarray) -> np.ndarray:
        return (np.asarray(x, dtype=np.float64) @ self.coef_.T + self.intercept_).reshape(-1)


class ForestScores:
    """A forest of classification trees: per node (all trees end to end) left, right (-1 at a leaf), feature,
    threshold and the classes' weights; `starts`: each tree's first node, then the node count."""

    def __init__(self, starts, left, right, feature, threshold, value):
        self.starts, self.left, self.right = starts, left, right
        self.feature, self.threshold, self.value = feature, threshold, value
        first = np.repeat(starts[:-1], np.diff(starts))
        self._leaf = left < 0
        self._left, self._right = first + left, first + right
        total = value.sum(axis=1)[:, None]
        self._proba = value / np.where(total == 0.0, 1.0, total)

    @classmethod
    def of(cls, estimator) -> ForestScores:
        trees = [tree.tree_ for tree in estimator.estimators_]
        starts = np.cumsum([0] + [tree.node_count for tree in trees]).astype("<i8")
        left, right, feature, threshold = (np.concatenate([getattr(tree, name) for tree in trees]).astype(dtype)
                                           for name, dtype in (("children_left", "<i8"), ("children_right", "<i8"),
                                                               ("feature", "<i8"), ("threshold", "<f8")))
        return cls(starts, left, right, feature, threshold,
                   np.concatenate([tree.value[:, 0, :] for tree in trees]).astype("<f8"))

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        """(rows, classes): each class's probability."""
        columns = np.asarray(x, dtype=np.float32).astype(np.float64).T.copy()

        def goes_left(node, rows):
            return columns[self.feature[node]][rows] <= self.threshold[node]

        total = np.zeros((len(columns.T), self.value.shape[1]))
        for root in self.starts[:-1]:
            total += self._proba[_leaves(root, self._leaf, self._left, self._right, len(total), goes_left)]
        total /= len(self.starts) - 1
        return total


class BoostingScores:
    """Gradient-boosted trees of one score: `nodes` (NODE, all trees end to end) from `starts`; `bitsets` (uint32 x 8
    per categorical split, end to end from `bitset_starts`): the categories each split sends left; `known` (uint32 x 8
    per categorical column) the categories seen in training, the row of column j at `column_map[j]`; `baseline`."""

    def __init__(self, baseline: float, starts, nodes, bitset_starts, bitsets, known, column_map):
        self.baseline, self.starts, self.nodes = baseline, starts, nodes
        self.bitset_starts, self.bitsets, self.known, self.column_map = bitset_starts, bitsets, known, column_map
        tree = np.repeat(np.arange(len(starts) - 1), np.diff(starts))
        self._leaf = nodes["is_leaf"].astype(bool)
        self._left, self._right = starts[tree] + nodes["left"], starts[tree] + nodes["right"]
        self._feature, self._threshold = nodes["feature"].astype(np.int64), nodes["threshold"]
        self._missing_left, self._categorical = nodes["missing_left"].astype(bool), nodes["is_categorical"].astype(bool)
        self._bitset = bitset_starts[tree] + nodes["bitset"]

    @classmethod
    def of(cls, estimator) -> BoostingScores:
        trees = [predictor for iteration in estimator._predictors for predictor in iteration]
        record = np.concatenate([tree.nodes for tree in trees])
        nodes = np.zeros(len(record), dtype=NODE)
        for name, theirs in (("value", "value"), ("feature", "feature_idx"), ("threshold", "num_threshold"),
                             ("missing_left", "missing_go_to_left"), ("left", "left"), ("right", "right"),
                             ("is_leaf", "is_leaf"), ("is_categorical", "is_categorical"), ("bitset", "bitset_idx")):
            nodes[name] = record[theirs]
        known, column_map = estimator._bin_mapper.make_known_categories_bitsets()
        bitsets = [tree.raw_left_cat_bitsets.reshape(-1, 8) for tree in trees]
        return cls(float(np.asarray(estimator._baseline_prediction).reshape(-1)[0]),
                   np.cumsum([0] + [len(tree.nodes) for tree in trees]).astype("<i8"), nodes,
                   np.cumsum([0] + [len(b) for b in bitsets]).astype("<i8"), np.concatenate(bitsets).astype("<u4"),
                   np.asarray(known, dtype="<u4").reshape(-1, 8), np.asarray(column_map, dtype="<u4"))

    def decision_function(self, x: np.ndarray) -> np.ndarray:
        columns = np.asarray(x, dtype=np.float64).T.copy()

        def goes_left(node, rows):
            value = columns[self._feature[node]][rows]
            left = self._category_left(value, node) if self._categorical[node] else value <= self._threshold[node]
            left[np.isnan(value)] = self._missing_left[node]
            return left

        score = np.full(len(columns.T), self.baseline)
        for root in self.starts[:-1]:
            score += self.nodes["value"][_leaves(root, self._leaf, self._left, self._right, len(score), goes_left)]
        return score

    def _category_left(self, value: np.ndarray, node: int) -> np.ndarray:
        """Whether categories `value` at the categorical node `node` go left (NaN is decided by the caller)."""
        inside = (value >= 0) & (value < 256)
        code = np.where(inside, value, 0).astype(np.int64)
        word, bit = code // 32, (code % 32).astype(np.uint32)
        sent_left = (self.bitsets[self._bitset[node], word] >> bit) & 1 == 1
        seen = (self.known[self.column_map[self._feature[node]], word] >> bit) & 1 == 1
        return np.where(inside & sent_left, True, np.where(inside & seen, False, self._missing_left[node]))
