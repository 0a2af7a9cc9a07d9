"""Chapter 3's reading of its depth sweep: best rate per shape, depth needed per seed, and the
causal-mask reach of pointer doubling."""

import numpy as np
import torch
import pytest

from depthnotes.data.hops import causal_doubling_reach
from depthnotes.verdicts.ch3_chasing import depth_needed, family_shapes, hops_of
from fake_records import FakeRecord, info


RECORD = FakeRecord({
    "L=1 lr=1e-3": (info(1, 64, 1e-3, "fixed width"), {1: [1, 1, 1], 2: [.30, .31, .29]}),
    "L=1 lr=3e-3": (info(1, 64, 3e-3, "fixed width"), {1: [1, 1, 1], 2: [.20, .22, .21]}),
    "L=2": (info(2, 64, 3e-3, "fixed width", "fixed parameters"),
            {1: [1, 1, 1], 2: [.80, .24, .60]}),
    "L=3": (info(3, 64, 3e-3, "fixed width"), {1: [1, 1, 1], 2: [.20, .70, .25]}),
    "L=1 d=90": (info(1, 90, 3e-3, "fixed parameters"), {1: [1, 1, 1], 2: [.2, .2, .2]}),
})


def test_each_shape_takes_its_best_rate_and_families_are_separate():
    width = family_shapes(RECORD, "fixed width")
    assert [(s.n_layer, s.d_model) for s in width] == [(1, 64), (2, 64), (3, 64)]
    assert width[0].arm == "L=1 lr=1e-3" and width[0].lr == 1e-3
    assert width[0].rates == pytest.approx({1e-3: 0.30, 3e-3: 0.21})
    params = family_shapes(RECORD, "fixed parameters")
    assert [(s.n_layer, s.d_model) for s in params] == [(1, 90), (2, 64)]
    assert hops_of(RECORD) == [1, 2]


def test_depth_needed_is_per_seed_and_none_when_no_depth_does_it():
    shapes = family_shapes(RECORD, "fixed width")
    assert depth_needed(shapes, 2, threshold=0.5) == [2, 3, 2]
    assert depth_needed(shapes, 2, threshold=0.75) == [2, None, None]
    assert depth_needed(shapes, 2, threshold=0.8) == [2, None, None]     # at least: >=
    assert depth_needed(shapes, 1, threshold=0.5) == [1, 1, 1]


def test_bad_family_and_threshold_are_named():
    with pytest.raises(ValueError, match="family"):
        family_shapes(RECORD, "fixed depth")
    with pytest.raises(ValueError, match="threshold"):
        depth_needed(family_shapes(RECORD, "fixed width"), 2, threshold=1.5)


@pytest.mark.parametrize("n", [4, 12])
def test_one_doubling_round_matches_its_closed_form(n):
    # Round 1 needs f(i) <= i: (i + 1) / n of the values, averaged over i: (n + 1) / (2n).
    reach = causal_doubling_reach(n, rounds=1, samples=20_000)
    assert reach[0] == 1.0
    assert reach[1] == pytest.approx((n + 1) / (2 * n), abs=0.01)


def test_doubling_reach_falls_every_round_and_is_repeatable():
    reach = causal_doubling_reach(12, rounds=3, samples=2000)
    assert reach == causal_doubling_reach(12, rounds=3, samples=2000)
    assert reach[0] > reach[1] > reach[2] > reach[3] > 0


def test_doubling_reach_on_the_identity_like_case():
    # n = 2: f is the identity (both fixed points: always reachable) or the swap (position 0
    # cannot read position 1; position 1 reads 0, which holds f(0) = 1, so f^2(1) = 1 only
    # if position 0 has finished round 0, which it has): exact reach 3/4 after one round.
    assert causal_doubling_reach(2, rounds=1, samples=20_000)[1] == pytest.approx(0.75, abs=0.01)


def test_doubling_bad_input():
    with pytest.raises(ValueError, match="rounds"):
        causal_doubling_reach(12, rounds=-1)


