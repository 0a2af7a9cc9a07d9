"""Redundancy measures of chapter 6 (claim C13) and the budget-sweep helpers (C14, C15)."""

import math

import numpy as np
import pytest
import torch

from depthnotes import ModelConfig, Transformer
from depthnotes.data.published_shapes import PUBLISHED_SHAPES
from depthnotes.training.budget import budget_sweep, lr_for_width
from depthnotes.core.params import shapes_for_budget
from depthnotes.measure.probes import residual_stream
from depthnotes.measure.redundancy import (angular_distances, drop_last_losses,
                                           removable_count, update_cosines)
from depthnotes.verdicts.ch6_redundancy import judge_redundancy, later_mean_cosine
from depthnotes.verdicts.evidence import (IN_PART, MIN_SEEDS, NOT_SHOWN, NOT_TESTABLE,
                                          REPRODUCED)
from depthnotes.training.loop import TrainConfig


def small_model(L=4, seed=0):
    cfg = ModelConfig(n_layer=L, d_model=32, n_head=2, vocab_size=50, context=16, init="normal")
    return Transformer(cfg, seed=seed)


def batch(seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 50, (3, 16), generator=g), torch.randint(0, 50, (3, 16), generator=g)


def test_shapes_and_ranges():
    model = small_model()
    x, y = batch()
    cos, ang, drop = update_cosines(model, x), angular_distances(model, x), drop_last_losses(model, x, y)
    assert cos.shape == (3,) and ang.shape == (4,) and drop.shape == (4,)
    assert np.all(np.abs(cos) <= 1 + 1e-6) and np.all((ang >= 0) & (ang <= 1))


def test_drop_zero_is_the_full_loss_and_drop_n_matches_a_shorter_stack():
    """C13: removing the last n blocks equals running only the first L - n blocks."""
    model = small_model(L=4)
    x, y = batch(1)
    drop = drop_last_losses(model, x, y)
    with torch.no_grad():
        assert drop[0] == pytest.approx(model(x, y)[1].item(), rel=1e-6)
        h = model.embed(x)
        for block in model.h[:2]:
            h = block(h)
        logits = model.logits(h)
        want = torch.nn.functional.cross_entropy(logits.reshape(-1, 50), y.reshape(-1)).item()
    assert drop[2] == pytest.approx(want, rel=1e-6)


def test_update_cosine_and_angle_by_hand():
    model = small_model(L=3)
    x, _ = batch(2)
    xs = residual_stream(model, x)
    u1, u2 = xs[1] - xs[0], xs[2] - xs[1]
    want = torch.nn.functional.cosine_similarity(u1, u2, dim=-1).mean().item()
    assert update_cosines(model, x)[0] == pytest.approx(want, rel=1e-5)
    c = torch.nn.functional.cosine_similarity(xs[0], xs[1], dim=-1).clamp(-1, 1)
    assert angular_distances(model, x)[0] == pytest.approx((torch.arccos(c) / math.pi).mean().item(),
                                                           rel=1e-5)


def test_identical_blocks_give_cosine_one():
    """Two blocks with the same weights fed (almost) the same input push the same way: zero the
    second half of the stack's outputs so every update equals the first block's, approximately."""
    model = small_model(L=2)
    model.h[1].load_state_dict(model.h[0].state_dict())
    for block in model.h:   # tiny branches: x barely moves, so both blocks see nearly the same x
        block.attn.c_proj.weight.data.mul_(1e-3)
        block.mlp.c_proj.weight.data.mul_(1e-3)
    x, _ = batch(3)
    assert update_cosines(model, x)[0] > 0.999
    assert angular_distances(model, x).max() < 0.01


def test_removable_count_counts_cuts_within_the_fraction():
    losses = [2.0, 2.0625, 2.125, 2.1250001, 2.5]       # binary fractions: exact limits
    assert removable_count(losses, rel=0.0625) == 2      # 2.125 is on the limit: it counts
    assert removable_count(losses) == 1                  # 5 %: 0.1
    assert removable_count(losses, rel=0.3) == 4 and removable_count([2.0]) == 0
    with pytest.raises(ValueError, match="rel"):
        removable_count(losses, rel=-0.1)


UNTRAINED = [np.array([0.3, 0.05, -0.05]), np.array([0.2, 0.0, 0.1]),
             np.array([0.1, 0.02, 0.04])]                # means 0, 0.05, 0.03
DROP_HALF = [2.0, 2.01, 2.05, 2.5]                       # 2 of 4 within 5 %: "many"
DROP_FEW = [2.0, 2.01, 2.3, 2.5]                         # 1 of 4: not many


def _judge(cosines, drops, models=3, untrained=UNTRAINED):
    """judge_redundancy on ``models`` trained models with the same measures."""
    return judge_redundancy([np.array(cosines)] * models, untrained, [drops] * models)


