"""Chapter 6's open exercises: runs the student makes, judged against their own measurement."""

from __future__ import annotations

from depthnotes.course.kinds import OpenExperiment, Predict
from depthnotes.course.runs._common import model_problem


def _verify_6_4(losses, given):
    problem = model_problem(given["model"])
    if problem:
        return problem
    if len(losses) != given["model"].config.n_layer:
        return "pass the losses that drop_last_losses returns for the chapter's model."
    return None


def _same_droppable(losses, given):
    full = losses[0]
    removable = sum(1 for n in range(1, len(losses)) if losses[n] - full <= 0.05 * full)
    return removable == given["droppable"]


COSTLIER = ("the first block", "the last block", "within 10 % of each other")


def _verify_6_5(costs, given):
    if not (isinstance(costs, dict) and set(costs) == {"first", "last"}):
        return "pass a dict {'first': loss increase, 'last': loss increase}."
    if not all(isinstance(v, float) for v in costs.values()):
        return "each entry is a loss increase in nats (a float)."
    return None


def _costlier(costs, given):
    first, last = costs["first"], costs["last"]
    if abs(first - last) <= 0.1 * max(abs(first), abs(last)):
        return COSTLIER[2]
    return COSTLIER[0] if first > last else COSTLIER[1]


RUNS = {
    "6.4": OpenExperiment(
        needs=("model", "droppable", "conclusion"), verify=_verify_6_4,
        outcome=_same_droppable, options=(True, False),
        idea="Draw a new probe batch with another seed and call drop_last_losses(model, x, y) "
             "on the chapter's model; entry 0 is the full model's loss.",
        read="Count the n >= 1 whose loss is within 5 % of your batch's full loss, and "
             "compare that count with the chapter's `droppable`."),
    "6.5": Predict(
        needs=("prediction",), verify=_verify_6_5, outcome=_costlier, options=COSTLIER,
        idea="model(x, y, skip=[b])[1] is the loss with block b left out; subtract the full "
             "model's loss model(x, y)[1], once for the first block and once for the last."),
}
