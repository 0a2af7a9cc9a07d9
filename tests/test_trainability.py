"""Chapter 4's rule for where post-norm stops training (depthnotes.verdicts.ch4_trainability)."""

import math

import numpy as np
import pytest

from depthnotes.verdicts.ch4_trainability import (COMPARED, DIVERGED, FAILS_SHALLOW,
                                                  FLAT_SLOPE, LOSS_MARGIN, MIXED,
                                                  NEVER_STOPS, NO_CONTROL, SLOW, SLOWER,
                                                  STALLED, STOPS, TRAINED, TRAINS,
                                                  TRAINS_DEEP, UNBRACKETED, depth_outcomes,
                                                  depths_by_outcome, failure_depth,
                                                  failure_verdict, late_slope, loss_ceiling,
                                                  run_status, seed_curves, stopped_runs,
                                                  time_to_train)
from depthnotes.verdicts.evidence import (CONTRADICTED, IN_PART, NOT_SHOWN, NOT_TESTABLE,
                                          REPRODUCED, ArmSeeds)

BASE, MARGIN = 3.25, 0.25          # trained means eval loss < 3.0 (UNIGRAM_MARGIN)
STEPS = 300
VOCAB = 65
CEILING = math.log(VOCAB)          # what a diverged run counts as (ln V, about 4.17)


class FakeRecord:
    """The parts of a ``records.Record`` the rule reads: arms with info, finals and curves
    per seed."""

    def __init__(self, table, seeds=(0, 1, 2)):
        # table: {(family, L) or (family, L, lr): [run per seed]}; lr 1e-3 when not given.
        # A run is "div" (diverged), a final eval loss (flat curve), or (final eval loss,
        # slope in nats per 100 steps): its train and eval curves are the line through the
        # final loss with that slope, so late_slope reads the slope back.
        self.seeds = list(seeds)
        keys = [k if len(k) == 3 else (*k, 1e-3) for k in table]
        self.arms = [f"{fam}, L={L}, lr={lr:g}" for fam, L, lr in keys]
        self._info = {a: {"family": fam, "n_layer": L, "lr": lr}
                      for a, (fam, L, lr) in zip(self.arms, keys)}
        self._runs = {a: [self._run(v) for v in vals]
                      for a, vals in zip(self.arms, table.values())}

    @staticmethod
    def _run(v):
        if v == "div":
            return {"final": {"eval_loss": None, "diverged": True, "initial_loss": 4.5},
                    "curves": {"train_loss": [4.5, None], "eval_steps": [], "eval_loss": []}}
        final, slope = v if isinstance(v, tuple) else (v, 0.0)
        line = [final + slope / 100 * (s - STEPS) for s in range(1, STEPS + 1)]
        return {"final": {"eval_loss": final, "diverged": False, "initial_loss": 4.5},
                "curves": {"train_loss": line, "eval_steps": list(range(50, STEPS + 1, 50)),
                           "eval_loss": line[49::50]}}

    def arm(self, name):
        return {"name": name, "info": self._info[name], "model": {"vocab_size": VOCAB}}

    def run(self, arm, seed):
        return self._runs[arm][self.seeds.index(seed)]

    def curve(self, arm, key, seed):
        curves = self.run(arm, seed)["curves"]
        if key == "eval_loss":
            return curves["eval_steps"], curves["eval_loss"]
        return list(range(1, len(curves[key]) + 1)), curves[key]


def table(post, pre, *alts):
    rows = {}
    for fam, by_depth in (("post", post), ("pre", pre)) + tuple(
            (f"alt{i}", a) for i, a in enumerate(alts)):
        for L, vals in by_depth.items():
            rows[(fam, L)] = vals
    return rows


#: A three-rate grid; ``bracketed`` puts each arm's given runs at the middle rate.
GRID = (3e-4, 1e-3, 3e-3)
WORSE = 0.3                        # how much worse the edge rates of ``bracketed`` end


