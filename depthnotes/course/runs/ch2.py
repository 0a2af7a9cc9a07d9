"""Chapter 2's open exercises: runs the student makes, judged against their own measurement."""

from __future__ import annotations

from depthnotes.course.kinds import OpenExperiment, Predict
from depthnotes.course.runs._common import model_problem


def _verify_2_4(cost, given):
    models = given["models"]
    if not (isinstance(models, tuple) and len(models) == 2):
        return "pass models=(tied, untied): the two models you built."
    for m in models:
        problem = model_problem(m)
        if problem:
            return problem
    tied, untied = models
    if not tied.config.tie_embeddings or untied.config.tie_embeddings:
        return "the first model must tie its head (the default), the second must not."
    if tied.config.replace(tie_embeddings=False) != untied.config:
        return "build the two models with the same shape; only tie_embeddings may differ."
    measured = sum(p.numel() for p in untied.parameters()) - \
        sum(p.numel() for p in tied.parameters())
    if cost != measured:
        return f"{cost!r} is not the difference of your two models' parameter counts."
    return None


def _costs_one_table(cost, given):
    c = given["models"][0].config
    return cost == c.vocab_size * c.d_model


FLOP_OPTIONS = ("under 1.25x", "1.25x to 1.75x", "over 1.75x")


def _verify_2_6(flops, given):
    if not (isinstance(flops, dict) and set(flops) == {1024, 2048}):
        return "pass a dict {1024: FLOPs per token, 2048: FLOPs per token}."
    if not all(isinstance(v, (int, float)) and v > 1e8 for v in flops.values()):
        return "each entry is GPT-2 small's forward FLOPs per token (over 10^8)."
    return None


def _flop_growth(flops, given):
    ratio = flops[2048] / flops[1024]
    return FLOP_OPTIONS[0] if ratio < 1.25 else FLOP_OPTIONS[1] if ratio <= 1.75 \
        else FLOP_OPTIONS[2]


def cache_crossing(config) -> int:
    """The first context length T at which a KV cache (a key and a value of d numbers per
    layer and token) holds at least as many numbers as the weights, ``count_params(config)
    .total``: exercise 2.7's check and the instructor's note on it both compute it here."""
    from depthnotes.core.params import count_params

    weights = count_params(config).total
    return -(-weights // (2 * config.n_layer * config.d_model))      # ceiling


def _verify_2_7(crossing, given):
    from depthnotes.core.config import ModelConfig

    config = given["config"]
    if not isinstance(config, ModelConfig):
        return f"pass config= the ModelConfig of your shape, not {type(config).__name__}."
    if crossing != cache_crossing(config):
        return (f"{crossing!r} is not the first context length at which your shape's cache "
                "holds at least as many numbers as its weights.")
    return None


def _within_context(crossing, given):
    return crossing <= given["config"].context


RUNS = {
    "2.4": OpenExperiment(
        needs=("models", "conclusion"), answers=("models", "conclusion"),
        verify=_verify_2_4, outcome=_costs_one_table, options=(True, False),
        idea="Build both models with the same preset (one block is enough), count each one's "
             "parameters from its tensors, and subtract.",
        read="Compare your measured difference with vocab_size × d_model for your models."),
    "2.6": Predict(
        needs=("prediction",), verify=_verify_2_6, outcome=_flop_growth,
        options=FLOP_OPTIONS,
        idea="Count with FlopCounterMode on the meta device, as the chapter did, once at "
             "T = 1024 and once at T = 2048, and divide each total by T."),
    "2.7": OpenExperiment(
        needs=("config", "conclusion"), answers=("config", "conclusion"),
        verify=_verify_2_7, outcome=_within_context, options=(True, False),
        idea="The cache holds 2·L·d numbers per token, the weights count_params(config).total "
             "numbers: find the first T at which the first reaches the second.",
        read="Compare your crossing with config.context: is it within the window?"),
}
