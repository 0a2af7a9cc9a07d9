"""Chapter 6's experiments (claims C13, C14): fixed-budget families of shapes, and how much a
trained model's deep layers still do.
"""

from __future__ import annotations

from depthnotes.core.config import ModelConfig
from depthnotes.measure.record_probes import REMOVAL_COST
from depthnotes.training.loop import TrainConfig
from depthnotes.experiments.spec import Arm, Experiment, epochs, register


@register
def budget_sweep_300_steps(quick: bool = False) -> Experiment:
    from depthnotes.training.budget import lr_for_width
    from depthnotes.data.corpus import load_corpus
    from depthnotes.core.params import shapes_for_budget

    corpus = load_corpus()
    base = ModelConfig(n_layer=1, d_model=64, n_head=2, vocab_size=corpus.vocab_size,
                       context=64)
    budgets = {25_000: [1, 2, 3, 4, 6, 8], 100_000: [1, 2, 4, 8]}
    recipe = TrainConfig(steps=3 if quick else 300, batch_size=16, context=64, lr=3e-3,
                         warmup_steps=20, eval_batches=1 if quick else 8)
    arms = []
    for budget, depths in budgets.items():
        for s in shapes_for_budget(budget, base, tolerance=0.08, d_multiple=2, n_layers=depths):
            lr = lr_for_width(recipe.lr, s.d_model, 64, "1/d")
            arms.append(Arm(
                f"P={budget} L={s.n_layer}", s.config, recipe.replace(lr=lr),
                {"budget": budget, "n_layer": s.n_layer, "d_model": s.d_model,
                 "n_head": s.n_head, "non_embedding": s.non_embedding,
                 "aspect_ratio": s.aspect_ratio, "lr_ref": recipe.lr, "d_ref": 64,
                 "lr_rule": "1/d"}))
    return Experiment(
        name="budget_sweep_300_steps", quick=quick, keep_models=True,
        description=(
            "Chapter 6 (C14, the one-seed first look): every shape within 8 % of a "
            "non-embedding budget P (25,000: L = 1, 2, 3, 4, 6, 8; 100,000: L = 1, 2, 4, 8; "
            "pre-norm, GPT-2 init, 2 heads, context 64) trained on the shipped corpus with one "
            "recipe and the same tokens: 300 steps of 16 x 64 characters, AdamW, lr 3e-3 x "
            "64 / d (training.budget.lr_for_width, rule 1/d), 20 warm-up steps, cosine "
            "decay, clipping at 1; the same runs as training.budget.budget_sweep with "
            "chapter 6's settings. One seed: an illustration, not a verdict. The trained "
            "weights are kept (NAME.models.pt beside this file): the chapter lets the "
            "shallowest and deepest models of P = 100,000 write text and probes the "
            "8-block one for redundancy."),
        measures=("training loss per step; validation loss after the last step (8 batches "
                  "of 16 x 64 held-out characters)"),
        data="python_topics", arms=tuple(arms), seeds=(0,))


def sweep_points(record, seed: int = 0) -> list:
    """The runs of ``seed`` in a record of ``budget_sweep_300_steps`` as the
    ``budget.SweepPoint``s that ``budget_sweep`` returns for the same shapes, in the record's
    order: each arm's shape from its ``info``, its rate from its recipe, its final validation
    loss and whether it diverged."""
    from depthnotes.core.config import aspect_ratio
    from depthnotes.training.budget import SweepPoint

    points = []
    for name in record.arms:
        info, final = record.arm(name)["info"], record.run(name, seed)["final"]
        points.append(SweepPoint(
            info["budget"], info["n_layer"], info["d_model"], info["n_head"],
            info["non_embedding"], aspect_ratio(info["n_layer"], info["d_model"]),
            record.arm(name)["recipe"]["lr"], final["eval_loss"], final["diverged"]))
    return points


#: ``budget_basin``'s design, in one place (its description and the tests read it from here).
#: Budgets: two non-embedding P; every depth of BASIN_DEPTHS gets the width (a multiple of 2,
#: 2 heads) whose exact count is closest to P, within BASIN_TOLERANCE.
BASIN_BUDGETS = (50_000, 200_000)


BASIN_DEPTHS = (1, 2, 3, 4, 6, 8, 12)


BASIN_TOLERANCE = 0.05


#: The learning-rate rule (budget.lr_for_width): lr = BASIN_LR_REF * BASIN_D_REF / d, the
#: rate the calibration run trained every shape with (1e-3 at d = 128).
BASIN_LR_REF, BASIN_D_REF, BASIN_LR_RULE = 1e-3, 128, "1/d"