def _worse(v, by=WORSE):
    if v == "div":
        return v
    final, slope = v if isinstance(v, tuple) else (v, 0.0)
    return (final + by, slope)


def bracketed(post, pre, *alts):
    """``table`` on the three-rate grid ``GRID``: the given runs at the middle rate, and
    every run ``WORSE`` higher at the two edge rates, so each family's best rate is bracketed."""
    rows = {}
    for (fam, L), vals in table(post, pre, *alts).items():
        rows[(fam, L, GRID[1])] = vals
        for lr in (GRID[0], GRID[2]):
            rows[(fam, L, lr)] = [_worse(v) for v in vals]
    return rows


OK, BAD = [2.4, 2.5, 2.45], [3.24, 3.25, 3.23]
SLOWING = [(3.1, -0.3), (3.05, -0.2), (3.2, -0.4)]      # above the line, still falling
ALL = (6, 12, 24, 48)


def test_late_slope_reads_the_last_third_in_nats_per_100_steps():
    steps = list(range(1, 301))
    losses = [4.0 if s <= 200 else 3.0 - 0.002 * (s - 200) for s in steps]
    assert late_slope(steps, losses) == pytest.approx(-0.2)           # the early drop ignored
    assert late_slope(steps, [1.0 if s < 250 else math.nan for s in steps]) == \
        pytest.approx(0.0)                                           # NaN left out
    with pytest.raises(ValueError, match="a slope needs two"):
        late_slope([1, 2, 3], [1.0, 2.0, None])
    with pytest.raises(ValueError, match="one length"):
        late_slope([1, 2], [1.0])


def test_time_to_train_is_the_first_evaluation_below_the_line():
    assert time_to_train([50, 100, 150], [3.2, 2.99, 2.5], BASE, MARGIN) == 100
    assert time_to_train([50, 100], [3.0, None], BASE, MARGIN) is None   # not strictly below


def test_run_status_uses_the_margin_and_the_late_slope():
    assert run_status(2.99, False, None, BASE, MARGIN) == TRAINED
    assert run_status(3.0, False, 0.0, BASE, MARGIN) == STALLED      # not strictly below
    assert run_status(3.6, False, 0.3, BASE, MARGIN) == STALLED      # rising: not training
    assert run_status(3.1, False, -FLAT_SLOPE, BASE, MARGIN) == SLOW   # falls by the bound
    assert run_status(3.1, False, -0.04, BASE, MARGIN) == STALLED
    assert run_status(3.1, False, -0.06, BASE, MARGIN) == SLOW
    assert run_status(3.1, False, -0.06, BASE, MARGIN, flat=0.1) == STALLED
    assert run_status(None, True, None, BASE, MARGIN) == DIVERGED
    with pytest.raises(ValueError, match="eval_loss must be a finite number"):
        run_status(None, False, 0.0, BASE, MARGIN)
    with pytest.raises(ValueError, match="slope must be a finite number"):
        run_status(3.1, False, None, BASE, MARGIN)
    with pytest.raises(ValueError, match="margin"):
        run_status(2.0, False, None, BASE, -0.1)


