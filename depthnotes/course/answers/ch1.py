"""What chapter 1's exercises expect, and the hints their checks give (instructor only:
the student edition holds these sealed, ``depthnotes.course.sealed``)."""

from __future__ import annotations

from depthnotes.core.config import ModelConfig
from depthnotes.core.params import count_params
from depthnotes.course.kinds import Choice, Function, Mistake, Number, Written


def _block(d: int, mult: int) -> int:
    """Exact parameters of one block of width d with d_ff = mult * d (from count_params)."""
    return count_params(ModelConfig(n_layer=1, d_model=d, n_head=1, d_ff=mult * d)) \
        .per_block.total


ANSWERS = {
    "1.1": Function(
        cases=lambda: [((d, m), _block(d, m)) for d in (8, 64, 768) for m in (1, 4)],
        idea="Go through one block module by module — the four attention projections, the "
             "FFN's two layers (its inner width depends on ffn_mult), the two LayerNorms — and "
             "count every weight and every bias.",
        mistakes=(
            Mistake(lambda d, m=4: (4 + 2 * m) * d * d,
                    "Your count matches the weight matrices alone: biases and the LayerNorms' "
                    "gains and biases are parameters too."),
            Mistake(lambda d, m=4: (4 + 2 * m) * d * d + 4 * d + m * d + d,
                    "Matrices and biases are there; the block has two more modules with "
                    "parameters of size d."),
            Mistake(lambda d, m=4: 12 * d * d + 13 * d,
                    "Your function ignores ffn_mult: the FFN's size depends on it."),
        )),
    "1.2": Number(
        expected=lambda: 100e6 // (12 * 512 ** 2), integer=True,
        idea="A layer costs the same every time: count how many whole layers the budget pays "
             "for, and leave out a layer that would not fit completely.",
        mistakes=(
            Mistake(lambda: 100e6 // (12 * 512 ** 2) + 1,
                    "That many layers would go over the budget: round down, not up."),
            Mistake(lambda: 100e6 // 512 ** 2,
                    "One layer costs more than d² weights: attention and the FFN together "
                    "hold several d × d-sized matrices."),
        )),
    "1.3": Number(
        expected=lambda: (12 - 4) / 3, digits=4,
        idea="Attention keeps its share of the budget; what the two-matrix FFN held must now "
             "be spread over three matrices of d × d_ff weights each.",
        mistakes=(
            Mistake(lambda: 12 / 3,
                    "Attention is unchanged and keeps its weights; only the FFN's former "
                    "share goes to the three matrices (and a third matrix means a narrower "
                    "FFN than the ungated one)."),
            Mistake(lambda: 12 - 4,
                    "The FFN's share is spread over three matrices, not one."),
        )),
    "1.4": Choice(
        options=("depth", "width"),
        expected=lambda: "depth" if 12 * 8 * 1024 ** 2 < 12 * 24 * (1152 ** 2 - 1024 ** 2)
        else "width",
        idea="Compare how much each change multiplies the count. Quadratic growth is not "
             "always more: it depends on the size of the step.",
        mistakes=(
            Mistake(lambda: "depth",
                    "Work out the factor each change multiplies the count by — a third more "
                    "layers against an eighth more width, squared — and compare them."),
        )),
}

WRITTEN = {
    "1.7": Written(
        model="The rule counts the weight matrices, 4d² for attention and 8d² for the FFN, and "
              "leaves out the biases and the LayerNorms' gains and biases, 13d per block. The "
              "left-out part grows like d and the counted part like d², so its share is "
              "13/(12d + 13): about 6 % at d = 16 and under 0.2 % at d = 768. The rule also "
              "leaves out the embeddings, which grow like V·d and not with L at all, so for a "
              "narrow model with a large vocabulary it misses most of the model. Use the exact "
              "count for tiny widths and whenever embeddings matter (small models, large "
              "vocabularies, untied heads); use 12Ld² to compare shapes of real sizes.",
        rubric=("names what the rule leaves out: biases and norms (13d), and the embeddings",
                "explains the trend by the orders of growth (d against d², share ~13/(12d))",
                "says when not to use it: tiny d, or when the embeddings are a large share"),
        points=3),
}

#: Answers to the sub-questions of the tasks that no check reads (the instructor's notes).
SUBQUESTIONS = {
    "1.5": "Within 5 % or not depends on the width: the rule leaves out 13d per block (and 2d "
           "for the final norm), a share of about 13/(12d + 13), which is under 5 % from "
           "d = 21 up. So d = 16 misses (the solution's 4 x 16 model: -6.6 %) and d = 32 "
           "passes.",
}
