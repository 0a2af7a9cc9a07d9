"""Chapter 5's rules (depthnotes.verdicts.ch5_fixes) and the measurements its records take
(depthnotes.measure.record_probes)."""

import math

import numpy as np
import pytest
import torch

from depthnotes import ModelConfig, Transformer
from depthnotes.verdicts.ch5_fixes import (LayerUse, depth_verdict, grid_cells, layer_use,
                                           layer_use_verdict, recipe_depths, recipe_verdict,
                                           rate_outcomes, top_trainable,
                                           run_outcome, update_exponents,
                                           update_sizes, update_verdict)
from depthnotes.measure.record_probes import (OLD_REMOVAL_COST, PROBE_KEYS, REMOVAL_COST,
                                              make_probe, measure_layer_use,
                                              probe_batches, removal_cost)
from depthnotes.verdicts.ch4_trainability import (LOSS_MARGIN, SLOW, SLOWER, STOPS,
                                                  depth_outcomes)
from depthnotes.verdicts.evidence import (CONTRADICTED, IN_PART, NOT_SHOWN, NOT_TESTABLE,
                                          OUTCOMES, REPRODUCED)
from fake_records import diverged_run, loss_run, stored_record

BASE = 3.25                          # trained means eval loss < 3.0 (UNIGRAM_MARGIN 0.25)
OK, BAD = [2.4, 2.5, 2.45], [3.24, 3.25, 3.23]      # BAD: flat curves, i.e. stalled
SLOWING = [(3.1, -0.3), (3.05, -0.2), (3.2, -0.4)]  # not trained, still falling: slow


def finals(losses):
    """One run per seed: a final loss (flat curve) or (final loss, late slope)."""
    return [loss_run(*v) if isinstance(v, tuple) else loss_run(v) for v in losses]


def grid_record(table):
    """table: {(L, lr, warmup): (post losses, pre losses)}."""
    arms = {}
    for (L, lr, wu), (post, pre) in table.items():
        for norm, vals in (("post", post), ("pre", pre)):
            fam = f"{norm}-norm, lr={lr:g}, warm-up={wu}"
            info = {"family": fam, "norm": norm, "lr": lr, "warmup_steps": wu, "n_layer": L}
            arms[f"{fam}, L={L}"] = (info, finals(vals))
    return stored_record(arms)


def test_run_outcome_gives_chapter_4s_status_and_the_numbers():
    rec = stored_record({"a": ({}, [loss_run(2.5), loss_run(3.1), loss_run(3.1, slope=-0.3),
                                    diverged_run(at=7)])}, seeds=(0, 1, 2, 3))
    got = [run_outcome(rec, "a", s, BASE) for s in rec.seeds]
    assert [(o.status, o.eval_loss, o.diverged_at) for o in got] == \
        [("trained", 2.5, None), ("stalled", 3.1, None), ("slow", 3.1, None),
         ("diverged", None, 7)]
    assert [o.diverged for o in got] == [False, False, False, True]


def test_grid_cells_pair_the_norms_at_each_rate_and_warm_up():
    rec = grid_record({(8, 1e-3, 0): (OK, OK), (8, 1e-3, 50): (OK, OK),
                       (8, 1e-2, 0): (BAD, OK), (8, 1e-2, 50): (OK, OK)})
    cells = grid_cells(rec, BASE)
    assert [(c.n_layer, c.lr, c.warmup) for c in cells] == \
        [(8, 1e-3, 0), (8, 1e-3, 50), (8, 1e-2, 0), (8, 1e-2, 50)]
    assert cells[2].post.outcome == STOPS and cells[2].comparison.best == "pre-norm"
    assert cells[2].gap == pytest.approx(3.24 - 2.45) and cells[2].comparison.clear
    assert cells[2].comparison.margin == LOSS_MARGIN
    assert cells[0].gap == 0 and not cells[0].comparison.clear


def test_grid_cells_slow_runs_did_not_train_for_chapter_5():
    rec = grid_record({(8, 1e-3, 0): (OK, OK), (8, 1e-3, 50): (OK, OK),
                       (8, 1e-2, 0): (SLOWING, OK), (8, 1e-2, 50): (OK, OK)})
    cells = grid_cells(rec, BASE)
    assert cells[2].post.statuses == (SLOW,) * 3 and cells[2].post.outcome == SLOWER
    # the seeds are apart, so the slow cell is clearly worse than pre-norm's
    assert cells[2].comparison.clear and cells[2].gap > 0


# -- C9, recipe: prenorm_vs_postnorm_shallow -------------------------------------------------
RATES = (1e-3, 3e-3, 1e-2, 3e-2, 1e-1)


def shallow_record(table):
    """table: {(L, norm, warmup): {lr: losses}} in the layout of prenorm_vs_postnorm_shallow."""
    arms = {}
    for (L, norm, wu), by_rate in table.items():
        for lr, vals in by_rate.items():
            info = {"family": f"{norm}-norm, warm-up={wu}", "norm": norm, "lr": lr,
                    "warmup_steps": wu, "n_layer": L}
            arms[f"{norm}-norm, lr={lr:g}, warm-up={wu}, L={L}"] = (
                info, [diverged_run() if v == "div" else
                       loss_run(*v) if isinstance(v, tuple) else loss_run(v) for v in vals])
    return stored_record(arms)


def seeds(m):
    return [m, m + 0.02, m + 0.04]


# post-norm trains up to 3e-3 and stalls at 1e-2 and above; warm-up lets it train at 1e-2;
# pre-norm trains at every rate up to 3e-2, with or without warm-up; nothing trains at the
# grid's top rate, 1e-1 (a norm training there could not show a rise with warm-up)
POST = {1e-3: seeds(2.8), 3e-3: seeds(2.6), 1e-2: seeds(3.1), 3e-2: ["div"] * 3,
        1e-1: ["div"] * 3}
POST_WARM = {1e-3: seeds(2.7), 3e-3: seeds(2.4), 1e-2: seeds(2.6), 3e-2: seeds(3.2),
             1e-1: ["div"] * 3}
PRE = {1e-3: seeds(2.7), 3e-3: seeds(2.5), 1e-2: seeds(2.3), 3e-2: seeds(2.6),
       1e-1: seeds(3.2)}


def recipe(L=4, post=POST, post_warm=POST_WARM, pre=PRE, pre_warm=PRE):
    return {(L, "post", 0): post, (L, "post", 50): post_warm,
            (L, "pre", 0): pre, (L, "pre", 50): pre_warm}


def test_recipe_both_parts_reproduced():
    (d,) = recipe_depths(shallow_record(recipe()), BASE)
    assert d.n_layer == 4 and set(d.rows) == {("post", 0), ("post", 50), ("pre", 0),
                                              ("pre", 50)}
    assert top_trainable(d.rows[("post", 0)]) == 3e-3
    assert top_trainable(d.rows[("pre", 0)]) == 3e-2          # below the grid's top
    assert d.rows[("post", 0)][3e-2].losses[0] == pytest.approx(math.log(65))   # ln V
    assert (d.rate_word, d.warmup_word) == (REPRODUCED, REPRODUCED)
    # without warm-up pre-norm trains up to lr 0.03, post-norm up to 0.003; 50 warm-up
    # steps move post-norm's highest trainable rate from 0.003 to 0.01, pre-norm's stays
    assert d.warmups == (0, 50) and d.top == 1e-1
    assert d.tolerance == {("post", 0): 3e-3, ("post", 50): 1e-2, ("pre", 0): 3e-2,
                           ("pre", 50): 3e-2}
    v = recipe_verdict([d])
    assert (v.rate_word, v.warmup_word, v.skipped) == (REPRODUCED, REPRODUCED, ())


def test_recipe_warmup_that_rescues_nothing_is_not_shown():
    (d,) = recipe_depths(shallow_record(recipe(post_warm=POST)), BASE)
    assert (d.rate_word, d.warmup_word) == (REPRODUCED, NOT_SHOWN)
    # pre-norm needs it (it stalls at 3e-2 without) and post-norm does not: the other way
    pre = {**PRE, 3e-2: seeds(3.2)}
    (d,) = recipe_depths(shallow_record(recipe(post_warm=POST, pre=pre)), BASE)
    assert d.warmup_word == CONTRADICTED and d.rate_word == REPRODUCED   # 1e-2 > 3e-3


def test_recipe_rate_equal_and_the_other_way():
    post, pre = {**POST, 1e-2: seeds(2.7)}, {**PRE, 3e-2: seeds(3.2)}   # both up to 1e-2
    (d,) = recipe_depths(shallow_record(recipe(post=post, pre=pre)), BASE)
    assert d.rate_word == NOT_SHOWN
    pre = {**PRE, 1e-2: seeds(3.1), 3e-2: seeds(3.2)}                   # pre up to 3e-3
    (d,) = recipe_depths(shallow_record(recipe(post=post, pre=pre, pre_warm=pre)), BASE)
    assert d.rate_word == CONTRADICTED


def test_recipe_a_grid_where_neither_fails_is_not_testable():
    every = {lr: seeds(2.5) for lr in RATES}
    (d,) = recipe_depths(shallow_record(recipe(post=every, post_warm=every, pre=every,
                                               pre_warm=every)), BASE)
    assert d.rate_word == NOT_TESTABLE and d.warmup_word == NOT_TESTABLE


