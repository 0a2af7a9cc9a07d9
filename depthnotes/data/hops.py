"""Exact baselines for k-hop pointer chasing (chapter 3, claim C5).

A trained model's score on k-hop queries means nothing until it is set beside what a model
that does *not* chase k pointers could score. The task as posed (``tasks.PointerChasing``):
a uniformly random permutation ``f`` of ``n`` symbols is shown as a table, the model is told
the query symbol ``x`` and the number of hops ``k``, and must answer ``f^k(x)``. Three rules
that stop short of k serial look-ups, each with its exact accuracy:

(a) **Answer the query itself.** ``f^k(x) = x`` exactly when the length of x's cycle divides
    k, and in a uniform random permutation that length is uniform on 1..n. So the accuracy is
    ``#{d <= n : d | k} / n`` -- 1/3 for n = 6 at k = 2 and at k = 3, not 1/6.
(b) **The best one-look-up rule.** Read the table at one address known up front (x itself,
    or any other fixed address), then guess ``f^k(x)`` as well as possible from what was read.
(c) **The best two-parallel-look-up rule.** The same with two addresses, both chosen before
    anything is read (the second cannot depend on the first: that would be two serial hops).

The rules read the table at *addresses* (positions). They are not all a block can do in one
step: a block has several heads, and a head can also look for where a symbol is written
(easy when a query uses the table's own token for x, as in the "hop_marker" layout), which
reveals f^-1(x); and a wide block can take in much of the table at once and compose it in its
MLP. So a score above (c) at k >= 2 means more than two fixed reads, not necessarily look-ups
in series. Chapter 3 therefore counts chaining at a higher level (``khop_analysis.CHAINED``)
and keeps a one-block control on the same table.

How the exact numbers are computed (``lookup_accuracy``): the permutation is revealed lazily.
Reading ``f(u)`` at a point not yet read gives, by symmetry, each still-unused image with
equal probability: one of the few points already *named* (x, the addresses, points found
earlier) or one from the pool of nameless points, which then gets the next name. Enumerating
the reads (the observation) and then the k steps of the walk from x gives every outcome
with its exact probability, grouped by observation up to a renaming of nameless points.
Within one observation the best guess is the most probable named point, or -- when a point
never seen by the rule is more likely -- any nameless point, each with 1/(pool size) of the
nameless mass. The tests check this against enumeration of all n! permutations for small n
and against simulation of the decoded rule for n = 16.
"""

from __future__ import annotations

from collections import defaultdict

from depthnotes.core.checks import check_int

#: The kinds of baseline, in the order the chapter draws them.
BASELINES = ("answer_query", "one_lookup", "two_lookups")


def answer_query_accuracy(n: int, k: int) -> float:
    """Rule (a): answer ``x``. Right when x's cycle length (uniform on 1..n) divides k."""
    check_int("n", n, minimum=2)
    check_int("k", k, minimum=1)
    return sum(1 for d in range(1, n + 1) if k % d == 0) / n


# -- exact enumeration by lazy revelation ------------------------------------------------------
class _Partial:
    """A permutation revealed so far: named points 0..named-1 (0 is the query x), the arcs
    read, and which named points are already somebody's image."""

    __slots__ = ("n", "named", "arc", "images")

    def __init__(self, n: int, named: int):
        self.n, self.named, self.arc, self.images = n, named, {}, set()

    def copy(self) -> "_Partial":
        p = _Partial(self.n, self.named)
        p.arc, p.images = dict(self.arc), set(self.images)
        return p

    def reveal(self, u: int):
        """Every ``(probability, value, state)`` for ``f(u)``; one branch if already read."""
        if u in self.arc:
            return [(1.0, self.arc[u], self)]
        free_named = [v for v in range(self.named) if v not in self.images]
        pool = self.n - self.named
        total = len(free_named) + pool                  # = images not yet used
        out = []
        for v in free_named + ([self.named] if pool else []):
            q = self.copy()
            weight = pool if v == self.named else 1
            if v == self.named:
                q.named += 1
            q.arc[u], q.images = v, q.images | {v}
            out.append((weight / total, v, q))
        return out


def _walk(state: _Partial, at: int, hops: int, prob: float, sink: dict) -> None:
    """Add the probability of each endpoint of ``hops`` more steps from ``at`` to ``sink``."""
    if hops == 0:
        sink[at] += prob
        return
    for p, v, nxt in state.reveal(at):
        _walk(nxt, v, hops - 1, prob * p, sink)


