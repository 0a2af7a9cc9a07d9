"""``python -m depthnotes khop``: chapter 3's depth sweep at one parameter budget, one seed.

One model per depth at a fixed non-embedding parameter budget (the width chosen for it), each
trained with ``tasks.train_on_task`` and scored on every k, on either of chapter 3's tasks:
k-hop induction heads (``--task induction``, the default: the settings of the record
``induction_depth_sweep``'s fixed-parameter family) or pointer chasing over a table
(``--task table``: those of ``khop16_depth_sweep``). The records run three seeds, a
fixed-width family and a second learning rate besides (``python -m depthnotes record``).
"""

from __future__ import annotations

from depthnotes.core.config import ModelConfig
from depthnotes.core.params import shapes_for_budget
from depthnotes.training.runtime import pin
from depthnotes.data.tasks import LAYOUTS, InductionHops, PointerChasing
from depthnotes.training.tasks import train_on_task

DESCRIPTION = """\
Train one model per depth, each at about the same number of non-embedding parameters (the
width is chosen for the budget), on one of chapter 3's k-hop tasks, and print each model's
accuracy on fresh sequences for every k. --task induction (the default): k-hop induction
heads, one k of --hops per sequence; --task table: pointer chasing over a table, k =
1..--max-hops mixed. The defaults are chapter 3's fixed-parameter family with one seed (its
records run three: python -m depthnotes record induction_depth_sweep, or khop16_depth_sweep).

example:
  python -m depthnotes khop --depths 1 2 --steps 2000
  python -m depthnotes khop --task table --depths 1 2
"""

#: Each task's recipe defaults: (steps, batch size, peak learning rate), as its record.
RECIPES = {"induction": (8000, 16, 1e-3), "table": (4000, 64, 3e-3)}


def add_arguments(p) -> None:
    """The ``khop`` command's options."""
    p.add_argument("--task", default="induction", choices=sorted(RECIPES),
                   help="induction: k-hop induction heads; table: pointer chasing over a "
                        "table (default: induction)")
    p.add_argument("--depths", type=int, nargs="+", default=[1, 2, 3, 4], metavar="L",
                   help="depths to train, one model each (default: 1 2 3 4)")
    p.add_argument("--budget", type=int, default=200_000, metavar="P",
                   help="non-embedding parameters of every model, within 10%% "
                        "(default: 200000)")
    p.add_argument("--steps", type=int, default=None, metavar="N",
                   help="training steps per model (default: 8000 for induction, 4000 for "
                        "table)")
    p.add_argument("--hops", type=int, nargs="+", default=[1, 2, 4, 8], metavar="K",
                   help="induction: the k's a sequence may ask for (default: 1 2 4 8)")
    p.add_argument("--letters", type=int, default=4, metavar="A",
                   help="induction: the alphabet's size (default: 4)")
    p.add_argument("--length", type=int, default=64, metavar="T",
                   help="induction: letters per sequence (default: 64)")
    p.add_argument("--n-nodes", type=int, default=16, metavar="N",
                   help="table: symbols in each sequence's table (default: 16)")
    p.add_argument("--queries", type=int, default=12, metavar="Q",
                   help="table: queries per sequence (default: 12)")
    p.add_argument("--layout", default="hop_marker", choices=LAYOUTS,
                   help="table: how a query is written: hop_marker (a marker, then the "
                        "start symbol) or query_tokens (one token per query) (default: "
                        "hop_marker)")
    p.add_argument("--max-hops", type=int, default=3, metavar="K",
                   help="table: largest k in the mix (default: 3)")
    p.add_argument("--lr", type=float, default=None,
                   help="peak learning rate (default: 1e-3 for induction, 3e-3 for table)")
    p.add_argument("--seed", type=int, default=0, help="seed of the init and the batches")


def run(args, parser) -> int:
    """Train and print one line per depth; bad options exit with a message naming them (2)."""
    steps, batch, lr = RECIPES[args.task]
    args.steps = steps if args.steps is None else args.steps
    args.lr = lr if args.lr is None else args.lr
    for opt, minimum in (("steps", 1), ("budget", 1), ("seed", 0)):
        if getattr(args, opt) < minimum:
            parser.error(f"--{opt} must be >= {minimum}, got {getattr(args, opt)}")
    if args.lr <= 0:
        parser.error(f"--lr must be > 0, got {args.lr}")
    try:
        if args.task == "induction":
            task = InductionHops(hops=tuple(args.hops), n_symbols=args.letters,
                                 length=args.length)
        else:
            task = PointerChasing(max_hops=args.max_hops, n_nodes=args.n_nodes,
                                  n_queries=args.queries, layout=args.layout)
        base = ModelConfig(n_layer=1, d_model=64, n_head=4, vocab_size=task.vocab_size,
                           context=task.seq_len)
        shapes = shapes_for_budget(args.budget, base, n_layers=args.depths, tolerance=0.1,
                                   d_multiple=4)
    except (ValueError, TypeError) as e:   # the task and the budget search name the field
        parser.error(str(e))
    missing = sorted(set(args.depths) - {s.n_layer for s in shapes})
    if missing:
        parser.error(f"--budget {args.budget}: no width fits depth(s) {missing} within 10 %")
    pin(args.seed, threads=1)
    for s in shapes:
        _, run = train_on_task(s.config, task, steps=args.steps, batch_size=batch, lr=args.lr,
                               warmup=100 if args.task == "table" else 200, seed=args.seed,
                               eval_sequences=512 if args.task == "table" else 256)
        accs = ", ".join(f"k={k}: {a:.2f}" for k, a in run.accuracy.items())
        print(f"L={s.n_layer} d={s.d_model} params={s.non_embedding}: {accs} "
              f"({args.steps} steps{', diverged' if run.diverged else ''})", flush=True)
    return 0
