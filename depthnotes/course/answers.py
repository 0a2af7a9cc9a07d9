"""What each of the book's exercises expects, and the hints its check gives.

One entry per exercise id in ``EXERCISES``; :func:`depthnotes.course.check.check` looks the id up.
Kept here, out of the notebooks, so that no cell a student reads shows an expected value.
Every expected value is computed — from the package (``count_params``, ``deepnorm_constants``,
``decode_weight_bytes``) or from what the chapter measured, passed in by the check cell — never
typed in as a number. Each exercise lists plausible mistakes with their own hints; the hints
point at the idea and never contain the answer (``tests/test_exercises.py`` checks both).
"""

from __future__ import annotations

import math

from depthnotes.core.config import ModelConfig
from depthnotes.course.kinds import Choice, Experiment, Function, Mistake, Number
from depthnotes.core.config import deepnorm_constants
from depthnotes.core.params import count_params


def _block(d: int, mult: int) -> int:
    """Exact parameters of one block of width d with d_ff = mult * d (from count_params)."""
    return count_params(ModelConfig(n_layer=1, d_model=d, n_head=1, d_ff=mult * d)) \
        .per_block.total


def _preset(name: str, **overrides):
    return count_params(ModelConfig.preset(name, **overrides))


def _decode_bytes(L: int, d: int, V: int) -> int:
    from depthnotes.bench.latency import decode_weight_bytes

    return decode_weight_bytes(ModelConfig(n_layer=L, d_model=d, n_head=4, vocab_size=V))


def _one_lookup_starts(f: list[int]) -> int:
    """Start points x where two hops land on x, f(x) or f^-1(x): one look-up away."""
    return sum(f[f[x]] in (x, f[x], f.index(x)) for x in range(len(f)))


def _entropy(ids) -> float:
    import torch

    p = torch.bincount(torch.as_tensor(ids)).double()
    p = p[p > 0] / p.sum()
    return float(-(p * p.log()).sum())


# ---------------------------------------------------------------- experiments: shared checks

def _is(obj, module: str, name: str) -> bool:
    import importlib

    return isinstance(obj, getattr(importlib.import_module(module), name))


def _model_problem(model, **want) -> str | None:
    """What is wrong with ``model`` (a Transformer whose config has the ``want`` fields)."""
    if not _is(model, "depthnotes.core.model", "Transformer"):
        return f"expected a depthnotes Transformer, got {type(model).__name__}."
    for name, value in want.items():
        if getattr(model.config, name) != value:
            return (f"the model you trained has {name}={getattr(model.config, name)!r}; the "
                    f"task asks for {name}={value!r}.")
    return None


def _non_embedding(model) -> int:
    embedding = model.wte.weight.numel() + model.wpe.weight.numel()
    return sum(p.numel() for p in model.parameters()) - embedding


def _verify_1_5(count, given):
    problem = _model_problem(given["model"])
    if problem:
        return problem
    if given["model"].config.d_model > 64:
        return "pick a narrow model (d_model of 64 or less): that is where the rule is tested."
    if count != _non_embedding(given["model"]):
        return (f"{count!r} is not the number of non-embedding parameters of your model: "
                "count them from its tensors.")
    return None


def _rule_within_5pct(count, given):
    c = given["model"].config
    return abs(12 * c.n_layer * c.d_model ** 2 / count - 1) <= 0.05


def _verify_2_4(cost, given):
    models = given["models"]
    if not (isinstance(models, tuple) and len(models) == 2):
        return "pass models=(tied, untied): the two models you built."
    for m in models:
        problem = _model_problem(m)
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


_OPTIONS_3_6 = ("4 or fewer", "5", "more than 5 or never")


def _verify_3_6(needed, given):
    from depthnotes.verdicts.ch3_chasing import depth_needed, family_shapes

    shapes = family_shapes(given["record"], "fixed width", rate_from=1)
    want = depth_needed(shapes, 4, given["threshold"])
    if not isinstance(needed, list) or len(needed) != len(want):
        return f"expected a list with one depth (or None) per seed, {len(want)} entries."
    if needed != want:
        return "that is not what the fixed-width family's k = 4 accuracies give."
    return None


