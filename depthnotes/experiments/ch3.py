"""Chapter 3's experiments (claim C5): the sweep over k-hop induction heads that the verdict
rests on, its second learning rate, its kept models and its alphabet's calibration
(``induction_*``; ``induction_fast`` is the page's small run); and the first task,
k-hop pointer chasing (``khop*``), whose twelve-symbol sweep chapter 8's looped arms are built
from.
"""

from __future__ import annotations

from depthnotes.core.config import ModelConfig
from depthnotes.data.tasks import InductionHops, PointerChasing
from depthnotes.experiments.spec import Arm, Experiment, register
from depthnotes.training.loop import TrainConfig
from depthnotes.training.tasks import task_recipe


@register
def khop_depth_sweep(quick: bool = False) -> Experiment:
    task = PointerChasing(max_hops=3, n_nodes=12, n_queries=12)
    base = ModelConfig(n_layer=1, d_model=64, n_head=4, vocab_size=task.vocab_size,
                       context=task.seq_len)
    width_depths = (1, 2) if quick else (1, 2, 3, 4, 5, 6)
    budget_depths = (1, 2) if quick else (1, 2, 3, 4, 6)
    budget = count_params_non_embedding(base.replace(n_layer=4))    # the L = 4, d = 64 model
    recipe = task_recipe(task, steps=20 if quick else 5000,
                         batch_size=4 if quick else 64, lr=3e-3,
                         warmup_steps=100, eval_sequences=16 if quick else 512,
                         eval_every=10 if quick else 250)
    arms = _khop_family_arms(base, width_depths, budget_depths, budget, recipe,
                             lambda cfg: (1e-3, 3e-3, 1e-2) if cfg.n_layer == 1 else (3e-3,))
    return Experiment(
        name="khop_depth_sweep", quick=quick,
        description=(
            "Chapter 3 (C5): k-hop pointer chasing over 12 symbols, k = 1, 2, 3 mixed in "
            "every sequence (12 queries). Two families of pre-norm models (4 heads, GPT-2 "
            "init): fixed width d = 64 with L = 1..6 blocks, and fixed parameters at "
            f"{budget:,} non-embedding parameters (the L = 4, d = 64 model's count) with "
            "L = 1, 2, 3, 4, 6, wider when shallower (shapes_for_budget, d a multiple of 4); "
            "the L = 4 model belongs to both. train_on_task: batch 64, AdamW peak lr 3e-3, "
            "100 warm-up steps, cosine decay to zero, 5,000 steps (320,000 fresh sequences). "
            "The one-block models also run at 1e-3 and 1e-2, so that each can be scored at "
            "its best rate. Accuracy per k every 250 steps on 128 fresh sequences, and at "
            "the end on 512. Three seeds."),
        measures=("training loss per step (window means); accuracy per k every 250 steps "
                  "(128 sequences, 12 queries each) and after training (512 sequences)"),
        data=task, arms=tuple(arms), seeds=(0, 1, 2))


def _khop_family_arms(base: ModelConfig, width_depths, budget_depths, budget: int,
                      recipe: TrainConfig, rates) -> tuple[Arm, ...]:
    """Chapter 3's two families as arms: *fixed width* (``base`` at each of ``width_depths``)
    and *fixed parameters* (``budget`` non-embedding parameters at each of ``budget_depths``,
    wider when shallower; a shape in both families is one arm), each shape at every learning
    rate of ``rates(config)``. ``info["families"]`` says which families an arm belongs to."""
    from depthnotes.core.params import shapes_for_budget

    families: dict[ModelConfig, list[str]] = {}
    for L in width_depths:
        families.setdefault(base.replace(n_layer=L), []).append("fixed width")
    for s in shapes_for_budget(budget, base, n_layers=list(budget_depths), tolerance=0.1,
                               d_multiple=4):
        families.setdefault(s.config, []).append("fixed parameters")
    return tuple(_khop_arm(cfg, recipe, lr, fam)
                 for cfg, fam in families.items() for lr in rates(cfg))