BASIN_STEPS, BASIN_BATCH, BASIN_CONTEXT = 1250, 16, 128


BASIN_WARMUP, BASIN_EVAL_EVERY, BASIN_EVAL_BATCHES = 100, 250, 48


def _basin_measures(same_text: bool = False) -> str:
    """What the basin records measure (``same_text``: every run scored on the same held-out
    batches, as the same-text records are; else each seed on its own)."""
    held_out = (f"the same {BASIN_EVAL_BATCHES} batches of {BASIN_BATCH} x {BASIN_CONTEXT} "
                "held-out characters for every run" if same_text else
                f"{BASIN_EVAL_BATCHES} batches of {BASIN_BATCH} x {BASIN_CONTEXT} held-out "
                "characters")
    return ("training loss per step (window means); validation loss every "
            f"{BASIN_EVAL_EVERY} steps and after the last step ({held_out}); whether and "
            "where a run diverged")


def _basin_arms(quick: bool, lr_ref: float, suffix: str = "",
                eval_seed: int | None = None) -> tuple:
    """``budget_basin``'s shapes, each at the rate ``budget.lr_for_width`` gives its width
    under the 1/d rule with ``lr_ref`` at ``BASIN_D_REF`` (``suffix`` ends each arm's name);
    ``eval_seed`` None draws each seed's held-out batches from its own seed (the first basin
    records), an int scores every seed on the batches it draws (the same-text records)."""
    from depthnotes.training.budget import lr_for_width
    from depthnotes.data.corpus import load_corpus
    from depthnotes.core.params import shapes_for_budget

    base = ModelConfig(n_layer=1, d_model=64, n_head=2, vocab_size=load_corpus().vocab_size,
                       context=BASIN_CONTEXT)
    depths = (1, 2, 12) if quick else BASIN_DEPTHS
    recipe = TrainConfig(steps=4 if quick else BASIN_STEPS, batch_size=4 if quick else
                         BASIN_BATCH, context=16 if quick else BASIN_CONTEXT, lr=BASIN_LR_REF,
                         warmup_steps=2 if quick else BASIN_WARMUP, decay="cosine",
                         grad_clip=1.0, eval_every=2 if quick else BASIN_EVAL_EVERY,
                         eval_batches=1 if quick else BASIN_EVAL_BATCHES, eval_seed=eval_seed)
    arms = []
    for budget in BASIN_BUDGETS:
        for s in shapes_for_budget(budget, base, tolerance=BASIN_TOLERANCE, d_multiple=2,
                                   n_layers=depths):
            lr = lr_for_width(lr_ref, s.d_model, BASIN_D_REF, BASIN_LR_RULE)
            arms.append(Arm(
                f"P={budget} L={s.n_layer}{suffix}", s.config, recipe.replace(lr=lr),
                {"budget": budget, "n_layer": s.n_layer, "d_model": s.d_model,
                 "n_head": s.n_head, "non_embedding": s.non_embedding,
                 "aspect_ratio": s.aspect_ratio, "lr_ref": lr_ref,
                 "d_ref": BASIN_D_REF, "lr_rule": BASIN_LR_RULE}))
    return tuple(arms)


