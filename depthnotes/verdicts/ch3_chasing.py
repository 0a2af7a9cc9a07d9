"""Chapter 3's analyses of pointer chasing (its first task), and the pieces its second task's
verdict (``hop_depth``) shares: the levels, the families, a sweep's shapes at their best rate
and the depth needed.

The record ``khop16_depth_sweep`` (``experiments.ch3``; ``khop_depth_sweep`` is the earlier
one on twelve symbols) trains two families of models on k-hop pointer chasing, three seeds
each: *fixed width* (d held, one block more at a time: what an
added block buys) and *fixed parameters* (wider when shallower: what depth buys at equal
cost). Some shapes ran at several learning rates; a shape is scored at its best rate, chosen
by its mean accuracy over k >= 2 and all seeds (the hops a shallow model might be failing
for want of a better rate), so no shape loses for a rate tuned for another.

The chapter's rule, computed here (``judge_depth``) and stated on the page. Three levels of
accuracy on k-hop queries: a model **beats the bar** when it clears ``reading_bar`` (the
best rule that reads the table at two places known in advance, plus ``ACCURACY_MARGIN``),
**chains** k hops when it answers at least ``CHAINED`` of them, and **solves** them at
``SOLVED``. Beating
the bar is not enough to count as chaining: more reads, or a look-up of where a symbol is
written, score above it without any second hop, and on sixteen symbols one block 64 wide
beats it a little at two hops (the chapter shows it). The **depth needed** for k, for one
seed, is the smallest depth of a family that reaches a level with that seed (None when no
depth in the family does). The seeds' values give the spread.

``check_table`` checks the task itself: a table too large for one wide block to hold keeps
that block below the bar while a deeper shape chains two hops (the records ``khop20_long``
and ``khop24_long`` ask it of tables of twenty and twenty-four symbols, after the
sixteen-symbol sweep failed it).

``chain_attention`` looks inside one trained model: how much attention each block's heads
put, at a k-hop query, on the table position of the start x (where f(x) is written) and on
the position of f(x) (where f^2(x) is written). A chasing circuit reads x in one block and
f(x) in the next. ``overwrite_address`` tests it causally: it overwrites one table position
(f(x), or one a chaser does not read) and sees whether the model answers what the pointers
now give or the symbol the table now lacks.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import mean

import numpy as np
import torch

from depthnotes.core.checks import check_choice, check_int, check_number, eval_mode
from depthnotes.data.hops import baselines
from depthnotes.measure.probes import attention_weights
from depthnotes.verdicts.evidence import (NOT_SHOWN, REPRODUCED, Ranking, RatePick,
                                          best_rate, combine, compare_many)

#: The two families of the sweep, as the record's arms name them in ``info["families"]``.
FAMILIES = ("fixed width", "fixed parameters")

#: Chapter 3's margin in accuracy: beat the best two-look-up rule by this much to count as
#: more than reading (``ch3_hops`` uses it for its bars and comparisons too): about ten
#: times the sampling error of an accuracy near 0.2 measured on 6,144 queries.
ACCURACY_MARGIN = 0.05
#: A model chains k hops when it answers at least this share of them.
CHAINED = 0.5
#: A model solves k hops at this accuracy.
SOLVED = 0.9


def reading_bar(n: int, k: int) -> float:
    """The accuracy above which a model does more than read a table of ``n`` symbols at
    places known in advance, at ``k`` hops: the best two-look-up rule + ``ACCURACY_MARGIN``, or
    ``SOLVED`` where that is lower (k = 1, which one read answers)."""
    return min(SOLVED, baselines(n, k)["two_lookups"] + ACCURACY_MARGIN)


@dataclass(frozen=True)
class HopSweepShape:
    """One shape of a family at its best learning rate: accuracies per k, one per seed."""

    n_layer: int
    d_model: int
    arm: str                     # the record's arm (the best rate's)
    lr: float
    rates: dict                  # {lr: mean accuracy over k >= rate_from and seeds}, every rate
    accuracy: dict               # {k: [accuracy of each seed, in seed order]}
    pick: RatePick | None = None  # the evidence library's pick: does the grid bracket it?

    def mean(self, k: int) -> float:
        return mean(self.accuracy[k])


def hops_of(record) -> list[int]:
    """The k's the record scored (from its final metrics ``accuracy_k<k>``)."""
    final = record.runs[0]["final"]
    return sorted(int(key.removeprefix("accuracy_k")) for key in final
                  if key.startswith("accuracy_k"))


