"""Chapter 4's experiment (claim C8b): the depth at which post-norm stops training.
"""

from __future__ import annotations

from depthnotes.core.config import ModelConfig
from depthnotes.training.loop import TrainConfig
from depthnotes.experiments.spec import Arm, Experiment, register


#: The arm families of ``postnorm_failure_depth``, each trained at every depth: (label, short
#: label for a crowded axis, norm, init, with warm-up). The post-norm families cross the two
#: inits (the papers' Xavier, and N(0, 0.02²) on every matrix, ``init="normal"``, which lacks
#: GPT-2's 0.02/sqrt(2L) on the residual projections) with and without warm-up; pre-norm with
#: the papers' init is the reference that differs from the first family in the norm's place
#: only.
FAILURE_FAMILIES = (
    ("post-norm, Xavier, no warm-up", "post X", "post", "xavier", False),
    ("post-norm, Xavier, warm-up", "post X+w", "post", "xavier", True),
    ("post-norm, N(0, 0.02²), no warm-up", "post N", "post", "normal", False),
    ("post-norm, N(0, 0.02²), warm-up", "post N+w", "post", "normal", True),
    ("pre-norm, Xavier, no warm-up", "pre X", "pre", "xavier", False),
)


#: The peak learning rate of every arm, and the smaller rates also tried for the families
#: the verdict compares (the first and the last of ``FAILURE_FAMILIES``) at the deepest two
#: depths, where the verdict is decided: ``trainability.depth_outcomes`` scores each family
#: at each depth at its best rate.
FAILURE_LR = 1e-3


FAILURE_LR_GRID = (3e-4,)


FAILURE_GRID_FAMILIES = (FAILURE_FAMILIES[0][0], FAILURE_FAMILIES[-1][0])


@register
def postnorm_failure_depth(quick: bool = False) -> Experiment:
    from depthnotes.data.corpus import load_corpus

    depths = (1, 2) if quick else (6, 12, 24, 48)
    grid_depths = depths[-1:] if quick else depths[-2:]
    steps, warmup = (4, 2) if quick else (300, 100)
    recipe = TrainConfig(steps=steps, batch_size=4 if quick else 16,
                         context=16 if quick else 64, lr=FAILURE_LR, warmup_steps=0,
                         decay="cosine", grad_clip=1.0, eval_every=2 if quick else 50,
                         eval_batches=1 if quick else 16, eval_seed=0)
    vocab = load_corpus().vocab_size
    arms = []
    for L in depths:
        for family, short, norm, init, warm in FAILURE_FAMILIES:
            grid = FAILURE_LR_GRID if family in FAILURE_GRID_FAMILIES and L in grid_depths \
                else ()
            for lr in (FAILURE_LR,) + grid:
                arms.append(Arm(
                    f"{family}, L={L}" + (f", lr={lr:g}" if lr != FAILURE_LR else ""),
                    ModelConfig(n_layer=L, d_model=64, n_head=2, d_ff=128,
                                vocab_size=vocab, context=64, norm=norm, init=init),
                    recipe.replace(lr=lr, warmup_steps=warmup if warm else 0),
                    {"family": family, "short": short, "norm": norm, "init": init,
                     "warmup_steps": warmup if warm else 0, "n_layer": L, "lr": lr}))
    return Experiment(
        name="postnorm_failure_depth", quick=quick,
        description=(
            "Chapter 4 (C8): where plain post-norm stops training. Chapter 4's thin shape "
            "(d = 64, FFN 128, 2 heads) at L = 6, 12, 24 and 48 on the shipped corpus; "
            "post-norm with the post-LN papers' Xavier init (embeddings and head keep "
            "N(0, 0.02²)) and with N(0, 0.02²) on every matrix (init \"normal\", without "
            "GPT-2's 0.02/sqrt(2L) on the residual projections), each without warm-up and "
            "with 100 warm-up steps, and pre-norm with Xavier init (no warm-up) as the "
            "reference. 3 seeds per arm; 300 steps of 16 x 64 characters, AdamW peak lr "
            "1e-3, cosine decay to a tenth of the peak, clipping at 1; validation loss every "
            "50 steps on 16 batches of 16 x 64 held-out characters. Learning-rate grid: "
            "the two families the verdict compares (post-norm Xavier without warm-up, "
            "pre-norm Xavier) are also trained at lr 3e-4 at L = 24 and 48, and each family "
            "is scored at each depth at the rate with the lower mean final validation loss "
            "(trainability.depth_outcomes). Cut to fit about 50 CPU-minutes (timed at about "
            "5.4 ms per block per step on one thread): a two-rate grid for those two "
            "families at the two deepest depths only (the other arms and depths at lr 1e-3 "
            "alone), no depth between 6 and 12 or beyond 48, 300 steps (about 0.7 epoch), "
            "3 seeds rather than 5, and no pre-norm warm-up arm."),
        measures=("training loss per step; validation loss every 50 steps and after the "
                  "last step (the same 16 batches of 16 x 64 held-out characters for every "
                  "run); whether and where a run diverged"),
        data="python_topics", arms=tuple(arms), seeds=(0, 1, 2))


