"""Weights of evidence against values worked out by hand.

The study area is 100 unit cells holding 6 deposits (N(T) = 100, N(D) = 6, N(~D) = 94). Pattern B covers
20 unit cells holding 4 deposits:
    W+ = ln[(4/6) / (16/94)] = 1.36524      s(W+) = sqrt(1/4 + 1/16) = 0.55902
    W- = ln[(2/6) / (78/94)] = -0.91203     s(W-) = sqrt(1/2 + 1/78) = 0.71612
    C = 2.27727, s(C) = 0.90847, C / s(C) = 2.50670
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from lodestar.plugin.favourability.wofe import (
    OTHER,
    categorical_generalise,
    class_breaks,
    class_weights,
    conditional_independence,
    cumulative_weights,
    generalise,
    pairwise_independence,
    pairwise_line,
    posterior,
    prior_logit,
    weights,
)


def test_binary_pattern_by_hand():
    w = weights(20, 4, 100, 6)
    assert w.w_plus[0] == pytest.approx(math.log((4 / 6) / (16 / 94)))
    assert w.w_minus[0] == pytest.approx(math.log((2 / 6) / (78 / 94)))
    assert (w.w_plus[0], w.w_minus[0]) == pytest.approx((1.36524, -0.91203), abs=1e-5)
    assert w.s_w_plus[0] == pytest.approx(math.sqrt(1 / 4 + 1 / 16))
    assert w.s_w_minus[0] == pytest.approx(math.sqrt(1 / 2 + 1 / 78))
    assert w.contrast[0] == pytest.approx(2.27727, abs=1e-5)
    assert w.s_contrast[0] == pytest.approx(math.sqrt(1 / 4 + 1 / 16 + 1 / 2 + 1 / 78))
    assert w.studentised[0] == pytest.approx(2.50670, abs=1e-5)
    assert w.defined[0]


def test_unit_cells_scale_areas_not_deposits():
    """Cells of 500 m x 500 m are 0.25 unit cells of 1 km2: 80 cells are the 20 unit cells above."""
    values = np.r_[np.ones(80), np.zeros(320)]
    deposits = np.r_[np.ones(4), np.zeros(76), np.ones(2), np.zeros(318)]
    g = generalise(values, deposits, cell_units=500 * 500 / 1e6)
    assert g.threshold == 1.0 and not g.ascending
    assert g.table.area[g.best] == pytest.approx(20) and g.table.deposits[g.best] == 4
    assert g.table.w_plus[g.best] == pytest.approx(math.log((4 / 6) / (16 / 94)))


def test_an_empty_count_is_undefined_and_corrected():
    w = weights(20, 0, 100, 6)
    assert not w.defined[0]
    assert w.w_plus[0] == pytest.approx(math.log((0.5 / 6) / (20 / 94)))  # 0.5 stands for the empty N(B.D)
    assert w.s_w_plus[0] == pytest.approx(math.sqrt(1 / 0.5 + 1 / 20))
    assert not weights(3, 4, 100, 6).defined[0]  # a pattern smaller than its deposits


def test_multi_class_weights_are_each_class_against_the_rest():
    w = class_weights([50, 30, 20], [1, 2, 3])
    # class 2: 20 unit cells with 3 of the 6 deposits
    assert w.w_plus[2] == pytest.approx(math.log((3 / 6) / (17 / 94)))
    assert w.w_minus[2] == pytest.approx(math.log((3 / 6) / (77 / 94)))
    assert w.w_plus[0] == pytest.approx(math.log((1 / 6) / (49 / 94)))
    assert w.s_w_plus[1] == pytest.approx(math.sqrt(1 / 2 + 1 / 28))


# Ordered classes 1..4 over 40, 30, 20, 10 unit cells holding 1, 1, 2, 2 deposits. Descending patterns:
#   >= 4: (10 cells, 2 deposits) W+ = ln[(2/6)/(8/94)],  W- = ln[(4/6)/(86/94)]  C / s(C) = 1.7860
#   >= 3: (30, 4)                W+ = ln[(4/6)/(26/94)], W- = ln[(2/6)/(68/94)]  C / s(C) = 1.8462  <- best
#   >= 2: (60, 5)                W+ = ln[(5/6)/(55/94)], W- = ln[(1/6)/(39/94)]  C / s(C) = 1.1349
#   >= 1: the whole area: N(~B) = 0, undefined
VALUES = np.repeat([1.0, 2.0, 3.0, 4.0], [40, 30, 20, 10])
DEPOSITS = np.zeros(100)
DEPOSITS[[0, 40, 70, 71, 90, 91]] = 1


def test_cumulative_descending_by_hand():
    w = cumulative_weights([40, 30, 20, 10], [1, 1, 2, 2])
    assert list(w.area) == [100, 60, 30, 10] and list(w.deposits) == [6, 5, 4, 2]
    assert list(w.defined) == [False, True, True, True] and list(w.usable) == [False, True, True, True]
    assert w.w_plus[2] == pytest.approx(math.log((4 / 6) / (26 / 94)))
    assert w.w_minus[2] == pytest.approx(math.log((2 / 6) / (68 / 94)))
    assert w.studentised[1:] == pytest.approx([1.1349, 1.8462, 1.7860], abs=1e-4)


def test_generalisation_at_maximum_studentised_contrast():
    g = generalise(VALUES, DEPOSITS, cell_units=1.0)
    assert g.best == 2 and g.threshold == 3.0 and not g.ascending
    assert list(g.contains(np.array([2.9, 3.0, 4.0]))) == [False, True, True]
    assert g.table.studentised[g.best] == pytest.approx(1.8462, abs=1e-4)


def test_ascending_generalisation_is_the_mirror():
    """Distances 5 - value: near is favourable; the pattern is distance <= 2, i.e. < 3 (the next class)."""
    g = generalise(5 - VALUES, DEPOSITS, cell_units=1.0, ascending=True)
    assert g.ascending and g.threshold == 3.0
    assert list(g.contains(np.array([1.0, 2.0, 2.5, 3.0]))) == [True, True, True, False]
    assert g.table.studentised[g.best] == pytest.approx(1.8462, abs=1e-4)


def test_quantile_classes_for_many_values():
    values = np.linspace(0, 1, 1000)
    deposits = np.zeros(1000)
    deposits[-5:] = 1
    g = generalise(values, deposits, cell_units=1.0, max_classes=10)
    assert len(g.table.area) == 10 and g.threshold == pytest.approx(0.9, abs=1e-3)


def test_a_class_map_of_more_classes_than_the_limit_is_cut_at_whole_classes():
    """300 whole-number classes (a reclassified map, or codes), cut into 10 quantile classes: each break is a class
    the map holds (linear quantiles between classes gave breaks such as 30.9), the counts those of the classes."""
    values = np.repeat(np.arange(1, 301, dtype=float), np.arange(1, 301) % 7 + 1)
    breaks = class_breaks(values, max_classes=10)
    assert len(breaks) == 10 and set(breaks) <= set(values) and breaks[0] == 1.0
    assert all(b == np.sort(values)[int(k * len(values) / 10)] for k, b in enumerate(breaks))
    deposits = (values >= 250).astype(float)
    g = generalise(values, deposits, cell_units=1.0, max_classes=10)
    assert g.threshold in set(values) and g.table.area[g.best] == (values >= g.threshold).sum()
    assert class_breaks(values + 0.5, max_classes=10)[1] == pytest.approx(np.quantile(values + 0.5, 0.1))  # reals


def test_a_pattern_holding_every_deposit_is_usable():
    """Top decile: 100 unit cells with all 5 deposits; W- = ln[(0.5/5) / (900/995)] with 0.5 for the empty count."""
    values = np.linspace(0, 1, 1000)
    deposits = np.zeros(1000)
    deposits[-5:] = 1
    g = generalise(values, deposits, cell_units=1.0, max_classes=10)
    w, k = g.table, g.best
    assert not w.defined[k] and w.usable[k] and w.deposits[k] == 5
    assert w.w_minus[k] == pytest.approx(math.log((0.5 / 5) / (900 / 995)))
    assert w.s_w_minus[k] == pytest.approx(math.sqrt(1 / 0.5 + 1 / 900))
    assert not w.usable[0]  # the whole area: no barren area outside


def test_posterior_and_conditional_independence_of_one_layer():
    """One binary layer is conditionally independent of itself: predicted = observed = 6.

    In B the posterior odds are prior odds x e^W+ = (6/94)(4/6)/(16/94) = 4/16, P = 0.2 (20 cells: 4
    deposits); outside, odds (6/94)(2/6)/(78/94) = 2/78, P = 1/40 (80 cells: 2 deposits)."""
    w = weights(20, 4, 100, 6)
    inside = np.r_[np.ones(20, bool), np.zeros(80, bool)]
    logit = prior_logit(100, 6) + np.where(inside, w.w_plus[0], w.w_minus[0])
    variance = np.where(inside, w.s_w_plus[0] ** 2, w.s_w_minus[0] ** 2)
    p, var = posterior(logit, variance, 6)
    assert prior_logit(100, 6) == pytest.approx(math.log(6 / 94))
    assert p[0] == pytest.approx(0.2) and p[-1] == pytest.approx(1 / 40)
    assert var[0] == pytest.approx(0.2 ** 2 * (1 / 6 + 1 / 4 + 1 / 16))
    ci = conditional_independence(p, var, inside.astype(int), 1.0, 6)
    assert ci["predicted"] == pytest.approx(6) and ci["ratio"] == pytest.approx(1) and ci["z"] == pytest.approx(0)
    s2 = 20 ** 2 * 0.2 ** 2 * (1 / 6 + 1 / 4 + 1 / 16) + 80 ** 2 * (1 / 40) ** 2 * (1 / 6 + 1 / 2 + 1 / 78)
    assert ci["sd_predicted"] == pytest.approx(math.sqrt(s2)) and not ci["doubtful"]


def test_a_layer_counted_twice_fails_the_check():
    """The same pattern twice: P in B = o/(1+o) with o = (6/94) e^(2 W+); predicted 10.7 for 6 observed."""
    w = weights(20, 4, 100, 6)
    inside = np.r_[np.ones(20, bool), np.zeros(80, bool)]
    logit = prior_logit(100, 6) + 2 * np.where(inside, w.w_plus[0], w.w_minus[0])
    p, var = posterior(logit, 2 * np.where(inside, w.s_w_plus[0] ** 2, w.s_w_minus[0] ** 2), 6)
    odds_in, odds_out = 6 / 94 * math.exp(2 * w.w_plus[0]), 6 / 94 * math.exp(2 * w.w_minus[0])
    predicted = 20 * odds_in / (1 + odds_in) + 80 * odds_out / (1 + odds_out)
    ci = conditional_independence(p, var, inside.astype(int), 1.0, 6)
    assert ci["predicted"] == pytest.approx(predicted) and predicted == pytest.approx(10.71, abs=0.01)
    assert ci["ratio"] == pytest.approx(6 / predicted) and ci["doubtful"] and ci["z"] > 0


def test_pairwise_independence_by_hand():
    """Deposit cells counted by the classes of A and B (ten deposits, one cell holding two, one cell where C has no
    data): in A and B 6, A only 1, B only 1, neither 2. Expected were A and B independent given a deposit: rows
    7 / 3, columns 7 / 3, so 4.9, 2.1, 2.1, 0.9; chi-square = 1.1^2 (1/4.9 + 2/2.1 + 1/0.9) = 2.7438, 1 df."""
    a = np.array([0, 0, 0, 0, 0, 0, 1, 1, 1])
    b = np.array([0, 0, 0, 0, 0, 1, 0, 1, 1])
    deposits = np.array([2, 1, 1, 1, 1, 1, 1, 1, 1], dtype=float)
    same_as_a = a.copy()
    all_in_one = np.array([0, 0, 0, 0, 0, 0, 0, 0, -1])
    three = np.array([0, 0, 1, 1, 2, 2, 0, 1, 2])
    pairs = {p["layers"]: p for p in pairwise_independence([a, b, same_as_a, all_in_one, three], deposits,
                                                           ["A", "B", "A again", "one class", "three"])}
    ab = pairs[("A", "B")]
    assert ab["chi_square"] == pytest.approx(1.1 ** 2 * (1 / 4.9 + 2 / 2.1 + 1 / 0.9)) and ab["df"] == 1
    assert ab["chi_square"] == pytest.approx(2.7438, abs=1e-4) and ab["deposits"] == 10
    assert ab["p_chance"] == pytest.approx(math.erfc(math.sqrt(ab["chi_square"] / 2)))  # chi-square 1 df
    assert ab["min_expected"] == pytest.approx(0.9) and not ab["dependent"]
    again = pairs[("A", "A again")]  # [[7, 0], [0, 3]] against 4.9, 2.1, 2.1, 0.9: 2.1^2 (1/4.9 + 2/2.1 + 1/0.9) = 10
    assert again["chi_square"] == pytest.approx(10.0) and again["dependent"] and again["p_chance"] < 0.002
    # every deposit with data in one class: nothing to test; the cell without data is left out of the count
    one = pairs[("A", "one class")]
    assert one["df"] == 0 and one["chi_square"] is None and not one["dependent"] and one["deposits"] == 9
    # three classes against two: (3 - 1) x (2 - 1) = 2 df; A's rows 7 / 3, the classes' columns 4 / 3 / 3 (weighted)
    third = pairs[("A", "three")]
    table = np.array([[3, 2, 2], [1, 1, 1]], dtype=float)
    expected = np.outer(table.sum(1), table.sum(0)) / 10
    assert third["df"] == 2 and third["chi_square"] == pytest.approx(((table - expected) ** 2 / expected).sum())
    line = pairwise_line(list(pairs.values()))
    assert "6 pair(s) tested, 6 with an expected count under 5, so only roughly; Holm's correction at 0.05" in line
    assert line.endswith("dependent: A and A again (chi-square 10.00, 1 df, p 0.002): their weights count shared "
                         "evidence.")


def test_pairwise_dependence_is_judged_over_all_pairs_tested():
    """X by Y: [[7, 1], [1, 3]] against 5.33, 2.67, 2.67, 1.33: chi-square 1.667^2 x 1.6875 = 4.6875, p 0.030. Alone it
    is dependent at 0.05; beside a third layer (three pairs tested) Holm asks the smallest p to be under 0.05 / 3, and
    it is not. Deposits with no data on either side of a pair leave nothing to test."""
    x = np.array([0] * 7 + [0] + [1] + [1] * 3)
    y = np.array([0] * 7 + [1] + [0] + [1] * 3)
    z = np.array([0, 1] * 6)
    alone = pairwise_independence([x, y], np.ones(12), ["X", "Y"])[0]
    assert alone["chi_square"] == pytest.approx(4.6875) and alone["p_chance"] == pytest.approx(0.03038, abs=1e-5)
    assert alone["dependent"]
    three = pairwise_independence([x, y, z], np.ones(12), ["X", "Y", "Z"])
    assert three[0]["p_chance"] == pytest.approx(alone["p_chance"]) and not any(p["dependent"] for p in three)
    assert "no pair dependent (the lowest, X and Y: chi-square 4.69, 1 df, p 0.030)" in pairwise_line(three)
    apart = pairwise_independence([np.array([0, 1, -1, -1]), np.array([-1, -1, 0, 1])], np.ones(4), ["P", "Q"])[0]
    assert apart["df"] == 0 and apart["deposits"] == 0 and apart["chi_square"] is None and not apart["dependent"]


# A categorical map of 100 unit cells and 6 deposits: unit 1 (50 cells, 1 deposit), unit 2 (30, 2), unit 3 (15, 3),
# unit 4 (5, 0). Units 1 and 4 hold fewer than 2 deposits and are merged into 'other' (55 cells, 1 deposit):
#   unit 2:  W+ = ln[(2/6) / (28/94)] =  0.11248   s(W+) = sqrt(1/2 + 1/28) = 0.73193
#   unit 3:  W+ = ln[(3/6) / (12/94)] =  1.36524   s(W+) = sqrt(1/3 + 1/12) = 0.64550
#   other:   W+ = ln[(1/6) / (54/94)] = -1.23745   s(W+) = sqrt(1/1 + 1/54) = 1.00922
CODES = np.repeat([1.0, 2.0, 3.0, 4.0], [50, 30, 15, 5])
CODE_DEPOSITS = np.zeros(100)
CODE_DEPOSITS[[0, 50, 51, 80, 81, 82]] = 1


def test_categorical_weights_by_hand_with_rare_units_merged():
    g = categorical_generalise(CODES, CODE_DEPOSITS, cell_units=1.0)
    assert list(g.codes) == [2.0, 3.0, OTHER] and g.merged == (1.0, 4.0)
    assert list(g.table.area) == [30, 15, 55] and list(g.table.deposits) == [2, 3, 1]
    assert g.table.w_plus == pytest.approx([math.log((2 / 6) / (28 / 94)), math.log((3 / 6) / (12 / 94)),
                                            math.log((1 / 6) / (54 / 94))])
    assert g.table.w_plus == pytest.approx([0.11248, 1.36524, -1.23745], abs=1e-5)
    assert g.table.s_w_plus == pytest.approx([math.sqrt(1 / 2 + 1 / 28), math.sqrt(1 / 3 + 1 / 12),
                                              math.sqrt(1 + 1 / 54)])
    # class 3 against the rest: W- = ln[(3/6) / (82/94)]
    assert g.table.w_minus[1] == pytest.approx(math.log((3 / 6) / (82 / 94)))
    # merged units, and a unit never seen in the fit, take the 'other' row
    assert list(g.class_index(np.array([2.0, 3.0, 1.0, 4.0, 9.0]))) == [0, 1, 2, 2, 2]


def test_categorical_areas_are_in_unit_cells_and_merging_follows_the_minimum():
    """Cells of 0.5 unit cells halve the areas, not the deposits; with a minimum of 1 deposit only unit 4 is merged."""
    g = categorical_generalise(CODES, CODE_DEPOSITS, cell_units=0.5, min_deposits=1)
    assert list(g.codes) == [1.0, 2.0, 3.0, OTHER] and g.merged == (4.0,)
    assert list(g.table.area) == [25, 15, 7.5, 2.5] and list(g.table.deposits) == [1, 2, 3, 0]
    assert g.table.w_plus[2] == pytest.approx(math.log((3 / 6) / (4.5 / 44)))


def test_an_unseen_unit_weighs_nothing_when_no_unit_was_merged():
    """Both units hold 2 or more deposits: 'other' is empty and only ever receives units the fit never saw (a unit
    of a held-out fold). It weighs 0, not the 0.5-corrected ln[N(~D) / N(D)] = ln(95 / 5), the map's strongest."""
    codes = np.repeat([1.0, 2.0], 50)
    deposits = np.zeros(100)
    deposits[[0, 1, 50, 51, 52]] = 1
    g = categorical_generalise(codes, deposits, cell_units=1.0)
    assert g.merged == () and g.table.area[-1] == 0
    assert g.table.w_plus[1] == pytest.approx(math.log((3 / 5) / (47 / 95)))
    assert (g.table.w_plus[-1], g.table.s_w_plus[-1], g.table.studentised[-1]) == (0.0, 0.0, 0.0)
    assert list(g.class_index(np.array([7.0, 1.0]))) == [2, 0]


