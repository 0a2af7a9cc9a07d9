"""Chapter 8's cheap measurements: depth-wise branch scaling, LayerNorm Scaling, layer removal.

Each runs in seconds at d = 64 and L <= 64 on the shipped corpus and returns plain data (no
plots):

* ``coordinate_check`` — for each depth L and branch rule (standard 1.0, "1/sqrt(L)" of
  Depth-muP and Bordelon et al., "1/L" of CompleteP; ``config.BRANCH_SCALE_RULES``): the RMS
  of the residual stream after the last block at init, and how much ONE Adam step on one
  batch moves the final hidden state and the logits (RMS of the change, on that batch). A
  parameterisation under which these stay flat in L is one whose learning rate can transfer
  across depth; one under which the change grows with L needs a smaller rate when deeper.
* ``ln_scaling_variance`` — the residual stream's variance after every block at init, without
  and with LayerNorm Scaling (Sun et al. 2025), on the same weights.
* ``layer_removal_cost`` — how much the loss rises when one block is removed (the model's own
  ``skip``, through ``probes.skip_layer_losses``).

What the coordinate check's "standard" and scaled models share: everything but the branch
multiplier (the same init, "normal" by default so that no other depth rule is mixed in; see
``config.BRANCH_SCALE_RULES`` for what the papers change besides the multiplier). The Adam
step is ``train.train`` for one step (AdamW, weight decay 0, no clipping, constant rate), so it
is the book's optimiser; its first step moves every weight by about +-lr whatever the
gradient's size, which is why the learning rate and not the gradient decides its scale.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from depthnotes.core.checks import check_int, check_number, eval_mode
from depthnotes.core.config import ModelConfig
from depthnotes.data.corpus import load_corpus
from depthnotes.core.model import Transformer
from depthnotes.measure.probes import (check_probe_input, residual_variance_by_layer,
                                       skip_layer_losses)
from depthnotes.training.loop import TrainConfig, train

#: The branch rules chapter 8 compares: the standard parameterisation (no multiplier),
#: Depth-muP / Bordelon et al.'s 1/sqrt(L) and CompleteP's 1/L.
CHAPTER8_RULES = (1.0, "1/sqrt(L)", "1/L")


def small_config(vocab_size: int, context: int = 64, **changes) -> ModelConfig:
    """The chapter's small shape: d = 64, 4 heads, pre-norm, init "normal" (no depth-scaled
    init, so a branch rule is the only depth-dependent factor), one block until changed."""
    fields = dict(n_layer=1, d_model=64, n_head=4, vocab_size=vocab_size, context=context,
                  init="normal")
    fields.update(changes)
    return ModelConfig(**fields)


def corpus_batch(batch_size: int = 8, context: int = 64, seed: int = 0):
    """One training batch ``(x, y)``, each (batch_size, context), of the shipped corpus,
    drawn with a generator seeded by ``seed``; and the corpus's vocabulary size."""
    corpus = load_corpus()
    x, y = corpus.get_batch("train", batch_size, context, torch.Generator().manual_seed(seed))
    return x, y, corpus.vocab_size


def _rms(t: torch.Tensor) -> float:
    """Root mean square over every entry."""
    return float(t.pow(2).mean().sqrt())


@dataclass(frozen=True)
class CoordinatePoint:
    """One (depth, branch rule) of the coordinate check. RMS values over every entry."""

    n_layer: int
    branch_scale: float | str
    lr: float                 # the Adam step's learning rate at this depth
    stream_rms: float         # residual stream after the last block (before the final norm), init
    stream_change_rms: float  # its change after the step
    feature_change_rms: float  # change of the final hidden state (after the final norm)
    logit_change_rms: float   # change of the logits


@torch.no_grad()
def _features_and_logits(model: Transformer, x: torch.Tensor):
    with eval_mode(model):
        stream = model.hidden(x)                                          # (B, T, d)
        feats = model.final_norm(stream)                                  # (B, T, d)
        return stream, feats, model.logits(stream)                          # logits (B, T, V)