def _khop_arm(cfg: ModelConfig, recipe: TrainConfig, lr: float, families: list[str]) -> Arm:
    """One of chapter 3's arms: ``cfg`` trained by ``recipe`` at ``lr``, named and described
    the way ``khop_analysis`` reads it (``info``: shape, rate, families, parameters)."""
    return Arm(f"L={cfg.n_layer} d={cfg.d_model} lr={lr:g}", cfg, recipe.replace(lr=lr),
               {"n_layer": cfg.n_layer, "d_model": cfg.d_model, "lr": lr,
                "families": families, "non_embedding": count_params_non_embedding(cfg)})


@register
def khop16_depth_sweep(quick: bool = False) -> Experiment:
    task = PointerChasing(max_hops=3, n_nodes=16, n_queries=12, layout="hop_marker")
    base = ModelConfig(n_layer=1, d_model=64, n_head=4, vocab_size=task.vocab_size,
                       context=task.seq_len)
    width_depths = (1, 2) if quick else (1, 2, 3, 4)
    budget_depths = (1, 2) if quick else (1, 2, 3, 4)
    budget = count_params_non_embedding(base.replace(n_layer=4))    # the L = 4, d = 64 model
    recipe = task_recipe(task, steps=20 if quick else 4000,
                         batch_size=4 if quick else 64, lr=3e-3,
                         warmup_steps=100, eval_sequences=16 if quick else 512,
                         eval_every=10 if quick else 250)
    arms = _khop_family_arms(base, width_depths, budget_depths, budget, recipe,
                             lambda cfg: (1e-3, 3e-3) if cfg.n_layer <= 2 else (3e-3,))
    return Experiment(
        name="khop16_depth_sweep", quick=quick,
        description=(
            "Chapter 3 (C5), pointer chasing: k-hop pointer chasing over 16 "
            "symbols, k = 1, 2, 3 mixed in every sequence (12 queries), in the 'hop_marker' "
            "layout (each query is a hop marker and then the start symbol's own token). "
            "Two families of pre-norm models (4 heads, GPT-2 init): fixed width "
            f"d = 64 with L = 1..4, and fixed parameters at {budget:,} non-embedding "
            "parameters (the L = 4, d = 64 model's count) with L = 1..4, wider when "
            "shallower. train_on_task: batch 64, AdamW, 100 warm-up steps, cosine decay "
            "to zero, 4,000 steps (256,000 fresh sequences). Learning rates: 3e-3 for "
            "every shape, and 1e-3 as well for the one- and two-block shapes; each shape "
            "is scored at its best rate (khop16_rate_check adds 1e-3 for L >= 3). Not run: "
            "depths 5 and 6. Accuracy per k every 250 steps on 128 fresh "
            "sequences, and at the end on 512. Three seeds."),
        measures=("training loss per step (window means); accuracy per k every 250 steps "
                  "(128 sequences, 12 queries each) and after training (512 sequences)"),
        data=task, arms=arms, seeds=(0, 1, 2))


@register
def khop16_rate_check(quick: bool = False) -> Experiment:
    sweep = khop16_depth_sweep(quick)
    deepest = 2 if quick else 3            # the quick sweep stops at two blocks
    deep = [a for a in sweep.arms if a.info["n_layer"] >= deepest and a.info["lr"] == 3e-3]
    arms = tuple(Arm(a.name.replace("lr=0.003", "lr=0.001"), a.model,
                     a.recipe.replace(lr=1e-3), {**a.info, "lr": 1e-3}) for a in deep)
    return Experiment(
        name="khop16_rate_check", quick=quick,
        description=(
            "Chapter 3, pointer chasing: khop16_depth_sweep's deeper shapes (L >= 3), "
            "which it ran at 3e-3 only, at 1e-3, with the sweep's task, recipe and seeds, "
            "so that every shape has both rates."),
        measures=sweep.measures, data=sweep.data, arms=arms, seeds=sweep.seeds)


