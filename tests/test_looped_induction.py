"""Chapter 8's X1 on the induction task (``verdicts.ch8_depth.judge_looped``), on records
built by hand: which arms it reads from the three records, the positive control, the
bracket of every grid, and the two parts' words."""

import pytest

from depthnotes.verdicts import ch8_depth as dv
from depthnotes.verdicts.evidence import (CONTRADICTED, IN_PART, NO_CONTROL, NOT_SHOWN,
                                          NOT_TESTABLE, REPRODUCED, UNBRACKETED)
from fake_records import stored_record

RATES = (3e-4, 1e-3, 3e-3, 1e-2, 3e-2)


def _run(acc, diverged=False):
    return {"final": {"accuracy_k4": acc, "accuracy_k1": 1.0, "diverged": diverged},
            "curves": {"accuracy_steps": [100, 200], "accuracy_k4": [acc / 2, acc]}}


def _arm(values):
    return [_run(v) if v is not None else _run(0.5, diverged=True) for v in values]


def _records(looped, distinct, once, seeds=(0, 1, 2)):
    """The four records X1 reads: ``looped`` maps each of ``RATES`` to three accuracies at
    k = 4, and so do ``distinct`` and ``once`` (1e-3 in the sweep, 3e-3 in the rate check,
    3e-4 in the low record, 1e-2 and 3e-2 in the looped record, as stored)."""
    def info(L, lr):
        return {"n_layer": L, "d_model": 64, "lr": lr}

    arms = {f"1 block x4 lr={lr:g}": ({"loops": 4, "n_layer": 4, "n_unique_blocks": 1,
                                       "d_model": 64, "lr": lr}, _arm(v))
            for lr, v in looped.items()}
    for lr in (1e-2, 3e-2):
        arms[f"L=4 d=64 lr={lr:g}"] = (info(4, lr), _arm(distinct[lr]))
        arms[f"L=1 d=64 lr={lr:g}"] = (info(1, lr), _arm(once[lr]))

    def chapter3(lr, name):
        return stored_record({
            f"L=1 d=64 lr={lr:g}": (info(1, lr), _arm(once[lr])),
            f"L=4 d=64 lr={lr:g}": (info(4, lr), _arm(distinct[lr])),
            f"L=2 d=64 lr={lr:g}": (info(2, lr), _arm([0.9] * 3)),      # not read
            f"L=4 d=52 lr={lr:g}": (info(4, lr) | {"d_model": 52}, _arm([0.1] * 3))},
            seeds=seeds, name=name)

    low = stored_record({f"L={L} d=64 lr=0.0003": (info(L, 3e-4), _arm(by_rate[3e-4]))
                         for L, by_rate in ((4, distinct), (1, once))},
                        seeds=seeds, name="looped_induction_low")
    return (stored_record(arms, name="looped_induction"),
            chapter3(1e-3, "induction_depth_sweep"), chapter3(3e-3, "induction_rate_check"),
            low)


def _grid(peak_lr, peak, low=0.3, rates=RATES, jitter=(0.0, 0.01, -0.01)):
    """A grid whose accuracy peaks at ``peak_lr`` (``peak``) and is ``low`` elsewhere."""
    return {lr: [(peak if lr == peak_lr else low) + j for j in jitter] for lr in rates}


DISTINCT4 = _grid(3e-3, 0.97)
ONCE4 = _grid(3e-3, 0.42, low=0.38)


def test_reads_each_kind_from_the_four_records():
    recs = _records(_grid(1e-3, 0.95), DISTINCT4, ONCE4)
    arms = dv.loop_arms(*recs)
    assert all(list(arms[kind]) == list(RATES) for kind in dv.LOOP_KINDS)
    assert arms[dv.ONCE][3e-4][0].name == "looped_induction_low"
    assert arms[dv.DISTINCT][1e-3][0].name == "induction_depth_sweep"
    assert arms[dv.ONCE][3e-3][0].name == "induction_rate_check"
    assert arms[dv.DISTINCT][3e-2][1] == "L=4 d=64 lr=0.03"


def test_a_looped_block_that_stands_in():
    t = dv.judge_looped(*_records(_grid(1e-3, 0.95), DISTINCT4, ONCE4), k=4)
    assert t.has_control and t.loops == 4
    assert {kind: p.best for kind, p in t.picks.items()} == {
        dv.LOOPED: 1e-3, dv.DISTINCT: 3e-3, dv.ONCE: 3e-3}
    assert t.picks[dv.LOOPED].bracketed and t.picks[dv.DISTINCT].bracketed
    assert t.picks[dv.ONCE].flat and t.picks[dv.ONCE].judgeable   # 0.38 to 0.42: inside 0.05
    assert t.beats_once.word == REPRODUCED
    assert t.matches_distinct.word == REPRODUCED       # 0.02 short: inside the margin
    assert t.word == REPRODUCED


def test_clearly_short_of_the_distinct_blocks():
    t = dv.judge_looped(*_records(_grid(1e-3, 0.70), DISTINCT4, ONCE4), k=4)
    assert t.beats_once.word == REPRODUCED
    assert t.matches_distinct.word == CONTRADICTED
    assert t.word == IN_PART