@register
def postnorm_failure_grid(quick: bool = False) -> Experiment:
    from depthnotes.experiments.ch5 import thin_config      # the chapters' one thin shape

    depths = (1, 2) if quick else (6, 12, 24)
    rates = (1e-3, 3e-3) if quick else (1e-4, 3e-4, 1e-3, 3e-3, 1e-2)
    recipe = TrainConfig(steps=4 if quick else 300, batch_size=4 if quick else 16,
                         context=16 if quick else 64, lr=FAILURE_LR, warmup_steps=0,
                         decay="cosine", grad_clip=1.0, eval_every=2 if quick else 50,
                         eval_batches=1 if quick else 16, eval_seed=0)
    families = [f for f in FAILURE_FAMILIES if f[0] in FAILURE_GRID_FAMILIES]
    arms = tuple(
        Arm(f"{family}, L={L}, lr={lr:g}", thin_config(L, norm, init), recipe.replace(lr=lr),
            {"family": family, "short": short, "norm": norm, "init": init,
             "warmup_steps": 0, "n_layer": L, "lr": lr})
        for L in depths for family, short, norm, init, _ in families for lr in rates)
    return Experiment(
        name="postnorm_failure_grid", quick=quick,
        description=(
            "Chapter 4 (C8b): the two families the verdict compares, post-norm and pre-norm "
            "with Xavier init and no warm-up, on a five-rate grid (peak lr 1e-4, 3e-4, "
            "1e-3, 3e-3, 1e-2) at L = 6, 12 and 24, the depths around the one where post-norm first "
            "stops in postnorm_failure_depth. The thin shape (d = 64, FFN 128, 2 heads); 3 "
            "seeds per arm; 300 steps of 16 x 64 characters, AdamW, cosine decay to a tenth "
            "of the peak, clipping at 1; validation loss every 50 steps on the same 16 "
            "batches of 16 x 64 held-out characters for every run."),
        measures=("training loss per step; validation loss every 50 steps and after the "
                  "last step (the same 16 batches of 16 x 64 held-out characters for every "
                  "run); whether and where a run diverged"),
        data="python_topics", arms=arms, seeds=(0, 1, 2))


#: ``postnorm_failure_grid_warm``'s family and depth: Xavier post-norm with warm-up, the
#: alternative C8b's Xavier part reads at the failure depth (``failure_verdict``'s
#: ``alternatives``), which ``postnorm_failure_depth`` trained at one rate only.
FAILURE_WARM_FAMILY, FAILURE_WARM_DEPTH = FAILURE_FAMILIES[1], 24