@register
def khop16_query_tokens(quick: bool = False) -> Experiment:
    import dataclasses

    sweep = khop16_depth_sweep(quick)
    task = dataclasses.replace(sweep.data, layout="query_tokens")
    two = [a for a in sweep.arms if a.name.startswith("L=2 d=64 ")]
    arms = tuple(Arm(a.name, a.model.replace(vocab_size=task.vocab_size,
                                             context=task.seq_len),
                     a.recipe.replace(context=task.seq_len), a.info)
                 for a in two)
    return Experiment(
        name="khop16_query_tokens", quick=quick,
        description=(
            "Chapter 3, pointer chasing, the layout: khop16_depth_sweep's "
            "two-block, 64-wide arms (lr 1e-3 and 3e-3, the same recipe and seeds) on the "
            "same task written in the 'query_tokens' layout (one token per query, its own "
            "embedding for each (k, x)), to set beside the sweep's 'hop_marker' arms: does "
            "the way a query is written decide whether two hops are learned in 4,000 steps?"),
        measures=sweep.measures, data=task, arms=arms, seeds=sweep.seeds)


@register
def khop16_models(quick: bool = False) -> Experiment:
    sweep = khop16_depth_sweep(quick)
    kept = ("L=1 d=128 lr=0.001", "L=2 d=64 lr=0.001") if not quick else \
        ("L=1 d=64 lr=0.001", "L=2 d=64 lr=0.001")      # the quick sweep has no d = 128
    return Experiment(
        name="khop16_models", quick=quick, keep_models=True,
        description=(
            "Chapter 3's look inside: two arms of khop16_depth_sweep at lr 1e-3, each "
            "shape's best rate there: the widest one block (d = 128, which chained two hops "
            "with every seed) and two blocks at d = 64 (which solved two hops with every "
            "seed), trained again with seed 0 by the same code, so that their weights can "
            "be stored (NAME.models.pt beside this file) and their attention read. "
            "Training is deterministic on one machine; on another CPU the arithmetic may "
            "differ in the last bits, so the chapter checks that their accuracies agree "
            "with the sweep's seed-0 runs to within 0.02, not exactly."),
        measures=sweep.measures, data=sweep.data,
        arms=tuple(a for a in sweep.arms if a.name in kept), seeds=(0,))


@register
def khop16_heads(quick: bool = False) -> Experiment:
    sweep = khop16_depth_sweep(quick)
    one = sweep.arms[0]
    shapes = ((1, 64), (2, 64)) if quick else ((1, 128), (2, 64))
    arms = []
    for heads in (1, 2):
        for L, d in shapes:
            arm = _khop_arm(one.model.replace(n_layer=L, d_model=d, n_head=heads),
                            one.recipe, 1e-3, [])
            arms.append(Arm(f"L={L} d={d} heads={heads} lr=0.001", arm.model, arm.recipe,
                            {**arm.info, "n_head": heads}))
    return Experiment(
        name="khop16_heads", quick=quick,
        description=(
            "Chapter 3, pointer chasing with fewer heads: one block 128 wide and two "
            "blocks 64 wide, with 1 and with 2 heads per block, khop16_depth_sweep's task, "
            "recipe and seeds, at 1e-3 (the best rate of both shapes with 4 heads). The "
            "question: can one block answer f(f(x)) when it cannot read f(x) with one head "
            "and the rest of the table with another?"),
        measures=sweep.measures, data=sweep.data, arms=tuple(arms), seeds=sweep.seeds)


