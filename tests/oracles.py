"""Oracles only the tests use: brute-force enumeration of pointer-chasing baselines (small n),
a closed form for one read at the query, a decoded lookup rule to simulate (any n), and
following pointers by hand. They check the exact
baselines in ``depthnotes.data.hops`` and the task in ``depthnotes.data.tasks``; nothing in the
book calls them, so they live here, not in the package.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

import torch

from depthnotes.core.checks import check_int
from depthnotes.data.hops import lookup_table


def brute_force_accuracy(n: int, k: int, n_reads: int) -> float:
    """Best accuracy over every address set of size ``n_reads`` (x = 0), by enumerating all
    n! permutations: group by what the reads show, guess the most frequent answer."""
    best = 0.0
    for addresses in itertools.combinations(range(n), n_reads):
        counts: dict = defaultdict(lambda: defaultdict(int))
        for f in itertools.permutations(range(n)):
            z = 0
            for _ in range(k):
                z = f[z]
            counts[tuple(f[a] for a in addresses)][z] += 1
        right = sum(max(c.values()) for c in counts.values())
        best = max(best, right / math.factorial(n))
    return best


def one_lookup_at_query(n: int, k: int) -> float:
    """Rule (b) restricted to reading at x, in closed form: read ``f(x)`` and guess.

    If ``f(x) = x`` (probability 1/n) the answer is x. Otherwise x's cycle length c is
    uniform on 2..n; the cycle runs x, f(x), then points uniform over the other n-2. The answer
    is x when c | k, f(x) when c | k-1, and otherwise a point the rule never saw, so
    the best guess gets ``max(#{c | k}, #{c | k-1}, #{rest}/(n-2))`` of the n-1 cases
    (c ranging over 2..n). Reading at x is not always the best single address: at k = 3 a
    read elsewhere that happens to land on x reveals f^-1(x), which is f^3(x) when x's cycle
    has length 2 or 4 (n = 6: 11/30 against 1/3). ``hops.lookup_accuracy`` takes the best of both.
    """
    check_int("n", n, minimum=2)
    check_int("k", k, minimum=1)
    on_x = sum(1 for c in range(2, n + 1) if k % c == 0)
    on_fx = sum(1 for c in range(2, n + 1) if k % c == 1)
    rest = (n - 1 - on_x - on_fx) / (n - 2) if n > 2 else 0.0
    return (1 + max(on_x, on_fx, rest)) / n


def decoded_rule(n: int, k: int, reads: tuple):
    """The best rule for ``reads`` (names, 0 = x) as a function ``guess(f, x, others)``:
    ``others`` are the concrete symbols standing for names 1, 2, ...; ``f`` a sequence."""
    table = lookup_table(n, k, reads)

    def guess(f, x: int, others: tuple) -> int:
        name_of = {x: 0, **{s: i + 1 for i, s in enumerate(others)}}
        symbol = {0: x, **{i + 1: s for i, s in enumerate(others)}}
        seen = []
        for r in reads:
            v = f[symbol[r]]
            if v not in name_of:
                name_of[v] = len(name_of)
                symbol[name_of[v]] = v
            seen.append(name_of[v])
        _, g, _ = table[tuple(seen)]
        if g is not None:
            return symbol[g]
        return next(s for s in range(n) if s not in name_of)   # any point not seen
    return guess


def follow_pointers(table: torch.Tensor, start: torch.Tensor, hops: int) -> torch.Tensor:
    """``f^hops(start)`` for each row: ``table`` (B, n) holds f, ``start`` (B, q) the x's."""
    check_int("hops", hops, 0)
    x = start
    for _ in range(hops):
        x = torch.gather(table, 1, x)
    return x
