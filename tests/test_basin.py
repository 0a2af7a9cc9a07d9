"""The basin rule of chapter 6 (claim C14): depthnotes.verdicts.ch6_budget.judge_basin and friends."""

import random

import pytest

from depthnotes.verdicts.ch6_budget import (BASIN_FLOOR, CLOSING, STEADY, WIDENING,
                                            basin_claim_word, basin_rule, basins_from_record,
                                            judge_basin)
from depthnotes.experiments.records import Record
from depthnotes.verdicts.compare import NOT_REPRODUCED, REPRODUCED, WITH_CAVEATS, compare


def shapes(means, spread=0.01, depths=(1, 2, 4, 8, 16)):
    """(label, L, d, three seeds' losses) per depth: mean m, min-max range ``spread``."""
    return [(f"L={L}", L, 64 // L or 1, [m - spread / 2, m, m + spread / 2])
            for L, m in zip(depths, means)]


KAPLAN = shapes([1.70, 1.52, 1.50, 1.51, 1.66])        # bad ends, flat middle
LAPTOP = shapes([1.475, 1.46, 1.53, 1.61, 1.73])        # the calibration: shallow end fine


def test_both_ends_worse_and_a_broad_middle_is_the_claims_shape():
    b = judge_basin(200_000, KAPLAN)
    assert b.width == pytest.approx(BASIN_FLOOR * 1.50)    # ranges (0.01) below the floor
    assert [s.n_layer for s in b.inside] == [2, 4, 8] and b.best.n_layer == 4
    assert b.shallow_worse and b.deep_worse and b.broad and b.claim_shape
    assert basin_claim_word({200_000: b}) == REPRODUCED
    assert b.band == pytest.approx((1.50, 1.53)) and b.aspect_span == (1.0, 16.0)   # d = 32, 16, 8


def test_the_calibration_shape_is_not_the_claim():
    b = judge_basin(200_000, LAPTOP)
    assert not b.shallow_worse and b.deep_worse and not b.claim_shape
    assert [s.n_layer for s in b.inside] == [1, 2]
    assert basin_claim_word([b]) == NOT_REPRODUCED
    assert "shallow end (L = 1) in the basin" in b.ends() and "deep end (L = 16) worse" in b.ends()
    assert basin_claim_word([b, judge_basin(50_000, KAPLAN)]) == WITH_CAVEATS


def test_the_band_widens_to_the_largest_seed_range():
    noisy = shapes([1.70, 1.52, 1.50, 1.51, 1.66], spread=0.01)
    noisy[3] = ("L=8", 8, 8, [1.45, 1.51, 1.57])      # range 0.12, mean 1.51
    b = judge_basin(1000, noisy)
    assert b.width == pytest.approx(0.12)
    assert b.shallow_worse and b.deep_worse          # 0.20 and 0.16 above: still outside
    noisier = noisy[:-1] + [("L=16", 16, 4, [1.55, 1.61, 1.67])]   # gap 0.11 < 0.12
    assert not judge_basin(1000, noisier).deep_worse


def test_a_gap_equal_to_the_band_is_inside():
    # binary fractions, so the gap equals the band exactly
    b = judge_basin(1000, shapes([1.0, 1.03125, 1.5], spread=0.0, depths=(1, 2, 4)),
                    floor=0.03125)
    assert b.width == 0.03125 and b.shapes[1].gap == 0.03125
    assert [s.inside for s in b.shapes] == [True, True, False]


def test_an_end_outside_the_band_is_a_clear_difference_by_compare():
    """One rule: an end judged worse is always a clear difference by verdicts.compare."""
    rng = random.Random(0)
    for _ in range(200):
        data = [(f"L={L}", L, 8, [rng.uniform(1.4, 1.8) for _ in range(3)])
                for L in (1, 2, 4, 8)]
        b = judge_basin(1000, data)
        cmp = compare({s[0]: s[3] for s in data})
        for end in (b.shallow, b.deep):
            if not end.inside:
                assert cmp.between(end.label, b.best.label).clear


def test_shapes_are_ordered_by_depth_whatever_the_input_order():
    b = judge_basin(1000, list(reversed(KAPLAN)))
    assert [s.n_layer for s in b.shapes] == [1, 2, 4, 8, 16]
    assert b.shallow.n_layer == 1 and b.deep.n_layer == 16


@pytest.mark.parametrize("data, match", [
    (shapes([1.5, 1.6])[:1], "at least 2 shapes"),
    ([("a", 1, 8, [1.0, 1.1]), ("b", 2, 8, [1.0, 1.1])], "at least 3 seeds"),
    ([("a", 1, 8, [1.0, 1.1, float("nan")]), ("b", 2, 8, [1.0, 1.1, 1.2])], "not a finite"),
    ([("a", 2, 8, [1.0, 1.1, 1.2]), ("b", 2, 8, [1.0, 1.1, 1.2])], "one shape per depth"),
])
def test_bad_input_is_refused_with_a_clear_error(data, match):
    with pytest.raises(ValueError, match=match):
        judge_basin(1000, data)


def test_rule_sentence_states_the_numbers_it_uses():
    text = basin_rule(floor=0.03, broad=4)
    assert "3%" in text and "at least 4 shapes" in text and "3 seeds" in text


def test_basins_from_a_record_group_arms_by_budget():
    arms, runs = [], []
    for P, means in ((50_000, [1.70, 1.52, 1.50, 1.51, 1.66]),
                     (200_000, [1.475, 1.46, 1.53, 1.61, 1.73])):
        for (label, L, d, losses) in shapes(means):
            name = f"P={P} {label}"
            arms.append({"name": name, "model": {}, "recipe": {},
                         "info": {"budget": P, "n_layer": L, "d_model": d}})
            runs += [{"arm": name, "seed": s, "final": {"eval_loss": v}}
                     for s, v in enumerate(losses)]
    rec = Record(name="x", quick=True, description="", measures="", command="",
                 config={"arms": arms, "seeds": [0, 1, 2], "data": {}}, runs=runs,
                 provenance={})
    basins = basins_from_record(rec)
    assert list(basins) == [50_000, 200_000]
    assert basins[50_000].claim_shape and not basins[200_000].claim_shape
    assert basin_claim_word(basins) == WITH_CAVEATS


def test_kaplan_contrast_names_the_budgets_where_an_end_is_not_worse():
    from depthnotes.verdicts.ch6_budget import kaplan_contrast

    both = {50_000: judge_basin(50_000, KAPLAN), 200_000: judge_basin(200_000, LAPTOP)}
    text = kaplan_contrast(both)
    assert "shallowest shape is in the basin at P = 200,000" in text
    assert "Kaplan et al.'s one-layer models" in text     # theirs: fewer than two layers
    assert "deepest, thinnest shape is worse at every budget" in text
    assert kaplan_contrast({1: judge_basin(1, KAPLAN)}).startswith("as in Kaplan et al.")
    with pytest.raises(ValueError, match="at least one"):
        kaplan_contrast({})


def test_budget_basin_can_judge_a_basin():
    """The record's design meets the bar it is for: >= 2 budgets, L from 1 to >= 12 at each,
    >= 3 seeds, the same characters for every shape, lr by the stated 1/d rule, and the
    epochs its description states are the ones its recipe gives."""
    from depthnotes.training.budget import lr_for_width
    from depthnotes.data.corpus import load_corpus
    from depthnotes.experiments.ch6 import epochs
    from depthnotes.experiments.registry import get_experiment

    exp = get_experiment("budget_basin")
    budgets = {a.info["budget"] for a in exp.arms}
    assert len(budgets) >= 2 and len(exp.seeds) >= 3
    for P in budgets:
        depths = sorted(a.info["n_layer"] for a in exp.arms if a.info["budget"] == P)
        assert depths[0] == 1 and depths[-1] >= 12
    assert len({(a.recipe.steps, a.recipe.batch_size, a.recipe.context) for a in exp.arms}) == 1
    for a in exp.arms:
        assert a.recipe.lr == lr_for_width(a.info["lr_ref"], a.model.d_model, a.info["d_ref"],
                                           a.info["lr_rule"])
        assert abs(a.info["non_embedding"] - a.info["budget"]) <= 0.05 * a.info["budget"]
    r = exp.arms[0].recipe
    n = epochs(r.steps, r.batch_size, r.context, int(load_corpus().train.numel()))
    assert f"{n:.1f} epochs" in exp.description


def test_the_floor_alone_is_a_what_if_with_the_same_judge():
    noisy = shapes([1.70, 1.52, 1.50, 1.51, 1.66], spread=0.01)
    noisy[3] = ("L=8", 8, 8, [1.45, 1.51, 1.57])      # range 0.12 sets the band
    assert judge_basin(1000, noisy).width == pytest.approx(0.12)
    alone = judge_basin(1000, noisy, seed_range=False)
    assert alone.width == pytest.approx(BASIN_FLOOR * 1.50)
    assert [s.n_layer for s in alone.inside] == [2, 4, 8]


def _record(curves_by_arm, finals_by_arm):
    """A Record with arms (name, L) and per-seed eval curves at steps 1..n."""
    arms, runs = [], []
    for (name, L), per_seed in curves_by_arm.items():
        arms.append({"name": name, "model": {}, "recipe": {},
                     "info": {"budget": 1000, "n_layer": L, "d_model": 8}})
        runs += [{"arm": name, "seed": s, "final": {"eval_loss": finals_by_arm[name][s]},
                  "curves": {"eval_steps": list(range(1, len(c) + 1)), "eval_loss": c}}
                 for s, c in enumerate(per_seed)]
    return Record(name="x", quick=True, description="", measures="", command="",
                  config={"arms": arms, "seeds": [0, 1, 2], "data": {}}, runs=runs,
                  provenance={})


@pytest.mark.parametrize("deep_curve, word", [
    ([2.5, 2.3, 2.2, 2.1, 2.0], CLOSING),       # gap 0.5, 0.3, 0.2, 0.1, 0.0: -0.2 < -0.06
    ([2.1, 2.1, 2.2, 2.3, 2.4], WIDENING),      # gap 0.1 .. 0.4: +0.2 > 0.06
    ([2.5, 2.3, 2.2, 2.2, 2.18], STEADY),       # -0.02, inside the seed range 0.06
])
def test_end_gap_trend_compares_the_last_gap_with_the_middle_one(deep_curve, word):
    from depthnotes.verdicts.ch6_budget import end_gap_trend

    flat = [2.0] * 5
    shallow = [[v - 0.03 for v in flat], flat, [v + 0.03 for v in flat]]   # range 0.06
    deep = [[v - 0.01 for v in deep_curve], deep_curve, [v + 0.01 for v in deep_curve]]
    rec = _record({("shallow", 1): shallow, ("deep", 4): deep},
                  {"shallow": [c[-1] for c in shallow], "deep": [c[-1] for c in deep]})
    b = basins_from_record(rec)[1000]
    t = end_gap_trend(rec, b)
    assert t.steps == (1, 2, 3, 4, 5) and t.middle == 2
    assert t.gaps == pytest.approx([d - 2.0 for d in deep_curve])
    assert t.margin == pytest.approx(0.06) and t.word == word


def test_gap_trend_needs_more_than_the_margin():
    from depthnotes.verdicts.ch6_budget import gap_trend

    assert gap_trend(-0.0625, 0.0625) == STEADY == gap_trend(0.0625, 0.0625)   # on the margin
    assert gap_trend(-0.07, 0.0625) == CLOSING and gap_trend(0.07, 0.0625) == WIDENING
    with pytest.raises(ValueError, match="margin"):
        gap_trend(0.1, -1.0)
