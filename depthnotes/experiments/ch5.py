"""Chapter 5's experiments (claims C9, C10, C12): pre-norm against post-norm, how a pre-norm
stack uses its layers, and DeepNorm at depth, up to 1,000 layers.
"""

from __future__ import annotations

import dataclasses

from depthnotes.core.config import ModelConfig
from depthnotes.training.loop import TrainConfig
from depthnotes.experiments.spec import Arm, Experiment, register


@register
def deepnorm_1000_layers(quick: bool = False) -> Experiment:
    L = 3 if quick else 1000
    recipe = TrainConfig(steps=3 if quick else 100, batch_size=2 if quick else 8, context=32,
                         lr=1e-3, warmup_steps=20, grad_clip=1.0,
                         eval_every=1 if quick else 50, eval_batches=1 if quick else 4)
    families = [f for f in FIX_FAMILIES if f[2] in ("post", "deepnorm")]
    arms = tuple(Arm(f"{family}, L={L}", thin_config(L, norm, init), recipe,
                     {"family": family, "short": short, "norm": norm, "init": init,
                      "n_layer": L})
                 for family, short, norm, init in families)
    return Experiment(
        name="deepnorm_1000_layers", quick=quick,
        description=(
            "Chapter 5 (C12): DeepNorm against plain post-norm with the papers' Xavier init "
            "(the arms of deepnorm_depth_comparison) at 1,000 blocks of the thin shape "
            "(d = 64, FFN 128, 2 heads; 33.5 million parameters), a decoder-only stack. Both "
            "arms get the same 100 steps of 8 x 32 characters (small batches keep the memory "
            "at a few GB), AdamW lr 1e-3, 20 warm-up steps, cosine decay, clipping at 1; "
            "validation loss after steps 50 and 100 on 4 batches of 8 x 32 held-out "
            "characters. One seed each: an illustration, not a verdict (the book asks "
            "for 3); the seeded comparison is deepnorm_depth_comparison at L = 48 and 200. "
            "DeepNet's 1,000 layers are an encoder-decoder (500 + 500 blocks) trained for "
            "many thousands of steps on large batches: this is a far shorter and a different "
            "test. CPU estimate about 12 minutes (about 3.4 s per step at 1,000 blocks, "
            "timed). Both arms run the same steps; post-norm uses Xavier, like the rest of "
            "the chapter."),
        measures=("training loss per step; validation loss after steps 50 and 100 (4 batches "
                  "of 8 x 32 held-out characters); whether and where a run diverged"),
        data="python_topics", arms=arms, seeds=(0,))


#: Chapter 5's arm families at each depth: (label, short label, norm, init). Post-norm and
#: pre-norm take the post-LN papers' Xavier init, so the two differ in the norm's place only;
#: DeepNorm takes DeepNet's init (Xavier with gain beta), so it differs from post-norm/Xavier
#: in alpha and beta only.
FIX_FAMILIES = (
    ("post-norm, Xavier", "post X", "post", "xavier"),
    ("DeepNorm", "DeepNorm", "deepnorm", "deepnorm"),
    ("pre-norm, Xavier", "pre X", "pre", "xavier"),
)


#: CPU cost of one training step per block at d = 64, batch 16 x 64, one thread, timed with
#: ``nice 19`` on the machine that wrote the records (about 6.2 ms under load; about 5.4 ms on
#: an idle core): the CPU estimates in the descriptions below use 6.2 ms.
MS_PER_BLOCK_STEP = 6.2


def thin_config(n_layer: int, norm: str = "pre", init: str = "normal",
                **changes) -> ModelConfig:
    """DeepNet's thin shape, as chapters 4 and 5 train it: d = 64, FFN 128, 2 heads, context
    64, the shipped corpus's vocabulary (``changes``: other ``ModelConfig`` fields, e.g.
    ``branch_scale``). The defaults are chapter 4's notebook's ``thin``."""
    from depthnotes.data.corpus import load_corpus

    return ModelConfig(n_layer=n_layer, d_model=64, n_head=2, d_ff=128,
                       vocab_size=load_corpus().vocab_size, context=64, norm=norm,
                       init=init, **changes)


def _norm_grid(depths, lrs, warmups, recipe: TrainConfig, family: str) -> tuple:
    """Post-norm and pre-norm arms (Xavier, the thin shape) on a depth x rate x warm-up
    grid; ``family`` is the format of the arms' family label (fields norm, lr, wu)."""
    return tuple(
        Arm(f"{norm}-norm, lr={lr:g}, warm-up={wu}, L={L}",
            thin_config(L, norm, "xavier"), recipe.replace(lr=lr, warmup_steps=wu),
            {"family": family.format(norm=norm, lr=lr, wu=wu), "norm": norm, "lr": lr,
             "warmup_steps": wu, "n_layer": L})
        for L in depths for lr in lrs for wu in warmups for norm in ("post", "pre"))


@register
def prenorm_vs_postnorm_grid(quick: bool = False) -> Experiment:
    depths, lrs, warmups = ((1, 2), (1e-3, 1e-2), (0, 2)) if quick else \
        ((8, 24), (1e-3, 1e-2), (0, 50))
    recipe = TrainConfig(steps=4 if quick else 200, batch_size=4 if quick else 16,
                         context=16 if quick else 64, lr=1e-3, decay="cosine", grad_clip=1.0,
                         eval_every=2 if quick else 100, eval_batches=1 if quick else 16,
                         eval_seed=0)
    arms = _norm_grid(depths, lrs, warmups, recipe, "{norm}-norm, lr={lr:g}, warm-up={wu}")
    return Experiment(
        name="prenorm_vs_postnorm_grid", quick=quick,
        description=(
            "Chapter 5 (C9): pre-norm against post-norm on a learning-rate x warm-up grid at "
            "two depths. The thin shape (d = 64, FFN 128, 2 heads), both norms with the "
            "post-LN papers' Xavier init (the arms differ in the norm's place only), L = 8 and "
            "24, peak learning rate 1e-3 and 1e-2, 0 and 50 warm-up steps; 200 steps of "
            "16 x 64 characters, AdamW, cosine decay to a tenth of the peak, clipping at 1; "
            "validation loss after steps 100 and 200 on 16 batches of 16 x 64 held-out "
            "characters. 3 seeds per arm (48 runs). CPU estimate about 17 minutes (6.2 ms "
            "per block per step). Cut to fit the chapter's 90 CPU-minutes: two learning "
            "rates and two warm-ups (no 3e-3, no longer warm-up), two depths, 200 steps "
            "(about half an epoch), 3 seeds rather than 5."),
        measures=("training loss per step; validation loss after steps 100 and 200 (the "
                  "same 16 batches of 16 x 64 held-out characters for every run); whether "
                  "and where a run diverged"),
        data="python_topics", arms=arms, seeds=(0, 1, 2))