def _outcome_3_6(needed, given):
    if None in needed or max(needed) > 5:
        return "more than 5 or never"
    return "5" if max(needed) == 5 else "4 or fewer"


def _verify_3_5(hits, given):
    if given["n"] < 4:
        return "pick n of at least 4 symbols (with fewer, every cycle is short)."
    if not isinstance(hits, list) or len(hits) < 1000:
        return "collect at least 1,000 trials in a list (one True or False per trial)."
    if not all(isinstance(h, bool) for h in hits):
        return "each trial is True or False: did two hops land within one look-up?"
    return None


def _agrees_with_3_over_n(hits, given):
    return abs(sum(hits) / len(hits) - 3 / given["n"]) <= 0.05


def _profile_problem(profile, model, entries_per_depth: int, **want) -> str | None:
    """What is wrong with a per-layer profile: not of ``model`` (``n_layer + entries_per_depth``
    entries: 0 for one per block, 1 when the embedding comes first), or ``model`` not as asked."""
    problem = _model_problem(model, **want)
    if problem:
        return problem
    if len(profile) != model.config.n_layer + entries_per_depth:
        return "the profile's length does not match your model's depth: measure that model."
    return None


def _verify_4_5(grads, given):
    problem = _profile_problem(grads, given["model"], 0, norm="post")
    if problem:
        return problem
    if given["model"].config.n_layer <= 96:
        return "pick a depth beyond the chapter's deepest, 96 blocks."
    return None


def _first_block_stands_out(grads, given):
    import numpy as np

    return bool(grads[0] / np.median(grads[1:]) > 3)


def _verify_5_4(profile, given):
    problem = _profile_problem(profile, given["model"], 1, norm="pre",
                               branch_scale="1/sqrt(2L)")
    if problem:
        return problem
    if given["model"].config.n_layer <= 100:
        return "pick a depth beyond the chapter's 100 blocks."
    return None


def _largest_within(given) -> int:
    """Exercise 6.4: the largest n whose loss increase ``drop_cost[n]`` is within ``limit``."""
    return max(n for n, c in enumerate(given["drop_cost"]) if c <= given["limit"])


def _verify_6_5(losses, given):
    problem = _model_problem(given["model"])
    if problem:
        return problem
    if len(losses) != given["model"].config.n_layer:
        return "pass the losses that drop_last_losses returns for the chapter's model."
    return None


def _same_droppable(losses, given):
    full = losses[0]
    removable = sum(1 for n in range(1, len(losses)) if losses[n] - full <= 0.05 * full)
    return removable == given["droppable"]


def _verify_7_5(timings, given):
    from depthnotes.bench.latency import cache_regime, last_level_cache

    if not (isinstance(timings, tuple) and len(timings) == 2):
        return "pass the two timings as a pair: (shallower, deeper)."
    for t in timings:
        if not _is(t, "depthnotes.bench.latency", "LatencyResult"):
            return f"expected LatencyResults from measure_latency, got {type(t).__name__}."
    if timings[0].n_layer >= timings[1].n_layer:
        return (f"the pair must be (shallower, deeper); got depths {timings[0].n_layer} and "
                f"{timings[1].n_layer}.")
    if timings[0].d_model != timings[1].d_model or timings[0].d_model >= 512:
        return "time two models of the same width, narrower than the chapter's 512."
    cache = last_level_cache()
    for t in timings:
        where = cache_regime(t.weight_bytes, cache)
        if where != "memory":
            return (f"L = {t.n_layer} at d = {t.d_model} reads its weights from {where}, not "
                    f"from memory: fit.slope is a memory-resident block's time, so compare "
                    f"with memory-resident depths (first_memory_depth gives the smallest).")
    return None


def _under_half_a_block(timings, given):
    shallow, deep = timings
    per_block = (deep.ms_per_token - shallow.ms_per_token) / (deep.n_layer - shallow.n_layer)
    return bool(per_block < 0.5 * given["fit"].slope)


# ---------------------------------------------------------------- the exercises

