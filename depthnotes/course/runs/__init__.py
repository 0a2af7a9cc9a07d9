"""The open exercises of each chapter (``chN.py``): runs the student makes and conclusions
they draw, judged against the student's own measurement, never against a stored answer. They
ship in the student edition; the exercises with a fixed answer are in
``depthnotes.course.answers`` (instructor only) or, in the student edition, sealed."""

from __future__ import annotations

from depthnotes.course.runs import ch1, ch2, ch3, ch4, ch5, ch6, ch7, ch8

#: The chapters' open-exercise modules; each holds its ``RUNS``, gathered here.
RUN_MODULES = (ch1, ch2, ch3, ch4, ch5, ch6, ch7, ch8)
RUNS = {k: v for m in RUN_MODULES for k, v in m.RUNS.items()}