def _khop_long(name: str, n_nodes: int, quick: bool, description: str) -> Experiment:
    """Chapter 3's check of the task on a larger table: ``khop16_depth_sweep``'s task on
    ``n_nodes`` symbols, trained three times as long (12,000 steps at 1e-3), with the two
    shapes the check needs, one block 128 wide and two blocks 64 wide; three seeds."""
    import dataclasses

    sweep = khop16_depth_sweep(quick)
    task = dataclasses.replace(sweep.data, n_nodes=n_nodes)
    recipe = sweep.arms[0].recipe.replace(steps=20 if quick else 12000,
                                          eval_every=10 if quick else 500,
                                          context=task.seq_len)
    base = sweep.arms[0].model.replace(vocab_size=task.vocab_size, context=task.seq_len)
    shapes = ((1, 128), (2, 64))         # the sweep's widest one block; two blocks at d = 64
    arms = tuple(_khop_arm(base.replace(n_layer=L, d_model=d), recipe, 1e-3,
                           ["fixed parameters" if L == 1 else "fixed width"])
                 for L, d in shapes)
    return Experiment(
        name=name, quick=quick, description=description,
        measures=("training loss per step (window means); accuracy per k every 500 steps "
                  "(128 sequences, 12 queries each) and after training (512 sequences)"),
        data=task, arms=arms, seeds=sweep.seeds)


@register
def khop20_long(quick: bool = False) -> Experiment:
    return _khop_long("khop20_long", 20, quick, (
        "Chapter 3, pointer chasing on a larger table: 20 symbols "
        "(khop16_depth_sweep's task otherwise: k = 1..3, 12 queries, "
        "hop-marker layout) for three times as long, 12,000 steps (768,000 fresh "
        "sequences), the two shapes the check needs: the widest one block (d = 128) "
        "and two blocks at d = 64, which have about half its parameters. lr 1e-3, the "
        "best of the sweep's grid for both shapes on 16 symbols; 100 warm-up steps, "
        "cosine decay. Accuracy per k every 500 steps on 128 fresh sequences, and at "
        "the end on 512. Three seeds. Not run: the rest of both families, and a second "
        "rate."))


@register
def khop24_long(quick: bool = False) -> Experiment:
    return _khop_long("khop24_long", 24, quick, (
        "Chapter 3, pointer chasing on 24 symbols: the same record as khop20_long on a "
        "larger table: 12,000 steps at 1e-3, one block 128 wide and two blocks 64 wide, "
        "three seeds. Not run: the rest of both families, and a second rate."))


#: Chapter 3's induction sweep: the task, the width of the fixed-width family, its depths,
#: and the fixed-parameter family's depths (budget: the L = 4, d = 64 model's count).
INDUCTION_TASK = InductionHops(hops=(1, 2, 4, 8), n_symbols=4, length=64)


INDUCTION_WIDTH_DEPTHS = (1, 2, 3, 4, 5, 6)


INDUCTION_BUDGET_DEPTHS = (1, 2, 3, 4, 6)


#: The learning-rate grid: every shape at the first rate; a shape that leaves some k undone
#: (below khop_analysis.SOLVED) with some seed there also at the second
#: (``induction_rate_check``), and is scored at the better of the two.
INDUCTION_RATES = (1e-3, 3e-3)


def _induction_recipe(quick: bool) -> TrainConfig:
    return task_recipe(INDUCTION_TASK, steps=20 if quick else 8000,
                       batch_size=4 if quick else 16,
                       lr=INDUCTION_RATES[0], warmup_steps=200,
                       eval_sequences=16 if quick else 256, eval_every=10 if quick else 500)