@register
def postnorm_failure_grid_warm(quick: bool = False) -> Experiment:
    from depthnotes.experiments.ch5 import thin_config

    base = postnorm_failure_grid(quick)
    family, short, norm, init, _ = FAILURE_WARM_FAMILY
    L = 2 if quick else FAILURE_WARM_DEPTH
    warmup = 2 if quick else 100
    rates = sorted({a.recipe.lr for a in base.arms})
    recipe = base.arms[0].recipe.replace(warmup_steps=warmup)
    arms = tuple(
        Arm(f"{family}, L={L}, lr={lr:g}", thin_config(L, norm, init), recipe.replace(lr=lr),
            {"family": family, "short": short, "norm": norm, "init": init,
             "warmup_steps": warmup, "n_layer": L, "lr": lr})
        for lr in rates)
    return Experiment(
        name="postnorm_failure_grid_warm", quick=quick,
        description=(
            "Chapter 4 (C8b): Xavier post-norm with 100 warm-up steps, the alternative the "
            "Xavier part reads at the failure depth (L = 24; a family that does not stop "
            "there makes the part 'reproduced in part'), on postnorm_failure_grid's five "
            "rates (1e-4 to 1e-2), model, recipe and seeds, with the warm-up of "
            "postnorm_failure_depth's warm-up arms. postnorm_failure_depth trained it at "
            "1e-3 only. 3 seeds (15 runs), about 12 CPU-minutes."),
        measures=base.measures, data=base.data, arms=arms, seeds=base.seeds)


#: The families ``init_response_depth`` measures: (label, short label, norm, init). The first
#: four are chapter 4's and 5's arms (Xavier post-norm, the papers' baseline; post-norm with
#: N(0, 0.02²), which trains; pre-norm; DeepNorm); the last two take DeepNorm apart (alpha
#: with Xavier's init; beta's init in a plain post-norm stack).
RESPONSE_FAMILIES = (
    ("post-norm, Xavier", "post X", "post", "xavier"),
    ("post-norm, N(0, 0.02²)", "post N", "post", "normal"),
    ("pre-norm, Xavier", "pre X", "pre", "xavier"),
    ("DeepNorm", "DeepNorm", "deepnorm", "deepnorm"),
    ("alpha only", "alpha", "deepnorm", "xavier"),
    ("beta only", "beta", "post", "deepnorm"),
)


#: The families measured at every depth of ``init_response_depth``; the ablations stop at
#: ``RESPONSE_ABLATION_MAX`` (the deepest depths cost the most).
RESPONSE_DEEP_FAMILIES = ("post-norm, Xavier", "pre-norm, Xavier", "DeepNorm")
RESPONSE_ABLATION_MAX = 200
#: Adam's first step is taken at these rates, and at ``RESPONSE_LR`` * sqrt(``RESPONSE_REF``
#: / L), the rate scaled as 1/sqrt(L) from the depth where chapter 5 tunes it.
RESPONSE_LRS = (1e-4, 1e-3)
RESPONSE_LR, RESPONSE_REF = 1e-3, 48
RESPONSE_SGD_LR = 0.1


