"""C5's rule on the induction sweep (``hop_depth.judge_hop_depth``), on hand-made shapes whose
verdict is known: depth growing like k + 1, like doubling, not growing, and one wide block
that does too well."""

import pytest

from depthnotes.verdicts.ch3_hops import AS_CHASING, FEWER, NOT_TOLD, bar, judge_hop_depth
from depthnotes.verdicts.ch3_chasing import MARGIN, SweepShape
from depthnotes.verdicts.evidence import IN_PART, NOT_SHOWN, REPRODUCED

HOPS = (1, 2, 4, 8)
BARS = {k: bar(0.5) for k in HOPS}
DONE, UNDONE = [0.99, 0.98, 0.97], [0.40, 0.45, 0.42]


def shape(L, d, done_up_to):
    """Does every k <= done_up_to, no k above (three seeds)."""
    return SweepShape(L, d, f"L={L} d={d}", 1e-3, {1e-3: 0.5},
                      {k: list(DONE if k <= done_up_to else UNDONE) for k in HOPS})


def sweep(width_done, wide_done=0):
    """Fixed width L = 1..6 doing k up to width_done[L-1]; fixed parameters: one wide block
    doing k up to wide_done, then the width family's L = 2 and L = 4."""
    width = [shape(L, 64, m) for L, m in enumerate(width_done, start=1)]
    return {"fixed width": width,
            "fixed parameters": [shape(1, 128, wide_done), shape(2, 92, width_done[1]),
                                 width[3]]}


def test_depth_like_chasing():
    v = judge_hop_depth(sweep([0, 1, 2, 2, 4, 4]), BARS)       # k=4 first at L=5
    assert v.needed["fixed width"][4] == [5, 5, 5] and v.grows
    assert v.growth == {4: AS_CHASING, 8: NOT_TOLD}
    # parts 1 and 2 hold; "about k blocks" is not shown at k = 8 (not told apart)
    assert v.word == IN_PART and "as many blocks as a chain" in v.caveat
    assert "at k = 8 growth like k and like log k are not told apart" in v.caveat
    assert "not shown" not in v.caveat                      # rules 1 and 2 both hold


def test_depth_like_chasing_at_every_k_is_reproduced():
    v = judge_hop_depth(sweep([0, 1, 2, 2, 4, 4, 4, 4, 8]), BARS)     # k=8 first at L=9
    assert v.needed["fixed width"][8] == [9, 9, 9] and v.grows
    assert v.growth == {4: AS_CHASING, 8: AS_CHASING} and v.judged == (2,)
    assert v.word == REPRODUCED and "not shown" not in v.caveat


def test_depth_like_doubling():
    v = judge_hop_depth(sweep([0, 1, 2, 4, 8, 8]), BARS)       # k=4 at L=4, k=8 at L=5
    assert v.growth == {4: FEWER, 8: FEWER}
    assert v.word == IN_PART and "fewer than k blocks" in v.caveat
    assert v.predicted[8] == (9, 5)


def test_nothing_learned_beyond_one_length_is_not_growth():
    """Rule 1 needs growth it measured: doing k = 1 and k = 2 with two blocks and nothing
    longer with any depth passes "never falls" only vacuously; and a k no seed does is not
    "as chasing"."""
    v = judge_hop_depth(sweep([0, 2, 2, 2, 2, 2]), BARS)
    assert v.needed["fixed width"][4] == [None] * 3 and not v.grows
    # rule 1 not shown, rule 2 (one wide block falls short at k = 2) holds: in part
    assert v.growth == {4: NOT_TOLD, 8: NOT_TOLD} and v.word == IN_PART
    assert "not shown here: serial steps cost depth" in v.caveat
    assert "one wide block" not in v.caveat
    assert not judge_hop_depth(sweep([0, 0, 0, 0, 4, 4]), BARS).grows   # k = 1 never done


