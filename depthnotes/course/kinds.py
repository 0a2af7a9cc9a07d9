"""The kinds of exercise the book's checks know, and how each judges an answer.

:class:`Number`, :class:`Function`, :class:`Choice` and :class:`OpenExperiment` hold what
one exercise expects (computed, never typed in) and its hints; :class:`Mistake` pairs a plausible
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
           "OpenExperiment", "Predict", "Written", "GivenCase", "Table", "unanswered", "fail",
           "not_answered", "grading", "PREDICTIONS"]


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


def sig_digits(value: float) -> int:
    """How many significant digits ``value`` was written with (its shortest repr): 2.7 -> 2,
    0.22 -> 2, 1/7 -> 16, 300.0 -> 1."""
    import decimal

    if not math.isfinite(value) or value == 0:
        return 1
    return len(decimal.Decimal(repr(float(value))).normalize().as_tuple().digits)


def keys(value: Any, digits: int | None) -> list[str]:
    """The forms in which a value is compared: ``digits`` significant digits (None: a whole
    number, exactly). A value within a hair of a rounding boundary gets both roundings, so
    two correct computations that differ in their last bit compare equal."""
    if type(value).__name__ == "bool_":              # numpy's bool
        value = bool(value)
    if isinstance(value, (bool, str)):
        return [repr(value)]
    number = _as_number(value)
    if number is None or not math.isfinite(number):
        return []
    if abs(number) < 1e-12:                          # zero, and a rounding error from it
        number = 0.0
    if digits is None:
        return [str(int(number))] if float(number).is_integer() else []
    out = []
    for v in (number, number * (1 + 1e-12), number * (1 - 1e-12)):
        k = f"{v:.{digits - 1}e}"
        if k not in out:
            out.append(k)
    return out


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

    ``wrong()`` is the wrong value (for :class:`Number` and :class:`Choice`), or ``wrong``
    is the wrong function itself (for :class:`Function`: the student's function matches the
    mistake when it agrees with ``wrong`` on every case). In the student edition ``wrong`` is
    None: the sealed table holds its forms.
    """

    wrong: Callable | None
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


def digest(salt: str, key: str, rounds: int | None = None) -> str:
    """A salted, slow hash of one compared form (``keys``): what the student edition stores in
    place of an answer. PBKDF2-SHA256 with ``ROUNDS`` rounds: reading it gives nothing away,
    and trying every candidate costs time (a few ms each)."""
    import hashlib

    return hashlib.pbkdf2_hmac("sha256", key.encode(), salt.encode(),
                               rounds or ROUNDS).hex()[:32]


ROUNDS = 10_000


@dataclass(frozen=True)
class Table:
    """What a check compares a student's forms with: the accepted forms, the forms of each
    known mistake and, for "give more digits", the answer's forms at fewer digits. In the
    instructor's copy the forms are plain (``salt`` None), computed from the answer; in the
    student edition they are ``digest(salt, form)``."""

    salt: str | None
    accept: frozenset = frozenset()
    near: dict = field(default_factory=dict)         # digits -> forms of the answer
    mistakes: tuple = ()                             # per mistake: forms (or per case)
    cases: tuple = ()                                # functions: (args, forms) per case
    rounds: int | None = None                        # the hash's rounds (None: ROUNDS)

    def form(self, key: str) -> str:
        return key if self.salt is None else digest(self.salt, key, self.rounds)

    def hit(self, student_keys: list[str], forms) -> bool:
        return any(self.form(k) in forms for k in student_keys)


@dataclass(frozen=True, repr=False)
class Number(_Spec):
    """A number: ``expected()`` to ``digits`` significant digits, or exactly when ``integer``.

    A value near the answer but given with fewer digits gets "give more digits"; a known
    mistake, its own hint; anything else, the idea. The answer never depends on the chapter's
    run, so that the student edition can hold it sealed (a value computed from the chapter's
    own measurements is a :class:`Function` of them instead)."""

    expected: Callable[[], float] | None = None
    digits: int = 4
    integer: bool = False                       # a count: a fractional answer is refused
    sealed: Table | None = None                 # the student edition's table

    def __post_init__(self):
        if self.needs:
            raise TypeError("a Number's answer cannot depend on the chapter's values (needs): "
                            "ask for a Function of them instead, so it can be sealed")

    def _precision(self):
        return None if self.integer else self.digits

    def table(self) -> Table:
        if self.sealed is not None:
            return self.sealed
        value, p = self.expected(), self._precision()
        near = {} if self.integer else {k: frozenset(keys(value, k))
                                        for k in range(2, self.digits)}
        return Table(None, frozenset(keys(value, p)), near,
                     tuple(frozenset(keys(m.wrong(), p)) for m in self.mistakes))

    def run(self, exercise, answer, given):
        got = _as_number(answer)
        if got is None:
            fail(exercise, f"expected a number, got {type(answer).__name__} {answer!r}.",
                 self.idea)
        if self.integer and not float(got).is_integer():
            fail(exercise, f"expected a whole number, got {answer!r}.", self.idea)
        table, p = self.table(), self._precision()
        if table.hit(keys(got, p), table.accept):
            return _passed(exercise)
        given_digits = sig_digits(got)
        if not self.integer and given_digits < self.digits:
            if given_digits in table.near and table.hit(keys(got, given_digits),
                                                        table.near[given_digits]):
                fail(exercise, f"{answer!r} is close: give {self.digits} significant digits "
                               "(compute it rather than round it by hand).",
                     "Keep the value your code computes; do not round it.")
        for m, forms in zip(self.mistakes, table.mistakes):
            if table.hit(keys(got, p), forms):
                fail(exercise, f"{answer!r} is not right.", m.hint)
        fail(exercise, f"{answer!r} is not the expected value.", self.idea)

    def describe(self):
        if self.integer:
            return "a whole number, exactly"
        return f"a number, to {self.digits} significant digits"