@register
def prenorm_vs_postnorm_shallow(quick: bool = False) -> Experiment:
    depths, lrs, warmups = ((1, 2), (1e-3, 1e-2), (0, 2)) if quick else \
        ((4, 6), (3e-4, 1e-3, 3e-3, 1e-2, 3e-2), (0, 50))
    recipe = TrainConfig(steps=4 if quick else 300, batch_size=4 if quick else 16,
                         context=16 if quick else 64, lr=1e-3, decay="cosine", grad_clip=1.0,
                         eval_every=2 if quick else 100, eval_batches=1 if quick else 32,
                         eval_seed=0)
    arms = _norm_grid(depths, lrs, warmups, recipe, "{norm}-norm, warm-up={wu}")
    return Experiment(
        name="prenorm_vs_postnorm_shallow", quick=quick,
        description=(
            "Chapter 5 (C9): pre-norm against post-norm where post-norm still trains. The "
            "thin shape (d = 64, FFN 128, 2 heads), both norms with Xavier init (the arms "
            "differ in the norm's place only), L = 4 and 6, peak learning rates 3e-4, 1e-3, "
            "3e-3, 1e-2 and 3e-2, with 0 and 50 warm-up steps; 300 steps of 16 x 64 "
            "characters, AdamW, cosine decay to a tenth of the peak, clipping at 1; "
            "validation loss after steps 100, 200 and 300 on the same 32 batches of 16 x 64 "
            "held-out characters for every seed. 3 seeds per arm (120 runs)."),
        measures=("training loss per step; validation loss after steps 100, 200 and 300 (the "
                  "same 32 batches of 16 x 64 held-out characters for every run); whether "
                  "and where a run diverged"),
        data="python_topics", arms=arms, seeds=(0, 1, 2))


@register
def prenorm_layer_use(quick: bool = False) -> Experiment:
    L = 4 if quick else 48
    recipe = TrainConfig(steps=4 if quick else 500, batch_size=4 if quick else 16,
                         context=16 if quick else 64, lr=1e-3, warmup_steps=2 if quick else 50,
                         decay="cosine", grad_clip=1.0, eval_every=2 if quick else 100,
                         eval_batches=1 if quick else 16, eval_seed=0)
    probe = {"name": "layer_use", "batches": 1 if quick else 4,
             "batch_size": 2 if quick else 16, "context": 16 if quick else 64}
    arm = Arm(f"pre-norm, Xavier, L={L}", thin_config(L, "pre", "xavier"), recipe,
              {"family": "pre-norm, Xavier", "n_layer": L, "probe": probe})
    return Experiment(
        name="prenorm_layer_use", quick=quick,
        description=(
            "Chapter 5 (C10): does a trained pre-norm model under-use its deepest blocks? "
            "One 48-block pre-norm model of the thin shape (Xavier init), trained 500 steps "
            "of 16 x 64 characters (about 1.0 epoch), AdamW lr 1e-3, 50 warm-up "
            "steps, cosine decay, clipping at 1. On 4 fixed held-out batches of 16 x 64 "
            "characters, before training and after it (the same model, so the untrained "
            "numbers are its own), each block's relative contribution ||F|| / ||x|| and the "
            "rise in loss when that one block is removed (record_probes, 'layer_use'). "
            "3 seeds. CPU estimate about 10 minutes (6.2 ms per block per step, plus 48 "
            "block removals x 4 batches twice per seed). Cut: one depth, 500 steps, 3 seeds."),
        measures=("training loss per step; validation loss every 100 steps (the same 16 "
                  "batches for every run); per block, untrained and trained: relative "
                  "contribution and loss rise when removed, on 4 held-out batches of 16 x 64 "
                  "characters"),
        data="python_topics", arms=(arm,), seeds=(0, 1, 2))


#: ``prenorm_vs_postnorm_shallow_top``'s rates: above that grid's top (3e-2), where pre-norm
#: still trained on every seed with and without warm-up, so that a rise of its highest
#: trainable rate with warm-up could not be seen (C9b's warm-up part).
SHALLOW_TOP_LRS = (1e-1, 3e-1)


@register
def prenorm_vs_postnorm_shallow_top(quick: bool = False) -> Experiment:
    base = prenorm_vs_postnorm_shallow(quick)
    depths, warmups = ((1, 2), (0, 2)) if quick else ((4, 6), (0, 50))
    lrs = SHALLOW_TOP_LRS[:1] if quick else SHALLOW_TOP_LRS
    arms = _norm_grid(depths, lrs, warmups, base.arms[0].recipe, "{norm}-norm, warm-up={wu}")
    return Experiment(
        name="prenorm_vs_postnorm_shallow_top", quick=quick,
        description=(
            "Chapter 5 (C9b): prenorm_vs_postnorm_shallow's arms (both norms, L = 4 and 6, "
            "0 and 50 warm-up steps), model, recipe and seeds at two higher peak rates, 1e-1 "
            "and 3e-1: pre-norm trained on every seed at that grid's top rate, 3e-2, with "
            "and without warm-up, so whether warm-up raises its highest trainable rate "
            "could not be seen. The chapter reads the two records as one "
            "(records.combine_records). 3 seeds (48 runs), about 8 CPU-minutes."),
        measures=base.measures, data=base.data, arms=arms, seeds=base.seeds)


#: ``prenorm_layer_use_rates``' rates: around ``prenorm_layer_use``'s one rate, 1e-3, one below
#: and two above (on the 450-step recipe of ``layer_use_48_long`` pre-norm did best at 3e-3).
LAYER_USE_LRS = (3e-4, 3e-3, 1e-2)


@register
def prenorm_layer_use_rates(quick: bool = False) -> Experiment:
    base = prenorm_layer_use(quick)
    (arm,) = base.arms
    lrs = LAYER_USE_LRS[1:2] if quick else LAYER_USE_LRS
    arms = tuple(Arm(f"{arm.name}, lr={lr:g}", arm.model, arm.recipe.replace(lr=lr),
                     {**arm.info, "lr": lr}) for lr in lrs)
    return Experiment(
        name="prenorm_layer_use_rates", quick=quick,
        description=(
            "Chapter 5 (C10): prenorm_layer_use's 48-block pre-norm stack, recipe, probes "
            "and seeds at three more peak rates (3e-4, 3e-3, 1e-2; with the stored 1e-3, "
            "four rates about 3x apart), so that the contribution part is judged at the "
            "stack's best rate, bracketed, as every trained comparison of the book is. The "
            "chapter reads the two records as one (records.combine_records). 3 seeds (9 "
            "runs), about 32 CPU-minutes."),
        measures=base.measures, data=base.data, arms=arms, seeds=base.seeds)


def _depth_recipe(quick: bool) -> TrainConfig:
    """The one recipe of the depth comparisons (``deepnorm_depth_comparison`` and the records
    that add rates or steps to it): 8 x 64 characters per step, peak 1e-3, 20 warm-up steps,
    cosine decay, clipping at 1, 16 held-out batches; each record sets its steps."""
    return TrainConfig(batch_size=4 if quick else 8, context=16 if quick else 64, lr=1e-3,
                       warmup_steps=1 if quick else 20, decay="cosine", grad_clip=1.0,
                       eval_batches=1 if quick else 16)


def _fix_arm(family_row: tuple, n_layer: int, recipe: TrainConfig,
             lr: float | None = None) -> Arm:
    """One arm of the depth comparisons: a family of ``FIX_FAMILIES`` in the thin shape at
    ``n_layer`` blocks, trained by ``recipe`` (at ``lr``, which then joins its name and info;
    None: the recipe's own rate, named without it)."""
    family, short, norm, init = family_row
    info = {"family": family, "short": short, "norm": norm, "init": init, "n_layer": n_layer,
            **({} if lr is None else {"lr": lr})}
    rate = "" if lr is None else f", lr={lr:g}"
    return Arm(f"{family}{rate}, L={n_layer}", thin_config(n_layer, norm, init),
               recipe if lr is None else recipe.replace(lr=lr), info)