@register
def init_response_depth(quick: bool = False) -> Experiment:
    from depthnotes.experiments.ch5 import thin_config      # the chapters' one thin shape

    depths = (1, 2, 3) if quick else (6, 24, 96, 200, 500, 1000)
    size = {"batch_size": 2, "context": 16} if quick else {"batch_size": 8, "context": 64}
    # the record's own training is one step, evaluated on one batch: the probe is the point
    recipe = TrainConfig(steps=1, lr=RESPONSE_LR, warmup_steps=0, decay="constant",
                         grad_clip=None, eval_every=0, eval_batches=1, eval_seed=0, **size)
    arms = []
    for L in depths:
        for family, short, norm, init in RESPONSE_FAMILIES:
            if family not in RESPONSE_DEEP_FAMILIES and L > RESPONSE_ABLATION_MAX:
                continue
            scaled = RESPONSE_LR * (RESPONSE_REF / L) ** 0.5
            probe = {"name": "init_response", **size, "eps": 1e-3,
                     "sgd_lr": RESPONSE_SGD_LR,
                     "adam_lrs": [*RESPONSE_LRS, round(scaled, 8)]}
            arms.append(Arm(f"{family}, L={L}", thin_config(L, norm, init), recipe,
                            {"family": family, "short": short, "norm": norm, "init": init,
                             "n_layer": L, "probe": probe}))
    return Experiment(
        name="init_response_depth", quick=quick,
        description=(
            "Chapters 4 and 5 (C8, C12): how an untrained stack answers a small change of "
            "its weights, from 6 to 1,000 blocks of the thin shape (d = 64, FFN 128, 2 "
            "heads). Families: post-norm with Xavier init, post-norm with N(0, 0.02²), "
            "pre-norm with Xavier init and DeepNorm at L = 6, 24, 96, 200, 500 and 1,000 "
            "(post-norm N(0, 0.02²) and the ablations only up to 200), and DeepNorm taken "
            "apart up to L = 200: alpha with Xavier's init, and beta's init in plain "
            "post-norm. Per model, on one fixed held-out batch of 8 x 64 characters: Liu et "
            "al.'s output sensitivity (every block matrix moved by 1e-3 of its own std in a "
            "random direction; the output's relative move), and the first update "
            "||F(x; theta_1) - F(x; theta_0)|| after one plain SGD step at lr 0.1 and after "
            "Adam's first step at lr 1e-4, 1e-3 and 1e-3 * sqrt(48 / L), each step taken on "
            "a copy with the same batch of 8 x 64 held-out characters. The record's own "
            "training (one Adam step) is a formality. 3 seeds per arm."),
        measures=("per model at initialisation: output sensitivity; first update after "
                  "one SGD step and after Adam's first step at three rates"),
        data="python_topics", arms=tuple(arms), seeds=(0, 1, 2))


#: The smaller plain-SGD rates ``init_response_sgd`` adds to ``init_response_depth``'s 0.1.
SGD_RESPONSE_LRS = (1e-2, 1e-3)


def _sgd_response_arms(quick: bool, stepped: str) -> tuple:
    """``init_response_sgd``'s arms, the probe's steps moving the parameter
    group ``stepped`` (``probes.stepped_parameters``): its depths, families, seeds and rates
    are shared with ``init_response_sgd_blocks``, which differs in that group only."""
    from depthnotes.experiments.ch5 import thin_config      # the chapters' one thin shape

    depths = (1, 2, 3) if quick else (6, 24, 96, 200, 500, 1000)
    size = {"batch_size": 2, "context": 16} if quick else {"batch_size": 8, "context": 64}
    # as in init_response_depth: the record's own training is a formality, the probe the point
    recipe = TrainConfig(steps=1, lr=1e-3, warmup_steps=0, decay="constant",
                         grad_clip=None, eval_every=0, eval_batches=1, eval_seed=0, **size)
    probe = {"name": "init_response", **size, "eps": None, "sgd_lr": None,
             "adam_lrs": [], "sgd_lrs": list(SGD_RESPONSE_LRS)}
    if stepped != "all":            # the stored init_response_sgd has no such key
        probe["stepped"] = stepped
    return tuple(Arm(f"{family}, L={L}", thin_config(L, norm, init), recipe,
                     {"family": family, "short": short, "norm": norm, "init": init,
                      "n_layer": L, "probe": probe})
                 for L in depths for family, short, norm, init in RESPONSE_FAMILIES
                 if family in RESPONSE_DEEP_FAMILIES)


