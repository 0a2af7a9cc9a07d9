"""Chapter 4's rule for where post-norm stops training (depthnotes.trainability)."""

import math

import pytest

from depthnotes.trainability import (DIVERGED, MIXED, STALLED, STOPS, TRAINED, TRAINS,
                                     depth_outcomes, describe, failure_depth, failure_verdict,
                                     run_status, seed_curves)
from depthnotes.verdicts import NOT_REPRODUCED, REPRODUCED, WITH_CAVEATS

BASE, MARGIN = 3.25, 0.25          # trained means eval loss < 3.0


class FakeRecord:
    """The parts of a ``records.Record`` the rule reads: arms with info, finals per seed."""

    def __init__(self, table, seeds=(0, 1, 2)):
        # table: {(family, L) or (family, L, lr): [eval loss per seed, or "div" for a
        # diverged run]}; lr 1e-3 when not given
        self.seeds = list(seeds)
        keys = [k if len(k) == 3 else (*k, 1e-3) for k in table]
        self.arms = [f"{fam}, L={L}, lr={lr:g}" for fam, L, lr in keys]
        self._info = {a: {"family": fam, "n_layer": L, "lr": lr}
                      for a, (fam, L, lr) in zip(self.arms, keys)}
        self._final = {a: [
            {"eval_loss": None, "diverged": True, "initial_loss": 4.5} if v == "div"
            else {"eval_loss": v, "diverged": False, "initial_loss": 4.5} for v in vals]
            for a, vals in zip(self.arms, table.values())}

    def arm(self, name):
        return {"name": name, "info": self._info[name]}

    def run(self, arm, seed):
        return {"final": self._final[arm][self.seeds.index(seed)]}


def table(post, pre, alt):
    rows = {}
    for fam, by_depth in (("post", post), ("pre", pre), ("alt", alt)):
        for L, vals in by_depth.items():
            rows[(fam, L)] = vals
    return rows


OK, BAD = [2.4, 2.5, 2.45], [3.24, 3.25, 3.23]


def test_run_status_uses_the_margin_below_the_baseline():
    assert run_status(2.99, False, BASE, MARGIN) == TRAINED
    assert run_status(3.0, False, BASE, MARGIN) == STALLED      # not strictly below
    assert run_status(3.6, False, BASE, MARGIN) == STALLED
    assert run_status(None, True, BASE, MARGIN) == DIVERGED
    with pytest.raises(ValueError, match="eval_loss must be a finite number"):
        run_status(None, False, BASE, MARGIN)
    with pytest.raises(ValueError, match="margin"):
        run_status(2.0, False, BASE, -0.1)


def test_outcomes_failure_depth_and_description():
    rec = FakeRecord(table({6: OK, 12: [2.5, 3.2, "div"], 24: BAD, 48: [3.2, "div", "div"]},
                           {6: OK, 12: OK, 24: OK, 48: OK}, {6: OK, 12: OK, 24: OK, 48: OK}))
    out = depth_outcomes(rec, BASE, MARGIN)
    assert list(out) == ["post", "pre", "alt"]
    post = out["post"]
    assert [r.n_layer for r in post] == [6, 12, 24, 48]
    assert [r.outcome for r in post] == [TRAINS, MIXED, STOPS, STOPS]
    assert post[1].statuses == (TRAINED, STALLED, DIVERGED)
    assert post[1].losses == (2.5, 3.2, 4.5)              # a diverged run: its first loss
    assert failure_depth(post) == 24 and failure_depth(out["pre"]) is None
    assert describe(post) == ("trains at L = 6; mixed at L = 12; stops at L = 24, 48 "
                              "(3 of 8 failed runs diverged)")
    assert describe(out["pre"]) == "trains at L = 6, 12, 24, 48"


def test_each_family_is_scored_at_its_best_rate():
    rows = {("post", 6): OK, ("post", 12): BAD, ("post", 12, 3e-4): [2.6, 3.1, 2.9],
            ("pre", 6): OK, ("pre", 12): [2.5, 2.6, "div"], ("pre", 12, 3e-4): OK}
    out = depth_outcomes(FakeRecord(rows), BASE, MARGIN)
    post12, pre12 = out["post"][1], out["pre"][1]
    assert (post12.lr, post12.losses, post12.outcome) == (3e-4, (2.6, 3.1, 2.9), MIXED)
    assert [lr for lr, _ in post12.rates] == [3e-4, 1e-3]
    assert post12.rates[0][1] == pytest.approx((2.6 + 3.1 + 2.9) / 3)
    # the diverged seed counts with its first loss (4.5): lr 1e-3 has mean 3.2 > 2.45
    assert (pre12.lr, pre12.outcome) == (3e-4, TRAINS)
    assert pre12.rates[1][1] == pytest.approx((2.5 + 2.6 + 4.5) / 3)
    assert out["post"][0].rates == ((1e-3, pytest.approx(2.45)),)      # one rate tried
    assert [r.n_layer for r in out["post"]] == [6, 12]


