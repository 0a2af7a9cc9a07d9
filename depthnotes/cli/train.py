"""``python -m depthnotes train``: train one model per norm placement on the shipped corpus.

Chapter 5 runs it for the 1,000-layer DeepNorm stack, too slow for the notebook, and reads
the lines it prints (``<norm> L=<depth>: <summary>; eval loss by step {...} (N s)``), so that
format is part of the command. The training is ``depthnotes.training.loop.train``'s.
"""

from __future__ import annotations

from depthnotes.core.config import NORMS, ModelConfig
from depthnotes.data.corpus import load_corpus
from depthnotes.core.model import Transformer
from depthnotes.training.runtime import pin
from depthnotes.training.loop import TrainConfig, train

DESCRIPTION = """\
Build a thin model of the given shape for each --norm placement (one after the other), train
it on the shipped corpus with AdamW (warmup, cosine decay, clipping) and print one line per
model: how the run ended and its held-out loss at each evaluation. DeepNorm uses DeepNorm's
initialisation; post- and pre-norm the normal one.

example (chapter 5's 1,000-layer comparison, about ten minutes):
  python -m depthnotes train --n-layer 1000 --norm deepnorm post --steps 100 --batch-size 8 \\
      --context 32 --threads 1 --eval-every 25
"""


def add_arguments(p) -> None:
    """The ``train`` command's options."""
    shape = p.add_argument_group("shape")
    shape.add_argument("--n-layer", type=int, default=100, metavar="L",
                       help="depth (default: 100)")
    shape.add_argument("--d-model", type=int, default=64, metavar="D", help="width (default: 64)")
    shape.add_argument("--n-head", type=int, default=2, metavar="H",
                       help="attention heads; must divide --d-model (default: 2)")
    shape.add_argument("--d-ff", type=int, default=128, metavar="F",
                       help="feed-forward width (default: 128)")
    shape.add_argument("--context", type=int, default=32, metavar="C",
                       help="positions per training sequence (default: 32)")
    shape.add_argument("--norm", nargs="+", default=["deepnorm"], choices=NORMS,
                       help="one or more norm placements to train, one after the other "
                            "(default: deepnorm)")
    run = p.add_argument_group("training")
    run.add_argument("--steps", type=int, default=50, metavar="N",
                     help="optimizer steps (default: 50)")
    run.add_argument("--batch-size", type=int, default=8, metavar="B",
                     help="sequences per step (default: 8)")
    run.add_argument("--lr", type=float, default=1e-3, help="peak learning rate (default: 1e-3)")
    run.add_argument("--warmup-steps", type=int, default=20, metavar="N",
                     help="steps of linear warmup (default: 20)")
    run.add_argument("--grad-clip", type=float, default=1.0, metavar="C",
                     help="gradient-norm clipping; 0 turns clipping off (default: 1.0)")
    run.add_argument("--eval-every", type=int, default=25, metavar="N",
                     help="steps between held-out evaluations; 0: only at the end (default: 25)")
    run.add_argument("--seed", type=int, default=0, help="seed of the init and the batches")
    run.add_argument("--threads", type=int, default=2, metavar="T",
                     help="torch intra-op threads (default: 2)")


def run(args, parser) -> int:
    """Train and print one line per norm; bad options exit with a message naming them (2)."""
    if args.threads < 1:
        parser.error(f"--threads must be >= 1, got {args.threads}")
    if args.grad_clip < 0:
        parser.error(f"--grad-clip must be >= 0 (0 turns clipping off), got {args.grad_clip}")
    corpus = load_corpus()
    try:
        tc = TrainConfig(steps=args.steps, batch_size=args.batch_size, context=args.context,
                         lr=args.lr, warmup_steps=args.warmup_steps,
                         grad_clip=args.grad_clip or None, seed=args.seed,
                         eval_every=args.eval_every)
        configs = [ModelConfig(n_layer=args.n_layer, d_model=args.d_model, n_head=args.n_head,
                               d_ff=args.d_ff, vocab_size=corpus.vocab_size,
                               context=args.context, norm=norm,
                               init="deepnorm" if norm == "deepnorm" else "normal")
                   for norm in args.norm]
    except (ValueError, TypeError) as e:   # TrainConfig and ModelConfig name the field
        parser.error(str(e))
    pin(args.seed, threads=args.threads)
    for norm, mc in zip(args.norm, configs):
        model = Transformer(mc, seed=args.seed)
        res = train(model, corpus, tc, desc=f"{norm} L={args.n_layer}")
        evals = ", ".join(f"{s}: {v:.3f}" for s, v in zip(res.eval_steps, res.eval_losses))
        print(f"{norm} L={args.n_layer}: {res.summary()}; eval loss by step {{{evals}}} "
              f"({res.seconds:.0f} s)", flush=True)
    return 0
