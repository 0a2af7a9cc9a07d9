"""What chapter 3's exercises expect, and the hints their checks give (instructor only:
the student edition holds these sealed, ``depthnotes.course.sealed``)."""

from __future__ import annotations

from depthnotes.course.kinds import Function, Mistake, Number


def _one_lookup_starts(f: list[int]) -> int:
    """Start points x where two hops land on x, f(x) or f^-1(x): one look-up away."""
    return sum(f[f[x]] in (x, f[x], f.index(x)) for x in range(len(f)))


EXERCISES = {
    "3.1": Function(
        cases=lambda g: [(([1, 4, 5, 0, 3, 2], 4, 3), 1), (([1, 4, 5, 0, 3, 2], 5, 2), 5),
                         (([1, 2, 0], 0, 0), 0), (([2, 0, 1], 1, 4), 0)],
        idea="Start at x and follow the table one step at a time, as many steps as k says.",
        mistakes=(
            Mistake(lambda f, x, k: f[x],
                    "Your function follows the pointer once; it must follow it k times."),
            Mistake(lambda f, x, k: x if k == 0 else f[f[x]] if k > 1 else f[x],
                    "Do not stop after two steps: follow the pointer exactly k times."),
        )),
    "3.2": Number(
        expected=lambda g: 2 / 9, rel=1e-9,
        idea="f^2(x) = x exactly when x's cycle has a length that divides 2; add the "
             "probabilities of those lengths.",
        mistakes=(
            Mistake(lambda g: 1 / 9, "That is guessing. Answering x is right more often: on "
                                     "which cycle lengths do two hops come back to x?"),
            Mistake(lambda g: 1 / 9 + 1 / 8,
                    "Each cycle length 1..n has probability 1/n, here 1/9."),
            Mistake(lambda g: 3 / 9, "A cycle of length 3 takes three hops to come back, "
                                     "not two."),
        )),
    "3.3": Number(
        expected=lambda g: _one_lookup_starts([1, 2, 0, 4, 3]), integer=True,
        idea="Follow two steps from each start point and see where you land, relative to x, "
             "on each of the two cycles.",
        mistakes=(
            Mistake(lambda g: 3, "On the 2-cycle, where do two steps bring you?"),
            Mistake(lambda g: 2, "On the 3-cycle, two steps forward land where one step "
                                 "backward does."),
        )),
    "3.4": Number(
        expected=lambda g: sum(1 / 6 for j in range(1, 7) if j <= 3), rel=1e-9,
        idea="Add the probabilities of the cycle lengths on which two hops are one look-up "
             "away.",
        mistakes=(
            Mistake(lambda g: 2 / 6, "A cycle of length 1 (a fixed point) counts too."),
            Mistake(lambda g: 1 / 6, "More than one cycle length qualifies."),
        )),
}