def _depth_comparison_arms(quick: bool, lrs: tuple[float, ...] | None = None) -> tuple:
    """The arms of ``deepnorm_depth_comparison`` (``lrs=None``: its one rate, 1e-3, and its arm
    names), or the same arms at each rate of ``lrs`` (names and info carry the rate)."""
    plan = {1: 4, 2: 3} if quick else {48: 400, 200: 200}       # depth -> steps
    base = _depth_recipe(quick)
    return tuple(_fix_arm(row, L, base.replace(steps=steps,
                                               eval_every=1 if quick else steps // 4), lr)
                 for lr in (lrs or (None,)) for L, steps in plan.items()
                 for row in FIX_FAMILIES)


@register
def deepnorm_depth_comparison(quick: bool = False) -> Experiment:
    arms = _depth_comparison_arms(quick)
    return Experiment(
        name="deepnorm_depth_comparison", quick=quick,
        description=(
            "Chapter 5 (C9 depth, C12): post-norm with the papers' Xavier init, DeepNorm "
            "(alpha = (2L)^(1/4) on the residual, DeepNet's beta-scaled Xavier init) and "
            "pre-norm with Xavier init, in the thin shape at L = 48 and 200. One recipe for "
            "every arm: 8 x 64 characters per step, AdamW lr 1e-3, 20 warm-up steps, cosine "
            "decay to a tenth, clipping at 1; 400 steps at L = 48 and 200 at L = 200, "
            "validation loss four times per run on 16 batches of 8 x 64 held-out "
            "characters. 3 seeds per arm. CPU estimate about 40 minutes (timed: about 0.2 s "
            "per step at L = 48 and 0.8 s at L = 200 with batches of 8 x 64). Cut: batches "
            "of 8 rather than chapter 4's 16 sequences (more updates for the same CPU, "
            "which the slow start of deep stacks needs more than larger batches), 200 steps "
            "at L = 200 (about 0.25 epoch), one learning rate, 3 seeds rather than 5."),
        measures=("training loss per step; validation loss four times per run (16 batches "
                  "of 8 x 64 held-out characters); whether and where a run diverged"),
        data="python_topics", arms=tuple(arms), seeds=(0, 1, 2))


#: The learning rates ``deepnorm_depth_lr`` adds to ``deepnorm_depth_comparison``'s 1e-3: a
#: grid of three rates about 3x apart for every arm (book/methods.md, "How a claim is judged").
DEPTH_LR_GRID = (3e-4, 3e-3)


@register
def deepnorm_depth_lr(quick: bool = False) -> Experiment:
    arms = _depth_comparison_arms(quick, DEPTH_LR_GRID)
    return Experiment(
        name="deepnorm_depth_lr", quick=quick,
        description=(
            "Chapter 5 (C9 depth, C12): the arms of deepnorm_depth_comparison (post-norm "
            "with Xavier init, DeepNorm, pre-norm with Xavier init; the thin shape at L = 48 "
            "and 200; the same recipe, steps and seeds) at two more peak learning rates, "
            "3e-4 and 3e-3, so that with the comparison's 1e-3 every arm has a grid of three "
            "rates about 3x apart and the chapter scores each arm at its best rate "
            "(verdicts.ch4_trainability.depth_outcomes), never at one rate chosen for one arm. 3e-4 is "
            "the smaller rate the post-LN papers give post-norm; 3e-3 asks whether the deep "
            "pre-norm and DeepNorm stacks, still falling at 200 steps, were held back by the "
            "rate. 3 seeds per arm (36 runs). CPU estimate about 80 minutes (twice "
            "deepnorm_depth_comparison). Cut: three rates, no longer runs at L = 200."),
        measures=("training loss per step; validation loss four times per run (16 batches "
                  "of 8 x 64 held-out characters); whether and where a run diverged"),
        data="python_topics", arms=arms, seeds=(0, 1, 2))


#: The peak rates ``deepnorm_depth_200_long`` gives each family at L = 200: each grid is
#: centred on that family's best rate in the 200-step records (post-norm's was flat;
#: pre-norm's best, 3e-3, sat at that grid's top, so its grid moves up one step).
LONG_200_RATES = {"post": (3e-4, 1e-3, 3e-3), "deepnorm": (3e-4, 1e-3, 3e-3),
                  "pre": (1e-3, 3e-3, 1e-2)}


#: What the 400-step records on one held-out text (L = 48 and 200) measure.
MEASURES_200_LONG = ("training loss per step; validation loss four times per run (the same 16 "
                     "batches of 8 x 64 held-out characters for every run); whether and where "
                     "a run diverged")


def _recipe_400(quick: bool) -> TrainConfig:
    """The 400-step depth records' recipe (8 steps in the quick variant): ``_depth_recipe``,
    validation four times per run, every seed on the same held-out text."""
    steps = 8 if quick else 400
    return _depth_recipe(quick).replace(steps=steps, eval_every=steps // 4, eval_seed=0)


def _arms_200_long(quick: bool, rates: dict, n_layer: int = 200) -> tuple:
    """``deepnorm_depth_200_long``'s arms (the families of ``FIX_FAMILIES`` at ``n_layer``
    blocks, 400 steps, every seed on the same held-out text) at ``rates`` (``{norm: rates}``;
    a family missing from it is left out)."""
    L = 2 if quick else n_layer
    recipe = _recipe_400(quick)
    return tuple(_fix_arm(row, L, recipe, lr)
                 for row in FIX_FAMILIES for lr in rates.get(row[2], ()))


def _long_record(name: str, quick: bool, rates: dict, description: str,
                 n_layer: int = 200) -> Experiment:
    """One of the 400-step depth records on one held-out text: ``_arms_200_long``'s arms at
    ``rates`` and ``n_layer`` blocks, three seeds, ``MEASURES_200_LONG``; ``description`` may
    give the run count as ``{runs}``."""
    arms, seeds = _arms_200_long(quick, rates, n_layer), (0, 1, 2)
    return Experiment(name=name, quick=quick,
                      description=description.format(runs=len(arms) * len(seeds)),
                      measures=MEASURES_200_LONG, data="python_topics", arms=arms,
                      seeds=seeds)


@register
def deepnorm_depth_200_long(quick: bool = False) -> Experiment:
    return _long_record(
        "deepnorm_depth_200_long", quick, LONG_200_RATES,
        "Chapter 5 (C9 depth, C12): the three arms of deepnorm_depth_comparison at "
        "L = 200 (post-norm with Xavier init, DeepNorm, pre-norm with Xavier init; the "
        "same recipe: 8 x 64 characters per step, 20 warm-up steps, cosine decay to a "
        "tenth, clipping at 1) trained for 400 steps, as many tokens as the L = 48 arms "
        "saw (the 200-step runs had half), each at three peak rates about 3x apart "
        "(post-norm and DeepNorm 3e-4, 1e-3, 3e-3; pre-norm 1e-3, 3e-3, 1e-2). Every "
        "seed is scored on the same 16 held-out batches of 8 x 64 characters, four times "
        "per run. 3 seeds per arm (27 runs). CPU estimate about 150 CPU-minutes (0.8 s "
        "per step). Cut: one depth, three rates per arm, pre-norm with Xavier init only.")


#: The rates ``deepnorm_depth_200_long_low`` adds: one step below each grid whose best rate
#: ``deepnorm_depth_200_long`` did not bracket at its low end (DeepNorm's best was 3e-4, the
#: lowest; pre-norm's lowest, 1e-3, was within noise of its best, 3e-3).
LONG_200_LOW_RATES = {"deepnorm": (1e-4,), "pre": (3e-4,)}


@register
def deepnorm_depth_200_long_low(quick: bool = False) -> Experiment:
    return _long_record(
        "deepnorm_depth_200_long_low", quick, LONG_200_LOW_RATES,
        "Chapter 5 (C9 depth, C12): deepnorm_depth_200_long's DeepNorm at 1e-4 and "
        "pre-norm (Xavier) at 3e-4, the same recipe, seeds and held-out text, added "
        "after that record was read: DeepNorm's best rate there was its grid's lowest, "
        "and pre-norm's lowest rate was within noise of its best, so neither grid "
        "bracketed the best and L = 200 was not testable. The rule does not change. "
        "3 seeds per arm ({runs} runs). CPU estimate about 35 CPU-minutes. "
        "Cut: one rate more per arm, none for post-norm (its grid was flat).")


#: The rate ``deepnorm_depth_200_post_low`` adds: one step below post-norm's grid at L = 200,
#: which was flat (3e-4 to 3e-3, every rate stalled at the unigram baseline).
LONG_200_POST_LOW_RATES = {"post": (1e-4,)}


@register
def deepnorm_depth_200_post_low(quick: bool = False) -> Experiment:
    return _long_record(
        "deepnorm_depth_200_post_low", quick, LONG_200_POST_LOW_RATES,
        "Chapter 5 (C9 depth, C12): deepnorm_depth_200_long's post-norm arm (Xavier "
        "init, L = 200, 400 steps; the same recipe, seeds and held-out text) at 1e-4, "
        "one step below its grid, added after that record was read: post-norm stalled "
        "at the unigram baseline at every rate from 3e-4 to 3e-3, a flat grid, and a "
        "smaller rate is the one the post-LN papers would try next. The rule does not "
        "change. 3 seeds ({runs} runs). CPU estimate about 25 CPU-minutes. "
        "Cut: one rate more.")


#: The rate ``deepnorm_depth_200_post_high`` adds: one step above post-norm's grid at L = 200,
#: whose best, 3e-3, sat at the top of a flat stretch (3e-4 to 3e-3) once 1e-4 was added.
LONG_200_POST_HIGH_RATES = {"post": (1e-2,)}


@register
def deepnorm_depth_200_post_high(quick: bool = False) -> Experiment:
    return _long_record(
        "deepnorm_depth_200_post_high", quick, LONG_200_POST_HIGH_RATES,
        "Chapter 5 (C9 depth, C12): deepnorm_depth_200_long's post-norm arm (Xavier "
        "init, L = 200, 400 steps; the same recipe, seeds and held-out text) at 1e-2, "
        "one step above its grid, added after deepnorm_depth_200_post_low was read: "
        "post-norm's best there, 3e-3, is the top of its grid, on a stretch of rates "
        "within noise of it (3e-4 to 3e-3), and only a higher rate tests that stretch "
        "from above. The rule does not change. 3 seeds ({runs} runs). CPU "
        "estimate about 15 CPU-minutes. Cut: one rate more.")


#: The peak rates ``deepnorm_depth_48_same_text`` gives each family at L = 48: the grid of
#: ``deepnorm_depth_lr`` (3e-4, 1e-3, 3e-3) with one step above for post-norm and pre-norm,
#: whose best rates there sat at that grid's top.
SAME_TEXT_48_RATES = {"post": (3e-4, 1e-3, 3e-3, 1e-2), "deepnorm": (3e-4, 1e-3, 3e-3),
                      "pre": (3e-4, 1e-3, 3e-3, 1e-2)}


@register
def deepnorm_depth_48_same_text(quick: bool = False) -> Experiment:
    return _long_record(
        "deepnorm_depth_48_same_text", quick, SAME_TEXT_48_RATES,
        "Chapter 5 (C9 depth, C12): the L = 48 arms of deepnorm_depth_comparison and "
        "deepnorm_depth_lr (post-norm with Xavier init, DeepNorm, pre-norm with Xavier "
        "init; the same recipe, 400 steps and seeds, so the same training runs) scored "
        "on one held-out text for every seed, as the L = 200 records are (those two "
        "records drew each seed's held-out batches from its own seed), with 1e-2 added "
        "for post-norm and pre-norm, whose best rates sat at the top of the old grid "
        "(3e-4, 1e-3, 3e-3). Every seed is scored on the same 16 held-out batches of "
        "8 x 64 characters, four times per run. 3 seeds per arm "
        "({runs} runs). CPU estimate about 50 CPU-minutes (0.2 s per step). "
        "Cut: one depth, four rates at most per arm.",
        n_layer=48)


#: Pre-norm with GPT-2's init, as ``fixes_at_48_gpt2``'s family, on the 400-step depth records
#: (``deepnorm_depth_pre_gpt2``): its rates, three about 3x apart around its best in that
#: record (1e-3 at 150 steps, bracketed by 3e-4 and 3e-3).
PRE_GPT2 = ("pre-norm, GPT-2 init", "pre G", "pre", "gpt2")
DEPTH_GPT2_RATES = (3e-4, 1e-3, 3e-3)


@register
def deepnorm_depth_pre_gpt2(quick: bool = False) -> Experiment:
    arms = tuple(_fix_arm(PRE_GPT2, L, _recipe_400(quick), lr)
                 for L in ((1, 2) if quick else (48, 200)) for lr in DEPTH_GPT2_RATES)
    return Experiment(
        name="deepnorm_depth_pre_gpt2", quick=quick,
        description=(
            "Chapter 5 (C9a, C12): pre-norm with GPT-2's init (N(0, 0.02^2) on every "
            "matrix, 0.02/sqrt(2L) on the two projections into the stream) added to the "
            "400-step depth records at L = 48 and 200 (deepnorm_depth_48_same_text and "
            "deepnorm_depth_200_long: the same recipe, 8 x 64 characters per step, 20 "
            "warm-up steps, cosine decay to a tenth, clipping at 1, and the same 16 held-out "
            "batches for every seed), at peak rates 3e-4, 1e-3 and 3e-3, so that pre-norm is "
            "compared with DeepNorm under both inits, not only the post-LN papers' Xavier "
            "(at 150 steps and L = 48, GPT-2's init ended 0.27 nats below Xavier's). "
            "Defined 2026-12-06, before it ran. 3 seeds per arm (18 runs). CPU estimate "
            "about 80 CPU-minutes (0.2 s per step at L = 48, 0.8 s at L = 200). Cut: three "
            "rates per depth, no post-norm with GPT-2's init at these lengths."),
        measures=MEASURES_200_LONG, data="python_topics", arms=arms, seeds=(0, 1, 2))


#: The rate ``deepnorm_depth_pre_gpt2_high`` adds at L = 48: one step above the grid, whose top
#: rate, 3e-3, was within noise of the best, 1e-3 (one of its seeds ended far above the others),
#: so the grid did not bracket the best there.
PRE_GPT2_HIGH_48 = 1e-2


@register
def deepnorm_depth_pre_gpt2_high(quick: bool = False) -> Experiment:
    arms = (_fix_arm(PRE_GPT2, 1 if quick else 48, _recipe_400(quick), PRE_GPT2_HIGH_48),)
    return Experiment(
        name="deepnorm_depth_pre_gpt2_high", quick=quick,
        description=(
            "Chapter 5 (C9a, C12): deepnorm_depth_pre_gpt2's pre-norm with GPT-2's init at "
            "L = 48 (the same recipe, seeds and held-out text) at 1e-2, one step above its "
            "grid, added after that record was read: its top rate, 3e-3, was within noise "
            "of its best, 1e-3, so the grid did not bracket the best at 48 blocks. The rule "
            "does not change. 3 seeds (3 runs). CPU estimate about 3 CPU-minutes. Cut: one "
            "rate more, at one depth (at L = 200 the grid bracketed its best)."),
        measures=MEASURES_200_LONG, data="python_topics", arms=arms, seeds=(0, 1, 2))


@register
def deepnorm_update_size(quick: bool = False) -> Experiment:
    depths = (1, 2, 3) if quick else (6, 12, 24, 48, 96, 200)
    recipe = TrainConfig(steps=3 if quick else 5, batch_size=4 if quick else 16,
                         context=16 if quick else 64, lr=1e-3, warmup_steps=0,
                         decay="constant", grad_clip=None, eval_every=0, eval_batches=1,
                         eval_seed=0)
    probe = {"name": "update_size", "batch_size": 2 if quick else 8,
             "context": 16 if quick else 64}
    arms = tuple(Arm(f"{family}, lr={lr:g}, L={L}", thin_config(L, norm, init),
                     recipe.replace(lr=lr),
                     {"family": family, "short": short, "norm": norm, "init": init,
                      "lr": lr, "n_layer": L, "probe": probe})
                 for lr in (1e-4, 1e-3) for L in depths
                 for family, short, norm, init in FIX_FAMILIES)
    return Experiment(
        name="deepnorm_update_size", quick=quick,
        description=(
            "Chapter 5 (C12): DeepNet's early-update measure ||F(x; theta_t) - F(x; theta_0)||"
            " (the output representation's move from its initial value, per token, on one "
            "fixed held-out batch of 8 x 64 characters) after each of the first 5 steps, "
            "for the arms of deepnorm_depth_comparison (post-norm/Xavier, DeepNorm, "
            "pre-norm/Xavier) at L = 6, 12, 24, 48, 96 and 200. AdamW at a constant rate, "
            "no warm-up, no clipping, 16 x 64 characters per step, at two rates: 1e-3 (the "
            "harsh start that warm-up exists to soften; in a calibration run post-norm's "
            "first update was already near its ceiling, the length of a LayerNorm's output, "
            "at every depth) and 1e-4 (the rate of a warm-up's early steps). 3 seeds per "
            "arm. CPU estimate about 4 minutes."),
        measures="the update size after each of the first 5 steps; the training loss",
        data="python_topics", arms=arms, seeds=(0, 1, 2))


#: The families of ``fixes_at_48`` with the rates each is trained at (label, short, norm,
#: init, rates): three rates about 3x apart placed around each family's best in
#: ``deepnorm_depth_lr`` (pre-norm's 3e-3 sat at that grid's top), and two for Xavier
#: post-norm, which stalls at every rate chapter 4 tried at this depth.
FIXES_48 = (
    ("post-norm, Xavier", "post X", "post", "xavier", (1e-3, 3e-3)),
    ("DeepNorm", "DeepNorm", "deepnorm", "deepnorm", (3e-4, 1e-3, 3e-3)),
    ("pre-norm, Xavier", "pre X", "pre", "xavier", (1e-3, 3e-3, 1e-2)),
)
#: Pre-norm with GPT-2's init (0.02 on every matrix, 0.02/sqrt(2L) on the two projections
#: into the stream) at L = 48 (``fixes_at_48_gpt2``).
GPT2_48 = (("pre-norm, GPT-2 init", "pre G", "pre", "gpt2", (1e-3, 3e-3, 1e-2)),)
#: DeepNorm taken apart at L = 48 (``deepnorm_ablation_48``).
ABLATION_48 = (
    ("alpha only", "alpha", "deepnorm", "xavier", (3e-4, 1e-3, 3e-3)),
    ("beta only", "beta", "post", "deepnorm", (3e-4, 1e-3, 3e-3)),
)


def _recipe_48(quick: bool) -> TrainConfig:
    """The one recipe of the L = 48 comparisons: 150 steps of 8 x 64 characters, AdamW, 15
    warm-up steps, cosine decay to a tenth, clipping at 1; validation every 50 steps on the
    same 24 batches of 8 x 64 held-out characters for every run."""
    return TrainConfig(steps=3 if quick else 150, batch_size=2 if quick else 8,
                       context=16 if quick else 64, lr=1e-3, warmup_steps=1 if quick else 15,
                       decay="cosine", grad_clip=1.0, eval_every=1 if quick else 50,
                       eval_batches=1 if quick else 24, eval_seed=0)


def _arms_48(families, quick: bool, probe: dict | None) -> tuple:
    L = 2 if quick else 48
    recipe = _recipe_48(quick)
    return tuple(
        Arm(f"{family}, lr={lr:g}, L={L}", thin_config(L, norm, init), recipe.replace(lr=lr),
            {"family": family, "short": short, "norm": norm, "init": init, "n_layer": L,
             "lr": lr, **({"probe": probe} if probe else {})})
        for family, short, norm, init, rates in families for lr in rates)


def _probe_48(quick: bool) -> dict:
    """The per-block probe of the 48-block records (C10): each block's contribution and
    removal cost, before and after training, on 2 fixed held-out batches of 16 x 64."""
    return {"name": "layer_use", "batches": 1 if quick else 2,
            "batch_size": 2 if quick else 16, "context": 16 if quick else 64}


@register
def fixes_at_48(quick: bool = False) -> Experiment:
    probe = _probe_48(quick)
    return Experiment(
        name="fixes_at_48", quick=quick,
        description=(
            "Chapter 5 (C9a, C10, C12): the fixes against Xavier post-norm at 48 blocks of "
            "the thin shape (d = 64, FFN 128, 2 heads), one recipe for every arm: 150 steps "
            "of 8 x 64 characters, AdamW, 15 warm-up steps, cosine decay to a tenth, "
            "clipping at 1, validation every 50 steps on the same 24 batches of 8 x 64 "
            "held-out characters for every run. Families and peak rates: post-norm with "
            "Xavier init (1e-3, 3e-3), DeepNorm (3e-4, 1e-3, 3e-3), pre-norm with Xavier "
            "init (1e-3, 3e-3, 1e-2). Every model is probed "
            "before and after training on 2 fixed held-out batches of 16 x 64 characters: "
            "each block's relative contribution ||F|| / ||x|| and the rise in loss when that "
            "one block is removed (C10, with DeepNorm as the control). 3 seeds per arm. Cut "
            "to fit a shared machine: one depth, 150 steps (0.15 epoch), 3 seeds."),
        measures=("training loss per step; validation loss every 50 steps (the same 24 "
                  "batches of 8 x 64 held-out characters for every run); per block, "
                  "untrained and trained: relative contribution and loss rise when removed"),
        data="python_topics", arms=_arms_48(FIXES_48, quick, probe), seeds=(0, 1, 2))


@register
def deepnorm_ablation_48(quick: bool = False) -> Experiment:
    return Experiment(
        name="deepnorm_ablation_48", quick=quick,
        description=(
            "Chapter 5 (C12): DeepNorm taken apart at 48 blocks, with fixes_at_48's recipe "
            "and validation text: alpha = (2L)^(1/4) on the residual with Xavier's init "
            "(alpha only), and DeepNet's beta-scaled init in a plain post-norm stack (beta "
            "only), each at peak rates 3e-4, 1e-3 and 3e-3. 3 seeds per arm."),
        measures=("training loss per step; validation loss every 50 steps (the same 24 "
                  "batches of 8 x 64 held-out characters for every run)"),
        data="python_topics", arms=_arms_48(ABLATION_48, quick, None), seeds=(0, 1, 2))


@register
def fixes_at_48_gpt2(quick: bool = False) -> Experiment:
    return Experiment(
        name="fixes_at_48_gpt2", quick=quick,
        description=(
            "Chapter 5 (C9a): pre-norm with GPT-2's init (N(0, 0.02²) on every matrix, "
            "0.02/sqrt(2L) on the two projections into the stream) at 48 blocks, with "
            "fixes_at_48's recipe and validation text, at peak rates 1e-3, 3e-3 and 1e-2. "
            "3 seeds per arm."),
        measures=("training loss per step; validation loss every 50 steps (the same 24 "
                  "batches of 8 x 64 held-out characters for every run)"),
        data="python_topics", arms=_arms_48(GPT2_48, quick, None), seeds=(0, 1, 2))


#: The rates added at L = 48 where a family's best rate sat at (or was within noise of) an
#: edge of its grid in ``fixes_at_48``, ``fixes_at_48_gpt2`` or ``deepnorm_ablation_48``
#: (``fixes_at_48_edges``): the first two families are probed as in ``fixes_at_48``.
EDGES_48_PROBED = (
    ("post-norm, Xavier", "post X", "post", "xavier", (1e-2,)),
    ("pre-norm, Xavier", "pre X", "pre", "xavier", (3e-2,)),
)
EDGES_48 = (
    ("pre-norm, GPT-2 init", "pre G", "pre", "gpt2", (1e-4, 3e-4)),
    ("alpha only", "alpha", "deepnorm", "xavier", (1e-2,)),
)


@register
def fixes_at_48_edges(quick: bool = False) -> Experiment:
    probe = _probe_48(quick)
    return Experiment(
        name="fixes_at_48_edges", quick=quick,
        description=(
            "Chapter 5 (C9a, C10, C12): four families at 48 blocks of the thin shape at more "
            "peak rates, with fixes_at_48's recipe and validation text: post-norm with "
            "Xavier init at 1e-2 and pre-norm with Xavier init at 3e-2 (both probed as in "
            "fixes_at_48), pre-norm with GPT-2's init at 1e-4 and 3e-4, and alpha only "
            "(alpha = (2L)^(1/4) with Xavier's init) at 1e-2. 3 seeds per arm (15 runs)."),
        measures=("training loss per step; validation loss every 50 steps (the same 24 "
                  "batches of 8 x 64 held-out characters for every run); for the two probed "
                  "families, per block, untrained and trained: relative contribution and "
                  "loss rise when removed"),
        data="python_topics",
        arms=_arms_48(EDGES_48_PROBED, quick, probe) + _arms_48(EDGES_48, quick, None),
        seeds=(0, 1, 2))


#: Post-norm with N(0, 0.02²) on every matrix (chapter 4's "post N", which trains at every
#: depth there) at L = 48 (``fixes_at_48_small_init``): the fair baseline for pre-norm with
#: GPT-2's init (C9a), and a control for C10's removal part that trains under the recipe of
#: ``fixes_at_48``'s pre-norm; four rates so that the grid can bracket its best.
SMALL_INIT_48 = (("post-norm, N(0, 0.02²)", "post N", "post", "normal",
                  (3e-4, 1e-3, 3e-3, 1e-2)),)


@register
def fixes_at_48_small_init(quick: bool = False) -> Experiment:
    return Experiment(
        name="fixes_at_48_small_init", quick=quick,
        description=(
            "Chapter 5 (C9a's GPT-2 piece: its baseline; tried as C10's removal control): "
            "post-norm with N(0, 0.02²) on every matrix (GPT-2's "
            "small init without its 1/sqrt(2L) on the projections; chapter 4's 'post N') at "
            "48 blocks of the thin shape, with fixes_at_48's recipe, validation text and "
            "per-block probe, at peak rates 3e-4, 1e-3, 3e-3 and 1e-2. 3 seeds per arm "
            "(12 runs)."),
        measures=("training loss per step; validation loss every 50 steps (the same 24 "
                  "batches of 8 x 64 held-out characters for every run); per block, "
                  "untrained and trained: relative contribution and loss rise when removed"),
        data="python_topics", arms=_arms_48(SMALL_INIT_48, quick, _probe_48(quick)),
        seeds=(0, 1, 2))


#: The one change ``deepnorm_at_48_long`` makes to ``_recipe_48``: three times the steps and
#: the warm-up, validation every 150 steps (at 150 steps DeepNorm left the plateau on 1-2 of
#: 3 seeds at 1e-3 and 3e-3, and was still falling on all three at 3e-4).
LONG_48 = {"steps": 450, "warmup_steps": 45, "eval_every": 150}
#: Its families: DeepNorm, beta only (post-norm with DeepNorm's init) and the baseline both
#: are judged against, Xavier post-norm, each at three rates about 3x apart. Alpha only is
#: left out for the budget (it stalled at every rate from 1e-3 at 150 steps).
LONG_FAMILIES_48 = (
    ("DeepNorm", "DeepNorm", "deepnorm", "deepnorm", (3e-4, 1e-3, 3e-3)),
    ("beta only", "beta", "post", "deepnorm", (3e-4, 1e-3, 3e-3)),
    ("post-norm, Xavier", "post X", "post", "xavier", (3e-4, 1e-3, 3e-3)),
)


def _arms_48_long(families, quick: bool, probe: dict | None = None) -> tuple:
    """``_arms_48`` on the longer recipe (``LONG_48``; the quick variant keeps the short one),
    each arm carrying ``probe`` when one is given."""
    long = {} if quick else LONG_48
    return tuple(dataclasses.replace(a, recipe=a.recipe.replace(**long))
                 for a in _arms_48(families, quick, probe))


#: What the 450-step records measure: every run, and (``MEASURES_48_LONG_PROBED``) the
#: probed ones with their per-block reading.
MEASURES_48_LONG = ("training loss per step; validation loss every 150 steps (the same 24 "
                    "batches of 8 x 64 held-out characters for every run)")
MEASURES_48_LONG_PROBED = (MEASURES_48_LONG + "; per block, untrained and trained: relative "
                           "contribution and loss rise when removed")


@register
def deepnorm_at_48_long(quick: bool = False) -> Experiment:
    arms = _arms_48_long(LONG_FAMILIES_48, quick)
    return Experiment(
        name="deepnorm_at_48_long", quick=quick,
        description=(
            "Chapter 5 (C12): a recipe where DeepNorm can train every seed at 48 blocks, for "
            "the positive control of the alpha/beta split. fixes_at_48's recipe with one "
            "change: 450 steps instead of 150, 45 warm-up steps, validation every 150 steps "
            "(the same 24 batches of 8 x 64 held-out characters for every run). Families: "
            "DeepNorm, beta only (DeepNet's beta-scaled init in a plain post-norm stack) and "
            "post-norm with Xavier init, each at peak rates 3e-4, 1e-3 and 3e-3. 3 seeds "
            "per arm (27 runs). It took 80.9 CPU-minutes (about 3 min per run, beside other "
            "records). Cut: "
            "alpha only (stalled at every rate from 1e-3 at 150 steps), one depth."),
        measures=MEASURES_48_LONG,
        data="python_topics", arms=arms, seeds=(0, 1, 2))


#: The rates added to ``deepnorm_at_48_long`` where a family's best was not bracketed
#: (``deepnorm_at_48_long_edges``): beta only was best at 3e-4, the lowest rate; DeepNorm's
#: highest rate, 3e-3, was within noise of its best (one seed ended lowest of all, two stalled).
LONG_EDGES_48 = (("DeepNorm", "DeepNorm", "deepnorm", "deepnorm", (1e-2,)),
                 ("beta only", "beta", "post", "deepnorm", (1e-4,)))


@register
def deepnorm_at_48_long_edges(quick: bool = False) -> Experiment:
    arms = _arms_48_long(LONG_EDGES_48, quick)
    return Experiment(
        name="deepnorm_at_48_long_edges", quick=quick,
        description=(
            "Chapter 5 (C12): the rates deepnorm_at_48_long's grids missed, with its "
            "recipe and validation text at 48 blocks: DeepNorm at peak rate 1e-2 (its "
            "highest rate, 3e-3, was within noise of its best) and beta only (DeepNet's "
            "beta-scaled init in a plain post-norm stack) at 1e-4 (its best sat at the "
            "grid's lowest rate, 3e-4). 3 seeds per arm (6 runs)."),
        measures=MEASURES_48_LONG,
        data="python_topics", arms=arms, seeds=(0, 1, 2))


#: Alpha only (alpha = (2L)^(1/4) with Xavier's init) on the 450-step recipe
#: (``alpha_only_48_long``), left out of ``deepnorm_at_48_long`` for the budget: at 150 steps
#: it was still falling at 3e-4 and stalled from 1e-3, so the grid reaches down to 1e-4.
LONG_ALPHA_48 = (("alpha only", "alpha", "deepnorm", "xavier", (1e-4, 3e-4, 1e-3, 3e-3)),)


@register
def alpha_only_48_long(quick: bool = False) -> Experiment:
    arms = _arms_48_long(LONG_ALPHA_48, quick)
    return Experiment(
        name="alpha_only_48_long", quick=quick,
        description=(
            "Chapter 5 (C12): alpha only (alpha = (2L)^(1/4) on the residual with Xavier's "
            "init) at 48 blocks on deepnorm_at_48_long's recipe and validation text (450 "
            "steps, 45 warm-up steps), where DeepNorm, the positive control, trains every "
            "seed: peak rates 1e-4, 3e-4, 1e-3 and 3e-3. 3 seeds per arm (12 runs). CPU "
            "estimate about 8 minutes on 2 workers."),
        measures=MEASURES_48_LONG,
        data="python_topics", arms=arms, seeds=(0, 1, 2))


#: C10's removal part on the 450-step recipe (``layer_use_48_long``): pre-norm with Xavier
#: init (best at 3e-3 to 1e-2 at 150 steps) and DeepNorm, the control that trains every seed
#: on this recipe (best at 1e-3 in ``deepnorm_at_48_long``), both probed as in ``fixes_at_48``.
LONG_PROBED_48 = (
    ("pre-norm, Xavier", "pre X", "pre", "xavier", (1e-3, 3e-3, 1e-2, 3e-2)),
    ("DeepNorm", "DeepNorm", "deepnorm", "deepnorm", (3e-4, 1e-3, 3e-3)),
)


@register
def layer_use_48_long(quick: bool = False) -> Experiment:
    arms = _arms_48_long(LONG_PROBED_48, quick, _probe_48(quick))
    return Experiment(
        name="layer_use_48_long", quick=quick,
        description=(
            "Chapter 5 (C10): pre-norm against a control that trains, both probed, at 48 "
            "blocks on deepnorm_at_48_long's recipe and validation text (450 steps, 45 "
            "warm-up steps): pre-norm with Xavier init at peak rates 1e-3, 3e-3, 1e-2 and "
            "3e-2, DeepNorm at 3e-4, 1e-3 and 3e-3 (the same runs as deepnorm_at_48_long's, "
            "now probed). Every model is probed before and after training on 2 fixed "
            "held-out batches of 16 x 64 characters, as in fixes_at_48: each block's "
            "relative contribution ||F|| / ||x|| and the rise in loss when that one block is "
            "removed. 3 seeds per arm (21 runs). CPU estimate about 14 minutes on 2 "
            "workers."),
        measures=MEASURES_48_LONG_PROBED,
        data="python_topics", arms=arms, seeds=(0, 1, 2))


#: ``layer_use_48_confirm``: C10's removal row against DeepNorm on fresh seeds, each stack at
#: the one rate its grid chose on seeds 0-2 (pre-norm 3e-3, bracketed by ``layer_use_48_long``
#: and ``layer_use_48_long_edges``; DeepNorm 1e-3, bracketed by ``layer_use_48_long`` and
#: ``deepnorm_at_48_long_edges``), so that the row's word comes from runs its rule was stated
#: before (the seeds-0-2 ratios had been on the page since 2026-12-05).
CONFIRM_48 = (("pre-norm, Xavier", "pre X", "pre", "xavier", (3e-3,)),
              ("DeepNorm", "DeepNorm", "deepnorm", "deepnorm", (1e-3,)))
CONFIRM_SEEDS = (3, 4, 5)


@register
def layer_use_48_confirm(quick: bool = False) -> Experiment:
    arms = _arms_48_long(CONFIRM_48, quick, _probe_48(quick))
    return Experiment(
        name="layer_use_48_confirm", quick=quick,
        description=(
            "Chapter 5 (C10): the removal row against DeepNorm, confirmed on fresh seeds. "
            "layer_use_48_long's two stacks, recipe, validation text and per-block probe at "
            "48 blocks, pre-norm with Xavier init at 3e-3 and DeepNorm at 1e-3, the rates "
            "their grids chose (bracketed) on seeds 0-2, now on seeds 3, 4 and 5 (6 runs): "
            "the rule (ch5_fixes.layer_use_control with the bracket taken from the grids) "
            "was stated on 2026-12-06 before this record ran, while the seeds-0-2 ratios "
            "had been on the page since 2026-12-05. About 12 CPU-minutes."),
        measures=MEASURES_48_LONG_PROBED,
        data="python_topics", arms=arms, seeds=CONFIRM_SEEDS)


#: The rate added to ``layer_use_48_long`` after it was read (``layer_use_48_long_edges``):
#: pre-norm's best, 3e-3, was within noise of its grid's lowest rate, 1e-3, so the grid did
#: not bracket it; one rate below, probed the same way.
LONG_PROBED_EDGES_48 = (("pre-norm, Xavier", "pre X", "pre", "xavier", (3e-4,)),)


@register
def layer_use_48_long_edges(quick: bool = False) -> Experiment:
    arms = _arms_48_long(LONG_PROBED_EDGES_48, quick, _probe_48(quick))
    return Experiment(
        name="layer_use_48_long_edges", quick=quick,
        description=(
            "Chapter 5 (C10): the rate layer_use_48_long's pre-norm grid missed, with its "
            "recipe, validation text and per-block probe at 48 blocks: pre-norm with Xavier "
            "init at peak rate 3e-4 (its best, 3e-3, was within noise of the grid's lowest "
            "rate, 1e-3). Added after layer_use_48_long was read. 3 seeds (3 runs)."),
        measures=MEASURES_48_LONG_PROBED,
        data="python_topics", arms=arms, seeds=(0, 1, 2))


#: C10's one-change control on the 450-step recipe (``layer_use_48_long_lns``): pre-norm with
#: LayerNorm Scaling (Sun et al. 2025: each branch's LayerNorm output times 1/sqrt(l)), the
#: change that paper makes so that deep pre-norm blocks do more; Xavier init as pre-norm's.
LONG_LNS_48 = (("pre-norm, LN scaling", "pre LNS", "pre", "xavier", (3e-4, 1e-3, 3e-3, 1e-2)),)


@register
def layer_use_48_long_lns(quick: bool = False) -> Experiment:
    arms = tuple(dataclasses.replace(a, model=a.model.replace(ln_scaling="1/sqrt(l)"),
                                     info={**a.info, "ln_scaling": "1/sqrt(l)"})
                 for a in _arms_48_long(LONG_LNS_48, quick, _probe_48(quick)))
    return Experiment(
        name="layer_use_48_long_lns", quick=quick,
        description=(
            "Chapter 5 (C10): a control that differs from pre-norm in one change, at 48 "
            "blocks on layer_use_48_long's recipe, validation text and per-block probe: "
            "pre-norm with Xavier init and LayerNorm Scaling (each branch's LayerNorm "
            "output times 1/sqrt(l), Sun et al. 2025) at peak rates 3e-4, 1e-3, 3e-3 and "
            "1e-2. Added after the first reading of layer_use_48_long (DeepNorm, its first "
            "control, differs from pre-norm in the norm's place, alpha, beta and the final "
            "LayerNorm). 3 seeds per arm (12 runs). CPU estimate about 10 minutes on 2 "
            "workers."),
        measures=MEASURES_48_LONG_PROBED,
        data="python_topics", arms=arms, seeds=(0, 1, 2))


#: The depths of ``deepnorm_depth_sweep`` and the rate it starts from at the first: Adam's
#: first step grows like sqrt(L) at a fixed rate (``init_response_depth``), so the rate
#: shrinks as 1/sqrt(L) from DeepNorm's best at L = 48 (``fixes_at_48``).
SWEEP_DEPTHS, SWEEP_LR = (48, 200, 500, 1000), 1e-3


@register
def deepnorm_depth_sweep(quick: bool = False) -> Experiment:
    depths = (2, 4) if quick else SWEEP_DEPTHS
    recipe = TrainConfig(steps=4 if quick else 400, batch_size=2 if quick else 8,
                         context=16 if quick else 64, lr=SWEEP_LR,
                         warmup_steps=2 if quick else 100, decay="cosine", grad_clip=1.0,
                         eval_every=2 if quick else 100, eval_batches=1 if quick else 16,
                         eval_seed=0)
    arms = [Arm(f"DeepNorm, L={L}", thin_config(L, "deepnorm", "deepnorm"),
                recipe.replace(lr=round(SWEEP_LR * (depths[0] / L) ** 0.5, 8)),
                {"family": "DeepNorm", "short": "DeepNorm", "norm": "deepnorm",
                 "init": "deepnorm", "n_layer": L,
                 "lr": round(SWEEP_LR * (depths[0] / L) ** 0.5, 8)})
            for L in depths]
    L = depths[-1]
    arms.append(Arm(f"post-norm, Xavier, L={L}", thin_config(L, "post", "xavier"),
                    recipe.replace(steps=2 if quick else 100, eval_every=2 if quick else 50,
                                   lr=round(SWEEP_LR * (depths[0] / L) ** 0.5, 8)),
                    {"family": "post-norm, Xavier", "short": "post X", "norm": "post",
                     "init": "xavier", "n_layer": L,
                     "lr": round(SWEEP_LR * (depths[0] / L) ** 0.5, 8)}))
    return Experiment(
        name="deepnorm_depth_sweep", quick=quick,
        description=(
            "Chapter 5 (C12, the 1,000-layer part): DeepNorm at L = 48, 200, 500 and 1,000 "
            "blocks of the thin shape with equal tokens per depth (400 steps of 8 x 64 "
            "characters), the AdamW peak rate scaled as 1/sqrt(L) from 1e-3 at L = 48, 100 "
            "warm-up steps, cosine decay, clipping at 1, validation every 100 steps on the "
            "same 16 batches of 8 x 64 held-out characters for every run; and a short "
            "(100-step) Xavier post-norm run at 1,000 blocks at the same rate. Judged by "
            "whether every seed trains at 1,000 blocks (verdicts.ch5_fixes.sweep_verdict); "
            "shown per seed: divergence, loss spikes and the first validation step below the "
            "trained bar. 3 seeds. About 30 CPU-minutes per 1,000-block run."),
        measures=("training loss per step; validation loss every 100 steps (the same 16 "
                  "batches for every run); whether and where a run diverged"),
        data="python_topics", arms=tuple(arms), seeds=(0, 1, 2))


@register
def deepnorm_depth_sweep_post(quick: bool = False) -> Experiment:
    sweep = deepnorm_depth_sweep(quick)          # its post-norm arm, run as long as DeepNorm's
    (short,) = [a for a in sweep.arms if a.info["norm"] == "post"]
    (deep,) = [a for a in sweep.arms
               if a.info["norm"] == "deepnorm" and a.info["n_layer"] == short.info["n_layer"]]
    arm = dataclasses.replace(short, recipe=deep.recipe)
    return Experiment(
        name="deepnorm_depth_sweep_post", quick=quick,
        description=(
            "Chapter 5 (C12, the 1,000-layer part, against post-norm): Xavier post-norm at "
            "1,000 blocks with deepnorm_depth_sweep's 1,000-block DeepNorm recipe in full "
            "(400 steps of 8 x 64 characters, the same peak rate, 100 warm-up steps, cosine "
            "decay, clipping at 1, the same 16 held-out batches every 100 steps), so that at "
            "1,000 blocks DeepNorm is compared with post-norm at one rate and one budget, not "
            "only over post-norm's first 100 steps. Defined 2026-12-05, before "
            "deepnorm_depth_sweep was read, after a reviewer's reading of its design. One rate, "
            "DeepNorm's: by the bracket rule it shows whether post-norm trains or diverges on "
            "DeepNorm's recipe, and a verdict against DeepNorm would need a grid of rates. "
            "3 seeds. Not yet recorded: about 95 CPU-minutes."),
        measures=("training loss per step; validation loss every 100 steps (the same 16 "
                  "batches for every run); whether and where a run diverged"),
        data="python_topics", arms=(arm,), seeds=sweep.seeds)


#: How many of ``deepnorm_depth_sweep``'s first steps ``deepnorm_sweep_updates`` measures:
#: inside the sweep's 100-step warm-up, so the schedule up to here is the sweep's own.
SWEEP_UPDATE_STEPS = 50


@register
def deepnorm_sweep_updates(quick: bool = False) -> Experiment:
    sweep = deepnorm_depth_sweep(quick)
    steps = 2 if quick else SWEEP_UPDATE_STEPS
    probe = {"name": "update_size", "batch_size": 2 if quick else 8,
             "context": 16 if quick else 64}
    arms = tuple(dataclasses.replace(
        a, recipe=a.recipe.replace(steps=steps, eval_every=steps),
        info={**a.info, "probe": probe}) for a in sweep.arms)
    return Experiment(
        name="deepnorm_sweep_updates", quick=quick,
        description=(
            "Chapter 5 (C12, the 1,000-layer part, during training): deepnorm_depth_sweep's "
            "arms (DeepNorm at L = 48, 200, 500 and 1,000 at a peak rate scaled as 1/sqrt(L) "
            "from 1e-3 at L = 48, and Xavier post-norm at 1,000 at DeepNorm's rate there), "
            "same seeds, batches and schedule, run for the first 50 of the sweep's steps "
            "(inside its 100-step warm-up, so every step here is the sweep's own) with "
            "DeepNet's early-update measure ||F(x; theta_t) - F(x; theta_0)|| after every "
            "step, on one fixed held-out batch of 8 x 64 characters. The sweep itself kept "
            "losses only. Defined 2026-12-06, after deepnorm_depth_sweep was read. 3 seeds "
            "(15 runs). CPU estimate about 35 CPU-minutes."),
        measures=("the update size after each of the first 50 steps; training loss per "
                  "step; validation loss at step 50 (the sweep's 16 held-out batches)"),
        data="python_topics", arms=arms, seeds=sweep.seeds)


#: Experiments defined here whose full record has not been made yet, with what one costs: the
#: registry lists them, their quick variants run in the tests, and the chapter says what is
#: and is not tested without them.
UNRECORDED = {
    "deepnorm_depth_sweep_post": "about 95 CPU-minutes (three seeds of 1,000 blocks x 400 "
                                 "steps)",
}
