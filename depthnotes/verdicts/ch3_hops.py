"""Chapter 3's verdict on C5 from the k-hop induction task, a part at a time.

C5 says that a task of k dependent steps needs on the order of k layers and that a shallow,
wide model of equal size falls short. It holds three statements, each judged by its own
rule (each stated on the page before the results it judges):

* **C5a, depth buys serial steps** (``judge_serial_steps``), on the sweep (records
  ``induction_depth_sweep`` and ``induction_rate_check``; each shape at the better of two
  rates, ``ch3_chasing.family_shapes``). At fixed width the depth that does k hops (every
  seed at ``SOLVED``; seeds are never paired across shapes) grows with k; at equal
  parameters the deeper shape of each pair in ``EQUAL_PAIRS`` beats the shallower clearly
  (``evidence.compare``).
* **C5b, k blocks are needed** (``judge_construction``): hand-set weights
  (``measure.constructions``) that do k hops with fewer than k blocks contradict it as a
  statement of necessity.
* **C5c, what training finds: k or log k** (``judge_fixed_depth``), on one depth trained on
  every k from 1 to 8 (record ``induction_fixed_depth``) and scored on long chains, where a
  window of reads cannot stand in for hops (``data.tasks.LONG_SPAN``).

``hop_attention`` measures where a trained model's heads look along a chain.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from depthnotes.core.checks import check_int
from depthnotes.measure.probes import attention_weights
from depthnotes.verdicts.ch3_chasing import (ACCURACY_MARGIN, FAMILIES, SOLVED, HopSweepShape,
                                             shape_name)
from depthnotes.verdicts.evidence import (CONTRADICTED, MIN_SEEDS, NOT_SHOWN, NOT_TESTABLE,
                                          REPRODUCED, combine)


def bar(shorter_hops: float) -> float:
    """The level a model must beat at k hops: the best guess from all the symbols fewer
    than k hops away (``hops.hop_baselines``'s ``"shorter_hops"``) + ``ACCURACY_MARGIN``."""
    return shorter_hops + ACCURACY_MARGIN


def hop_attention(model, task, hops: int, n_sequences: int = 128,
                  seed: int = 10**9 + 500) -> dict:
    """Where a trained model's heads look at ``hops``-hop queries of ``tasks.InductionHops``:
    the mean attention, per block and head (each (L, n_head)), from a query position t on

    * ``"previous"``: the position just before t (what a previous-symbol head reads);
    * ``"hop j"`` for j = 1..hops: the position sigma^j(t), j hops back (where the j-hop
      answer is written);

    averaged over the positions of ``n_sequences`` fresh sequences whose ``hops``-hop
    answer exists and whose ``hops`` targets are distinct positions (so that no weight is
    counted twice). A head that spread evenly over the t positions it may see would put
    about 1/t on each; the chapter compares against that."""
    idx, _ = task.batch(n_sequences, seed=seed, hops=hops)                    # (N, T + 1)
    s = idx[:, 1:]                                                            # symbols
    hop_pos = [task.hop_positions(s, j) for j in range(hops + 1)]             # (N, T) each
    keep = hop_pos[hops] >= 0
    keep[:, 0] = False
    targets = torch.stack(hop_pos[1:] + [torch.arange(s.shape[1]).expand_as(s) - 1])
    for j in range(len(targets)):                                             # distinct
        for i in range(j):
            keep &= targets[i] != targets[j]
    att = torch.from_numpy(attention_weights(model, idx))[..., 1:, 1:]        # symbols only
    L, N, nh, T, _ = att.shape
    w = keep.float()[None, :, None, :] / keep.sum()                           # (1, N, 1, T)

    def on(pos):                                                              # (N, T)
        where = pos.clamp(min=0)[None, :, None, :, None].expand(L, N, nh, T, 1)
        return (torch.gather(att, 4, where).squeeze(-1) * w).sum(dim=(1, 3)).numpy()

    out = {"previous": on(targets[-1])}
    out.update({f"hop {j}": on(hop_pos[j]) for j in range(1, hops + 1)})
    # position t sees t + 2 positions (the marker too): an even head puts 1/(t + 2) on each
    out["even share"] = float((w[0, :, 0, :] / (torch.arange(T) + 2.0)).sum())
    return out


# -- C5, after training: k or log k at one fixed depth (record induction_fixed_depth) ----------
#: From this k on, a k is scored on its long chains (``data.tasks.LONG_SPAN``); shorter k's
#: have almost none (under 1 % of their queries on four letters) and are scored on all.
LONG_FROM = 4


def scored_accuracy(accuracy: dict, long_accuracy: dict, long_from: int = LONG_FROM) -> dict:
    """Per k (in increasing order: ``accuracy``'s keys), the accuracy the fixed-depth rule
    reads: from ``long_from`` on, on long chains (``long_accuracy``; None for a k without
    long chains), below it on all chains."""
    return {k: long_accuracy.get(k) if k >= long_from else accuracy[k]
            for k in sorted(accuracy)}


def hops_done(accuracy: dict, long_accuracy: dict, solved: float = SOLVED,
              long_from: int = LONG_FROM) -> int:
    """The largest k such that a model answers at least ``solved`` of the queries of every
    k' <= k, each scored as ``scored_accuracy`` reads it (a k' without long chains is not
    done). 0 when it does not do the first k."""
    done = 0
    for k, a in scored_accuracy(accuracy, long_accuracy, long_from).items():
        if a is None or a < solved:
            break
        done = k
    return done


def relay_reach(n_layer: int) -> int:
    """The most hops a relay (one block per hop) reaches with ``n_layer`` blocks when its
    first hop is read off a window by the first block instead of taking two: ``n_layer``,
    one more than the exact chain's ``n_layer - 1``; the fixed-depth rule allows one more
    still (a second hop approximated the same way), ``n_layer + 1``."""
    return check_int("n_layer", n_layer, 2) + 1


def doubling_reach(n_layer: int) -> int:
    """The most hops pointer doubling reaches with ``n_layer`` blocks: ``2 ** (n_layer - 2)``
    (the inverse of ``tasks.doubling_depth``)."""
    return 2 ** (check_int("n_layer", n_layer, 2) - 2)


@dataclass(frozen=True)
class FixedDepthVerdict:
    """C5's third part on one depth trained on every k (``judge_fixed_depth``)."""

    n_layer: int
    done: tuple            # hops done, per seed (``hops_done``)
    control: int           # every seed must do at least this many (both circuits do)
    relay: int             # the most a relay-like model reaches (``relay_reach``)
    doubling: int          # what doubling reaches (``doubling_reach``)
    word: str
    reading: str           # "like k", "like log k", "mixed" or "control failed"


def judge_fixed_depth(done: list, n_layer: int) -> FixedDepthVerdict:
    """The fixed-depth rule, stated before the record ran (its description): per seed the
    hops done on long chains (``hops_done``). The positive control: every seed does at
    least ``n_layer - 1`` hops, what the exact relay chain does with ``n_layer`` blocks (and
    doubling does more); otherwise the design cannot tell the circuits apart (not testable
    here). Then, for "k steps take about k blocks" after training: every seed at or under
    ``relay_reach`` -> reproduced (relay-like); every seed above it -> contradicted here
    (beyond any relay, as doubling allows); seeds on both sides -> not shown here."""
    done = tuple(check_int("done", d, 0) for d in done)
    if len(done) < MIN_SEEDS:
        raise ValueError(f"judge_fixed_depth needs at least {MIN_SEEDS} seeds, got {len(done)}")
    control, relay = n_layer - 1, relay_reach(n_layer)
    if min(done) < control:
        word, reading = NOT_TESTABLE, "control failed"
    elif max(done) <= relay:
        word, reading = REPRODUCED, "like k"
    elif min(done) > relay:
        word, reading = CONTRADICTED, "like log k"
    else:
        word, reading = NOT_SHOWN, "mixed"
    return FixedDepthVerdict(n_layer, done, control, relay, doubling_reach(n_layer), word,
                             reading)


# -- C5 in parts: serial steps at equal parameters; k blocks needed? -------------------------
#: C5a's equal-parameter pairs, (shallower, deeper) blocks of the fixed-parameter family at
#: each k: the depth doubled each time (to the family's deepest at k = 8).
EQUAL_PAIRS = {2: (1, 2), 4: (2, 4), 8: (4, 6)}
#: A hand-set circuit "does" k hops when it answers at least this share (it is exact).
EXACT = 0.99


def depth_every_seed(shapes: list[HopSweepShape], k: int, threshold: float = SOLVED):
    """``(every, some)``: the smallest depth of a family whose every seed answers at least
    ``threshold`` of k-hop queries, and the smallest at which some seed does (None: no depth
    of the family). Seeds are not paired across shapes: seed i of one shape and seed i of
    another are unrelated runs."""
    every = min((s.n_layer for s in shapes if min(s.accuracy[k]) >= threshold), default=None)
    some = min((s.n_layer for s in shapes if max(s.accuracy[k]) >= threshold), default=None)
    return every, some


def straddling(shapes: list[HopSweepShape], k: int, threshold: float = SOLVED) -> list:
    """The shapes whose seeds fall on both sides of ``threshold`` at k: there the depth
    that 'does' k sits inside the seed noise."""
    return [s for s in shapes if min(s.accuracy[k]) < threshold <= max(s.accuracy[k])]


@dataclass(frozen=True)
class SerialStepsVerdict:
    """C5a: depth buys serial steps (``judge_serial_steps``)."""

    hops: tuple
    needed: dict          # {k: (every seed, some seed)} at fixed width (``depth_every_seed``)
    grows: bool           # the fixed-width piece's rule
    pairs: dict           # {k: Difference, deeper against shallower, equal parameters}
    pair_words: dict      # {k: outcome word}
    width_word: str
    equal_word: str
    word: str             # the two pieces combined


def judge_serial_steps(shapes: dict, pairs: dict = EQUAL_PAIRS) -> SerialStepsVerdict:
    """C5a from ``{family: [HopSweepShape by depth]}``, each shape at its better rate.

    *Fixed width*: with ``every`` the smallest depth whose every seed does k
    (``depth_every_seed``), reproduced when it never falls as k grows (None: deeper than
    the family), k = 1 is done, and some larger k is done with more blocks; else not shown.
    *Equal parameters*: at each k of ``pairs``, the deeper shape against the shallower by
    the book's rule (``evidence.compare``, higher is better, margin ``ACCURACY_MARGIN``):
    reproduced when the deeper is clearly better, contradicted here when the shallower is,
    else not shown here; the piece's word combines the k's (``evidence.combine``)."""
    from depthnotes.verdicts.evidence import compare, outcome

    for fam in FAMILIES:
        if fam not in shapes or not shapes[fam]:
            raise ValueError(f"judge_serial_steps needs both families, got {sorted(shapes)}")
    width = shapes["fixed width"]
    hops = tuple(sorted(width[0].accuracy))
    needed = {k: depth_every_seed(width, k) for k in hops}
    every = [needed[k][0] for k in hops]
    big = [float("inf") if d is None else d for d in every]
    done = [d for d in every if d is not None]
    grows = (every[0] is not None and all(a <= b for a, b in zip(big, big[1:]))
             and max(done) > every[0])
    by_depth = {s.n_layer: s for s in shapes["fixed parameters"]}
    diffs, words = {}, {}
    for k, (low, high) in pairs.items():
        if k not in hops or low not in by_depth or high not in by_depth:
            raise ValueError(f"pair {low} < {high} blocks at k = {k}: the family has depths "
                             f"{sorted(by_depth)} and k = {list(hops)}")
        a, b = by_depth[high], by_depth[low]
        diffs[k] = compare((shape_name(a), a.accuracy[k]), (shape_name(b), b.accuracy[k]),
                           better="higher", margin=ACCURACY_MARGIN)
        words[k] = outcome(diffs[k], shape_name(a)).word
    width_word = REPRODUCED if grows else NOT_SHOWN
    equal_word = combine(list(words.values()))
    return SerialStepsVerdict(hops, needed, grows, diffs, words, width_word, equal_word,
                              combine([width_word, equal_word]))


def judge_construction(built: dict) -> tuple[str, tuple]:
    """C5b, "k dependent steps need about k blocks", against hand-set weights: ``built`` is
    ``{(circuit, k): (blocks, accuracy, accuracy with one block fewer)}``. A circuit counts
    at k when it does k hops (at least ``EXACT``) and fails with one block fewer (under
    ``SOLVED``), so that its count is what it needs. Contradicted here when some counting
    circuit does some k with fewer than k blocks; reproduced when none does; returns the
    word and those k's."""
    fewer = tuple(sorted({k for (kind, k), (n, acc, less) in built.items()
                          if acc >= EXACT and less < SOLVED and n < k}))
    return (CONTRADICTED if fewer else REPRODUCED), fewer


def fixed_depth_from_record(record) -> FixedDepthVerdict:
    """``judge_fixed_depth`` on a fixed-depth record (``induction_fixed_depth``: one arm,
    final metrics ``accuracy_k<k>`` and ``long_accuracy_k<k>`` per seed), its depth read
    from the arm's ``info["n_layer"]``."""
    if len(record.arms) != 1:
        raise ValueError(f"a fixed-depth record has one arm, {record.name!r} has "
                         f"{len(record.arms)}")
    done = [hops_done(*_final_accuracies(record, seed)) for seed in record.seeds]
    return judge_fixed_depth(done, record.arm(record.arms[0])["info"]["n_layer"])


def fixed_depth_scores(record, seed: int) -> dict:
    """One seed's ``scored_accuracy`` on a fixed-depth record: per k, what the rule reads."""
    return scored_accuracy(*_final_accuracies(record, seed))


def _final_accuracies(record, seed: int) -> tuple[dict, dict]:
    """``(accuracy, long_accuracy)`` per k of the one arm's run with ``seed``, read from its
    final metrics ``accuracy_k<k>`` and ``long_accuracy_k<k>``."""
    final = record.run(record.arms[0], seed)["final"]

    def per_k(prefix):
        return {int(key.removeprefix(prefix)): v for key, v in final.items()
                if key.startswith(prefix)}

    return per_k("accuracy_k"), per_k("long_accuracy_k")