def coordinate_check(depths, rules=CHAPTER8_RULES, *, lr: float = 1e-3,
                     lr_depth_exponent: float = 0.0, seed: int = 0, batch_size: int = 8,
                     context: int = 64, base: ModelConfig | None = None
                     ) -> list[CoordinatePoint]:
    """The coordinate check: for each L in ``depths`` and each branch rule in ``rules``, a
    model ``base.replace(n_layer=L, branch_scale=rule)`` with init seed ``seed`` takes one
    Adam step on one corpus batch (``corpus_batch(batch_size, context, seed)``) with learning
    rate ``lr * L ** -lr_depth_exponent``; returns one ``CoordinatePoint`` per (L, rule), in
    the order of ``depths`` then ``rules``.

    ``lr_depth_exponent`` = 0 keeps the rate fixed (what the book's branch option alone
    does); 0.5 is Depth-muP's Adam rule for the 1/sqrt(L) branches. ``base`` defaults to
    ``small_config`` (d = 64, init "normal").

    Which number to read: ``stream_change_rms``, the change of the residual stream the head
    reads, shows the depth rules most directly: with a fixed rate it grows with L under the
    standard parameterisation, more slowly under 1/sqrt(L) and not under 1/L (the tests
    hold the code to that ordering between L = 2 and 16). The final LayerNorm divides by the stream's small size at init (embeddings
    ~ N(0, 0.02^2)), so ``feature_change_rms`` mixes that size into the picture.
    """
    depths = [check_int("depths[i]", L) for L in depths]
    if not depths or not rules:
        raise ValueError("coordinate_check needs at least one depth and one rule")
    check_number("lr", lr, 0, low_open=True)
    check_number("lr_depth_exponent", lr_depth_exponent)
    x, y, vocab = corpus_batch(batch_size, context, seed)
    base = small_config(vocab, context) if base is None else base
    if not isinstance(base, ModelConfig):
        raise TypeError(f"base must be a ModelConfig, got {type(base).__name__}")
    out = []
    for L in depths:
        step_lr = lr * L ** -lr_depth_exponent
        one_step = TrainConfig(steps=1, batch_size=batch_size, context=context, lr=step_lr,
                               decay="constant", grad_clip=None, eval_batches=1,
                               blowup_factor=None, seed=seed)
        for rule in rules:
            model = Transformer(base.replace(n_layer=L, branch_scale=rule), seed=seed)
            stream, feats, logits = _features_and_logits(model, x)
            result = train(model, lambda gen: (x, y), one_step)
            if result.diverged:
                raise RuntimeError(f"the one Adam step at L={L}, rule {rule!r} diverged: "
                                   f"{result.reason}")
            stream_after, feats_after, logits_after = _features_and_logits(model, x)
            out.append(CoordinatePoint(L, rule, step_lr, _rms(stream),
                                       _rms(stream_after - stream), _rms(feats_after - feats),
                                       _rms(logits_after - logits)))
    return out


def ln_scaling_variance(n_layer: int, *, seed: int = 0, batch_size: int = 8,
                        context: int = 64, base: ModelConfig | None = None
                        ) -> dict[str, np.ndarray]:
    """The residual stream's variance after the embedding and after each block at init,
    shape (L + 1,), for ``ln_scaling`` "none" and "1/sqrt(l)": the same weights (same seed;
    LayerNorm Scaling adds no parameters), the same corpus batch. Keys are the two rules."""
    check_int("n_layer", n_layer)
    x, _, vocab = corpus_batch(batch_size, context, seed)
    base = small_config(vocab, context) if base is None else base
    return {rule: residual_variance_by_layer(
                Transformer(base.replace(n_layer=n_layer, ln_scaling=rule), seed=seed), x)
            for rule in ("none", "1/sqrt(l)")}


@torch.no_grad()
def layer_removal_cost(model: Transformer, idx: torch.Tensor,
                       targets: torch.Tensor) -> np.ndarray:
    """Loss with block i removed minus the full model's loss, for each i: shape (L,).

    Positive means the block helps. ``probes.skip_layer_losses`` does the removing, one
    application at a time (for a weight-shared model: one application of its block).
    """
    check_probe_input(model, idx)
    with eval_mode(model):
        full = float(model(idx, targets)[1])
    return skip_layer_losses(model, idx, targets) - full
