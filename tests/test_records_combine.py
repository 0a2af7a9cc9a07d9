"""records.combine_records: a learning-rate grid spread over two records read as one, and the
rules that score each arm at its best rate over it (trainability.depth_outcomes,
budget.basins_from_record)."""

import pytest

from depthnotes.verdicts.ch6_budget import basins_from_record, best_rates
from depthnotes.experiments.records import combine_records
from depthnotes.verdicts.ch4_trainability import depth_outcomes, loss_ceiling

from fake_records import loss_run, stored_record


def _basin_arm(budget, L, d, lr, losses):
    info = {"budget": budget, "n_layer": L, "d_model": d}
    return info, [{"final": {"eval_loss": v}} for v in losses], lr


def _basin_record(name, arms):
    rec = stored_record({a: (info, runs) for a, (info, runs, _) in arms.items()}, name=name)
    for a, (_, _, lr) in arms.items():
        rec.arm(a)["recipe"]["lr"] = lr
    return rec


def test_combine_records_joins_arms_and_runs_and_refuses_clashes():
    a = stored_record({"x": ({}, [{}] * 3)}, name="a")
    b = stored_record({"y": ({}, [{}] * 3)}, name="b")
    both = combine_records(a, b)
    assert both.arms == ["x", "y"] and both.name == "a + b" and len(both.runs) == 6
    assert both.run("y", 2) is b.run("y", 2)
    only_y = both.select(["y"])
    assert only_y.arms == ["y"] and len(only_y.runs) == 3 and only_y.name == both.name
    with pytest.raises(KeyError, match="no arms"):
        both.select(["w"])
    with pytest.raises(ValueError, match="share arm names"):
        combine_records(a, a)
    with pytest.raises(ValueError, match="differ in seeds"):
        combine_records(a, stored_record({"z": ({}, [{}] * 2)}, seeds=(0, 1)))
    with pytest.raises(ValueError, match="at least one"):
        combine_records()


def test_basins_score_each_shape_at_its_best_rate_over_combined_records():
    first = _basin_record("first", {
        "L=1": _basin_arm(1000, 1, 32, 1e-3, [2.0, 2.01, 2.02]),
        "L=2": _basin_arm(1000, 2, 24, 1e-3, [2.5, 2.51, 2.52]),
        "L=4": _basin_arm(1000, 4, 16, 1e-3, [2.3, 2.31, 2.32])})
    second = _basin_record("second", {
        "L=1 x2": _basin_arm(1000, 1, 32, 2e-3, [2.1, 2.11, 2.12]),
        "L=2 x2": _basin_arm(1000, 2, 24, 2e-3, [2.0, 2.0, 2.01]),
        "L=4 x2": _basin_arm(1000, 4, 16, 2e-3, [None, 2.0, 2.0])})     # one seed diverged
    both = combine_records(first, second)
    basin = basins_from_record(both)[1000]
    assert [s.label for s in basin.shapes][:2] == ["L=1", "L=2 x2"]
    rates = best_rates(both, {1000: basin})
    assert [lr for lr, _ in rates["L=2 x2"]] == [2e-3, 1e-3]
    # each pick is over the two-rate grid, best at one edge: not bracketed, so the budget is
    # not testable (L = 2's other rate is clearly worse; L = 1's too)
    assert [s.pick.rates for s in basin.shapes] == [(1e-3, 2e-3)] * 3
    assert basin.shapes[0].pick.at_edge == "low" and basin.shapes[1].pick.at_edge == "high"
    assert not basin.testable[0] and basin.word == "not testable here"


def test_a_rate_where_a_seed_diverged_is_not_the_best_rate():
    """A diverged run learned nothing (the evidence library's policy): the rate where one of
    L = 4's seeds diverged (the others at 2.0) must not beat the rate whose seeds all trained
    to 2.3, and the basin must score the shape at the rate ``best_rates`` ranks first."""
    first = _basin_record("first", {
        "L=1": _basin_arm(1000, 1, 32, 1e-3, [2.0, 2.01, 2.02]),
        "L=4": _basin_arm(1000, 4, 16, 1e-3, [2.3, 2.31, 2.32])})
    second = _basin_record("second", {
        "L=1 x2": _basin_arm(1000, 1, 32, 2e-3, [2.1, 2.11, 2.12]),
        "L=4 x2": _basin_arm(1000, 4, 16, 2e-3, [None, 2.0, 2.0])})     # one seed diverged
    both = combine_records(first, second)
    basin = basins_from_record(both)[1000]
    rates = best_rates(both, {1000: basin})
    for shape in basin.shapes:                           # one ranking of the rates
        assert rates[shape.label][0][0] == both.arm(shape.label)["recipe"]["lr"]
    assert [s.label for s in basin.shapes] == ["L=1", "L=4"]
    # the diverged rate ranks last, its seed counted at the ceiling ln V (evidence.summarise)
    ceiling = loss_ceiling(both, "L=4 x2")
    assert rates["L=4"][1] == (2e-3, pytest.approx((ceiling + 2.0 + 2.0) / 3))


def test_depth_outcomes_take_the_rate_from_the_recipe_and_pick_the_best():
    info = {"family": "post", "n_layer": 8}
    a = stored_record({"post, L=8": (info, [loss_run(3.2)] * 3)}, name="a")
    b = stored_record({"post, lr=3e-4, L=8": (info, [loss_run(2.5)] * 3)}, name="b")
    a.arm("post, L=8")["recipe"]["lr"] = 1e-3
    b.arm("post, lr=3e-4, L=8")["recipe"]["lr"] = 3e-4
    row, = depth_outcomes(combine_records(a, b), baseline=3.3, margin=0.25)["post"]
    assert row.arm == "post, lr=3e-4, L=8" and row.lr == 3e-4
    assert [lr for lr, _ in row.rates] == [3e-4, 1e-3]
