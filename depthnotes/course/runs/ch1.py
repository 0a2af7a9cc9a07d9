"""Chapter 1's open exercises: runs the student makes, judged against their own measurement."""

from __future__ import annotations

from depthnotes.course.kinds import Experiment
from depthnotes.course.runs._common import model_problem, non_embedding


def _verify_1_5(count, given):
    problem = model_problem(given["model"])
    if problem:
        return problem
    if given["model"].config.d_model > 64:
        return "pick a narrow model (d_model of 64 or less): that is where the rule is tested."
    if count != non_embedding(given["model"]):
        return (f"{count!r} is not the number of non-embedding parameters of your model: "
                "count them from its tensors.")
    return None


def _rule_within_5pct(count, given):
    c = given["model"].config
    return abs(12 * c.n_layer * c.d_model ** 2 / count - 1) <= 0.05


RUNS = {
    "1.5": Experiment(
        needs=("model", "conclusion"), answers=("model", "conclusion"),
        verify=_verify_1_5, outcome=_rule_within_5pct, options=(True, False),
        idea="Build the model, sum p.numel() over its parameters minus the two embedding "
             "tables, and compare that with the rule's 12·L·d².",
        read="Compare your count with 12·L·d² for your own L and d: is the gap at most 5 %?"),
}
