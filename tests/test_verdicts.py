"""The verdict rule (depthnotes.verdicts.compare), on hand-made numbers."""

import math

import pytest

from depthnotes.verdicts.compare import (CLAIM_WORDS, CLEAR, INCONCLUSIVE, MIN_SEEDS,
                                         NOT_REPRODUCED, REPRODUCED, WITH_CAVEATS,
                                         WITHIN_NOISE, claim_word, compare, rule_sentence)


def test_means_ranges_and_a_clear_gap():
    cmp = compare({"deep": [2.0, 2.1, 2.3], "wide": [2.8, 2.9, 3.0]}, metric="loss")
    deep, wide = cmp.arm("deep"), cmp.arm("wide")
    assert deep.mean == pytest.approx(6.4 / 3) and (deep.low, deep.high) == (2.0, 2.3)
    assert wide.spread == pytest.approx(0.2) and deep.spread == pytest.approx(0.3)
    d = cmp.between("deep", "wide")
    assert d.gap == pytest.approx(6.4 / 3 - 2.9)
    assert d.margin == pytest.approx(0.3)            # the larger of the two ranges
    assert d.verdict == CLEAR and cmp.verdict == CLEAR and cmp.best == "deep"
    assert cmp.between("wide", "deep").gap == pytest.approx(-d.gap)


def test_gap_inside_the_larger_range_is_within_noise():
    # gap 0.1, ranges 0.05 and 0.3: the larger range decides
    cmp = compare({"a": [1.0, 1.05, 1.025], "b": [0.8, 1.1, 0.875]})
    assert cmp.between("a", "b").verdict == WITHIN_NOISE
    assert cmp.verdict == WITHIN_NOISE and not cmp.clear


def test_factor_scales_the_margin():
    results = {"a": [1.0, 1.1, 1.2], "b": [1.5, 1.6, 1.7]}   # gap 0.5, ranges 0.2
    assert compare(results, factor=2.0).clear                  # 0.5 > 0.4
    assert not compare(results, factor=3.0).clear              # 0.5 < 0.6
    assert "3 times the larger" in compare(results, factor=3.0).rule


def test_ties_are_within_noise():
    # identical arms: gap 0, margin 0; "exceeds" is strict
    cmp = compare({"a": [1.0, 1.0, 1.0], "b": [1.0, 1.0, 1.0]})
    assert cmp.between("a", "b").verdict == WITHIN_NOISE and cmp.verdict == WITHIN_NOISE
    assert cmp.best == "a"                                     # the first arm on a tie
    # a gap exactly equal to the margin is not larger than it
    cmp = compare({"a": [0.0, 0.5, 1.0], "b": [1.0, 1.5, 2.0]})
    assert cmp.between("a", "b").gap == -1.0 and cmp.between("a", "b").margin == 1.0
    assert cmp.verdict == WITHIN_NOISE


def test_zero_spread_and_any_gap_is_clear():
    assert compare({"a": [1.0] * 3, "b": [1.001] * 3}).clear


def test_three_arms_best_must_be_apart_from_every_other():
    results = {"L=1": [1.0, 1.02, 1.01], "L=2": [1.00, 1.06, 1.03], "L=8": [2.0, 2.1, 2.05]}
    cmp = compare(results)
    assert len(cmp.differences) == 3 and cmp.best == "L=1"
    assert cmp.between("L=1", "L=8").clear and not cmp.between("L=1", "L=2").clear
    assert cmp.verdict == WITHIN_NOISE       # L=1 is not clearly better than L=2
    higher = compare(results, better="higher")
    assert higher.best == "L=8" and higher.clear


def test_one_seed_and_two_seeds_are_refused():
    with pytest.raises(ValueError, match=r"arm 'b' has 1 seed\(s\).*at least 3 seeds"):
        compare({"a": [1.0, 1.1, 1.2], "b": [2.0]})
    with pytest.raises(ValueError, match="at least 3 seeds per arm"):
        compare({"a": [1.0, 1.1], "b": [2.0, 2.1]})
    assert MIN_SEEDS == 3


def test_bad_input_names_the_problem():
    with pytest.raises(ValueError, match="two or more arm"):
        compare({"a": [1.0, 1.1, 1.2]})
    with pytest.raises(ValueError, match=r"arm 'b', seed #1: nan is not a finite number"):
        compare({"a": [1.0, 1.1, 1.2], "b": [1.0, math.nan, 1.2]})
    with pytest.raises(ValueError, match="not a finite number"):
        compare({"a": [1.0, 1.1, 1.2], "b": [1.0, None, 1.2]})
    with pytest.raises(TypeError, match="sequence of numbers"):
        compare({"a": [1.0, 1.1, 1.2], "b": 1.0})
    with pytest.raises(ValueError, match="better must be one of"):
        compare({"a": [1.0] * 3, "b": [2.0] * 3}, better="smaller")
    with pytest.raises(ValueError, match="factor"):
        compare({"a": [1.0] * 3, "b": [2.0] * 3}, factor=0)


def test_rule_sentence_and_table():
    cmp = compare({"pre": [2.0, 2.1, 2.2], "post": [3.0, 3.1, 3.2]}, metric="validation loss")
    assert cmp.rule == rule_sentence(1.0, "validation loss", "lower")
    assert "validation loss (lower is better)" in cmp.rule and "min-max" in cmp.rule
    table = cmp.table()
    assert "pre   mean 2.100  min-max 2.000-2.200  (3 seeds)" in table
    assert "pre - post: -1.000 (margin 0.200): clear" in table
    assert cmp.summary() == ("best validation loss: pre (-1.000 against post, margin 0.200): "
                             "clear")


def test_claim_words():
    clear = compare({"deepnorm": [2.0, 2.1, 2.2], "post": [3.0, 3.1, 3.2]})
    assert claim_word(clear, expected="deepnorm") == REPRODUCED
    assert claim_word(clear, expected="deepnorm", caveat="one small scale") == WITH_CAVEATS
    assert claim_word(clear, expected="post") == NOT_REPRODUCED       # clearly the other way
    noisy = compare({"deepnorm": [2.0, 3.0, 2.5], "post": [2.4, 2.6, 2.5]})
    assert claim_word(noisy, expected="deepnorm") == NOT_REPRODUCED
    # best to worst: the claims page shows the worst piece, and a refutation outranks a gap
    assert CLAIM_WORDS == (REPRODUCED, WITH_CAVEATS, INCONCLUSIVE, NOT_REPRODUCED)
    with pytest.raises(KeyError, match="no arm 'pre'"):
        claim_word(clear, expected="pre")