@register
def budget_basin(quick: bool = False) -> Experiment:
    from depthnotes.data.corpus import load_corpus

    corpus = load_corpus()
    arms = _basin_arms(quick, BASIN_LR_REF)
    depths = (1, 2, 12) if quick else BASIN_DEPTHS
    train_tokens = int(corpus.train.numel())
    n_epochs = epochs(BASIN_STEPS, BASIN_BATCH, BASIN_CONTEXT, train_tokens)
    val_tokens = int(corpus.val.numel())
    eval_chars = BASIN_EVAL_BATCHES * BASIN_BATCH * BASIN_CONTEXT
    ratios = {P: [a.info["aspect_ratio"] for a in arms if a.info["budget"] == P]
              for P in BASIN_BUDGETS}
    span = " and ".join(f"{max(r):.0f} to {min(r):.1f} at P = {P:,}" for P, r in ratios.items())
    return Experiment(
        name="budget_basin", quick=quick,
        description=(
            "Chapter 6 (C14): is there a flat basin of shapes at fixed parameters, worse at "
            "both ends? Two non-embedding budgets, P = "
            f"{' and '.join(f'{P:,}' for P in BASIN_BUDGETS)}; at each, every depth L = "
            f"{', '.join(map(str, depths))} with the width (a multiple of 2, 2 heads) whose "
            f"exact count is within {BASIN_TOLERANCE:.0%} of P (params.shapes_for_budget): "
            f"d/L from {span}. Pre-norm, GPT-2 init, context {BASIN_CONTEXT}. Every shape "
            f"gets the same tokens: {BASIN_STEPS:,} steps of {BASIN_BATCH} x "
            f"{BASIN_CONTEXT} characters = {BASIN_STEPS * BASIN_BATCH * BASIN_CONTEXT:,} "
            f"characters, {n_epochs:.1f} epochs over the {train_tokens:,}-character training "
            "split. AdamW, lr by the chapter's 1/d rule with the calibration run's "
            f"reference, lr = {BASIN_LR_REF:g} x {BASIN_D_REF} / d (budget.lr_for_width; no "
            f"grid), {BASIN_WARMUP} warm-up steps, cosine decay to 0.1 x lr, clipping at 1. "
            "3 seeds per shape (a seed fixes the init and the batches). Validation loss every "
            f"{BASIN_EVAL_EVERY} steps on {BASIN_EVAL_BATCHES} batches of {BASIN_BATCH} x "
            f"{BASIN_CONTEXT} held-out characters ({eval_chars:,} characters, "
            f"{eval_chars / val_tokens:.1f} times the {val_tokens:,}-character validation "
            "split). Cut to fit about "
            "60 CPU-minutes (timed at 19-108 ms per training step per shape on one thread of a "
            "loaded machine: about 57 CPU-minutes in all, about 30 minutes on 2 free cores): 1,250 steps rather than the calibration's "
            "1,500, no learning-rate grid, no budget above 200,000, no L = 16, 3 seeds "
            "rather than 5."),
        measures=_basin_measures(),
        data="python_topics", arms=tuple(arms), seeds=(0, 1, 2))


#: ``budget_basin_lr``'s reference rate: twice ``budget_basin``'s, so that every shape has
#: two rates (its 1/d rate and twice it) and is scored at the better one.
BASIN_LR_REF_2 = 2 * BASIN_LR_REF


@register
def budget_basin_lr(quick: bool = False) -> Experiment:
    arms = _basin_arms(quick, BASIN_LR_REF_2, suffix=" lr x2")
    return Experiment(
        name="budget_basin_lr", quick=quick,
        description=(
            "Chapter 6 (C14): budget_basin's shapes, recipe and seeds at twice each shape's "
            f"rate (lr = {BASIN_LR_REF_2:g} x {BASIN_D_REF} / d), so that with budget_basin "
            "every shape has a grid of two rates and the chapter scores each shape at the "
            "better one (verdicts.ch6_budget.basin_grid over the basin records). 3 seeds "
            "per shape "
            "(42 runs). CPU estimate about 57 minutes, as budget_basin. Cut: two rates, not "
            "three."),
        measures=_basin_measures(),
        data="python_topics", arms=arms, seeds=(0, 1, 2))


#: ``budget_basin_lr_high``'s multiples of the 1/d rate: with budget_basin (1x) and
#: budget_basin_lr (2x), every shape has a grid of four rates, 1x to 8x.
BASIN_HIGH_MULTIPLES = (4, 8)


@register
def budget_basin_lr_high(quick: bool = False) -> Experiment:
    arms = tuple(a for m in BASIN_HIGH_MULTIPLES
                 for a in _basin_arms(quick, m * BASIN_LR_REF, suffix=f" lr x{m}"))
    return Experiment(
        name="budget_basin_lr_high", quick=quick,
        description=(
            "Chapter 6 (C14): budget_basin's shapes, recipe and seeds at "
            f"{' and '.join(f'{m}x' for m in BASIN_HIGH_MULTIPLES)} each shape's 1/d rate "
            f"(lr = {BASIN_HIGH_MULTIPLES[0] * BASIN_LR_REF:g} and "
            f"{BASIN_HIGH_MULTIPLES[-1] * BASIN_LR_REF:g} x {BASIN_D_REF} / d), so that "
            "every shape has a wider grid of rates; the chapter judges a shape only where "
            "its best rate is inside the grid (evidence.best_rate). Held-out batches are "
            "drawn from each run's seed, as in budget_basin, so that every rate is scored "
            "the same way. 3 seeds per shape (84 runs); "
            "CPU estimate about 115 CPU-minutes, about 70 minutes on 2 workers."),
        measures=_basin_measures(),
        data="python_topics", arms=arms, seeds=(0, 1, 2))


