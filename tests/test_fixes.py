"""Chapter 5's rules (depthnotes.verdicts.ch5_fixes) and the measurements its records take
(depthnotes.measure.record_probes)."""

import math

import numpy as np
import pytest
import torch

from depthnotes import ModelConfig, Transformer
from depthnotes.verdicts.ch5_fixes import (INCONCLUSIVE, LayerUse, depth_verdict, grid_cells,
                                           grid_verdict, layer_use, layer_use_verdict,
                                           run_word, unigram_loss, update_exponents,
                                           update_sizes, update_verdict, weakest)
from depthnotes.measure.record_probes import PROBE_KEYS, make_probe, probe_batches
from depthnotes.verdicts.ch4_trainability import SLOW, SLOWER, depth_outcomes
from depthnotes.verdicts.compare import NOT_REPRODUCED, REPRODUCED, WITH_CAVEATS
from fake_records import diverged_run, loss_run, stored_record

BASE = 3.25                          # trained means eval loss < 3.0 (MARGIN 0.25)
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


def test_unigram_loss_is_the_entropy_of_the_frequencies():
    class C:
        train = torch.tensor([0, 1, 0, 1, 2, 2, 2, 2])
        vocab_size = 5
    p = np.array([2, 2, 4]) / 8
    assert unigram_loss(C) == pytest.approx(float(-(p * np.log(p)).sum()), rel=1e-12)


def test_run_word_says_chapter_4s_status():
    rec = stored_record({"a": ({}, [loss_run(2.5), loss_run(3.1), loss_run(3.1, slope=-0.3),
                                    diverged_run(at=7)])}, seeds=(0, 1, 2, 3))
    assert [run_word(rec, "a", s, BASE) for s in rec.seeds] == \
        ["2.50 (trained)", "3.10 (stalled)", "3.10 (slow)", "diverged at step 7"]


def test_grid_both_halves_reproduced():
    rec = grid_record({(8, 1e-3, 0): (OK, OK), (8, 1e-3, 50): (OK, OK),
                       (8, 1e-2, 0): (BAD, OK), (8, 1e-2, 50): (OK, OK)})
    cells = grid_cells(rec, BASE)
    assert [(c.n_layer, c.lr, c.warmup) for c in cells] == \
        [(8, 1e-3, 0), (8, 1e-3, 50), (8, 1e-2, 0), (8, 1e-2, 50)]
    assert cells[2].gap > 0 and cells[2].comparison.clear
    v = grid_verdict(cells)
    assert v.word == REPRODUCED and v.rate_depths == (8,) and len(v.warmup_rescues) == 1


def test_grid_warmup_that_rescues_nothing_is_a_caveat():
    # the L = 8 picture: post-norm trains at 1e-3 without warm-up, and warm-up does
    # not rescue it at 1e-2
    rec = grid_record({(8, 1e-3, 0): (OK, OK), (8, 1e-3, 50): (OK, OK),
                       (8, 1e-2, 0): (BAD, OK), (8, 1e-2, 50): (BAD, OK)})
    v = grid_verdict(grid_cells(rec, BASE))
    assert v.word == WITH_CAVEATS and not v.warmup_rescues and "not shown" in v.reason


def test_grid_cannot_test_the_rate_where_post_norm_never_trains():
    rec = grid_record({(24, 1e-3, 0): (BAD, OK), (24, 1e-3, 50): (BAD, OK),
                       (24, 1e-2, 0): (BAD, OK), (24, 1e-2, 50): (BAD, OK)})
    v = grid_verdict(grid_cells(rec, BASE))
    assert v.word == NOT_REPRODUCED and v.rate_depths == () and "cannot test" in v.reason


def test_grid_within_noise_is_not_reproduced():
    rec = grid_record({(8, 1e-3, 0): (OK, OK), (8, 1e-3, 50): (OK, OK),
                       (8, 1e-2, 0): ([2.6, 2.9, 2.7], [2.5, 2.8, 2.6]),
                       (8, 1e-2, 50): (OK, OK)})
    assert grid_verdict(grid_cells(rec, BASE)).word == NOT_REPRODUCED


def test_slow_runs_did_not_train_for_chapter_5():
    rec = grid_record({(8, 1e-3, 0): (OK, OK), (8, 1e-3, 50): (OK, OK),
                       (8, 1e-2, 0): (SLOWING, OK), (8, 1e-2, 50): (OK, OK)})
    cells = grid_cells(rec, BASE)
    assert cells[2].post.statuses == (SLOW,) * 3 and cells[2].post.outcome == SLOWER
    v = grid_verdict(cells)               # warm-up turned a slow cell into a trained one
    assert v.word == REPRODUCED and [c.warmup for c in v.warmup_rescues] == [50]
    rec = depth_record({("deep", 48): OK, ("deep", 200): SLOWING,
                        ("post", 48): BAD, ("post", 200): BAD})
    v = depth_verdict(depth_outcomes(rec, BASE, 0.25), "deep", "post")
    assert v.word == WITH_CAVEATS and v.holds == (48,)


def depth_record(table):
    """table: {(family, L): losses}."""
    return stored_record({f"{fam}, L={L}": ({"family": fam, "n_layer": L}, finals(vals))
                          for (fam, L), vals in table.items()})