EXERCISES = {
    # -- chapter 1 -----------------------------------------------------------------------
    "1.1": Function(
        cases=lambda g: [((d, m), _block(d, m)) for d in (8, 64, 768) for m in (1, 4)],
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
        expected=lambda g: 100e6 // (12 * 512 ** 2), integer=True,
        idea="A layer costs the same every time: count how many whole layers the budget pays "
             "for, and leave out a layer that would not fit completely.",
        mistakes=(
            Mistake(lambda g: 100e6 // (12 * 512 ** 2) + 1,
                    "That many layers would go over the budget: round down, not up."),
            Mistake(lambda g: 100e6 // 512 ** 2,
                    "One layer costs more than d² weights: attention and the FFN together "
                    "hold several d × d-sized matrices."),
        )),
    "1.3": Number(
        expected=lambda g: (12 - 4) / 3, rel=1e-3,
        idea="Attention keeps its share of the budget; what the two-matrix FFN held must now "
             "be spread over three matrices of d × d_ff weights each.",
        mistakes=(
            Mistake(lambda g: 12 / 3,
                    "Attention is unchanged and keeps its weights; only the FFN's former "
                    "share goes to the three matrices (and a third matrix means a narrower "
                    "FFN than the ungated one)."),
            Mistake(lambda g: 12 - 4,
                    "The FFN's share is spread over three matrices, not one."),
        )),
    "1.4": Choice(
        options=("depth", "width"),
        expected=lambda g: "depth" if 12 * 8 * 1024 ** 2 < 12 * 24 * (1152 ** 2 - 1024 ** 2)
        else "width",
        idea="Compare how much each change multiplies the count. Quadratic growth is not "
             "always more: it depends on the size of the step.",
        mistakes=(
            Mistake(lambda g: "depth",
                    "Work out the factor each change multiplies the count by — a third more "
                    "layers against an eighth more width, squared — and compare them."),
        )),
    "1.5": Experiment(
        needs=("model", "conclusion"), answers=("model", "conclusion"),
        verify=_verify_1_5, outcome=_rule_within_5pct, options=(True, False),
        idea="Build the model, sum p.numel() over its parameters minus the two embedding "
             "tables, and compare that with the rule's 12·L·d².",
        read="Compare your count with 12·L·d² for your own L and d: is the gap at most 5 %?"),

    # -- chapter 2 -----------------------------------------------------------------------
    "2.1": Number(
        expected=lambda g: _preset("gpt2-medium").embedding / _preset("gpt2-medium").total,
        rel=1e-3,
        idea="count_params returns a ParamCount that splits the model into embedding and "
             "non-embedding parts; the fraction is one part over the whole.",
        mistakes=(
            Mistake(lambda g: 100 * _preset("gpt2-medium").embedding
                    / _preset("gpt2-medium").total,
                    "Give a fraction between 0 and 1, not a percentage."),
            Mistake(lambda g: _preset("gpt2-medium").token_embedding
                    / _preset("gpt2-medium").total,
                    "The position table is an embedding too."),
            Mistake(lambda g: _preset("gpt2-medium").embedding
                    / _preset("gpt2-medium").non_embedding,
                    "Divide by the whole model's count, not by the non-embedding part."),
        )),
    "2.2": Number(
        expected=lambda g: 12 * (1536 // 768) ** 2, integer=True,
        idea="Both models must hold the same 12·L·d²: ask how many times more weights one "
             "layer of width 1536 holds than one of width 768.",
        mistakes=(
            Mistake(lambda g: 12 * 1536 // 768,
                    "Doubling the width does not double a layer's weights: they grow with the "
                    "square of d."),
            Mistake(lambda g: 1536 ** 2 // 768 ** 2,
                    "That is how many narrow layers one wide layer is worth; the wide model "
                    "has several layers."),
        )),
    "2.3": Number(
        expected=lambda g: _preset("gpt2-small", tie_embeddings=False).total,
        idea="An untied head is its own vocab_size × d_model matrix; "
             "ModelConfig.preset('gpt2-small', tie_embeddings=False) gives the config to count.",
        mistakes=(
            Mistake(lambda g: _preset("gpt2-small").total,
                    "That is the tied model: untying adds a matrix of its own."),
            Mistake(lambda g: _preset("gpt2-small", tie_embeddings=False).total + 50257,
                    "The head has no bias: only its weight matrix is added."),
        )),
    "2.4": Experiment(
        needs=("models", "conclusion"), answers=("models", "conclusion"),
        verify=_verify_2_4, outcome=_costs_one_table, options=(True, False),
        idea="Build both models with the same preset (one block is enough), count each one's "
             "parameters from its tensors, and subtract.",
        read="Compare your measured difference with vocab_size × d_model for your models."),

    # -- chapter 3 -----------------------------------------------------------------------
    "3.1": Function(
        cases=lambda g: [(([1, 4, 5, 0, 3, 2], 4, 3), 1), (([1, 4, 5, 0, 3, 2], 5, 2), 5),
                         (([1, 2, 0], 0, 0), 0), (([2, 0, 1], 1, 4), 0)],
        idea="Start at x and follow the table one step at a time, as many steps as k says.",
        mistakes=(
            Mistake(lambda f, x, k: f[x],
                    "Your function follows the pointer once; it must follow it k times."),
            Mistake(lambda f, x, k: x if k == 0 else f[f[x]] if k > 1 else f[x],
                    "Do not stop after two steps: follow the pointer exactly k times."),
        )),
    "3.2": Number(
        expected=lambda g: 2 / 9, rel=1e-9,
        idea="f^2(x) = x exactly when x's cycle has a length that divides 2; add the "
             "probabilities of those lengths.",
        mistakes=(
            Mistake(lambda g: 1 / 9, "That is guessing. Answering x is right more often: on "
                                     "which cycle lengths do two hops come back to x?"),
            Mistake(lambda g: 1 / 9 + 1 / 8,
                    "Each cycle length 1..n has probability 1/n, here 1/9."),
            Mistake(lambda g: 3 / 9, "A cycle of length 3 takes three hops to come back, "
                                     "not two."),
        )),
    "3.3": Number(
        expected=lambda g: _one_lookup_starts([1, 2, 0, 4, 3]), integer=True,
        idea="Follow two steps from each start point and see where you land, relative to x, "
             "on each of the two cycles.",
        mistakes=(
            Mistake(lambda g: 3, "On the 2-cycle, where do two steps bring you?"),
            Mistake(lambda g: 2, "On the 3-cycle, two steps forward land where one step "
                                 "backward does."),
        )),
    "3.4": Number(
        expected=lambda g: sum(1 / 6 for j in range(1, 7) if j <= 3), rel=1e-9,
        idea="Add the probabilities of the cycle lengths on which two hops are one look-up "
             "away.",
        mistakes=(
            Mistake(lambda g: 2 / 6, "A cycle of length 1 (a fixed point) counts too."),
            Mistake(lambda g: 1 / 6, "More than one cycle length qualifies."),
        )),
    "3.5": Experiment(
        needs=("n", "conclusion"), verify=_verify_3_5, outcome=_agrees_with_3_over_n,
        options=(True, False),
        idea="Draw random permutations of n symbols and a random start point, follow two "
             "hops with your chase, and record whether you landed on x, f(x) or f^-1(x).",
        read="Compare the fraction of your trials that were True with what your answer to "
             "3.4 predicts for n symbols: are they within 0.05?"),

    "3.6": Experiment(
        needs=("record", "threshold", "conclusion"), verify=_verify_3_6, outcome=_outcome_3_6,
        options=_OPTIONS_3_6,
        idea="Use depth_needed on the fixed-width family's shapes (family_shapes(record, "
             "'fixed width', rate_from=1), as the chapter's shapes) with k = 4 and the "
             "chapter's level SOLVED.",
        read="Classify by the largest depth needed over the seeds (None counts as never)."),

    # -- chapter 4 -----------------------------------------------------------------------
    "4.1": Number(
        needs=("fit",), rel=1e-6,
        expected=lambda g: g["fit"].intercept + g["fit"].slope * 200,
        idea="The fit is a straight line in the block index: evaluate it at the block asked "
             "for.",
        mistakes=(
            Mistake(lambda g: g["fit"].slope * 200,
                    "The line does not start at zero: the embedding has a variance too."),
            Mistake(lambda g: (g["fit"].intercept + g["fit"].slope) * 200,
                    "Only the growth per block is multiplied by the block index."),
        )),
    "4.2": Function(
        cases=lambda g: [((0.0, 1.0, 10, 100), 10.0), ((1.0, 1.0, 10, 100), 101 / 11),
                         ((0.5, 0.1, 4, 8), 1.3 / 0.9)], rel=1e-9,
        idea="Independent contributions add their variances: write the variance after L "
             "blocks, then take the ratio for the two depths.",
        mistakes=(
            Mistake(lambda v0, s, L1, L2: L2 / L1,
                    "The embedding's variance is there before any block adds to it."),
            Mistake(lambda v0, s, L1, L2: math.sqrt((v0 + L2 * s) / (v0 + L1 * s)),
                    "The task asks for the ratio of variances, not of standard deviations."),
        )),
    "4.3": Function(
        needs=("corpus", "baseline"), rel=1e-9,
        cases=lambda g: [((_tensor([0, 1, 0, 1]), 4), math.log(2)),
                         ((_tensor([3, 3, 3]), 5), 0.0),
                         ((g["corpus"].train, g["corpus"].vocab_size), g["baseline"])],
        idea="Turn the counts of each id into frequencies, and average -log(frequency) "
             "weighted by the frequencies; ids that never occur add nothing.",
        mistakes=(
            Mistake(lambda ids, V: _entropy(ids) / math.log(2),
                    "Entropy in nats uses the natural logarithm."),
            Mistake(lambda ids, V: math.log(V),
                    "Weight each id by how often it occurs; the result is not the same for "
                    "every text."),
        )),
    "4.4": Choice(
        needs=("baseline", "margin"), options=("trained", "stalled"),
        expected=lambda g: "trained" if 3.05 < g["baseline"] - g["margin"] else "stalled",
        idea="The chapter's rule compares the loss with a threshold below the unigram "
             "baseline, not with the baseline itself.",
        mistakes=(
            Mistake(lambda g: "stalled" if 3.05 < g["baseline"] - g["margin"] else "trained",
                    "Work out the threshold from baseline and MARGIN (both defined above), "
                    "then see on which side of it the loss lies."),
        )),
    "4.5": Experiment(
        needs=("model", "conclusion"), answers=("model", "conclusion"),
        verify=_verify_4_5, outcome=_first_block_stands_out, options=(True, False),
        idea="Build thin(L, norm='post') with your L and measure grad_norm_by_layer on the "
             "chapter's probe batch (x32, y32), as the chapter did for L = 96.",
        read="Divide your block 1's gradient norm by the median of the other blocks': is it "
             "more than 3?"),

    # -- chapter 5 -----------------------------------------------------------------------
    "5.1a": Function(
        cases=lambda g: [((L,), deepnorm_constants(L).alpha) for L in (1, 6, 48, 1000)],
        rel=1e-12,
        idea="Read alpha's formula above: a root of a multiple of the depth.",
        mistakes=(
            Mistake(lambda L: (8 * L) ** 0.25,
                    "Check the factor inside the root: alpha's differs from beta's."),
            Mistake(lambda L: (2 * L) ** -0.25,
                    "Alpha grows with depth: the exponent is positive."),
        )),
    "5.1b": Function(
        cases=lambda g: [((L,), deepnorm_constants(L).beta) for L in (1, 6, 48, 1000)],
        rel=1e-12,
        idea="Read beta's formula above: it shrinks as the depth grows.",
        mistakes=(
            Mistake(lambda L: (8 * L) ** 0.25,
                    "Beta shrinks as depth grows: the exponent is negative."),
            Mistake(lambda L: (2 * L) ** -0.25,
                    "Check the factor inside the root: beta's differs from alpha's."),
        )),
    "5.2": Function(
        cases=lambda g: [((1.0, 0.5, 10), 1.5), ((0.1, 0.2, 1000), 0.3), ((0.0, 1.0, 3), 1.0)],
        rel=1e-9,
        idea="A factor c on a signal scales its variance by c squared; the embedding's "
             "variance is not scaled.",
        mistakes=(
            Mistake(lambda v0, s, L: v0 + 2 * L * s,
                    "That is the unscaled stack: the factor shrinks what each branch adds."),
            Mistake(lambda v0, s, L: v0 + 2 * L * s / math.sqrt(2 * L),
                    "A factor on a signal scales its variance by that factor squared."),
        )),
    "5.3": Number(
        needs=("grid", "verdict"), integer=True,
        expected=lambda g: sum((g["verdict"](r) == "trained") * (1 if k[0] == "pre" else -1)
                               for k, r in g["grid"].items()),
        idea="Count the cells where each norm trained, using the chapter's verdict on each "
             "run in the grid, and subtract.",
        mistakes=(
            Mistake(lambda g: -sum((g["verdict"](r) == "trained") * (1 if k[0] == "pre" else -1)
                                   for k, r in g["grid"].items()),
                    "The task asks for pre minus post."),
            Mistake(lambda g: sum(g["verdict"](r) == "trained" for k, r in g["grid"].items()
                                  if k[0] == "pre"),
                    "Subtract the cells where post-norm trained."),
        )),
    "5.4": Experiment(
        needs=("model", "conclusion"), answers=("model", "conclusion"),
        verify=_verify_5_4, outcome=lambda v, g: bool(v[-1] / v[0] < 2),
        options=(True, False),
        idea="Build thin(L, 'pre', branch_scale='1/sqrt(2L)') with your L and measure "
             "residual_variance_by_layer on probe_x, as the chapter did for 100 blocks.",
        read="Divide the variance after your last block by the embedding's: is it under 2?"),

    # -- chapter 6 -----------------------------------------------------------------------
    "6.1": Function(
        cases=lambda g: [((12 * 12 * 768 ** 2, 12), 768), ((100_000, 2), 65),
                         ((25_000, 8), 16), ((1_200_000, 1), 316)],
        idea="Solve the budget rule for the width, then round to the nearest integer.",
        mistakes=(
            Mistake(lambda P, L: round(math.sqrt(P / L)),
                    "A layer of width d holds more than d² weights: the rule has a factor."),
            Mistake(lambda P, L: math.floor(math.sqrt(P / (12 * L))),
                    "Round to the nearest integer, not down."),
        )),
    "6.2": Number(
        expected=lambda g: 12288 / 96, rel=1e-9,
        idea="The aspect ratio is width per block.",
        mistakes=(
            Mistake(lambda g: 96 / 12288, "Width over depth, not depth over width."),
            Mistake(lambda g: 12288 // 96 ** 2, "Divide the width by the number of blocks once."),
        )),
    "6.3": Number(
        needs=("sweep",), integer=True,
        expected=lambda g: min((p for p in g["sweep"] if p.budget == 25_000),
                               key=lambda p: p.val_loss).n_layer,
        idea="Keep the points of the 25,000 budget, then find the one with the smallest "
             "validation loss and read its depth.",
        mistakes=(
            Mistake(lambda g: max((p for p in g["sweep"] if p.budget == 25_000),
                                  key=lambda p: p.val_loss).n_layer,
                    "The best shape has the lowest validation loss, not the highest."),
            Mistake(lambda g: min((p for p in g["sweep"] if p.budget != 25_000),
                                  key=lambda p: p.val_loss).n_layer,
                    "Look only at the points of the 25,000 budget."),
        )),
    "6.4": Number(
        needs=("drop_cost", "limit"), integer=True,
        expected=lambda g: _largest_within(g),
        idea="n counts removed blocks from 0; keep the largest n whose loss increase is still "
             "within the limit.",
        mistakes=(
            Mistake(lambda g: _largest_within(g) + 1,
                    "That is one past the answer: n counts removed blocks from 0, and the task "
                    "asks for the last n still within the limit."),
            Mistake(lambda g: len(g["drop_cost"]) - _largest_within(g),
                    "n counts the blocks removed, not the blocks kept."),
        )),
    "6.5": Experiment(
        needs=("model", "droppable", "conclusion"), verify=_verify_6_5,
        outcome=_same_droppable, options=(True, False),
        idea="Draw a new probe batch with another seed and call drop_last_losses(model, x, y) "
             "on the chapter's model; entry 0 is the full model's loss.",
        read="Count the n >= 1 whose loss is within 5 % of your batch's full loss, and "
             "compare that count with the chapter's `droppable`."),

    # -- chapter 7 -----------------------------------------------------------------------
    "7.1": Number(
        needs=("fit",), rel=1e-6, expected=lambda g: g["fit"].predict(96),
        idea="The fitted line gives a fixed cost that every token pays plus a cost per block; "
             "evaluate it at the depth asked for.",
        mistakes=(
            Mistake(lambda g: g["fit"].slope * 96,
                    "Every token also pays the line's fixed part, whatever the depth."),
            Mistake(lambda g: 2 * g["fit"].predict(48),
                    "The fixed part is paid once per token, not once per 48 blocks."),
        )),
    "7.2": Function(
        cases=lambda g: [((L, d, V), _decode_bytes(L, d, V))
                         for L, d, V in ((1, 64, 256), (12, 768, 50257), (48, 512, 96))],
        idea="List what one decode step reads — every block's weights, biases and norms, the "
             "final norm, the whole head, one row of each embedding table — and give bytes "
             "at 4 per fp32 number.",
        mistakes=(
            Mistake(lambda L, d, V: _decode_bytes(L, d, V) // 4,
                    "The task asks for bytes: an fp32 number takes 4."),
            Mistake(lambda L, d, V: _decode_bytes(L, d, V) + 4 * (V - 1) * d,
                    "A decode step reads one row of the token table, not all of it (the tied "
                    "head reads the whole matrix once)."),
        )),
    "7.3": Number(
        needs=("bandwidth",), rel=1e-3,
        expected=lambda g: _decode_bytes(24, 1024, 50257) / (g["bandwidth"] * 1e9) * 1e3,
        idea="The lower bound is the bytes read per token divided by the rate at which "
             "memory delivers them; mind the units (GB/s and ms).",
        mistakes=(
            Mistake(lambda g: _decode_bytes(24, 1024, 50257) / (g["bandwidth"] * 1e9),
                    "That is in seconds: the task asks for milliseconds."),
            Mistake(lambda g: _decode_bytes(24, 1024, 50257) / 4 / (g["bandwidth"] * 1e9) * 1e3,
                    "Count bytes, not parameters: fp32 takes 4 bytes each."),
        )),
    "7.4": Number(
        needs=("head", "fit"), rel=0.02,
        expected=lambda g: g["head"].median / g["fit"].predict(6),
        idea="The large-vocabulary line (fit_big) at this depth is a token's whole time, head "
             "included; the fraction is the head's own time over that total.",
        mistakes=(
            Mistake(lambda g: g["head"].median / (g["head"].median + g["fit"].predict(6)),
                    "fit_big's line already contains the head (it is most of its intercept): "
                    "do not add the head's time again."),
            Mistake(lambda g: g["head"].median / (6 * g["fit"].slope),
                    "A token's time is the whole line at L = 6, intercept included."),
        )),
    "7.5": Experiment(
        needs=("fit", "conclusion"), verify=_verify_7_5, outcome=_under_half_a_block,
        options=(True, False),
        idea="Time two memory-resident depths of a narrower width with measure_latency (the "
             "smallest is first_memory_depth(config, cache)); the difference divided by the "
             "difference in depth is the time of one block at that width.",
        read="Compare your time per block with half of fit.slope, the time per block at d = 512."),

    # -- chapter 8 -----------------------------------------------------------------------
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

#: Exercise 8.1's model: 12 applications of 3 stored blocks at d = 128.
_LOOPED_8_1 = ModelConfig(n_layer=12, d_model=128, n_head=4, vocab_size=96, context=64,
                          n_unique_blocks=3)


def _tensor(values):
    import torch

    return torch.tensor(values)