def test_outcomes_failure_depth_and_description():
    rec = FakeRecord(table({6: OK, 12: [2.5, 3.2, "div"], 24: BAD, 48: [3.2, "div", "div"]},
                           {6: OK, 12: SLOWING, 24: OK, 48: [2.5, 2.6, (3.1, -0.2)]},
                           dict.fromkeys(ALL, OK)))
    out = depth_outcomes(rec, BASE, MARGIN)
    assert list(out) == ["post", "pre", "alt0"]
    post, pre = out["post"], out["pre"]
    assert [r.n_layer for r in post] == [6, 12, 24, 48]
    assert [r.outcome for r in post] == [TRAINS, MIXED, STOPS, STOPS]
    assert [r.outcome for r in pre] == [TRAINS, SLOWER, TRAINS, SLOWER]
    assert post[1].statuses == (TRAINED, STALLED, DIVERGED)
    assert post[1].losses == (2.5, 3.2, CEILING)          # a diverged run: the ceiling ln V
    assert isinstance(post[1].seeds, ArmSeeds) and post[1].seeds.diverged == (2,)
    assert post[1].seeds.ceiling == pytest.approx(CEILING)
    assert post[3].seeds.diverged == (1, 2) and post[3].losses[1:] == (CEILING, CEILING)
    assert post[1].times == (50, None, None) and post[1].slopes[2] is None
    assert pre[1].statuses == (SLOW,) * 3 and pre[1].slopes[0] == pytest.approx(-0.3)
    assert failure_depth(post) == 24 and failure_depth(pre) is None
    assert depths_by_outcome(post) == {TRAINS: (6,), SLOWER: (), MIXED: (12,),
                                       STOPS: (24, 48)}
    assert stopped_runs(post) == (8, 3)                   # 3 of 8 stopped runs diverged
    assert depths_by_outcome(pre) == {TRAINS: (6, 24), SLOWER: (12, 48), MIXED: (),
                                      STOPS: ()}
    assert stopped_runs(pre) == (0, 0)


def test_time_to_train_comes_from_the_eval_curve():
    # a run that crosses 3.0 at step 200 of a falling line: 3.0 - 0.5 * (s - 200) / 100
    rec = FakeRecord({("post", 6): [(2.5, -0.5)] * 3})
    (row,) = depth_outcomes(rec, BASE, MARGIN)["post"]
    assert row.times == (250,) * 3 and row.outcome == TRAINS   # first eval below 3.0


def test_each_family_is_scored_at_its_best_rate():
    rows = {("post", 6): OK, ("post", 12): BAD, ("post", 12, 3e-4): [2.6, 3.1, 2.9],
            ("pre", 6): OK, ("pre", 12): [2.5, 2.6, "div"], ("pre", 12, 3e-4): OK}
    out = depth_outcomes(FakeRecord(rows), BASE, MARGIN)
    post12, pre12 = out["post"][1], out["pre"][1]
    assert (post12.lr, post12.losses, post12.outcome) == (3e-4, (2.6, 3.1, 2.9), MIXED)
    assert [lr for lr, _ in post12.rates] == [3e-4, 1e-3]
    assert post12.rates[0][1] == pytest.approx((2.6 + 3.1 + 2.9) / 3)
    # the diverged seed counts as the ceiling ln V: lr 1e-3 has mean 3.09 > 2.45
    assert (pre12.lr, pre12.outcome) == (3e-4, TRAINS)
    assert pre12.rates[1][1] == pytest.approx((2.5 + 2.6 + CEILING) / 3)
    assert out["post"][0].rates == ((1e-3, pytest.approx(2.45)),)      # one rate tried
    assert [r.n_layer for r in out["post"]] == [6, 12]
    # the pick: each best rate is the lower edge of a two-rate grid, so neither brackets it
    for row in (post12, pre12):
        assert row.pick.rates == (3e-4, 1e-3) and row.pick.best == 3e-4 and not row.pick.bracketed
    assert post12.pick.at_edge == "low"     # the other rate is clearly worse
    assert pre12.pick.at_edge == "both"     # the other rate is within noise: both edges tie
    # post-norm's other rate is clearly worse: the edge pick is not judgeable
    assert post12.pick.tied == (3e-4,) and not post12.pick.flat and not post12.pick.judgeable
    # pre-norm's other rate overlaps it (2.5 against 2.5, and a spread the diverged seed
    # makes): within noise of the best; two tied rates do not make a flat grid (no third rate
    # says so), so both edges tie and the pick is not judgeable
    assert pre12.pick.tied == (3e-4, 1e-3) and not pre12.pick.flat
    assert pre12.pick.at_edge == "both" and not pre12.pick.judgeable
    one = out["post"][0].pick                                          # one rate: never
    assert (one.rates, one.at_edge, one.bracketed, one.judgeable) == ((1e-3,), "only", False,
                                                                      False)


