"""``python -m depthnotes khop``: chapter 3's depth sweep at one parameter budget, one seed.

One model per depth at a fixed non-embedding parameter budget (the width chosen for it), each
trained with ``tasks.train_on_task`` and scored on every k, on either of chapter 3's tasks:
k-hop induction heads (``--task induction``, the default) or pointer chasing over a table
(``--task table``). Every default comes from the registry (``SWEEPS``): the task, the recipe
and the budget of the record ``induction_depth_sweep``'s fixed-parameter family, or of
``khop16_depth_sweep``'s, so that the command and the record cannot drift apart. The records
run three seeds, a fixed-width family and a second learning rate besides (``python -m
depthnotes record``).
"""

from __future__ import annotations

import dataclasses

from depthnotes.core.params import count_params, shapes_for_budget
from depthnotes.data.tasks import LAYOUTS
from depthnotes.experiments.registry import get_experiment
from depthnotes.training.runtime import pin
from depthnotes.training.tasks import train_on_task

DESCRIPTION = """\
Train one model per depth, each at about the same number of non-embedding parameters (the
width is chosen for the budget), on one of chapter 3's k-hop tasks, and print each model's
accuracy on fresh sequences for every k. --task induction (the default): k-hop induction
heads, one k of --hops per sequence; --task table: pointer chasing over a table, k =
1..--max-hops mixed. The defaults are those of chapter 3's records' fixed-parameter family,
read from the package's registry (the records run three seeds: python -m depthnotes record
induction_depth_sweep, or khop16_depth_sweep).

example:
  python -m depthnotes khop --depths 1 2 --steps 2000
  python -m depthnotes khop --task table --depths 1 2
"""

#: Each task's record, whose fixed-parameter family gives the command its defaults.
SWEEPS = {"induction": "induction_depth_sweep", "table": "khop16_depth_sweep"}
#: Each option that sets a task field, by task: (option's dest, the task's field).
TASK_OPTIONS = {"induction": (("hops", "hops"), ("letters", "n_symbols"), ("length", "length")),
                "table": (("n_nodes", "n_nodes"), ("queries", "n_queries"),
                          ("layout", "layout"), ("max_hops", "max_hops"))}


def sweep_defaults(task_name: str) -> tuple:
    """(task, recipe, budget, base config) of ``SWEEPS[task_name]``'s fixed-parameter family,
    as the registry defines it: the task, and the recipe (at its first rate) and model of the
    shape both families share, whose non-embedding parameters are the family's budget."""
    exp = get_experiment(SWEEPS[task_name])
    arm = next(a for a in exp.arms
               if {"fixed width", "fixed parameters"} <= set(a.info["families"]))
    return exp.data, arm.recipe, count_params(arm.model).non_embedding, arm.model


def add_arguments(p) -> None:
    """The ``khop`` command's options; those left unset take the task's record's value."""
    rec = "(default: as in the task's record)"
    p.add_argument("--task", default="induction", choices=sorted(SWEEPS),
                   help="induction: k-hop induction heads; table: pointer chasing over a "
                        "table (default: induction)")
    p.add_argument("--depths", type=int, nargs="+", default=[1, 2, 3, 4], metavar="L",
                   help="depths to train, one model each (default: 1 2 3 4)")
    p.add_argument("--budget", type=int, default=None, metavar="P",
                   help="non-embedding parameters of every model, within 10%% " + rec)
    p.add_argument("--steps", type=int, default=None, metavar="N",
                   help="training steps per model " + rec)
    p.add_argument("--hops", type=int, nargs="+", default=None, metavar="K",
                   help="induction: the k's a sequence may ask for " + rec)
    p.add_argument("--letters", type=int, default=None, metavar="A",
                   help="induction: the alphabet's size " + rec)
    p.add_argument("--length", type=int, default=None, metavar="T",
                   help="induction: letters per sequence " + rec)
    p.add_argument("--n-nodes", type=int, default=None, metavar="N",
                   help="table: symbols in each sequence's table " + rec)
    p.add_argument("--queries", type=int, default=None, metavar="Q",
                   help="table: queries per sequence " + rec)
    p.add_argument("--layout", default=None, choices=LAYOUTS,
                   help="table: how a query is written: hop_marker (a marker, then the "
                        "start symbol) or query_tokens (one token per query) " + rec)
    p.add_argument("--max-hops", type=int, default=None, metavar="K",
                   help="table: largest k in the mix " + rec)
    p.add_argument("--lr", type=float, default=None, help="peak learning rate " + rec)
    p.add_argument("--seed", type=int, default=0, help="seed of the init and the batches")


def run(args, parser) -> int:
    """Train and print one line per depth; bad options exit with a message naming them (2)."""
    task, recipe, budget, base = sweep_defaults(args.task)
    args.steps = recipe.steps if args.steps is None else args.steps
    args.lr = recipe.lr if args.lr is None else args.lr
    args.budget = budget if args.budget is None else args.budget
    for opt, minimum in (("steps", 1), ("budget", 1), ("seed", 0)):
        if getattr(args, opt) < minimum:
            parser.error(f"--{opt} must be >= {minimum}, got {getattr(args, opt)}")
    if args.lr <= 0:
        parser.error(f"--lr must be > 0, got {args.lr}")
    changes = {field: (tuple(getattr(args, dest)) if isinstance(getattr(args, dest), list)
                       else getattr(args, dest))
               for dest, field in TASK_OPTIONS[args.task] if getattr(args, dest) is not None}
    try:
        task = dataclasses.replace(task, **changes)
        base = base.replace(n_layer=1, vocab_size=task.vocab_size, context=task.seq_len)
        recipe = recipe.replace(steps=args.steps, lr=args.lr, seed=args.seed,
                                context=task.seq_len, eval_every=0)   # no learning curves
        shapes = shapes_for_budget(args.budget, base, n_layers=args.depths, tolerance=0.1,
                                   d_multiple=4)
    except (ValueError, TypeError) as e:   # the task and the budget search name the field
        parser.error(str(e))
    missing = sorted(set(args.depths) - {s.n_layer for s in shapes})
    if missing:
        parser.error(f"--budget {args.budget}: no width fits depth(s) {missing} within 10 %")
    pin(args.seed, threads=1)
    for s in shapes:
        _, run = train_on_task(s.config, task, recipe)
        accs = ", ".join(f"k={k}: {a:.2f}" for k, a in run.accuracy.items())
        print(f"L={s.n_layer} d={s.d_model} params={s.non_embedding}: {accs} "
              f"({args.steps} steps{', diverged' if run.diverged else ''})", flush=True)
    return 0