def test_attention_weights_reproduce_the_attention_layer():
    import torch

    from depthnotes import ModelConfig, Transformer
    from depthnotes.measure.probes import attention_weights

    cfg = ModelConfig(n_layer=2, d_model=32, n_head=4, vocab_size=20, context=16)
    model = Transformer(cfg, seed=3)
    idx = torch.randint(0, 20, (3, 10), generator=torch.Generator().manual_seed(0))
    att = torch.from_numpy(attention_weights(model, idx))                 # (L, B, nh, T, T)
    assert att.shape == (2, 3, 4, 10, 10)
    assert torch.allclose(att.sum(-1), torch.ones(2, 3, 4, 10), atol=1e-6)
    assert (att.triu(1) == 0).all()                                       # causal
    seen = {}
    block = model.h[1]
    hooks = [block.attn.register_forward_pre_hook(lambda m, a: seen.update(x=a[0])),
             block.attn.register_forward_hook(lambda m, a, out: seen.update(y=out))]
    with torch.no_grad():
        model(idx)
    for h in hooks:
        h.remove()
    x = seen["x"]
    v = block.attn.c_attn(x).split(32, dim=2)[2].view(3, 10, 4, 8).transpose(1, 2)
    y = (att[1] @ v).transpose(1, 2).reshape(3, 10, 32)
    assert torch.allclose(block.attn.c_proj(y), seen["y"], atol=1e-5)


def test_chain_attention_of_an_untrained_model_is_spread_evenly():
    from depthnotes import ModelConfig, Transformer
    from depthnotes.verdicts.ch3_chasing import chain_attention
    from depthnotes.data.tasks import PointerChasing

    task = PointerChasing(max_hops=2, n_nodes=8, n_queries=8)
    cfg = ModelConfig(n_layer=2, d_model=32, n_head=2, vocab_size=task.vocab_size,
                      context=task.seq_len)
    out = chain_attention(Transformer(cfg, seed=0), task, hops=2, n_sequences=64)
    assert set(out) == {"x", "f(x)", "table"} and out["x"].shape == (2, 2)
    even = out["table"] / task.n_nodes
    assert np.allclose(out["x"], even, rtol=0.1) and np.allclose(out["f(x)"], even, rtol=0.1)
    with pytest.raises(ValueError, match="hops"):
        chain_attention(Transformer(cfg, seed=0), task, hops=0)


def test_attention_weights_of_a_looped_model_have_one_entry_per_application():
    import torch

    from depthnotes import ModelConfig, Transformer
    from depthnotes.measure.probes import attention_weights

    cfg = ModelConfig(n_layer=3, d_model=32, n_head=2, vocab_size=20, context=16,
                      n_unique_blocks=1)
    idx = torch.randint(0, 20, (2, 8), generator=torch.Generator().manual_seed(1))
    att = attention_weights(Transformer(cfg, seed=0), idx)
    assert att.shape == (3, 2, 2, 8, 8)
    assert not np.allclose(att[0], att[1])      # the same block, a different input stream


def test_shapes_pool_the_rates_of_several_records():
    extra = FakeRecord({
        "L=2 lr=1e-3": (info(2, 64, 1e-3, "fixed width", "fixed parameters"),
                        {1: [1, 1, 1], 2: [.95, .9, .92]}),
    })
    width = family_shapes([RECORD, extra], "fixed width")
    two = [s for s in width if s.n_layer == 2][0]
    assert two.arm == "L=2 lr=1e-3" and two.rates == pytest.approx({3e-3: 0.5467, 1e-3: .9233},
                                                                     abs=1e-3)
    with pytest.raises(ValueError, match="two of the records"):
        family_shapes([RECORD, RECORD], "fixed width")


def test_the_rate_is_the_evidence_librarys_pick():
    one = family_shapes(RECORD, "fixed width")[0]
    assert one.pick.best == one.lr == 1e-3 and one.pick.at_edge == "low"
    assert not one.pick.judgeable                      # 1e-3 is the lowest rate tried
    tie = FakeRecord({
        "L=1 lr=3e-3": (info(1, 64, 3e-3, "fixed width"), {1: [1, 1, 1], 2: [.3, .3, .3]}),
        "L=1 lr=1e-3": (info(1, 64, 1e-3, "fixed width"), {1: [1, 1, 1], 2: [.3, .3, .3]}),
    })
    assert family_shapes(tie, "fixed width")[0].lr == 1e-3       # the lowest rate on a tie
    twice = FakeRecord({
        "a": (info(1, 64, 1e-3, "fixed width"), {1: [1, 1, 1], 2: [.3, .3, .3]}),
        "b": (info(1, 64, 1e-3, "fixed width"), {1: [1, 1, 1], 2: [.2, .2, .2]}),
    })
    with pytest.raises(ValueError, match="share the learning rate"):
        family_shapes(twice, "fixed width")


