"""Measurements a record takes on the model it trains: at initialisation, after every step, at
the end.

A record's runs keep losses (``experiments.spec._run_corpus``); the model itself is gone when the
worker returns, so whatever a chapter reads about the model's insides is measured here, in the
worker, and stored with the run. Two ways to ask, both part of the arm's stored info (so
changing them makes the record stale), both measured on held-out batches from
``probe_batches`` (the same tokens for every arm and seed, the training batches untouched):

* ``info["final_probes"] = [name, ...]`` (``final_probes``): per-layer measures of the trained
  model, each stored in the run's ``final`` as a list (``FINAL_PROBES``; chapters 6 and 8);
* ``info["probe"] = {"name": ..., options}`` (``make_probe``): a measurement that also needs
  the untrained model or every step, stored in the run's ``"probes"``. Chapter 5 needs two:

* ``"update_size"`` — DeepNet's early-update measure, ||F(x; theta_t) - F(x; theta_0)|| after
  every step (``probes.UpdateTracker``), on one fixed held-out batch (C12);
* ``"init_response"`` — how the untrained model answers a small change of its weights
  (chapters 4 and 5): Liu et al.'s output sensitivity (``probes.output_sensitivity``), and
  the first update's size after one plain SGD step and after Adam's first step at a rate
  given per arm (``probes.first_update_size``), all from the same initialisation, on one
  fixed held-out batch;
* ``"layer_use"`` — each block's relative contribution ||F|| / ||x|| (``probes.layer_contribution``)
  and the rise in loss when that one block is removed (``depth_scaling.layer_removal_cost``),
  averaged over a few fixed held-out batches, once at initialisation and once after training,
  on the same model (C10): the untrained numbers are the reference the trained ones are read
  against.

For ``info["probe"] = {"name": "layer_use", "batches": 4, ...}`` the run's result carries
``"probes"``: a dict of plain lists and floats (keys in ``PROBE_KEYS``).

The removal cost has one name wherever it is stored, ``REMOVAL_COST`` (in a run's ``final``
and in its ``"probes"``), and one reader, ``removal_cost``, which also reads the name that
records written before it store in their ``"probes"`` (``OLD_REMOVAL_COST``).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch

from depthnotes.core.checks import check_choice, check_int, eval_mode
from depthnotes.measure.depth_scaling import layer_removal_cost
from depthnotes.measure.probes import UpdateTracker, layer_contribution

#: The name under which a run stores each block's removal cost (the loss with that block
#: removed minus the full model's loss, ``depth_scaling.layer_removal_cost``), in its
#: ``final`` and in a ``"layer_use"`` probe's results (with ``_init`` for the untrained model).
REMOVAL_COST = "layer_removal_cost"
#: The name ``"layer_use"`` probes stored it under in records written before ``REMOVAL_COST``
#: was the one name (``removal_cost`` reads both; the records are not regenerated for it).
OLD_REMOVAL_COST = "skip_cost"
#: The seed of the probe batches' generator (the same tokens for every arm and seed).
PROBE_SEED = 0
#: What each probe stores in a run's ``"probes"``.
PROBE_KEYS = {
    "update_size": ("update_steps", "update_size"),
    "init_response": ("sensitivity", "sgd_update", "adam_lrs", "adam_update", "sgd_lrs",
                      "sgd_updates"),
    "layer_use": ("contribution_init", f"{REMOVAL_COST}_init", "loss_init",
                  "contribution", REMOVAL_COST, "loss"),
}


def removal_cost(stored: Mapping, untrained: bool = False) -> list:
    """Each block's removal cost as a run stored it: ``stored`` is the run's ``final`` (final
    probes) or its ``"probes"`` (the ``"layer_use"`` probe, whose ``untrained=True`` reads
    the measurement at initialisation). Reads ``REMOVAL_COST``, or ``OLD_REMOVAL_COST`` in a
    record written before that was the one name; the values as stored (a list with one entry
    per block; a diverged run may hold None)."""
    suffix = "_init" if untrained else ""
    for key in (REMOVAL_COST + suffix, OLD_REMOVAL_COST + suffix):
        if key in stored:
            return list(stored[key])
    raise KeyError(f"no removal cost ({REMOVAL_COST + suffix!r} or "
                   f"{OLD_REMOVAL_COST + suffix!r}) in the stored keys {sorted(stored)}")


def probe_batches(corpus, batches: int, batch_size: int, context: int) -> list[tuple]:
    """``batches`` held-out ``(x, y)`` pairs of shape (batch_size, context), the same on every
    call (their own generator, seeded with ``PROBE_SEED``)."""
    gen = torch.Generator().manual_seed(PROBE_SEED)
    return [corpus.get_batch("val", batch_size, context, gen) for _ in range(batches)]


def measure_layer_use(model, batches: list[tuple]) -> dict:
    """Per block, averaged over ``batches``: the relative contribution (L,), the loss rise when
    the block is removed (L,; ``REMOVAL_COST``), and the full model's loss (a float)."""
    contribution = np.mean([layer_contribution(model, x) for x, _ in batches], axis=0)
    with torch.no_grad(), eval_mode(model):
        losses = [float(model(x, targets=y)[1]) for x, y in batches]
    cost = np.mean([layer_removal_cost(model, x, y) for x, y in batches], axis=0)
    return {"contribution": contribution.tolist(), REMOVAL_COST: cost.tolist(),
            "loss": float(np.mean(losses))}


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
        self.untrained = measure_layer_use(model, self.batches)

    def result(self, model) -> dict:
        return {**{f"{k}_init": v for k, v in self.untrained.items()},
                **measure_layer_use(model, self.batches)}