def test_judge_redundancy_needs_learned_alignment_and_many_removable():
    c = _judge([-0.9, 0.6, 0.7], DROP_HALF)
    assert later_mean_cosine([-0.9, 0.6, 0.7]) == pytest.approx(0.65)   # block 1 left out
    assert c.untrained_range == pytest.approx(0.05) and c.aligned and c.many
    assert c.untrained_cos == pytest.approx((0.0, 0.05, 0.03))
    assert c.models == 3 and c.removable == (2, 2, 2)
    # above every untrained model (0.1 > 0.05): clear by the evidence rule, although the gap
    # to the highest untrained model (0.05) does not exceed their range (the old rule's bar)
    assert _judge([0.0, 0.1, 0.1], DROP_HALF).aligned
    # inside the untrained models' spread (0.04 < 0.05), about one standard error up: noise
    assert not _judge([0.0, 0.04, 0.04], DROP_HALF).aligned
    few = _judge([0.0, 0.6, 0.7], DROP_FEW)
    assert few.aligned and not few.many
    # one seed weaker but still above every untrained model does not veto the alignment;
    # "many" still asks every seed (one with few removable blocks decides)
    mixed = judge_redundancy([np.array([0.0, 0.6, 0.7])] * 2 + [np.array([0.0, 0.1, 0.1])],
                             UNTRAINED, [DROP_HALF, DROP_HALF, DROP_FEW])
    assert mixed.aligned and not mixed.many and mixed.removable == (2, 2, 1)
    # a seed down among the untrained models: at three seeds the trained mean is not clear
    low = judge_redundancy([np.array([0.0, 0.6, 0.7])] * 2 + [np.array([0.0, 0.04, 0.04])],
                           UNTRAINED, [DROP_HALF] * 3)
    assert not low.aligned and low.many
    # two untrained models are accepted, but too few for the comparison: not aligned
    two = _judge([-0.9, 0.6, 0.7], DROP_HALF, untrained=UNTRAINED[:2])
    assert not two.aligned and two.similar_word == NOT_TESTABLE
    with pytest.raises(ValueError, match="at least 2 untrained"):
        judge_redundancy([np.array([0.0, 0.6, 0.7])], UNTRAINED[:1], [DROP_HALF])
    with pytest.raises(ValueError, match="L - 1 and L"):
        judge_redundancy([np.array([0.0, 0.6])], UNTRAINED, [DROP_HALF])
    with pytest.raises(ValueError, match="one drop_losses per trained model"):
        judge_redundancy([np.array([0.0, 0.6, 0.7])] * 2, UNTRAINED, [DROP_HALF])


@pytest.mark.parametrize("cosines, drops, models, untrained, words, word", [
    # aligned and many: both parts
    ([0.0, 0.6, 0.7], DROP_HALF, 3, 3, (REPRODUCED, REPRODUCED), REPRODUCED),
    # aligned, too few can go
    ([0.0, 0.6, 0.7], DROP_FEW, 3, 3, (REPRODUCED, NOT_SHOWN), IN_PART),
    # many can go, not aligned
    ([0.0, 0.04, 0.04], DROP_HALF, 3, 3, (NOT_SHOWN, REPRODUCED), IN_PART),
    # the old rule's "not aligned" case (gap 0.05 = the untrained range): clear now
    ([0.0, 0.1, 0.1], DROP_HALF, 3, 3, (REPRODUCED, REPRODUCED), REPRODUCED),
    ([0.0, 0.04, 0.04], DROP_FEW, 3, 3, (NOT_SHOWN, NOT_SHOWN), NOT_SHOWN),
    # the claim's measures from 2 models: neither part testable
    ([0.0, 0.6, 0.7], DROP_HALF, 2, 3, (NOT_TESTABLE, NOT_TESTABLE), NOT_TESTABLE),
    ([0.0, 0.6, 0.7], DROP_FEW, 1, 3, (NOT_TESTABLE, NOT_TESTABLE), NOT_TESTABLE),
    # two untrained models: the similar-updates part cannot be tested, the other holds
    ([0.0, 0.6, 0.7], DROP_HALF, 3, 2, (NOT_TESTABLE, REPRODUCED), IN_PART),
])
def test_judge_redundancy_word_for_each_branch(cosines, drops, models, untrained, words, word):
    c = _judge(cosines, drops, models, UNTRAINED[:untrained])
    assert (c.similar_word, c.removable_word) == words and c.word == word


def test_lr_for_width():
    assert lr_for_width(3e-3, 32, 64, "1/d") == pytest.approx(6e-3)
    assert lr_for_width(3e-3, 32, 64, "constant") == 3e-3
    with pytest.raises(ValueError, match="lr_rule"):
        lr_for_width(3e-3, 32, 64, "sqrt")