#: ``budget_basin_lr_top``'s multiples of the 1/d rate: with the three records above, every
#: shape has a grid of six rates, 1x to 32x.
BASIN_TOP_MULTIPLES = (16, 32)


@register
def budget_basin_lr_top(quick: bool = False) -> Experiment:
    arms = tuple(a for m in BASIN_TOP_MULTIPLES
                 for a in _basin_arms(quick, m * BASIN_LR_REF, suffix=f" lr x{m}"))
    return Experiment(
        name="budget_basin_lr_top", quick=quick,
        description=(
            "Chapter 6 (C14): budget_basin's shapes, recipe and seeds at "
            f"{' and '.join(f'{m}x' for m in BASIN_TOP_MULTIPLES)} each shape's 1/d rate "
            f"(lr = {BASIN_TOP_MULTIPLES[0] * BASIN_LR_REF:g} and "
            f"{BASIN_TOP_MULTIPLES[-1] * BASIN_LR_REF:g} x {BASIN_D_REF} / d), so that with "
            "budget_basin, budget_basin_lr and budget_basin_lr_high every shape has six "
            "rates (1x to 32x). Held-out batches are drawn from each run's seed, as in "
            "budget_basin, so that all six rates are scored the same way. 3 seeds "
            "per shape (84 runs); CPU estimate about 86 CPU-minutes, about 45 minutes on 2 "
            "workers."),
        measures=_basin_measures(),
        data="python_topics", arms=arms, seeds=(0, 1, 2))


#: ``layer_redundancy``'s model: ``budget_basin``'s shape at this budget and depth, and the
#: shallower depths of the same width it is compared with.
REDUNDANCY_BUDGET, REDUNDANCY_DEPTH, REDUNDANCY_SHALLOWER = 200_000, 8, (2, 4)


@register
def layer_redundancy(quick: bool = False) -> Experiment:
    return _redundancy("layer_redundancy", quick, eval_seed=None)


def _redundancy(name: str, quick: bool, eval_seed: int | None) -> Experiment:
    """``layer_redundancy`` (``eval_seed`` None, as ``budget_basin``) or its same-text
    version (``eval_seed`` 0, as ``budget_basin_same_text``)."""
    from depthnotes.measure.record_probes import PROBE_SEQUENCES

    deep = next(a for a in _basin_arms(quick, BASIN_LR_REF, eval_seed=eval_seed)
                if a.info["budget"] == REDUNDANCY_BUDGET
                and a.info["n_layer"] == (2 if quick else REDUNDANCY_DEPTH))
    probes = [REMOVAL_COST, "update_cosines", "angular_distances", "drop_last_losses"]
    arms = [Arm(deep.name, deep.model, deep.recipe,
                {**deep.info, "final_probes": probes})]
    for k in ((1,) if quick else REDUNDANCY_SHALLOWER):
        arms.append(Arm(f"{deep.name} -> L={k}", deep.model.replace(n_layer=k), deep.recipe,
                        {**deep.info, "n_layer": k, "final_probes": ["drop_last_losses"]}))
    d = deep.model.d_model
    same_text = ("" if eval_seed is None else
                 " Every seed scored on the same held-out text (layer_redundancy's runs, bit "
                 "for bit on the same kind of CPU; its seeds were scored on their own).")
    return Experiment(
        name=name, quick=quick,
        description=(
            f"Chapter 6 (C13): do a trained model's deep layers grow redundant? budget_basin's "
            f"{REDUNDANCY_DEPTH}-block shape at P = {REDUNDANCY_BUDGET:,} (d = {d}; the same "
            "config, recipe and seeds, so its losses repeat that record's), with its "
            f"per-layer measures kept: after training, on one held-out batch of "
            f"{PROBE_SEQUENCES} x {deep.recipe.context} characters, the cosine of consecutive "
            "blocks' updates, the angle each block turns the stream, the loss rise when one "
            "block is removed and the loss with the last n blocks removed. Beside it, models "
            f"of the same width with {' and '.join(map(str, REDUNDANCY_SHALLOWER))} blocks "
            "trained from scratch with the same recipe: removing blocks is read against "
            "training fewer. The untrained reference is measured in the chapter on the same "
            "batch (record_probes.final_probes on untrained models). 3 seeds per arm. CPU "
            "estimate about 8 minutes. Cut: one budget, one depth." + same_text),
        measures=("training loss per step (window means); validation loss every "
                  f"{BASIN_EVAL_EVERY} steps and at the end; after training, the per-layer "
                  "measures named in each arm's info['final_probes']"),
        data="python_topics", arms=tuple(arms), seeds=(0, 1, 2))