def test_every_unit_merged_leaves_one_class():
    """Units of one deposit each: all merge into 'other', which is the whole area (W+ = 0)."""
    codes = np.r_[np.arange(1.0, 6.0), np.zeros(95)]
    deposits = np.r_[np.ones(5), np.zeros(95)]
    g = categorical_generalise(codes, deposits, cell_units=1.0)
    assert list(g.codes) == [OTHER] and len(g.merged) == 6
    assert g.table.area[0] == 100 and g.table.w_plus[0] == pytest.approx(0.0)
    assert list(g.class_index(np.array([0.0, 3.0, 42.0]))) == [0, 0, 0]


# Ascending patterns of the classes above (values <= k):
#   <= 1: (40, 1)  W+ = ln[(1/6)/(39/94)] = -0.91203,  W- = ln[(5/6)/(55/94)] = 0.35364,  C / s(C) = -1.1349  <- best
#   <= 2: (70, 2)  W+ = ln[(2/6)/(68/94)] = -0.77483,  W- = ln[(4/6)/(26/94)] = 0.87973,  C / s(C) = -1.8462
#   <= 3: (90, 4)  W+ = ln[(4/6)/(86/94)] = -0.31652,  W- = ln[(2/6)/(8/94)]  = 1.36524,  C / s(C) = -1.7860
#   <= 4: the whole area, not usable


