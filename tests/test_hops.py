"""Exact baselines of k-hop pointer chasing (``depthnotes.data.hops``), checked against brute force
over all n! permutations (small n) and against simulation of the decoded rule (n = 16)."""

import random
from fractions import Fraction

import pytest

import oracles
from depthnotes.data import hops


@pytest.mark.parametrize("n", [3, 4, 5, 6])
@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("n_reads", [0, 1, 2])
def test_exact_matches_brute_force(n, k, n_reads):
    exact = hops.lookup_accuracy(n, k, n_reads)
    assert exact == pytest.approx(oracles.brute_force_accuracy(n, k, n_reads), abs=1e-12)


@pytest.mark.parametrize("k", [2, 3, 6])
def test_exact_matches_brute_force_n7(k):
    for n_reads in (1, 2):
        exact = hops.lookup_accuracy(7, k, n_reads)
        assert exact == pytest.approx(oracles.brute_force_accuracy(7, k, n_reads), abs=1e-12)


@pytest.mark.parametrize("n", [2, 3, 6, 9, 16])
@pytest.mark.parametrize("k", [1, 2, 3, 4, 6, 8])
def test_answer_query_closed_form_is_the_zero_read_rule(n, k):
    assert hops.answer_query_accuracy(n, k) == pytest.approx(hops.lookup_accuracy(n, k, 0))


@pytest.mark.parametrize("n", [3, 5, 6, 8, 16])
@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 8])
def test_one_lookup_at_query_closed_form(n, k):
    table = hops.lookup_table(n, k, (0,))
    exact = sum(p * a for p, _, a in table.values())
    assert oracles.one_lookup_at_query(n, k) == pytest.approx(exact, abs=1e-12)


def test_issue_numbers_for_n6():
    """Issue 11: answering the query is right 1/3 of the time at k = 2 and k = 3; two parallel
    look-ups reach 1/2 at k = 2; 0.68 at k = 3 is out of reach of any one-look-up rule."""
    assert hops.answer_query_accuracy(6, 2) == pytest.approx(1 / 3)
    assert hops.answer_query_accuracy(6, 3) == pytest.approx(1 / 3)
    assert oracles.brute_force_accuracy(6, 2, 2) == pytest.approx(1 / 2)
    assert hops.lookup_accuracy(6, 2, 2) == pytest.approx(1 / 2)
    one = oracles.brute_force_accuracy(6, 3, 1)
    assert one == pytest.approx(11 / 30) and one < 0.68
    assert hops.best_reads(6, 3, 1) == (1,)       # not at x: a read that lands on x wins


@pytest.mark.parametrize("n", [4, 6, 8, 12, 16, 32])
def test_two_hops_closed_forms(n):
    """k = 2: one read is no better than answering x (2/n); two reads add a third case (3/n):
    read f(x) and f(b); when f(x) = b the second read is the answer."""
    assert hops.lookup_accuracy(n, 2, 1) == pytest.approx(Fraction(2, n))
    assert hops.lookup_accuracy(n, 2, 2) == pytest.approx(Fraction(3, n))


@pytest.mark.parametrize("k", [2, 3, 4])
def test_simulated_rule_reaches_the_exact_accuracy_at_n16(k):
    """Apply the decoded best two-read rule to random permutations of 16 symbols."""
    n, trials, rng = 16, 20_000, random.Random(k)
    reads = hops.best_reads(n, k, 2)
    guess = oracles.decoded_rule(n, k, reads)
    right = 0
    for _ in range(trials):
        f = list(range(n))
        rng.shuffle(f)
        x = rng.randrange(n)
        others = tuple(rng.sample([s for s in range(n) if s != x], max(reads)))
        z = x
        for _ in range(k):
            z = f[z]
        right += guess(f, x, others) == z
    exact = hops.lookup_accuracy(n, k, 2)
    sigma = (exact * (1 - exact) / trials) ** 0.5
    assert abs(right / trials - exact) < 4 * sigma


def test_baselines_order_and_k1():
    for n in (6, 16):
        for k in (1, 2, 3, 4, 8):
            b = hops.baselines(n, k)
            assert list(b) == list(hops.BASELINES)
            assert b["answer_query"] <= b["one_lookup"] + 1e-12 <= b["two_lookups"] + 2e-12
        assert hops.baselines(n, 1)["one_lookup"] == 1.0


@pytest.mark.parametrize("call, field", [
    (lambda: hops.answer_query_accuracy(1, 2), "n"),
    (lambda: hops.answer_query_accuracy(6, 0), "k"),
    (lambda: hops.lookup_accuracy(6, 2, 3), "n_reads"),
    (lambda: hops.lookup_accuracy(2, 2, 2), "n_reads"),
])
def test_bad_input_names_the_field(call, field):
    with pytest.raises((TypeError, ValueError), match=field):
        call()