# -- the verdict on C5 -----------------------------------------------------------------------
def _shape(L, d, **acc):
    from depthnotes.verdicts.ch3_chasing import HopSweepShape

    accuracy = {int(k[1:]): list(v) for k, v in acc.items()}
    return HopSweepShape(L, d, f"L={L} d={d}", 3e-3, {3e-3: 0.0}, accuracy)


def _families(wide_k2, deep_k2, width_k2=(.1, .1, .1), k3=(.1, .1, .1),
              two_blocks_k2=(.7, .6, .65)):
    one = (1.0, 1.0, 1.0)
    width = [_shape(1, 64, k1=one, k2=width_k2, k3=k3),
             _shape(2, 64, k1=one, k2=two_blocks_k2, k3=k3)]
    params = [_shape(1, 128, k1=one, k2=wide_k2, k3=k3),
              _shape(2, 92, k1=one, k2=deep_k2, k3=k3)]
    return {"fixed width": width, "fixed parameters": params}


def test_reading_bar_is_two_lookups_plus_margin_and_solving_at_one_hop():
    from depthnotes.data.hops import baselines
    from depthnotes.verdicts.ch3_chasing import ACCURACY_MARGIN, SOLVED, reading_bar

    assert reading_bar(16, 1) == SOLVED
    bar = baselines(16, 2)["two_lookups"] + ACCURACY_MARGIN
    assert reading_bar(16, 2) == pytest.approx(bar)


def test_judge_depth_reproduces_when_one_block_fails_in_both_families():
    """Both parts hold: reproduced. What k = 3 showed is context beside it (the caveat's
    fields), no longer a reason to withhold the plain word."""
    from depthnotes.verdicts.ch3_chasing import NO_MORE_BLOCKS, THREE_UNCHAINED, judge_depth
    from depthnotes.verdicts.evidence import REPRODUCED

    v = judge_depth(_families(wide_k2=(.15, .16, .17), deep_k2=(.6, .7, .8)), 16)
    assert v.word == REPRODUCED and v.one_block_chains == {"fixed width": 0,
                                                           "fixed parameters": 0}
    assert v.needed["fixed width"][2] == [2, 2, 2] and v.needed["fixed width"][1] == [1, 1, 1]
    assert v.needed["fixed width"][3] == [None] * 3 and v.solved["fixed width"][2] == [None] * 3
    assert v.beats["fixed width"][3] == [None] * 3
    assert v.three_hops == THREE_UNCHAINED and not v.two_hops_solved
    solved = judge_depth(_families(wide_k2=(.15, .16, .17), deep_k2=(.9, .95, .92),
                                   two_blocks_k2=(.9, .91, .99), k3=(.6, .7, .6)), 16)
    assert solved.two_hops_solved and solved.solved["fixed width"][2] == [2, 2, 2]
    assert solved.three_hops == NO_MORE_BLOCKS       # three hops chained by two blocks
    assert v.equal_params.best == "L=2, d=92" and v.fixed_width.best == "L=2, d=64"


def test_three_hops_tell_chasing_from_doubling():
    from depthnotes.verdicts.ch3_chasing import (MORE_BLOCKS, NO_MORE_BLOCKS, THREE_UNCHAINED,
                                                 _three_hops)

    assert _three_hops({2: [2, 2, 2], 3: [3, 4, 3]}) == MORE_BLOCKS
    assert _three_hops({2: [2, 2, 2], 3: [3, 2, 3]}) == NO_MORE_BLOCKS   # as doubling allows
    assert _three_hops({2: [2, 2, 2], 3: [3, None, 3]}) == THREE_UNCHAINED
    assert _three_hops({1: [1, 1, 1], 2: [2, 2, 2]}) is None            # no k = 3 swept