def _observations(state: _Partial, reads: tuple, prob: float, seen: tuple, out: list) -> None:
    """Every way the reads at ``reads`` can come out: ``(prob, observation, state)``."""
    if not reads:
        out.append((prob, seen, state))
        return
    for p, v, nxt in state.reveal(reads[0]):
        _observations(nxt, reads[1:], prob * p, seen + (v,), out)


def lookup_table(n: int, k: int, reads: tuple) -> dict:
    """For the addresses ``reads`` (names: 0 is x, 1, 2, ... distinct other points), map each
    observation class to ``(probability, guess, p_correct_given_obs)``.

    ``guess`` is a name (an int) or ``None`` for "any point the rule has not seen"."""
    check_int("n", n, minimum=2)
    check_int("k", k, minimum=1)
    named = max(reads, default=0) + 1
    if named > n or len(set(reads)) != len(reads):
        raise ValueError(f"reads must be distinct names below n={n}, got {reads!r}")
    obs = []
    _observations(_Partial(n, named), tuple(reads), 1.0, (), obs)
    joint: dict = defaultdict(lambda: [0.0, None, None])
    for p_obs, seen, state in obs:
        ends: dict = defaultdict(float)
        _walk(state, 0, k, 1.0, ends)
        row = joint[seen]
        if row[1] is None:
            row[1], row[2] = state.named, defaultdict(float)
        row[0] += p_obs
        for z, pz in ends.items():
            # a point named during the walk is unknown to the rule: pool it
            row[2][z if z < state.named else None] += p_obs * pz
    table = {}
    for seen, (p_obs, n_named, mass) in joint.items():
        pool = n - n_named
        best, guess = -1.0, None
        for z, m in sorted(mass.items(), key=lambda t: (t[0] is None, t[0] or 0)):
            score = m / pool if z is None else m
            if score > best + 1e-15:
                best, guess = score, z
        table[seen] = (p_obs, guess, best / p_obs)
    return table


def _read_choices(n: int, n_reads: int) -> list:
    """The address sets worth trying, up to renaming: with or without x among them."""
    check_int("n_reads", n_reads, minimum=0)
    if n_reads > 2:
        raise ValueError(f"n_reads must be 0, 1 or 2, got {n_reads}")
    if n_reads >= n:
        raise ValueError(f"n_reads={n_reads} must be below n={n}")
    choices = {0: [()], 1: [(0,), (1,)], 2: [(0, 1), (1, 2)]}[n_reads]
    return [r for r in choices if max(r, default=0) < n]


def _accuracy_of(n: int, k: int, reads: tuple) -> float:
    return sum(p * acc for p, _, acc in lookup_table(n, k, reads).values())


def best_reads(n: int, k: int, n_reads: int) -> tuple:
    """The addresses (names, 0 = x, 1, 2 other points) of the best ``n_reads``-look-up rule;
    on a tie (within 1e-12) the set that contains x."""
    scored = [(_accuracy_of(n, k, r), r) for r in _read_choices(n, n_reads)]
    top = max(a for a, _ in scored)
    return next(r for a, r in scored if a >= top - 1e-12)


def lookup_accuracy(n: int, k: int, n_reads: int) -> float:
    """Exact accuracy of the best rule that reads the table at ``n_reads`` addresses chosen
    up front (0, 1 or 2; 0 is rule (a)), maximised over where those addresses are (x among
    them or not)."""
    return max(_accuracy_of(n, k, r) for r in _read_choices(n, n_reads))


def baselines(n: int, k: int) -> dict:
    """``{"answer_query": ..., "one_lookup": ..., "two_lookups": ...}`` for one (n, k)."""
    return {"answer_query": answer_query_accuracy(n, k),
            "one_lookup": lookup_accuracy(n, k, 1),
            "two_lookups": lookup_accuracy(n, k, 2)}


