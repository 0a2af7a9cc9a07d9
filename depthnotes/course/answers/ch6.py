"""What chapter 6's exercises expect, and the hints their checks give (instructor only:
the student edition holds these sealed, ``depthnotes.course.sealed``)."""

from __future__ import annotations

import math

from depthnotes.course.kinds import Written, Function, Mistake


def _largest_within(cost, limit) -> int:
    """Exercise 6.3: the largest n whose loss increase ``cost[n]`` is within ``limit``."""
    return max(n for n, c in enumerate(cost) if c <= limit)


ANSWERS = {
    "6.1": Function(
        cases=lambda: [((12 * 12 * 768 ** 2, 12), 768), ((100_000, 2), 65),
                         ((25_000, 8), 16), ((1_200_000, 1), 316)],
        idea="Solve the budget rule for the width, then round to the nearest integer.",
        mistakes=(
            Mistake(lambda P, L: round(math.sqrt(P / L)),
                    "A layer of width d holds more than d² weights: the rule has a factor."),
            Mistake(lambda P, L: math.floor(math.sqrt(P / (12 * L))),
                    "Round to the nearest integer, not down."),
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
    "6.3": "It depends on the record the chapter loads: largest_within(drop_cost.mean(axis=0), "
           "0.3) in the chapter gives n, the number of the last blocks that can go within "
           "0.3 nats.",
}