def family_shapes(records, family: str, rate_from: int = 2) -> list[HopSweepShape]:
    """The shapes of ``family``, by depth, each at its best learning rate, pooled over one
    record or a list of records of the same task and seeds (a later record may add rates
    for some shapes: chapter 3's ``khop_rate_check``). The best rate is the one with the
    highest mean accuracy over the k's from ``rate_from`` up and all seeds (2 for pointer
    chasing, where one hop is a single read; 1 for the induction task, where it is not),
    picked by the evidence library (``evidence.best_rate`` on each seed's mean over those
    k's; the lowest rate on a tie); its ``RatePick`` says whether the grid brackets it."""
    check_choice("family", family, FAMILIES)
    records = list(records) if isinstance(records, (list, tuple)) else [records]
    hops = hops_of(records[0])
    arms: dict[str, tuple[dict, dict]] = {}        # arm -> (info, {k: [per seed]})
    for record in records:
        if hops_of(record) != hops or record.seeds != records[0].seeds:
            raise ValueError(f"record {record.name!r} scores other k's or seeds than "
                             f"{records[0].name!r}; they cannot be pooled")
        finals = {k: record.final(f"accuracy_k{k}") for k in hops}  # {k: {arm: [seeds]}}
        for arm in record.arms:
            if arm in arms:
                raise ValueError(f"arm {arm!r} is in two of the records")
            arms[arm] = (record.arm(arm)["info"], {k: finals[k][arm] for k in hops})
    groups: dict[tuple, list[str]] = {}
    for arm, (info, _) in arms.items():
        if family in info["families"]:
            groups.setdefault((info["n_layer"], info["d_model"]), []).append(arm)
    shapes = []
    for (L, d), names in sorted(groups.items()):
        by_rate = {}
        for a in names:
            lr = arms[a][0]["lr"]
            if lr in by_rate:
                raise ValueError(f"arms {by_rate[lr]!r} and {a!r} of the shape L = {L}, "
                                 f"d = {d} share the learning rate {lr:g}")
            by_rate[lr] = a
        scored = [k for k in hops if k >= rate_from]
        # per seed: its mean accuracy over the scored k's (the evidence library picks the rate)
        per_seed = {lr: [mean(arms[a][1][k][i] for k in scored)
                         for i in range(len(records[0].seeds))] for lr, a in by_rate.items()}
        pick = best_rate(per_seed, better="higher")
        best = by_rate[pick.best]
        rates = {lr: mean(mean(arms[a][1][k]) for k in scored) for lr, a in by_rate.items()}
        shapes.append(HopSweepShape(L, d, best, pick.best, rates, arms[best][1], pick))
    return shapes


def depth_needed(shapes: list[HopSweepShape], k: int, threshold: float) -> list[int | None]:
    """The depth needed for ``k`` with each seed (in seed order): the smallest ``n_layer``
    whose accuracy with that seed is at least ``threshold``; None where no shape's is."""
    check_number("threshold", threshold, 0, 1)
    seeds = len(shapes[0].accuracy[k])
    return [min((s.n_layer for s in shapes if s.accuracy[k][i] >= threshold), default=None)
            for i in range(seeds)]


def shape_name(shape: HopSweepShape) -> str:
    """How a shape is named in a comparison's table: ``"L=2, d=64"``."""
    return f"L={shape.n_layer}, d={shape.d_model}"


@dataclass(frozen=True)
class ChasingDepthVerdict:
    """Chapter 3's verdict on C5 from the two families' shapes (``judge_depth``)."""

    bars: dict            # {k: the bar: two fixed look-ups + ACCURACY_MARGIN}
    beats: dict           # {family: {k: [depth that beats the bar at k, per seed; None: none]}}
    needed: dict          # {family: {k: [depth that chains k, per seed]}}
    solved: dict          # {family: {k: [depth that solves k, per seed]}}
    equal_params: Ranking   # two hops: the widest one-block shape, the best deeper one
    fixed_width: Ranking    # two hops: one block at the family's width, the best deeper
    one_block_chains: dict     # {family: seeds with which its one-block shape chains two hops}
    three_hops: str | None     # what fixed width shows at k = 3 (THREE_HOPS; None: not swept)
    word: str

    @property
    def two_hops_solved(self) -> bool:
        """Both families solve two hops (``SOLVED``) at some depth with every seed."""
        return not any(None in self.solved[f][2] for f in FAMILIES)