class InitResponseProbe:
    """``"init_response"``: at initialisation, the output's sensitivity to a relative nudge
    ``eps`` of every block matrix (``probes.output_sensitivity``), and the first update
    (``probes.first_update_size``) of one plain SGD step at ``sgd_lr`` and of Adam's first
    step at each rate of ``adam_lrs``. Every step is taken on a copy of the untrained model,
    all with the same batch (held-out text, the probes' seed), and measured on the same
    probe batch; the model the run then trains is untouched.

    ``sgd_lrs`` (a list of rates, default none) adds plain SGD steps at more rates, stored as
    ``"sgd_lrs"`` and ``"sgd_updates"``: one finite rate cannot tell the gradient's scaling
    with depth from the step's own nonlinearity, a second, smaller one can (C12). Setting
    ``eps``, ``sgd_lr`` to None and ``adam_lrs`` to ``[]`` leaves those measurements out (a
    record that needs only the extra SGD rates pays for nothing else); the defaults measure
    what ``init_response_depth`` stored, so that record still matches its definition.

    ``stepped`` names the parameters every step moves (``probes.stepped_parameters``):
    ``"all"`` (the default, what the records before it measured) or ``"blocks"``, the
    residual blocks' parameters only (embeddings, unembedding and a final LayerNorm held
    fixed), the part of the model DeepNet's bound on the update is about (C12). The results
    keep their names; a reader tells the two apart by the arm's ``info["probe"]``."""

    on_step = None                                       # all of it is measured at init

    def __init__(self, model, corpus, batch_size: int = 8, context: int = 64,
                 eps: float | None = 1e-3, sgd_lr: float | None = 0.1, adam_lrs=(1e-3,),
                 sgd_lrs=(), stepped: str = "all"):
        from depthnotes.measure.probes import (STEPPED_GROUPS, first_update_size,
                                               output_sensitivity)

        check_choice("stepped", stepped, STEPPED_GROUPS)
        (x, _), (xs, ys) = probe_batches(corpus, 2, batch_size, context)
        self.adam_lrs = [float(lr) for lr in adam_lrs]
        self.sgd_lrs = [float(lr) for lr in sgd_lrs]
        self.sensitivity = (None if eps is None else
                            output_sensitivity(model, x, eps=eps, seed=PROBE_SEED))

        def step(lr, optimizer):
            return first_update_size(model, xs, ys, x, lr=lr, optimizer=optimizer,
                                     stepped=stepped)

        self.sgd = None if sgd_lr is None else step(sgd_lr, "sgd")
        self.adam = [step(lr, "adam") for lr in self.adam_lrs]
        self.sgd_more = [step(lr, "sgd") for lr in self.sgd_lrs]

    def result(self, model) -> dict:
        out = {"sensitivity": self.sensitivity, "sgd_update": self.sgd,
               "adam_lrs": self.adam_lrs, "adam_update": self.adam}
        out = {k: v for k, v in out.items() if v is not None}
        if self.sgd_lrs:
            out.update(sgd_lrs=self.sgd_lrs, sgd_updates=self.sgd_more)
        return out


