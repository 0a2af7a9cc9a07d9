"""What chapter 5's exercises expect, and the hints their checks give (instructor only:
the student edition holds these sealed, ``depthnotes.course.sealed``)."""

from __future__ import annotations

import math

from depthnotes.core.config import deepnorm_constants
from depthnotes.course.kinds import Written, Function, Mistake


def _attention_factor(n_layer: int) -> float:
    """Exercise 5.1: at init, a DeepNorm stack's attention output relative to the residual
    it joins, over the same ratio in Xavier post-norm with the same draws. W_V (the last
    third of the fused ``attn.c_attn``) and W_O (``attn.c_proj``) each carry beta, the
    queries and keys do not, and biases start at 0: the output is beta² times post-norm's.
    The residual is alpha·x against x (LayerNorm ignores scale: alpha on the residual is
    1/alpha on the branch). Checked against the built models in ``tests/test_exercises.py``."""
    c = deepnorm_constants(n_layer)
    return c.beta ** 2 / c.alpha


def _over_c11(n_layer: int) -> float:
    """Exercise 5.1's factor over C11's branch scale 1/sqrt(2L)."""
    return _attention_factor(n_layer) * math.sqrt(2 * n_layer)


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
        cases=lambda: [((L,), _attention_factor(L)) for L in (1, 6, 48, 200, 1000)],
        idea="Two facts from Fix 3: LayerNorm ignores the scale of its input, so weighting "
             "the residual up acts like weighting the branch down; and beta is a gain on "
             "some of the matrices the attention output passes through (not on the queries "
             "and keys, so the attention pattern stays as it was).",
        mistakes=(
            Mistake(lambda L: deepnorm_constants(L).beta / deepnorm_constants(L).alpha,
                    "The attention output passes through more than one beta-scaled matrix: "
                    "follow the values from their projection, through the mix, to the "
                    "output projection."),
            Mistake(lambda L: deepnorm_constants(L).beta ** 2,
                    "That is the branch's own scale; the residual it joins is weighted by "
                    "alpha, and the question is relative to that residual."),
            Mistake(lambda L: deepnorm_constants(L).beta ** 2 * deepnorm_constants(L).alpha,
                    "Alpha weights the residual, not the branch: relative to the residual, "
                    "a larger alpha makes the branch smaller."),
            Mistake(lambda L: 1 / deepnorm_constants(L).alpha,
                    "That is alpha's part alone: at initialisation beta scales the weights "
                    "on the branch as well."),
            Mistake(lambda L: _attention_factor(L) ** 2,
                    "That is the ratio of variances; the task asks for size (a standard "
                    "deviation), as C11's 1/sqrt(2L) is a factor on size."),
            Mistake(lambda L: 1 / _attention_factor(L),
                    "That is post-norm's ratio over DeepNorm's; the question asks for "
                    "DeepNorm's as a fraction of post-norm's, a number below 1."),
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
    "5.1": "DeepNorm's factor, beta²/alpha = (8L)^(-1/2)·(2L)^(-1/4) = 2^(-7/4)·L^(-3/4), "
           "shrinks like L^(-3/4); C11's 1/sqrt(2L) like L^(-1/2). DeepNorm's shrinks "
           "faster, and is the smaller at every depth: over 1/sqrt(2L) it is 1/(2·alpha), "
           f"{_over_c11(1):.2f} at L = 1 and {_over_c11(1000):.3f} at L = 1,000. The two are "
           "not quite one measure: C11's multiplies a branch added to a stream that no "
           "LayerNorm rescales, DeepNorm's is relative to a residual that a LayerNorm "
           "rescales after every branch. The FFN's two matrices carry beta too, but the "
           "GELU between them is not linear (GELU(beta·z) is not beta·GELU(z)), so its "
           "factor is only near beta²/alpha: hence "
           "the question asks about attention.",
    "5.4": "What bounds the growth is a factor of about 1/sqrt(2L) on what each branch "
           "writes, whether as a multiplier (branch_scale) or in the init of the output "
           "projections (init='gpt2'); with neither (branch_scale=1, init='normal') the "
           "variance grows linearly with depth, as in chapter 4.",
}