def _call_shown(fn, args, names, got) -> str:
    """A failed case in a line: the call (a case built from the chapter's values by the names
    of those values) and what the student's function returned, shortened to fit."""
    import reprlib

    short = reprlib.Repr()             # (keyword arguments only from Python 3.12)
    short.maxstring = short.maxother = 40
    short.maxlist = short.maxtuple = 6
    shown = names if names is not None else [short.repr(a) for a in args]
    number = _as_number(got)             # a numpy or torch scalar as a plain number
    integral = isinstance(got, int) or "int" in str(getattr(got, "dtype", ""))
    value = got if number is None else (int(number) if integral else number)
    return (f"{getattr(fn, '__name__', 'your function')}({', '.join(shown)}) returned "
            f"{short.repr(value)}")


@dataclass(frozen=True)
class GivenCase:
    """A case of a :class:`Function` built from the chapter's values: the arguments and the
    expected output are dotted names into what the check cell passes (``"corpus.train"``)."""

    args: tuple[str, ...]
    expected: str

    def resolve(self, given: dict):
        def get(path):
            name, *attrs = path.split(".")
            value = given[name]
            for a in attrs:
                value = getattr(value, a)
            return value
        return tuple(get(a) for a in self.args), get(self.expected)


@dataclass(frozen=True, repr=False)
class Function(_Spec):
    """The student's function, called on the hidden ``cases()``: ``[(args, expected), ...]``
    (and on ``given_cases``, built from the chapter's values), each output compared to
    ``digits`` significant digits (exactly when ``integer``)."""

    cases: Callable[[], list] | None = None
    given_cases: tuple[GivenCase, ...] = ()
    digits: int = 8
    integer: bool = False
    sealed: Table | None = None
    #: Names of the library's own functions that compute the answer (``count_params`` for a
    #: parameter count): a function that calls one is refused with a hint, so the exercise
    #: asks for the formula, not a look-up. Read from the names its code uses (its own and
    #: nested functions'): a helper that hides the call under another name is not caught;
    #: the aim is to steer a student, not to police one.
    forbids: tuple[str, ...] = ()

    def _precision(self):
        return None if self.integer else self.digits

    def _calls_forbidden(self, fn) -> str | None:
        code = getattr(fn, "__code__", None)
        stack, seen = ([code] if code is not None else []), set()
        while stack:
            c = stack.pop()
            seen |= set(c.co_names) | set(c.co_freevars)     # globals, attributes, closures
            stack.extend(k for k in c.co_consts if hasattr(k, "co_names"))
        return next((name for name in self.forbids if name in seen), None)

    def table(self) -> Table:
        if self.sealed is not None:
            return self.sealed
        p = self._precision()
        cases = [(args, frozenset(keys(out, p))) for args, out in self.cases()]

        def outputs(fn):
            forms = []
            for args, _ in cases:
                try:
                    forms.append(frozenset(keys(fn(*args), p)))
                except Exception:
                    forms.append(frozenset())
            return tuple(forms)
        return Table(None, cases=tuple(cases),
                     mistakes=tuple(outputs(m.wrong) for m in self.mistakes))

    def run(self, exercise, answer, given):
        if not callable(answer):
            fail(exercise, f"expected a function, got {type(answer).__name__}.", self.idea)
        called = self._calls_forbidden(answer)
        if called:
            fail(exercise, f"your function calls `{called}`, the library's own answer: "
                           "write the count from what the task lists instead.", self.idea)
        table, p = self.table(), self._precision()
        plain = Table(None)
        cases = [(args, forms, table, None) for args, forms in table.cases]
        for case in self.given_cases:
            args, out = case.resolve(given)
            cases.append((args, frozenset(keys(out, p)), plain, case.args))
        got_keys, wrong, example = [], 0, ""
        for args, forms, where, names in cases:
            try:
                got = answer(*args)
            except NotImplementedError:
                return not_answered(exercise, "write the body of the function.", self.idea)
            except Exception as e:  # a student's bug: report it as a hint, not a traceback
                fail(exercise, f"calling it raised {type(e).__name__}: {e}", self.idea)
            if got is None:
                fail(exercise, "it returned None: did you forget `return`?", self.idea)
            if _as_number(got) is None and not isinstance(got, (bool, str)):
                fail(exercise, f"it returned {type(got).__name__} {got!r}, not a number.",
                     self.idea)
            got_keys.append(keys(got, p))
            if not where.hit(got_keys[-1], forms):
                wrong += 1
                example = example or _call_shown(answer, args, names, got)
        if not wrong:
            return _passed(exercise, f"({len(cases)} cases checked)")
        for m, per_case in zip(self.mistakes, table.mistakes):
            if all(table.hit(k, forms) for k, forms in zip(got_keys, per_case)):
                fail(exercise, f"it returns wrong values: {example}.", m.hint)
        fail(exercise, f"it returns a wrong value for {wrong} of {len(cases)} test cases: "
                       f"{example}.", self.idea)

    def describe(self):
        return "your function, called on hidden cases"