PROBES = {"update_size": UpdateSizeProbe, "layer_use": LayerUseProbe,
          "init_response": InitResponseProbe}


#: Per-layer measurements an arm can ask for after training, by name in its
#: ``info["final_probes"]``; each is stored in the run's ``final`` as a list with one entry
#: per block application (``residual_variance``: L + 1 entries, the embedding first;
#: ``update_cosines``: L - 1, one per pair of consecutive blocks).
FINAL_PROBES = (REMOVAL_COST, "residual_variance", "update_cosines",
                "angular_distances", "drop_last_losses", "gromov_prune_losses",
                "gromov_prune_starts", "shortgpt_prune_losses", "block_influence",
                "healed_losses")
#: They are measured on one held-out batch (``probe_batches``) of this many sequences of the
#: arm's context.
PROBE_SEQUENCES = 64


def heal_recipe(arm):
    """The healing fine-tune of ``arm.info["heal"]`` (``{"plan": [[rule, n], ...], "steps",
    "warmup_steps", "lr"}``): the arm's own recipe (batch, context, clipping), run for
    ``steps`` at the constant rate ``lr`` after ``warmup_steps`` of warm-up (a fresh optimizer
    needs it), evaluated once at the end (``redundancy.healed_losses`` scores it again on the
    probe batch)."""
    heal = arm.info.get("heal")
    if not isinstance(heal, Mapping) or set(heal) != {"plan", "steps", "warmup_steps", "lr"}:
        raise ValueError("info['heal'] must be a dict with keys plan, steps, warmup_steps, lr; "
                         f"got {heal!r}")
    return arm.recipe.replace(steps=heal["steps"], warmup_steps=heal["warmup_steps"],
                              lr=heal["lr"], decay="constant", eval_every=0, eval_batches=1)


def final_probes(model, corpus, arm, seed: int = 0) -> dict:
    """The per-layer measurements ``arm.info["final_probes"]`` names, on ``model`` (an
    ``experiments.spec.Arm``; none when it names none): ``depth_scaling.layer_removal_cost`` (loss
    rise when one application is removed), ``probes.residual_variance_by_layer`` and chapter
    6's ``redundancy`` measures (``update_cosines``, ``angular_distances``,
    ``drop_last_losses``: entry n is the loss with the last n blocks removed, entry 0 the full
    model's; ``healed_losses``: per entry of ``info["heal"]["plan"]``, the loss after pruning
    and a healing fine-tune, ``heal_recipe``, its batches drawn from the run's ``seed``). A
    chapter calls it on untrained models too, for their reference on the same batch."""
    from depthnotes.measure.probes import residual_variance_by_layer
    from depthnotes.measure.redundancy import (angular_distances, block_influence,
                                               drop_last_losses, gromov_prune_losses,
                                               healed_losses, shortgpt_prune_losses,
                                               update_cosines)

    names = arm.info.get("final_probes", ())
    for name in names:
        check_choice("info['final_probes'][i]", name, FINAL_PROBES)
    if not names:
        return {}
    (x, y), = probe_batches(corpus, 1, PROBE_SEQUENCES, arm.recipe.context)   # (B, T) each
    measure = {REMOVAL_COST: lambda: layer_removal_cost(model, x, y),
               "residual_variance": lambda: residual_variance_by_layer(model, x),
               "update_cosines": lambda: update_cosines(model, x),
               "angular_distances": lambda: angular_distances(model, x),
               "drop_last_losses": lambda: drop_last_losses(model, x, y),
               "gromov_prune_losses": lambda: gromov_prune_losses(model, x, y)[0],
               "gromov_prune_starts": lambda: gromov_prune_losses(model, x, y)[1],
               "shortgpt_prune_losses": lambda: shortgpt_prune_losses(model, x, y),
               "block_influence": lambda: block_influence(model, x),
               "healed_losses": lambda: healed_losses(
                   model, corpus, heal_recipe(arm), x, y,
                   [tuple(step) for step in arm.info["heal"]["plan"]], seed)}
    return {name: [float(v) for v in measure[name]()] for name in names}


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