#: The basin's records again, every seed scored on one held-out text (``eval_seed`` 0): the
#: same shapes, recipe, rates and seeds, so the same training runs on the same kind of CPU (on
#: another, floating-point differences move training a little), whose first records drew
#: each seed's held-out batches from its own seed. One record per pair of rate multiples, each
#: short enough for one sitting of the machine; defined 2026-12-06, before any of them ran.
#: Chapters 6 and 7 read them (``ch6_budget.BASIN_RECORDS``) in place of the first records.
SAME_TEXT_BASIN = {
    "budget_basin_same_text": ((1, 2), ("budget_basin", "budget_basin_lr")),
    "budget_basin_same_text_high": ((4, 8), ("budget_basin_lr_high",)),
    "budget_basin_same_text_top": ((16, 32), ("budget_basin_lr_top",)),
}


def _basin_same_text(name: str, quick: bool) -> Experiment:
    """One of ``SAME_TEXT_BASIN``'s records: budget_basin's shapes at its multiples of the
    1/d rate (arm names as in the first records it repeats: no suffix at 1x, " lr xM"
    above)."""
    multiples, was = SAME_TEXT_BASIN[name]
    arms = tuple(a for m in multiples
                 for a in _basin_arms(quick, m * BASIN_LR_REF,
                                      suffix="" if m == 1 else f" lr x{m}", eval_seed=0))
    return Experiment(
        name=name, quick=quick,
        description=(
            f"Chapter 6 (C14): budget_basin's shapes, recipe and seeds at "
            f"{' and '.join(f'{m}x' for m in multiples)} each shape's 1/d rate, every seed "
            f"scored on the same {BASIN_EVAL_BATCHES} held-out batches of {BASIN_BATCH} x "
            f"{BASIN_CONTEXT} characters: the shapes, recipe, rates and seeds of "
            f"{' and '.join(was)} (the same runs, bit for bit, on the same kind of CPU), "
            "whose seeds were each scored on their own held-out batches. With the other "
            "same-text basin records every shape has six rates, 1x to 32x, on one text. "
            f"3 seeds per shape ({len(arms) * 3} runs). CPU estimate: as "
            f"{' and '.join(was)} (the README gives their run times). Defined 2026-12-06, "
            "before it ran."),
        measures=_basin_measures(same_text=True),
        data="python_topics", arms=arms, seeds=(0, 1, 2))


@register
def budget_basin_same_text(quick: bool = False) -> Experiment:
    return _basin_same_text("budget_basin_same_text", quick)


@register
def budget_basin_same_text_high(quick: bool = False) -> Experiment:
    return _basin_same_text("budget_basin_same_text_high", quick)


@register
def budget_basin_same_text_top(quick: bool = False) -> Experiment:
    return _basin_same_text("budget_basin_same_text_top", quick)


@register
def layer_redundancy_same_text(quick: bool = False) -> Experiment:
    return _redundancy("layer_redundancy_same_text", quick, eval_seed=0)


#: ``layer_pruning``'s design (C13 by Gromov et al.'s and ShortGPT's protocols): the width,
#: the deep stacks that are pruned, the shallower stacks trained from scratch beside them, the
#: one learning rate (half the best bracketed rate of budget_basin's d = 64 shape, P = 200k,
#: L = 4: 8e-3 there; halved for stacks 6 to 12 times deeper), and the recipe.
PRUNE_WIDTH, PRUNE_DEPTHS, PRUNE_CONTROLS, PRUNE_LR = 64, (24, 48), (6, 12), 4e-3
PRUNE_STEPS, PRUNE_BATCH, PRUNE_CONTEXT = 2000, 16, 64


