"""What chapter 1's exercises expect, and the hints their checks give (instructor only:
the student edition holds these sealed, ``depthnotes.course.sealed``)."""

from __future__ import annotations

import math

from depthnotes.core.config import ModelConfig
from depthnotes.core.params import count_params
from depthnotes.course.kinds import Choice, Function, Mistake, Number, Written
from depthnotes.course.runs.ch1 import RULE_TOLERANCE, rule_gap


def _block(d: int, mult: int) -> int:
    """Exact parameters of one block of width d with d_ff = mult * d (from count_params)."""
    return count_params(ModelConfig(n_layer=1, d_model=d, n_head=1, d_ff=mult * d)) \
        .per_block.total


#: Exercise 1.2's budget of non-embedding parameters and the width of its layers (its task
#: states both; a test checks that it does).
BUDGET_1_2, WIDTH_1_2 = 1_000_000, 32


def _by_rule(budget: int, d: int) -> int:
    """The whole layers of width d that the rule 12·L·d² fits in ``budget``."""
    return budget // (12 * d * d)


def layers_within(budget: int, d: int) -> int:
    """The most whole layers of width d (d_ff = 4d) whose exact non-embedding count, as
    ``count_params`` counts it (biases, both LayerNorms per block, the final LayerNorm),
    stays within ``budget``."""
    n_layer = 0
    while count_params(ModelConfig(n_layer=n_layer + 1, d_model=d, n_head=1)) \
            .non_embedding <= budget:
        n_layer += 1
    return n_layer


ANSWERS = {
    "1.1": Function(
        forbids=("count_params", "numel", "Block", "Transformer"),
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
        expected=lambda: layers_within(BUDGET_1_2, WIDTH_1_2), integer=True,
        idea="The rule counts the weight matrices alone. Work out what one block of this "
             "width really holds and what the stack holds besides its blocks, then find the "
             "most whole layers whose exact count stays within the budget.",
        mistakes=(
            Mistake(lambda: _by_rule(BUDGET_1_2, WIDTH_1_2),
                    "That is what the rule 12·L·d² allows. It leaves out every block's biases "
                    "and two LayerNorms, and the final LayerNorm: at a width this small they "
                    "are a few per cent of a block, and over this many blocks they add up to "
                    "whole layers."),
            Mistake(lambda: _by_rule(BUDGET_1_2, WIDTH_1_2) - 1,
                    "Taking one layer off the rule's answer is not enough: what the rule leaves "
                    "out, a few per cent of every block, adds up to more than one layer over "
                    "this many blocks. Count one block exactly, and the final LayerNorm."),
            Mistake(lambda: layers_within(BUDGET_1_2, WIDTH_1_2) + 1,
                    "That many layers, counted exactly, go over the budget: round down, not "
                    "up, and count every bias, both LayerNorms of each block and the final "
                    "LayerNorm."),
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

#: The model exercise 1.5's solution builds (notebooks/01_parameter_math.ipynb; a test checks
#: that the solution cell builds this one and prints the gap the note below quotes).
SOLUTION_1_5 = ModelConfig(n_layer=4, d_model=16, n_head=2, vocab_size=100, context=32)


def rule_gap_of(config: ModelConfig) -> float:
    """The rule against the exact non-embedding count of ``config`` (as exercise 1.5's check
    compares them): rule / count - 1."""
    return rule_gap(config.n_layer, config.d_model, count_params(config).non_embedding)


def first_width_within(n_layer: int | None) -> int:
    """The narrowest width at which the rule is within ``RULE_TOLERANCE`` of the exact count:
    of one block alone (``None``), or of a stack of ``n_layer`` blocks with its final norm.
    The gap shrinks as d grows (what the rule leaves out grows like d, the rest like d²)."""
    for d in range(1, 10_000):
        if n_layer is None:
            block = count_params(ModelConfig(n_layer=1, d_model=d, n_head=1)).per_block.total
            gap = 12 * d * d / block - 1
        else:
            gap = rule_gap_of(ModelConfig(n_layer=n_layer, d_model=d, n_head=1))
        if abs(gap) <= RULE_TOLERANCE:
            return d
    raise ValueError("no width up to 10,000 is within the tolerance")


def _note_1_5() -> str:
    """Exercise 1.5's sub-question (which choices put the rule within 5 %), every number
    computed from ``count_params`` and the check's own rule."""
    solution, d = SOLUTION_1_5, 64
    counts = count_params(ModelConfig(n_layer=1, d_model=d, n_head=1))
    per_block = (counts.per_block.total - 12 * d * d) // d        # 13: biases and norms, per d
    final = counts.final_norm // d                                # 2: the final norm, per d
    L, wide = solution.n_layer, solution.replace(d_model=2 * solution.d_model)
    within = f"{100 * RULE_TOLERANCE:g} %"
    return (f"Within {within} or not depends on the width: the rule leaves out "
            f"{per_block}d per block (and {final}d for the final norm), a share of about "
            f"{per_block}/(12d + {per_block}) of a block, which is within {within} "
            f"from d = {first_width_within(None)} up; with the final norm a stack of {L} "
            f"blocks needs d ≥ {first_width_within(L)}. So d = {solution.d_model} misses (the "
            f"solution's {L} x {solution.d_model} model: {100 * rule_gap_of(solution):+.1f} %) "
            f"and d = {wide.d_model} passes ({100 * rule_gap_of(wide):+.1f} % at the same "
            "depth).")


def _note_1_2() -> str:
    """Exercise 1.2's sub-question (how far apart the rule's answer and the exact one should
    be), every number computed from ``count_params`` and the rule."""
    budget, d = BUDGET_1_2, WIDTH_1_2
    counts = count_params(ModelConfig(n_layer=1, d_model=d, n_head=1))
    block, left_out = counts.per_block.total, counts.per_block.total - 12 * d * d
    rule, exact = _by_rule(budget, d), layers_within(budget, d)
    gap = (rule * left_out + counts.final_norm) / block     # the rule's blocks, in layers
    return (f"By the rule, {budget:,} // 12d² = {rule} layers. Counted exactly, a block of "
            f"width {d} holds {block:,} parameters (12d² + {left_out // d}d) and the stack "
            f"also its final norm's {counts.final_norm} ({counts.final_norm // d}d), so "
            f"{exact} fit. The estimate: the rule leaves out {left_out // d}d of every block, "
            f"{100 * left_out / (12 * d * d):.1f} % of its 12d² at d = {d}; over the rule's "
            f"{rule} blocks, with the final norm, that is {gap:.1f} blocks' worth, so the "
            f"exact answer is {math.floor(gap)} or {math.ceil(gap)} layers fewer (here "
            f"{rule - exact}).")


#: Answers to the sub-questions of the tasks that no check reads (the instructor's notes),
#: computed: a note cannot drift from what the package counts.
SUBQUESTIONS = {
    "1.2": _note_1_2(),
    "1.5": _note_1_5(),
}
