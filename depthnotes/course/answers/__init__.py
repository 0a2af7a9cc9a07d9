"""What each of the book's exercises expects, and the hints its check gives — chapter N's in
``chN.py``. Instructor only: the student edition ships without this package and holds, in its
place, the sealed table that ``python -m depthnotes.tools.student`` writes from it
(``depthnotes.course.sealed``): salted hashes of each accepted answer and each known mistake,
at the precision the exercise asks for, and hidden cases whose outputs are hashed.

Every expected value is computed — from the package (``count_params``, ``deepnorm_constants``,
``decode_weight_bytes``) or from the exercise's own cases — never typed in as a result; so
is every number of the notes on the sub-questions (``SUBQUESTIONS``), from the package, the
check's own rule or the chapter's published numbers, so a note cannot drift from the code. Each
exercise lists plausible mistakes with their own hints; the hints point at the idea and never
contain the answer (``tests/test_exercises.py`` checks both). The open exercises (runs judged
against the student's own measurement) are in ``depthnotes.course.runs``.
"""

from __future__ import annotations

from depthnotes.course.answers import ch1, ch2, ch3, ch4, ch5, ch6, ch7, ch8

#: The chapters' answer modules; each holds its ``ANSWERS`` (and maybe ``WRITTEN``,
#: ``SUBQUESTIONS``), gathered here under the same names.
ANSWER_MODULES = (ch1, ch2, ch3, ch4, ch5, ch6, ch7, ch8)
#: The exercises with a fixed answer, by exercise id.
ANSWERS = {k: v for m in ANSWER_MODULES for k, v in m.ANSWERS.items()}
#: The written questions (graded by hand): model answers and rubrics, by exercise id.
WRITTEN = {k: v for m in ANSWER_MODULES for k, v in getattr(m, "WRITTEN", {}).items()}
#: Answers to the tasks' sub-questions that no check reads, by exercise id: text, or for a
#: note that depends on the machine a function of its chapter's published numbers
#: (``depthnotes.tools.summaries.render_instructor``).
SUBQUESTIONS = {k: v for m in ANSWER_MODULES
                for k, v in getattr(m, "SUBQUESTIONS", {}).items()}