@register
def layer_pruning(quick: bool = False) -> Experiment:
    from depthnotes.data.corpus import load_corpus

    deep = (4,) if quick else PRUNE_DEPTHS
    controls = (1, 2) if quick else PRUNE_CONTROLS
    recipe = TrainConfig(steps=4 if quick else PRUNE_STEPS, batch_size=4 if quick else
                         PRUNE_BATCH, context=16 if quick else PRUNE_CONTEXT, lr=PRUNE_LR,
                         warmup_steps=2 if quick else 100, decay="cosine", grad_clip=1.0,
                         eval_every=2 if quick else 500, eval_batches=1 if quick else 32,
                         eval_seed=0)
    base = ModelConfig(n_layer=1, d_model=PRUNE_WIDTH, n_head=2,
                       vocab_size=load_corpus().vocab_size, context=recipe.context)
    probes = ["angular_distances", "block_influence", "drop_last_losses",
              "gromov_prune_losses", "gromov_prune_starts", "shortgpt_prune_losses",
              REMOVAL_COST]
    arms = [Arm(f"L={L} pruned", base.replace(n_layer=L), recipe,
                {"n_layer": L, "role": "pruned", "final_probes": probes}) for L in deep]
    arms += [Arm(f"L={L} from scratch", base.replace(n_layer=L), recipe,
                 {"n_layer": L, "role": "control", "final_probes": ["drop_last_losses"]})
             for L in controls]
    return Experiment(
        name="layer_pruning", quick=quick,
        description=(
            f"Chapter 6 (C13) by the published pruning protocols: pre-norm stacks of width "
            f"{PRUNE_WIDTH} (2 heads, GPT-2 init) at L = "
            f"{' and '.join(map(str, PRUNE_DEPTHS))}, trained {PRUNE_STEPS:,} steps of "
            f"{PRUNE_BATCH} x {PRUNE_CONTEXT} characters (AdamW, peak {PRUNE_LR:g}, 100 "
            "warm-up steps, cosine decay, clipping at 1), then pruned without retraining: "
            "for n = 0 .. L/2, Gromov et al.'s rule (remove the n contiguous blocks whose "
            "input and output streams are closest in angle) and ShortGPT's (remove the n "
            "blocks of lowest Block Influence), the loss measured on one fixed held-out "
            f"batch of 64 x {PRUNE_CONTEXT} characters; the chosen blocks are picked on the "
            "same batch. Beside them, stacks of "
            f"{' and '.join(map(str, PRUNE_CONTROLS))} blocks of the same width trained from "
            "scratch with the same recipe: a pruned stack is read against training a "
            "shallower one. Validation loss on the same 32 held-out batches for every run. "
            "3 seeds per arm (12 runs). Cut: one learning rate (no grid), no healing "
            "fine-tune after pruning (Gromov et al. heal with QLoRA), no L = 96."),
        measures=("training loss per step (window means); validation loss every 500 steps "
                  "and at the end; after training, the per-layer measures named in each "
                  "arm's info['final_probes']"),
        data="python_topics", arms=tuple(arms), seeds=(0, 1, 2))



#: Named experiments of this chapter whose full record is not stored yet, with why.
UNRECORDED: dict[str, str] = {
}

#: ``layer_pruning_rates``'s rates: half and twice ``PRUNE_LR``, so that with layer_pruning
#: every arm has a grid of three rates, 2x apart, and each depth is read at its best bracketed
#: rate (evidence.best_rate).
PRUNE_OTHER_RATES = (PRUNE_LR / 2, PRUNE_LR * 2)


def prune_rate_suffix(lr: float) -> str:
    """The end of an arm's name in ``layer_pruning_rates`` (layer_pruning's arms, at ``lr``)."""
    return f" lr {lr:g}"


def _pruning_arms_at(base: Experiment, lr: float) -> tuple:
    """``layer_pruning``'s arms (``base``) at peak rate ``lr``: only the rate, the name's end
    (``prune_rate_suffix``) and ``info['lr']`` change."""
    return tuple(Arm(a.name + prune_rate_suffix(lr), a.model, a.recipe.replace(lr=lr),
                     {**a.info, "lr": lr}) for a in base.arms)


@register
def layer_pruning_rates(quick: bool = False) -> Experiment:
    base = layer_pruning(quick)
    arms = tuple(arm for lr in PRUNE_OTHER_RATES for arm in _pruning_arms_at(base, lr))
    return Experiment(
        name="layer_pruning_rates", quick=quick,
        description=(
            "Chapter 6 (C13) across learning rates: layer_pruning's arms (the pruned stacks "
            f"at L = {' and '.join(map(str, PRUNE_DEPTHS))} with their pruning probes, and "
            f"the controls trained from scratch at L = {' and '.join(map(str, PRUNE_CONTROLS))}"
            "; the same model, recipe, seeds, held-out text and probe batch) at peak "
            f"{' and '.join(f'{lr:g}' for lr in PRUNE_OTHER_RATES)}, so that with "
            f"layer_pruning's {PRUNE_LR:g} every arm has three rates, 2x apart, and the "
            "chapter reads each depth at its best rate where the grid brackets it. 3 seeds "
            f"per arm ({len(arms) * 3} runs). CPU estimate about 60 minutes on 2 workers "
            "(twice layer_pruning). Cut: three rates, not more; no healing at the new rates."),
        measures=base.measures, data=base.data, arms=arms, seeds=base.seeds)


