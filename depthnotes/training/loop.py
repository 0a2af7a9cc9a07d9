"""A small, deterministic training loop in which divergence is a result, not a crash.

``train(model, data, config)`` runs AdamW with a linear warmup and then a cosine or linear
decay (or a constant rate), optional gradient clipping, and an evaluation every
``eval_every`` steps on a fixed set of held-out batches. It returns a ``TrainResult``: the loss
of every step, the evaluations, and — if the run went wrong — at which step and why.

A run *diverges* when a training loss is NaN or infinite, when the gradient norm is NaN or
infinite, or when a training loss exceeds ``blowup_factor`` times the first step's loss (for a
freshly initialised language model that first loss is about ln(vocab_size)). The run then
stops and the result says so; nothing is raised. Chapter 4 counts such runs.

``data`` is either

* an object with ``get_batch(split, batch_size, context, generator)`` (a
  ``depthnotes.data.corpus.CharCorpus``): training batches come from its ``"train"`` split and
  evaluation batches from ``"val"``, with ``config.batch_size`` and ``config.context``; or
* a function ``generator -> (x, y)`` (e.g. a synthetic task, chapter 3): training batches are
  drawn from it, and evaluation batches too (from a separately seeded generator) unless
  ``eval_data`` gives another such function. Targets equal to -100 are ignored by the loss.

Everything random is seeded by ``config.seed``: the training batches from one generator, the
evaluation batches from another, so the same call gives the same numbers (at a fixed thread
count). The model is trained in place; seed its initialisation when you build it. It leaves
``train`` in the mode (training or eval) it came in with.

Any experiment calls this one loop: the text corpus of chapters 4-6 and the synthetic task of
chapter 3 (``tasks.train_on_task``) alike. From a shell, ``python -m depthnotes train --help``
trains one model on the shipped corpus, e.g. chapter 5's 1,000-layer DeepNorm stack.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import torch

from depthnotes.core.checks import check_choice, check_int, check_number, eval_mode
from depthnotes.training.runtime import progress

DECAYS = ("cosine", "linear", "constant")


@dataclass(frozen=True)
class TrainConfig:
    """How to train: steps, batch shape, the learning-rate schedule, clipping, evaluation.

    ``lr`` is the peak learning rate, reached after ``warmup_steps`` of linear warmup; it then
    decays to ``min_lr_ratio * lr`` at the last step (``decay="cosine"`` or ``"linear"``) or
    stays (``"constant"``). ``grad_clip=None`` turns clipping off. ``eval_every=0`` evaluates
    only after the last step. ``warmup_steps`` may exceed ``steps`` (the run then ends while
    still warming up). ``blowup_factor=None`` turns the loss blow-up test off (NaN/inf
    still stop the run). ``eval_seed`` fixes the held-out batches for every seed: with it, every
    seed of an experiment is evaluated on the same text, so that which characters were drawn
    adds nothing to the seed spread; ``None`` draws them from ``seed`` (the records made before
    it existed).

    ``block_lr_scale`` multiplies the rate (and its whole schedule) of every parameter of the
    model's transformer blocks, ``model.h``: the attention and FFN matrices, their biases and
    the blocks' two LayerNorms (gain and bias). The token and position embeddings (with the
    head tied to the token embedding) and the final LayerNorm keep the global rate ``lr``. It is
    how a per-depth Adam rule for the hidden weights is trained (chapter 8's Depth-muP arm:
    hidden rate proportional to 1/sqrt(L)); the blocks' norms and biases follow the matrices
    as in CompleteP's reference code, which applies its depth factor to the whole block. The
    default 1 builds the optimiser exactly as before the field existed (one group per weight
    decay), so every existing recipe trains bit for bit as it did.

    The same recipe trains on a synthetic task (``training.tasks.train_on_task``; build one with
    ``training.tasks.task_recipe``, which holds the tasks' optimizer settings): there
    ``eval_every`` also sets how often the accuracy on every k is measured, and
    ``eval_sequences`` how many fresh sequences score the trained model on each k, and
    ``long_span > 0`` (an ``InductionHops`` task) also scores, on the same sequences, the
    queries whose chain spans at least that many positions (``training.tasks.span_accuracy``).
    """

    steps: int = 200
    batch_size: int = 16
    context: int = 64
    lr: float = 1e-3
    warmup_steps: int = 0
    decay: str = "cosine"
    min_lr_ratio: float = 0.1
    weight_decay: float = 0.0
    beta1: float = 0.9
    beta2: float = 0.95
    grad_clip: float | None = 1.0
    eval_every: int = 0
    eval_batches: int = 4
    seed: int = 0
    blowup_factor: float | None = 3.0
    eval_seed: int | None = None
    eval_sequences: int = 256
    long_span: int = 0
    block_lr_scale: float = 1.0

    def __post_init__(self) -> None:
        for name in ("steps", "batch_size", "context", "eval_batches", "eval_sequences"):
            check_int(name, getattr(self, name), 1)
        for name in ("warmup_steps", "eval_every", "seed", "long_span"):
            check_int(name, getattr(self, name), 0)
        if self.eval_seed is not None:
            check_int("eval_seed", self.eval_seed, 0)
        check_number("lr", self.lr, low=0.0, low_open=True)
        check_number("block_lr_scale", self.block_lr_scale, low=0.0, low_open=True,
                     extra="(the factor on the rate of the blocks' parameters, model.h)")
        check_choice("decay", self.decay, DECAYS)
        check_number("min_lr_ratio", self.min_lr_ratio, low=0.0, high=1.0)
        check_number("weight_decay", self.weight_decay, low=0.0)
        check_number("beta1", self.beta1, low=0.0, high=1.0, high_open=True)
        check_number("beta2", self.beta2, low=0.0, high=1.0, high_open=True)
        if self.grad_clip is not None:
            check_number("grad_clip", self.grad_clip, low=0.0, low_open=True,
                          extra="(or None to turn clipping off)")
        if self.blowup_factor is not None:
            check_number("blowup_factor", self.blowup_factor, low=1.0, low_open=True,
                          extra="(or None to turn the blow-up test off)")

    def replace(self, **changes) -> "TrainConfig":
        """A copy with some fields changed, validated again."""
        import dataclasses

        return dataclasses.replace(self, **changes)

    def lr_at(self, step: int) -> float:
        """The learning rate used at ``step`` (0-based)."""
        if step < self.warmup_steps:
            return self.lr * (step + 1) / self.warmup_steps
        if self.decay == "constant":
            return self.lr
        span = self.steps - self.warmup_steps
        frac = 0.0 if span <= 1 else (step - self.warmup_steps) / (span - 1)
        floor = self.min_lr_ratio * self.lr
        if self.decay == "linear":
            return floor + (self.lr - floor) * (1.0 - frac)
        return floor + (self.lr - floor) * 0.5 * (1.0 + math.cos(math.pi * frac))


@dataclass
class TrainResult:
    """What a run did. Losses are per step (training) and per evaluation (held-out).

    ``diverged_at`` is the 0-based step whose loss or gradient went wrong, and ``reason`` says
    how; both are None when the run finished. ``train_losses`` includes the diverged step's
    loss (possibly NaN). ``seconds`` is wall time (not reproducible; do not print it in a
    checked cell).
    """

    config: TrainConfig
    train_losses: list[float] = field(default_factory=list)
    grad_norms: list[float] = field(default_factory=list)
    lrs: list[float] = field(default_factory=list)
    eval_steps: list[int] = field(default_factory=list)
    eval_losses: list[float] = field(default_factory=list)
    diverged: bool = False
    diverged_at: int | None = None
    reason: str | None = None
    seconds: float = 0.0

    @property
    def steps_run(self) -> int:
        """Optimizer steps taken (the diverged step is not applied)."""
        return len(self.train_losses) - (1 if self.diverged else 0)

    @property
    def initial_loss(self) -> float:
        return self.train_losses[0] if self.train_losses else math.nan

    @property
    def final_train_loss(self) -> float:
        """Mean training loss over the last (up to) 10 applied steps; NaN if none."""
        good = self.train_losses[: self.steps_run][-10:]
        return sum(good) / len(good) if good else math.nan

    @property
    def final_eval_loss(self) -> float:
        return self.eval_losses[-1] if self.eval_losses else math.nan

    @property
    def best_eval_loss(self) -> float:
        finite = [v for v in self.eval_losses if math.isfinite(v)]
        return min(finite) if finite else math.nan

    def summary(self) -> str:
        """One line: how it ended, and the losses (rounded)."""
        if self.diverged:
            return f"diverged at step {self.diverged_at}: {self.reason}"
        return (f"trained {self.steps_run} steps: train loss {self.initial_loss:.2f} -> "
                f"{self.final_train_loss:.2f}, eval loss {self.final_eval_loss:.3f}")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["config"] = asdict(self.config)
        return d


def train(model: torch.nn.Module, data, config: TrainConfig | None = None, *,
          eval_data: Callable | None = None,
          on_step: Callable[[int, torch.nn.Module], None] | None = None,
          desc: str | None = None) -> TrainResult:
    """Train ``model`` in place on ``data`` (see the module docstring); never raises on
    divergence. ``on_step(step, model)`` is called after every applied update (chapter 5
    uses it to measure how far the model has moved). The model trains in training mode and
    is given back in the mode it came in with (also if the loop raises)."""
    config = TrainConfig() if config is None else config
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}")
    train_fn, eval_fn = _batch_functions(data, eval_data, config)
    result = TrainResult(config=config)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(param_groups(model, params, config), lr=config.lr,
                            betas=(config.beta1, config.beta2))
    gen = torch.Generator().manual_seed(config.seed)
    t0 = time.perf_counter()
    was_training = model.training
    model.train()
    try:
        for step in progress(range(config.steps), total=config.steps, desc=desc):
            lr = config.lr_at(step)
            for group in opt.param_groups:
                group["lr"] = lr * group["lr_scale"]
            x, y = train_fn(gen)
            _, loss = model(x, targets=y)
            loss_value = float(loss.detach())
            result.train_losses.append(loss_value)
            result.lrs.append(lr)
            if not math.isfinite(loss_value):
                _stop(result, step, f"training loss is {loss_value} (not finite)")
                break
            if config.blowup_factor is not None and step > 0 \
                    and loss_value > config.blowup_factor * result.train_losses[0]:
                _stop(result, step, f"training loss {loss_value:.3g} exceeded "
                                    f"{config.blowup_factor:g} x the first step's "
                                    f"{result.train_losses[0]:.3g}")
                break
            opt.zero_grad(set_to_none=True)
            loss.backward()
            max_norm = config.grad_clip if config.grad_clip is not None else math.inf
            norm = float(torch.nn.utils.clip_grad_norm_(params, max_norm))
            result.grad_norms.append(norm)
            if not math.isfinite(norm):
                _stop(result, step, f"gradient norm is {norm} (not finite)")
                break
            opt.step()
            if on_step is not None:
                on_step(step, model)
            last = step == config.steps - 1
            if last or (config.eval_every and (step + 1) % config.eval_every == 0):
                result.eval_steps.append(step + 1)
                result.eval_losses.append(evaluate(model, eval_fn, config))
    finally:
        model.train(was_training)
    result.seconds = time.perf_counter() - t0
    return result


def param_groups(model: torch.nn.Module, params: list, config: TrainConfig) -> list[dict]:
    """AdamW's parameter groups for ``train``: matrices (``dim >= 2``) with
    ``config.weight_decay``, vectors without; each group's ``lr_scale`` is the factor on the
    scheduled rate. With ``config.block_lr_scale == 1`` these are the two groups the loop has
    always used (``lr_scale`` 1). Otherwise the parameters of ``model.h`` (the blocks) form
    their own two groups at ``lr_scale = block_lr_scale``; a model without ``h`` is refused,
    since the factor would otherwise silently do nothing."""
    def split(ps: list, scale: float) -> list[dict]:
        return [{"params": [p for p in ps if p.dim() >= 2],
                 "weight_decay": config.weight_decay, "lr_scale": scale},
                {"params": [p for p in ps if p.dim() < 2], "weight_decay": 0.0,
                 "lr_scale": scale}]

    if config.block_lr_scale == 1.0:
        return split(params, 1.0)
    blocks = getattr(model, "h", None)
    if not isinstance(blocks, torch.nn.ModuleList):
        raise TypeError(f"block_lr_scale={config.block_lr_scale:g} scales the rate of the "
                        f"blocks, model.h, but {type(model).__name__} has no ModuleList h; "
                        "use block_lr_scale=1 for this model")
    in_blocks = {id(p) for p in blocks.parameters()}
    return (split([p for p in params if id(p) not in in_blocks], 1.0)
            + split([p for p in params if id(p) in in_blocks], config.block_lr_scale))


@torch.no_grad()
def evaluate(model: torch.nn.Module, eval_fn: Callable, config: TrainConfig) -> float:
    """Mean loss over ``config.eval_batches`` held-out batches; the same batches every call
    (their generator is seeded from ``config.eval_seed``, the same for every seed, or else from
    ``config.seed``), in eval mode; the model's mode is the same afterwards as before."""
    base = config.seed if config.eval_seed is None else config.eval_seed
    gen = torch.Generator().manual_seed(base + 1_000_003)
    total = 0.0
    with eval_mode(model):
        for _ in range(config.eval_batches):
            x, y = eval_fn(gen)
            _, loss = model(x, targets=y)
            total += float(loss)
    return total / config.eval_batches


def _stop(result: TrainResult, step: int, reason: str) -> None:
    result.diverged, result.diverged_at, result.reason = True, step, reason


def _batch_functions(data, eval_data, config: TrainConfig):
    if hasattr(data, "get_batch"):
        def train_fn(gen):
            return data.get_batch("train", config.batch_size, config.context, gen)

        def corpus_eval_fn(gen):
            return data.get_batch("val", config.batch_size, config.context, gen)

        eval_fn = eval_data if eval_data is not None else corpus_eval_fn
    elif callable(data):
        train_fn = data
        eval_fn = eval_data if eval_data is not None else data
    else:
        raise TypeError("data must be a corpus with get_batch(split, batch_size, context, "
                        f"generator) or a function generator -> (x, y); got {type(data).__name__}")
    if not callable(eval_fn):
        raise TypeError(f"eval_data must be a function generator -> (x, y), got "
                        f"{type(eval_fn).__name__}")
    return train_fn, eval_fn
