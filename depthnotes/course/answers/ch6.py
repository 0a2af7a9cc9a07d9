"""What chapter 6's exercises expect, and the hints their checks give (instructor only:
the student edition holds these sealed, ``depthnotes.course.sealed``)."""

from __future__ import annotations

import math

from depthnotes.core.config import ModelConfig
from depthnotes.course.kinds import Written, Function, Mistake
from depthnotes.experiments.ch6 import BASIN_BUDGETS, BASIN_DEPTHS
from depthnotes.verdicts.ch6_budget import WIDE_EXTREME


def _width(P, L) -> int:
    """The width that spends a non-embedding budget ``P`` on ``L`` blocks by the 12·L·d² rule,
    to the nearest integer."""
    return round(math.sqrt(P / (12 * L)))


def _depths_in_range(P, lo, hi, width=_width, inside=lambda r, lo, hi: lo <= r <= hi) -> int:
    """Exercise 6.1: how many depths L = 1, 2, ... have a shape at budget ``P`` whose d/L is
    within ``lo`` to ``hi``. d/L only falls as L grows: stop at the first below ``lo``.
    ``width`` and ``inside`` are the answer's, or a mistake's."""
    count, L = 0, 1
    while (ratio := width(P, L) / L) >= lo:
        count += bool(inside(ratio, lo, hi))
        L += 1
    return count


#: Exercise 6.1's sub-question: Kaplan et al.'s flat range as the chapter states it, d/L
#: changing forty-fold, up to the far edge that C14's rule takes for it (``WIDE_EXTREME``).
KAPLAN_FOLD = 40
KAPLAN_RANGE_6_1 = (WIDE_EXTREME / KAPLAN_FOLD, WIDE_EXTREME)
#: The budget of exercise 6.1's sub-question at scale: GPT-2 small's shape, by the rule.
SCALE_MODEL_6_1 = "gpt2-small"


def _rule_budget(name: str) -> tuple[int, str]:
    """12·L·d² of a preset's shape, and the product written out."""
    c = ModelConfig.preset(name)
    return 12 * c.n_layer * c.d_model ** 2, f"12·{c.n_layer}·{c.d_model}²"


def _run_6_1(P, lo, hi) -> str:
    """The depths of a budget in range, in words: "L = 1 to 3 (3 shapes)"."""
    n = _depths_in_range(P, lo, hi)
    if n == 0:
        return "none"
    first = next(L for L in range(1, 10 ** 6) if _width(P, L) / L <= hi)
    return f"L = {first} to {first + n - 1} ({n} shape{'s' * (n > 1)})"


def _note_6_1() -> str:
    """Exercise 6.1's sub-question: the counts at the basin's budgets and at GPT-2 small's,
    and the cube-root estimate beside them."""
    lo, hi = KAPLAN_RANGE_6_1
    (big, product), small = _rule_budget(SCALE_MODEL_6_1), BASIN_BUDGETS[0]

    def estimate(P):
        return (P / 12) ** (1 / 3) * (lo ** (-2 / 3) - hi ** (-2 / 3))

    def thinner(P):
        return sum(_width(P, L) / L < lo for L in BASIN_DEPTHS)
    at = "; ".join(f"P = {P:,}: {_run_6_1(P, lo, hi)}" for P in BASIN_BUDGETS)
    below = " and ".join(f"{thinner(P)} at P = {P:,}" for P in BASIN_BUDGETS)
    return (f"With d/L from {lo:g} to {hi:g} ({KAPLAN_FOLD}-fold), depths_in_range gives "
            f"{at}; at GPT-2 small's {product} = {big:,}: {_run_6_1(big, lo, hi)}. Of "
            f"the basin's {len(BASIN_DEPTHS)} depths, by the rule {below} are thinner than "
            f"the range (d/L below {lo:g}). Why the cube root: by the rule d = sqrt(P/(12L)), so "
            f"d/L = sqrt(P/12)·L^(-3/2): depth enters as L^(3/2), the budget only as "
            f"P^(1/2). d/L = r at L = (P/12)^(1/3)·r^(-2/3), so the range holds the depths "
            f"from (P/12)^(1/3)·{hi:g}^(-2/3) to (P/12)^(1/3)·{lo:g}^(-2/3), about "
            f"(P/12)^(1/3)·({lo:g}^(-2/3) − {hi:g}^(-2/3)) of them: the cube root of P "
            f"times a factor of the range alone. That is {estimate(small):.1f} at "
            f"P = {small:,} and {estimate(big):.1f} at GPT-2 small's (counted: "
            f"{_depths_in_range(small, lo, hi)} and {_depths_in_range(big, lo, hi)}); "
            f"{big / small:,.0f} times the budget buys about "
            f"{(big / small) ** (1 / 3):.0f} times the shapes.")


def _largest_within(cost, limit) -> int:
    """Exercise 6.3: the largest n whose loss increase ``cost[n]`` is within ``limit``."""
    return max(n for n, c in enumerate(cost) if c <= limit)


