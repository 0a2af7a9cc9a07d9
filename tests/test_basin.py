"""The basin rule of chapter 6 (claim C14): depthnotes.verdicts.ch6_budget.judge_basin and friends."""

import random

import pytest

from depthnotes.verdicts.ch6_budget import (BASIN_FLOOR, CLOSING, STEADY, WIDENING,
                                            basin_claim_word, basins_from_record,
                                            judge_basin)
from depthnotes.experiments.records import Record
from depthnotes.verdicts.evidence import (CANNOT_TELL, CONTRADICTED, IN_PART, NOT_SHOWN,
                                          NOT_TESTABLE, REPRODUCED, UNBRACKETED, best_rate,
                                          compare_many)


def shapes(means, spread=0.01, depths=(1, 2, 4, 8, 16)):
    """(label, L, d, three seeds' losses) per depth: mean m, min-max range ``spread``."""
    return [(f"L={L}", L, 64 // L or 1, [m - spread / 2, m, m + spread / 2])
            for L, m in zip(depths, means)]


KAPLAN = shapes([1.70, 1.52, 1.50, 1.51, 1.66])        # bad ends, flat middle
LAPTOP = shapes([1.475, 1.46, 1.53, 1.61, 1.73])        # the calibration: shallow end fine


def test_both_ends_worse_and_a_broad_middle_is_the_claims_shape():
    b = judge_basin(200_000, KAPLAN)
    assert b.width == pytest.approx(BASIN_FLOOR * 1.50)    # the margin: floor x best mean
    assert [s.n_layer for s in b.inside] == [2, 4, 8] and b.best.n_layer == 4
    assert b.shallow_worse and b.deep_worse and b.broad and b.claim_shape
    assert b.testable == (True, None) and b.word == REPRODUCED
    assert basin_claim_word({200_000: b}) == REPRODUCED
    assert b.band == pytest.approx((1.50, 1.53)) and b.aspect_span == (1.0, 16.0)   # d = 32, 16, 8


def test_the_calibration_shape_is_not_the_claim():
    b = judge_basin(200_000, LAPTOP)
    assert not b.shallow_worse and b.deep_worse and not b.claim_shape
    assert [s.n_layer for s in b.inside] == [1, 2]
    assert b.word == NOT_SHOWN and basin_claim_word([b]) == NOT_SHOWN
    assert b.shallow.n_layer == 1 and b.shallow.inside and not b.shallow_worse
    assert b.deep.n_layer == 16 and not b.deep.inside and b.deep_worse
    # one budget has the claim's shape, one does not: in part
    assert basin_claim_word([b, judge_basin(50_000, KAPLAN)]) == IN_PART


def test_a_flat_budget_contradicts_the_claim():
    b = judge_basin(1000, shapes([1.50, 1.51, 1.50, 1.505, 1.51]))   # all within 0.03
    assert len(b.inside) == 5 and not (b.shallow_worse or b.deep_worse) and b.broad
    assert b.word == CONTRADICTED and basin_claim_word([b]) == CONTRADICTED
    assert basin_claim_word([b, judge_basin(1, KAPLAN)]) == IN_PART
    narrow = judge_basin(1000, shapes([1.50, 1.51], depths=(1, 2)))   # flat, but 2 shapes
    assert not narrow.broad and narrow.word == NOT_SHOWN


def test_one_noisy_shape_no_longer_widens_the_band():
    """The old rule widened the band to the largest seed range (0.12 here), so a deep end
    0.11 above the best was in the basin. Now the margin is the floor alone and an end is
    worse when it is separated from the best (no overlap, or > 3 Welch standard errors)."""
    noisy = shapes([1.70, 1.52, 1.50, 1.51, 1.66], spread=0.01)
    noisy[3] = ("L=8", 8, 8, [1.45, 1.51, 1.57])      # range 0.12, mean 1.51
    b = judge_basin(1000, noisy)
    assert b.width == pytest.approx(BASIN_FLOOR * 1.50)
    assert b.shallow_worse and b.deep_worse          # 0.20 and 0.16 above: still outside
    assert b.shapes[3].inside                        # the noisy shape itself: gap 0.01
    noisier = noisy[:-1] + [("L=16", 16, 4, [1.55, 1.61, 1.67])]   # gap 0.11, no overlap
    assert judge_basin(1000, noisier).deep_worse
    # the same gap with a seed that reaches the best shape's seeds: within noise
    overlapping = noisy[:-1] + [("L=16", 16, 4, [1.40, 1.61, 1.82])]
    b = judge_basin(1000, overlapping)
    assert b.deep.gap == pytest.approx(0.11) and not b.deep_worse


def test_a_gap_equal_to_the_band_is_inside():
    # binary fractions, so the gap equals the band exactly
    b = judge_basin(1000, shapes([1.0, 1.03125, 1.5], spread=0.0, depths=(1, 2, 4)),
                    floor=0.03125)
    assert b.width == 0.03125 and b.shapes[1].gap == 0.03125
    assert [s.inside for s in b.shapes] == [True, True, False]


def test_a_shape_outside_the_basin_is_exactly_a_clear_difference_by_the_evidence_rule():
    """One rule: a shape is worse exactly when the evidence library calls it clearly worse
    than the best shape with the margin floor x the best mean."""
    rng = random.Random(0)
    outside = 0
    for _ in range(200):
        data = [(f"L={L}", L, 8, [rng.uniform(1.4, 1.8) for _ in range(3)])
                for L in (1, 2, 4, 8)]
        b = judge_basin(1000, data)
        cmp = compare_many({s[0]: s[3] for s in data}, margin=BASIN_FLOOR * b.best.summary.mean)
        assert b.width == pytest.approx(cmp.margin)
        for s in b.shapes:
            if s is b.best:
                assert s.inside and s.gap == 0
                continue
            d = cmp.between(s.label, b.best.label)
            assert s.inside == (not d.clear) and s.gap == pytest.approx(d.gap)
            outside += not s.inside
    assert outside > 0                               # the case is exercised


def test_shapes_are_ordered_by_depth_whatever_the_input_order():
    b = judge_basin(1000, list(reversed(KAPLAN)))
    assert [s.n_layer for s in b.shapes] == [1, 2, 4, 8, 16]
    assert b.shallow.n_layer == 1 and b.deep.n_layer == 16


@pytest.mark.parametrize("data, match", [
    (shapes([1.5, 1.6])[:1], "at least 2 shapes"),
    ([("a", 1, 8, [1.0, 1.1]), ("b", 2, 8, [1.0, 1.1])], "at least 3 per arm"),
    ([("a", 2, 8, [1.0, 1.1, 1.2]), ("b", 2, 8, [1.0, 1.1, 1.2])], "one shape per depth"),
])
def test_bad_input_is_refused_with_a_clear_error(data, match):
    with pytest.raises(ValueError, match=match):
        judge_basin(1000, data)


def test_a_diverged_seed_counts_as_the_stated_ceiling():
    """None (or NaN, which the evidence library reads as a divergence) is a seed that
    diverged: it counts as the ceiling (the loss of a model that learned nothing, ln V) and
    ranks below every trained seed; without a ceiling the judge refuses to guess one."""
    for gone in (None, float("nan")):
        b = judge_basin(1000, [("a", 1, 8, [1.0, 1.1, gone]), ("b", 2, 8, [1.0, 1.1, 1.2]),
                               ("c", 4, 8, [1.3, 1.35, 1.4])], ceiling=4.17)
        a = b.shapes[0].summary
        assert a.diverged == (2,) and a.values[2] == 4.17 and a.ceiling == 4.17
        assert b.best.label == "b"          # the diverged seed ranks a below b by the mean,
        assert b.shapes[0].inside           # but one seed of three is within noise
        with pytest.raises(ValueError, match="ceiling"):
            judge_basin(1000, [("a", 1, 8, [1.0, 1.1, gone]), ("b", 2, 8, [1.0, 1.1, 1.2])])


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
    assert all(s.pick is None for b in basins.values() for s in b.shapes)   # one rate each
    assert [b.word for b in basins.values()] == [REPRODUCED, NOT_SHOWN]
    assert basin_claim_word(basins) == IN_PART


def test_a_budget_is_not_testable_while_a_best_rate_sits_at_an_edge():
    at_edge = best_rate({1e-3: [1.70, 1.71, 1.72], 2e-3: [1.80, 1.81, 1.82]})
    inside = best_rate({1e-3: [1.8, 1.81, 1.82], 2e-3: [1.7, 1.71, 1.72],
                        4e-3: [1.9, 1.91, 1.92]})
    flat = best_rate({1e-3: [1.7, 1.71, 1.72], 2e-3: [1.7, 1.71, 1.72],
                      4e-3: [1.71, 1.7, 1.72]})
    assert not at_edge.judgeable and inside.bracketed and flat.flat
    b = judge_basin(1000, KAPLAN, picks={"L=1": inside, "L=16": flat})
    assert b.testable == (True, None) and b.word == REPRODUCED
    assert b.shapes[0].pick is inside and b.shapes[2].pick is None
    b = judge_basin(1000, KAPLAN, picks={"L=1": inside, "L=4": at_edge})
    ok, why = b.testable
    assert not ok and why.kind == UNBRACKETED and why.picks == (at_edge,)   # L=4's pick only
    assert why.picks[0].at_edge == "low"
    assert b.claim_shape and b.word == NOT_TESTABLE      # the shape holds, but untested
    assert basin_claim_word([b]) == NOT_TESTABLE
    assert basin_claim_word([b, judge_basin(1, KAPLAN)]) == IN_PART


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


def test_the_floor_is_the_margin_and_a_what_if_with_the_same_judge():
    noisy = shapes([1.70, 1.52, 1.50, 1.51, 1.66], spread=0.01)
    noisy[3] = ("L=8", 8, 8, [1.45, 1.51, 1.57])      # range 0.12: no longer the band
    assert [s.n_layer for s in judge_basin(1000, noisy).inside] == [2, 4, 8]
    # no margin: L = 2 (0.02 above, seeds apart) is worse; L = 8 (overlapping) is not
    strict = judge_basin(1000, noisy, floor=0.0)
    assert strict.width == 0.0 and [s.n_layer for s in strict.inside] == [4, 8]
    loose = judge_basin(1000, noisy, floor=0.12)     # 0.18 nats: L = 16 (0.16) comes in
    assert loose.width == pytest.approx(0.18)
    assert [s.n_layer for s in loose.inside] == [2, 4, 8, 16]
    assert loose.shallow_worse and not loose.deep_worse


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


@pytest.mark.parametrize("deep_curve, late, word", [
    ([2.5, 2.3, 2.2, 2.1, 2.0], (0, 0, 0), CLOSING),      # every seed falls 0.2 more
    ([2.1, 2.1, 2.2, 2.3, 2.4], (0, 0, 0), WIDENING),     # every seed rises 0.2
    # -0.02 for every seed: the old rule called it steady (inside the level range 0.06);
    # the changes themselves are compared now, and they are apart
    ([2.5, 2.3, 2.2, 2.2, 2.18], (0, 0, 0), CLOSING),
    # the seeds' changes -0.05, -0.02, +0.01 reach the shallow shape's (0): within noise
    ([2.5, 2.3, 2.2, 2.2, 2.18], (-0.03, 0.0, 0.03), STEADY),
])
def test_end_gap_trend_compares_each_seeds_change_from_the_middle_to_the_last(
        deep_curve, late, word):
    from depthnotes.verdicts.ch6_budget import end_gap_trend

    flat = [2.0] * 5
    shallow = [[v - 0.03 for v in flat], flat, [v + 0.03 for v in flat]]   # range 0.06
    deep = [[v + off for v in deep_curve[:-1]] + [deep_curve[-1] + off + extra]
            for off, extra in zip((-0.01, 0.0, 0.01), late)]
    rec = _record({("shallow", 1): shallow, ("deep", 4): deep},
                  {"shallow": [c[-1] for c in shallow], "deep": [c[-1] for c in deep]})
    b = basins_from_record(rec)[1000]
    t = end_gap_trend(rec, b)
    assert t.steps == (1, 2, 3, 4, 5) and t.middle == 2
    assert t.gaps == pytest.approx([d - 2.0 for d in deep_curve])
    assert t.change == pytest.approx(deep_curve[-1] - deep_curve[2])
    assert not hasattr(t, "margin") and t.word == word


def test_gap_trend_compares_the_seeds_changes_by_the_evidence_rule():
    from depthnotes.verdicts.ch6_budget import gap_trend

    shallow = [0.0, 0.01, -0.01]
    assert gap_trend([-0.2, -0.21, -0.19], shallow) == CLOSING
    assert gap_trend([0.2, 0.21, 0.19], shallow) == WIDENING
    assert gap_trend([-0.02, 0.0, 0.02], shallow) == STEADY           # overlapping, no gap
    assert gap_trend(shallow, shallow) == STEADY
    # one seed that crosses does not veto a change the others put far apart
    assert gap_trend([-0.2, -0.21, -0.19, -0.2, 0.02], shallow + [0.0, 0.005]) == CLOSING
    assert gap_trend([-0.2, -0.21, 0.05], shallow) == STEADY          # at 3 seeds it does
    with pytest.raises(ValueError, match="at least 3"):
        gap_trend([-0.2, -0.2], [0.0, 0.0])


def test_c14_parts_judge_each_end_and_the_middle_on_its_own():
    from depthnotes.verdicts.ch6_budget import WIDE_EXTREME, c14_parts

    # the claim's shape, but the widest shape (L = 1, d = 64: d/L 64) is far from the extreme
    parts = {o.part: o for o in c14_parts({200_000: judge_basin(200_000, KAPLAN)})}
    assert parts["thin end"].word == REPRODUCED and parts["broad middle"].word == REPRODUCED
    assert parts["wide end"].word == NOT_TESTABLE
    why = parts["wide end"].reason
    assert why.kind == CANNOT_TELL and (why.reached, why.needed) == (64, WIDE_EXTREME)
    assert parts["thin end"].reason is None
    # a wide enough shallow end is judged: worse -> reproduced; in the basin -> not shown
    wide = [(label, L, 64 * WIDE_EXTREME // 64 * (L == 1) or d, losses)
            for label, L, d, losses in KAPLAN]
    parts = {o.part: o.word for o in c14_parts({1: judge_basin(1, wide)})}
    assert parts["wide end"] == REPRODUCED
    lap = [(label, L, WIDE_EXTREME if L == 1 else d, losses) for label, L, d, losses in LAPTOP]
    parts = {o.part: o.word for o in c14_parts({1: judge_basin(1, lap)})}
    assert parts == {"thin end": REPRODUCED, "wide end": NOT_SHOWN,
                     "broad middle": NOT_SHOWN}
    # an unbracketed grid makes every part not testable at that budget
    at_edge = best_rate({1e-3: [1.70, 1.71, 1.72], 2e-3: [1.80, 1.81, 1.82]})
    b = judge_basin(1, KAPLAN, picks={"L=4": at_edge})
    assert {o.word for o in c14_parts({1: b})} == {NOT_TESTABLE}
    assert {o.reason for o in c14_parts({1: b})} == {b.testable[1]}    # the grid's, each part
    assert b.testable[1].kind == UNBRACKETED
    with pytest.raises(ValueError, match="at least one"):
        c14_parts({})
