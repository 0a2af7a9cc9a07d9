"""Chapter 8's open exercises: runs the student makes, judged against their own measurement."""

from __future__ import annotations

from depthnotes.course.kinds import OpenExperiment, Predict
from depthnotes.course.runs._common import model_problem, profile_problem

SMALLER = ("under half", "half or more")


def _verify_8_3(profiles, given):
    if not (isinstance(profiles, tuple) and len(profiles) == 2):
        return "pass the pair (without scaling, with scaling) of variance profiles."
    plain, scaled = given["models"]
    for profile, model, rule in ((profiles[0], plain, "none"), (profiles[1], scaled,
                                                                "1/sqrt(l)")):
        problem = profile_problem(profile, model, 1, norm="pre", ln_scaling=rule)
        if problem:
            return problem
    if plain.config.replace(ln_scaling="1/sqrt(l)") != scaled.config:
        return "build the two models alike but for ln_scaling."
    return None


def _ratio_word(profiles, given):
    growth = [p[-1] / p[0] for p in profiles]
    return SMALLER[0] if growth[1] < 0.5 * growth[0] else SMALLER[1]


def _verify_8_4(counts, given):
    model = given["model"]
    problem = model_problem(model)
    if problem:
        return problem
    if not (isinstance(counts, tuple) and len(counts) == 2):
        return "pass the pair (stored parameters, applications) of your model."
    stored = sum(p.numel() for p in model.parameters())
    if counts != (stored, model.config.n_layer):
        return "count your model's parameters from its tensors, and its applied blocks."
    return None


#: Exercise 8.4 asks whether a loop stores under this share of the unshared stack's
#: parameters: its check and the instructor's note on it both read it.
LOOP_SAVES = 0.5


def unshared_total(config) -> int:
    """The parameters of ``config``'s stack without sharing: a distinct block for every
    application (exercise 8.4 compares a loop's stored parameters with it)."""
    from depthnotes.core.params import count_params

    return count_params(config.replace(n_unique_blocks=None)).total


def _half(counts, given):
    return counts[0] < LOOP_SAVES * unshared_total(given["model"].config)


RUNS = {
    "8.3": Predict(
        needs=("models", "prediction"), answers=("models", "prediction"),
        verify=_verify_8_3, outcome=_ratio_word, options=SMALLER,
        idea="Build the same pre-norm stack with ln_scaling='none' and '1/sqrt(l)', measure "
             "residual_variance_by_layer on the same input, and compare last over first."),
    "8.4": OpenExperiment(
        needs=("model", "conclusion"), answers=("model", "conclusion"),
        verify=_verify_8_4,
        outcome=_half,
        options=(True, False),
        idea="ModelConfig(..., n_unique_blocks=u) stores u blocks and applies them n_layer "
             "times; count parameters from the tensors and compare with the same config "
             "without sharing.",
        read="Does your looped model store under half the parameters of the same stack "
             "without sharing?"),
}