@register
def induction_depth_sweep(quick: bool = False) -> Experiment:
    task = INDUCTION_TASK
    base = ModelConfig(n_layer=1, d_model=64, n_head=4, vocab_size=task.vocab_size,
                       context=task.seq_len)
    width_depths = (1, 2) if quick else INDUCTION_WIDTH_DEPTHS
    budget_depths = (1, 2) if quick else INDUCTION_BUDGET_DEPTHS
    budget = count_params_non_embedding(base.replace(n_layer=4))
    recipe = _induction_recipe(quick)
    arms = _khop_family_arms(base, width_depths, budget_depths, budget, recipe,
                             lambda cfg: INDUCTION_RATES[:1])
    return Experiment(
        name="induction_depth_sweep", quick=quick,
        description=(
            "Chapter 3 (C5), the sweep the verdict rests on: k-hop induction heads "
            "(tasks.InductionHops; the task of Sanford, Hsu & Telgarsky 2024) over 64 "
            "symbols of a 4-letter alphabet, k = 1, 2, 4, 8, one k per sequence, every "
            "position a query. Every "
            "pointer points left, so both a chain of single hops (k + 1 blocks) and "
            "doubling (2 + ceil(log2 k) blocks) are open, and in the standard circuit one "
            "hop takes two blocks (one block can only approximate it, by reading a few "
            "places back). Two families of pre-norm "
            "models (4 heads, GPT-2 init): fixed width d = 64 with L = 1..6, and fixed "
            f"parameters at {budget:,} non-embedding parameters (the L = 4, d = 64 "
            "model's count) with L = 1, 2, 3, 4, 6, wider when shallower. train_on_task: "
            "batch 16, AdamW peak lr 1e-3, 200 warm-up steps, cosine decay to zero, 8,000 "
            "steps (128,000 fresh sequences). Every shape that leaves some k undone with "
            "some seed also runs at 3e-3 (induction_rate_check). Accuracy per k every 500 "
            "steps on 128 fresh sequences, and at the "
            "end on 256. Three seeds."),
        measures=("training loss per step (window means); accuracy per k every 500 steps "
                  "(128 sequences, every position with an answer) and after training (256 "
                  "sequences)"),
        data=task, arms=arms, seeds=(0, 1, 2))


@register
def induction16_calibration(quick: bool = False) -> Experiment:
    sweep = induction_depth_sweep(quick)
    task = InductionHops(hops=(1, 2, 4), n_symbols=16, length=128)
    recipe = sweep.arms[0].recipe.replace(steps=20 if quick else 6000,
                                          eval_every=10 if quick else 750,
                                          context=task.seq_len)
    base = sweep.arms[0].model.replace(vocab_size=task.vocab_size, context=task.seq_len)
    shapes = ((1, 64), (2, 64)) if quick else ((1, 128), (5, 64))
    arms = tuple(_khop_arm(base.replace(n_layer=L, d_model=d), recipe, recipe.lr,
                           ["fixed parameters" if L == 1 else "fixed width"])
                 for L, d in shapes)
    return Experiment(
        name="induction16_calibration", quick=quick,
        description=(
            "Chapter 3, the induction task's alphabet: two single-seed runs "
            "on sixteen letters over 128 positions (k = 1, 2, 4), where the last match lies "
            "further back and a window of reads answers fewer chains than on four letters: "
            "one block 128 wide and five blocks 64 wide, 6,000 steps of 16 sequences at "
            "1e-3 (the sweep's recipe otherwise). One seed: an illustration of why the sweep "
            "stayed on four letters (nothing beyond one hop was learned here), not a "
            "verdict."),
        measures=("training loss per step (window means); accuracy per k every 750 steps "
                  "(128 sequences) and after training (256 sequences)"),
        data=task, arms=arms, seeds=(0,))