def test_recipe_a_norm_at_the_grids_top_cannot_show_a_rise_with_warm_up():
    """Amended 2026-12-06: pre-norm trains at the top rate without warm-up, so "warm-up
    raises post-norm's tolerance and not pre-norm's" cannot be told from the grid ending
    there; the larger-rates part still reads (pre-norm's tolerance is at least the top)."""
    pre = {**PRE, 1e-1: seeds(2.9)}
    (d,) = recipe_depths(shallow_record(recipe(pre=pre, pre_warm=pre)), BASE)
    assert d.tolerance[("pre", 0)] == d.top == 1e-1
    assert (d.rate_word, d.warmup_word) == (REPRODUCED, NOT_TESTABLE)
    # the same with post-norm at the top without warm-up (then nothing can rise)
    post = {lr: seeds(2.5) for lr in RATES}
    (d,) = recipe_depths(shallow_record(recipe(post=post, post_warm=post)), BASE)
    assert d.warmup_word == NOT_TESTABLE


def test_recipe_verdict_skips_depths_where_post_norm_does_not_train():
    stalled = {**POST, 1e-3: seeds(3.05), 3e-3: seeds(3.02)}      # best 3e-3, stalled
    # still falling at its best rate (slow): it did not train either (chapter 4's rule)
    slow = {**POST, 1e-3: seeds(3.3), 3e-3: [(3.02, -0.3), (3.04, -0.3), (3.06, -0.3)]}
    table = {**recipe(L=4), **recipe(L=6, post=stalled), **recipe(L=8, post=slow)}
    by_depth = recipe_depths(shallow_record(table), BASE)
    assert [d.n_layer for d in by_depth] == [4, 6, 8]
    assert by_depth[1].rows[("post", 0)][3e-3].outcome == STOPS
    assert by_depth[2].rows[("post", 0)][3e-3].outcome == SLOWER
    v = recipe_verdict(by_depth)
    assert v.skipped == (6, 8) and [d.n_layer for d in v.depths] == [4]
    assert (v.rate_word, v.warmup_word) == (REPRODUCED, REPRODUCED)
    v = recipe_verdict(by_depth[1:])
    assert (v.rate_word, v.warmup_word, v.depths) == (NOT_TESTABLE, NOT_TESTABLE, ())


def test_recipe_verdict_combines_the_depths():
    post6, pre6 = {**POST, 1e-2: seeds(2.7)}, {**PRE, 3e-2: seeds(3.2)}   # L = 6: equal
    table = {**recipe(L=4), **recipe(L=6, post=post6, pre=pre6)}
    by_depth = recipe_depths(shallow_record(table), BASE)
    assert [d.rate_word for d in by_depth] == [REPRODUCED, NOT_SHOWN]
    v = recipe_verdict(by_depth)
    assert v.skipped == () and v.rate_word == IN_PART


def test_slow_runs_did_not_train_for_the_depth_verdict():
    rec = depth_record({("deep", 48): OK, ("deep", 200): SLOWING,
                        ("post", 48): BAD, ("post", 200): BAD})
    v = depth_verdict(depth_outcomes(rec, BASE, 0.25), "deep", "post")
    # at L = 200 DeepNorm is clearly better (its seeds below post-norm's), but it does not
    # train: not shown there
    assert v.comparisons[200].clear and v.words == {48: REPRODUCED, 200: NOT_SHOWN}
    assert v.word == IN_PART and v.holds == (48,)
    assert v.untrained == (200,) and v.within_noise == () and v.unbracketed == {}
    assert v.reason(200) == "deep ends clearly below post but does not train on every seed"


GRID = (3e-4, 1e-3, 3e-3)


def _worse(v, by=0.3):
    final, slope = v if isinstance(v, tuple) else (v, 0.0)
    return (final + by, slope)


def depth_record(table, rates=GRID):
    """table: {(family, L): losses}, each family trained at ``rates``: the given losses at
    the middle rate and 0.3 worse at the others (its best rate bracketed); with one rate,
    the given losses there."""
    arms = {}
    for (fam, L), vals in table.items():
        for i, lr in enumerate(rates):
            here = vals if len(rates) == 1 or i == len(rates) // 2 else [_worse(v) for v in vals]
            arms[f"{fam}, L={L}, lr={lr:g}"] = ({"family": fam, "n_layer": L, "lr": lr},
                                                finals(here))
    return stored_record(arms)


def test_depth_verdict_at_every_some_and_no_depth():
    rec = depth_record({("deep", 48): OK, ("deep", 200): OK,
                        ("post", 48): BAD, ("post", 200): BAD})
    v = depth_verdict(depth_outcomes(rec, BASE, 0.25), "deep", "post")
    assert v.word == REPRODUCED and v.holds == (48, 200)
    assert v.words == {48: REPRODUCED, 200: REPRODUCED}
    assert v.comparisons[48].best == "deep" and v.comparisons[48].margin == LOSS_MARGIN
    rec = depth_record({("deep", 48): OK, ("deep", 200): BAD,
                        ("post", 48): BAD, ("post", 200): BAD})
    v = depth_verdict(depth_outcomes(rec, BASE, 0.25), "deep", "post")
    assert v.word == IN_PART and v.holds == (48,) and v.words[200] == NOT_SHOWN
    assert v.within_noise == (200,) and v.untrained == ()
    assert v.reason(200) == "deep and post are within noise"
    assert not v.comparisons[200].clear
    rec = depth_record({("deep", 48): BAD, ("deep", 200): BAD,
                        ("post", 48): OK, ("post", 200): OK})
    v = depth_verdict(depth_outcomes(rec, BASE, 0.25), "deep", "post")
    assert v.word == CONTRADICTED and v.holds == ()
    assert v.words == {48: CONTRADICTED, 200: CONTRADICTED}        # post clearly better
    assert all(v.comparisons[L].best == "post" and v.comparisons[L].clear for L in (48, 200))
    # one depth each way: some depths reproduced is in part, not the worst word
    rec = depth_record({("deep", 48): OK, ("deep", 200): BAD,
                        ("post", 48): BAD, ("post", 200): OK})
    v = depth_verdict(depth_outcomes(rec, BASE, 0.25), "deep", "post")
    assert v.words == {48: REPRODUCED, 200: CONTRADICTED} and v.word == IN_PART
    assert v.reason(48) == "deep trains and ends clearly below post"
    assert v.reason(200) == "post ends clearly below deep"


def test_depth_verdict_separated_seeds_are_clear_though_a_range_exceeds_the_gap():
    # deep 2.4 to 2.9 (range 0.5), post 2.95 to 2.99: the old rule (gap 0.32 < 0.5) called
    # this within noise; the seeds do not overlap, so it is clear
    rec = depth_record({("deep", 48): [2.4, 2.5, 2.9], ("post", 48): [2.95, 2.97, 2.99]})
    v = depth_verdict(depth_outcomes(rec, BASE, 0.25), "deep", "post")
    assert v.comparisons[48].clear and v.word == REPRODUCED


def test_depth_verdict_not_testable_without_a_bracketed_rate():
    rec = depth_record({("deep", 48): OK, ("post", 48): BAD}, rates=(1e-3,))
    v = depth_verdict(depth_outcomes(rec, BASE, 0.25), "deep", "post")
    assert v.comparisons[48].clear                       # clear, but at one rate each
    assert v.words == {48: NOT_TESTABLE} and v.word == NOT_TESTABLE and v.holds == ()
    assert v.unbracketed == {48: ("deep", "post")}       # neither grid brackets its best
    assert v.reason(48) == "not testable (the grid does not bracket deep and post's best rate)"


def test_rate_outcomes_give_every_rate_by_the_same_rule():
    rec = depth_record({("deep", 48): OK, ("post", 48): BAD})
    rows = rate_outcomes(rec, "deep", 48, BASE)
    assert list(rows) == list(GRID)                       # every rate, ascending
    best = depth_outcomes(rec, BASE, 0.25)["deep"][0]
    assert rows[best.lr].seeds.values == best.seeds.values
    assert rows[best.lr].statuses == ("trained",) * 3
    # 0.3 worse at the other rates: 2.7 to 2.8, still trained
    assert all(rows[lr].seeds.mean > best.seeds.mean for lr in GRID if lr != best.lr)
    assert rate_outcomes(rec, "post", 48, BASE)[1e-3].statuses == ("stalled",) * 3
    with pytest.raises(KeyError):
        rate_outcomes(rec, "deep", 200, BASE)


def use(ratio, ratio_init, skip_late, skip_early):
    three = (lambda x: tuple(x + d for d in (-0.01, 0.0, 0.01)))
    return LayerUse(48, slice(1, 12), slice(36, 48), three(ratio_init), three(ratio),
                    three(skip_early), three(skip_late), three(0.0), three(0.0))


