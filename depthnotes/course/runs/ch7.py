"""Chapter 7's open exercises: runs the student makes, judged against their own measurement."""

from __future__ import annotations

from depthnotes.course.kinds import OpenExperiment, Predict
from depthnotes.course.runs._common import is_instance


def _verify_7_4(timings, given):
    from depthnotes.bench.latency import cache_regime

    if not (isinstance(timings, tuple) and len(timings) == 2):
        return "pass the two timings as a pair: (shallower, deeper)."
    for t in timings:
        if not is_instance(t, "depthnotes.bench.latency", "LatencyResult"):
            return f"expected LatencyResults from measure_latency, got {type(t).__name__}."
    if timings[0].n_layer >= timings[1].n_layer:
        return (f"the pair must be (shallower, deeper); got depths {timings[0].n_layer} and "
                f"{timings[1].n_layer}.")
    if timings[0].d_model != timings[1].d_model or timings[0].d_model >= 512:
        return "time two models of the same width, narrower than the chapter's 512."
    cache = given["cache"]            # the chapter's: the part one core reads fast
    for t in timings:
        where = cache_regime(t.weight_bytes, cache)
        if where != "memory":
            return (f"L = {t.n_layer} at d = {t.d_model} reads its weights from {where}, not "
                    f"from memory: fit.slope is a memory-resident block's time, so compare "
                    f"with memory-resident depths (first_memory_depth gives the smallest).")
    return None


def _under_half_a_block(timings, given):
    shallow, deep = timings
    per_block = (deep.ms_per_token - shallow.ms_per_token) / (deep.n_layer - shallow.n_layer)
    return bool(per_block < 0.5 * given["fit"].slope)


LONGER = ("within 25 % of the short prompt", "more than 25 % slower")


def _verify_7_5(timings, given):
    if not (isinstance(timings, tuple) and len(timings) == 2):
        return "pass the two timings as a pair: (short prompt, long prompt)."
    for t in timings:
        if not is_instance(t, "depthnotes.bench.latency", "LatencyResult"):
            return f"expected LatencyResults from measure_latency, got {type(t).__name__}."
    short, long = timings
    if (short.n_layer, short.d_model) != (long.n_layer, long.d_model):
        return "time the same shape twice; only the prompt length may differ."
    if long.prompt_len < 4 * short.prompt_len:
        return "make the long prompt at least four times the short one."
    return None


def _longer(timings, given):
    short, long = timings
    return LONGER[0] if long.ms_per_token <= 1.25 * short.ms_per_token else LONGER[1]


RUNS = {
    "7.4": OpenExperiment(
        needs=("fit", "cache", "conclusion"), verify=_verify_7_4, outcome=_under_half_a_block,
        options=(True, False),
        idea="Time two memory-resident depths of a narrower width with measure_latency (the "
             "smallest is first_memory_depth(config, cache)); the difference divided by the "
             "difference in depth is the time of one block at that width.",
        read="Compare your time per block with half of fit.slope, the time per block at d = 512."),
    "7.5": Predict(
        needs=("prediction",), verify=_verify_7_5, outcome=_longer, options=LONGER,
        idea="measure_latency(config, prompt_len=P, **rest) for a short and a long P; compare "
             "the two ms_per_token (the cached decode steps after each prompt)."),
}