def test_best_rate_is_the_bracketed_middle_or_a_flat_grid():
    rows = bracketed({6: OK}, {6: [2.5, 2.6, "div"]})
    out = depth_outcomes(FakeRecord(rows), BASE, MARGIN)
    for row in (out["post"][0], out["pre"][0]):
        assert row.lr == GRID[1] and row.pick.best == GRID[1] and row.pick.judgeable
    assert out["post"][0].pick.bracketed and out["post"][0].pick.at_edge is None
    # pre-norm's diverged seed widens its spread until every rate ties with the best: the
    # grid is flat (judgeable), but not bracketed, since an edge rate is within noise of it
    assert out["pre"][0].pick.flat and out["pre"][0].pick.at_edge == "both"
    for row in (out["post"][0], out["pre"][0]):
        assert [lr for lr, _ in row.rates][0] == GRID[1]
    assert out["post"][0].losses == tuple(OK)
    assert out["pre"][0].losses == (2.5, 2.6, CEILING)
    # every rate the same: a flat grid, judgeable though its "best" is the lowest rate
    flat = {("post", 6, lr): OK for lr in GRID}
    (row,) = depth_outcomes(FakeRecord(flat), BASE, MARGIN)["post"]
    assert row.pick.flat and row.pick.tied == GRID and row.pick.judgeable
    assert row.pick.at_edge == "both" and not row.pick.bracketed
    # best at the high edge
    edge = {("post", 6, GRID[0]): BAD, ("post", 6, GRID[1]): [2.8, 2.85, 2.9],
            ("post", 6, GRID[2]): OK}
    (row,) = depth_outcomes(FakeRecord(edge), BASE, MARGIN)["post"]
    assert row.lr == GRID[2] and row.pick.at_edge == "high" and not row.pick.judgeable
    with pytest.raises(ValueError, match="two arms at one rate"):
        rec = FakeRecord({("post", 6, 1e-3): OK, ("post", 6, 3e-3): OK})
        for a in rec.arms:                       # both arms at one rate
            rec._info[a]["lr"] = 1e-3
        depth_outcomes(rec, BASE, MARGIN)


def test_loss_ceiling_is_the_uniform_loss():
    rec = FakeRecord({("post", 6): OK})
    assert loss_ceiling(rec, rec.arms[0]) == pytest.approx(math.log(VOCAB))


def verdict_of(rows, alternatives=("alt0",), **kw):
    return failure_verdict(depth_outcomes(FakeRecord(rows), BASE, MARGIN), "post", "pre",
                           alternatives, **kw)


def test_verdict_reproduced_only_past_a_few_dozen_layers():
    good = dict.fromkeys(ALL, OK)
    v = verdict_of(bracketed({6: OK, 12: OK, 24: BAD, 48: BAD}, good,
                             {6: OK, 12: OK, 24: BAD, 48: BAD}))
    assert (v.word, v.basis, v.depth, v.not_stopped, v.short) == (REPRODUCED, COMPARED, 24,
                                                                   {}, False)
    assert v.by_outcome[TRAINS] == (6, 12) and v.by_outcome[STOPS] == (24, 48)
    # post-norm trains at none of its three rates there: only the reference's pick is read
    assert v.reference_outcome == TRAINS and set(v.picks) == {"pre"}
    assert v.comparison.best == "pre" and v.comparison.clear
    assert v.comparison.between("post", "pre").gap == pytest.approx(3.24 - 2.45)
    assert v.comparison.margin == LOSS_MARGIN
    v = verdict_of(bracketed({6: OK, 12: BAD, 24: BAD}, good, {6: OK, 12: BAD, 24: BAD}))
    assert (v.word, v.depth) == (IN_PART, 12)
    # fails already at L = 12, short of a few dozen layers (L >= 24)
    assert (v.short, v.few_dozen, v.not_stopped) == (True, 24, {})
    v = verdict_of(bracketed({6: OK, 12: BAD}, good, {6: OK, 12: BAD}), few_dozen=12)
    assert (v.word, v.short, v.not_stopped) == (REPRODUCED, False, {})