def test_budget_sweep_is_deterministic_and_rounds_for_json():
    from depthnotes.data.corpus import load_corpus

    corpus = load_corpus()
    base = ModelConfig(n_layer=1, d_model=16, n_head=2, vocab_size=corpus.vocab_size, context=16)
    shapes = shapes_for_budget(6_000, base, n_layers=[1, 2], tolerance=0.2, d_multiple=2)
    tc = TrainConfig(steps=3, batch_size=2, context=16, lr=1e-3, eval_batches=1)
    a = budget_sweep(shapes, tc, corpus=corpus)
    b = budget_sweep(shapes, tc, corpus=corpus)
    assert a == b and len(a) == 2
    d = a[0].as_dict()
    assert d["val_loss"] == round(a[0].val_loss, 3) and d["n_layer"] == 1
    with pytest.raises(ValueError, match="vocab_size"):
        budget_sweep(shapes_for_budget(6_000, base.replace(vocab_size=10), n_layers=[1],
                                       tolerance=0.3), tc, corpus=corpus)


def test_published_shapes():
    """C15: the table's GPT-2 rows are the presets, and a few shapes from the papers."""
    by = {(s.family, s.name): s for s in PUBLISHED_SHAPES}
    assert by[("GPT-2", "small")].aspect_ratio == 64
    assert (by[("GPT-3", "175B")].n_layer, by[("GPT-3", "175B")].d_model) == (96, 12288)
    assert (by[("LLaMA", "65B")].n_layer, by[("LLaMA", "65B")].d_model) == (80, 8192)
    assert all(s.cite for s in PUBLISHED_SHAPES)


def _with_identity_blocks(L, identity):
    """A small pre-norm model whose blocks in ``identity`` write nothing (both output
    projections zero): removing them changes nothing."""
    import torch
    from depthnotes import ModelConfig, Transformer

    model = Transformer(ModelConfig(n_layer=L, d_model=32, n_head=2, vocab_size=16,
                                    context=16), seed=0)
    with torch.no_grad():
        for i in identity:
            for proj in (model.h[i].attn.c_proj, model.h[i].mlp.c_proj):
                proj.weight.zero_()
                proj.bias.zero_()
    return model


def test_gromov_and_shortgpt_remove_the_blocks_that_do_nothing_first():
    import torch
    from depthnotes.measure.redundancy import (block_influence, gromov_prune_losses,
                                               shortgpt_prune_losses)

    g = torch.Generator().manual_seed(0)
    x, y = torch.randint(0, 16, (4, 16), generator=g), torch.randint(0, 16, (4, 16), generator=g)
    model = _with_identity_blocks(8, identity=(3, 4, 5))
    losses, starts = gromov_prune_losses(model, x, y)
    assert losses.shape == (5,) and starts[0] == -1
    assert starts[3] == 3                            # the contiguous run of idle blocks
    assert losses[1:4] == pytest.approx([losses[0]] * 3, abs=1e-6)
    assert abs(losses[4] - losses[0]) > 1e-4        # a fourth block is a working one
    bi = block_influence(model, x)
    assert bi[[3, 4, 5]] == pytest.approx([0, 0, 0], abs=1e-6) and (bi[[0, 1, 2, 6, 7]] > 0).all()
    short = shortgpt_prune_losses(model, x, y, max_removed=3)
    assert short == pytest.approx([losses[0]] * 4, abs=1e-6)
    with pytest.raises(ValueError, match="max_removed"):
        gromov_prune_losses(model, x, y, max_removed=8)


def _pruning_record(curves, scratch, lr=4e-3, evals=None):
    """A layer_pruning-like record: per pruned depth, per seed, one loss curve for both
    protocols; controls with their full loss; every arm at peak ``lr``, with per-seed
    validation losses ``evals[L]`` (default: the probe batch's full loss)."""
    from depthnotes.experiments.records import Record

    evals = evals or {}
    arms, runs = [], []
    for L, per_seed in curves.items():
        name = f"L={L} pruned lr {lr:g}"
        arms.append({"name": name, "model": {"vocab_size": 65}, "recipe": {"lr": lr},
                     "info": {"n_layer": L, "role": "pruned"}})
        runs += [{"arm": name, "seed": s, "final": {"gromov_prune_losses": c,
                                                     "shortgpt_prune_losses": c,
                                                     "eval_loss": evals.get(L, [c[0]] * 9)[s]}}
                 for s, c in enumerate(per_seed)]
    for L, losses in scratch.items():
        name = f"L={L} from scratch lr {lr:g}"
        arms.append({"name": name, "model": {"vocab_size": 65}, "recipe": {"lr": lr},
                     "info": {"n_layer": L, "role": "control"}})
        runs += [{"arm": name, "seed": s, "final": {"drop_last_losses": [v, v + 1],
                                                     "eval_loss": evals.get(L, losses)[s]}}
                 for s, v in enumerate(losses)]
    return Record(name="x", quick=True, description="", measures="", command="",
                  config={"arms": arms, "seeds": list(range(len(losses))), "data": {}},
                  runs=runs, provenance={})


