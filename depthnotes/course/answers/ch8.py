"""What chapter 8's exercises expect, and the hints their checks give (instructor only:
the student edition holds these sealed, ``depthnotes.course.sealed``)."""

from __future__ import annotations

import math

from depthnotes.core.config import ModelConfig
from depthnotes.core.params import count_params
from depthnotes.course.kinds import Written, Function, Mistake, Number


#: Exercise 8.1's model: 12 applications of 3 stored blocks at d = 128.
_LOOPED_8_1 = ModelConfig(n_layer=12, d_model=128, n_head=4, vocab_size=96, context=64,
                          n_unique_blocks=3)


ANSWERS = {
    "8.1": Number(
        integer=True, expected=lambda: count_params(_LOOPED_8_1).non_embedding,
        idea="Only the stored blocks hold parameters; count how many distinct blocks the "
             "model stores, whatever the number of applications.",
        mistakes=(
            Mistake(lambda: count_params(_LOOPED_8_1.replace(n_unique_blocks=None))
                    .non_embedding,
                    "That counts a distinct block for every application: the applications "
                    "share weights."),
            Mistake(lambda: count_params(_LOOPED_8_1.replace(n_layer=1, n_unique_blocks=None))
                    .non_embedding,
                    "The stack cycles through more than one stored block."),
        )),
    "8.2": Function(
        cases=lambda: [((0.0, 1.0, 1), 1.0), ((0.5, 2.0, 4), 0.5 + 2.0 * 25 / 12),
                         ((0.1, 0.3, 24), 0.1 + 0.3 * sum(1 / l for l in range(1, 25)))],
       
        idea="A factor c on a branch's input scales what the branch adds to the variance by "
             "c squared; add up what every block adds.",
        mistakes=(
            Mistake(lambda v0, s, L: v0 + s * L,
                    "That is the unscaled stack: block l's contribution is scaled down."),
            Mistake(lambda v0, s, L: v0 + s * sum(l ** -0.5 for l in range(1, L + 1)),
                    "A factor on a signal scales its variance by that factor squared."),
        )),
}

WRITTEN = {
    "8.5": Written(
        model="Serial computation comes from applying blocks one after another, not from "
              "having distinct weights: a task whose steps are all the same operation (one hop "
              "of chasing, the same read every block) can be done by one block applied L "
              "times, with one block's parameters. What looping gives up is the capacity to do "
              "different operations at different depths, and it saves no time: decoding still "
              "runs L block applications per token.",
        rubric=('separates serial steps (applications) from parameters (stored blocks)',
                'says when one block suffices: every step the same operation',
                'names what it gives up: distinct operations per depth, and no saving in time'),
        points=3),
}

#: Answers to the sub-questions of the tasks that no check reads (the instructor's notes).
SUBQUESTIONS = {
    "8.4": "The embedding table decides when V·d + context·d outweighs the blocks' 12·d² "
           "each: a narrow model with a large vocabulary (GPT-2's 50,257 tokens at d = 128 "
           "hold 6.4M embedding parameters against 0.2M per block), so looping saves "
           "little of the total even though it removes most blocks.",
}
