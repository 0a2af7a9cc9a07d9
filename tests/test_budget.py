"""shapes_for_budget: the fixed-parameter family of chapter 6 (claims C14, C15)."""

import pytest

from depthnotes import ModelConfig, count_params
from depthnotes.core.params import BudgetShape, shapes_for_budget

BASE = ModelConfig(n_layer=1, d_model=64, n_head=4, vocab_size=94, context=64)


def test_every_shape_is_within_tolerance_and_counted_exactly():
    """C14: each shape's exact non-embedding count is within the stated tolerance of P."""
    P, tol = 200_000, 0.08
    shapes = shapes_for_budget(P, BASE, tolerance=tol, head_dim=8)
    assert len(shapes) >= 5
    for s in shapes:
        assert isinstance(s, BudgetShape)
        assert abs(s.non_embedding - P) <= tol * P
        assert s.non_embedding == count_params(s.config).non_embedding
        assert s.config.n_layer == s.n_layer and s.config.d_model == s.d_model
        assert s.d_model % 8 == 0 and s.n_head == s.d_model // 8
        assert s.config.d_ff == 4 * s.d_model
        assert s.aspect_ratio == s.d_model / s.n_layer
        assert s.rel_error == pytest.approx((s.non_embedding - P) / P)
    depths = [s.n_layer for s in shapes]
    assert depths == sorted(depths)
    ratios = [s.aspect_ratio for s in shapes]
    assert ratios == sorted(ratios, reverse=True)  # deeper means narrower at fixed P


