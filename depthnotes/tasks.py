"""The book's synthetic multi-step data: k-hop pointer chasing (chapter 3, claim C5).

(The text corpus lives in ``data.py``; this module holds the synthetic task whose answer needs
k dependent steps.)

The task
--------
Each sequence first lists a random permutation ``f`` of ``n_nodes`` symbols as a table, the
value ``f(i)`` written at position ``i``; then a separator; then ``n_queries`` query symbols
``x``. At every query position the model must output ``f^k(x) = f(f(...f(x)))`` (k hops)::

    positions   0    1    2   ...  n-1    n     n+1   n+2  ...
    tokens     f(0) f(1) f(2) ... f(n-1) SEP    x_1   x_2  ...
    targets     -    -    -   ...   -     -   f^k(x_1) f^k(x_2) ...

Why it is serial: the address of hop j is the *result* of hop j-1. One attention layer can
read the table at one address per query (attend to position x, copy the symbol there); it
cannot read at an address it does not know yet. A direct solution therefore chains k lookups
through k layers. (Cleverer circuits exist in principle — composing the table with itself,
"pointer doubling", needs only about log2 k rounds — but under a causal mask a table entry
can only see the entries to its left, so most of that shortcut is not available here.)
The permutation is fresh in every sequence, so nothing can be memorised: the table must be
read. A permutation keeps every answer uniformly distributed (chance = 1/n_nodes).

Targets at table and separator positions are -100, which ``torch.nn.functional.cross_entropy``
ignores, so ``Transformer(cfg)(idx, targets)`` trains on the queries only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

#: Target value the loss ignores (PyTorch's cross_entropy default ``ignore_index``).
IGNORE = -100


@dataclass(frozen=True)
class PointerChasing:
    """k-hop pointer chasing over a random permutation of ``n_nodes`` symbols, k = 1..max_hops.

    Token ids: ``0 .. n_nodes-1`` are the table's symbols, ``n_nodes`` is the separator, and
    a query "k hops from x" is the single token ``query_token(k, x)``, so one sequence can mix
    queries of different k and one trained model can be scored on every k separately.
    ``vocab_size = n_nodes + 1 + max_hops * n_nodes``; ``seq_len = n_nodes + 1 + n_queries``.
    """

    max_hops: int
    n_nodes: int = 8
    n_queries: int = 8

    def __post_init__(self) -> None:
        for name in ("max_hops", "n_nodes", "n_queries"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
        if self.max_hops < 1:
            raise ValueError(f"max_hops must be >= 1, got {self.max_hops}")
        if self.n_nodes < 2:
            raise ValueError(f"n_nodes must be >= 2, got {self.n_nodes}")
        if self.n_queries < 1:
            raise ValueError(f"n_queries must be >= 1, got {self.n_queries}")

    @property
    def vocab_size(self) -> int:
        return self.n_nodes + 1 + self.max_hops * self.n_nodes

    @property
    def sep(self) -> int:
        """The separator's token id."""
        return self.n_nodes

    @property
    def seq_len(self) -> int:
        return self.n_nodes + 1 + self.n_queries

    @property
    def chance(self) -> float:
        """Accuracy of guessing: answers are uniform over the symbols."""
        return 1.0 / self.n_nodes

    def query_token(self, hops, start):
        """Token id of the query "follow ``hops`` pointers from ``start``" (ints or tensors)."""
        return self.n_nodes + 1 + (hops - 1) * self.n_nodes + start

    def batch(self, batch_size: int, seed: int,
              hops: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``(idx, targets)``, both ``(batch_size, seq_len)`` int64; the same seed gives the
        same batch. Each query's k is drawn uniformly from 1..max_hops, or is ``hops`` for
        every query when given. Targets are -100 except at the query positions."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        if hops is not None and not (isinstance(hops, int) and 1 <= hops <= self.max_hops):
            raise ValueError(f"hops must be None or an int in 1..{self.max_hops}, got {hops!r}")
        gen = torch.Generator().manual_seed(int(seed))
        n, q = self.n_nodes, self.n_queries
        table = torch.argsort(torch.rand(batch_size, n, generator=gen), dim=1)  # (B, n): f
        starts = torch.randint(0, n, (batch_size, q), generator=gen)           # (B, q): x
        ks = torch.randint(1, self.max_hops + 1, (batch_size, q), generator=gen)
        if hops is not None:
            ks = torch.full_like(ks, hops)
        answers = starts.clone()
        for k in range(1, self.max_hops + 1):                                   # f^k(x)
            answers = torch.where(ks >= k, torch.gather(table, 1, answers), answers)
        sep = torch.full((batch_size, 1), self.sep, dtype=torch.long)
        idx = torch.cat([table, sep, self.query_token(ks, starts)], dim=1)
        targets = torch.full_like(idx, IGNORE)
        targets[:, n + 1:] = answers
        return idx, targets


def follow_pointers(table: torch.Tensor, start: torch.Tensor, hops: int) -> torch.Tensor:
    """``f^hops(start)`` for each row: ``table`` (B, n) holds f, ``start`` (B, q) the x's."""
    if hops < 0:
        raise ValueError(f"hops must be >= 0, got {hops}")
    x = start
    for _ in range(hops):
        x = torch.gather(table, 1, x)
    return x


@torch.no_grad()
def query_accuracy(model, task: PointerChasing, hops: int, n_sequences: int = 256,
                   seed: int = 10**9) -> float:
    """Fraction of ``hops``-hop queries answered exactly (argmax) on fresh sequences.

    The default seed range (from 10**9) is far from the training batches' seeds."""
    was_training = model.training
    model.eval()
    idx, targets = task.batch(n_sequences, seed=seed + hops, hops=hops)
    logits, _ = model(idx)
    mask = targets != IGNORE
    acc = (logits.argmax(-1)[mask] == targets[mask]).float().mean().item()
    model.train(was_training)
    return acc


@dataclass(frozen=True)
class TaskRun:
    """One model trained on the pointer-chasing mix: its accuracy for each k, its loss curve."""

    n_layer: int
    d_model: int
    non_embedding: int
    steps: int
    accuracy: dict          # {k: accuracy on k-hop queries}
    losses: tuple           # training loss per step
    diverged: bool


def train_on_task(config, task: PointerChasing, steps: int = 400, batch_size: int = 64,
                  lr: float = 3e-3, warmup: int = 40, seed: int = 0,
                  eval_sequences: int = 256) -> tuple[object, TaskRun]:
    """Train ``Transformer(config)`` on ``task`` (a fresh mix of k = 1..max_hops every batch)
    with AdamW, warmup and cosine decay, gradient clipping at 1.

    A small loop of its own (the text trainer in ``train.py`` streams a corpus; here every
    batch is drawn fresh, so nothing repeats). Batch ``s`` uses seed ``seed * 1_000_003 + s``;
    evaluation uses seeds from 10**9. Returns the model and a ``TaskRun``.
    """
    from .model import Transformer
    from .params import count_params

    if config.vocab_size != task.vocab_size or config.context < task.seq_len:
        raise ValueError(f"config needs vocab_size={task.vocab_size} and context >= "
                         f"{task.seq_len} for this task, got vocab_size={config.vocab_size}, "
                         f"context={config.context}")
    model = Transformer(config, seed=seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.98), weight_decay=0.01)
    losses, diverged = [], False
    for step in range(steps):
        scale = (step + 1) / warmup if step < warmup else \
            0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))
        for group in opt.param_groups:
            group["lr"] = lr * scale
        idx, targets = task.batch(batch_size, seed=seed * 1_000_003 + step)
        _, loss = model(idx, targets)
        if not torch.isfinite(loss):
            diverged = True
            break
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    accuracy = {k: (0.0 if diverged else query_accuracy(model, task, k, eval_sequences))
                for k in range(1, task.max_hops + 1)}
    return model, TaskRun(config.n_layer, config.d_model, count_params(config).non_embedding,
                          steps, accuracy, tuple(losses), diverged)


