"""Loaded by pytest for this repository (``-p`` in pyproject.toml).

Sets ``DEPTHNOTES_QUIET`` before any test or notebook kernel starts, so progress bars stay out
of the outputs nbval compares, however pytest is invoked (whole suite or one notebook).
"""

import os

os.environ["DEPTHNOTES_QUIET"] = "1"