@register
def induction_fast(quick: bool = False) -> Experiment:
    """Chapter 3's small run, the fast version of ``induction_depth_sweep``: the same task
    family and recipe, cut to k = 1, 2 over 32 symbols, the fixed-width family's first three
    depths, 1,500 steps and one seed. An illustration; the verdict reads the sweep. Its
    record is what the page shows (training it takes more than a minute on two cores of the
    book's machine, over the page's 90 s); the page trains it with FULL=1."""
    sweep = induction_depth_sweep(quick)
    task = InductionHops(hops=(1, 2), n_symbols=sweep.data.n_symbols, length=32)
    recipe = sweep.arms[0].recipe.replace(steps=20 if quick else 1500, warmup_steps=100,
                                          eval_every=10 if quick else 250,
                                          context=task.seq_len)
    base = sweep.arms[0].model.replace(vocab_size=task.vocab_size, context=task.seq_len)
    arms = tuple(_khop_arm(base.replace(n_layer=L), recipe, recipe.lr, ["fixed width"])
                 for L in ((1, 2) if quick else (1, 2, 3)))
    return Experiment(
        name="induction_fast", quick=quick,
        description=("Chapter 3 (C5, the small run): induction_depth_sweep cut to k = 1, 2 "
                     "over 32 symbols, L = 1, 2, 3 at d = 64, 1,500 steps, one seed; an "
                     "illustration, not a verdict."),
        measures=sweep.measures, data=task, arms=arms, seeds=(0,))


#: The shapes of ``induction_depth_sweep`` that leave some k undone (below SOLVED) with some
#: seed at the first rate, as (n_layer, d_model): filled in from that record by the rule
#: above, which ``tests/test_records.py`` applies to the stored record again.
INDUCTION_UNDONE = ((1, 64), (1, 128), (2, 64), (2, 92), (3, 64), (3, 72), (4, 64), (5, 64),
                    (6, 52), (6, 64))          # every shape: none does k = 8 with any seed


@register
def induction_rate_check(quick: bool = False) -> Experiment:
    """The second rate of the induction sweep's grid, run on the shapes its rule picked
    (every one: none does k = 8 at 1e-3). Chapter 3 reads it beside the sweep's record and
    scores each shape at its better rate (``khop_analysis.family_shapes``)."""
    sweep = induction_depth_sweep(quick)
    undone = {(a.info["n_layer"], a.info["d_model"]) for a in sweep.arms[:2]} if quick \
        else set(INDUCTION_UNDONE)
    arms = tuple(_khop_arm(a.model, a.recipe, INDUCTION_RATES[1], a.info["families"])
                 for a in sweep.arms if (a.info["n_layer"], a.info["d_model"]) in undone)
    return Experiment(
        name="induction_rate_check", quick=quick,
        description=(
            "Chapter 3 (C5): the second rate of the induction sweep's grid. Every shape of "
            "induction_depth_sweep that left some k undone (below 0.9) with some seed at "
            "1e-3 runs again at 3e-3, with the same task, recipe and seeds; each shape is "
            "scored at the better rate. Which shapes the rule picks is read off the sweep's "
            "record (INDUCTION_UNDONE)."),
        measures=sweep.measures, data=sweep.data, arms=arms, seeds=sweep.seeds)


@register
def induction_models(quick: bool = False) -> Experiment:
    sweep = induction_depth_sweep(quick)
    kept = {"L=2 d=64 lr=0.001", "L=3 d=64 lr=0.001"} if quick else \
        {"L=3 d=64 lr=0.001", "L=5 d=64 lr=0.001"}
    return Experiment(
        name="induction_models", quick=quick, keep_models=True,
        description=(
            "Chapter 3's look inside the induction task: seed 0 of two fixed-width arms of "
            "induction_depth_sweep at 1e-3, three blocks (two hops by doubling or by "
            "chasing take three) and five (four hops: four blocks by doubling, five by "
            "chasing), trained again by the same code so that their weights can be stored "
            "(NAME.models.pt beside this file) and their attention read. On one machine "
            "the runs equal the sweep's; on another CPU the last bits may differ, so the "
            "chapter checks agreement to within 0.02, not exactly."),
        measures=sweep.measures, data=sweep.data,
        arms=tuple(a for a in sweep.arms if a.name in kept), seeds=(0,))


