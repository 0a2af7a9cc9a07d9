"""What chapter 2's exercises expect, and the hints their checks give (instructor only:
the student edition holds these sealed, ``depthnotes.course.sealed``)."""

from __future__ import annotations

from depthnotes.core.config import ModelConfig
from depthnotes.core.params import count_params
from depthnotes.course.kinds import Function, Mistake, Number, Written
from depthnotes.course.runs.ch2 import cache_crossing


def _preset(name: str, **overrides):
    return count_params(ModelConfig.preset(name, **overrides))


def _crossover(head: bool = True, factor: int = 4) -> float:
    """The context T at which attention's factor·L·T·d FLOPs per token equal the weights'
    2·L·(4d² + 2d·d_ff) (and, with ``head``, the head's 2·V·d): GPT-2 small."""
    c = ModelConfig.preset("gpt2-small")
    weights = 2 * c.n_layer * (4 * c.d_model ** 2 + 2 * c.d_model * c.d_ff)
    weights += 2 * c.vocab_size * c.d_model if head else 0
    return weights / (factor * c.n_layer * c.d_model)


ANSWERS = {
    "2.2": Number(
        expected=lambda: 12 * (1536 // 768) ** 2, integer=True,
        idea="Both models must hold the same 12·L·d²: ask how many times more weights one "
             "layer of width 1536 holds than one of width 768.",
        mistakes=(
            Mistake(lambda: 12 * 1536 // 768,
                    "Doubling the width does not double a layer's weights: they grow with the "
                    "square of d."),
            Mistake(lambda: 1536 ** 2 // 768 ** 2,
                    "That is how many narrow layers one wide layer is worth; the wide model "
                    "has several layers."),
        )),
    "2.3": Number(
        expected=lambda: _preset("gpt2-small", tie_embeddings=False).total,
        idea="An untied head is its own vocab_size × d_model matrix; "
             "ModelConfig.preset('gpt2-small', tie_embeddings=False) gives the config to count.",
        mistakes=(
            Mistake(lambda: _preset("gpt2-small").total,
                    "That is the tied model: untying adds a matrix of its own."),
            Mistake(lambda: _preset("gpt2-small", tie_embeddings=False).total + 50257,
                    "The head has no bias: only its weight matrix is added."),
        )),
    "2.1": Number(
        expected=lambda: _crossover(), digits=4,
        idea="Write attention's term and the rest (blocks and head) per token as functions of "
             "T, set them equal and solve for T.",
        mistakes=(
            Mistake(lambda: _crossover(head=False),
                    "The head's 2·V·d FLOPs per token are part of the rest too."),
            Mistake(lambda: _crossover(factor=2),
                    "This library computes the full T × T scores: attention costs 4·L·T·d per "
                    "token here, not 2·L·T·d."),
        )),
    "2.5": Function(
        cases=lambda: [((12, 768, 2 ** 30), 2 ** 30 // (2 * 12 * 768 * 4)),
                       ((48, 1600, 16 * 2 ** 30), 16 * 2 ** 30 // (2 * 48 * 1600 * 4)),
                       ((2, 64, 10 ** 6), 10 ** 6 // (2 * 2 * 64 * 4)),
                       ((4, 128, 4095), 0)],
        integer=True,
        idea="A cached token costs a key and a value of d numbers in every layer, 4 bytes "
             "each; how many whole tokens fit in the memory?",
        mistakes=(
            Mistake(lambda L, d, mem: mem // (L * d * 4),
                    "The cache keeps a key and a value per layer and token."),
            Mistake(lambda L, d, mem: mem // (2 * L * d),
                    "Each cached number takes 4 bytes in float32."),
            Mistake(lambda L, d, mem: round(mem / (2 * L * d * 4)),
                    "Only whole tokens fit: round down."),
        )),
}

WRITTEN = {
    "2.8": Written(
        model="Per token, compute and weight reads grow with the parameters, 24Ld² (L·d²), "
              "while the KV cache grows with 2Ld numbers (L·d). At a fixed parameter count "
              "P ≈ 12Ld², L·d = P/(12d): the narrower (deeper) shape caches more per token. "
              "So at equal parameters and equal FLOPs a deep-narrow model needs more memory "
              "for long contexts and more bandwidth per generated token from the cache, and "
              "its L blocks run one after another.",
        rubric=("states the two growth laws: parameters/FLOPs ~ L·d², cache ~ L·d",
                "derives that at fixed P the cache per token grows as d shrinks (L·d = P/12d)",
                "draws a consequence for choosing a shape (memory for long contexts, or "
                "sequential blocks)"),
        points=3),
}

#: The shape exercise 2.7's solution picks (notebooks/02_gpt2_small.ipynb; a test checks that
#: the solution cell builds this one and prints the crossing the note below quotes).
SOLUTION_2_7 = ModelConfig(n_layer=48, d_model=64, n_head=2, vocab_size=96, context=4096)


def _note_2_7() -> str:
    """Exercise 2.7's sub-question (which way it goes for a wide and a deep, narrow shape),
    every number computed by the check's own ``cache_crossing``."""
    wide, deep = ModelConfig.preset("gpt2-small"), SOLUTION_2_7
    return (f"The cache overtakes the weights at T = P / (2·L·d) tokens: at T = "
            f"{cache_crossing(wide):,} for GPT-2 small, beyond its {wide.context:,}-token "
            "window, so a wide model's weights dominate; a deep, narrow shape with a long "
            f"window crosses inside it (the solution's {deep.n_layer} x {deep.d_model} with "
            f"{deep.context:,} positions: at T = {cache_crossing(deep):,}).")


#: Answers to the sub-questions of the tasks that no check reads (the instructor's notes),
#: computed: a note cannot drift from what the package counts.
SUBQUESTIONS = {
    "2.7": _note_2_7(),
}
