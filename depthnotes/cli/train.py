"""``python -m depthnotes train``: train one model per norm placement on the shipped corpus.

With no options it trains one seed of chapter 5's record ``deepnorm_1000_layers`` (the
1,000-block stack, too slow for the notebook): every default — the thin shape, the recipe,
each norm's init — is read from that experiment in the registry (``RECORD``), so the command
and the record cannot drift apart. Each model prints one line, ``<norm> L=<depth>: <summary>;
eval loss by step {...} (N s)``. The training is ``depthnotes.training.loop.train``'s.
"""

from __future__ import annotations

from depthnotes.core.config import NORMS
from depthnotes.core.model import Transformer
from depthnotes.data.corpus import load_corpus
from depthnotes.experiments.registry import get_experiment
from depthnotes.training.loop import train
from depthnotes.training.runtime import pin

#: The record whose arms give the command its defaults.
RECORD = "deepnorm_1000_layers"

DESCRIPTION = """\
Build a thin model for each --norm placement (one after the other), train it on the shipped
corpus with AdamW (warmup, cosine decay, clipping) and print one line per model: how the run
ended and its held-out loss at each evaluation. Every default is that of chapter 5's record
deepnorm_1000_layers (post-norm and DeepNorm at 1,000 blocks, one seed): post- and pre-norm
use the papers' Xavier init, DeepNorm its own.

examples:
  python -m depthnotes train                        # the record's two arms, one seed
  python -m depthnotes train --n-layer 48 --norm pre post --steps 200
"""


def record_defaults() -> tuple:
    """(model config, recipe, norms) of ``RECORD``'s arms, as the registry defines them."""
    exp = get_experiment(RECORD)
    return exp.arms[0].model, exp.arms[0].recipe, [a.info["norm"] for a in exp.arms]


def init_for(norm: str) -> str:
    """The init chapters 4 and 5 train each norm with: the post-LN papers' Xavier init, or
    DeepNorm's own (experiments.ch5.FIX_FAMILIES)."""
    from depthnotes.experiments.ch5 import FIX_FAMILIES

    return next(init for _, _, n, init in FIX_FAMILIES if n == norm)


def add_arguments(p) -> None:
    """The ``train`` command's options; each default is ``RECORD``'s."""
    model, tc, norms = record_defaults()
    shape = p.add_argument_group("shape")
    shape.add_argument("--n-layer", type=int, default=model.n_layer, metavar="L",
                       help=f"depth (default: {model.n_layer})")
    shape.add_argument("--d-model", type=int, default=model.d_model, metavar="D",
                       help=f"width (default: {model.d_model})")
    shape.add_argument("--n-head", type=int, default=model.n_head, metavar="H",
                       help=f"attention heads; must divide --d-model (default: {model.n_head})")
    shape.add_argument("--d-ff", type=int, default=model.d_ff, metavar="F",
                       help=f"feed-forward width (default: {model.d_ff})")
    shape.add_argument("--context", type=int, default=tc.context, metavar="C",
                       help=f"positions per training sequence (default: {tc.context})")
    shape.add_argument("--norm", nargs="+", default=norms, choices=NORMS,
                       help="one or more norm placements to train, one after the other "
                            f"(default: {' '.join(norms)})")
    run = p.add_argument_group("training")
    run.add_argument("--steps", type=int, default=tc.steps, metavar="N",
                     help=f"optimizer steps (default: {tc.steps})")
    run.add_argument("--batch-size", type=int, default=tc.batch_size, metavar="B",
                     help=f"sequences per step (default: {tc.batch_size})")
    run.add_argument("--lr", type=float, default=tc.lr,
                     help=f"peak learning rate (default: {tc.lr:g})")
    run.add_argument("--warmup-steps", type=int, default=tc.warmup_steps, metavar="N",
                     help=f"steps of linear warmup (default: {tc.warmup_steps})")
    run.add_argument("--grad-clip", type=float, default=tc.grad_clip or 0.0, metavar="C",
                     help=f"gradient-norm clipping; 0 turns clipping off (default: "
                          f"{tc.grad_clip or 0:g})")
    run.add_argument("--eval-every", type=int, default=tc.eval_every, metavar="N",
                     help=f"steps between held-out evaluations; 0: only at the end "
                          f"(default: {tc.eval_every})")
    run.add_argument("--seed", type=int, default=0, help="seed of the init and the batches")
    run.add_argument("--threads", type=int, default=1, metavar="T",
                     help="torch intra-op threads (default: 1, as the record's workers)")


def run(args, parser) -> int:
    """Train and print one line per norm; bad options exit with a message naming them (2)."""
    if args.threads < 1:
        parser.error(f"--threads must be >= 1, got {args.threads}")
    if args.grad_clip < 0:
        parser.error(f"--grad-clip must be >= 0 (0 turns clipping off), got {args.grad_clip}")
    model, tc, _ = record_defaults()
    corpus = load_corpus()
    try:
        tc = tc.replace(steps=args.steps, batch_size=args.batch_size, context=args.context,
                        lr=args.lr, warmup_steps=args.warmup_steps,
                        grad_clip=args.grad_clip or None, seed=args.seed,
                        eval_every=args.eval_every)
        configs = [model.replace(n_layer=args.n_layer, d_model=args.d_model,
                                 n_head=args.n_head, d_ff=args.d_ff,
                                 vocab_size=corpus.vocab_size,
                                 context=max(model.context, args.context),
                                 norm=norm, init=init_for(norm))
                   for norm in args.norm]
    except (ValueError, TypeError) as e:   # TrainConfig and ModelConfig name the field
        parser.error(str(e))
    pin(args.seed, threads=args.threads)
    for norm, mc in zip(args.norm, configs):
        net = Transformer(mc, seed=args.seed)
        res = train(net, corpus, tc, desc=f"{norm} L={args.n_layer}")
        evals = ", ".join(f"{s}: {v:.3f}" for s, v in zip(res.eval_steps, res.eval_losses))
        print(f"{norm} L={args.n_layer}: {res.summary()}; eval loss by step {{{evals}}} "
              f"({res.seconds:.0f} s)", flush=True)
    return 0
