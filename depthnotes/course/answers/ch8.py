"""What chapter 8's exercises expect, and the hints their checks give (instructor only:
the student edition holds these sealed, ``depthnotes.course.sealed``)."""

from __future__ import annotations

import math

from depthnotes.core.config import ModelConfig
from depthnotes.core.params import count_params
from depthnotes.course.kinds import Function, Mistake, Number


#: Exercise 8.1's model: 12 applications of 3 stored blocks at d = 128.
_LOOPED_8_1 = ModelConfig(n_layer=12, d_model=128, n_head=4, vocab_size=96, context=64,
                          n_unique_blocks=3)


EXERCISES = {
    "8.1": Number(
        integer=True, expected=lambda g: count_params(_LOOPED_8_1).non_embedding,
        idea="Only the stored blocks hold parameters; count how many distinct blocks the "
             "model stores, whatever the number of applications.",
        mistakes=(
            Mistake(lambda g: count_params(_LOOPED_8_1.replace(n_unique_blocks=None))
                    .non_embedding,
                    "That counts a distinct block for every application: the applications "
                    "share weights."),
            Mistake(lambda g: count_params(_LOOPED_8_1.replace(n_layer=1, n_unique_blocks=None))
                    .non_embedding,
                    "The stack cycles through more than one stored block."),
        )),
    "8.2": Function(
        cases=lambda g: [((0.0, 1.0, 1), 1.0), ((0.5, 2.0, 4), 0.5 + 2.0 * 25 / 12),
                         ((0.1, 0.3, 24), 0.1 + 0.3 * sum(1 / l for l in range(1, 25)))],
        rel=1e-9,
        idea="A factor c on a branch's input scales what the branch adds to the variance by "
             "c squared; add up what every block adds.",
        mistakes=(
            Mistake(lambda v0, s, L: v0 + s * L,
                    "That is the unscaled stack: block l's contribution is scaled down."),
            Mistake(lambda v0, s, L: v0 + s * sum(l ** -0.5 for l in range(1, L + 1)),
                    "A factor on a signal scales its variance by that factor squared."),
        )),
    "8.3": Number(
        needs=("fits",), rel=1e-6,
        expected=lambda g: math.exp(g["fits"]["standard"].predict(math.log(256))),
        idea="The fit is a straight line between log L and log of the change: evaluate it at "
             "log 256 and undo the logarithm.",
        mistakes=(
            Mistake(lambda g: g["fits"]["standard"].predict(math.log(256)),
                    "The line predicts the logarithm of the change: undo the logarithm."),
            Mistake(lambda g: math.exp(g["fits"]["standard"].predict(256)),
                    "The line's x axis is log L, not L."),
        )),
}