def test_depth_verdict_at_every_some_and_no_depth():
    rec = depth_record({("deep", 48): OK, ("deep", 200): OK,
                        ("post", 48): BAD, ("post", 200): BAD})
    v = depth_verdict(depth_outcomes(rec, BASE, 0.25), "deep", "post")
    assert v.word == REPRODUCED and v.holds == (48, 200)
    rec = depth_record({("deep", 48): OK, ("deep", 200): BAD,
                        ("post", 48): BAD, ("post", 200): BAD})
    v = depth_verdict(depth_outcomes(rec, BASE, 0.25), "deep", "post")
    assert v.word == WITH_CAVEATS and v.holds == (48,) and "not at L = 200" in v.reason
    rec = depth_record({("deep", 48): BAD, ("deep", 200): BAD,
                        ("post", 48): OK, ("post", 200): OK})
    v = depth_verdict(depth_outcomes(rec, BASE, 0.25), "deep", "post")
    assert v.word == NOT_REPRODUCED and v.holds == ()


def use(ratio, ratio_init, skip_late, skip_early):
    three = (lambda x: tuple(x + d for d in (-0.01, 0.0, 0.01)))
    return LayerUse(48, slice(1, 12), slice(36, 48), three(ratio_init), three(ratio),
                    three(skip_early), three(skip_late), three(0.0), three(0.0))


def test_layer_use_verdict_needs_both_measures():
    assert layer_use_verdict(use(0.2, 0.5, 0.001, 0.05)).word == REPRODUCED
    assert layer_use_verdict(use(0.5, 0.2, 0.05, 0.001)).word == NOT_REPRODUCED
    v = layer_use_verdict(use(0.2, 0.5, 0.05, 0.001))   # the ratio falls, removal disagrees
    assert v.word == INCONCLUSIVE and v.contribution_word == REPRODUCED
    assert v.removal_word == NOT_REPRODUCED


def test_layer_use_reads_the_quarters():
    L = 8
    contribution = [9.0, 1, 1, 1, 1, 1, 0.5, 0.5]     # early = block 2 only; late = 7, 8
    probes = {"contribution_init": [9.0] + [1.0] * 7, "contribution": contribution,
              "skip_cost_init": [0.0] * L, "skip_cost": [1.0, 0.2] + [0.1] * 4 + [0.0, 0.0],
              "loss_init": 4.0, "loss": 2.0}
    rec = stored_record({"a": ({"n_layer": L}, [{"probes": probes}] * 3)})
    u = layer_use(rec)
    assert (u.early, u.late) == (slice(1, 2), slice(6, 8))
    assert u.ratio == (0.5,) * 3 and u.ratio_init == (1.0,) * 3
    assert u.skip_early == (0.2,) * 3 and u.skip_late == (0.0,) * 3


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
    assert v.word == REPRODUCED and v.smaller_at == (6, 24, 96) and v.caveat is None
    # smaller everywhere but growing with L: a caveat
    sizes = update_sizes(update_record(power_law({"post": 0.7, "deep": 0.3},
                                                 scale={"deep": 0.1})))
    v = update_verdict(sizes, "deep", "post")
    assert v.word == WITH_CAVEATS and "still grows" in v.caveat
    # post-norm at its ceiling at every depth (exponent ~0), DeepNorm below it and growing:
    # the exponents alone would call it the other way; the sizes decide
    sizes = update_sizes(update_record(power_law({"post": 0.0, "deep": 0.4},
                                                 scale={"post": 8.0, "deep": 0.5})))
    v = update_verdict(sizes, "deep", "post")
    assert v.word == WITH_CAVEATS and v.smaller_at == (6, 24, 96)
    assert v.exponents.best == "post"
    # DeepNorm's update as large as post-norm's: not reproduced
    sizes = update_sizes(update_record(power_law({"post": 0.5, "deep": 0.5})))
    assert update_verdict(sizes, "deep", "post").word == NOT_REPRODUCED


def test_weakest():
    assert weakest([REPRODUCED, WITH_CAVEATS]) == WITH_CAVEATS
    assert weakest([REPRODUCED, NOT_REPRODUCED, WITH_CAVEATS]) == NOT_REPRODUCED
    assert weakest([REPRODUCED]) == REPRODUCED
    # every word of verdicts.CLAIM_WORDS is ranked, "inconclusive" included
    assert weakest([REPRODUCED, INCONCLUSIVE]) == INCONCLUSIVE
    assert weakest([WITH_CAVEATS, INCONCLUSIVE]) == INCONCLUSIVE
    assert weakest([INCONCLUSIVE, NOT_REPRODUCED]) == NOT_REPRODUCED
    with pytest.raises(ValueError, match="word must be one of"):
        weakest(["reproduced", "maybe"])


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
    assert len(out["contribution"]) == len(out["skip_cost_init"]) == 3
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
    assert len(probes["skip_cost"]) == rec.arm(rec.arms[0])["info"]["n_layer"]
    assert layer_use_verdict(layer_use(rec)).word in (REPRODUCED, NOT_REPRODUCED,
                                                      INCONCLUSIVE)
