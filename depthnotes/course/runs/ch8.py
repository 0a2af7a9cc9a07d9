"""Chapter 8's open exercises: runs the student makes, judged against their own measurement."""

from __future__ import annotations

RUNS: dict = {}