def test_width_is_the_best_multiple_for_each_depth():
    """No other allowed width for that depth lands closer to P."""
    P = 150_000
    for s in shapes_for_budget(P, BASE, n_layers=[1, 2, 3, 6], tolerance=0.2, d_multiple=8,
                               head_dim=8):
        for other in (s.d_model - 8, s.d_model + 8):
            if other < 8:
                continue
            cfg = s.config.replace(d_model=other, n_head=other // 8)
            assert abs(count_params(cfg).non_embedding - P) >= abs(s.non_embedding - P)


def test_gpt2_small_is_in_the_family_of_its_own_budget():
    """C15: GPT-2 small (L=12, d=768, d/L=64) is the 12-layer member of its own budget."""
    base = ModelConfig.preset("gpt2-small")
    P = count_params(base).non_embedding
    shapes = shapes_for_budget(P, base, n_layers=[3, 12, 48], tolerance=0.01, head_dim=64)
    by_L = {s.n_layer: s for s in shapes}
    assert by_L[12].d_model == 768 and by_L[12].non_embedding == P
    assert by_L[12].aspect_ratio == 64
    assert by_L[3].d_model == 1536 and by_L[48].d_model == 384  # 12·L·d² is constant


def test_fixed_n_head_and_fixed_d_ff():
    base = BASE.replace(n_head=2, d_ff=96)
    for s in shapes_for_budget(60_000, base, n_layers=[1, 2, 4], tolerance=0.2):
        assert s.n_head == 2 and s.d_model % 2 == 0 and s.config.d_ff == 96


def test_default_depths_stop_when_the_narrowest_width_overshoots():
    shapes = shapes_for_budget(20_000, BASE, tolerance=0.1, head_dim=16)
    narrowest = count_params(BASE.replace(n_layer=shapes[-1].n_layer + 1, d_model=16,
                                          n_head=1)).non_embedding
    assert narrowest > 20_000 * 1.1


def test_an_impossible_tolerance_gives_no_shape_rather_than_a_wrong_one():
    assert shapes_for_budget(1_000, BASE, n_layers=[1], tolerance=0.01, head_dim=64) == []


@pytest.mark.parametrize("kwargs, err, field", [
    (dict(budget=0), ValueError, "budget"), (dict(budget=10.5), TypeError, "budget"),
    (dict(tolerance=0), ValueError, "tolerance"), (dict(tolerance=1.5), ValueError, "tolerance"),
    (dict(head_dim=0), ValueError, "head_dim"), (dict(n_layers=[0]), ValueError, "n_layers"),
    (dict(d_multiple=6), ValueError, "d_multiple"),  # not a multiple of base.n_head = 4
])
def test_bad_arguments(kwargs, err, field):
    args = dict(budget=50_000, base=BASE)
    args.update(kwargs)
    budget = args.pop("budget")
    with pytest.raises(err, match=field):
        shapes_for_budget(budget, **args)


def test_base_must_be_a_config():
    with pytest.raises(TypeError, match="ModelConfig"):
        shapes_for_budget(50_000, {"n_layer": 1})


# -- C15's rule: depthnotes.verdicts.ch6_budget.aspect_claim_word ---------------------------------------
def _pub(family, L, d):
    from depthnotes.data.published_shapes import PublishedShape
    return PublishedShape(family, f"{L}x{d}", L, d, "x")


# sizes are 12 L d^2: (16, 1024) ~ 0.2B and (16, 4096) ~ 3.2B, either side of the 1B split
DRIFT_UP = [_pub("A", 16, 1024), _pub("A", 16, 4096)]                # d/L 64 -> 256


@pytest.mark.parametrize("shapes, word", [
    # B stays at 100: medians 82 below 1B, 178 above; overall 100
    (DRIFT_UP + [_pub("B", 8, 800), _pub("B", 40, 4000)], "reproduced"),
    # B falls from 200 to 100 (against the drift); overall median 150, 132 -> 178: the
    # around-100 part holds, the drift part does not
    (DRIFT_UP + [_pub("B", 8, 1600), _pub("B", 40, 4000)], "reproduced in part"),
    # around 100 (median 150) but the larger model sits lower: no drift, one part of two
    ([_pub("A", 8, 1600), _pub("A", 40, 4000)], "reproduced in part"),
    # drifts up (20 -> 40) but the median d/L is 30, not within a factor 2 of 100: one part
    ([_pub("A", 8, 80), _pub("A", 10, 300), _pub("A", 40, 1600)], "reproduced in part"),
    # neither: median 17.5, and the larger model sits lower (20 -> 15)
    ([_pub("A", 8, 160), _pub("A", 80, 1200)], "not shown here"),
])
def test_aspect_claim_word_for_each_branch(shapes, word):
    from depthnotes.verdicts.ch6_budget import aspect_claim_word
    assert aspect_claim_word(shapes) == word


def test_aspect_claim_word_needs_models_on_both_sides_and_names_the_families():
    from depthnotes.data.published_shapes import PUBLISHED_SHAPES
    from depthnotes.verdicts.ch6_budget import aspect_claim_word, families_against_drift
    with pytest.raises(ValueError, match="both sides of split"):
        aspect_claim_word(DRIFT_UP[:1])
    assert families_against_drift(DRIFT_UP + [_pub("B", 8, 1600), _pub("B", 40, 4000)]) == ["B"]
    assert families_against_drift(PUBLISHED_SHAPES) == ["GPT-2", "LLaMA"]   # 64 -> 33, 128 -> 102


def test_c15_counts_each_distinct_shape_once():
    """Three families share 12 x 768: the C15 medians count that design once, and every
    published model is kept under its shape's names."""
    from depthnotes.data.published_shapes import PUBLISHED_SHAPES, distinct_shapes

    distinct = distinct_shapes()
    assert len({(s.n_layer, s.d_model) for s in distinct}) == len(distinct)
    assert sum(len(s.names) for s in distinct) == len(PUBLISHED_SHAPES)
    small = next(s for s in distinct if (s.n_layer, s.d_model) == (12, 768))
    assert small.names == ("GPT-2 small", "GPT-3 125M", "Pythia 160M")
    # the rule sees a shape once: doubling every model leaves the word unchanged
    from depthnotes.verdicts.ch6_budget import aspect_claim_word
    assert aspect_claim_word(PUBLISHED_SHAPES * 2) == aspect_claim_word(PUBLISHED_SHAPES)


# -- chapter 6's first look, read from its record ---------------------------------------------
def test_sweep_points_read_every_arm_of_the_stored_sweep():
    """The page's first look reads budget_sweep_300_steps through sweep_points: one point per
    arm, in the record's order, with the arm's shape, rate, loss and divergence; d/L is
    computed from the shape (the stored info rounds it)."""
    from depthnotes.experiments.ch6 import sweep_points
    from depthnotes.experiments.records import load_record

    rec = load_record("budget_sweep_300_steps")
    points = sweep_points(rec)
    assert len(points) == len(rec.arms) == 10
    for p, name in zip(points, rec.arms):
        info, run = rec.arm(name)["info"], rec.run(name, 0)["final"]
        assert name == f"P={p.budget} L={p.n_layer}" and p.d_model == info["d_model"]
        assert p.aspect_ratio == p.d_model / p.n_layer
        assert p.val_loss == run["eval_loss"] and p.diverged is run["diverged"] is False
        assert p.lr == rec.arm(name)["recipe"]["lr"]
    with pytest.raises(KeyError, match="no run of arm"):
        sweep_points(rec, seed=1)


def test_sweep_points_are_what_budget_sweep_returns():
    """Read back from a (quick) record, the sweep is the one budget_sweep trains with the
    record's shapes and recipe: same shapes, rates and losses (to the record's digits)."""
    import torch

    from depthnotes.data.corpus import load_corpus
    from depthnotes.experiments.ch6 import sweep_points
    from depthnotes.experiments.records import (MODELS_KEY, Record, round_float,
                                                run_experiment)
    from depthnotes.experiments.registry import get_experiment
    from depthnotes.training.budget import budget_sweep

    quick = get_experiment("budget_sweep_300_steps", quick=True)
    assert quick.keep_models and get_experiment("budget_sweep_300_steps").keep_models
    data = run_experiment(quick, workers=1)
    data.pop(MODELS_KEY)                              # the weights: not read here
    read = sweep_points(Record.from_dict(data))
    corpus = load_corpus()
    base = ModelConfig(n_layer=1, d_model=64, n_head=2, vocab_size=corpus.vocab_size,
                       context=64)
    shapes = [s for P, depths in {25_000: [1, 2, 3, 4, 6, 8], 100_000: [1, 2, 4, 8]}.items()
              for s in shapes_for_budget(P, base, tolerance=0.08, d_multiple=2,
                                         n_layers=depths)]
    before = torch.get_num_threads()
    torch.set_num_threads(1)                          # as the record's jobs run
    try:
        trained = budget_sweep(shapes, quick.arms[0].recipe.replace(lr=3e-3), corpus=corpus)
    finally:
        torch.set_num_threads(before)
    assert [(p.budget, p.n_layer, p.d_model, p.aspect_ratio) for p in read] == \
        [(p.budget, p.n_layer, p.d_model, p.aspect_ratio) for p in trained]
    assert [p.lr for p in read] == pytest.approx([p.lr for p in trained], rel=1e-5)
    assert [p.val_loss for p in read] == [round_float(p.val_loss) for p in trained]
