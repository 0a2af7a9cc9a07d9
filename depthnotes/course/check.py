"""The checks that exercise cells call: ``check("1.2", layers_that_fit)``.

Each exercise in the book is a task (markdown), an answer cell (its solution between
``### BEGIN SOLUTION`` / ``### END SOLUTION``, hidden on the site and replaced by ``...`` in the
student version) and a check cell that calls :func:`check` with the exercise's id, the
student's answer and, for some exercises, values the chapter computed (``fit=fit``).

What each exercise expects lives in :mod:`depthnotes.course.answers`, not in the check cell: the
page a student reads (the site, or the handout) shows no expected value, and printing the
specification objects shows no value either (their ``repr`` names only the exercise).
Expected values are computed from the package (``count_params``, ``deepnorm_constants``, ...)
or from the chapter's own measurements, never typed in as a result.

A check prints a one-line confirmation or raises :class:`ExerciseError` whose message ends with
a hint (in Jupyter, shown without a traceback). An exercise still at its placeholder prints "not
answered yet" and lets the run go on, except while nbgrader grades, when it fails the cell. A wrong answer that matches a known mistake gets that mistake's hint; any other wrong
answer gets the exercise's general hint, which points at the idea, not at the formula.

Four kinds of exercise:

- :class:`Number`: a number, exact or within a tolerance;
- :class:`Function`: the student's function, called on several cases;
- :class:`Choice`: one of a few fixed words;
- :class:`OpenExperiment`: the student changes and reruns an experiment and states what it
  showed. Any honest outcome passes: the check verifies that the run was made as asked and
  that the stated conclusion agrees with the student's own measurement.
"""

from __future__ import annotations

from typing import Any

from depthnotes.course import kinds
from depthnotes.course.kinds import (Choice, ExerciseError, Function, Mistake, NotAnswered,
                                     Number, OpenExperiment, Predict, _Spec, fail,
                                     not_answered, unanswered)  # noqa: F401
from depthnotes.course.runs import RUNS


def _answers() -> tuple[dict, str]:
    """The exercises with a fixed answer, and which edition holds them: the instructor's plain
    ``depthnotes.course.answers``, or the student edition's sealed table."""
    try:
        from depthnotes.course.answers import ANSWERS
    except ImportError:                       # the student edition: no plain answers
        from depthnotes.course import sealed

        return sealed.load(), "sealed"
    return ANSWERS, "instructor"


_ANSWERS, EDITION = _answers()
EXERCISES = {**_ANSWERS, **RUNS}

__all__ = ["ExerciseError", "NotAnswered", "check", "predict", "describe_check", "Number",
           "Function", "Choice", "OpenExperiment", "Predict", "Mistake", "EDITION"]


def predict(exercise: str, prediction: Any) -> Any:
    """Record a prediction before the run it predicts (a predict-then-run exercise). The first
    prediction recorded in this kernel stands: a later call with another value says so and
    keeps the first. Returns the prediction that stands."""
    spec = _spec(exercise)
    if not isinstance(spec, Predict):
        raise TypeError(f"exercise {exercise} is not a predict-then-run exercise")
    if unanswered(prediction):
        print(f"Exercise {exercise}: not answered yet: write your prediction before the run."
              f"\nHint: {spec.idea}")
        return prediction
    if prediction not in spec.options:
        fail(exercise, f"predict one of {list(spec.options)}, not {prediction!r}.", spec.idea)
    recorded = kinds.PREDICTIONS
    if exercise in recorded and recorded[exercise] != prediction:
        print(f"Exercise {exercise}: your prediction {recorded[exercise]!r} was recorded "
              "before; it stands (restart the kernel to start the exercise again).")
        return recorded[exercise]
    recorded[exercise] = prediction
    print(f"Exercise {exercise}: prediction recorded: {prediction!r}. Now run it.")
    return prediction


def _spec(exercise: str) -> _Spec:
    if exercise not in EXERCISES:
        raise KeyError(f"no exercise {exercise!r}; known: {', '.join(EXERCISES)}")
    return EXERCISES[exercise]


def check(exercise: str, answer: Any, **given: Any) -> None:
    """Check ``answer`` to ``exercise`` (e.g. ``"1.2"``); print "correct" or raise an
    :class:`ExerciseError` with a hint; print "not answered yet" for a placeholder (raise
    :class:`NotAnswered` while nbgrader grades).

    ``given`` holds the values of the chapter the exercise is computed from (e.g. ``fit=fit``)
    and, for an experiment, the student's ``conclusion``; the exercise says which it needs.
    """
    spec = _spec(exercise)
    missing = [n for n in spec.needs if n not in given]
    extra = [n for n in given if n not in spec.needs]
    if missing or extra:
        raise TypeError(f"check({exercise!r}, ...) needs the keyword arguments "
                        f"{list(spec.needs) or 'none'}; missing {missing}, unexpected {extra}")
    student = [answer] + [given[n] for n in getattr(spec, "answers", ())]
    if any(unanswered(v) for v in student):
        return not_answered(exercise, "replace the `...` with your answer.", spec.idea)
    spec.run(exercise, answer, given)


def describe_check(exercise: str) -> str:
    """What the check of ``exercise`` looks at, in a few words (for the course page)."""
    return _spec(exercise).describe()
