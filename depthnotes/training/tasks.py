"""Training a model on a synthetic task (chapter 3): the one training loop, fed fresh task
batches, and the model scored on every k.

A task is trained with the same recipe type as the text corpus, ``TrainConfig``;
``task_recipe`` gives the settings every task run in the book shares (AdamW with betas 0.9 and
0.98 and weight decay 0.01 on the weight matrices, cosine decay to zero, clipping at 1, no
blow-up test: a task's loss may rise for a while before it falls), so that a stored record
shows the whole recipe, optimizer included.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from depthnotes.core.checks import check_int, eval_mode
from depthnotes.core.model import Transformer
from depthnotes.core.params import count_params
from depthnotes.data.tasks import IGNORE, InductionHops, PointerChasing
from depthnotes.training.loop import TrainConfig, train

#: What every task run shares (``task_recipe``); steps, batch size, rate, warm-up and the
#: evaluation sizes are each experiment's.
TASK_SETTINGS = dict(decay="cosine", min_lr_ratio=0.0, weight_decay=0.01, beta1=0.9,
                     beta2=0.98, grad_clip=1.0, blowup_factor=None,
                     eval_batches=1)      # the loop's held-out loss: one batch (not reported)


def task_recipe(task, **changes) -> TrainConfig:
    """The recipe for training on ``task``: ``TASK_SETTINGS`` with the task's sequence length
    as the context, then ``changes`` (any ``TrainConfig`` field: ``steps``, ``batch_size``,
    ``lr``, ``warmup_steps``, ``eval_every``, ``eval_sequences``, ...)."""
    return TrainConfig(context=task.seq_len, **{**TASK_SETTINGS, **changes})


@dataclass(frozen=True)
class TaskRun:
    """One model trained on a task: its accuracy for each k, its loss curve."""

    n_layer: int
    d_model: int
    non_embedding: int
    steps: int
    accuracy: dict          # {k: accuracy on k-hop queries}
    losses: tuple           # training loss per step
    diverged: bool
    curve_steps: tuple = ()         # steps after which the accuracy curves were measured
    accuracy_curves: dict = None    # {k: (accuracy after each of curve_steps, ...)}
    long_accuracy: dict = None      # {k: (accuracy, queries) on chains >= recipe.long_span}


#: Fresh sequences each point of a task's accuracy curves scores (``train_on_task``).
CURVE_SEQUENCES = 128


def train_on_task(config, task: PointerChasing, recipe: TrainConfig | None = None, *,
                  curve_sequences: int = CURVE_SEQUENCES) -> tuple[object, TaskRun]:
    """Train ``Transformer(config, seed=recipe.seed)`` on ``task`` with the book's one training
    loop (``loop.train``) and ``recipe`` (default: ``task_recipe(task)``), and score it on
    every k.

    Every batch is a fresh mix of the task's k's drawn with ``task.sample`` from the loop's
    generator (seeded by ``recipe.seed``), so nothing repeats. Only a non-finite loss or
    gradient stops a run. Accuracy uses ``recipe.eval_sequences`` fresh sequences with seeds
    from 10**9 (``query_accuracy``), the same for every seed; a diverged run scores 0. With
    ``recipe.eval_every > 0`` the accuracy on every k is also measured every ``eval_every``
    steps, on ``curve_sequences`` other fresh sequences (the same ones every time): learning
    curves (chapter 3 asks whether a shape learns slowly or not at all). A curve point never
    scores more sequences than the final score (``recipe.eval_sequences``, when it is fewer):
    an experiment's quick run, the test suite's smoke test of its code path, scores a few
    sequences, and its curves, measured several times per run, would otherwise cost more than
    its training. (Every full record scores at least 256, so its curves use 128.) With
    ``recipe.long_span > 0`` (an ``InductionHops`` task) the final score also counts, for every
    k, the queries whose chain spans at least that many positions, on the same sequences
    (``span_accuracy``: accuracy and number of such queries). Returns the model and a
    ``TaskRun``.
    """
    recipe = task_recipe(task) if recipe is None else recipe
    if not isinstance(recipe, TrainConfig):
        raise TypeError(f"recipe must be a TrainConfig (see task_recipe), got "
                        f"{type(recipe).__name__}")
    if config.vocab_size != task.vocab_size or config.context < task.seq_len:
        raise ValueError(f"config needs vocab_size={task.vocab_size} and context >= "
                         f"{task.seq_len} for this task, got vocab_size={config.vocab_size}, "
                         f"context={config.context}")
    if recipe.context != task.seq_len:
        raise ValueError(f"recipe.context must be the task's sequence length {task.seq_len}, "
                         f"got {recipe.context} (build the recipe with task_recipe(task, ...))")
    check_int("curve_sequences", curve_sequences, 1)
    curve_sequences = min(curve_sequences, recipe.eval_sequences)
    if recipe.long_span and not isinstance(task, InductionHops):
        raise ValueError(f"long_span needs an InductionHops task (chains with spans), got "
                         f"{type(task).__name__}; leave long_span at 0")
    hops, every = task.hops, recipe.eval_every
    curve_steps, curves = [], {k: [] for k in hops}

    def on_step(step: int, model) -> None:
        if every and (step + 1) % every == 0:
            curve_steps.append(step + 1)
            for k in hops:
                curves[k].append(query_accuracy(model, task, k, curve_sequences))

    model = Transformer(config, seed=recipe.seed)
    result = train(model, lambda gen: task.sample(recipe.batch_size, gen), recipe,
                   on_step=on_step, desc=f"L={config.n_layer}")
    accuracy = {k: (0.0 if result.diverged else
                    query_accuracy(model, task, k, recipe.eval_sequences))
                for k in hops}
    long = None
    if recipe.long_span:
        long = {k: ((0.0, n) if result.diverged else (acc, n))
                for k in hops for acc, n in [span_accuracy(
                    model, task, k, min_span=recipe.long_span,
                    n_sequences=recipe.eval_sequences)]}
    losses = tuple(result.train_losses[:result.steps_run])   # the applied steps' losses
    return model, TaskRun(config.n_layer, config.d_model, count_params(config).non_embedding,
                          recipe.steps, accuracy, losses, result.diverged, tuple(curve_steps),
                          {k: tuple(v) for k, v in curves.items()}, long)


# -- scoring a model on a task (the task holds data; these read a model) -------------------
@torch.no_grad()
def query_accuracy(model, task: PointerChasing, hops: int, n_sequences: int = 256,
                   seed: int = 10**9, skip=()) -> float:
    """Fraction of ``hops``-hop queries answered exactly (argmax) on fresh sequences.

    The default seed range (from 10**9) is far from the training batches' seeds. The model's
    mode (training or eval) is the same afterwards as before. ``skip``: blocks left out, by
    index from 0 (``Transformer.hidden``), to score a trained model without one of them; only
    passed on when given, so any model that maps ids to ``(logits, loss)`` can be scored."""
    idx, targets = task.batch(n_sequences, seed=seed + hops, hops=hops)   # (N, seq_len) each
    with eval_mode(model):
        logits, _ = model(idx, skip=skip) if skip else model(idx)         # (N, seq_len, vocab)
    mask = targets != IGNORE
    return (logits.argmax(-1)[mask] == targets[mask]).float().mean().item()


@torch.no_grad()
def span_accuracy(model, task: InductionHops, hops: int, *, min_span: int = 0,
                  max_span: int | None = None, n_sequences: int = 256,
                  seed: int = 10**9) -> tuple[float | None, int]:
    """``(accuracy, queries)``: the fraction of ``hops``-hop queries answered exactly among
    those whose chain spans ``min_span`` to ``max_span`` positions (inclusive; no upper
    bound with None), and how many such queries there were (accuracy None when none).

    The sequences are ``query_accuracy``'s (the same seed, so every model and every training
    seed is scored on the same held-out text): with ``min_span=0`` and no ``max_span`` the
    accuracy equals ``query_accuracy``'s. Several ranges of one ``hops`` at once, from one
    forward pass: ``span_accuracies``."""
    return span_accuracies(model, task, hops, {0: (min_span, max_span)},
                           n_sequences=n_sequences, seed=seed)[0]


@torch.no_grad()
def span_accuracies(model, task: InductionHops, hops: int, spans: dict, *,
                    n_sequences: int = 256, seed: int = 10**9) -> dict:
    """``span_accuracy`` for several ranges of chain span on the same sequences, from one
    forward pass: ``spans`` maps a name to ``(min_span, max_span)`` (max None: no upper
    bound); returns ``{name: (accuracy, queries)}`` in the same order, each exactly what
    ``span_accuracy`` gives for that range."""
    if not isinstance(task, InductionHops):
        raise TypeError(f"task must be an InductionHops (chains have spans), got "
                        f"{type(task).__name__}")
    for min_span, max_span in spans.values():
        check_int("min_span", min_span, 0)
        if max_span is not None:
            check_int("max_span", max_span, min_span)
    idx, targets = task.batch(n_sequences, seed=seed + hops, hops=hops)
    spans_at = task.chain_spans(idx[:, 1:], hops)                # (N, length), -1: none
    spans_at = torch.cat([torch.full_like(spans_at[:, :1], -1), spans_at], 1)  # marker: none
    keeps = {}
    for name, (min_span, max_span) in spans.items():
        keep = (targets != IGNORE) & (spans_at >= min_span)
        if max_span is not None:
            keep &= spans_at <= max_span
        keeps[name] = keep
    right = None
    if any(bool(keep.any()) for keep in keeps.values()):
        with eval_mode(model):
            logits, _ = model(idx)
        right = logits.argmax(-1) == targets
    return {name: ((None, 0) if not keep.any() else
                   (right[keep].float().mean().item(), int(keep.sum())))
            for name, keep in keeps.items()}
