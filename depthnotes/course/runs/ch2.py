"""Chapter 2's open exercises: runs the student makes, judged against their own measurement."""

from __future__ import annotations

from depthnotes.course.kinds import Experiment
from depthnotes.course.runs._common import model_problem


def _verify_2_4(cost, given):
    models = given["models"]
    if not (isinstance(models, tuple) and len(models) == 2):
        return "pass models=(tied, untied): the two models you built."
    for m in models:
        problem = model_problem(m)
        if problem:
            return problem
    tied, untied = models
    if not tied.config.tie_embeddings or untied.config.tie_embeddings:
        return "the first model must tie its head (the default), the second must not."
    if tied.config.replace(tie_embeddings=False) != untied.config:
        return "build the two models with the same shape; only tie_embeddings may differ."
    measured = sum(p.numel() for p in untied.parameters()) - \
        sum(p.numel() for p in tied.parameters())
    if cost != measured:
        return f"{cost!r} is not the difference of your two models' parameter counts."
    return None


def _costs_one_table(cost, given):
    c = given["models"][0].config
    return cost == c.vocab_size * c.d_model


RUNS = {
    "2.4": Experiment(
        needs=("models", "conclusion"), answers=("models", "conclusion"),
        verify=_verify_2_4, outcome=_costs_one_table, options=(True, False),
        idea="Build both models with the same preset (one block is enough), count each one's "
             "parameters from its tensors, and subtract.",
        read="Compare your measured difference with vocab_size × d_model for your models."),
}