ANSWERS = {
    "6.1": Function(
        # none in range; d = 19.6 rounds up onto lo; both bounds hit exactly (d = 200 at
        # L = 1, d = 100 at L = 4); d = 200.6 rounds up across hi; d = 200.3 rounds down
        # onto hi (rounding up would not); two large budgets
        cases=lambda: [((P, lo, hi), _depths_in_range(P, lo, hi)) for P, lo, hi in
                       [(1_000, 20, 200), (4_610, 20, 200), (480_000, 25, 200),
                        (482_885, 20, 200), (481_441, 20, 200), (10 ** 9, 10, 400),
                        (12 * 96 * 12288 ** 2, 20, 200)]],
        integer=True,
        idea="Each depth has one width that spends the budget, so one aspect ratio. Walk "
             "the depths from 1 up, count those whose ratio lies within the bounds, and stop "
             "once it falls below the lower one: from there it only falls further.",
        mistakes=(
            Mistake(lambda P, lo, hi: _depths_in_range(
                        P, lo, hi, width=lambda P, L: round(math.sqrt(P / L))),
                    "A block of width d holds more than d² weights: the rule has a factor, "
                    "and without it every width comes out too large."),
            Mistake(lambda P, lo, hi: _depths_in_range(
                        P, lo, hi, width=lambda P, L: math.floor(math.sqrt(P / (12 * L)))),
                    "Round the width to the nearest integer, not down: a width of 19.6 is "
                    "20."),
            Mistake(lambda P, lo, hi: _depths_in_range(
                        P, lo, hi, width=lambda P, L: math.ceil(math.sqrt(P / (12 * L)))),
                    "Round the width to the nearest integer, not up: a width of 200.3 is "
                    "200."),
            Mistake(lambda P, lo, hi: _depths_in_range(
                        P, lo, hi, inside=lambda r, lo, hi: lo < r < hi),
                    "A shape whose d/L lands exactly on lo or on hi is in the range: both "
                    "bounds count."),
        )),
    "6.2": Function(
        cases=lambda: [(([2.1, 1.9, 2.0],), True), (([1.8, 1.9, 2.0],), False),
                       (([2.3, 2.2, 2.1],), False), (([2.4, 2.0, 2.2, 2.5, 2.6],), True),
                       (([3.0, 2.6, 2.5, 2.45, 2.9],), True), (([2.0],), False)],
        idea="A grid brackets the best rate when the lowest loss is neither the first nor the "
             "last entry (and a grid of one rate brackets nothing).",
        mistakes=(
            Mistake(lambda losses: losses.index(min(losses)) != 0,
                    "A best rate at the top of the grid is at an edge too: a higher rate "
                    "might do better."),
            Mistake(lambda losses: losses.index(min(losses)) != len(losses) - 1,
                    "A best rate at the bottom of the grid is at an edge too: a lower rate "
                    "might do better."),
        )),
    "6.3": Function(
        cases=lambda: [(([0.0, 0.02, 0.05, 0.08, 0.3, 0.5], 0.1), 3),
                       (([0.0, 0.4, 0.5], 0.3), 0), (([0.0, 0.01, 0.02, 0.03], 0.05), 3),
                       (([0.0, 0.2, 0.1, 0.6], 0.25), 2)],
        integer=True,
        idea="n counts removed blocks from 0; keep the largest n whose loss increase is still "
             "within the limit.",
        mistakes=(
            Mistake(lambda cost, limit: _largest_within(cost, limit) + 1,
                    "That is one past the answer: n counts removed blocks from 0, and the task "
                    "asks for the last n still within the limit."),
            Mistake(lambda cost, limit: len(cost) - _largest_within(cost, limit),
                    "n counts the blocks removed, not the blocks kept."),
        )),
}

WRITTEN = {
    "6.6": Written(
        model="The seed-to-seed spread of a trained shape's validation loss is of the same "
              "size as the differences between neighbouring shapes in the basin, so with one "
              "seed the lowest loss is partly chance: another seed can crown another shape. To "
              "name a best shape you need several seeds per shape (three at least) evaluated "
              "on the same held-out text, each shape at its own best learning rate from a grid "
              "that brackets it, and a rule stated in advance for how large a gap must be to "
              "count (otherwise: within noise).",
        rubric=('says why one seed cannot judge: the spread is as large as the gaps',
                'names what is needed: ≥ 3 seeds on the same held-out text and a stated rule',
                "mentions each shape's own best rate from a grid that brackets it"),
        points=3),
}

#: Answers to the sub-questions of the tasks that no check reads (the instructor's notes).
SUBQUESTIONS = {
    "6.1": _note_6_1(),
    "6.3": "It depends on the record the chapter loads: largest_within(drop_cost.mean(axis=0), "
           "0.3) in the chapter gives n, the number of the last blocks that can go within "
           "0.3 nats.",
}