def test_cumulative_ascending_by_hand():
    w = cumulative_weights([40, 30, 20, 10], [1, 1, 2, 2], ascending=True)
    assert list(w.area) == [40, 70, 90, 100] and list(w.deposits) == [1, 2, 4, 6]
    assert list(w.usable) == [True, True, True, False]
    assert w.w_plus[:3] == pytest.approx([math.log((1 / 6) / (39 / 94)), math.log((2 / 6) / (68 / 94)),
                                          math.log((4 / 6) / (86 / 94))])
    assert w.w_minus[:3] == pytest.approx([0.35364, 0.87973, 1.36524], abs=1e-5)
    assert w.s_w_plus[1] == pytest.approx(math.sqrt(1 / 2 + 1 / 68))
    assert w.s_w_minus[1] == pytest.approx(math.sqrt(1 / 4 + 1 / 26))
    assert w.studentised[:3] == pytest.approx([-1.1349, -1.8462, -1.7860], abs=1e-4)


def test_ascending_generalisation_takes_the_largest_studentised_contrast_even_when_negative():
    g = generalise(VALUES, DEPOSITS, cell_units=1.0, ascending=True)
    assert g.best == 0 and g.threshold == 2.0 and g.ascending
    assert g.table.studentised[g.best] == pytest.approx(-1.1349, abs=1e-4)


