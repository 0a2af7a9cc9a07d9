"""``python -m depthnotes khop``: chapter 3's depth sweep on k-hop pointer chasing, one seed.

One model per depth at a fixed non-embedding parameter budget (the width chosen for it), each
trained with ``tasks.train_on_task`` and scored on every k. The defaults are the settings of
chapter 3's fixed-parameter family (the record ``khop16_depth_sweep``, which runs three
seeds, a fixed-width family and a second learning rate besides: ``python -m depthnotes
record``).
"""

from __future__ import annotations

from ..config import ModelConfig
from ..params import shapes_for_budget
from ..runtime import pin
from ..tasks import LAYOUTS, PointerChasing, train_on_task

DESCRIPTION = """\
Train one model per depth, each at about the same number of non-embedding parameters (the
width is chosen for the budget), on k-hop pointer chasing (k = 1..--max-hops mixed in every
batch), and print each model's accuracy on fresh queries for every k. The defaults are chapter
3's fixed-parameter family with one seed (its record runs three: python -m depthnotes record
khop16_depth_sweep).

example:
  python -m depthnotes khop --depths 1 2 --steps 2000
"""


def add_arguments(p) -> None:
    """The ``khop`` command's options."""
    p.add_argument("--depths", type=int, nargs="+", default=[1, 2, 3, 4], metavar="L",
                   help="depths to train, one model each (default: 1 2 3 4)")
    p.add_argument("--budget", type=int, default=200_000, metavar="P",
                   help="non-embedding parameters of every model, within 10%% "
                        "(default: 200000)")
    p.add_argument("--steps", type=int, default=4000, metavar="N",
                   help="training steps per model (default: 4000)")
    p.add_argument("--n-nodes", type=int, default=16, metavar="N",
                   help="symbols in each sequence's table (default: 16)")
    p.add_argument("--queries", type=int, default=12, metavar="Q",
                   help="queries per sequence (default: 12)")
    p.add_argument("--layout", default="hop_marker", choices=LAYOUTS,
                   help="how a query is written: hop_marker (a marker, then the start "
                        "symbol) or query_tokens (one token per query) (default: hop_marker)")
    p.add_argument("--max-hops", type=int, default=3, metavar="K",
                   help="largest k in the mix (default: 3)")
    p.add_argument("--lr", type=float, default=3e-3, help="peak learning rate (default: 3e-3)")
    p.add_argument("--seed", type=int, default=0, help="seed of the init and the batches")


def run(args, parser) -> int:
    """Train and print one line per depth; bad options exit with a message naming them (2)."""
    for opt, minimum in (("steps", 1), ("budget", 1), ("seed", 0)):
        if getattr(args, opt) < minimum:
            parser.error(f"--{opt} must be >= {minimum}, got {getattr(args, opt)}")
    try:
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
        _, run = train_on_task(s.config, task, steps=args.steps, batch_size=64, lr=args.lr,
                               warmup=100, seed=args.seed, eval_sequences=512)
        accs = ", ".join(f"k={k}: {a:.2f}" for k, a in run.accuracy.items())
        print(f"L={s.n_layer} d={s.d_model} params={s.non_embedding}: {accs} "
              f"({args.steps} steps{', diverged' if run.diverged else ''})", flush=True)
    return 0