def test_verdict_caveat_names_every_post_norm_alternative_that_does_not_stop():
    good = dict.fromkeys(ALL, OK)
    rows = bracketed({6: OK, 24: BAD}, good, {6: OK, 24: BAD}, {6: OK, 24: SLOWING},
                     {6: OK, 24: [2.5, 3.2, 3.2]})
    v = verdict_of(rows, alternatives=("alt0", "alt1", "alt2"))
    assert v.word == IN_PART
    # alt1 slower at L = 24, alt2 mixed there; alt0 stops, so it is not named
    assert v.not_stopped == {"alt1": SLOWER, "alt2": MIXED} and not v.short
    assert (v.basis, v.depth) == (COMPARED, 24)


def test_verdict_when_the_rule_fails():
    v = verdict_of(bracketed({6: BAD, 24: BAD}, {6: OK, 24: OK}, {6: OK, 24: OK}))
    assert v.word == NOT_SHOWN and v.basis == FAILS_SHALLOW          # fails even shallow
    assert v.by_outcome[TRAINS] == () and v.by_outcome[STOPS] == (6, 24)
    assert v.comparison is None
    v = verdict_of(bracketed({6: OK, 24: SLOWING}, {6: OK, 24: OK}, {6: OK, 24: OK}))
    assert v.word == NOT_SHOWN and v.depth is None                   # slower is not "stops"
    assert v.basis == NEVER_STOPS and v.by_outcome[SLOWER] == (24,)
    assert v.by_outcome[TRAINS] == (6,) and v.by_outcome[STOPS] == ()
    v = verdict_of(bracketed({6: OK, 24: BAD}, {6: OK, 24: BAD}, {6: OK, 24: OK}))
    assert v.word == NOT_TESTABLE and v.basis == NO_CONTROL          # the reference stops too
    assert v.depth == 24 and v.reference_outcome == STOPS
    # a gap under the practical margin is no finding, however tight and apart the seeds
    v = verdict_of(bracketed({6: OK, 24: [3.0, 3.0, 3.01]}, {6: OK, 24: [2.99, 2.99, 2.99]},
                             {6: OK, 24: BAD}))
    assert v.depth == 24 and not v.comparison.clear and v.word == NOT_SHOWN
    assert v.comparison.between("post", "pre").gap < LOSS_MARGIN
    assert not v.comparison.between("post", "pre").overlap          # separated, but small
    with pytest.raises(KeyError, match="no family 'nope'"):
        verdict_of(bracketed({6: OK}, {6: OK}), alternatives=("nope",))
    with pytest.raises(KeyError, match="not trained at L = 24"):
        verdict_of(bracketed({6: OK, 24: BAD}, {6: OK, 24: OK}, {6: OK}))


def test_verdict_separated_arms_are_clear_though_a_seed_range_exceeds_the_gap():
    """The old rule (gap of means > the larger min-max range) called this within noise: a gap
    of 0.16 against a range of 0.3. The arms do not overlap, so the new rule calls it clear."""
    close = [2.95, 2.99, 2.97]                                       # trains
    v = verdict_of(bracketed({6: OK, 24: [3.0, 3.3, 3.1]}, {6: OK, 24: close},
                             {6: OK, 24: BAD}))
    d = v.comparison.between("post", "pre")
    assert d.gap == pytest.approx(9.4 / 3 - 2.97) and d.gap < v.comparison.arm("post").spread
    assert not d.overlap and d.clear and v.comparison.best == "pre"
    assert (v.word, v.not_stopped, v.short) == (REPRODUCED, {}, False)


def test_verdict_a_diverged_seed_counts_as_the_ceiling_and_does_not_veto():
    # post-norm stops at 24 with one seed diverged: that seed counts as ln V, far out in
    # the claimed direction; it strengthens the case instead of widening a range that vetoes
    v = verdict_of(bracketed({6: OK, 24: [3.24, "div", 3.23]}, {6: OK, 24: OK},
                             {6: OK, 24: BAD}))
    arm = v.comparison.arm("post")
    assert arm.diverged == (1,) and arm.values[1] == pytest.approx(CEILING)
    assert v.comparison.clear and v.word == REPRODUCED