def test_verdict_reproduced_with_and_without_caveat():
    rows = table({6: OK, 12: BAD, 24: BAD}, {6: OK, 12: OK, 24: OK}, {6: OK, 12: BAD, 24: BAD})
    v = failure_verdict(depth_outcomes(FakeRecord(rows), BASE, MARGIN), "post", "pre", "alt")
    assert (v.word, v.depth, v.caveat) == (REPRODUCED, 12, None)
    assert v.comparison.best == "pre" and v.comparison.clear
    rows = table({6: OK, 12: BAD}, {6: OK, 12: OK}, {6: OK, 12: OK})
    v = failure_verdict(depth_outcomes(FakeRecord(rows), BASE, MARGIN), "post", "pre", "alt")
    assert v.word == WITH_CAVEATS and v.caveat == "alt still trains at L = 12"


def test_verdict_not_reproduced_when_the_rule_fails():
    outcomes = depth_outcomes(FakeRecord(table({6: BAD, 12: BAD}, {6: OK, 12: OK},
                                               {6: OK, 12: OK})), BASE, MARGIN)
    v = failure_verdict(outcomes, "post", "pre", "alt")      # fails even shallow
    assert v.word == NOT_REPRODUCED and "shallowest" in v.reason
    outcomes = depth_outcomes(FakeRecord(table({6: OK, 12: OK}, {6: OK, 12: OK},
                                               {6: OK, 12: OK})), BASE, MARGIN)
    v = failure_verdict(outcomes, "post", "pre")             # never stops
    assert v.word == NOT_REPRODUCED and v.depth is None
    outcomes = depth_outcomes(FakeRecord(table({6: OK, 12: BAD}, {6: OK, 12: BAD},
                                               {6: OK, 12: OK})), BASE, MARGIN)
    v = failure_verdict(outcomes, "post", "pre", "alt")      # the reference stops too
    assert v.word == NOT_REPRODUCED and "either" in v.reason
    close = [2.95, 2.99, 2.97]                               # trains, but within noise of BAD?
    outcomes = depth_outcomes(FakeRecord(table({6: OK, 12: [3.0, 3.3, 3.1]},
                                               {6: OK, 12: close}, {6: OK, 12: OK})),
                              BASE, MARGIN)
    v = failure_verdict(outcomes, "post", "pre")             # gap 0.16 < range 0.3
    assert v.word == NOT_REPRODUCED and not v.comparison.clear
    with pytest.raises(KeyError, match="no family 'nope'"):
        failure_verdict(outcomes, "post", "nope")


def test_on_the_quick_record():
    """The rule reads the record ``postnorm_failure_depth`` writes (its quick version)."""
    from depthnotes.experiments import (FAILURE_FAMILIES, FAILURE_GRID_FAMILIES,
                                        FAILURE_LR_GRID, get_experiment)
    from depthnotes.records import Record, run_experiment

    rec = Record.from_dict(run_experiment(get_experiment("postnorm_failure_depth", True),
                                          workers=1))
    out = depth_outcomes(rec, baseline=10.0, margin=0.5)     # 4 steps: every run "trains"
    assert list(out) == [f[0] for f in FAILURE_FAMILIES]
    assert all(r.outcome == TRAINS and len(r.statuses) == 3 for rows in out.values()
               for r in rows)
    grid = {f: [len(r.rates) for r in rows] for f, rows in out.items()}
    assert grid == {f[0]: [1, 1 + len(FAILURE_LR_GRID) * (f[0] in FAILURE_GRID_FAMILIES)]
                    for f in FAILURE_FAMILIES}     # the grid at the deepest quick depth
    steps, curves = seed_curves(rec, rec.arms[0])
    assert len(curves) == 3 and all(math.isfinite(v) for c in curves for v in c)
    assert steps[0][-1] == rec.arm(rec.arms[0])["recipe"]["steps"]
