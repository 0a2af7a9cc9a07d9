"""Chapter 3's open exercises: runs the student makes, judged against their own measurement."""

from __future__ import annotations

from depthnotes.course.kinds import OpenExperiment, Predict
from depthnotes.course.runs._common import model_problem

SCORE_OPTIONS = ("under 0.1", "0.1 to 0.9", "over 0.9")


def _scored_problem(run, given, blocks: int | None = None) -> str | None:
    if not (isinstance(run, tuple) and len(run) == 2):
        return "pass the pair (model, accuracy): the model you built and its score."
    model, accuracy = run
    problem = model_problem(model)
    if problem:
        return problem
    if blocks is not None and model.config.n_layer != blocks:
        return (f"your model has {model.config.n_layer} blocks; the task asks for "
                f"{blocks}.")
    if not (isinstance(accuracy, float) and 0 <= accuracy <= 1):
        return "the accuracy is score(model, task, k), a number between 0 and 1."
    return None


def _verify_3_4(run, given):
    return _scored_problem(run, given, blocks=5)


def _bucket(run, given):
    accuracy = run[1]
    return SCORE_OPTIONS[0] if accuracy < 0.1 else SCORE_OPTIONS[1] if accuracy <= 0.9 \
        else SCORE_OPTIONS[2]


def _verify_3_5(run, given):
    problem = _scored_problem(run, given)
    if problem:
        return problem
    if given["k"] not in (1, 2, 4, 8, 16) or run[0].config.n_layer > given["k"] + 1:
        return ("pick k from 1, 2, 4, 8, 16 and at most k + 1 blocks (the full relay "
                "circuit).")
    return None


#: Exercise 3.7: a block is spare at k when the model still scores at least this without it.
SPARE_SCORE = 0.9


def _verify_3_7(run, given):
    from depthnotes.data.tasks import InductionHops
    from depthnotes.measure.constructions import score

    if not (isinstance(run, tuple) and len(run) == 2):
        return "pass the pair (b_cut, accuracy): the block you left out and the score without it."
    block, accuracy = run
    model, task, k = given["model"], given["task"], given["k"]
    problem = model_problem(model)
    if problem:
        return problem
    if not isinstance(task, InductionHops):
        return "pass task=task: the chapter's k-hop induction task, which the model learned."
    L = model.config.n_layer
    if k not in task.hops or k + 1 > L:
        return (f"pick k from {[h for h in task.hops if h + 1 <= L]}: the hop counts a relay "
                f"of {L} blocks can do.")
    if not (isinstance(block, int) and not isinstance(block, bool) and 0 <= block < L):
        return f"b_cut is a block's index, from 0 to {L - 1}."
    if not (isinstance(accuracy, float) and
            abs(accuracy - score(model, task, k, skip=(block,))) < 1e-6):
        return (f"{accuracy!r} is not the model's score at k = {k} without block {block}: "
                "compute it with score(model, task, k, skip=(b_cut,)).")
    return None


RUNS = {
    "3.4": Predict(
        needs=("prediction",), verify=_verify_3_4, outcome=_bucket, options=SCORE_OPTIONS,
        idea="doubling_model(task16, 16, blocks=5) keeps the first five blocks of the "
             "six-block circuit; score it with score(model, task16, 16, n_sequences=64)."),
    "3.5": OpenExperiment(
        needs=("k", "conclusion"), answers=("k", "conclusion"), verify=_verify_3_5,
        outcome=lambda run, given: run[1] >= 0.99, options=(True, False),
        idea="relay_model(task16, k, blocks=b) keeps the first b blocks of the relay circuit; "
             "score it at k with score(model, task16, k, n_sequences=64).",
        read="Read your own score: is it at least 0.99 (the circuit works at this k)?"),
    "3.7": OpenExperiment(
        needs=("model", "task", "k", "conclusion"), answers=("k", "conclusion"),
        verify=_verify_3_7, outcome=lambda run, given: run[1] >= SPARE_SCORE,
        options=(True, False),
        idea="score(model, task, k, skip=(b,)) scores the model without its block b (indices "
             "from 0); a block is spare at k when the model still scores at least "
             f"{SPARE_SCORE:g} without it.",
        read=f"Read your own score: is it at least {SPARE_SCORE:g} without that block?"),
}