def test_verdict_not_testable_when_a_best_rate_is_not_bracketed():
    # one rate per family: nothing says the reference's rate is not simply a bad one
    v = verdict_of(table({6: OK, 24: BAD}, {6: OK, 24: OK}, {6: OK, 24: BAD}))
    assert v.word == NOT_TESTABLE and v.depth == 24 and v.comparison.clear
    assert v.basis == UNBRACKETED
    assert [len(v.picks[f].rates) for f in ("post", "pre")] == [1, 1]   # one rate each
    assert not any(p.judgeable for p in v.picks.values())            # does not bracket
    # the claimed family best at the top edge of its grid, but training at none of its three
    # rates, which reach past its best shallow rate on both sides: no rate tried rescues it,
    # so the stop is judged (the rule since 2026-12-03)
    rows = bracketed({6: OK, 24: BAD}, {6: OK, 24: OK}, {6: OK, 24: BAD})
    rows[("post", 24, GRID[2])] = [3.1, 3.1, 3.1]                   # stalls, but less badly
    v = verdict_of(rows)
    assert v.word == REPRODUCED and v.depth == 24
    # ...not when its best shallow rate is the grid's top: a higher rate might train deep too
    rows[("post", 6, GRID[2])] = [2.2, 2.25, 2.3]
    v = verdict_of(rows)
    assert v.word == NOT_TESTABLE and v.basis == UNBRACKETED
    assert len(v.picks["post"].rates) == 3 and v.picks["post"].at_edge == "high"
    assert not v.picks["post"].judgeable
    # a rate at which the claimed family trains at 24 blocks (a few dozen) refutes "stops"
    rows = bracketed({6: OK, 24: BAD}, {6: OK, 24: OK}, {6: OK, 24: BAD})
    rows[("post", 24, GRID[1])] = [2.8, 2.82, 2.81]                 # the middle rate trains
    v = verdict_of(rows)
    assert v.depth is None and v.word == CONTRADICTED and v.basis == TRAINS_DEEP
    assert v.trains_deep == (24,)
    # ...but training at 12 blocks only is short of a few dozen: not a refutation
    rows = bracketed({6: OK, 12: OK, 24: BAD}, {6: OK, 12: OK, 24: OK},
                     {6: OK, 12: OK, 24: BAD})
    assert verdict_of(rows).word == REPRODUCED


def test_on_the_quick_record():
    """The rule reads the record ``postnorm_failure_depth`` writes (its quick version)."""
    from depthnotes.experiments.ch4 import (FAILURE_FAMILIES, FAILURE_GRID_FAMILIES,
                                            FAILURE_LR_GRID)
    from depthnotes.experiments.registry import get_experiment
    from depthnotes.experiments.records import Record, run_experiment

    rec = Record.from_dict(run_experiment(get_experiment("postnorm_failure_depth", True),
                                          workers=1))
    out = depth_outcomes(rec, baseline=10.0, margin=0.5)     # 4 steps: every run "trains"
    assert list(out) == [f[0] for f in FAILURE_FAMILIES]
    assert all(r.outcome == TRAINS and len(r.statuses) == 3 for rows in out.values()
               for r in rows)
    assert all(t == 2 for rows in out.values() for r in rows for t in r.times)  # 1st eval
    grid = {f: [len(r.rates) for r in rows] for f, rows in out.items()}
    assert grid == {f[0]: [1, 1 + len(FAILURE_LR_GRID) * (f[0] in FAILURE_GRID_FAMILIES)]
                    for f in FAILURE_FAMILIES}     # the grid at the deepest quick depth
    high = depth_outcomes(rec, baseline=1.0, margin=0.5)     # nothing gets below 0.5
    assert all(s in (SLOW, STALLED) for rows in high.values() for r in rows
               for s in r.statuses)
    steps, curves = seed_curves(rec, rec.arms[0])
    assert len(curves) == 3 and all(math.isfinite(v) for c in curves for v in c)
    assert steps[0][-1] == rec.arm(rec.arms[0])["recipe"]["steps"]


