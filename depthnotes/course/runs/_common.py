"""What the open exercises share: checks that a student's run was made as the task asks.

Nothing here knows an answer: a run is judged against the student's own measurement.
"""

from __future__ import annotations

import importlib


def is_instance(obj, module: str, name: str) -> bool:
    return isinstance(obj, getattr(importlib.import_module(module), name))


def model_problem(model, **want) -> str | None:
    """What is wrong with ``model`` (a Transformer whose config has the ``want`` fields)."""
    if not is_instance(model, "depthnotes.core.model", "Transformer"):
        return f"expected a depthnotes Transformer, got {type(model).__name__}."
    for name, value in want.items():
        if getattr(model.config, name) != value:
            return (f"the model you trained has {name}={getattr(model.config, name)!r}; the "
                    f"task asks for {name}={value!r}.")
    return None


def non_embedding(model) -> int:
    embedding = model.wte.weight.numel() + model.wpe.weight.numel()
    return sum(p.numel() for p in model.parameters()) - embedding


def profile_problem(profile, model, entries_per_depth: int, **want) -> str | None:
    """What is wrong with a per-layer profile: not of ``model`` (``n_layer + entries_per_depth``
    entries: 0 for one per block, 1 when the embedding comes first), or ``model`` not as asked."""
    problem = model_problem(model, **want)
    if problem:
        return problem
    if len(profile) != model.config.n_layer + entries_per_depth:
        return "the profile's length does not match your model's depth: measure that model."
    return None