def test_judge_depth_in_part_when_one_block_chains_or_the_gap_is_noise():
    """Each of the two parts has its own word; one failing leaves the claim reproduced in
    part (the parts combine; the worst word does not win)."""
    from depthnotes.verdicts.ch3_chasing import judge_depth
    from depthnotes.verdicts.evidence import IN_PART, NOT_SHOWN, REPRODUCED

    holds_table = judge_depth(_families(wide_k2=(.15, .5, .17), deep_k2=(.6, .7, .8)), 16)
    assert holds_table.one_block_chains["fixed parameters"] == 1
    assert holds_table.equal_params.clear                   # clear, but one seed chains
    assert holds_table.word == IN_PART
    narrow_chains = judge_depth(
        _families(wide_k2=(.15, .16, .17), deep_k2=(.6, .7, .8), width_k2=(.5, .1, .1)), 16)
    assert narrow_chains.one_block_chains["fixed width"] == 1 and narrow_chains.word == IN_PART
    # one seed far out (0.7) no longer vetoes: the seeds do not overlap (0.18 > 0.17), so
    # the gap is clear though the old rule's range (0.52) exceeds it (0.19)
    separated = judge_depth(_families(wide_k2=(.15, .16, .17), deep_k2=(.2, .18, .7)), 16)
    d = separated.equal_params.between("L=2, d=92", "L=1, d=128")
    assert not d.overlap and d.gap < separated.equal_params.arm("L=2, d=92").spread
    assert separated.equal_params.clear and separated.word == REPRODUCED
    # overlapping seeds (0.14 < 0.17) and a gap of about one Welch standard error: noise
    within_noise = judge_depth(_families(wide_k2=(.15, .16, .17), deep_k2=(.2, .14, .7)), 16)
    d = within_noise.equal_params.between("L=2, d=92", "L=1, d=128")
    assert d.overlap and d.welch_ratio < 3
    assert not within_noise.equal_params.clear and within_noise.word == IN_PART
    one_seed_short = judge_depth(_families(wide_k2=(.15, .16, .17), deep_k2=(.6, .7, .8),
                                           two_blocks_k2=(.7, .45, .65)), 16)
    assert one_seed_short.needed["fixed width"][2] == [2, None, 2]
    assert one_seed_short.fixed_width.clear and one_seed_short.word == IN_PART
    both_fail = judge_depth(_families(wide_k2=(.15, .5, .17), deep_k2=(.6, .7, .8),
                                      two_blocks_k2=(.7, .45, .65)), 16)
    assert both_fail.word == NOT_SHOWN
    near_the_bar = judge_depth(   # one block beats the bar (0.24) without chaining: counts
        _families(wide_k2=(.3, .3, .3), deep_k2=(.6, .7, .8), width_k2=(.3, .3, .3)), 16)
    assert near_the_bar.beats["fixed width"][2] == [1, 1, 1]
    assert near_the_bar.word == REPRODUCED


def test_check_table_has_three_outcomes_at_the_bar_and_at_chaining():
    from depthnotes.verdicts.ch3_chasing import (CHAINED, NO_SEPARATION, TABLE_FAILS,
                                                 TABLE_HOLDS, check_table, reading_bar)

    bar = reading_bar(20, 2)                                   # 0.15 + 0.05
    held = check_table([bar - .01, .1, .12], [CHAINED, .9, 1.0], 20)
    assert held.holds and held.wide_beats == 0 and held.deep_chains == 3
    assert held.result == TABLE_HOLDS
    beaten = check_table([bar + .01, .1, .6], [.9, .9, .9], 20)   # above the bar: counts
    assert not beaten.holds and beaten.wide_beats == 2 and beaten.wide_chains == 1
    assert beaten.result == TABLE_FAILS
    short = check_table([.1, .1, .1], [.9, CHAINED - .01, .9], 20)
    assert not short.holds and short.deep_chains == 2
    assert short.result == NO_SEPARATION


def test_check_table_names_bad_input():
    from depthnotes.verdicts.ch3_chasing import check_table

    with pytest.raises(ValueError, match="the same seeds"):
        check_table([.1, .2], [.9], 20)
    with pytest.raises(ValueError, match="wide"):
        check_table([1.5], [.9], 20)


