"""Measurements a record takes on the model it trains: at initialisation, after every step, at
the end.

A record's runs keep losses (``experiments._run_corpus``); the model itself is gone when the
worker returns. Chapter 5 needs two measurements that exist only while the model does:

* ``"update_size"`` — DeepNet's early-update measure, ||F(x; theta_t) - F(x; theta_0)|| after
  every step (``probes.UpdateTracker``), on one fixed held-out batch (C12);
* ``"layer_use"`` — each block's relative contribution ||F|| / ||x|| (``probes.layer_contribution``)
  and the rise in loss when that one block is removed (``probes.skip_layer_losses``), averaged
  over a few fixed held-out batches, once at initialisation and once after training, on the
  same model (C10): the untrained numbers are the reference the trained ones are read against.

An arm asks for one by naming it in its info, ``info["probe"] = {"name": "layer_use",
"batches": 4, ...}``; the spec is part of the arm's stored config, so changing it makes the
record stale. The run's result then carries ``"probes"``: a dict of plain lists and floats
(keys in ``PROBE_KEYS``). The probe batches are drawn from the validation split with a
generator of their own (seed ``PROBE_SEED``), so every arm and seed is measured on the same
tokens, and the training batches are untouched.
"""

from __future__ import annotations

import numpy as np
import torch

from .checks import check_choice, check_int, eval_mode
from .probes import UpdateTracker, layer_contribution, skip_layer_losses

#: The seed of the probe batches' generator (the same tokens for every arm and seed).
PROBE_SEED = 0
#: What each probe stores in a run's ``"probes"``.
PROBE_KEYS = {
    "update_size": ("update_steps", "update_size"),
    "layer_use": ("contribution_init", "skip_cost_init", "loss_init",
                  "contribution", "skip_cost", "loss"),
}


def probe_batches(corpus, batches: int, batch_size: int, context: int) -> list[tuple]:
    """``batches`` held-out ``(x, y)`` pairs of shape (batch_size, context), the same on every
    call (their own generator, seeded with ``PROBE_SEED``)."""
    gen = torch.Generator().manual_seed(PROBE_SEED)
    return [corpus.get_batch("val", batch_size, context, gen) for _ in range(batches)]


def layer_use(model, batches: list[tuple]) -> dict:
    """Per block, averaged over ``batches``: the relative contribution (L,), the loss rise when
    the block is removed (L,), and the full model's loss (a float)."""
    contribution = np.mean([layer_contribution(model, x) for x, _ in batches], axis=0)
    with torch.no_grad(), eval_mode(model):
        losses = [float(model(x, targets=y)[1]) for x, y in batches]
    skipped = np.mean([skip_layer_losses(model, x, y) for x, y in batches], axis=0)
    loss = float(np.mean(losses))
    return {"contribution": contribution.tolist(), "skip_cost": (skipped - loss).tolist(),
            "loss": loss}


class UpdateSizeProbe:
    """``"update_size"``: how far the output representation has moved after each step."""

    def __init__(self, model, corpus, batch_size: int = 8, context: int = 64):
        (x, _), = probe_batches(corpus, 1, batch_size, context)
        self.tracker = UpdateTracker(model, x)          # stores F(x; theta_0)

    def on_step(self, step: int, model) -> None:
        self.tracker(step, model)

    def result(self, model) -> dict:
        return {"update_steps": list(self.tracker.steps),
                "update_size": list(self.tracker.sizes)}


class LayerUseProbe:
    """``"layer_use"``: each block's contribution and removal cost, untrained and trained."""

    on_step = None                                       # nothing to do during training

    def __init__(self, model, corpus, batches: int = 4, batch_size: int = 16,
                 context: int = 64):
        check_int("batches", batches, 1)
        self.batches = probe_batches(corpus, batches, batch_size, context)
        self.untrained = layer_use(model, self.batches)

    def result(self, model) -> dict:
        return {**{f"{k}_init": v for k, v in self.untrained.items()},
                **layer_use(model, self.batches)}


PROBES = {"update_size": UpdateSizeProbe, "layer_use": LayerUseProbe}


def make_probe(info: dict, model, corpus):
    """The probe an arm's ``info["probe"]`` names, built on the untrained ``model``; None when
    the arm names none."""
    spec = info.get("probe")
    if spec is None:
        return None
    if not isinstance(spec, dict) or "name" not in spec:
        raise ValueError(f"info['probe'] must be a dict with a 'name', got {spec!r}")
    check_choice("info['probe']['name']", spec["name"], tuple(PROBES))
    options = {k: v for k, v in spec.items() if k != "name"}
    return PROBES[spec["name"]](model, corpus, **options)