def test_judge_pruning_counts_cuts_within_the_fraction_and_needs_half_the_stack():
    from depthnotes.verdicts.ch6_redundancy import judge_pruning

    flat = [1.0, 1.01, 1.02, 1.03, 1.04, 1.5]         # L = 10: 4 cuts within 5 %, of 5
    steep = [1.0, 1.2, 1.4, 1.6, 1.8, 2.0]
    many = [1.0, 1.01, 1.02, 1.03, 1.04, 1.049]       # all 5 cuts within 5 %: half of 10
    c = judge_pruning(_pruning_record({10: [many] * 3}, {5: [1.0, 1.0, 1.0]}))
    assert c.depths[0].removable["Gromov"] == (5, 5, 5) and c.word == REPRODUCED
    assert c.depths[0].half_cost("ShortGPT") == pytest.approx((0.049,) * 3)
    assert c.scratch == {5: (1.0, 1.0, 1.0)}
    # one seed short of half vetoes "every seed": many blocks are not shown
    c = judge_pruning(_pruning_record({10: [many, many, flat]}, {5: [1.0] * 3}))
    assert c.depths[0].removable["ShortGPT"] == (5, 5, 4) and c.word == NOT_SHOWN
    c = judge_pruning(_pruning_record({10: [steep] * 3}, {5: [1.0] * 3}))
    assert c.depths[0].removable["Gromov"] == (0, 0, 0) and c.word == NOT_SHOWN
    c = judge_pruning(_pruning_record({10: [many] * 2}, {5: [1.0] * 2}))
    assert c.word == NOT_TESTABLE                      # two seeds
    with pytest.raises(ValueError, match="pruned"):
        judge_pruning(_pruning_record({}, {5: [1.0] * 3}))


# -- pruning, then healing (layer_pruning_healed) --------------------------------------------
def test_a_copy_without_blocks_computes_what_skipping_them_does():
    from depthnotes.measure.redundancy import without_blocks

    model, (x, y) = small_model(L=5), batch()
    pruned = without_blocks(model, [1, 3])
    assert pruned.config.n_layer == 3 and len(pruned.h) == 3 and len(model.h) == 5
    with torch.no_grad():
        assert torch.equal(pruned(x, y)[0], model(x, y, skip=[1, 3])[0])
    pruned.h[0].ln_1.weight.data += 1.0                  # a copy: the model is untouched
    assert torch.equal(model.h[0].ln_1.weight, torch.ones_like(model.h[0].ln_1.weight))


def test_pruned_blocks_are_the_ones_the_pruning_losses_remove():
    from depthnotes.measure.redundancy import (gromov_prune_losses, pruned_blocks,
                                               shortgpt_prune_losses)

    model, (x, y) = small_model(L=6), batch()
    losses, starts = gromov_prune_losses(model, x, y)
    short = shortgpt_prune_losses(model, x, y)
    for n in (1, 2, 3):
        g = pruned_blocks(model, x, "gromov", n)
        assert g == list(range(int(starts[n]), int(starts[n]) + n))
        s = pruned_blocks(model, x, "shortgpt", n)
        with torch.no_grad():
            assert float(model(x, y, skip=g)[1]) == pytest.approx(losses[n])
            assert float(model(x, y, skip=s)[1]) == pytest.approx(short[n])
    assert pruned_blocks(model, x, "none", 0) == []


@pytest.mark.parametrize("rule, n, field", [("lowest", 1, "rule"), ("gromov", 0, "n"),
                                            ("none", 1, "n"), ("shortgpt", 6, "n")])
def test_pruned_blocks_refuses_a_rule_or_count_it_cannot_do(rule, n, field):
    from depthnotes.measure.redundancy import pruned_blocks

    with pytest.raises(ValueError, match=field):
        pruned_blocks(small_model(L=6), batch()[0], rule, n)


def test_without_blocks_refuses_shared_blocks_and_removing_everything():
    from depthnotes.measure.redundancy import without_blocks

    shared = Transformer(small_model(L=4).config.replace(n_unique_blocks=1), seed=0)
    with pytest.raises(ValueError, match="n_unique_blocks"):
        without_blocks(shared, [0])
    with pytest.raises(ValueError, match="some but not all"):
        without_blocks(small_model(L=2), [0, 1])