def test_short_by_more_than_the_margin_inside_the_noise():
    looped = _grid(1e-3, 0.88, jitter=(0.0, 0.1, -0.1))      # 0.78 to 0.98
    t = dv.judge_looped(*_records(looped, DISTINCT4, ONCE4), k=4)
    assert t.matches_distinct.word == NOT_SHOWN
    assert t.matches_distinct.leans_as_claimed is False


def test_no_positive_control_means_no_test():
    distinct = _grid(3e-3, 0.43, low=0.38)
    t = dv.judge_looped(*_records(_grid(1e-3, 0.95), distinct, ONCE4), k=4)
    assert not t.has_control
    assert [p.word for p in t.parts] == [NOT_TESTABLE, NOT_TESTABLE]
    why = t.beats_once.reason
    assert why.kind == NO_CONTROL and why.control == t.control   # the control's difference
    assert t.matches_distinct.reason == why
    assert t.word == NOT_TESTABLE


@pytest.mark.parametrize("edge", [RATES[0], RATES[-1]])
def test_a_best_rate_at_the_grid_edge_means_no_test(edge):
    t = dv.judge_looped(*_records(_grid(edge, 0.95), DISTINCT4, ONCE4), k=4)
    assert t.has_control and not t.picks[dv.LOOPED].bracketed
    assert t.word == NOT_TESTABLE
    why = t.matches_distinct.reason
    assert why.kind == UNBRACKETED and why.picks == (t.picks[dv.LOOPED],)   # the edge one only
    assert why.picks[0].best == edge and t.beats_once.reason == why


def test_a_diverged_seed_counts_as_answering_nothing():
    looped = _grid(1e-3, 0.95)
    looped[3e-2] = [None, 0.3, 0.3]
    t = dv.judge_looped(*_records(looped, DISTINCT4, ONCE4), k=4)
    assert t.grid[dv.LOOPED][3e-2][0] is None
    assert t.word == REPRODUCED                        # the best rate is untouched


def test_records_must_share_seeds_and_not_repeat_an_arm():
    looped, sweep, check, low = _records(_grid(1e-3, 0.95), DISTINCT4, ONCE4)
    other = _records(_grid(1e-3, 0.95), DISTINCT4, ONCE4, seeds=(3, 4, 5))[1]
    with pytest.raises(ValueError, match="seeds"):
        dv.loop_arms(looped, other, check)
    with pytest.raises(ValueError, match="two arms"):
        dv.loop_arms(looped, sweep, sweep)
    with pytest.raises(ValueError, match="no looped arm"):
        dv.loop_arms(sweep, check)


def test_curves_at_one_rate():
    recs = _records(_grid(1e-3, 0.95), DISTINCT4, ONCE4)
    at_low = dv.loop_rate_curves(*recs[:3], lr=3e-4, k=4)
    assert list(at_low) == [dv.LOOPED]      # without the low record, only the looped block
    at_mid = dv.loop_rate_curves(*recs, lr=3e-3, k=4)
    assert set(at_mid) == set(dv.LOOP_KINDS)
    steps, values = at_mid[dv.DISTINCT]
    assert steps[0] == [100, 200] and values[0] == [0.485, 0.97]
    with pytest.raises(ValueError, match="no arm ran"):
        dv.loop_rate_curves(*recs, lr=0.5, k=4)


def test_the_grid_figure_draws_every_seed_and_rings_each_best_rate():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from depthnotes.page.plots import LOOP_COLORS, plot_loop_grid

    looped = _grid(1e-3, 0.95)
    looped[3e-2] = [None, 0.3, 0.3]
    t = dv.judge_looped(*_records(looped, DISTINCT4, ONCE4), k=4)
    fig, ax = plt.subplots()
    try:
        lines = plot_loop_grid(ax, t)
        assert {kind: line.get_color() for kind, line in lines.items()} == LOOP_COLORS
        assert list(lines[dv.LOOPED].get_xdata()) == list(RATES)
        assert lines[dv.LOOPED].get_ydata()[-1] == pytest.approx(0.2)   # the diverged seed: 0
        rings = [line for line in ax.lines if line.get_markersize() == 12]
        assert sorted((r.get_xdata()[0], r.get_ydata()[0]) for r in rings) == sorted(
            (t.picks[kind].best, t.at_best[kind].mean) for kind in dv.LOOP_KINDS)
        assert ax.get_xscale() == "log" and ax.get_ylabel() == "4-hop accuracy"
    finally:
        plt.close(fig)


def test_the_explorer_curves_draw_each_kind_run_at_the_rate():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from depthnotes.page.plots import LOOP_STYLES, plot_loop_rate_curves

    recs = _records(_grid(1e-3, 0.95), DISTINCT4, ONCE4)
    fig, ax = plt.subplots()
    try:
        means = plot_loop_rate_curves(ax, dv.loop_rate_curves(*recs, lr=1e-2, k=4), 1e-2, 4)
        assert set(means) == set(dv.LOOP_KINDS)
        assert len(ax.lines) == 3 * (3 + 1)           # three seeds and a mean per kind
        assert {k: m.get_linestyle() for k, m in means.items()} == LOOP_STYLES
        assert ax.get_title() == "learning rate 0.01, k = 4"
    finally:
        plt.close(fig)