@dataclass(frozen=True, repr=False)
class Choice(_Spec):
    """One of ``options``; the right one is ``expected()``."""

    options: tuple[str, ...] = ()
    expected: Callable[[], str] | None = None
    sealed: Table | None = None

    def __post_init__(self):
        if self.needs:
            raise TypeError("a Choice's answer cannot depend on the chapter's values (needs)")

    def table(self) -> Table:
        if self.sealed is not None:
            return self.sealed
        return Table(None, frozenset([self.expected()]),
                     mistakes=tuple(frozenset([m.wrong()]) for m in self.mistakes))

    def run(self, exercise, answer, given):
        if answer not in self.options:
            fail(exercise, f"answer with one of {list(self.options)}, not {answer!r}.",
                 self.idea)
        table = self.table()
        if table.hit([answer], table.accept):
            return _passed(exercise)
        for m, forms in zip(self.mistakes, table.mistakes):
            if table.hit([answer], forms):
                fail(exercise, f"{answer!r} is not the right choice.", m.hint)
        fail(exercise, f"{answer!r} is not the right choice.", self.idea)

    def describe(self):
        return "one of " + ", ".join(f"`{o}`" for o in self.options)


@dataclass(frozen=True, repr=False)
class OpenExperiment(_Spec):
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


#: Predictions recorded in this kernel by ``depthnotes.course.check.predict``: id -> value.
PREDICTIONS: dict[str, Any] = {}


@dataclass(frozen=True, repr=False)
class Predict(_Spec):
    """Predict, then run. The student records a prediction (``predict("2.6", guess)``) in the
    cell before the run, runs it, and the check reads both: ``check("2.6", run,
    prediction=guess)``. ``verify(run, given)`` says what is wrong with the run (or None);
    ``outcome(run, given)`` is what it shows, in the terms of ``options``. Right or wrong, an
    honest prediction passes: the check says which, and the written part asks why."""

    verify: Callable[[Any, dict], str | None] = field(default=lambda answer, given: None)
    outcome: Callable[[Any, dict], Any] = field(default=lambda answer, given: None)
    options: tuple = ()
    answers: tuple[str, ...] = ("prediction",)

    def run(self, exercise, answer, given):
        problem = self.verify(answer, given)
        if problem:
            fail(exercise, problem, self.idea)
        prediction = given["prediction"]
        if prediction not in self.options:
            fail(exercise, f"predict one of {list(self.options)}, not {prediction!r}.",
                 self.idea)
        if exercise not in PREDICTIONS:
            fail(exercise, "record your prediction with predict(...) before the run.",
                 self.idea)
        if PREDICTIONS[exercise] != prediction:
            fail(exercise, f"you recorded {PREDICTIONS[exercise]!r} before the run; a "
                           "prediction cannot change after it.", self.idea)
        shown = self.outcome(answer, given)
        verdict = ("as you predicted" if shown == prediction
                   else f"not what you predicted ({prediction!r})")
        _passed(exercise, f"Your run shows {shown!r}: {verdict}.")

    def describe(self):
        return "your prediction, recorded before the run, and the run itself"


@dataclass(frozen=True, repr=False)
class Written:
    """A written answer, graded by hand (nbgrader's manually graded answer cell): the model
    answer and the rubric, for the instructor (never in the student edition)."""

    model: str
    rubric: tuple[str, ...]
    points: int = 3

    def __repr__(self) -> str:
        return "<Written exercise>"
