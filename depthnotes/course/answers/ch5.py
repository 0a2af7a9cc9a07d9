"""What chapter 5's exercises expect, and the hints their checks give (instructor only:
the student edition holds these sealed, ``depthnotes.course.sealed``)."""

from __future__ import annotations

import math

from depthnotes.core.config import deepnorm_constants
from depthnotes.course.kinds import Function, Mistake, Number


EXERCISES = {
    "5.1a": Function(
        cases=lambda g: [((L,), deepnorm_constants(L).alpha) for L in (1, 6, 48, 1000)],
        rel=1e-12,
        idea="Read alpha's formula above: a root of a multiple of the depth.",
        mistakes=(
            Mistake(lambda L: (8 * L) ** 0.25,
                    "Check the factor inside the root: alpha's differs from beta's."),
            Mistake(lambda L: (2 * L) ** -0.25,
                    "Alpha grows with depth: the exponent is positive."),
        )),
    "5.1b": Function(
        cases=lambda g: [((L,), deepnorm_constants(L).beta) for L in (1, 6, 48, 1000)],
        rel=1e-12,
        idea="Read beta's formula above: it shrinks as the depth grows.",
        mistakes=(
            Mistake(lambda L: (8 * L) ** 0.25,
                    "Beta shrinks as depth grows: the exponent is negative."),
            Mistake(lambda L: (2 * L) ** -0.25,
                    "Check the factor inside the root: beta's differs from alpha's."),
        )),
    "5.2": Function(
        cases=lambda g: [((1.0, 0.5, 10), 1.5), ((0.1, 0.2, 1000), 0.3), ((0.0, 1.0, 3), 1.0)],
        rel=1e-9,
        idea="A factor c on a signal scales its variance by c squared; the embedding's "
             "variance is not scaled.",
        mistakes=(
            Mistake(lambda v0, s, L: v0 + 2 * L * s,
                    "That is the unscaled stack: the factor shrinks what each branch adds."),
            Mistake(lambda v0, s, L: v0 + 2 * L * s / math.sqrt(2 * L),
                    "A factor on a signal scales its variance by that factor squared."),
        )),
    "5.3": Number(
        needs=("grid", "verdict"), integer=True,
        expected=lambda g: sum((g["verdict"](r) == "trained") * (1 if k[0] == "pre" else -1)
                               for k, r in g["grid"].items()),
        idea="Count the cells where each norm trained, using the chapter's verdict on each "
             "run in the grid, and subtract.",
        mistakes=(
            Mistake(lambda g: -sum((g["verdict"](r) == "trained") * (1 if k[0] == "pre" else -1)
                                   for k, r in g["grid"].items()),
                    "The task asks for pre minus post."),
            Mistake(lambda g: sum(g["verdict"](r) == "trained" for k, r in g["grid"].items()
                                  if k[0] == "pre"),
                    "Subtract the cells where post-norm trained."),
        )),
}
