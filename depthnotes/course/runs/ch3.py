"""Chapter 3's open exercises: runs the student makes, judged against their own measurement."""

from __future__ import annotations

from depthnotes.course.kinds import Experiment

_OPTIONS_3_6 = ("4 or fewer", "5", "more than 5 or never")


def _verify_3_6(needed, given):
    from depthnotes.verdicts.ch3_chasing import depth_needed, family_shapes

    shapes = family_shapes(given["record"], "fixed width", rate_from=1)
    want = depth_needed(shapes, 4, given["threshold"])
    if not isinstance(needed, list) or len(needed) != len(want):
        return f"expected a list with one depth (or None) per seed, {len(want)} entries."
    if needed != want:
        return "that is not what the fixed-width family's k = 4 accuracies give."
    return None


def _outcome_3_6(needed, given):
    if None in needed or max(needed) > 5:
        return "more than 5 or never"
    return "5" if max(needed) == 5 else "4 or fewer"


def _verify_3_5(hits, given):
    if given["n"] < 4:
        return "pick n of at least 4 symbols (with fewer, every cycle is short)."
    if not isinstance(hits, list) or len(hits) < 1000:
        return "collect at least 1,000 trials in a list (one True or False per trial)."
    if not all(isinstance(h, bool) for h in hits):
        return "each trial is True or False: did two hops land within one look-up?"
    return None


def _agrees_with_3_over_n(hits, given):
    return abs(sum(hits) / len(hits) - 3 / given["n"]) <= 0.05


RUNS = {
    "3.5": Experiment(
        needs=("n", "conclusion"), verify=_verify_3_5, outcome=_agrees_with_3_over_n,
        options=(True, False),
        idea="Draw random permutations of n symbols and a random start point, follow two "
             "hops with your chase, and record whether you landed on x, f(x) or f^-1(x).",
        read="Compare the fraction of your trials that were True with what your answer to "
             "3.4 predicts for n symbols: are they within 0.05?"),
    "3.6": Experiment(
        needs=("record", "threshold", "conclusion"), verify=_verify_3_6, outcome=_outcome_3_6,
        options=_OPTIONS_3_6,
        idea="Use depth_needed on the fixed-width family's shapes (family_shapes(record, "
             "'fixed width', rate_from=1), as the chapter's shapes) with k = 4 and the "
             "chapter's level SOLVED.",
        read="Classify by the largest depth needed over the seeds (None counts as never)."),
}