def test_c7_word_is_about_tenfold_strictly_inside_the_band():
    from depthnotes.verdicts.ch4_trainability import C7_BAND, final_variance_word

    assert C7_BAND == (5, 20)
    assert final_variance_word(12.3) == REPRODUCED
    assert final_variance_word(5.0) == final_variance_word(20.0) == NOT_SHOWN   # open band
    assert final_variance_word(3.0) == final_variance_word(40.0) == NOT_SHOWN
    assert final_variance_word(3.0, band=(2, 4)) == REPRODUCED
    with pytest.raises(ValueError, match="ratio"):
        final_variance_word(math.nan)


def test_c8a_word_needs_a_spread_above_the_limit():
    from depthnotes.verdicts.ch4_trainability import SPREAD_LIMIT, gradient_spread_word

    assert SPREAD_LIMIT == 100
    assert gradient_spread_word(7.0) == NOT_SHOWN
    assert gradient_spread_word(100.0) == NOT_SHOWN                  # more than the limit
    assert gradient_spread_word(130.0) == REPRODUCED
    assert gradient_spread_word(7.0, limit=5) == REPRODUCED
    with pytest.raises(ValueError, match="spread"):
        gradient_spread_word(0.5)                  # largest over smallest is at least 1


def test_c6_half_slope_ratio_reads_the_bend_of_one_profile():
    from depthnotes.verdicts.ch4_trainability import half_slope_ratio

    x = np.arange(101, dtype=float)
    assert half_slope_ratio(1.0 + 0.5 * x) == pytest.approx(1.0)          # a straight line
    bent = np.where(x <= 50, x, 50 + 2 * (x - 50))                       # twice as steep later
    assert half_slope_ratio(bent) == pytest.approx(2.0)
    assert half_slope_ratio(np.sqrt(x)) < 1                              # sub-linear
    with pytest.raises(ValueError, match="profile"):
        half_slope_ratio([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="profile"):
        half_slope_ratio(np.ones((2, 10)))


def test_c6_word_from_the_bands():
    from depthnotes.verdicts.ch4_trainability import (LINEAR, LINEAR_TOL, NOT_LINEAR,
                                                      SUB_LINEAR, SUPER_LINEAR, SUPER_MAX,
                                                      variance_growth_word)

    assert (LINEAR_TOL, SUPER_MAX) == (1.2, 2.0)
    assert variance_growth_word([1.0, 1.1, 0.9]) == (LINEAR, REPRODUCED)
    assert variance_growth_word([1 / 1.2, 1.2, 1.0]) == (LINEAR, REPRODUCED)   # closed band
    assert variance_growth_word([1.3, 1.9, 1.1]) == (SUPER_LINEAR, IN_PART)
    # a bend of the same size downward is as far from linear: the chapter's own case
    assert variance_growth_word([0.77, 0.98, 0.9]) == (SUB_LINEAR, IN_PART)
    assert variance_growth_word([0.5, 1.5, 0.6]) == (SUB_LINEAR, IN_PART)     # mean below 1
    assert variance_growth_word([0.4, 1.0, 1.0]) == (NOT_LINEAR, NOT_SHOWN)
    assert variance_growth_word([2.1, 1.0, 1.0]) == (NOT_LINEAR, NOT_SHOWN)
    # the first version of the rule: a bent branch for upward bends only
    assert variance_growth_word([0.77, 0.98, 0.9], low=1 / 1.2) == (NOT_LINEAR, NOT_SHOWN)
    assert variance_growth_word([1.3, 1.9, 1.1], low=1 / 1.2) == (SUPER_LINEAR, IN_PART)
    with pytest.raises(ValueError, match="ratio"):
        variance_growth_word([1.0, math.nan, 1.0])
    with pytest.raises(ValueError, match="none"):
        variance_growth_word([])
