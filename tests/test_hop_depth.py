"""C5's parts on the induction task (``ch3_hops``), on hand-made shapes whose verdict is
known: C5a (``judge_serial_steps``: depth that grows with k at fixed width, the deeper of
each equal-parameter pair against the shallower) and C5b (``judge_construction``: a circuit
that needs fewer than k blocks); C5c's rule is tested in ``test_long_chains.py``."""

import pytest

from depthnotes.verdicts.ch3_chasing import ACCURACY_MARGIN, HopSweepShape
from depthnotes.verdicts.ch3_hops import (EQUAL_PAIRS, bar, depth_every_seed,
                                          judge_construction, judge_serial_steps,
                                          straddling)
from depthnotes.verdicts.evidence import (CONTRADICTED, IN_PART, NOT_SHOWN, REPRODUCED)

HOPS = (1, 2, 4, 8)
DONE, UNDONE = [0.99, 0.98, 0.97], [0.40, 0.45, 0.42]


def shape(L, d, done_up_to):
    """Does every k <= done_up_to, no k above (three seeds)."""
    return HopSweepShape(L, d, f"L={L} d={d}", 1e-3, {1e-3: 0.5},
                      {k: list(DONE if k <= done_up_to else UNDONE) for k in HOPS})


def sweep(width_done, equal_done=(1, 2, 2, 4, 8)):
    """Fixed width L = 1..6 doing k up to width_done[L-1]; fixed parameters at L = 1, 2, 3,
    4, 6 doing k up to equal_done."""
    width = [shape(L, 64, m) for L, m in enumerate(width_done, start=1)]
    equal = [shape(L, d, m) for (L, d), m in zip(((1, 128), (2, 92), (3, 72), (4, 64),
                                                  (6, 52)), equal_done)]
    return {"fixed width": width, "fixed parameters": equal}


def test_depth_that_grows_with_k_and_deeper_pairs_that_win():
    v = judge_serial_steps(sweep([1, 2, 2, 4, 8, 8]))
    assert v.needed == {1: (1, 1), 2: (2, 2), 4: (4, 4), 8: (5, 5)} and v.grows
    assert v.pair_words == {2: REPRODUCED, 4: REPRODUCED, 8: REPRODUCED}
    assert (v.width_word, v.equal_word, v.word) == (REPRODUCED,) * 3
    assert v.pairs[4].a.name == "L=4, d=64" and v.pairs[4].b.name == "L=2, d=92"


def test_no_growth_is_not_shown():
    v = judge_serial_steps(sweep([8, 8, 8, 8, 8, 8]))            # every k at one block
    assert not v.grows and v.width_word == NOT_SHOWN and v.word == IN_PART
    v = judge_serial_steps(sweep([1, 1, 1, 1, 1, 1]))            # k = 1 only, anywhere
    assert not v.grows                                            # growth must be measured
    assert not judge_serial_steps(sweep([0, 0, 0, 8, 8, 8])).grows     # k = 1 never done


def test_depth_needed_uses_every_seed_of_one_shape():
    """Seeds are not paired across shapes: a shape counts when every seed does k; the first
    depth where some seed does is reported beside it."""
    s = sweep([1, 2, 2, 4, 8, 8])
    s["fixed width"][1].accuracy[2] = [0.86, 0.91, 0.91]           # two of three at L = 2
    assert depth_every_seed(s["fixed width"], 2) == (3, 2)
    assert [x.n_layer for x in straddling(s["fixed width"], 2)] == [2]
    assert depth_every_seed(s["fixed width"], 8, 0.995) == (None, None)
    assert depth_every_seed(s["fixed width"], 8, 0.98) == (None, 5)   # two seeds of three


