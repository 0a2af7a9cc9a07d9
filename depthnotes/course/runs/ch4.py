"""Chapter 4's open exercises: runs the student makes, judged against their own measurement."""

from __future__ import annotations

from depthnotes.course.kinds import OpenExperiment, Predict
from depthnotes.course.runs._common import profile_problem


def _verify_4_4(grads, given):
    problem = profile_problem(grads, given["model"], 0, norm="post")
    if problem:
        return problem
    if given["model"].config.n_layer <= 96:
        return "pick a depth beyond the chapter's deepest, 96 blocks."
    return None


def _first_block_stands_out(grads, given):
    import numpy as np

    return bool(grads[0] / np.median(grads[1:]) > 3)


STANDS_OUT = ("over 3x the median", "3x the median or less")


def _stands_out_word(grads, given):
    return STANDS_OUT[0] if _first_block_stands_out(grads, given) else STANDS_OUT[1]


def _verify_4_5(grads, given):
    problem = profile_problem(grads, given["model"], 0, norm="post")
    if problem:
        return problem
    c = given["model"].config
    if c.n_layer < 24 or c.init not in ("normal", "xavier"):
        return ("build a post-norm stack of at least 24 blocks with init='normal' or "
                "init='xavier' (thin(L, norm='post', init=...)).")
    return None


RUNS = {
    "4.4": Predict(
        needs=("model", "prediction"), answers=("model", "prediction"),
        verify=_verify_4_4, outcome=_stands_out_word, options=STANDS_OUT,
        idea="Build thin(L, norm='post') with your L and measure grad_norm_by_layer on the "
             "chapter's probe batch (x32, y32), as the chapter did for L = 96."),
    "4.5": OpenExperiment(
        needs=("model", "conclusion"), answers=("model", "conclusion"),
        verify=_verify_4_5, outcome=_first_block_stands_out, options=(True, False),
        idea="Build thin(L, norm='post', init=...) with the init and depth you chose and "
             "measure grad_norm_by_layer on x32, y32.",
        read="Divide your block 1's gradient norm by the median of the other blocks': is it "
             "more than 3?"),
}
