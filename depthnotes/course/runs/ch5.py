"""Chapter 5's open exercises: runs the student makes, judged against their own measurement."""

from __future__ import annotations

from depthnotes.course.kinds import OpenExperiment, Predict
from depthnotes.course.runs._common import profile_problem


def _verify_5_3(profile, given):
    problem = profile_problem(profile, given["model"], 1, norm="pre",
                              branch_scale="1/sqrt(2L)")
    if problem:
        return problem
    if given["model"].config.n_layer <= 100:
        return "pick a depth beyond the chapter's 100 blocks."
    return None


BOUNDED = ("under 2x the embedding's", "2x or more")


def _verify_5_4(profile, given):
    problem = profile_problem(profile, given["model"], 1, norm="pre")
    if problem:
        return problem
    if given["model"].config.n_layer < 24:
        return "pick a depth of at least 24 blocks."
    return None


RUNS = {
    "5.3": Predict(
        needs=("model", "prediction"), answers=("model", "prediction"),
        verify=_verify_5_3,
        outcome=lambda v, g: BOUNDED[0] if v[-1] / v[0] < 2 else BOUNDED[1],
        options=BOUNDED,
        idea="Build thin(L, 'pre', branch_scale='1/sqrt(2L)') with your L and measure "
             "residual_variance_by_layer on probe_x, as the chapter did for 100 blocks.",
    ),
    "5.4": OpenExperiment(
        needs=("model", "conclusion"), answers=("model", "conclusion"),
        verify=_verify_5_4, outcome=lambda v, g: bool(v[-1] / v[0] < 2),
        options=(True, False),
        idea="Build thin(L, 'pre', branch_scale=..., init=...) with your choices and measure "
             "residual_variance_by_layer on probe_x.",
        read="Divide the variance after your last block by the embedding's: is it under 2?"),
}