def _one_block_against_deeper(family: list[HopSweepShape]) -> Ranking:
    """Two-hop accuracy of a family's one-block shape against its best deeper shape."""
    one, *deeper = family
    if one.n_layer != 1 or not deeper:
        raise ValueError("each family must start at one block and go deeper")
    best = max(deeper, key=lambda s: s.mean(2))
    return compare_many({shape_name(s): s.accuracy[2] for s in (one, best)},
                        metric="two-hop accuracy", better="higher")


#: What the fixed-width family's depths for k = 3 against k = 2 show, per seed
#: (``ChasingDepthVerdict.three_hops``): some seed chains three hops at no depth of the sweep
#: (the sweep cannot test it); every seed needs more blocks for three hops than for two (as a
#: chaser that takes one hop per block would); some seed needs no more (fewer layers than
#: hops, as doubling allows).
THREE_UNCHAINED = "unchained at some seed"
MORE_BLOCKS = "more blocks than two"
NO_MORE_BLOCKS = "no more blocks than two"
THREE_HOPS = (THREE_UNCHAINED, MORE_BLOCKS, NO_MORE_BLOCKS)


def _three_hops(needed: dict) -> str | None:
    """The fixed-width family's depth for k = 3 against k = 2, per seed, as one of
    ``THREE_HOPS`` (None when the sweep has no k = 3)."""
    if 3 not in needed:
        return None
    three, two = needed[3], needed[2]
    if None in three:
        return THREE_UNCHAINED
    if all(b is not None and a > b for a, b in zip(three, two)):
        return MORE_BLOCKS
    return NO_MORE_BLOCKS


def judge_depth(shapes: dict, n: int) -> ChasingDepthVerdict:
    """C5 from ``{family: [HopSweepShape by depth]}`` (both ``FAMILIES``) on a table of ``n``.

    The rule has two parts, both about two hops, the only k > 1 that every depth of the
    sweep can be asked about; three hops are reported beside them (``three_hops``).
    (1) *Shallow-but-wide struggles at equal parameters*: the fixed-parameter family's
    one-block shape chains two hops (``CHAINED``) with no seed, and its best deeper shape
    beats it clearly (``verdicts.evidence``).
    (2) *Two dependent steps need more than one block*: the same at fixed width, and in
    addition some depth of that family chains two hops with every seed. Each part is a word
    (reproduced or not shown here); the claim's word combines them (``evidence.combine``).
    The sweep reaches k = 3 at most, which cannot show growth like k against log k: beside
    the word, ``three_hops`` says what k = 3 showed and ``two_hops_solved`` whether two hops
    were solved (the chapter writes the caveat from them)."""
    check_choice("families", tuple(shapes), (FAMILIES, FAMILIES[::-1]))
    hops = sorted(shapes[FAMILIES[0]][0].accuracy)
    if not {1, 2} <= set(hops):
        raise ValueError(f"judge_depth needs k = 1 and k = 2 in the sweep, got k = {hops}")
    bars = {k: reading_bar(n, k) for k in hops}
    beats = {f: {k: depth_needed(shapes[f], k, bars[k]) for k in hops} for f in FAMILIES}
    needed = {f: {k: depth_needed(shapes[f], k, CHAINED) for k in hops} for f in FAMILIES}
    solved = {f: {k: depth_needed(shapes[f], k, SOLVED) for k in hops} for f in FAMILIES}
    equal_params, fixed_width = (_one_block_against_deeper(shapes[f]) for f in
                                 ("fixed parameters", "fixed width"))
    one_chains = {f: sum(a >= CHAINED for a in shapes[f][0].accuracy[2]) for f in FAMILIES}
    parts = [one_chains[f] == 0 and cmp.clear and cmp.best != shape_name(shapes[f][0])
             for f, cmp in (("fixed parameters", equal_params), ("fixed width", fixed_width))]
    deep_enough = None not in needed["fixed width"][2]
    three = _three_hops(needed["fixed width"])
    words = [REPRODUCED if parts[0] else NOT_SHOWN,
             REPRODUCED if parts[1] and deep_enough else NOT_SHOWN]
    word = combine(words)
    return ChasingDepthVerdict(bars, beats, needed, solved, equal_params, fixed_width,
                               one_chains, three, word)