def test_check_table_record_reads_the_one_and_two_block_arms():
    from depthnotes.verdicts.ch3_chasing import check_table, check_table_record
    from depthnotes.experiments.records import load_record

    rec = load_record("khop20_long")
    accs, check = check_table_record(rec)
    wide, deep = (rec.final("accuracy_k2")[a] for a in rec.arms)   # L = 1, then L = 2
    assert accs == {1: wide, 2: deep}
    assert check == check_table(wide, deep, rec.config["data"]["n_nodes"])


def test_check_table_record_picks_the_arms_with_a_head_count():
    from depthnotes.verdicts.ch3_chasing import check_table_record
    from depthnotes.experiments.records import load_record

    rec = load_record("khop16_heads")
    for heads in (1, 2):
        accs, check = check_table_record(rec, n_head=heads)
        names = {L: f"L={L} d={128 if L == 1 else 64} heads={heads} lr=0.001" for L in (1, 2)}
        assert accs == {L: rec.final("accuracy_k2")[a] for L, a in names.items()}
        assert check.seeds == 3
    with pytest.raises(ValueError, match="n_head=4"):
        check_table_record(rec, n_head=4)       # no arm has four heads
    with pytest.raises(ValueError, match="exactly one one-block"):
        check_table_record(rec)                 # two arms of each depth


class _TableReader(torch.nn.Module):
    """A hand-written 'model' for overwrite_address. At every query it answers what the table
    gives by following the pointers twice (``how="chase"``), or the smallest symbol the table
    lacks (``"absent"``; 0 when it lacks none), or the smallest symbol missing from the table
    once the position f(x) is left out (``"leave_out"``)."""

    def __init__(self, task, how: str):
        super().__init__()
        self.task, self.how = task, how

    def forward(self, idx):
        n, (B, T) = self.task.n_nodes, idx.shape
        logits = torch.zeros(B, T, self.task.vocab_size)
        for b in range(B):
            table = idx[b, :n].tolist()
            for pos in self.task.answer_positions.tolist():
                fx = table[idx[b, pos]]
                seen = {"chase": None, "absent": set(table),
                        "leave_out": set(table[:fx] + table[fx + 1:])}[self.how]
                answer = (table[fx] if seen is None
                          else min(set(range(n)) - seen, default=0))
                logits[b, pos, answer] = 1.0
        return logits, None


@pytest.mark.parametrize("at", ["f(x)", "elsewhere"])
def test_overwrite_address_tells_chasing_from_naming_the_missing_symbol(at):
    from depthnotes.verdicts.ch3_chasing import overwrite_address
    from depthnotes.data.tasks import PointerChasing

    task = PointerChasing(max_hops=2, n_nodes=8, n_queries=3, layout="hop_marker")

    def shares(how):
        return overwrite_address(_TableReader(task, how), task, at=at, n_sequences=200)

    chase, absent, leave_out = shares("chase"), shares("absent"), shares("leave_out")
    assert chase["unedited"] == leave_out["unedited"] == 1.0   # both right on a real table
    assert chase["chased"] == 1.0 and absent["missing"] == 1.0
    for s in (chase, absent, leave_out):
        assert s["chased"] + s["missing"] + s["other"] == pytest.approx(1.0)
    if at == "f(x)":          # leaving out f(x) finds exactly the symbol that is missing
        assert leave_out["missing"] == 1.0
    else:                     # two symbols are missing once f(x) is left out: either one
        assert 0 < leave_out["missing"] < 1 and leave_out["other"] == 0.0


def test_overwrite_address_names_its_bad_arguments():
    from depthnotes.verdicts.ch3_chasing import overwrite_address
    from depthnotes.data.tasks import PointerChasing

    task = PointerChasing(max_hops=2, n_nodes=8, n_queries=3, layout="hop_marker")
    with pytest.raises(ValueError, match="n_sequences"):
        overwrite_address(_TableReader(task, "chase"), task, n_sequences=0)
    with pytest.raises(ValueError, match="at"):
        overwrite_address(_TableReader(task, "chase"), task, at="x")
    small = PointerChasing(max_hops=2, n_nodes=4, n_queries=3, layout="hop_marker")
    with pytest.raises(ValueError, match="at least 5 symbols"):
        overwrite_address(_TableReader(small, "chase"), small)
