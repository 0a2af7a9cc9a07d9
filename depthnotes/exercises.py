"""Checks that students call from exercise cells.

Each exercise in the book is: a task (markdown), a cell the student fills (its solution sits
between ``### BEGIN SOLUTION`` / ``### END SOLUTION`` markers, hidden on the site and removed in
the student version, where the answer becomes ``...``), and a check cell that calls a function
from here. A check either prints a one-line confirmation or raises ``ExerciseError`` with a
hint that helps: what was expected in kind, what came back, where to look.
"""

from __future__ import annotations

import math
from typing import Any, Callable


class ExerciseError(AssertionError):
    """A wrong or missing answer; the message carries the hint."""


def _fail(exercise: str, what: str, hint: str) -> None:
    raise ExerciseError(f"Exercise {exercise}: {what}\nHint: {hint}")


def _unanswered(exercise: str, got: Any, hint: str) -> None:
    if got is Ellipsis or got is None:
        _fail(exercise, "not answered yet: replace the `...` with your answer.", hint)


def passed(exercise: str, message: str = "") -> None:
    print(f"Exercise {exercise}: correct." + (f" {message}" if message else ""))


def check_number(exercise: str, got: Any, expected: float, hint: str, *,
                 rel: float = 0.0, abs_: float = 0.0) -> None:
    """``got`` must be a number equal to ``expected`` (exactly, or within rel/abs)."""
    _unanswered(exercise, got, hint)
    if isinstance(got, bool) or not isinstance(got, (int, float)) and not hasattr(got, "__float__"):
        _fail(exercise, f"expected a number, got {type(got).__name__} {got!r}.", hint)
    got_f = float(got)
    if not math.isfinite(got_f) or not math.isclose(got_f, expected, rel_tol=rel, abs_tol=abs_):
        tol = f" (tolerance {rel:g} relative)" if rel else ""
        _fail(exercise, f"{got!r} is not the expected value{tol}.", hint)
    passed(exercise)


def check_function(exercise: str, fn: Any, cases: list[tuple[tuple, Any]], hint: str, *,
                   rel: float = 0.0) -> None:
    """``fn(*args)`` must return the expected value for every ``(args, expected)`` case."""
    _unanswered(exercise, fn, hint)
    if not callable(fn):
        _fail(exercise, f"expected a function, got {type(fn).__name__}.", hint)
    for args, expected in cases:
        try:
            got = fn(*args)
        except Exception as e:  # a student's bug: report it as a hint, not a traceback
            _fail(exercise, f"calling it with {args} raised {type(e).__name__}: {e}", hint)
        if got is None:
            _fail(exercise, f"with {args} it returned None: did you forget `return`?", hint)
        if not math.isclose(float(got), float(expected), rel_tol=rel, abs_tol=0.0):
            _fail(exercise, f"with arguments {args} it returned {got!r}; that is not right.", hint)
    passed(exercise, f"({len(cases)} cases checked)")


def check_true(exercise: str, got: Any, predicate: Callable[[Any], bool], what: str,
               hint: str) -> None:
    """``predicate(got)`` must hold; ``what`` says what it tests, for the message."""
    _unanswered(exercise, got, hint)
    try:
        ok = bool(predicate(got))
    except Exception as e:
        _fail(exercise, f"could not check your answer ({type(e).__name__}: {e}).", hint)
    if not ok:
        _fail(exercise, f"{what} does not hold for {got!r}.", hint)
    passed(exercise)


def check_choice(exercise: str, got: Any, expected: str, options: tuple[str, ...],
                 hint: str) -> None:
    """``got`` must be one of ``options`` and equal to ``expected``."""
    _unanswered(exercise, got, hint)
    if got not in options:
        _fail(exercise, f"answer with one of {list(options)}, not {got!r}.", hint)
    if got != expected:
        _fail(exercise, f"{got!r} is not the right choice.", hint)
    passed(exercise)