# -- pointer doubling under a causal mask ------------------------------------------------------
def causal_doubling_reach(n: int, rounds: int, samples: int = 4000,
                          seed: int = 0) -> list[float]:
    """Fraction of table positions that can hold ``f^(2^r)(i)`` after r rounds of pointer
    doubling when each position may only read positions at or before it, for r = 0..rounds
    (estimated on ``samples`` random permutations; the same seed gives the same numbers).

    Pointer doubling: position i holds f(i) (round 0); in round r it reads the position
    ``j = f^(2^(r-1))(i)`` it already knows and copies what j holds, f^(2^(r-1))(j) =
    f^(2^r)(i). Under a causal mask that read needs ``j <= i``, and j must itself have
    finished round r-1. With no mask every position doubles every round (reach 1.0); here
    the reach collapses, because each round needs the chain to keep pointing left."""
    import random

    check_int("n", n, minimum=2)
    check_int("rounds", rounds, minimum=0)
    check_int("samples", samples, minimum=1)
    rng = random.Random(seed)
    totals = [0] * (rounds + 1)
    for _ in range(samples):
        f = rng.sample(range(n), n)
        jump, ok = list(f), [True] * n           # f^(2^r)(i), and whether i has it
        totals[0] += n
        for r in range(1, rounds + 1):
            ok = [ok[i] and jump[i] <= i and ok[jump[i]] for i in range(n)]
            jump = [jump[jump[i]] for i in range(n)]
            totals[r] += sum(ok)
    return [t / (samples * n) for t in totals]


# -- k-hop induction heads (tasks.InductionHops) -------------------------------------------
#: The induction task's baselines, in the order the chapter draws them.
INDUCTION_BASELINES = ("current_symbol", "best_shorter_hop", "shorter_hops", "window")


def _patterns(observed, answer):
    """Each case's pattern (which observed entries are equal, which missing: a code that a
    renaming of the symbols leaves unchanged), its label (the first entry equal to the
    answer, or m + 1 when no entry is) and how many distinct symbols it shows."""
    import numpy as np

    from depthnotes.data.tasks import IGNORE

    observed, answer = np.asarray(observed), np.asarray(answer)
    N, m = observed.shape
    same = observed[:, :, None] == observed[:, None, :]                     # (N, m, m)
    first = np.where(observed == IGNORE, m, same.argmax(1))   # each entry: its first equal
    seen = (first == np.arange(m)).sum(1)                     # distinct symbols observed
    hit = observed == answer[:, None]
    label = np.where(hit.any(1), hit.argmax(1), m + 1)                      # m + 1: unseen
    pattern = (first * (m + 2) ** np.arange(m, dtype=np.int64)).sum(1)
    return pattern, label, seen, m