def test_layer_use_verdict_needs_both_measures():
    v = layer_use_verdict(use(0.2, 0.5, 0.001, 0.05))
    assert (v.word, v.contribution_word, v.removal_word) == (REPRODUCED,) * 3
    assert v.contribution.best == "trained" and v.removal.best == "late blocks"
    v = layer_use_verdict(use(0.5, 0.2, 0.05, 0.001))   # both the other way
    assert (v.word, v.contribution_word, v.removal_word) == (CONTRADICTED,) * 3
    v = layer_use_verdict(use(0.2, 0.5, 0.05, 0.001))   # the ratio falls, removal disagrees
    assert v.word == IN_PART and v.contribution_word == REPRODUCED
    assert v.removal_word == CONTRADICTED
    v = layer_use_verdict(use(0.2, 0.205, 0.001, 0.05))  # the ratio within noise
    assert (v.word, v.contribution_word, v.removal_word) == (IN_PART, NOT_SHOWN, REPRODUCED)
    v = layer_use_verdict(use(0.2, 0.205, 0.03, 0.035))  # both within noise
    assert (v.word, v.contribution_word, v.removal_word) == (NOT_SHOWN,) * 3
    v = layer_use_verdict(use(0.5, 0.2, 0.03, 0.035))    # contradicted and not shown
    assert v.word == CONTRADICTED


@pytest.mark.parametrize("key", [REMOVAL_COST, OLD_REMOVAL_COST])
def test_layer_use_reads_the_quarters(key):
    """The stored records name the removal cost ``skip_cost``; new runs name it
    ``layer_removal_cost``: the same quarters from either."""
    L = 8
    contribution = [9.0, 1, 1, 1, 1, 1, 0.5, 0.5]     # early = block 2 only; late = 7, 8
    probes = {"contribution_init": [9.0] + [1.0] * 7, "contribution": contribution,
              f"{key}_init": [0.0] * 6 + [0.5, 0.5], key: [1.0, 0.2] + [0.1] * 4 + [0.0, 0.0],
              "loss_init": 4.0, "loss": 2.0}
    rec = stored_record({"a": ({"n_layer": L}, [{"probes": probes}] * 3)})
    u = layer_use(rec)
    assert (u.early, u.late) == (slice(1, 2), slice(6, 8))
    assert u.ratio == (0.5,) * 3 and u.ratio_init == (1.0,) * 3
    assert u.skip_early == (0.2,) * 3 and u.skip_late == (0.0,) * 3
    assert u.skip_early_init == (0.0,) * 3 and u.skip_late_init == (0.5,) * 3


def test_removal_cost_has_one_reader_for_both_stored_names():
    assert removal_cost({REMOVAL_COST: [0.1, None]}) == [0.1, None]    # as stored
    assert removal_cost({OLD_REMOVAL_COST: [0.2], "loss": 1.0}) == [0.2]
    assert removal_cost({f"{OLD_REMOVAL_COST}_init": [0.3]}, untrained=True) == [0.3]
    # the current name wins when a run holds both
    assert removal_cost({REMOVAL_COST: [1.0], OLD_REMOVAL_COST: [2.0]}) == [1.0]
    with pytest.raises(KeyError, match="removal cost"):
        removal_cost({REMOVAL_COST: [0.1]}, untrained=True)
    with pytest.raises(KeyError, match="skip_cost"):
        removal_cost({"loss": 1.0})


def test_the_layer_use_probe_measures_the_removal_cost_as_the_final_probes_do():
    """One mechanism: the probe's removal cost is ``depth_scaling.layer_removal_cost``,
    averaged over its batches (the loss without block i minus the full model's loss)."""
    from depthnotes.measure.depth_scaling import layer_removal_cost

    model, corpus = tiny()
    batches = probe_batches(corpus, 2, 2, 8)
    out = measure_layer_use(model, batches)
    expected = np.mean([layer_removal_cost(model, x, y) for x, y in batches], axis=0)
    assert out[REMOVAL_COST] == expected.tolist()
    with torch.no_grad():
        full = np.mean([float(model(x, y)[1]) for x, y in batches])
        skipped = np.mean([[float(model(x, y, skip=(i,))[1]) for i in range(3)]
                           for x, y in batches], axis=0)
    assert np.allclose(out[REMOVAL_COST], skipped - full, atol=1e-6)
    assert out["loss"] == pytest.approx(full)


def update_record(sizes, lr=1e-3):
    """sizes: {(family, L): [update size after step 1 per seed]}."""
    return stored_record({f"{fam}, L={L}": (
        {"family": fam, "n_layer": L, "lr": lr},
        [{"probes": {"update_steps": [1, 2], "update_size": [v, 2 * v]}} for v in vals])
        for (fam, L), vals in sizes.items()})


def power_law(exponents, depths=(6, 24, 96), scale=None):
    scale = scale or {}
    return {(fam, L): [scale.get(fam, 1.0) * c * L ** (k + d)
                       for c, d in ((1.0, 0.0), (1.1, 0.02), (0.9, -0.02))]
            for fam, k in exponents.items() for L in depths}


def test_update_exponents_recover_a_power_law():
    # a record stores 6 significant digits (records.DIGITS): sizes agree to 5e-6 relative,
    # exponents fitted over L = 6 .. 96 to a few 1e-6
    sizes = update_sizes(update_record(power_law({"post": 0.7, "deep": 0.0})), lr=1e-3)
    assert sizes["post"][6] == pytest.approx([6 ** 0.7, 1.1 * 6 ** 0.72, 0.9 * 6 ** 0.68],
                                             rel=1e-5)
    ex = update_exponents(sizes)
    assert ex["post"] == pytest.approx([0.7, 0.72, 0.68], abs=1e-5)
    assert ex["deep"] == pytest.approx([0.0, 0.02, -0.02], abs=1e-5)
    with pytest.raises(KeyError, match="no arm trained at lr"):
        update_sizes(update_record(power_law({"post": 0.7})), lr=1e-4)


def test_update_verdict():
    sizes = update_sizes(update_record(power_law({"post": 0.7, "deep": 0.0})))
    v = update_verdict(sizes, "deep", "post")
    assert v.word == REPRODUCED and v.smaller_at == (6, 24, 96)
    assert (v.smaller_word, v.bounded_word) == (REPRODUCED, REPRODUCED)
    deep = v.exponents.arm("deep")                         # its exponent in L, over seeds
    assert (deep.low, deep.high) == (pytest.approx(-0.02, abs=1e-5),
                                     pytest.approx(0.02, abs=1e-5))
    # smaller everywhere but growing with L: the bounded part is contradicted
    sizes = update_sizes(update_record(power_law({"post": 0.7, "deep": 0.3},
                                                 scale={"deep": 0.1})))
    v = update_verdict(sizes, "deep", "post")
    assert (v.word, v.smaller_word, v.bounded_word) == (IN_PART, REPRODUCED, CONTRADICTED)
    deep = v.exponents.arm("deep")
    assert (deep.low, deep.high) == (pytest.approx(0.28, abs=1e-5),
                                     pytest.approx(0.32, abs=1e-5))
    # post-norm at its ceiling at every depth (exponent ~0), DeepNorm below it and growing:
    # the exponents alone would call it the other way; the sizes decide the smaller part
    sizes = update_sizes(update_record(power_law({"post": 0.0, "deep": 0.4},
                                                 scale={"post": 8.0, "deep": 0.5})))
    v = update_verdict(sizes, "deep", "post")
    assert v.word == IN_PART and v.smaller_at == (6, 24, 96)
    assert v.smaller_word == REPRODUCED and v.bounded_word == CONTRADICTED
    assert v.exponents.best == "post"
    # DeepNorm's update as large as post-norm's, and growing: neither part holds
    sizes = update_sizes(update_record(power_law({"post": 0.5, "deep": 0.5})))
    v = update_verdict(sizes, "deep", "post")
    assert (v.smaller_word, v.bounded_word, v.word) == (NOT_SHOWN, CONTRADICTED, CONTRADICTED)
    assert v.smaller_at == () and set(v.words.values()) == {NOT_SHOWN}
    # as large, and flat: the bounded part alone
    sizes = update_sizes(update_record(power_law({"post": 0.0, "deep": 0.0})))
    v = update_verdict(sizes, "deep", "post")
    assert (v.smaller_word, v.bounded_word, v.word) == (NOT_SHOWN, REPRODUCED, IN_PART)


def test_update_verdict_bounded_part_edges():
    # seeds' exponents 0.14, 0.16, 0.12: not every one within 0.15, not every one above it
    sizes = update_sizes(update_record(power_law({"post": 0.7, "deep": 0.14},
                                                 scale={"deep": 0.1})))
    v = update_verdict(sizes, "deep", "post")
    assert v.bounded_word == NOT_SHOWN and v.word == IN_PART
    # smaller at some depths only: in part; "not at" names the others
    table = power_law({"post": 0.7, "deep": 0.0})
    table[("deep", 96)] = table[("post", 96)]
    v = update_verdict(update_sizes(update_record(table)), "deep", "post")
    assert v.smaller_at == (6, 24) and v.smaller_word == IN_PART
    assert v.words == {6: REPRODUCED, 24: REPRODUCED, 96: NOT_SHOWN}     # not at L = 96
    # a zero update (no positive size to take the log of): no exponent for that seed, so
    # the bounded part is not testable
    table = power_law({"post": 0.7, "deep": 0.0}, depths=(6, 24))
    table[("deep", 24)] = [0.0, 1.0, 1.0]
    sizes = update_sizes(update_record(table))
    assert math.isnan(update_exponents(sizes)["deep"][0])
    v = update_verdict(sizes, "deep", "post")
    assert v.bounded_word == NOT_TESTABLE and v.exponents is None
    assert v.smaller_word == REPRODUCED and v.word == IN_PART


