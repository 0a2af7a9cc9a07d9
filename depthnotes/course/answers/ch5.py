"""What chapter 5's exercises expect, and the hints their checks give (instructor only:
the student edition holds these sealed, ``depthnotes.course.sealed``)."""

from __future__ import annotations

import math

from depthnotes.core.config import deepnorm_constants
from depthnotes.course.kinds import Written, Function, Mistake


ANSWERS = {
    "5.2": Function(
        cases=lambda: [((1.0, 0.5, 10), 1.5), ((0.1, 0.2, 1000), 0.3), ((0.0, 1.0, 3), 1.0)],
       
        idea="A factor c on a signal scales its variance by c squared; the embedding's "
             "variance is not scaled.",
        mistakes=(
            Mistake(lambda v0, s, L: v0 + 2 * L * s,
                    "That is the unscaled stack: the factor shrinks what each branch adds."),
            Mistake(lambda v0, s, L: v0 + 2 * L * s / math.sqrt(2 * L),
                    "A factor on a signal scales its variance by that factor squared."),
        )),
    "5.1": Function(
        cases=lambda: [((deepnorm_constants(L).alpha,), L) for L in (1, 6, 48, 1000, 4096)],
        integer=True,
        idea="Undo alpha's formula: raise alpha to the power that cancels its root, then "
             "divide by the factor in front of the depth.",
        mistakes=(
            Mistake(lambda a: round(a ** 4 / 8),
                    "That undoes beta's factor, not alpha's."),
            Mistake(lambda a: round(a ** 2 / 2),
                    "Alpha is a fourth root of a multiple of the depth, not a square root."),
        )),
}

WRITTEN = {
    "5.5": Written(
        model="With every one of the 2L branches multiplied by c = 1/sqrt(2L), each adds "
              "c²·s = s/(2L) to the variance, and the 2L of them add s in all: v0 + s at any "
              "depth, where the unscaled stack has v0 + 2L·s. The network starts near the "
              "identity. The price is that each branch starts, and is updated, at a scale that "
              "shrinks with depth: per block the learning signal is smaller, so the learning "
              "rate (or the parameterisation, as in chapter 8) has to account for the depth.",
        rubric=('computes the sum: 2L branches × s/(2L) = s, independent of L',
                'uses that a factor c scales a variance by c²',
                "names a cost: each block's contribution and update shrink with depth"),
        points=3),
}

#: Answers to the sub-questions of the tasks that no check reads (the instructor's notes).
SUBQUESTIONS = {
    "5.4": "What bounds the growth is a factor of about 1/sqrt(2L) on what each branch "
           "writes, whether as a multiplier (branch_scale) or in the init of the output "
           "projections (init='gpt2'); with neither (branch_scale=1, init='normal') the "
           "variance grows linearly with depth, as in chapter 4.",
}
