"""Chapter 1's open exercises: runs the student makes, judged against their own measurement."""

from __future__ import annotations

from depthnotes.course.kinds import OpenExperiment, Predict
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


#: How close the rule 12·L·d² must come to a count to be "within 5 %" (exercise 1.5): the check
#: and the instructor's note on the exercise (``depthnotes.course.answers.ch1``) both read it.
RULE_TOLERANCE = 0.05


def rule_gap(n_layer: int, d_model: int, count: int) -> float:
    """The rule 12·L·d² against a non-embedding count: rule / count - 1 (negative when the
    rule counts too few), the figure exercise 1.5 judges and its solution prints."""
    return 12 * n_layer * d_model ** 2 / count - 1


def _rule_within_5pct(count, given):
    c = given["model"].config
    return abs(rule_gap(c.n_layer, c.d_model, count)) <= RULE_TOLERANCE


GROWTH_OPTIONS = ("less than 4x", "exactly 4x", "more than 4x")


def _verify_1_6(models, given):
    if not (isinstance(models, tuple) and len(models) == 2):
        return "pass models=(narrow, wide): the two models you built."
    for m in models:
        problem = model_problem(m)
        if problem:
            return problem
    narrow, wide = (m.config for m in models)
    if (narrow.d_model, wide.d_model) != (32, 64) or narrow.n_layer != wide.n_layer:
        return "build the same depth twice, at d_model 32 and then 64."
    return None


def _growth(models, given):
    ratio = non_embedding(models[1]) / non_embedding(models[0])
    return ("exactly 4x" if ratio == 4 else
            "less than 4x" if ratio < 4 else "more than 4x")


RUNS = {
    "1.5": OpenExperiment(
        needs=("model", "conclusion"), answers=("model", "conclusion"),
        verify=_verify_1_5, outcome=_rule_within_5pct, options=(True, False),
        idea="Build the model, sum p.numel() over its parameters minus the two embedding "
             "tables, and compare that with the rule's 12·L·d².",
        read="Compare your count with 12·L·d² for your own L and d: is the gap at most 5 %?"),
    "1.6": Predict(
        needs=("prediction",), verify=_verify_1_6, outcome=_growth, options=GROWTH_OPTIONS,
        idea="Build both models (on the meta device they take no memory), count each one's "
             "non-embedding parameters from its tensors, and divide."),
}