def test_update_verdict_a_run_that_stopped_before_the_step():
    """``update_sizes`` gives NaN for a run that stopped before the step; the verdict must
    still be reached (that seed has no exponent: the bounded part is not testable)."""
    table = power_law({"post": 0.7, "deep": 0.0}, depths=(6, 24))
    table[("deep", 24)] = [math.nan, 1.0, 1.0]
    sizes = update_sizes(update_record(table))
    assert math.isnan(sizes["deep"][24][0])
    assert math.isnan(update_exponents(sizes)["deep"][0])
    v = update_verdict(sizes, "deep", "post")
    assert v.bounded_word == NOT_TESTABLE and v.exponents is None


def test_update_sizes_missing_step_is_nan():
    rec = stored_record({"a": ({"family": "f", "n_layer": 4},
                               [{"probes": {"update_steps": [], "update_size": []}}] * 3)})
    assert all(math.isnan(v) for v in update_sizes(rec)["f"][4])


# -- record_probes -------------------------------------------------------------------------
def tiny(norm="pre", init="xavier"):
    from depthnotes.data.corpus import load_corpus

    corpus = load_corpus()
    cfg = ModelConfig(n_layer=3, d_model=16, n_head=2, d_ff=32, vocab_size=corpus.vocab_size,
                      context=16, norm=norm, init=init)
    return Transformer(cfg, seed=0), corpus


def test_probe_batches_are_fixed_held_out_tokens():
    _, corpus = tiny()
    a, b = probe_batches(corpus, 2, 3, 8), probe_batches(corpus, 2, 3, 8)
    assert len(a) == 2 and a[0][0].shape == (3, 8)
    assert all(torch.equal(x, y) for (x, _), (y, _) in zip(a, b))


def test_layer_use_probe_measures_before_and_after():
    from depthnotes.training.loop import TrainConfig, train

    model, corpus = tiny()
    probe = make_probe({"probe": {"name": "layer_use", "batches": 2, "batch_size": 2,
                                  "context": 8}}, model, corpus)
    assert probe.on_step is None
    train(model, corpus, TrainConfig(steps=3, batch_size=2, context=8, lr=1e-2))
    out = probe.result(model)
    assert set(out) == set(PROBE_KEYS["layer_use"])
    assert len(out["contribution"]) == len(out[f"{REMOVAL_COST}_init"]) == 3
    assert out["contribution"] != out["contribution_init"]          # the model moved


def test_update_size_probe_tracks_every_step():
    from depthnotes.training.loop import TrainConfig, train

    model, corpus = tiny("post")
    probe = make_probe({"probe": {"name": "update_size", "batch_size": 2, "context": 8}},
                       model, corpus)
    train(model, corpus, TrainConfig(steps=3, batch_size=2, context=8), on_step=probe.on_step)
    out = probe.result(model)
    assert out["update_steps"] == [1, 2, 3] and all(v > 0 for v in out["update_size"])


def test_make_probe_refuses_unknown_names():
    model, corpus = tiny()
    assert make_probe({}, model, corpus) is None
    with pytest.raises(ValueError, match="probe.*name"):
        make_probe({"probe": {"name": "nope"}}, model, corpus)
    with pytest.raises(ValueError, match="must be a dict"):
        make_probe({"probe": "layer_use"}, model, corpus)


def test_a_records_run_carries_its_probes():
    from depthnotes.experiments.registry import get_experiment
    from depthnotes.experiments.records import Record, run_experiment

    rec = Record.from_dict(run_experiment(get_experiment("prenorm_layer_use", True),
                                          workers=1))
    probes = rec.run(rec.arms[0], rec.seeds[0])["probes"]
    assert set(probes) == set(PROBE_KEYS["layer_use"])
    assert len(removal_cost(probes)) == rec.arm(rec.arms[0])["info"]["n_layer"]
    assert layer_use_verdict(layer_use(rec)).word in OUTCOMES


def test_init_responses_read_each_measure_of_the_quick_record():
    """``init_responses`` reads what the ``init_response`` probe stored, by measure; the probe
    measures on a copy (the run's own model is untouched) and the 1/sqrt(L) rate shrinks."""
    from depthnotes.experiments.records import Record, run_experiment
    from depthnotes.experiments.registry import get_experiment
    from depthnotes.verdicts.ch5_fixes import RESPONSES, init_responses

    rec = Record.from_dict(run_experiment(get_experiment("init_response_depth", True),
                                          workers=1))
    for measure in RESPONSES:
        got = init_responses(rec, measure)
        assert "DeepNorm" in got and sorted(got["DeepNorm"]) == [1, 2, 3]
        assert all(len(v) == 3 and all(x > 0 for x in v)
                   for by_L in got.values() for v in by_L.values())
    lrs = {rec.arm(a)["info"]["n_layer"]: rec.run(a, 0)["probes"]["adam_lrs"][-1]
           for a in rec.arms}
    assert lrs[1] > lrs[2] > lrs[3]                         # 1e-3 * sqrt(48 / L)
    small = init_responses(rec, "adam 1e-4")["DeepNorm"][3]
    large = init_responses(rec, "adam 1e-3")["DeepNorm"][3]
    assert all(s < b for s, b in zip(small, large))
    with pytest.raises(ValueError, match="measure"):
        init_responses(rec, "lion")


def test_bounded_word_and_the_c10_control():
    from depthnotes.verdicts.ch5_fixes import bounded_word, control_word

    assert bounded_word([0.05, -0.1, 0.12]) == REPRODUCED
    assert bounded_word([0.5, 0.4, 0.48]) == CONTRADICTED
    assert bounded_word([0.05, 0.4, 0.1]) == NOT_SHOWN
    assert bounded_word([math.nan, 0.0, 0.0]) == NOT_TESTABLE
    word, cmp = control_word((0.05, 0.06, 0.04), (0.6, 0.7, 0.65))
    assert word == REPRODUCED and cmp.best == "pre-norm"
    word, _ = control_word((0.05, 0.06, 0.04), (0.05, 0.07, 0.045))
    assert word == NOT_SHOWN                               # the control is as small
    word, _ = control_word((0.6, 0.7, 0.65), (0.05, 0.06, 0.04))
    assert word == CONTRADICTED


class _ResponseRecord:
    """A stand-in for ``init_response_depth``: DeepNorm's first update set by hand per
    measure as c * L^k, three seeds with small offsets."""

    seeds = (0, 1, 2)

    def __init__(self, k_sgd, k_adam, k_scaled, depths=(6, 24, 96, 200, 500, 1000)):
        self.k = (k_sgd, k_adam, k_scaled)
        self.arms = [f"DeepNorm, L={L}" for L in depths]
        self._L = dict(zip(self.arms, depths))

    def arm(self, name):                    # the probe as init_response_depth's names it
        return {"info": {"family": "DeepNorm", "n_layer": self._L[name],
                         "probe": {"sgd_lr": 0.1}}}

    def run(self, name, seed):
        L = self._L[name]
        k_sgd, k_adam, k_scaled = self.k
        jitter = 1 + 0.01 * seed
        return {"probes": {"sgd_update": 2 * jitter * L ** k_sgd,
                           "sensitivity": 1e-3,
                           "adam_update": [0.1 * jitter * L ** k_adam,
                                           jitter * L ** k_adam,
                                           3 * jitter * L ** k_scaled]}}


def test_update_parts_judge_each_optimiser_setting_on_its_own_exponent():
    """One part per setting (SGD, Adam at a fixed rate, Adam at 1/sqrt(L)), each judged by
    DeepNorm's fitted exponent over every depth: a flat setting is reproduced, a growing one
    contradicted, whatever the other settings do; the growth and the partial fit follow."""
    from depthnotes.verdicts.ch5_fixes import UPDATE_SETTINGS, update_parts

    parts = update_parts(_ResponseRecord(0.0, 0.5, 0.05))
    assert [p.piece for p in parts] == [piece for piece, _ in UPDATE_SETTINGS]
    words = {p.measure: p.word for p in parts}
    assert words == {"sgd": REPRODUCED, "adam 1e-3": CONTRADICTED,
                     "adam 1/sqrt(L)": REPRODUCED}
    adam = parts[1]
    assert all(e == pytest.approx(0.5) for e in adam.exponents)
    assert adam.growth == pytest.approx((1000 / 6) ** 0.5)
    assert all(e == pytest.approx(0.5) for e in adam.exponents_up_to(200))
    # the SGD setting growing and the Adam one flat: the words follow each setting
    flipped = {p.measure: p.word for p in update_parts(_ResponseRecord(0.3, 0.0, 0.3))}
    assert flipped == {"sgd": CONTRADICTED, "adam 1e-3": REPRODUCED,
                       "adam 1/sqrt(L)": CONTRADICTED}