def test_healed_losses_train_copies_and_leave_the_model_alone():
    """The control ("none", 0) trains the full model's copy; a healed pruned copy ends below
    where pruning alone left it (a few steps on the probe batch's own corpus would not do it
    reliably, so the corpus here is the probe batch itself: the fine-tune must fit it)."""
    from depthnotes.measure.redundancy import gromov_prune_losses, healed_losses

    model, (x, y) = small_model(L=4), batch()
    before = [p.detach().clone() for p in model.parameters()]
    recipe = TrainConfig(steps=30, batch_size=3, context=16, lr=1e-2, decay="constant",
                         eval_batches=1)
    healed = healed_losses(model, lambda gen: (x, y), recipe, x, y,
                           [("none", 0), ("gromov", 2)], seed=0)
    assert healed.shape == (2,) and np.all(np.isfinite(healed))
    with torch.no_grad():
        full = float(model(x, y)[1])
    assert healed[0] < full and healed[1] < gromov_prune_losses(model, x, y)[0][2]
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))


def test_heal_recipe_names_what_the_arm_must_give():
    from depthnotes.experiments.spec import Arm
    from depthnotes.measure.record_probes import heal_recipe

    arm = Arm("a", small_model().config, TrainConfig(lr=4e-3, decay="cosine"),
              {"heal": {"plan": [["none", 0]], "steps": 5, "warmup_steps": 1, "lr": 4e-4}})
    r = heal_recipe(arm)
    assert (r.steps, r.warmup_steps, r.lr, r.decay) == (5, 1, 4e-4, "constant")
    with pytest.raises(ValueError, match="info\\['heal'\\]"):
        heal_recipe(Arm("b", arm.model, arm.recipe, {"heal": {"plan": []}}))


