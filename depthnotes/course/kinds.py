"""The kinds of exercise the book's checks know, and how each judges an answer.

:class:`Number`, :class:`Function`, :class:`Choice` and :class:`Experiment` hold what one
exercise expects (computed, never typed in) and its hints; :class:`Mistake` pairs a plausible
wrong answer with its own hint. The table of the book's exercises is ``depthnotes.course.answers``;
the function exercise cells call is ``depthnotes.course.check.check``. Three modules so that the
table and the check both build on the kinds without importing each other.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["ExerciseError", "NotAnswered", "Mistake", "Number", "Function", "Choice",
           "Experiment", "unanswered", "fail", "not_answered", "grading"]


class ExerciseError(AssertionError):
    """A wrong or missing answer; the message carries the hint.

    In Jupyter the cell shows the message alone, not a traceback through the package
    (``_render_traceback_`` is IPython's hook for that): the student reads which answer failed
    and the hint, and the cell still counts as failed (for nbgrader and for *Run all*)."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {line}" if i == 0 else line
                for i, line in enumerate(str(self).splitlines())]


class NotAnswered(ExerciseError):
    """An exercise left as its placeholder, raised only while nbgrader grades or validates."""


def fail(exercise: str, what: str, hint: str) -> None:
    raise ExerciseError(f"Exercise {exercise}: {what}\nHint: {hint}")


def grading() -> bool:
    """True while nbgrader runs the notebook (``nbgrader autograde`` / ``validate`` set
    ``NBGRADER_EXECUTION``): then an unanswered exercise must fail its cell, to score 0."""
    return os.environ.get("NBGRADER_EXECUTION", "").lower() in {"autograde", "validate"}


def not_answered(exercise: str, what: str, hint: str) -> None:
    """An exercise still at its placeholder. While a student works, print so and let *Run all*
    go on to the next exercise; while nbgrader grades, fail the cell (``NotAnswered``)."""
    message = f"Exercise {exercise}: not answered yet: {what}\nHint: {hint}"
    if grading():
        raise NotAnswered(message)
    print(message)


def unanswered(value: Any) -> bool:
    return value is Ellipsis or value is None


def _passed(exercise: str, message: str = "") -> None:
    print(f"Exercise {exercise}: correct." + (f" {message}" if message else ""))


def _close(a: float, b: float, rel: float, abs_: float) -> bool:
    return math.isfinite(a) and math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


def _as_number(value: Any) -> float | None:
    """``value`` as a float, or None if it is not a number (a bool is not a number here)."""
    if isinstance(value, bool) or isinstance(value, (str, bytes)):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True, repr=False)
class Mistake:
    """A plausible wrong answer and the hint it earns.

    ``wrong(given)`` is the wrong value (for :class:`Number` and :class:`Choice`), or ``wrong``
    is the wrong function itself (for :class:`Function`: the student's function matches the
    mistake when it agrees with ``wrong`` on every case).
    """

    wrong: Callable
    hint: str

    def __repr__(self) -> str:
        return "Mistake(...)"


@dataclass(frozen=True, repr=False)
class _Spec:
    """What all kinds share: the general hint and the names the check needs from the chapter."""

    idea: str                                   # the general hint: the idea, not the formula
    needs: tuple[str, ...] = ()                 # keyword arguments the check cell passes
    mistakes: tuple[Mistake, ...] = ()

    def __repr__(self) -> str:                  # never the expected value
        return f"<{type(self).__name__} exercise>"

    def run(self, exercise: str, answer: Any, given: dict) -> None:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True, repr=False)
class Number(_Spec):
    """A number equal to ``expected(given)``, exactly or within ``rel`` / ``abs_``."""

    expected: Callable[[dict], float] = field(default=lambda given: math.nan)
    rel: float = 0.0
    abs_: float = 0.0
    integer: bool = False                       # a count: a fractional answer is refused

    def run(self, exercise, answer, given):
        got = _as_number(answer)
        if got is None:
            fail(exercise, f"expected a number, got {type(answer).__name__} {answer!r}.",
                  self.idea)
        if self.integer and not float(got).is_integer():
            fail(exercise, f"expected a whole number, got {answer!r}.", self.idea)
        if _close(got, float(self.expected(given)), self.rel, self.abs_):
            return _passed(exercise)
        for m in self.mistakes:
            if _close(got, float(m.wrong(given)), max(self.rel, 1e-9), self.abs_):
                fail(exercise, f"{answer!r} is not right.", m.hint)
        tol = f" (within {self.rel:g} relative)" if self.rel else ""
        fail(exercise, f"{answer!r} is not the expected value{tol}.", self.idea)

    def describe(self):
        if self.integer:
            return "a whole number, exactly"
        return f"a number, within {self.rel:.0e} relative" if self.rel else "a number, exactly"