class _SgdRecord:
    """A stand-in for ``init_response_sgd`` (``sgd_lr=None``, several ``sgd_lrs``) or, with
    ``first``, for ``init_response_depth`` (its one ``sgd_lr``): DeepNorm's first SGD update
    set by hand per rate as lr * L^k(lr), three seeds with small offsets."""

    seeds = (0, 1, 2)

    def __init__(self, k_by_lr, first=False, depths=(6, 24, 96, 200, 500, 1000),
                 stepped=None):
        self.k_by_lr, self.first, self.stepped = dict(k_by_lr), first, stepped
        self.arms = [f"DeepNorm, L={L}" for L in depths]
        self._L = dict(zip(self.arms, depths))

    def arm(self, name):
        lrs = list(self.k_by_lr)
        probe = ({"sgd_lr": lrs[0]} if self.first else {"sgd_lr": None, "sgd_lrs": lrs})
        if self.stepped is not None:        # init_response_sgd_blocks names its group
            probe["stepped"] = self.stepped
        return {"info": {"family": "DeepNorm", "n_layer": self._L[name], "probe": probe}}

    def run(self, name, seed):
        L, jitter = self._L[name], 1 + 0.01 * seed
        sizes = [lr * jitter * L ** k for lr, k in self.k_by_lr.items()]
        return {"probes": ({"sgd_update": sizes[0]} if self.first else
                           {"sgd_lrs": list(self.k_by_lr), "sgd_updates": sizes})}


def test_sgd_part_judges_the_smallest_rate_when_its_exponent_does_not_depend_on_the_rate():
    """C12's SGD rule: the rates of both records read together; the word is the smallest
    rate's bound word when its exponent matches the next rate's (within FLAT_EXPONENT), not
    testable when it does not, whatever the largest rate shows."""
    from depthnotes.verdicts.ch5_fixes import sgd_part, sgd_responses

    big = _SgdRecord({0.1: 0.25}, first=True)
    sizes = sgd_responses(big, _SgdRecord({1e-2: 0.02, 1e-3: 0.0}))
    assert sorted(sizes) == [1e-3, 1e-2, 0.1]
    part = sgd_part(sizes)
    assert (part.judged_at, part.checked_against, part.rate_free) == (1e-3, 1e-2, True)
    assert part.word == REPRODUCED and part.words[0.1] == CONTRADICTED
    assert all(k == pytest.approx(0.25) for k in part.exponents[0.1])
    # growing at every small rate: contradicted, as the large rate says
    assert sgd_part(sgd_responses(big, _SgdRecord({1e-2: 0.3, 1e-3: 0.3}))).word == \
        CONTRADICTED
    # the exponent still moves with the rate: no linear regime reached, not testable
    moving = sgd_part(sgd_responses(_SgdRecord({1e-2: 0.3, 1e-3: 0.0})))
    assert not moving.rate_free and moving.word == NOT_TESTABLE
    with pytest.raises(ValueError, match="two rates"):
        sgd_part(sgd_responses(big))
    with pytest.raises(ValueError, match="twice"):
        sgd_responses(big, big)
    # the blocks-only steps are read apart from the whole model's, by the arm's probe: a
    # record of the other group is refused, not mixed in
    blocks = _SgdRecord({1e-2: 0.3, 1e-3: 0.3}, stepped="blocks")
    assert sgd_part(sgd_responses(blocks, stepped="blocks")).word == CONTRADICTED
    with pytest.raises(ValueError, match="no SGD step"):
        sgd_responses(big, blocks)
    with pytest.raises(ValueError, match="no SGD step"):
        sgd_responses(big, stepped="blocks")


def test_init_response_sgd_quick_record_reads_as_rates():
    """The quick ``init_response_sgd`` stores only its SGD steps, one per rate, smaller at
    the smaller rate; ``sgd_responses`` reads them by rate."""
    from depthnotes.experiments.ch4 import SGD_RESPONSE_LRS
    from depthnotes.experiments.records import Record, run_experiment
    from depthnotes.experiments.registry import get_experiment
    from depthnotes.verdicts.ch5_fixes import sgd_responses

    rec = Record.from_dict(run_experiment(get_experiment("init_response_sgd", True),
                                          workers=1))
    probes = rec.run(rec.arms[0], 0)["probes"]
    assert "sensitivity" not in probes and "sgd_update" not in probes
    got = sgd_responses(rec)
    assert sorted(got) == sorted(SGD_RESPONSE_LRS)
    small, large = (got[lr]["DeepNorm"][3] for lr in sorted(SGD_RESPONSE_LRS))
    assert all(0 < a < b for a, b in zip(small, large))


def test_c11_word_needs_the_plain_stream_to_grow_and_the_scaled_ones_not_to():
    from depthnotes.verdicts.ch5_fixes import scaled_start_word

    assert scaled_start_word(109.0, 1.28, 1.28, 0.05) == REPRODUCED      # chapter 5's run
    assert scaled_start_word(109.0, 2.5, 1.28, 0.05) == NOT_SHOWN        # scaled one grows
    assert scaled_start_word(109.0, 1.28, 2.0, 0.05) == NOT_SHOWN        # the bar is open
    assert scaled_start_word(109.0, 1.28, 1.28, 0.2) == NOT_SHOWN        # a block writes big
    # no growth to prevent: the positive control fails, whatever the scaled stacks do
    assert scaled_start_word(20.0, 1.28, 1.28, 0.05) == NOT_TESTABLE
    with pytest.raises(ValueError, match="scaled"):
        scaled_start_word(109.0, math.nan, 1.28, 0.05)


# -- C10's removal part against a control, and C12's halves, at one depth ----------------------
def _use_run(final, early, late, L=8):
    """A run of a stack of ``L`` blocks with the ``layer_use`` probe: removing block 2 (the
    early quarter) costs ``early``, removing blocks 7 and 8 (the late quarter) ``late``."""
    cost = [0.5, early] + [0.01] * (L - 4) + [late, late]
    probes = {"contribution_init": [1.0] * L, "contribution": [1.0] * L,
              "layer_removal_cost_init": [0.0] * L, "layer_removal_cost": cost,
              "loss_init": 4.0, "loss": final}
    return loss_run(final, probes=probes)


def _control_record(pre, deep, edge=()):
    """Two families at L = 8, each at three rates, 1e-3 the best and bracketed (the others'
    runs end 0.3 nats higher) unless the family is in ``edge`` (then 3e-3, the grid's top,
    is the best): ``pre`` and ``deep`` are per-seed (final loss, early removal cost, late
    removal cost) at the best rate."""
    def at(lr, fam, vals):
        best = 3e-3 if fam in edge else 1e-3
        return [_use_run(loss + (0.0 if lr == best else 0.3), *rest) for loss, *rest in vals]

    return stored_record({
        f"{fam}, lr={lr:g}": ({"family": fam, "n_layer": 8, "lr": lr}, at(lr, fam, vals))
        for fam, vals in (("pre", pre), ("deep", deep)) for lr in (3e-4, 1e-3, 3e-3)})


def test_layer_use_control_compares_the_ratios_when_both_stacks_trained():
    from depthnotes.verdicts.ch5_fixes import layer_use_control

    pre = [(2.5, 0.05, 0.001), (2.5, 0.06, 0.002), (2.45, 0.055, 0.001)]   # late ~ 3 % early
    deep = [(2.4, 0.05, 0.04), (2.5, 0.06, 0.05), (2.45, 0.04, 0.035)]     # late ~ 85 %
    rec = _control_record(pre, deep)
    out = depth_outcomes(rec, BASE, 0.25)
    c = layer_use_control(rec, out["pre"][0], out["deep"][0])
    assert c.word == REPRODUCED and c.untrained == () and c.unresolved == ()
    assert c.comparison.best == "pre" and c.early_vs_zero == {"pre": "above", "deep": "above"}
    # the control's late blocks as cheap as pre-norm's: not shown
    rec = _control_record(pre, pre)
    out = depth_outcomes(rec, BASE, 0.25)
    assert layer_use_control(rec, out["pre"][0], out["deep"][0]).word == NOT_SHOWN


def test_layer_use_control_needs_a_trained_control_and_a_removal_cost_to_compare_with():
    from depthnotes.verdicts.ch5_fixes import layer_use_control

    pre = [(2.5, 0.05, 0.001), (2.5, 0.06, 0.002), (2.45, 0.055, 0.001)]
    stalled = [(3.24, 0.05, 0.04), (2.5, 0.06, 0.05), (2.45, 0.04, 0.035)]  # seed 0 stalled
    rec = _control_record(pre, stalled)
    out = depth_outcomes(rec, BASE, 0.25)
    c = layer_use_control(rec, out["pre"][0], out["deep"][0])
    assert c.word == NOT_TESTABLE and c.untrained == ("deep",) and c.comparison is None
    # both trained, but removing an early pre-norm block costs nothing clear (in the noise
    # around zero): a ratio would divide by noise
    noisy = [(2.5, -0.002, 0.001), (2.5, 0.001, 0.002), (2.45, -0.001, 0.001)]
    deep = [(2.4, 0.05, 0.04), (2.5, 0.06, 0.05), (2.45, 0.04, 0.035)]
    rec = _control_record(noisy, deep)
    out = depth_outcomes(rec, BASE, 0.25)
    c = layer_use_control(rec, out["pre"][0], out["deep"][0])
    assert c.word == NOT_TESTABLE and c.untrained == () and c.unresolved == ("pre",)
    assert c.early_vs_zero["pre"] == "within noise"