#: ``check_table``'s results: the table is too large for one wide block (it stays below the
#: bar with every seed, the deeper shape chains with every seed); it is not (the wide block
#: beats the bar with some seed); or the records cannot tell (the wide block stays below, but
#: the deeper shape does not chain with every seed either).
TABLE_HOLDS, TABLE_FAILS, NO_SEPARATION = "holds", "fails", "no separation"


@dataclass(frozen=True)
class TableCheck:
    """Is a table too large for one wide block to hold? (``check_table``)"""

    bar: float            # two hops: two fixed look-ups + ACCURACY_MARGIN
    seeds: int
    wide_beats: int       # seeds with which the one wide block beats the bar at two hops
    wide_chains: int      # seeds with which the one wide block chains two hops
    deep_chains: int      # seeds with which the deeper shape chains two hops
    result: str           # TABLE_HOLDS, TABLE_FAILS or NO_SEPARATION

    @property
    def holds(self) -> bool:
        """The wide block beats the bar with no seed; the deeper one chains with every seed."""
        return self.result == TABLE_HOLDS


def check_table(wide: list[float], deep: list[float], n: int) -> TableCheck:
    """Chapter 3's check of the task itself, from two-hop accuracies (one per seed, the same
    seeds): one wide block (``wide``) should stay at the look-up level, below
    ``reading_bar(n, 2)`` with every seed, while a deeper shape (``deep``) chains two hops
    (``CHAINED``) with every seed. If the wide block beats the bar, the table is not too large
    for it; if it does not but the deeper shape fails to chain too, the table is too large
    for the training budget and says nothing about depth. The ``result`` is one word
    (``TABLE_HOLDS``, ``TABLE_FAILS``, ``NO_SEPARATION``) beside the counts it rests on."""
    if not wide or len(wide) != len(deep):
        raise ValueError(f"wide and deep need one accuracy per seed, the same seeds; got "
                         f"{len(wide)} and {len(deep)}")
    for name, accs in (("wide", wide), ("deep", deep)):
        for a in accs:
            check_number(name, a, 0, 1)
    bar, seeds = reading_bar(n, 2), len(wide)
    beats = sum(a > bar for a in wide)
    chains = sum(a >= CHAINED for a in deep)
    result = TABLE_FAILS if beats else TABLE_HOLDS if chains == seeds else NO_SEPARATION
    return TableCheck(bar, seeds, beats, sum(a >= CHAINED for a in wide), chains, result)


def check_table_record(record, n_head: int | None = None) -> tuple[dict, TableCheck]:
    """``check_table`` on a record of a one-block and a two-block arm on one table (such as
    ``khop20_long``), or on those of its arms with ``n_head`` heads per block (``khop16_heads``
    holds two such pairs): ``({n_layer: [two-hop accuracy per seed]}, TableCheck)``."""
    finals = record.final("accuracy_k2")
    arms = [a for a in record.arms
            if n_head is None or record.arm(a)["model"]["n_head"] == n_head]
    accs = {record.arm(a)["info"]["n_layer"]: finals[a] for a in arms}
    if sorted(accs) != [1, 2] or len(arms) != 2:
        raise ValueError(f"record {record.name!r} needs exactly one one-block and one "
                         f"two-block arm" + (f" with n_head={n_head}" if n_head else "")
                         + f"; it has {arms}")
    return accs, check_table(accs[1], accs[2], record.config["data"]["n_nodes"])


def chain_attention(model, task, hops: int = 2, n_sequences: int = 256,
                    seed: int = 10**9 + 500) -> dict[str, np.ndarray]:
    """Mean attention at the ``hops``-hop queries of fresh sequences, per block and head,
    each of shape (L, n_head): on the table position of the start x (``"x"``), on the
    position of f(x) (``"f(x)"``), and on the whole table (``"table"``; what a head that
    spreads evenly over the table would put on one position is ``"table" / n_nodes``).
    Queries whose x is a fixed point of f (x and f(x) the same position) are left out."""
    check_int("hops", hops, 1)
    check_int("n_sequences", n_sequences, 1)
    idx, _ = task.batch(n_sequences, seed=seed, hops=hops)                 # (N, T)
    n = task.n_nodes
    _, start = task.queries(idx)                                           # (N, q): x
    fx = torch.gather(idx[:, :n], 1, start)                                # (N, q): f(x)
    weight = (fx != start).float()                 # (N, q): 1 where x is no fixed point
    att = torch.from_numpy(attention_weights(model, idx))                  # (L, N, nh, T, T)
    att = att[:, :, :, task.answer_positions]                              # (L, N, nh, q, T)
    L, N, nh, q, T = att.shape
    w = weight[None, :, None, :] / weight.sum()                            # (1, N, 1, q)

    def mean(a):                                                           # (L, N, nh, q)
        return (a * w).sum(dim=(1, 3)).numpy()                             # -> (L, nh)

    def at(pos):                                                           # (N, q) -> (L, nh)
        where = pos[None, :, None, :, None].expand(L, N, nh, q, 1)
        return mean(torch.gather(att, 4, where).squeeze(-1))

    return {"x": at(start), "f(x)": at(fx), "table": mean(att[..., :n].sum(-1))}


