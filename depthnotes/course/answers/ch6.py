"""What chapter 6's exercises expect, and the hints their checks give (instructor only:
the student edition holds these sealed, ``depthnotes.course.sealed``)."""

from __future__ import annotations

import math

from depthnotes.course.kinds import Function, Mistake, Number


def _largest_within(given) -> int:
    """Exercise 6.4: the largest n whose loss increase ``drop_cost[n]`` is within ``limit``."""
    return max(n for n, c in enumerate(given["drop_cost"]) if c <= given["limit"])


EXERCISES = {
    "6.1": Function(
        cases=lambda g: [((12 * 12 * 768 ** 2, 12), 768), ((100_000, 2), 65),
                         ((25_000, 8), 16), ((1_200_000, 1), 316)],
        idea="Solve the budget rule for the width, then round to the nearest integer.",
        mistakes=(
            Mistake(lambda P, L: round(math.sqrt(P / L)),
                    "A layer of width d holds more than d² weights: the rule has a factor."),
            Mistake(lambda P, L: math.floor(math.sqrt(P / (12 * L))),
                    "Round to the nearest integer, not down."),
        )),
    "6.2": Number(
        expected=lambda g: 12288 / 96, rel=1e-9,
        idea="The aspect ratio is width per block.",
        mistakes=(
            Mistake(lambda g: 96 / 12288, "Width over depth, not depth over width."),
            Mistake(lambda g: 12288 // 96 ** 2, "Divide the width by the number of blocks once."),
        )),
    "6.3": Number(
        needs=("sweep",), integer=True,
        expected=lambda g: min((p for p in g["sweep"] if p.budget == 25_000),
                               key=lambda p: p.val_loss).n_layer,
        idea="Keep the points of the 25,000 budget, then find the one with the smallest "
             "validation loss and read its depth.",
        mistakes=(
            Mistake(lambda g: max((p for p in g["sweep"] if p.budget == 25_000),
                                  key=lambda p: p.val_loss).n_layer,
                    "The best shape has the lowest validation loss, not the highest."),
            Mistake(lambda g: min((p for p in g["sweep"] if p.budget != 25_000),
                                  key=lambda p: p.val_loss).n_layer,
                    "Look only at the points of the 25,000 budget."),
        )),
    "6.4": Number(
        needs=("drop_cost", "limit"), integer=True,
        expected=lambda g: _largest_within(g),
        idea="n counts removed blocks from 0; keep the largest n whose loss increase is still "
             "within the limit.",
        mistakes=(
            Mistake(lambda g: _largest_within(g) + 1,
                    "That is one past the answer: n counts removed blocks from 0, and the task "
                    "asks for the last n still within the limit."),
            Mistake(lambda g: len(g["drop_cost"]) - _largest_within(g),
                    "n counts the blocks removed, not the blocks kept."),
        )),
}