def test_layer_use_control_needs_both_best_rates_bracketed():
    """The stacks of the reproduced case above, with the control's best rate at the top of
    its grid: a rate beyond it might train the control differently, so not testable."""
    from depthnotes.verdicts.ch5_fixes import layer_use_control

    pre = [(2.5, 0.05, 0.001), (2.5, 0.06, 0.002), (2.45, 0.055, 0.001)]
    deep = [(2.4, 0.05, 0.04), (2.5, 0.06, 0.05), (2.45, 0.04, 0.035)]
    rec = _control_record(pre, deep, edge=("deep",))
    out = depth_outcomes(rec, BASE, 0.25)
    c = layer_use_control(rec, out["pre"][0], out["deep"][0])
    assert out["deep"][0].lr == 3e-3 and c.unbracketed == ("deep",)
    assert c.word == NOT_TESTABLE and c.comparison is None


def test_ablation_part_needs_full_deepnorm_to_beat_post_norm_first():
    from depthnotes.verdicts.ch5_fixes import ablation_part

    rec = depth_record({("full", 48): OK, ("post", 48): BAD, ("beta", 48): OK,
                        ("alpha", 48): BAD})
    out = depth_outcomes(rec, BASE, 0.25)
    beta = ablation_part(out, "beta", "full", "post", 48)
    assert beta.controlled and beta.word == REPRODUCED
    assert not beta.vs_full.comparisons[48].clear           # as good as full DeepNorm
    alpha = ablation_part(out, "alpha", "full", "post", 48)
    assert alpha.controlled and alpha.word == NOT_SHOWN     # no better than post-norm
    assert alpha.vs_full.words[48] == CONTRADICTED          # full DeepNorm clearly better
    # full DeepNorm itself within noise of post-norm: neither half can be judged
    rec = depth_record({("full", 48): BAD, ("post", 48): BAD, ("beta", 48): OK})
    out = depth_outcomes(rec, BASE, 0.25)
    beta = ablation_part(out, "beta", "full", "post", 48)
    assert not beta.controlled and beta.word == NOT_TESTABLE
    assert beta.vs_post.words[48] == REPRODUCED             # shown, not the row's word


# -- C10's removal rule as amended on 2026-12-05: the late quarter without the last block -----
def test_layer_use_can_leave_the_last_block_out_of_the_late_quarter():
    """``last_out``: the late quarter of an 8-block stack is block 7 alone (block 8 left out,
    as block 1 is of the early quarter); without it, blocks 7 and 8 as before."""
    L = 8
    probes = {"contribution_init": [1.0] * L, "contribution": [1.0] * L,
              "layer_removal_cost_init": [0.0] * L,
              "layer_removal_cost": [0.5, 0.2] + [0.1] * 4 + [0.02, 0.6],
              "loss_init": 4.0, "loss": 2.0}
    rec = stored_record({"a": ({"n_layer": L}, [{"probes": probes}] * 3)})
    whole, cut = layer_use(rec), layer_use(rec, last_out=True)
    assert whole.late == slice(6, 8) and cut.late == slice(6, 7)
    assert cut.early == whole.early == slice(1, 2)
    assert whole.skip_late == pytest.approx((0.31,) * 3)
    assert cut.skip_late == pytest.approx((0.02,) * 3)


def test_layer_use_control_without_the_last_block_judges_the_blocks_before_it():
    """A control whose late removal cost sits in its last block only: with the whole late
    quarter pre-norm's ratio is clearly below the control's (reproduced); with the last block
    left out (the amended rule) the two are alike (not shown here)."""
    from depthnotes.verdicts.ch5_fixes import layer_use_control, removal_ratio

    pre = [(2.5, 0.05, 0.001), (2.5, 0.06, 0.002), (2.45, 0.055, 0.001)]
    ctl = [(2.4, 0.05, 0.001, 0.08), (2.5, 0.06, 0.002, 0.1), (2.45, 0.055, 0.001, 0.09)]

    def at(lr, fam, vals):
        def run(loss, early, late, last=None):
            r = _use_run(loss + (0.0 if lr == 1e-3 else 0.3), early, late)
            if last is not None:
                r["probes"]["layer_removal_cost"][-1] = last
            return r
        return [run(*v) for v in vals]

    rec = stored_record({
        f"{fam}, lr={lr:g}": ({"family": fam, "n_layer": 8, "lr": lr}, at(lr, fam, vals))
        for fam, vals in (("pre", pre), ("ctl", ctl)) for lr in (3e-4, 1e-3, 3e-3)})
    out = depth_outcomes(rec, BASE, 0.25)
    assert layer_use_control(rec, out["pre"][0], out["ctl"][0]).word == REPRODUCED
    c = layer_use_control(rec, out["pre"][0], out["ctl"][0], last_out=True)
    assert c.word == NOT_SHOWN and c.control.late == slice(6, 7)
    assert removal_ratio(rec, out["ctl"][0].arm, last_out=True) == pytest.approx(
        (0.02, 1 / 30, 1 / 55))


def test_depth_grid_reads_both_depths_on_as_many_steps():
    """C9a's and C12's grid: each depth from its own 400-step records, every seed on one
    held-out text; the earlier readings come from the first two records by the same
    function (the first: L = 200 on 200 steps; the second: L = 48 scored per seed)."""
    from depthnotes.experiments.records import load_record
    from depthnotes.verdicts.ch5_fixes import (DEPTH_RECORDS_200, DEPTH_RECORDS_48,
                                               FIRST_DEPTH_RECORDS, depth_grid)

    recs = {n: load_record(n)
            for n in (*DEPTH_RECORDS_48, *DEPTH_RECORDS_200, *FIRST_DEPTH_RECORDS)}
    grid = depth_grid(recs)
    arms = {a: grid.arm(a) for a in grid.arms}
    at = {L: {a for a, c in arms.items() if c["info"]["n_layer"] == L} for L in (48, 200)}
    assert set(arms) == at[48] | at[200]
    # each depth holds every arm at that depth of its records (a record may hold both
    # depths), and each of its records gives it some
    for L, names in ((48, DEPTH_RECORDS_48), (200, DEPTH_RECORDS_200)):
        by_record = {n: {a for a in recs[n].arms if recs[n].arm(a)["info"]["n_layer"] == L}
                     for n in names}
        assert at[L] == set().union(*by_record.values()) and all(by_record.values())
    assert {c["recipe"]["steps"] for c in arms.values()} == {400}
    assert {c["recipe"]["eval_seed"] for c in arms.values()} == {0}
    first = depth_grid(recs, FIRST_DEPTH_RECORDS, FIRST_DEPTH_RECORDS)
    assert {first.arm(a)["recipe"]["steps"] for a in first.arms} == {200, 400}
    second = depth_grid(recs, FIRST_DEPTH_RECORDS)
    old48 = {a for a in first.arms if first.arm(a)["info"]["n_layer"] == 48}
    assert {a for a in second.arms if second.arm(a)["info"]["n_layer"] == 48} == old48
    # the re-scored record repeats the first records' training at L = 48 (the first record
    # names its 1e-3 arms without the rate)
    def key(rec, a):
        info = rec.arm(a)["info"]
        return info["family"], rec.arm(a)["recipe"]["lr"]

    new48 = {key(grid, a): a for a in at[48]}
    for a in old48:
        b = new48[key(first, a)]
        for s in grid.seeds:
            curves = grid.run(b, s)["curves"], first.run(a, s)["curves"]
            assert curves[0]["train_loss"] == curves[1]["train_loss"]