# -- command line: chapter 3's depth sweep at one budget ---------------------------------------
def main(argv: list[str] | None = None) -> int:
    """``python -m depthnotes.tasks``: train one model per depth at a fixed parameter budget on
    pointer chasing and print each model's accuracy for every k (chapter 3's experiment; its
    ``FULL=1`` setting is ``--steps 6000``)."""
    import argparse

    from .config import ModelConfig
    from .params import shapes_for_budget
    from .runtime import pin

    p = argparse.ArgumentParser(prog="python -m depthnotes.tasks", description=main.__doc__)
    p.add_argument("--depths", type=int, nargs="+", default=[1, 2, 3, 4])
    p.add_argument("--budget", type=int, default=40_000)
    p.add_argument("--steps", type=int, default=1500)
    p.add_argument("--n-nodes", type=int, default=6)
    p.add_argument("--max-hops", type=int, default=3)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    pin(args.seed, threads=1)
    task = PointerChasing(max_hops=args.max_hops, n_nodes=args.n_nodes, n_queries=args.n_nodes)
    base = ModelConfig(n_layer=1, d_model=64, n_head=1, vocab_size=task.vocab_size,
                       context=task.seq_len)
    for s in shapes_for_budget(args.budget, base, n_layers=args.depths, tolerance=0.05,
                               d_multiple=4):
        _, run = train_on_task(s.config, task, steps=args.steps, batch_size=64, lr=args.lr,
                               warmup=40, seed=args.seed, eval_sequences=512)
        accs = ", ".join(f"k={k}: {a:.2f}" for k, a in run.accuracy.items())
        print(f"L={s.n_layer} d={s.d_model} params={s.non_embedding}: {accs} "
              f"({args.steps} steps{', diverged' if run.diverged else ''})", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