def test_mixed_growth_names_every_kind():
    s = sweep([0, 1, 2, 4, 4, 4])                     # k = 4 at L = 4 with every seed
    s["fixed width"][3].accuracy[4][2] = 0.6          # seed 2: k = 4 first at L = 5
    s["fixed width"][4].accuracy[8][:] = [0.95] * 3   # k = 8 at L = 5: fewer than 9
    v = judge_hop_depth(s, BARS)
    assert v.growth == {4: NOT_TOLD, 8: FEWER} and v.word == IN_PART
    assert "k = 8 done with fewer" in v.caveat and "at k = 4 growth" in v.caveat


def test_no_growth_leaves_only_the_wide_block_part():
    v = judge_hop_depth(sweep([0, 8, 8, 8, 8, 8]), BARS)       # every k at two blocks
    assert not v.grows and v.judged == (2, 4, 8)
    assert v.word == IN_PART and "not shown here: serial steps cost depth" in v.caveat
    # nor does a wide block fall short: every part not shown
    v = judge_hop_depth(sweep([0, 8, 8, 8, 8, 8], wide_done=8), BARS)
    assert not v.grows and not any(v.wide_undone.values()) and v.word == NOT_SHOWN
    assert "not shown here: one wide block falls short" in v.caveat


def test_one_hop_by_one_wide_block_is_not_judged():
    """One hop is one step: a wide block may do it (by reading a few places back)."""
    v = judge_hop_depth(sweep([0, 1, 2, 2, 4, 4], wide_done=1), BARS)
    assert not v.wide_undone[1] and v.judged == (2,)
    assert v.word == IN_PART and "wide block" not in v.caveat      # rule 2 holds


def test_a_wide_block_that_does_two_hops_refutes_the_second_half():
    v = judge_hop_depth(sweep([0, 1, 2, 2, 4, 4], wide_done=2), BARS)
    assert not v.wide_undone[2] and v.word == IN_PART              # rule 1 still holds
    assert "not shown here: one wide block falls short" in v.caveat
    v = judge_hop_depth(sweep([0, 1, 2, 2, 4, 4, 4, 4, 8], wide_done=2), BARS)
    assert v.word == IN_PART                # all but the wide-block part: still in part


def test_no_k_done_at_equal_parameters_leaves_the_second_half_untested():
    v = judge_hop_depth(sweep([0, 1, 1, 1, 2, 2]), BARS)       # the family's L=2, 4 do k=1
    # rule 2 not testable (no k to judge), rule 1 holds: in part
    assert v.judged == () and v.grows and v.word == IN_PART
    s = sweep([0, 1, 1, 1, 1, 1])                                  # k = 1 only, anywhere
    v = judge_hop_depth(s, BARS)
    assert v.judged == () and not v.grows and v.word == NOT_SHOWN


def test_a_wide_block_above_the_bar_but_doing_no_k_is_struggling():
    s = sweep([0, 1, 2, 2, 4, 4])
    s["fixed parameters"][0].accuracy[1][:] = [0.7, 0.65, 0.6]     # above the bar, < SOLVED
    v = judge_hop_depth(s, BARS)
    assert v.beats["fixed parameters"][1] == [1, 1, 1] and v.wide_undone
    assert v.word == IN_PART and "wide block" not in v.caveat


def test_growth_needs_every_seed():
    s = sweep([0, 1, 2, 4, 4, 4])
    s["fixed width"][3].accuracy[4][2] = 0.6          # seed 2 of L=4 leaves k=4 undone
    v = judge_hop_depth(s, BARS)
    assert v.needed["fixed width"][4] == [4, 4, 5] and v.growth[4] == NOT_TOLD


def test_bar_is_the_shorter_hops_baseline_plus_the_margin():
    assert bar(0.51) == pytest.approx(0.51 + MARGIN)


def test_mismatched_inputs_are_clear_errors():
    with pytest.raises(ValueError, match="both families"):
        judge_hop_depth({"fixed width": sweep([0, 1, 2, 2, 4, 4])["fixed width"]}, BARS)
    with pytest.raises(ValueError, match="the bars are for"):
        judge_hop_depth(sweep([0, 1, 2, 2, 4, 4]), {1: 0.4, 2: 0.5})


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