#: Chapter 3's fixed-depth record: one depth trained on every k from 1 to 8, scored on long
#: chains (``data.tasks.LONG_SPAN``). Relay (one block per hop, the first hop perhaps read
#: off a window) reaches about L or L + 1 hops; doubling reaches 2 ** (L - 2).
FIXED_DEPTH = 5
FIXED_DEPTH_TASK = InductionHops(hops=tuple(range(1, 9)), n_symbols=4, length=64)


@register
def induction_fixed_depth(quick: bool = False) -> Experiment:
    from depthnotes.data.tasks import LONG_SPAN

    task = FIXED_DEPTH_TASK
    L = 2 if quick else FIXED_DEPTH
    cfg = ModelConfig(n_layer=L, d_model=64, n_head=4, vocab_size=task.vocab_size,
                      context=task.seq_len)
    recipe = _induction_recipe(quick).replace(
        steps=20 if quick else 24000, eval_sequences=16 if quick else 1024,
        eval_every=10 if quick else 1000, long_span=LONG_SPAN)
    return Experiment(
        name="induction_fixed_depth", quick=quick,
        description=(
            f"Chapter 3 (C5, k or log k after training): one depth, L = {FIXED_DEPTH} blocks "
            "at d = 64 (4 heads, pre-norm, GPT-2 init), trained on k-hop induction heads "
            "with every k from 1 to 8 (one k per sequence, drawn uniformly; 4 letters, 64 "
            "symbols), and scored on long chains: the queries whose answer lies at least "
            f"{LONG_SPAN} positions back, where a window of reads cannot stand in for hops. "
            "The rule, fixed before the run: a seed's 'hops done' is the largest k such "
            "that it answers at least 0.9 of the queries of every k' <= k, for k' >= 4 on "
            "their long chains, for k' <= 3 (which have almost no long chains) on all their "
            "chains. Relay learning "
            f"(one block per hop, a first hop read off a window) predicts about {FIXED_DEPTH} "
            f"to {FIXED_DEPTH + 1}; pointer doubling predicts 8 (2 + log2 8 = "
            f"{FIXED_DEPTH} blocks). The sweep's recipe (train_on_task, batch 16, AdamW "
            "peak lr 1e-3, 200 warm-up steps, cosine decay to zero) three times as long: "
            "24,000 steps (384,000 fresh sequences). Every seed is scored on the same 1,024 "
            "held-out sequences per k (query_accuracy's seeds); accuracy curves every 1,000 "
            "steps on 128. Three seeds. Cut for CPU time: one "
            "learning rate (the sweep's first; at L = 5 its second, 3e-3, did no better), "
            "one depth."),
        measures=("training loss per step (window means); accuracy per k every 1,000 steps "
                  "(128 sequences) and after training (1,024 sequences), overall and on "
                  f"chains spanning at least {LONG_SPAN} positions (with their number)"),
        data=task, arms=(_khop_arm(cfg, recipe, recipe.lr, ["fixed width"]),),
        seeds=(0, 1, 2))


def count_params_non_embedding(config: ModelConfig) -> int:
    from depthnotes.core.params import count_params

    return count_params(config).non_embedding


@register
def khop_rate_check(quick: bool = False) -> Experiment:
    sweep = khop_depth_sweep(quick)
    two = [a for a in sweep.arms if a.info["n_layer"] == 2]
    arms = tuple(Arm(a.name.replace("lr=0.003", "lr=0.001"), a.model, a.recipe.replace(lr=1e-3),
                     {**a.info, "lr": 1e-3}) for a in two)
    return Experiment(
        name="khop_rate_check", quick=quick,
        description=(
            "Chapter 3, pointer chasing on 12 symbols: the two-block shapes of both of "
            "khop_depth_sweep's families at 1e-3, with the sweep's task, recipe and seeds "
            "(the sweep ran them at 3e-3). Not run: the deeper shapes at 1e-3."),
        measures=sweep.measures, data=sweep.data, arms=arms, seeds=sweep.seeds)