#: The two edits ``overwrite_address`` can make: over the address f(x), or elsewhere.
EDITS = ("f(x)", "elsewhere")


def overwrite_address(model, task, at: str = "f(x)", n_sequences: int = 1024,
                      seed: int = 10**9 + 700) -> dict[str, float]:
    """How does a model take the second hop? A causal test on two-hop queries, scored on the
    first query of each of ``n_sequences`` fresh sequences. One table position is
    overwritten with a copy of another table symbol, so that one symbol is written twice
    and one (the "missing" one) nowhere: with ``at="f(x)"`` the position f(x), where
    f(f(x)) was written; with ``at="elsewhere"`` a random position that a chaser does not
    read (neither x nor f(x)). Returns the shares of the answers:

    * ``"chased"``: what is now written at f(x), the answer of a model that follows the
      pointers (the copy after the first edit, f(f(x)) after the second);
    * ``"missing"``: the symbol now written nowhere, the answer of a model that names the
      symbol the table lacks (f(f(x)) after the first edit, the overwritten symbol after
      the second);
    * ``"other"``: anything else (the three sum to 1);

    and ``"unedited"``, the accuracy on the same queries before the edit. Left out, so that
    no outcome is the query symbol x itself or touches the first hop: starts that are fixed
    points of f or lie on a 2-cycle, a copy equal to x, and (elsewhere) an overwritten x."""
    check_choice("at", at, EDITS)
    check_int("n_sequences", n_sequences, 1)
    n = task.n_nodes
    if n < 5:
        raise ValueError(f"overwrite_address needs a table of at least 5 symbols, got {n}")
    idx, _ = task.batch(n_sequences, seed=seed, hops=2)                    # (N, T)
    rows = torch.arange(n_sequences)
    x = task.queries(idx)[1][:, 0]                                         # (N,): x
    fx = idx[rows, x]
    keep = (fx != x) & (idx[rows, fx] != x)       # x neither fixed nor on a 2-cycle
    idx, x, fx = idx[keep], x[keep], fx[keep]
    rows = torch.arange(len(x))
    ffx = idx[rows, fx]                                                    # f(f(x))
    x_at = (idx[:, :n] == x[:, None]).float().argmax(1)    # f^-1(x): where x is written
    gen = torch.Generator().manual_seed(seed + 1)       # not the stream of task.batch

    def draw(*exclude):                                   # (N,): a position, none of these
        out = torch.randint(0, n, (len(x),), generator=gen)
        while (bad := torch.stack([out == e for e in exclude]).any(0)).any():
            out[bad] = torch.randint(0, n, (int(bad.sum()),), generator=gen)
        return out

    p = draw(x, fx, x_at)                 # the copy f(p): not f(x), f(f(x)) or x
    pos = fx if at == "f(x)" else draw(x, fx, x_at, p)    # the position overwritten
    missing = idx[rows, pos]
    edited = idx.clone()
    edited[rows, pos] = idx[rows, p]
    chased = edited[rows, edited[rows, x]]                                 # f'(f'(x))
    where = int(task.answer_positions[0])
    with eval_mode(model), torch.no_grad():
        before = model(idx)[0][:, where].argmax(-1)                        # (N,)
        after = model(edited)[0][:, where].argmax(-1)
    is_chased, is_missing = after == chased, after == missing
    return {"chased": is_chased.float().mean().item(),
            "missing": is_missing.float().mean().item(),
            "other": (~(is_chased | is_missing)).float().mean().item(),
            "unedited": (before == ffx).float().mean().item()}