@register
def init_response_sgd(quick: bool = False) -> Experiment:
    arms = _sgd_response_arms(quick, "all")
    return Experiment(
        name="init_response_sgd", quick=quick,
        description=(
            "Chapter 5 (C12): the first update after one plain SGD step, "
            "||F(x; theta_1) - F(x; theta_0)|| with F the final hidden state and every "
            "parameter stepped (embeddings, LayerNorms, biases, every matrix), at two rates "
            "smaller than "
            "init_response_depth's 0.1: 1e-2 and 1e-3, for post-norm with Xavier init, "
            "pre-norm with Xavier init and DeepNorm at L = 6, 24, 96, 200, 500 and 1,000 "
            "blocks of the thin shape, each step on a copy of the untrained model with "
            "init_response_depth's batch and probe batch (8 x 64 held-out characters). At a "
            "small enough rate the step's effect is linear in the gradient, so its growth "
            "with depth is the gradient's; at 0.1 it need not be. The record's own training "
            "(one Adam step) is a formality. 3 seeds per arm (54 runs)."),
        measures="per model at initialisation: first update after one SGD step at two rates",
        data="python_topics", arms=arms, seeds=(0, 1, 2))


@register
def init_response_sgd_blocks(quick: bool = False) -> Experiment:
    arms = _sgd_response_arms(quick, "blocks")
    return Experiment(
        name="init_response_sgd_blocks", quick=quick,
        description=(
            "Chapter 5 (C12): init_response_sgd with only the residual blocks' parameters "
            "stepped: per block the two LayerNorms' gains and biases, W_Q, W_K, W_V and W_O "
            "with their biases, and both FFN matrices with theirs; the token and position "
            "embeddings, the tied unembedding and pre-norm's final LayerNorm keep their "
            "initial values: the embeddings and head sit outside DeepNet's sum over the "
            "blocks' sublayers (the group also holds W_Q, W_K, biases and LayerNorms, which "
            "its bound leaves out: init_response_sgd_deepnet). The same depths (6 to 1,000 "
            "blocks of the thin shape), families (post-norm with Xavier init, pre-norm with "
            "Xavier init, DeepNorm), rates (1e-2 and 1e-3), batches and 3 seeds per arm (54 "
            "runs); ||F(x; theta_1) - F(x; theta_0)|| with F the final hidden state. The "
            "record's own training (one Adam step) is a formality. CPU estimate about 7 "
            "minutes on 2 workers."),
        measures=("per model at initialisation: first update after one SGD step of the "
                  "blocks' parameters only, at two rates"),
        data="python_topics", arms=arms, seeds=(0, 1, 2))


@register
def init_response_sgd_deepnet(quick: bool = False) -> Experiment:
    arms = _sgd_response_arms(quick, "deepnet")
    return Experiment(
        name="init_response_sgd_deepnet", quick=quick,
        description=(
            "Chapter 5 (C12): init_response_sgd with only the matrices DeepNet's update "
            "bound sums over stepped: per block W_V (the value columns of the fused "
            "attention input matrix), W_O and both FFN weight matrices, the ones its beta "
            "scales; W_Q, W_K, every bias, every LayerNorm, the embeddings and the head "
            "keep their initial values. The same depths (6 to 1,000 blocks of the thin "
            "shape), families (post-norm with Xavier init, pre-norm with Xavier init, "
            "DeepNorm), rates (1e-2 and 1e-3), batches and 3 seeds per arm (54 runs); "
            "||F(x; theta_1) - F(x; theta_0)|| with F the final hidden state. The record's "
            "own training (one Adam step) is a formality. Added after init_response_sgd_blocks "
            "was read, because that group holds parameters the bound leaves out. CPU "
            "estimate about 7 minutes on 2 workers."),
        measures=("per model at initialisation: first update after one SGD step of W_V, "
                  "W_O, W_1 and W_2 only, at two rates"),
        data="python_topics", arms=arms, seeds=(0, 1, 2))


#: Experiments defined here whose full record has not been made yet, with what one costs.
UNRECORDED: dict[str, str] = {}
