"""Training a model on a synthetic task (chapter 3): the one training loop, fed fresh task
batches, and the model scored on every k.
"""

from __future__ import annotations

from dataclasses import dataclass

from depthnotes.core.checks import check_int
from depthnotes.core.model import Transformer
from depthnotes.core.params import count_params
from depthnotes.data.tasks import PointerChasing, query_accuracy
from depthnotes.training.loop import TrainConfig, train


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
    curve_steps: tuple = ()         # steps after which the accuracy curves were measured
    accuracy_curves: dict = None    # {k: (accuracy after each of curve_steps, ...)}


def train_on_task(config, task: PointerChasing, steps: int = 400, batch_size: int = 64,
                  lr: float = 3e-3, warmup: int = 40, seed: int = 0,
                  eval_sequences: int = 256, eval_every: int = 0,
                  curve_sequences: int = 128) -> tuple[object, TaskRun]:
    """Train ``Transformer(config, seed=seed)`` on ``task`` with the book's one training loop
    (``train.train``) and score it on every k.

    Every batch is a fresh mix of k = 1..max_hops drawn with ``task.sample`` from the loop's
    generator (seeded by ``seed``), so nothing repeats. The recipe: AdamW (betas 0.9, 0.98,
    weight decay 0.01 on the weight matrices), ``warmup`` steps of linear warmup, then cosine
    decay to zero, gradient clipping at 1. Only a non-finite loss or gradient stops a run
    (no blow-up test: a task's loss may rise for a while). Accuracy uses fresh sequences with
    seeds from 10**9 (``query_accuracy``); a diverged run scores 0. With ``eval_every > 0``
    the accuracy on every k is also measured every ``eval_every`` steps, on
    ``curve_sequences`` other fresh sequences (the same ones every time) (learning curves: chapter 3 asks whether a shape
    learns slowly or not at all). Returns the model and a ``TaskRun``.
    """
    if config.vocab_size != task.vocab_size or config.context < task.seq_len:
        raise ValueError(f"config needs vocab_size={task.vocab_size} and context >= "
                         f"{task.seq_len} for this task, got vocab_size={config.vocab_size}, "
                         f"context={config.context}")
    check_int("eval_sequences", eval_sequences, 1)
    check_int("eval_every", eval_every, 0)
    check_int("curve_sequences", curve_sequences, 1)
    recipe = TrainConfig(steps=steps, batch_size=batch_size, context=task.seq_len, lr=lr,
                         warmup_steps=warmup, decay="cosine", min_lr_ratio=0.0,
                         weight_decay=0.01, beta1=0.9, beta2=0.98, grad_clip=1.0,
                         blowup_factor=None, seed=seed,
                         eval_batches=1)   # train's held-out loss: one batch (unused here)
    hops = task.hops
    curve_steps, curves = [], {k: [] for k in hops}

    def on_step(step: int, model) -> None:
        if eval_every and (step + 1) % eval_every == 0:
            curve_steps.append(step + 1)
            for k in hops:
                curves[k].append(query_accuracy(model, task, k, curve_sequences))

    model = Transformer(config, seed=seed)
    result = train(model, lambda gen: task.sample(batch_size, gen), recipe,
                   on_step=on_step, desc=f"L={config.n_layer}")
    accuracy = {k: (0.0 if result.diverged else query_accuracy(model, task, k, eval_sequences))
                for k in hops}
    losses = tuple(result.train_losses[:result.steps_run])   # the applied steps' losses
    return model, TaskRun(config.n_layer, config.d_model, count_params(config).non_embedding,
                          steps, accuracy, losses, result.diverged, tuple(curve_steps),
                          {k: tuple(v) for k, v in curves.items()})