#: ``layer_pruning_rates_top``'s rate: twice the top of ``layer_pruning_rates`` (every arm did
#: best at 8e-3, the top of the three-rate grid), so that the grid can bracket each arm's best.
PRUNE_TOP_RATE = PRUNE_LR * 4


@register
def layer_pruning_rates_top(quick: bool = False) -> Experiment:
    base = layer_pruning(quick)
    arms = _pruning_arms_at(base, PRUNE_TOP_RATE)
    return Experiment(
        name="layer_pruning_rates_top", quick=quick,
        description=(
            "Chapter 6 (C13): layer_pruning's arms (the pruned stacks at L = "
            f"{' and '.join(map(str, PRUNE_DEPTHS))} with their pruning probes, and the "
            f"controls trained from scratch at L = {' and '.join(map(str, PRUNE_CONTROLS))}; "
            "the same model, recipe, seeds, held-out text and probe batch) at peak "
            f"{PRUNE_TOP_RATE:g}, because every arm of layer_pruning_rates did best at its "
            "top rate, 8e-3: with it each arm has four rates, 2x apart. 3 seeds per arm "
            f"({len(arms) * 3} runs). CPU estimate about 30 minutes on 2 workers (as "
            "layer_pruning). Cut: no healing at this rate."),
        measures=base.measures, data=base.data, arms=arms, seeds=base.seeds)


#: ``layer_pruning_healed``'s healing fine-tune: steps (a tenth of the training run), warm-up
#: (the optimizer starts fresh) and the constant rate, a fraction of the peak rate: the one
#: training ended at (cosine decay to 0.1 x the peak; ``HEAL_LR`` at ``PRUNE_LR``); and the
#: fractions of the stack removed before healing.
HEAL_STEPS, HEAL_WARMUP, HEAL_LR_FRACTION = 200, 20, 0.1
HEAL_LR = PRUNE_LR * HEAL_LR_FRACTION
HEAL_FRACTIONS = (4, 2)       # n = L // 4 and L // 2