def test_a_shallower_pair_member_that_wins_contradicts():
    s = sweep([1, 2, 2, 4, 8, 8], equal_done=(1, 2, 2, 4, 8))
    s["fixed parameters"][3].accuracy[8] = [0.2, 0.21, 0.22]       # L = 4 below L = 6's?
    s["fixed parameters"][4].accuracy[8] = [0.1, 0.11, 0.12]       # L = 6 clearly worse
    v = judge_serial_steps(s)
    assert v.pair_words[8] == CONTRADICTED and v.equal_word == IN_PART


def test_a_gap_inside_the_noise_is_not_shown():
    s = sweep([1, 2, 2, 4, 8, 8])
    s["fixed parameters"][1].accuracy[2] = [0.97, 0.2, 0.99]       # spread over the gap
    v = judge_serial_steps(s)
    assert v.pairs[2].verdict == "within noise" and v.pair_words[2] == NOT_SHOWN
    s = sweep([1, 2, 2, 4, 8, 8])
    gap = ACCURACY_MARGIN / 2                                       # under the margin
    s["fixed parameters"][0].accuracy[2] = [x - gap for x in DONE]
    assert judge_serial_steps(s).pair_words[2] == NOT_SHOWN


def test_the_pairs_are_equal_parameter_depths_doubled():
    assert EQUAL_PAIRS == {2: (1, 2), 4: (2, 4), 8: (4, 6)}


def test_mismatched_inputs_are_clear_errors():
    with pytest.raises(ValueError, match="both families"):
        judge_serial_steps({"fixed width": sweep([1, 2, 2, 4, 8, 8])["fixed width"]})
    s = sweep([1, 2, 2, 4, 8, 8])
    s["fixed parameters"] = s["fixed parameters"][:3]             # no L = 4 or 6
    with pytest.raises(ValueError, match="the family has depths"):
        judge_serial_steps(s)


def test_construction_with_fewer_than_k_blocks_contradicts():
    built = {("relay", 8): (9, 1.0, 0.0), ("doubling", 8): (5, 1.0, 0.35),
             ("relay", 1): (2, 1.0, 0.0), ("doubling", 1): (2, 1.0, 0.0)}
    assert judge_construction(built) == (CONTRADICTED, (8,))
    # not exact, or still exact with one block fewer (its count is not what it needs)
    assert judge_construction({**built, ("doubling", 8): (5, 0.9, 0.35)}) == (REPRODUCED, ())
    assert judge_construction({**built, ("doubling", 8): (5, 1.0, 0.95)}) == (REPRODUCED, ())


def test_bar_is_the_shorter_hops_baseline_plus_the_margin():
    assert bar(0.51) == pytest.approx(0.51 + ACCURACY_MARGIN)


def test_hop_attention_finds_a_head_that_reads_one_hop_back(monkeypatch):
    """hop_attention's bookkeeping, on attention made by hand: block 0 reads the previous
    position, block 1 reads sigma(t), block 2 spreads evenly."""
    import numpy as np

    from depthnotes.verdicts import ch3_hops as hop_depth
    from depthnotes.data.tasks import InductionHops

    task = InductionHops(length=24)

    def fake_attention(model, idx):
        s = idx[:, 1:]
        N, T = idx.shape
        one = task.hop_positions(s, 1)
        att = np.zeros((3, N, 1, T, T))
        for b in range(N):
            for t in range(1, T):
                att[0, b, 0, t, t - 1] = 1.0
                if t >= 1 and one[b, t - 1] >= 0:
                    att[1, b, 0, t, int(one[b, t - 1]) + 1] = 1.0
                att[2, b, 0, t, :t + 1] = 1.0 / (t + 1)
        return att

    monkeypatch.setattr(hop_depth, "attention_weights", fake_attention)
    looks = hop_depth.hop_attention(None, task, 2, n_sequences=8)
    assert looks["previous"][0, 0] == pytest.approx(1.0)
    assert looks["hop 1"][1, 0] == pytest.approx(1.0)
    assert looks["hop 1"][0, 0] == pytest.approx(0.0) and looks["hop 2"][1, 0] == 0.0
    assert looks["hop 2"][2, 0] == pytest.approx(looks["even share"], rel=1e-6)