@dataclass(frozen=True, repr=False)
class Function(_Spec):
    """The student's function, called on ``cases(given)``: ``[(args, expected), ...]``."""

    cases: Callable[[dict], list] = field(default=lambda given: [])
    rel: float = 0.0

    def _agrees(self, fn, reference, cases) -> bool:
        """Whether ``fn`` returns what ``reference`` (a known mistake) returns on every case."""
        try:
            for args, _ in cases:
                got = _as_number(fn(*args))
                if got is None or not _close(got, float(reference(*args)),
                                             max(self.rel, 1e-9), 0.0):
                    return False
        except Exception:
            return False
        return True

    def run(self, exercise, answer, given):
        if not callable(answer):
            fail(exercise, f"expected a function, got {type(answer).__name__}.", self.idea)
        cases = self.cases(given)
        for args, expected in cases:
            try:
                got = answer(*args)
            except NotImplementedError:
                return not_answered(exercise, "write the body of the function.", self.idea)
            except Exception as e:  # a student's bug: report it as a hint, not a traceback
                fail(exercise, f"calling it raised {type(e).__name__}: {e}", self.idea)
            if got is None:
                fail(exercise, "it returned None: did you forget `return`?", self.idea)
            number = _as_number(got)
            if number is None:
                fail(exercise, f"it returned {type(got).__name__} {got!r}, not a number.",
                      self.idea)
            if not _close(number, float(expected), self.rel, 0.0):
                for m in self.mistakes:
                    if self._agrees(answer, m.wrong, cases):
                        fail(exercise, "it returns wrong values.", m.hint)
                fail(exercise, "it returns a wrong value for at least one of "
                                f"{len(cases)} test cases.", self.idea)
        _passed(exercise, f"({len(cases)} cases checked)")

    def describe(self):
        return "your function, called on several cases"


@dataclass(frozen=True, repr=False)
class Choice(_Spec):
    """One of ``options``; the right one is ``expected(given)``."""

    options: tuple[str, ...] = ()
    expected: Callable[[dict], str] = field(default=lambda given: "")

    def run(self, exercise, answer, given):
        if answer not in self.options:
            fail(exercise, f"answer with one of {list(self.options)}, not {answer!r}.",
                  self.idea)
        if answer == self.expected(given):
            return _passed(exercise)
        for m in self.mistakes:
            if answer == m.wrong(given):
                fail(exercise, f"{answer!r} is not the right choice.", m.hint)
        fail(exercise, f"{answer!r} is not the right choice.", self.idea)

    def describe(self):
        return "one of " + ", ".join(f"`{o}`" for o in self.options)


@dataclass(frozen=True, repr=False)
class Experiment(_Spec):
    """A run the student makes, and the conclusion they draw from it.

    ``verify(answer, given)`` returns what is wrong with the run (a sentence), or None if it
    was made as the task asks. ``outcome(answer, given)`` is what the run shows, in the terms
    of ``options``: the student's ``conclusion`` (a keyword argument of the check) must equal
    it. ``answers`` names the keyword arguments that the student fills in (so a ``...`` left
    there is reported as "not answered yet").
    """

    verify: Callable[[Any, dict], str | None] = field(default=lambda answer, given: None)
    outcome: Callable[[Any, dict], Any] = field(default=lambda answer, given: None)
    options: tuple = ()
    answers: tuple[str, ...] = ("conclusion",)
    read: str = ""                              # the hint when the conclusion disagrees

    def run(self, exercise, answer, given):
        problem = self.verify(answer, given)
        if problem:
            fail(exercise, problem, self.idea)
        conclusion = given["conclusion"]
        if conclusion not in self.options:
            fail(exercise, f"state your conclusion as one of {list(self.options)}, not "
                            f"{conclusion!r}.", self.read or self.idea)
        shown = self.outcome(answer, given)
        if conclusion != shown:
            fail(exercise, f"your conclusion {conclusion!r} does not match your own run, "
                            f"which shows {shown!r}.", self.read or self.idea)
        _passed(exercise, "Your conclusion agrees with your run.")

    def describe(self):
        return "your run, and whether your conclusion agrees with it"