def heal_plan(L: int) -> list[list]:
    """The (rule, n) pairs healed at depth L: the full model given the same steps (the
    control), then each rule at each of ``HEAL_FRACTIONS``."""
    return [["none", 0]] + [[rule, L // f] for rule in ("gromov", "shortgpt")
                            for f in HEAL_FRACTIONS]


def healed_arms(quick: bool, lr: float = PRUNE_LR) -> tuple[Arm, ...]:
    """``layer_pruning``'s pruned arms trained at peak ``lr``, each healed at
    ``HEAL_LR_FRACTION`` x ``lr`` (the rate its training ends at): at ``PRUNE_LR`` exactly
    layer_pruning's arms; at another rate named, trained and labelled as layer_pruning_rates'
    arms at that rate are, so that the healed stacks are those records' trained stacks. One
    builder for every healing record, so that they differ only in the rate."""
    heal = {"steps": 2 if quick else HEAL_STEPS, "warmup_steps": 1 if quick else HEAL_WARMUP,
            "lr": lr * HEAL_LR_FRACTION}
    arms = []
    for a in layer_pruning(quick).arms:
        if a.info["role"] != "pruned":
            continue
        if lr != PRUNE_LR:
            a = Arm(a.name + prune_rate_suffix(lr), a.model, a.recipe.replace(lr=lr),
                    {**a.info, "lr": lr})
        arms.append(Arm(a.name, a.model, a.recipe, {
            **a.info, "final_probes": ["gromov_prune_losses", "gromov_prune_starts",
                                       "shortgpt_prune_losses", "healed_losses"],
            "heal": {**heal, "plan": heal_plan(a.info["n_layer"])}}))
    return tuple(arms)


@register
def layer_pruning_healed(quick: bool = False) -> Experiment:
    arms = healed_arms(quick)
    return Experiment(
        name="layer_pruning_healed", quick=quick,
        description=(
            "Chapter 6 (C13) with a healing fine-tune: layer_pruning's pruned stacks (width "
            f"{PRUNE_WIDTH}, L = {' and '.join(map(str, PRUNE_DEPTHS))}; the same model, "
            "recipe and seeds, so the same trained weights), pruned by Gromov et al.'s and "
            "ShortGPT's rules at n = L/4 and L/2 and then each pruned copy trained "
            f"{HEAL_STEPS} more steps on the training split ({HEAL_WARMUP} warm-up steps, "
            f"then a constant {HEAL_LR:g}, the rate training ended at; a fresh AdamW, "
            "clipping at 1); beside them the full model given the same steps, so that "
            "healing is read against what the extra steps alone do. Every loss on the same "
            f"fixed held-out batch of 64 x {PRUNE_CONTEXT} characters as layer_pruning's; "
            "the blocks are chosen on that batch. 3 seeds (6 runs). Cut: full fine-tuning "
            "instead of Gromov et al.'s QLoRA, two n per rule."),
        measures=("training loss per step (window means); validation loss every 500 steps "
                  "and at the end; after training, the pruning losses without healing and, "
                  "per entry of info['heal']['plan'], the loss after healing"),
        data="python_topics", arms=arms, seeds=(0, 1, 2))


#: ``layer_pruning_healed_best``'s peak rate: both pruned stacks' best bracketed rate on the
#: four-rate grid of ``PRUNING_RECORDS`` (8e-3; 1.6e-2 clearly worse), where
#: ``layer_pruning_healed`` trained at ``PRUNE_LR``, clearly off the best at 24 blocks.
HEAL_BEST_RATE = PRUNE_LR * 2


@register
def layer_pruning_healed_best(quick: bool = False) -> Experiment:
    base = layer_pruning_healed(quick)
    arms = healed_arms(quick, HEAL_BEST_RATE)
    return Experiment(
        name="layer_pruning_healed_best", quick=quick,
        description=(
            "Chapter 6 (C13) with a healing fine-tune at the pruned stacks' best rate: "
            "layer_pruning_healed's design (the same depths, rules, cuts, heal steps and "
            f"probe batch) with the stacks trained at peak {HEAL_BEST_RATE:g} (the very runs "
            "of layer_pruning_rates at that rate: same model, recipe and seeds) and healed at "
            f"a constant {HEAL_BEST_RATE * HEAL_LR_FRACTION:g}, the rate their training ended "
            f"at; only the rate differs. Run because on the four rates of layer_pruning, "
            "layer_pruning_rates and layer_pruning_rates_top both pruned stacks did best at "
            f"{HEAL_BEST_RATE:g}, inside the grid, where the first healing record's "
            f"{PRUNE_LR:g} was off the best. 3 seeds ({len(arms) * 3} runs). CPU estimate "
            "about 40 minutes on 2 workers. Cut: as layer_pruning_healed."),
        measures=base.measures, data=base.data, arms=arms, seeds=base.seeds)


#: What ``layer_similarity_64`` measures on each trained stack: the 8-block record's
#: similar-updates measures (``layer_redundancy``), on layer_pruning's deeper, wider stacks.
SIMILARITY_PROBES = ["update_cosines", "angular_distances"]


@register
def layer_similarity_64(quick: bool = False) -> Experiment:
    base = layer_pruning(quick)
    pruned = [a for a in _pruning_arms_at(base, HEAL_BEST_RATE) if a.info["role"] == "pruned"]
    arms = tuple(Arm(a.name, a.model, a.recipe, {**a.info, "final_probes": SIMILARITY_PROBES})
                 for a in pruned)
    return Experiment(
        name="layer_similarity_64", quick=quick,
        description=(
            "Chapter 6 (C13, similar updates) on the pruned stacks: layer_pruning's pre-norm "
            f"stacks of width {PRUNE_WIDTH} at L = {' and '.join(map(str, PRUNE_DEPTHS))}, "
            f"trained at their best bracketed rate, {HEAL_BEST_RATE:g} (the very runs of "
            "layer_pruning_rates at that rate: same model, recipe and seeds), then measured "
            "as layer_redundancy measures its 8-block model: on the probe batch, the cosine "
            "of consecutive blocks' updates and the angle each block turns the stream. Run "
            "because the similar-updates part was judged on one 8-block, 46-wide model "
            f"only. 3 seeds ({len(arms) * 3} runs). CPU estimate about 45 CPU-minutes. Cut: "
            "one rate (the best), no controls (the untrained reference is measured in the "
            "chapter)."),
        measures=base.measures, data=base.data, arms=arms, seeds=base.seeds)
