"""Oracles only the tests use: brute-force enumeration of pointer-chasing baselines (small n),
a decoded lookup rule to simulate (any n), and following pointers by hand. They check the exact
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