def best_guess(observed, answer, n_symbols: int, score_on=None) -> float:
    """The accuracy of the best rule that answers ``answer`` (N,) from ``observed`` (N, m)
    (symbols, or -100 for none), for a task whose distribution a renaming of the
    ``n_symbols`` symbols leaves unchanged.

    The rule is found up to that renaming: for each *pattern* of the observed entries (which
    are equal, which missing) it answers the entry most often right or, when a symbol none
    of them shows is likelier, one such symbol (right with that mass shared among the unseen
    symbols). That is the best rule there is when the N cases are the whole distribution
    (an exact enumeration). When they are a sample, the rule fitted on it scores itself too
    well (it has seen the answers it is scored on); ``score_on=(observed2, answer2)`` fits the
    rule on the first cases and scores it on the second, out of sample. A pattern the fitting
    cases never showed is answered with an unseen symbol."""
    import numpy as np

    pattern, label, seen, m = _patterns(observed, answer)
    N = len(pattern)
    pairs, at, counts = np.unique(pattern * (m + 2) + label, return_index=True,
                                  return_counts=True)      # sorted: grouped by pattern
    score = np.where(pairs % (m + 2) == m + 1,
                     counts / np.maximum(n_symbols - seen[at], 1), counts)
    starts = np.flatnonzero(np.r_[True, np.diff(pairs // (m + 2)) != 0])
    if score_on is None:
        return float(np.maximum.reduceat(score, starts).sum() / N)
    # the fitted rule: for each pattern, the label with the best score
    best = np.array([pairs[s + np.argmax(score[s:e])] % (m + 2)
                     for s, e in zip(starts, np.r_[starts[1:], len(pairs)])])
    keys = pairs[starts] // (m + 2)                     # the fitted patterns, increasing
    t_pattern, t_label, t_seen, _ = _patterns(*score_on)
    at = np.searchsorted(keys, t_pattern).clip(max=len(keys) - 1)   # the rule, looked up
    guess = np.where(keys[at] == t_pattern, best[at], m + 1)
    right = np.where(guess == m + 1,
                     (t_label == m + 1) / np.maximum(n_symbols - t_seen, 1),
                     guess == t_label)
    return float(right.mean())


def _answers_up_to(task, s, k: int) -> list:
    """``[task.answers(s, j) for j in range(k + 1)]``, walking each chain once (hop j + 1
    is one hop on from hop j) instead of from the start for every j."""
    import torch

    from depthnotes.data.tasks import IGNORE

    sigma = task.hop_positions(s, 1)                                  # (B, T): one hop
    pos = task.hop_positions(s, 0)                                    # t itself
    out = []
    for _ in range(k + 1):
        out.append(torch.where(pos >= 0, torch.gather(s, 1, pos.clamp(min=0)), IGNORE))
        pos = torch.where(pos >= 0, torch.gather(sigma, 1, pos.clamp(min=0)), pos)
    return out


def hop_baselines(task, symbols, k: int, window: int = 0, fit_symbols=None) -> dict:
    """Rules that stop short of k hops on ``tasks.InductionHops``, scored exactly over the
    sequences ``symbols`` (B, length), every position with a k-hop answer counted once:

    * ``"current_symbol"``: answer the symbol at t itself (zero hops);
    * ``"best_shorter_hop"``: the best single j < k: answer the symbol j hops away;
    * ``"shorter_hops"``: the best guess from all the symbols 0, 1, ..., k-1 hops away
      together (``best_guess``). It bounds what a model that finds every shorter hop, and
      no more, scores from the chain alone;
    * with ``window`` > 0, ``"window"``: the best guess from the symbol at t and the
      ``window`` symbols before it, reads at places known in advance, which need no hop at
      all. One block can make such reads; when the last match of the symbol at t falls in
      the window they answer one hop exactly (and so on for more hops).

    On every sequence of a small alphabet and length (all equally likely, as the task draws
    them) these are exact. On a sample, the two fitted rules (``shorter_hops``, ``window``)
    would score the sample they were fitted on: with ``fit_symbols`` they are fitted on those
    sequences and scored on ``symbols`` (``induction_baselines`` does so)."""
    import numpy as np

    from depthnotes.data.tasks import IGNORE

    check_int("k", k, minimum=1)
    check_int("window", window, minimum=0)

    def cases(seqs):
        """(shorter (N, k), back (N, window + 1) or None, answer (N,)) of the scored
        positions of ``seqs``."""
        hops = [a.numpy().ravel() for a in _answers_up_to(task, seqs, k)]
        answer = hops[k]
        scored = answer != IGNORE
        if not scored.any():
            raise ValueError(f"no position of these sequences has a {k}-hop answer")
        shorter = np.stack([hops[j][scored] for j in range(k)], 1)           # (N, k)
        back = None
        if window:
            s = seqs.numpy()
            B, T = s.shape
            back = np.stack([np.pad(s, ((0, 0), (w, 0)), constant_values=IGNORE)[:, :T]
                             for w in range(window + 1)], 2)                 # (B, T, w + 1)
            back = back.reshape(B * T, -1)[scored]
        return shorter, back, answer[scored]

    import numpy as np

    from depthnotes.data.tasks import IGNORE

    shorter, back, answer = cases(symbols)
    fit = None if fit_symbols is None else cases(fit_symbols)
    right = (shorter == answer[:, None]).mean(0)
    out = {"current_symbol": float(right[0]), "best_shorter_hop": float(right.max())}
    if fit is None:
        out["shorter_hops"] = best_guess(shorter, answer, task.n_symbols)
        if window:
            out["window"] = best_guess(back, answer, task.n_symbols)
    else:
        out["shorter_hops"] = best_guess(fit[0], fit[2], task.n_symbols,
                                         score_on=(shorter, answer))
        if window:
            out["window"] = best_guess(fit[1], fit[2], task.n_symbols,
                                       score_on=(back, answer))
    return out


def induction_baselines(task, k: int, window: int = 0, n_sequences: int = 4096,
                        seed: int = 2024) -> dict:
    """``hop_baselines`` on random sequences of ``task`` (seeded), out of sample: the fitted
    rules are fitted on ``n_sequences`` sequences and scored on ``n_sequences`` others (a rule
    scored on its own fitting sample overstates itself, by about 0.03 for the 8-symbol window
    at k = 8 and the defaults). Scored on 4,096 sequences of length 64 at k = 8 (about 0.1 M
    positions), a rate's binomial standard error is about 0.0015; the fitted rule's own
    error (it is fitted on a finite sample) comes on top, and the test suite measures both."""
    check_int("n_sequences", n_sequences, minimum=1)
    import torch

    g = torch.Generator().manual_seed(seed)
    fit = task.symbols(n_sequences, g)
    symbols = task.symbols(n_sequences, g)
    return hop_baselines(task, symbols, k, window, fit_symbols=fit)