# -- C12 at 1,000 blocks: the DeepNorm depth sweep (sweep_verdict, loss_spikes) ---------------
def test_loss_spikes_counts_a_rise_over_the_averaged_curve_once():
    from depthnotes.verdicts.ch5_fixes import loss_spikes

    steps = list(range(2, 402, 2))                       # window means of 2 steps
    smooth = [3.3 - 0.004 * i for i in range(200)]       # falls steadily: no spike
    assert loss_spikes(steps, smooth) == 0
    # alternating batches half a nat apart average out over 20 steps
    noisy = [v + (0.25 if i % 2 else -0.25) for i, v in enumerate(smooth)]
    assert loss_spikes(steps, noisy) == 0
    # a 40-step climb of one nat, then back down: one spike; two such: two
    bump = [v + (1.0 if 100 <= i < 120 else 0.0) for i, v in enumerate(smooth)]
    assert loss_spikes(steps, bump) == 1
    two = [v + (1.0 if 100 <= i < 120 or 160 <= i < 180 else 0.0)
           for i, v in enumerate(smooth)]
    assert loss_spikes(steps, two) == 2
    # a run that stopped: the curve ends at the first None
    assert loss_spikes(steps, bump[:90] + [None] * 110) == 0
    with pytest.raises(ValueError, match="rise"):
        loss_spikes(steps, smooth, rise=0.0)
    # a curve too coarse to average over 20 steps is an error, not a silent non-average
    for every in (40, 3):
        with pytest.raises(ValueError, match="whole number"):
            loss_spikes(list(range(every, 401, every)), smooth[:400 // every])


def sweep_record(deep_finals, post_finals, deep_at_100=None, shallow=None, deep_slope=0.0,
                 post_recipe=None):
    """A stored sweep: DeepNorm at 48 and 1,000 blocks (400 steps, validation every 100) and
    post-norm at 1,000 (100 steps, every 50). ``deep_finals`` gives the 1,000-block DeepNorm
    seeds' final losses (a float, or "diverged"), ``deep_slope`` their late slope,
    ``deep_at_100`` their validation loss at step 100 (default: on their line); post-norm's
    seeds likewise; ``shallow`` the 48-block seeds' finals (default: trained)."""
    def run(final, at_100, steps, every, slope=0.0):
        if final == "diverged":
            return diverged_run(at=60)
        r = loss_run(final, slope=slope, steps=steps, eval_every=every)
        if at_100 is not None:
            r["curves"]["eval_loss"][r["curves"]["eval_steps"].index(100)] = at_100
        return r

    at = deep_at_100 or [None] * 3
    return stored_record({
        "DeepNorm, L=48": ({"family": "DeepNorm", "n_layer": 48, "lr": 1e-3},
                           [run(f, None, 400, 100, -0.1) for f in shallow or [2.4] * 3],
                           400),
        "DeepNorm, L=1000": ({"family": "DeepNorm", "n_layer": 1000, "lr": 2.2e-4},
                             [run(f, a, 400, 100, deep_slope)
                              for f, a in zip(deep_finals, at)], 400),
        "post-norm, L=1000": ({"family": "post-norm, Xavier", "n_layer": 1000, "lr": 2.2e-4},
                              [run(f, None, 100, 50) for f in post_finals],
                              post_recipe or 100)})


POST_STALLS = [3.3, 3.31, 3.29]


def test_sweep_deepnorm_trains_at_the_deepest_depth():
    from depthnotes.verdicts.ch5_fixes import sweep_verdict

    v = sweep_verdict(sweep_record([2.6, 2.65, 2.7], POST_STALLS,
                                   deep_at_100=[2.9, 2.92, 2.95]), BASE)
    assert [d.n_layer for d in v.depths] == [48, 1000] and v.post.n_layer == 1000
    assert v.at_step == 100 and v.deep_at_step == (2.9, 2.92, 2.95)
    assert v.trains.word == REPRODUCED and v.deepest_trained == 1000
    assert v.deepest.spikes == (0, 0, 0) and v.deepest.diverged_at == (None,) * 3
    assert v.versus.clear and v.versus.better == "DeepNorm"           # shown, no word
    # two of three trained: in part
    v = sweep_verdict(sweep_record([2.6, 2.65, 3.2], POST_STALLS), BASE)
    assert v.trains.word == IN_PART and v.deepest_trained == 48


def test_sweep_a_spike_makes_a_trained_depth_in_part():
    from depthnotes.verdicts.ch5_fixes import sweep_verdict

    rec = sweep_record([2.6, 2.65, 2.7], POST_STALLS)
    losses = rec.run("DeepNorm, L=1000", 2)["curves"]["train_loss"]
    for i in range(200, 240):
        losses[i] += 1.0                                   # a 40-step climb of one nat
    v = sweep_verdict(rec, BASE)
    assert v.deepest.spikes == (0, 0, 1) and v.trains.word == IN_PART


def test_sweep_a_failure_at_one_rate_never_contradicts():
    from depthnotes.verdicts.ch5_fixes import sweep_verdict
    from depthnotes.verdicts.evidence import UNBRACKETED

    # every seed stalled or diverged, the 48-block control trained: not shown here
    for finals in ([3.2, 3.21, 3.22], ["diverged"] * 3, [3.2, "diverged", 3.3]):
        v = sweep_verdict(sweep_record(finals, POST_STALLS), BASE)
        assert v.trains.word == NOT_SHOWN
    # none trained but still falling at the end (slow): one rate cannot say
    v = sweep_verdict(sweep_record([3.2, 3.21, 3.22], POST_STALLS, deep_slope=-0.2), BASE)
    assert v.deepest.row.statuses == ("slow",) * 3 and v.trains.word == NOT_TESTABLE
    assert v.trains.reason.kind == UNBRACKETED and v.trains.reason.picks[0].at_edge == "only"
    # a seed that diverged: its step is kept
    v = sweep_verdict(sweep_record(["diverged", 2.6, 2.6], POST_STALLS), BASE)
    assert v.deepest.diverged_at == (60, None, None) and v.trains.word == IN_PART


def test_sweep_needs_its_shallowest_depth_to_train():
    from depthnotes.verdicts.ch5_fixes import sweep_verdict
    from depthnotes.verdicts.evidence import NO_CONTROL

    v = sweep_verdict(sweep_record([2.6, 2.65, 2.7], POST_STALLS, shallow=[2.4, 3.2, 2.4]),
                      BASE)
    assert v.trains.word == NOT_TESTABLE and v.trains.reason.kind == NO_CONTROL
    assert v.trains.reason.statuses == ("trained", "slow", "trained")


def test_sweep_post_norm_diverged_seeds_stay_diverged_in_the_comparison():
    from depthnotes.verdicts.ch5_fixes import sweep_verdict

    v = sweep_verdict(sweep_record([2.6, 2.65, 2.7], ["diverged", 3.3, 3.3],
                                   deep_at_100=[2.9, 2.92, 2.95]), BASE)
    assert v.post.diverged_at == (60, None, None)
    assert v.versus.b.name == "post-norm, Xavier" and v.versus.b.diverged == (0,)


def test_sweep_names_what_is_missing_or_different():
    from depthnotes.verdicts.ch5_fixes import sweep_verdict

    rec = sweep_record([2.6] * 3, [3.3] * 3)
    with pytest.raises(ValueError, match="post-norm, GPT-2"):
        sweep_verdict(rec, BASE, post="post-norm, GPT-2")
    # the short run must be the long one cut short
    rec = sweep_record([2.6] * 3, [3.3] * 3, post_recipe={"steps": 100, "lr": 1e-3})
    with pytest.raises(ValueError, match="differ in \\['lr'\\]"):
        sweep_verdict(rec, BASE)
    # and end inside the warm-up they share (after it, their cosine decays differ)
    rec = sweep_record([2.6] * 3, [3.3] * 3, post_recipe={"steps": 100, "warmup_steps": 50})
    for arm in rec.config["arms"]:
        arm["recipe"]["warmup_steps"] = 50
    with pytest.raises(ValueError, match="warm-up"):
        sweep_verdict(rec, BASE)


def test_sweep_a_run_diverged_after_the_step_keeps_its_loss_there():
    from depthnotes.verdicts.ch5_fixes import sweep_verdict

    rec = sweep_record([2.6, 2.65, 2.7], POST_STALLS, deep_at_100=[2.9, 2.92, 2.95])
    run = rec.run("DeepNorm, L=1000", 1)
    run["final"].update(diverged=True, diverged_at=250, eval_loss=None)
    # the trainer's blow-up in the last stored window is the divergence, not a spike
    run["curves"]["train_loss"][-1] = 40.0
    v = sweep_verdict(rec, BASE)
    assert v.deep_at_step == (2.9, 2.92, 2.95) and v.deepest.diverged_at == (None, 250, None)
    assert v.deepest.spikes == (0, 0, 0) and v.trains.word == IN_PART


def test_the_spike_threshold_sits_above_every_calibration_run():
    """What the rule's comment and the chapter say: none of the 326 runs of the seven
    calibration records rises more than 0.21 nats over its 20-step averaged low."""
    from depthnotes.experiments.records import load_record
    from depthnotes.verdicts.ch5_fixes import SPIKE_CALIBRATION, SPIKE_NATS, loss_rises

    rises = [float(np.max(loss_rises(*rec.curve(arm, "train_loss", s)), initial=0.0))
             for rec in map(load_record, SPIKE_CALIBRATION) for arm in rec.arms
             for s in rec.seeds]
    assert len(rises) == 326 and f"{max(rises):.2f}" == "0.21" and max(rises) < SPIKE_NATS


# -- C10's contribution part as amended on 2026-12-06: at the stack's best rate, bracketed ----
def _share_run(final, trained_late, L=8):
    """A run of an 8-block stack with the ``layer_use`` probe whose late quarter writes
    ``trained_late`` of what every other block does after training (1.0 untrained)."""
    contribution = [1.0] * (L - 2) + [trained_late] * 2
    probes = {"contribution_init": [1.0] * L, "contribution": contribution,
              "layer_removal_cost_init": [0.0] * L, "layer_removal_cost": [0.01] * L,
              "loss_init": 4.0, "loss": final}
    return loss_run(final, probes=probes)


def _share_record(best, rates=(3e-4, 1e-3, 3e-3), share=0.5):
    """One stack at ``rates``; at ``best`` its runs end 0.3 nats lower than at the others
    and its late quarter's share falls to ``share`` with training (1.0 at the other rates)."""
    return stored_record({
        f"pre, lr={lr:g}": ({"family": "pre", "n_layer": 8, "lr": lr},
                            [_share_run(2.5 + 0.01 * s + (0.0 if lr == best else 0.3),
                                        share + 0.01 * s if lr == best else 1.0)
                             for s in range(3)])
        for lr in rates})


def test_contribution_is_judged_at_the_best_rate_only_when_the_grid_brackets_it():
    from depthnotes.verdicts.ch5_fixes import contribution_at_best

    c = contribution_at_best(_share_record(1e-3), BASE, 0.25)
    assert c.row.lr == 1e-3 and c.row.pick.bracketed and c.word == REPRODUCED
    assert c.verdict.contribution.best == "trained"          # the share fell with training
    # the same stack best at the grid's top rate: the optimum may lie beyond it
    c = contribution_at_best(_share_record(3e-3), BASE, 0.25)
    assert c.row.lr == 3e-3 and not c.row.pick.judgeable and c.word == NOT_TESTABLE
    assert c.verdict.contribution_word == REPRODUCED         # shown, not the part's word
    # one rate: never bracketed
    c = contribution_at_best(_share_record(1e-3, rates=(1e-3,)), BASE, 0.25)
    assert c.word == NOT_TESTABLE
    # at a bracketed best rate where the share did not move: not shown here
    c = contribution_at_best(_share_record(1e-3, share=1.0), BASE, 0.25)
    assert c.word == NOT_SHOWN


def test_layer_use_control_can_take_the_bracket_from_the_grid_that_chose_the_rates():
    """A confirmation on fresh seeds holds one rate per stack: alone it is never bracketed;
    with the picks of the grids that chose those rates it is judged as the grid would be."""
    from depthnotes.verdicts.ch5_fixes import layer_use_control

    pre = [(2.5, 0.05, 0.001), (2.5, 0.06, 0.002), (2.45, 0.055, 0.001)]
    deep = [(2.4, 0.05, 0.04), (2.5, 0.06, 0.05), (2.45, 0.04, 0.035)]
    grid = depth_outcomes(_control_record(pre, deep), BASE, 0.25)
    fresh = stored_record({f"{fam}, lr=0.001": ({"family": fam, "n_layer": 8, "lr": 1e-3},
                                                [_use_run(*v) for v in vals])
                           for fam, vals in (("pre", pre), ("deep", deep))})
    out = depth_outcomes(fresh, BASE, 0.25)
    alone = layer_use_control(fresh, out["pre"][0], out["deep"][0])
    assert alone.word == NOT_TESTABLE and alone.unbracketed == ("pre", "deep")
    picks = (grid["pre"][0].pick, grid["deep"][0].pick)
    c = layer_use_control(fresh, out["pre"][0], out["deep"][0], bracket_from=picks)
    assert c.word == REPRODUCED and c.unbracketed == ()
    with pytest.raises(ValueError, match="bracket_from"):
        layer_use_control(fresh, out["pre"][0], out["deep"][0],
                          bracket_from=(picks[0],))


def sweep_update_record(curves, d_model=64):
    """curves: {(family, L): [update size after steps 1, 2, ... per seed]} (lists)."""
    return stored_record({f"{fam}, L={L}": (
        {"family": fam, "n_layer": L},
        [{"probes": {"update_steps": list(range(1, len(c) + 1)), "update_size": c}}
         for c in per_seed])
        for (fam, L), per_seed in curves.items()}, model={"d_model": d_model})


def growing(first, rate, steps=6, seeds=(1.0, 1.05, 0.95)):
    """Per seed, an update that grows linearly from ``first`` by ``rate`` per step."""
    return [[m * (first + rate * t) for t in range(steps)] for m in seeds]


def test_training_updates_judged_before_saturation():
    from depthnotes.verdicts.ch5_fixes import SATURATED_UPDATE, training_updates
    # sqrt(64) = 8: DeepNorm flat in L, never saturating; post-norm far larger, below 8
    curves = {("DeepNorm", L): growing(0.1, 0.1) for L in (48, 200, 1000)}
    curves[("post", 1000)] = growing(5.0, 0.1)
    v = training_updates(sweep_update_record(curves), post="post")
    assert SATURATED_UPDATE * 8 == v.ceiling == 8.0
    assert v.step == 6 and v.saturated_at["post"][1000] == [None] * 3
    assert v.exponents == pytest.approx((0.0, 0.0, 0.0), abs=1e-5)
    assert (v.bounded, v.smaller, v.word) == (REPRODUCED, REPRODUCED, REPRODUCED)
    # DeepNorm crosses 8 at step 5 on seeds 0 and 1 (4 + 1 * 4 = 8; 1.05 * 8 = 8.4): judged
    # at step 4
    curves = {("DeepNorm", L): growing(4.0, 1.0) for L in (48, 200, 1000)}
    curves[("post", 1000)] = growing(5.0, 0.1)
    v = training_updates(sweep_update_record(curves), post="post")
    assert v.step == 4 and v.saturated_at["DeepNorm"][48] == [5, 5, 6]
    # post-norm saturating first sets the step (the amendment): at step 2 here
    curves[("post", 1000)] = growing(6.0, 1.0)            # seed 1: 7.35 at 2, 8.4 at 3
    v = training_updates(sweep_update_record(curves), post="post")
    assert v.step == 2 and v.saturated_at["post"][1000] == [3, 3, 4]
    # growing with depth (x L^0.3), smaller than post-norm's: in part
    curves = {("DeepNorm", L): growing(0.1 * L ** 0.3, 0.0) for L in (48, 200, 1000)}
    curves[("post", 1000)] = growing(7.0, 0.1)
    v = training_updates(sweep_update_record(curves), post="post")
    assert v.step == 6 and v.bounded == CONTRADICTED and v.smaller == REPRODUCED
    assert v.word == IN_PART
    # as large as post-norm's at the deepest depth: the smaller part is not shown
    curves = {("DeepNorm", L): growing(2.0, 0.0) for L in (48, 1000)}
    curves[("post", 1000)] = growing(2.0, 0.0, seeds=(1.0, 0.95, 1.05))
    v = training_updates(sweep_update_record(curves), post="post")
    assert (v.bounded, v.smaller) == (REPRODUCED, NOT_SHOWN)
    # saturated from the first step: nothing to judge
    curves = {("DeepNorm", L): growing(9.0, 0.0) for L in (48, 1000)}
    curves[("post", 1000)] = growing(9.0, 0.0)
    v = training_updates(sweep_update_record(curves), post="post")
    assert v.step is None and v.word == NOT_TESTABLE
    # post-norm stopped before the judged step (a diverged run): that part is not testable
    curves = {("DeepNorm", L): growing(1.0, 0.0) for L in (48, 1000)}
    curves[("post", 1000)] = [c[:2] for c in growing(5.0, 0.0)]
    v = training_updates(sweep_update_record(curves), post="post")
    assert v.smaller == NOT_TESTABLE and v.versus is None and v.bounded == REPRODUCED
    # the post-norm arm must sit at the deepest depth
    curves[("post", 48)] = curves.pop(("post", 1000))
    with pytest.raises(ValueError, match="deepest"):
        training_updates(sweep_update_record(curves), post="post")


def test_a_depth_sentence_names_the_init_where_two_families_share_a_name():
    """The depth verdicts' sentences name a family without its init ("post-norm"), unless
    another family of the grid shares that name: then both carry it, so that no sentence says
    "below pre-norm" when the grid holds two pre-norms (chapter 5's depth grid does)."""
    from depthnotes.data.corpus import load_corpus, unigram_loss
    from depthnotes.experiments.records import load_record
    from depthnotes.verdicts.ch4_trainability import depth_outcomes
    from depthnotes.verdicts.ch5_fixes import (DEPTH_RECORDS_200, DEPTH_RECORDS_48,
                                               UNIGRAM_MARGIN, depth_grid, depth_verdict,
                                               sentence_names)

    four = ["post-norm, Xavier", "DeepNorm", "pre-norm, Xavier", "pre-norm, GPT-2 init"]
    assert sentence_names(four) == {"post-norm, Xavier": "post-norm", "DeepNorm": "DeepNorm",
                                    "pre-norm, Xavier": "pre-norm (Xavier)",
                                    "pre-norm, GPT-2 init": "pre-norm (GPT-2 init)"}
    assert sentence_names(four[:3])["pre-norm, Xavier"] == "pre-norm"
    recs = {n: load_record(n) for n in (*DEPTH_RECORDS_48, *DEPTH_RECORDS_200)}
    out = depth_outcomes(depth_grid(recs), unigram_loss(load_corpus()), UNIGRAM_MARGIN)
    assert set(out) == set(four)
    for claim, other in (("DeepNorm", "pre-norm, Xavier"), ("pre-norm, Xavier", "DeepNorm")):
        v = depth_verdict(out, claim=claim, other=other)
        for L in (48, 200):
            assert "pre-norm (Xavier)" in v.reason(L)
            assert "pre-norm " not in v.reason(L).replace("pre-norm (", "")
