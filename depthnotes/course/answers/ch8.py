"""What chapter 8's exercises expect, and the hints their checks give (instructor only:
the student edition holds these sealed, ``depthnotes.course.sealed``)."""

from __future__ import annotations

import math

from depthnotes.core.config import ModelConfig
from depthnotes.core.params import count_params
from depthnotes.course.kinds import Written, Function, Mistake, Number
from depthnotes.course.runs.ch8 import LOOP_SAVES, unshared_total


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

#: The loop exercise 8.4's solution builds (notebooks/08_beyond.ipynb; a test checks that the
#: solution cell builds this one and prints the counts the note below quotes).
SOLUTION_8_4 = ModelConfig(n_layer=12, d_model=128, n_head=4, vocab_size=96, context=64,
                           n_unique_blocks=2)


def _note_8_4() -> str:
    """Exercise 8.4's sub-question (which choices let the embedding table decide), every
    number computed by ``count_params`` and the check's own comparison."""
    small = SOLUTION_8_4
    large = small.replace(vocab_size=ModelConfig.preset("gpt2-small").vocab_size)

    def stores(config):
        stored, unshared = count_params(config).total, unshared_total(config)
        return f"{stored:,} of {unshared:,} parameters ({stored / unshared:.0%})"
    counts = count_params(large)
    return ("The embedding table decides when V·d + context·d outweighs what sharing "
            "removes, about 12·d² for each block no longer stored: a narrow model with a "
            f"large vocabulary. The solution's {small.n_layer} x {small.d_model} loop of "
            f"{small.n_unique_blocks} stored blocks (vocabulary {small.vocab_size}) stores "
            f"{stores(small)}, under {LOOP_SAVES:.0%}; with GPT-2's {large.vocab_size:,} "
            f"tokens the same loop stores {stores(large)}: its "
            f"{(counts.token_embedding + counts.position_embedding) / 1e6:.1f}M embedding "
            f"parameters outweigh the {counts.per_block.total / 1e6:.1f}M of each block, so "
            "looping saves little of the total even though it removes most blocks.")


#: Answers to the sub-questions of the tasks that no check reads (the instructor's notes),
#: computed: a note cannot drift from what the package counts.
SUBQUESTIONS = {
    "8.4": _note_8_4(),
}