def test_a_user_threshold_takes_the_nearest_edge():
    """Descending edges are the class values 1, 2, 3, 4: 2.2 takes >= 2 (C / s(C) = 1.1349, not the best 1.8462).
    Mirrored (5 - value, ascending), the edges are the next class values 2, 3, 4 (then +inf): 3.8 takes < 4, the
    classes <= 3 (60 cells, 5 deposits), which is the descending >= 2 pattern above."""
    g = generalise(VALUES, DEPOSITS, cell_units=1.0, threshold=2.2)
    assert g.best == 1 and g.threshold == 2.0 and not g.ascending
    assert g.table.studentised[g.best] == pytest.approx(1.1349, abs=1e-4)
    assert list(g.contains(np.array([1.0, 2.0, 4.0]))) == [False, True, True]
    g = generalise(5 - VALUES, DEPOSITS, cell_units=1.0, ascending=True, threshold=3.8)
    assert g.best == 2 and g.threshold == 4.0
    assert g.table.area[g.best] == 60 and g.table.deposits[g.best] == 5
    assert g.table.studentised[g.best] == pytest.approx(1.1349, abs=1e-4)
    assert list(g.contains(np.array([3.0, 3.9, 4.0]))) == [True, True, False]
    assert generalise(VALUES, DEPOSITS, cell_units=1.0, threshold=3.4).threshold == 3.0
