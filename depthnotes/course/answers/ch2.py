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


def _by_rule(config: ModelConfig) -> int:
    """The rule's non-embedding count, 12·L·d²."""
    return 12 * config.n_layer * config.d_model ** 2


#: Exercise 2.2's two shapes (its task states them): a wide model, GPT-2 small at 2.5 times its
#: width (d = 1920), and GPT-2 small's width with the depth at which the rule 12·L·d² gives the
#: wide model's count; and the context whose cache the task asks about. (At 2× the width the
#: deep model would cache exactly twice the wide one, and its extra cache would equal the wide
#: model's whole cache: a wrong answer that passes. At 2.5× every mistake listed below is a
#: number of its own.)
_SMALL = ModelConfig.preset("gpt2-small")
WIDE_2_2 = _SMALL.replace(d_model=1920)
DEEP_2_2 = _SMALL.replace(n_layer=_by_rule(WIDE_2_2) // _by_rule(_SMALL.replace(n_layer=1)))
CONTEXT_2_2 = 1024


def _kv_mb(config: ModelConfig, tokens: int = CONTEXT_2_2, key_and_value: int = 2,
           unit: float = 1e6) -> float:
    """The KV cache of ``tokens`` cached tokens, batch 1, float32, in units of ``unit`` bytes
    (a key and a value of d numbers in every layer): ``decode_kv_bytes``, or (with
    ``key_and_value=1``) half of it, as a cache of keys alone would be."""
    from depthnotes.bench.latency import decode_kv_bytes

    return decode_kv_bytes(config, tokens) * key_and_value / 2 / unit


def _extra_mb(**kw) -> float:
    """How much more the deep model caches than the wide one (``_kv_mb``'s arguments)."""
    return _kv_mb(DEEP_2_2, **kw) - _kv_mb(WIDE_2_2, **kw)


ANSWERS = {
    "2.2": Number(
        expected=lambda: _extra_mb(), digits=4,
        idea="First find the depth at d = 768 whose 12·L·d² matches the wide model's. Then "
             "compute each model's whole cache for the context (a key and a value of its own "
             "d numbers in every layer, for every token, 4 bytes each) and subtract the wide "
             "model's from the deep model's.",
        mistakes=(
            Mistake(lambda: 0,
                    "Equal parameters do not mean an equal cache: a layer's weights grow with "
                    "d², the key and value it caches per token with d. (If your depth gives "
                    "the deep model the wide model's L·d, check it: the rule is quadratic in "
                    "d.)"),
            Mistake(lambda: _kv_mb(DEEP_2_2),
                    "That is the deep model's whole cache; the question asks how much more it "
                    "holds than the wide model: subtract the wide model's cache."),
            Mistake(lambda: _kv_mb(WIDE_2_2),
                    "That is the wide model's whole cache; the question asks how much more the "
                    "deep model holds: the deep model's cache minus this."),
            Mistake(lambda: _extra_mb(unit=2 ** 20),
                    "MB here means 10^6 bytes for the whole context, not a MiB (2^20 bytes), "
                    "nor KiB per token."),
            Mistake(lambda: _extra_mb(tokens=1),
                    "That is the difference per cached token; the question asks for a full "
                    "context."),
            Mistake(lambda: _extra_mb(key_and_value=1),
                    "Each layer caches a key and a value for every token: 2·d numbers, not "
                    "d."),
            Mistake(lambda: _kv_mb(DEEP_2_2.replace(n_layer=DEEP_2_2.n_layer
                                                    - WIDE_2_2.n_layer)),
                    "The deep model has more layers, but the wide model's layers are wider: "
                    "each caches a key and a value of its own model's d. Compute each model's "
                    "whole cache, then subtract."),
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


def _note_2_2() -> str:
    """Exercise 2.2's first step (the depth, which no check reads) and the two caches, every
    number computed from the rule, ``count_params`` and ``decode_kv_bytes``."""
    from depthnotes.bench.latency import decode_kv_bytes

    deep, wide, T = DEEP_2_2, WIDE_2_2, CONTEXT_2_2
    exact = {c: count_params(c).non_embedding for c in (deep, wide)}
    return (f"By the rule the deep model has L = {deep.n_layer} layers "
            f"(12·{wide.n_layer}·{wide.d_model}² = 12·L·{deep.d_model}²); counted exactly, "
            f"the two hold {exact[deep]:,} and {exact[wide]:,} non-embedding parameters, "
            f"{100 * abs(exact[deep] / exact[wide] - 1):.2f} % apart. For {T:,} tokens the "
            f"deep model caches {decode_kv_bytes(deep, T):,} bytes, the wide one "
            f"{decode_kv_bytes(wide, T):,}: the cache is 2·L·T·d numbers, and at equal L·d² "
            "the narrower model has the larger L·d, by the ratio of the widths.")


#: Answers to the sub-questions of the tasks that no check reads (the instructor's notes),
#: computed: a note cannot drift from what the package counts.
SUBQUESTIONS = {
    "2.2": _note_2_2(),
    "2.7": _note_2_7(),
}