def _healed_record(per_depth, seeds=3):
    """A layer_pruning_healed-like record: ``{L: (control, {(rule, n): healed})}``, one value
    for every seed; the unhealed losses are 2.0 at every cut."""
    from fake_records import stored_record

    arms = {}
    for L, (control, healed) in per_depth.items():
        plan = [["none", 0]] + [[rule, n] for rule, n in healed]
        runs = [{"final": {"healed_losses": [control] + list(healed.values()),
                           "gromov_prune_losses": [1.0] + [2.0] * (L // 2),
                           "shortgpt_prune_losses": [1.0] + [2.0] * (L // 2)}}
                for _ in range(seeds)]
        arms[f"L={L} pruned"] = ({"n_layer": L, "role": "pruned",
                                  "heal": {"plan": plan}}, runs)
    return stored_record(arms, seeds=tuple(range(seeds)))


def test_judge_healing_reads_each_cut_against_the_control_given_the_same_steps():
    from depthnotes.verdicts.ch6_redundancy import judge_healing

    kept = {("gromov", 2): 1.2, ("gromov", 4): 1.5, ("shortgpt", 2): 1.1, ("shortgpt", 4): 1.04}
    c = judge_healing(_healed_record({8: (1.0, kept)}))
    [d] = c.depths
    assert d.control == (1.0,) * 3 and d.unhealed["shortgpt", 4] == (2.0,) * 3
    assert d.full == (1.0,) * 3 and d.cut_cost("gromov", 2) == (1.0,) * 3
    assert d.cost("shortgpt", 4) == pytest.approx((0.04,) * 3)
    assert d.keeps("shortgpt", 4) and not d.keeps("gromov", 4) and d.half_kept
    assert c.word == REPRODUCED
    # at the second depth neither rule keeps the cut to half: not shown
    lost = {("gromov", 8): 1.3, ("shortgpt", 8): 1.06}
    c = judge_healing(_healed_record({8: (1.0, kept), 16: (1.0, lost)}))
    assert [d.n_layer for d in c.depths] == [8, 16] and c.word == NOT_SHOWN
    # a diverged fine-tune (NaN) keeps nothing; two seeds cannot be judged
    c = judge_healing(_healed_record({8: (1.0, {**kept, ("shortgpt", 4): float("nan")})}))
    assert not c.depths[0].keeps("shortgpt", 4) and c.word == NOT_SHOWN
    assert judge_healing(_healed_record({8: (1.0, kept)}, seeds=2)).word == NOT_TESTABLE


def test_half_against_scratch_compares_the_better_rule_with_the_worse_shallow_stack():
    from depthnotes.verdicts.ch6_redundancy import half_against_scratch, judge_pruning

    curve = [1.0, 1.1, 1.2, 1.3, 1.4, 1.6]                      # L = 10: 1.6 at n = 5
    c = judge_pruning(_pruning_record({10: [curve] * 3}, {5: [1.05, 1.06, 1.07]}))
    d = half_against_scratch(c, c.depths[0])
    assert d.clear and d.better == "trained shallow"
    assert d.a.values == (1.6, 1.6, 1.6) and d.b.values == (1.05, 1.06, 1.07)
    c = judge_pruning(_pruning_record({10: [curve] * 3}, {5: [1.55, 1.65, 1.6]}))
    assert not half_against_scratch(c, c.depths[0]).clear        # inside the spread


# -- the rate grid (layer_pruning_rates) --------------------------------------------------------
@pytest.mark.parametrize("quick", [True, False])
def test_the_rate_records_are_layer_pruning_at_other_rates(quick):
    """One definition: every arm of each record that adds rates (PRUNING_RECORDS after the
    first) is one of layer_pruning's, field for field (model, recipe, probes, held-out text),
    but for the rate and the name's suffix; together the records give every arm four rates,
    2x apart, none twice."""
    from depthnotes.experiments.ch6 import (PRUNE_LR, PRUNE_OTHER_RATES, PRUNE_TOP_RATE,
                                            prune_rate_suffix)
    from depthnotes.experiments.registry import get_experiment
    from depthnotes.verdicts.ch6_redundancy import PRUNING_RECORDS

    base, *more = (get_experiment(n, quick=quick) for n in PRUNING_RECORDS)
    assert base.name == "layer_pruning" and len(more) == 2
    rates = sorted((PRUNE_LR, *PRUNE_OTHER_RATES, PRUNE_TOP_RATE))
    assert rates == [PRUNE_LR * f for f in (0.5, 1, 2, 4)]
    seen = {(a.name, a.recipe.lr) for a in base.arms}
    for exp in more:
        assert exp.seeds == base.seeds and exp.data == base.data
        by_name = {a.name: a for a in exp.arms}
        exp_rates = sorted({a.recipe.lr for a in exp.arms})
        assert len(exp.arms) == len(exp_rates) * len(base.arms)
        for lr in exp_rates:
            for a in base.arms:
                b = by_name[a.name + prune_rate_suffix(lr)]
                assert b.model == a.model and b.recipe == a.recipe.replace(lr=lr)
                assert b.info == {**a.info, "lr": lr} and b.recipe.eval_seed is not None
                assert (a.name, lr) not in seen
                seen.add((a.name, lr))
    assert sorted({lr for _, lr in seen}) == rates


@pytest.mark.parametrize("quick", [True, False])
def test_healed_arms_at_a_rate_are_the_rate_records_stacks_healed_at_a_tenth(quick):
    """A healing record at another rate heals the very stacks the rate records trained there
    (name, model and recipe of their arm), at a tenth of the rate; at PRUNE_LR, the stored
    healing record's arms."""
    from depthnotes.experiments.ch6 import HEAL_LR, PRUNE_LR, healed_arms
    from depthnotes.experiments.registry import get_experiment

    for lr, source in ((PRUNE_LR, "layer_pruning"), (PRUNE_LR * 2, "layer_pruning_rates")):
        trained = {a.name: a for a in get_experiment(source, quick=quick).arms
                   if a.recipe.lr == lr}
        arms = healed_arms(quick, lr)
        assert [a.info["n_layer"] for a in arms] == sorted(
            a.info["n_layer"] for a in trained.values() if a.info["role"] == "pruned")
        for a in arms:
            t = trained[a.name]
            assert (a.model, a.recipe) == (t.model, t.recipe) and a.recipe.lr == lr
            assert a.info["heal"]["lr"] == pytest.approx(lr / 10)
            assert {k: v for k, v in a.info.items() if k not in ("heal", "final_probes")} \
                == {k: v for k, v in t.info.items() if k != "final_probes"}
    assert healed_arms(quick) == get_experiment("layer_pruning_healed", quick=quick).arms
    assert healed_arms(quick)[0].info["heal"]["lr"] == HEAL_LR


def test_the_healing_record_at_the_best_rate_differs_from_the_first_only_in_the_rate():
    """layer_pruning_healed_best heals the stacks of a rate on the grid of PRUNING_RECORDS
    (HEAL_BEST_RATE), with layer_pruning_healed's plan, steps and seeds."""
    from depthnotes.experiments.ch6 import HEAL_BEST_RATE, PRUNE_LR, healed_arms
    from depthnotes.experiments.registry import get_experiment
    from depthnotes.verdicts.ch6_redundancy import PRUNING_RECORDS

    best = get_experiment("layer_pruning_healed_best")
    first = get_experiment("layer_pruning_healed")
    grid = {a.recipe.lr for n in PRUNING_RECORDS for a in get_experiment(n).arms}
    assert HEAL_BEST_RATE in grid and HEAL_BEST_RATE != PRUNE_LR
    assert best.arms == healed_arms(False, HEAL_BEST_RATE) and best.seeds == first.seeds
    for a, b in zip(first.arms, best.arms):
        assert b.recipe == a.recipe.replace(lr=HEAL_BEST_RATE) and b.model == a.model
        assert {**b.info["heal"], "lr": None} == {**a.info["heal"], "lr": None}


def test_pruning_grid_reads_every_arm_at_its_best_bracketed_rate():
    """Each arm's best rate comes from its validation loss (evidence.best_rate with the loss
    margin); the pruning rule is then read at that rate, and a pruned depth whose best sits at
    the grid's edge is not judged (not testable, with the picks that show why)."""
    from depthnotes.verdicts.ch6_redundancy import (BEST, TIED, WORSE, half_against_scratch,
                                                    judge_pruning_at, judge_pruning_at_best,
                                                    pruning_grid, rate_standing)
    from depthnotes.verdicts.evidence import UNBRACKETED

    many = [1.0, 1.01, 1.02, 1.03, 1.04, 1.049]       # L = 10: half can go
    steep = [1.0, 1.2, 1.4, 1.6, 1.8, 2.0]
    val = {1e-3: [1.50, 1.51, 1.52], 2e-3: [1.30, 1.31, 1.32], 4e-3: [1.40, 1.41, 1.42]}
    ctrl = {1e-3: [1.6, 1.6, 1.6], 2e-3: [1.5, 1.5, 1.5], 4e-3: [1.3, 1.31, 1.32]}
    recs = [_pruning_record({10: [many if lr == 2e-3 else steep] * 3}, {5: [1.1] * 3}, lr=lr,
                            evals={10: val[lr], 5: ctrl[lr]}) for lr in val]
    grid = pruning_grid(*recs)
    assert grid.rates == (1e-3, 2e-3, 4e-3)
    pick = grid.picks["pruned", 10]
    assert pick.best == 2e-3 and pick.bracketed
    assert grid.picks["control", 5].best == 4e-3 and not grid.picks["control", 5].judgeable
    at_best = judge_pruning_at_best(grid)
    assert at_best.depths[0].removable["Gromov"] == (5, 5, 5) and at_best.word == REPRODUCED
    assert judge_pruning_at(grid, 4e-3).word == NOT_SHOWN      # the steep curve, one rate
    # the control's best is at the top edge: the comparison with it is not testable
    ok, why = at_best.bracket(("pruned", 10), ("control", 5))
    assert not ok and why.kind == UNBRACKETED and why.picks == (grid.picks["control", 5],)
    assert half_against_scratch(at_best, at_best.depths[0]).b.values == (1.1,) * 3
    assert [rate_standing(pick, r) for r in (2e-3, 4e-3, 1e-3)] == [BEST, WORSE, WORSE]
    # the pruned stack's best at the edge: its depth is not judged
    val[4e-3] = [1.29, 1.30, 1.31]
    recs = [_pruning_record({10: [many] * 3}, {5: [1.1] * 3}, lr=lr,
                            evals={10: val[lr], 5: ctrl[lr]}) for lr in val]
    grid = pruning_grid(*recs)
    c = judge_pruning_at_best(grid)
    assert c.word == NOT_TESTABLE and c.why_not.picks == (grid.picks["pruned", 10],)
    assert rate_standing(grid.picks["pruned", 10], 2e-3) == TIED
    # a depth the grid brackets that misses "many" decides: not shown here
    recs = [_pruning_record({10: [many] * 3, 20: [steep] * 3}, {5: [1.1] * 3}, lr=lr,
                            evals={10: val[lr], 20: [1.5, 1.4, 1.6][i:i + 1] * 3,
                                   5: ctrl[lr]}) for i, lr in enumerate(val)]
    assert judge_pruning_at_best(pruning_grid(*recs)).word == NOT_SHOWN
    with pytest.raises(ValueError, match="two arms"):
        pruning_grid(recs[0], recs[0])


def test_pruning_grid_over_three_records_brackets_a_best_rate_inside_four():
    """The rates of three records make one grid per arm (layer_pruning's, the two-rate record's
    and the top rate's): a best rate inside it is judged; a best at the top, or one whose top
    neighbour is within noise of it, leaves the depth not testable (evidence.best_rate)."""
    from depthnotes.experiments.records import combine_records
    from depthnotes.verdicts.ch6_redundancy import (BEST, TIED, judge_pruning_at_best,
                                                    pruning_grid, rate_standing)
    from depthnotes.verdicts.evidence import UNBRACKETED

    few = [1.0, 1.01, 1.06, 1.2, 1.3, 1.4]            # L = 10: one cut within 5 %
    lrs = (2e-3, 4e-3, 8e-3, 1.6e-2)
    ctrl = {2e-3: [1.6] * 3, 4e-3: [1.5] * 3, 8e-3: [1.40, 1.41, 1.42], 1.6e-2: [1.5] * 3}

    def grid(top):
        val = {2e-3: [1.50, 1.51, 1.52], 4e-3: [1.40, 1.41, 1.42], 8e-3: [1.30, 1.31, 1.32],
               1.6e-2: top}
        recs = [_pruning_record({10: [few] * 3}, {5: [1.1] * 3}, lr=lr,
                                evals={10: val[lr], 5: ctrl[lr]}) for lr in lrs]
        # as the records split them: 4e-3; 2e-3 and 8e-3 together; 1.6e-2
        return pruning_grid(recs[1], combine_records(recs[0], recs[2]), recs[3])

    g = grid([1.40, 1.41, 1.42])                      # 8e-3 clearly beats 1.6e-2
    pick = g.picks["pruned", 10]
    assert g.rates == lrs and pick.rates == lrs and pick.best == 8e-3 and pick.bracketed
    assert g.picks["control", 5].bracketed
    c = judge_pruning_at_best(g)
    assert c.word == NOT_SHOWN and c.bracket(("pruned", 10), ("control", 5)) == (True, None)
    assert c.depths[0].removable["Gromov"] == (1, 1, 1)
    assert rate_standing(pick, 8e-3) == BEST
    # the top rate within noise of the best (1.6e-2 overlaps 8e-3): not bracketed
    g = grid([1.305, 1.32, 1.33])
    assert g.picks["pruned", 10].at_edge == "high"
    assert rate_standing(g.picks["pruned", 10], 1.6e-2) == TIED
    c = judge_pruning_at_best(g)
    assert c.word == NOT_TESTABLE and c.why_not.kind == UNBRACKETED
    # the best at the top: not bracketed either
    g = grid([1.20, 1.21, 1.22])
    assert g.picks["pruned", 10].best == 1.6e-2
    assert judge_pruning_at_best(g).word == NOT_TESTABLE


def test_healed_against_scratch_takes_the_better_rule_per_seed():
    from depthnotes.verdicts.ch6_redundancy import healed_against_scratch, judge_healing

    kept = {("gromov", 2): 1.2, ("gromov", 4): 1.5, ("shortgpt", 2): 1.1, ("shortgpt", 4): 1.4}
    [d] = judge_healing(_healed_record({8: (1.0, kept)})).depths
    assert d.best_healed(4) == (1.4,) * 3
    diff = healed_against_scratch(d, (1.0, 1.01, 0.99))
    assert diff.clear and diff.better == "4 from scratch" and diff.a.name == "healed 8 -> 4"
    assert not healed_against_scratch(d, (1.39, 1.4, 1.41)).clear
    [d] = judge_healing(_healed_record({8: (1.0, {**kept, ("shortgpt", 4): float("nan")})})
                        ).depths
    assert d.best_healed(4) == (1.5,) * 3               # a diverged fine-tune is passed over


def _similarity_record(cosines_by_depth):
    """A layer_similarity_64-like record: per depth, one update_cosines array per seed."""
    from fake_records import loss_run, stored_record

    arms = {}
    for L, per_seed in cosines_by_depth.items():
        runs = [loss_run(1.4) for _ in per_seed]
        for run, cos in zip(runs, per_seed):
            run["final"]["update_cosines"] = list(cos)
        arms[f"L={L} pruned"] = ({"n_layer": L, "role": "pruned"}, runs)
    return stored_record(arms)


def test_judge_deep_similarity_per_depth_and_combined():
    from depthnotes.verdicts.ch6_redundancy import judge_deep_similarity

    up, flat = [0.0, 0.6, 0.7], [0.0, 0.04, 0.04]
    rec = _similarity_record({24: [up] * 3, 48: [flat] * 3})
    deep = judge_deep_similarity(rec, {24: UNTRAINED, 48: UNTRAINED})
    assert deep.depths == [24, 48]
    assert deep.trained_cos[24] == pytest.approx((0.65,) * 3)
    assert (deep.word_at(24), deep.word_at(48)) == (REPRODUCED, NOT_SHOWN)
    assert deep.word == IN_PART
    both = judge_deep_similarity(_similarity_record({24: [up] * 3, 48: [up] * 3}),
                                 {24: UNTRAINED, 48: UNTRAINED})
    assert both.word == REPRODUCED
    # too few untrained stacks at one depth: that depth is not testable
    few = judge_deep_similarity(_similarity_record({24: [up] * 3, 48: [up] * 3}),
                                {24: UNTRAINED, 48: UNTRAINED[:2]})
    assert few.word_at(48) == NOT_TESTABLE and few.word == IN_PART
    with pytest.raises(ValueError, match="untrained cosines for depths"):
        judge_deep_similarity(rec, {24: UNTRAINED})
